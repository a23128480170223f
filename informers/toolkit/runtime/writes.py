"""Read-your-writes across reconciles: the writes one reconcile made, and the
barrier that holds the next reconcile of the same request back until the
caches reflect them.

A reconcile that writes (creates a child, updates a status) and is run again
before the informer has delivered that write reads a stale cache: it does not
see the child it created and creates another one. This is controller-runtime's
open stale-cache problem (controller-runtime #3320, KEP-5647). The fix here:

* every :class:`~informers.toolkit.runtime.ReconcileContext` carries a
  :class:`WriteLedger`; a writer that knows which informer caches what it
  wrote (the :class:`~informers.toolkit.client.Client`) records the informer
  and the resourceVersion the server answered;
* the :class:`~informers.toolkit.runtime.Controller` keeps each call's ledger
  for its requests (:meth:`WriteBarrier.keep`) and, before the next reconcile
  of one of them, waits until every informer in it has applied those
  resourceVersions (:meth:`WriteBarrier.hold`,
  :meth:`~informers.cache.informer.SharedIndexInformer.wait_for_resource_version`).

The wait is bounded by the ledger's ``timeout`` (the writer's setting). When
it passes, :meth:`WriteBarrier.hold` keeps the ledger and raises
:class:`~informers.errors.CacheSyncTimeoutError`: the controller counts the
call as failed and requeues the request with backoff, so a cache that lags
for long is reported and never read silently, and the retry waits again.

Thread-safe: a ledger and a barrier each guard their state with a lock; the
waits run outside it. A reconcile that wrote nothing takes neither lock: an
empty ledger and an empty barrier are seen by one atomic read of a dict's
size (the workqueue orders a request's :meth:`WriteBarrier.keep` before its
next :meth:`WriteBarrier.hold`, so a ledger kept for it is never missed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from informers.errors import CacheSyncTimeoutError

__all__ = ["CatchesUp", "WriteBarrier", "WriteLedger"]

#: Seconds a ledger waits for its informers by default.
DEFAULT_CATCH_UP_TIMEOUT = 10.0


@runtime_checkable
class CatchesUp(Protocol):
    """What a ledger waits on: an informer
    (:class:`~informers.cache.informer.SharedIndexInformer`)."""

    def wait_for_resource_version(self, target: str, timeout: float = 10.0) -> bool:
        """Block until the cache has applied ``target``; False on timeout."""
        ...


class WriteLedger:
    """The writes of one reconcile call: for each informer that caches a
    written object, the highest resourceVersion written. ``timeout`` bounds
    :meth:`wait` (the largest a recording asked for)."""

    __slots__ = ("_lock", "_timeout", "_versions")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[CatchesUp, int] = {}  # guarded by _lock
        self._timeout = 0.0  # guarded by _lock

    def record(
        self, informer: CatchesUp, resource_version: str, timeout: float = DEFAULT_CATCH_UP_TIMEOUT
    ) -> None:
        """Note that ``informer`` must reach ``resource_version`` (a decimal
        string; anything else is ignored, as it cannot be waited for) before
        the next reconcile of the same request reads it; wait at most
        ``timeout`` seconds for it."""
        if not (resource_version.isdigit() and resource_version.isascii()):
            return
        version = int(resource_version)
        with self._lock:
            if version > self._versions.get(informer, -1):
                self._versions[informer] = version
            self._timeout = max(self._timeout, timeout)

    def merge(self, other: WriteLedger) -> None:
        """Take ``other``'s writes in too."""
        with other._lock:
            versions = dict(other._versions)
            timeout = other._timeout
        for informer, version in versions.items():
            self.record(informer, str(version), timeout)

    def __bool__(self) -> bool:
        return bool(self._versions)  # one atomic read of the dict's size: no lock

    def __len__(self) -> int:
        return len(self._versions)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every informer has applied its recorded version, at
        most ``timeout`` seconds (default: the ledger's own); whether they
        all did. A stopped informer (one with an ``is_stopped()`` that says
        so) is not waited for."""
        with self._lock:
            versions = list(self._versions.items())
            limit = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        for informer, version in versions:
            stopped = getattr(informer, "is_stopped", None)
            if callable(stopped) and stopped():
                continue  # a stopped cache never catches up: nothing to wait for
            remaining = max(0.0, deadline - time.monotonic())
            if not informer.wait_for_resource_version(str(version), remaining):
                return False
        return True

    def __repr__(self) -> str:
        with self._lock:
            return f"<WriteLedger {len(self._versions)} informer(s) timeout={self._timeout}>"


class WriteBarrier:
    """A controller's ledgers between reconciles, by request (see the module
    documentation). The controller calls :meth:`hold` before a reconcile and
    :meth:`keep` after it; the workqueue never hands one request to two
    workers at once, so a request's ledger is never waited on and replaced at
    the same time."""

    __slots__ = ("_ledgers", "_lock", "_waiting")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ledgers: dict[Any, WriteLedger] = {}  # guarded by _lock
        self._waiting = 0  # guarded by _lock: calls of hold() waiting now

    def keep(self, context: Any) -> None:
        """After a reconcile call: keep ``context``'s ledger (if it recorded
        anything) for each of its requests."""
        ledger: WriteLedger | None = getattr(context, "writes", None)
        if ledger is None or not ledger:  # nothing written (no lock taken)
            return
        for request in context.requests:
            self._keep(request, ledger)

    def _keep(self, request: Any, ledger: WriteLedger) -> None:
        with self._lock:
            kept = self._ledgers.get(request)
            if kept is None:
                self._ledgers[request] = ledger
                return
        if kept is not ledger:
            kept.merge(ledger)

    def hold(self, requests: Sequence[Any]) -> None:
        """Before a reconcile call: wait until the caches reflect the writes
        the previous calls for ``requests`` made. Forgets what it waited for;
        raises :class:`~informers.errors.CacheSyncTimeoutError` when a cache
        did not catch up within the ledger's timeout."""
        if not self._ledgers:  # no writes kept for any request: no lock taken
            return
        with self._lock:
            ledgers = [(r, self._ledgers.pop(r)) for r in requests if r in self._ledgers]
            if not ledgers:
                return
            self._waiting += 1
        try:
            for index, (request, ledger) in enumerate(ledgers):
                if not ledger.wait():
                    for later, kept in ledgers[index:]:  # waited for again next time
                        self._keep(later, kept)
                    raise CacheSyncTimeoutError(
                        {
                            str(
                                request
                            ): "the cache did not catch up with the last reconcile's writes"
                        }
                    )
        finally:
            with self._lock:
                self._waiting -= 1

    def pending(self) -> int:
        """How many requests have writes not waited for yet."""
        return len(self._ledgers)

    def waiting(self) -> int:
        """How many reconciles are being held back right now."""
        with self._lock:
            return self._waiting
