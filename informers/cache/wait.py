"""Waiting for caches to sync.

:func:`wait_for_cache_sync` blocks on the informers' and registrations'
events (no polling) and tells which ones are not synced when it gives up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from informers.errors import CacheSyncTimeoutError, InformerStateError
from informers.util.clock import REAL_CLOCK, Clock

__all__ = ["SyncCheck", "pending_after_wait", "wait_for_cache_sync"]

#: How often the ``stop`` event and plain callables are looked at.
_STOP_CHECK = 0.05


@runtime_checkable
class SyncCheck(Protocol):
    """Anything that can say, and wait until, it synced: informers and
    handler registrations."""

    def has_synced(self) -> bool: ...

    def wait_synced(self, timeout: float | None = None) -> bool: ...


def _name(check: object) -> str:
    return str(getattr(check, "name", None) or repr(check))


def _stopped(check: object) -> bool:
    """Whether ``check`` says it stopped (an informer or a registration has
    ``is_stopped()``): it will never sync, so waiting for it is over."""
    is_stopped = getattr(check, "is_stopped", None)
    return callable(is_stopped) and bool(is_stopped())


def pending_after_wait(
    checks: Sequence[SyncCheck | Callable[[], bool]],
    timeout: float | None = None,
    stop: threading.Event | None = None,
    *,
    clock: Clock = REAL_CLOCK,
) -> list[SyncCheck | Callable[[], bool]] | None:
    """Wait until every check synced, ``timeout`` seconds of ``clock`` passed,
    or ``stop`` is set; return the checks not synced then (empty: all
    synced), or ``None`` when ``stop`` was set first.

    Blocks on each check's ``wait_synced`` in turn; ``stop`` and plain
    callables (which cannot wake a waiter) are looked at every 50 ms. A
    check that stopped (``is_stopped()``, as informers and registrations
    tell: their ``wait_synced`` returns at once then) is not waited for: it
    is returned as not synced.
    """
    deadline = None if timeout is None else clock.now() + timeout
    for check in checks:
        while True:
            if stop is not None and stop.is_set():
                return None
            remaining = None if deadline is None else deadline - clock.now()
            if remaining is not None and remaining <= 0:
                break
            step = _STOP_CHECK if stop is not None or not isinstance(check, SyncCheck) else None
            if remaining is not None:
                step = remaining if step is None else min(step, remaining)
            if isinstance(check, SyncCheck):
                if check.wait_synced(step) or _stopped(check):
                    break
            elif check():
                break
            elif step is not None:
                clock.wait(threading.Event(), step)  # a plain callable cannot wake us
    return [c for c in checks if not (c.has_synced() if isinstance(c, SyncCheck) else c())]


def wait_for_cache_sync(
    *checks: SyncCheck | Callable[[], bool],
    timeout: float | None = None,
    stop: threading.Event | None = None,
) -> bool:
    """Block until every check has synced; True if they all did.

    ``checks`` are informers, registrations (anything with ``has_synced()``
    and ``wait_synced(timeout)``) or plain ``() -> bool`` callables. Returns
    False when ``stop`` is set first. Raises
    :class:`~informers.errors.InformerStateError` at once when a check that
    is not synced stopped (an informer stopped, a registration removed: it
    never will sync), and
    :class:`~informers.errors.CacheSyncTimeoutError` naming the checks that are
    not synced when ``timeout`` seconds pass.
    :meth:`SharedInformerFactory.wait_for_cache_sync
    <informers.cache.factory.SharedInformerFactory.wait_for_cache_sync>` is
    the same gate over a factory's informers.
    """
    pending = pending_after_wait(checks, timeout, stop)
    if pending is None:
        return False
    stopped = [c for c in pending if _stopped(c)]
    if stopped:
        names = ", ".join(sorted(_name(c) for c in stopped))
        raise InformerStateError(f"stopped before they synced: {names}")
    if pending:
        raise CacheSyncTimeoutError({_name(c): "not synced" for c in pending})
    return True
