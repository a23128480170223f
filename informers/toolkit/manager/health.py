"""Health and readiness checks, answered over HTTP as kube-apiserver does.

A check is a function of no arguments: it passes when it returns (``None``
or anything but ``False``), fails when it returns ``False`` or raises (the
exception's message is the reason). :class:`HealthChecks` holds named
checks and answers the endpoints of one kind (``/healthz`` or ``/readyz``):

``GET /healthz``
    ``200 ok`` when every check passes; otherwise the failure status
    (``500`` for ``/healthz``, ``503`` for ``/readyz``) and the verbose
    listing.
``GET /healthz?verbose``
    one line per check, ``[+]name ok`` or ``[-]name failed: reason``, then
    ``healthz check passed`` (or ``failed``). ``?exclude=name`` (repeatable)
    leaves checks out.
``GET /healthz/<name>``
    that check alone: ``200 ok``, or the failure status and its reason;
    ``404`` for a name that is not a check.

Built-in checks made here for a factory's informers:

:class:`InformersSynced` (readiness)
    every started informer's cache has synced.
:class:`InformerLiveness` (liveness)
    red when an informer's open watch delivered nothing -- no event, not even
    a bookmark -- for longer than its reflector's watchdog bound
    (``watch_progress_timeout``), or when its reflector has failed without
    any progress (no event read, no list applied) for longer than
    ``backoff_bound`` seconds; the reason names the resource and what is
    wrong. Progress is sampled when the check runs, so a red turns visible
    at the first probe after the bound (a probe every few seconds is
    enough); a reflector that makes progress again turns it green at the
    next probe.

Reasons name resources and errors, never an object's contents. Checks run
on the HTTP server's request threads, one request at a time per check
object's lock where they keep state; they must not block for long.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import BackingOff, Listing, Streaming, Watching
from informers.toolkit.manager._http import Response, query_flag
from informers.util.clock import REAL_CLOCK, Clock

__all__ = [
    "DEFAULT_BACKOFF_BOUND",
    "Check",
    "CheckResult",
    "HealthChecks",
    "InformerLiveness",
    "InformersSynced",
    "run_check",
]

log = logging.getLogger(__name__)

#: A health or readiness check: passes unless it returns ``False`` or raises.
Check = Callable[[], object]

#: Seconds a reflector may keep failing without progress before the liveness
#: check turns red (well past the reflector's 30 s maximum backoff).
DEFAULT_BACKOFF_BOUND = 300.0

_TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome: ``reason`` is empty when it passed."""

    name: str
    ok: bool
    reason: str = ""


def run_check(name: str, check: Check) -> CheckResult:
    """Run ``check`` and say how it went (an exception is a failure whose
    reason is its message on one line; never raises)."""
    try:
        outcome = check()
    except Exception as error:  # noqa: BLE001 - a raising check is a failed check
        # One line per check in the answer: whitespace (line breaks too) collapsed.
        reason = " ".join(str(error).split())
        return CheckResult(name, False, reason or type(error).__name__)
    if outcome is False:
        return CheckResult(name, False, "check failed")
    return CheckResult(name, True)


class HealthChecks:
    """Named checks of one endpoint (``kind`` is ``"healthz"`` or
    ``"readyz"``; ``fail_status`` what a failure answers). Thread-safe:
    checks may be added while requests are answered."""

    def __init__(self, kind: str, fail_status: int) -> None:
        self.kind = kind
        self._fail_status = fail_status
        self._lock = threading.Lock()
        self._checks: dict[str, Check] = {}  # guarded by _lock; in order added

    def add(self, name: str, check: Check) -> None:
        """Add ``check`` as ``name``. :class:`ValueError` for an empty name,
        one with ``/`` or whitespace, or one taken; :class:`TypeError` when
        ``check`` is not callable."""
        if not isinstance(name, str) or not name or "/" in name or any(c.isspace() for c in name):
            raise ValueError(f"a check name is non-empty, without '/' or spaces: {name!r}")
        if not callable(check):
            raise TypeError(f"check {name!r} is not callable")
        with self._lock:
            if name in self._checks:
                raise ValueError(f"{self.kind} check {name!r} already exists")
            self._checks[name] = check

    def names(self) -> list[str]:
        """The check names, in the order added."""
        with self._lock:
            return list(self._checks)

    def run(self, exclude: Iterable[str] = ()) -> list[CheckResult]:
        """Run every check not in ``exclude``, in order."""
        skip = set(exclude)
        with self._lock:
            checks = [(n, c) for n, c in self._checks.items() if n not in skip]
        return [run_check(name, check) for name, check in checks]

    def answer(self, path: str, query: dict[str, list[str]]) -> Response:
        """The HTTP answer for ``path`` (``/<kind>`` or ``/<kind>/<name>``)."""
        rest = path[len(self.kind) + 1 :].strip("/")
        if rest:
            with self._lock:
                check = self._checks.get(rest)
            if check is None:
                return 404, _TEXT, f"no {self.kind} check named {rest!r}\n".encode()
            result = run_check(rest, check)
            if result.ok:
                return 200, _TEXT, b"ok"
            self._log_failures([result])
            return self._fail_status, _TEXT, f"internal server error: {result.reason}\n".encode()
        results = self.run(query.get("exclude", ()))
        failed = [r for r in results if not r.ok]
        if failed:
            self._log_failures(failed)
        if not failed and not query_flag(query, "verbose"):
            return 200, _TEXT, b"ok"
        lines = [f"[+]{r.name} ok" if r.ok else f"[-]{r.name} failed: {r.reason}" for r in results]
        for name in query.get("exclude", ()):
            lines.append(f"[+]{name} excluded: ok")
        lines.append(f"{self.kind} check {'failed' if failed else 'passed'}")
        body = ("\n".join(lines) + "\n").encode()
        return (self._fail_status if failed else 200), _TEXT, body

    def _log_failures(self, failed: list[CheckResult]) -> None:
        for result in failed:
            log.info("%s check %s failed: %s", self.kind, result.name, result.reason)


class InformersSynced:
    """Readiness: passes when every informer ``informers()`` answers has
    synced; the failure names those that have not."""

    def __init__(self, informers: Callable[[], Iterable[tuple[str, SharedIndexInformer]]]):
        self._informers = informers

    def __call__(self) -> None:
        pending = sorted(name for name, i in self._informers() if not i.has_synced())
        if pending:
            raise RuntimeError(f"caches not synced: {', '.join(pending)}")


@dataclass(slots=True)
class _Progress:
    mark: tuple[int, str]  # (events read, last synced RV) when it last moved
    since: float  # clock time it was last seen moving
    error: object  # the newest error reported when it last moved


class InformerLiveness:
    """Liveness of informers (see the module docs): a watch silent past its
    watchdog bound, or a reflector failing without progress past
    ``backoff_bound`` seconds, fails the check naming the resource and the
    reason. An informer not started or stopped is not judged (the manager
    owns their lifecycle). Thread-safe (one lock around each sampling)."""

    def __init__(
        self,
        informers: Callable[[], Iterable[tuple[str, SharedIndexInformer]]],
        *,
        backoff_bound: float = DEFAULT_BACKOFF_BOUND,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        if backoff_bound <= 0:
            raise ValueError(f"backoff_bound must be positive, not {backoff_bound}")
        self._informers = informers
        self._backoff_bound = backoff_bound
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, _Progress] = {}  # guarded by _lock

    def problems(self) -> list[str]:
        """What is wrong now, one reason per unhealthy informer (empty:
        healthy). Samples every informer's progress."""
        now = self._clock.now()
        problems = []
        with self._lock:
            for name, informer in self._informers():
                reflector = informer.reflector
                if reflector is None or informer.is_stopped():
                    continue
                state = reflector.state
                errors = reflector.errors()
                newest: object = errors[-1] if errors else None
                mark = (reflector.events_read(), state.mem.last_sync_rv)
                seen = self._seen.get(name)
                if seen is None or seen.mark != mark:
                    self._seen[name] = _Progress(mark, now, newest)
                    continue
                silent = now - seen.since
                bound = reflector.config.watch_progress_timeout
                if isinstance(state, Watching | Streaming) and bound and silent > bound:
                    problems.append(
                        f"{name}: the watch delivered nothing (no event, no bookmark) for "
                        f"{silent:.0f} s, past the watchdog bound of {bound:g} s"
                    )
                elif (
                    isinstance(state, BackingOff | Listing)
                    and newest is not seen.error
                    and silent > self._backoff_bound
                ):
                    problems.append(
                        f"{name}: failing without progress for {silent:.0f} s (bound "
                        f"{self._backoff_bound:g} s); last error: {type(newest).__name__}: "
                        f"{newest}"
                    )
        return problems

    def __call__(self) -> None:
        problems = self.problems()
        if problems:
            raise RuntimeError("; ".join(problems))
