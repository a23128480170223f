"""The controller that keeps a mirror table equal to the API server, on
:mod:`informers.runtime`.

* :func:`sync_reconciler` -- the syncapi reconciler for any
  :class:`~tracker.syncapi.Syncer`: read the key live; NotFound → ``delete``;
  found (terminating objects included) → ``sync``; a read error raises, so
  the key is requeued with backoff and nothing is deleted.
* :class:`MirrorSyncer` -- the :class:`~tracker.syncapi.Syncer` of one kind
  mirrored into a :class:`~tracker.mirror.MirrorStore`, reading through a
  :class:`~tracker.mirror.live.LiveReader`.
* :class:`SyncController` -- runs a syncer: its sources in order (each pushes
  its initial state before the next starts), then a periodic diff (every
  60 s plus up to 10 % jitter, the wait starting when the previous diff
  ended), then its workers (4). Named ``db-sync-<kind>``.
* :func:`mirror_controller` -- all of it wired for one kind.

Restarts resume from the database: the informer source of a
:class:`MirrorSyncer` compares each object of the informer's initial list
with a snapshot of the rows taken before the informer started, and only
objects whose row is missing or differs are enqueued; the first diff then
finds the rows whose objects are gone. Rows equal to the API are neither read
again nor rewritten.

Errors: a database failure (:class:`~tracker.errors.MirrorDatabaseError`,
retryable or not) and any read error requeue the key with the controller's
backoff; an object that cannot be stored at all
(:class:`~tracker.errors.InvalidObjectError`) is a
:class:`~informers.runtime.TerminalError` and is not retried.
"""

from __future__ import annotations

import logging
import random
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from informers.clock import REAL_CLOCK, Clock
from informers.factory import SharedInformerFactory
from informers.resources import Resource
from informers.runtime import (
    Controller,
    Funcs,
    InformerSource,
    MapFunc,
    PeriodicSource,
    Request,
    Result,
    TerminalError,
)
from informers.workqueue import RateLimiter
from tracker.errors import InvalidObjectError, MirrorDatabaseError, SyncerConfigError
from tracker.mirror.live import LiveReader
from tracker.mirror.store import MirrorRow, MirrorStore
from tracker.syncapi import ObjectKey, Syncer, diff

__all__ = [
    "DIFF_EVERY",
    "DIFF_JITTER",
    "WORKERS",
    "MirrorSyncer",
    "SyncController",
    "mirror_controller",
    "sync_reconciler",
]

log = logging.getLogger(__name__)

#: Seconds between two diffs (the wait starts when the previous one ended).
DIFF_EVERY = 60.0
#: Each wait is longer by up to this fraction of :data:`DIFF_EVERY`, at random.
DIFF_JITTER = 0.1
#: Reconcile workers by default.
WORKERS = 4

ReadFunc = Callable[[ObjectKey], Any]
ReconcileFunc = Callable[[Request], "Result | None"]

_WHITESPACE = re.compile(r"\s")


def sync_reconciler(syncer: Syncer[Any], read: ReadFunc) -> ReconcileFunc:
    """The syncapi reconciler: for each request, ``read(key)`` (a live,
    uncached read that answers ``None`` only for NotFound and raises for
    anything else), then ``syncer.delete(key)`` when it is gone or
    ``syncer.sync(obj)`` when it is there (terminating or not).

    An exception from ``read``, ``sync`` or ``delete`` propagates: the
    controller requeues the key with backoff. An
    :class:`~tracker.errors.InvalidObjectError` (the object can never be
    stored) becomes a :class:`~informers.runtime.TerminalError`.
    """

    def reconcile(request: Request) -> Result | None:
        key = ObjectKey(request.namespace, request.name)
        obj = read(key)
        try:
            if obj is None:
                syncer.delete(key)
            else:
                syncer.sync(obj)
        except InvalidObjectError as error:
            raise TerminalError(error) from error
        return None

    return reconcile


class MirrorSyncer:
    """The :class:`~tracker.syncapi.Syncer` of a kind mirrored into ``store``.

    :param store: the table.
    :param reader: live reads of the kind (``reader.resource`` must be the
        store's).
    :param parents: ``(resource, map_func)`` pairs: an informer source per
        parent kind whose changes must re-sync rows (``map_func`` maps a
        parent object to the requests of this kind).

    Thread-safe. ``sources`` snapshots the rows (the restart comparison, see
    the module docstring); the snapshot is consumed as the informer's initial
    list arrives.
    """

    def __init__(
        self,
        store: MirrorStore,
        reader: LiveReader,
        *,
        parents: Sequence[tuple[Resource, MapFunc]] = (),
    ) -> None:
        if reader.resource != store.resource:
            raise SyncerConfigError(
                f"the reader reads {reader.resource}, the store mirrors {store.resource}"
            )
        self.store = store
        self.reader = reader
        self.resource = store.resource
        self.parents = tuple(parents)
        self._lock = threading.Lock()
        # Guarded by _lock: rows not yet compared with the informer's initial
        # list, by uid (taken by sources(); entries leave as objects arrive).
        self._snapshot: dict[str, MirrorRow] = {}

    def __repr__(self) -> str:
        return f"MirrorSyncer({self.resource})"

    def new_object(self) -> dict[str, Any]:
        """An empty object of the kind (``apiVersion`` and ``kind`` set)."""
        return {"apiVersion": self.resource.api_version, "kind": self.resource.kind}

    def sources(self, factory: SharedInformerFactory) -> Sequence[Any]:
        """The kind's informer source (initial objects whose row already
        matches are not enqueued), then one per parent kind."""
        try:
            snapshot = self.store.rows()
        except MirrorDatabaseError as error:
            log.warning(
                "mirror %s: no row snapshot (%s); every object will be read again",
                self.resource,
                error,
            )
            snapshot = {}
        with self._lock:
            self._snapshot = snapshot
        own = InformerSource(
            factory.for_resource(self.resource),
            predicates=[Funcs(create_func=self._needs_sync)],
            name=f"informer {self.resource}",
        )
        parents = [
            InformerSource(
                factory.for_resource(resource), map_func=map_func, name=f"parent {resource}"
            )
            for resource, map_func in self.parents
        ]
        return [own, *parents]

    def _needs_sync(self, obj: Any) -> bool:
        """For an added object: false only when the snapshot's row of its uid
        still matches it (a restart with nothing to do)."""
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        uid = metadata.get("uid") if isinstance(metadata, dict) else None
        with self._lock:
            row = self._snapshot.pop(uid, None) if isinstance(uid, str) else None
        return row is None or not self.store.matches(obj, row)

    def read(self, key: ObjectKey) -> dict[str, Any] | None:
        """The object of ``key`` read live, ``None`` when NotFound."""
        return self.reader.get(key)

    def sync(self, obj: dict[str, Any]) -> None:
        self.store.sync(obj)

    def delete(self, key: ObjectKey) -> None:
        self.store.delete(key)

    def diff(self) -> list[ObjectKey]:
        """Rows first, then a complete list, then :func:`tracker.syncapi.diff`.
        Writes nothing; raises (returning nothing) when either read fails or
        the list is incomplete."""
        rows = self.store.rows()
        listed = self.reader.list()
        keys = diff(listed, rows, self.store.matches, self.store.key)
        log.info("mirror %s: diff found %d key(s) needing attention", self.resource, len(keys))
        return keys


class SyncController:
    """Runs a :class:`~tracker.syncapi.Syncer` on an :class:`informers.runtime.Controller`.

    :param kind: names the controller ``db-sync-<kind>`` (unless ``name``).
    :param syncer: what is synced.
    :param reconcile: the reconcile function (see :func:`sync_reconciler`).
    :param factory: the informer factory the syncer's sources come from; it is
        started by :meth:`start` (after the sources asked for their informers).
    :param workers: reconcile workers (default 4).
    :param diff_every, diff_jitter: the periodic diff's period and jitter.
    :param clock, rng: time and randomness of the backoff and the diff's schedule.
    :param rate_limiter: the requeue backoff (default: the runtime's).
    :param sync_timeout: how long each source may take to push its initial state.

    :meth:`start` raises :class:`~tracker.errors.SyncerConfigError` for a
    name that is empty or has whitespace, no reconcile function, or no
    sources. Thread-safe; runs once (start, then stop).
    """

    def __init__(
        self,
        kind: str,
        syncer: Syncer[Any],
        reconcile: ReconcileFunc | None,
        factory: SharedInformerFactory,
        *,
        name: str | None = None,
        workers: int = WORKERS,
        diff_every: float = DIFF_EVERY,
        diff_jitter: float = DIFF_JITTER,
        clock: Clock = REAL_CLOCK,
        rng: random.Random | None = None,
        rate_limiter: RateLimiter[Request] | None = None,
        sync_timeout: float | None = 60.0,
    ) -> None:
        self.name = name if name is not None else f"db-sync-{kind}"
        self.syncer = syncer
        self.reconcile = reconcile
        self.factory = factory
        self.workers = workers
        self.diff_every = diff_every
        self.diff_jitter = diff_jitter
        self._clock = clock
        self._rng = rng
        self._rate_limiter = rate_limiter
        self._sync_timeout = sync_timeout
        self._lock = threading.Lock()
        self._controller: Controller | None = None  # guarded by _lock; set by start()
        self._diffs = 0  # guarded by _lock: diffs that completed

    def __repr__(self) -> str:
        return f"SyncController({self.name!r})"

    @property
    def controller(self) -> Controller | None:
        """The runtime controller, once started."""
        with self._lock:
            return self._controller

    @property
    def diffs(self) -> int:
        """How many periodic diffs completed (returned their keys)."""
        with self._lock:
            return self._diffs

    def _diff_requests(self) -> list[Request]:
        keys = self.syncer.diff()
        with self._lock:
            self._diffs += 1
        return [Request(key.namespace, key.name) for key in keys]

    def start(self) -> None:
        """Validate, start the factory's informers and the controller: the
        syncer's sources in order, then the periodic diff, then the workers.
        Blocks until every source pushed its initial state."""
        if not isinstance(self.name, str) or not self.name or _WHITESPACE.search(self.name):
            raise SyncerConfigError(
                f"a sync controller name must be non-empty without whitespace: {self.name!r}"
            )
        if self.reconcile is None:
            raise SyncerConfigError(f"{self.name}: no reconcile function")
        sources = list(self.syncer.sources(self.factory))
        if not sources:
            raise SyncerConfigError(f"{self.name}: the syncer has no sources")
        periodic = PeriodicSource(
            self._diff_requests,
            self.diff_every,
            self.diff_jitter,
            name=f"{self.name}-diff",
            clock=self._clock,
            rng=self._rng,
        )
        controller = Controller(
            self.name,
            self.reconcile,
            [*sources, periodic],
            workers=self.workers,
            rate_limiter=self._rate_limiter,
            clock=self._clock,
            sync_timeout=self._sync_timeout,
        )
        with self._lock:
            if self._controller is not None:
                raise SyncerConfigError(f"{self.name}: started already")
            self._controller = controller
        self.factory.start()
        controller.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the controller (sources, queue, workers); the factory is the
        caller's to shut down. Idempotent."""
        controller = self.controller
        if controller is not None:
            controller.stop(timeout)

    def wait_idle(self, timeout: float | None = 10.0) -> bool:
        """The runtime controller's :meth:`~informers.runtime.Controller.wait_idle`."""
        controller = self.controller
        return controller is not None and controller.wait_idle(timeout)


def mirror_controller(
    store: MirrorStore,
    api_client: Any,
    factory: SharedInformerFactory,
    *,
    namespace: str | None = None,
    parents: Sequence[tuple[Resource, MapFunc]] = (),
    reconcile_wrapper: Callable[[ReconcileFunc], ReconcileFunc] | None = None,
    **options: Any,
) -> SyncController:
    """A :class:`SyncController` that mirrors ``store``'s kind: a
    :class:`MirrorSyncer` over a :class:`~tracker.mirror.live.LiveReader` of
    ``api_client`` and :func:`sync_reconciler`. ``reconcile_wrapper`` may wrap
    the reconcile function (to count or trace calls); ``options`` go to
    :class:`SyncController`."""
    reader = LiveReader(api_client, store.resource, namespace)
    syncer = MirrorSyncer(store, reader, parents=parents)
    reconcile = sync_reconciler(syncer, syncer.read)
    if reconcile_wrapper is not None:
        reconcile = reconcile_wrapper(reconcile)
    return SyncController(str(store.resource), syncer, reconcile, factory, **options)
