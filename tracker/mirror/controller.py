"""The controller that keeps a mirror table equal to the API server, on
:mod:`informers.toolkit.runtime`.

* :func:`sync_reconciler` -- the syncapi reconciler for any
  :class:`~tracker.syncapi.Syncer`: read the key live; NotFound → ``delete``;
  found (terminating objects included) → ``sync``; a read error raises, so
  the key is requeued with backoff and nothing is deleted.
* :func:`batch_sync_reconciler` -- the same rules for a burst of keys one
  worker drained from the queue (up to :data:`BURST_BATCH`): each key read
  live, then every write in **one** transaction.
* :class:`MirrorSyncer` -- the :class:`~tracker.syncapi.Syncer` of one kind
  mirrored into a :class:`~tracker.mirror.MirrorStore`, reading through a
  :class:`~tracker.mirror.live.LiveReader`; it also writes relists.
* :class:`SyncController` -- runs a syncer: its sources in order (each pushes
  its initial state before the next starts), then a periodic diff (every
  60 s plus up to 10 % jitter, the wait starting when the previous diff
  ended), then its workers (4). Named ``db-sync-<kind>``.
* :func:`mirror_controller` -- all of it wired for one kind.

Batched writes, and how they keep the live-read rule
----------------------------------------------------

Two paths reach the database:

* **Relists** (the informer's initial list and every later relist, e.g.
  after a watch's history expired) are written straight from the list, by the
  kind's :class:`~tracker.mirror.relist.RelistSource`, in transactions of at
  most :data:`RELIST_BATCH` (5,000) operations: a relist of N changes takes
  ``ceil(N / 5000)`` transactions (one, recording only its resourceVersion,
  when nothing changed). Nothing is read live for them: a list *is* the
  server's answer for every key at the list's resourceVersion -- present
  objects as they are (terminating ones included), absent keys (the
  relist's deletions) as confirmed gone, which is the NotFound the
  ``delete`` rule asks for. The bound keeps a transaction's memory and its
  hold on SQLite's single writer short (about a second) while still
  amortising the commit; the last transaction records the list's
  resourceVersion, and only when every chunk was written.
* **Every other event** pushes its key into the queue, and the reconcile path
  applies, unchanged: each key is read live before anything is written. A
  worker takes the request it was given plus whatever else is queued at that
  moment, up to :data:`BURST_BATCH` (100) keys, reads each live (a read
  error fails that key alone: requeued with backoff, nothing deleted), and
  writes the results in one transaction. The bound keeps the other workers
  busy and a batch's live reads short, so its rows are fresh when written.

Where the paths meet: a worker may have read a key live *before* a relist
listed it and write it *after* the relist's transaction, putting back an
older state. So the syncer knows which keys the workers hold
(:meth:`MirrorSyncer.reconciling`), and after a relist is written it
requeues those of its keys that a worker held: they are read live once more,
after the relist. A key changed after the list's resourceVersion arrives as
a watch event after the relist anyway.

Failures: a transaction the database refused (a constraint, a trigger: not
:attr:`~tracker.errors.MirrorDatabaseError.retryable`) is rolled back whole
and its changes are written again one by one, so only the change at fault
fails; a transaction that could not reach the database fails every key in
it. Either way nothing partial stays behind, and every key that failed is
requeued with backoff (from a relist, too: it then takes the reconcile
path). An object that cannot be stored at all
(:class:`~tracker.errors.InvalidObjectError`) is a
:class:`~informers.toolkit.runtime.TerminalError` and is not retried.

Restarts resume from the database: before the informer starts, the syncer
snapshots the rows; each object of the initial relist whose row still
matches (uid, resourceVersion, declared columns) is skipped, and the first
diff then finds the rows whose objects are gone. Rows equal to the API are
neither read again nor rewritten.

The relist path writes the informer's objects: give the mirror a factory
without a transform (the command line's has none), or the rows hold the
transformed objects.

Metadata-only kinds: a :class:`~tracker.mirror.live.LiveReader` made with
``metadata_only=True`` (``mirror_controller(..., metadata_only=True)``)
makes the syncer mirror ``PartialObjectMetadata`` objects: its informer is the
factory's metadata-only one with managed fields kept (so a relisted row and a
row read live hold the same object, as the server sends it), the live reads
and the diff's list ask for that form too, and each row holds the metadata
columns and the partial object. Declared columns must then read
``metadata``: one reading anything else would always be ``NULL``
(:class:`~tracker.errors.SyncerConfigError`).
"""

from __future__ import annotations

import contextlib
import logging
import random
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.toolkit.runtime import (
    Controller,
    InformerSource,
    MapFunc,
    PeriodicSource,
    Request,
    Result,
    Sink,
    TerminalError,
)
from informers.toolkit.runtime.controller import BatchReconcileFunc
from informers.toolkit.workqueue import RateLimiter
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.partial import META_API_VERSION, PARTIAL_KIND
from informers.wire.resources import Resource
from tracker.errors import (
    DatabaseUnavailableError,
    InvalidObjectError,
    MirrorDatabaseError,
    SyncerConfigError,
)
from tracker.mirror.live import LiveReader
from tracker.mirror.relist import RelistChange, RelistSource
from tracker.mirror.store import MirrorRow, MirrorStore
from tracker.syncapi import ObjectKey, Syncer, diff

__all__ = [
    "BURST_BATCH",
    "DIFF_EVERY",
    "DIFF_JITTER",
    "INITIAL_SYNC_TIMEOUT",
    "RELIST_BATCH",
    "WORKERS",
    "MirrorSyncer",
    "SyncController",
    "batch_sync_reconciler",
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
#: The most operations (row upserts and deletions) in one transaction of a
#: relist; a relist of N changes takes ``ceil(N / RELIST_BATCH)`` transactions.
RELIST_BATCH = 5000
#: Seconds :func:`mirror_controller`'s start waits for each source: the
#: initial list is written before the informer's source has synced (about a
#: minute per 100k pods on a busy machine, see the mirror guide).
INITIAL_SYNC_TIMEOUT = 600.0
#: The most requests one worker takes from the queue at once (each is read
#: live, then all are written in one transaction).
BURST_BATCH = 100

ReadFunc = Callable[[ObjectKey], Any]
ReconcileFunc = Callable[[Request], "Result | None"]

# What a reconcile answers when the database is down: requeued with backoff,
# not an error (the database logs the outage once).
_OUTAGE_REQUEUE = Result(requeue=True)

_WHITESPACE = re.compile(r"\s")


def sync_reconciler(syncer: Syncer[Any], read: ReadFunc) -> ReconcileFunc:
    """The syncapi reconciler: for each request, ``read(key)`` (a live,
    uncached read that answers ``None`` only for NotFound and raises for
    anything else), then ``syncer.delete(key)`` when it is gone or
    ``syncer.sync(obj)`` when it is there (terminating or not).

    An exception from ``read``, ``sync`` or ``delete`` propagates: the
    controller requeues the key with backoff. An
    :class:`~tracker.errors.InvalidObjectError` (the object can never be
    stored) becomes a :class:`~informers.toolkit.runtime.TerminalError`. A
    database outage (:class:`~tracker.errors.DatabaseUnavailableError`) is
    not a reconcile error: the key is requeued with backoff
    (``Result(requeue=True)``) and the outage is logged once by the
    database (:mod:`tracker.mirror.outage`), not once per key.
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
        except DatabaseUnavailableError:
            return _OUTAGE_REQUEUE
        return None

    return reconcile


def batch_sync_reconciler(syncer: MirrorSyncer) -> BatchReconcileFunc:
    """The reconciler of a batch of requests (a burst a worker drained from
    the queue): each key is read live, exactly as :func:`sync_reconciler`
    does, then every key that was read is written in **one** transaction
    (:meth:`MirrorSyncer.write`): a sync for each object found (terminating
    ones included), a delete for each NotFound.

    Outcomes, one per request: a read error fails that request alone (it is
    requeued with backoff, nothing of it is deleted); an object that can
    never be stored fails its request with a
    :class:`~informers.toolkit.runtime.TerminalError`; a failed transaction fails
    every request that was in it (all requeued with backoff; the rollback
    leaves no row of the batch written), except for a database outage,
    where they are requeued with backoff as :func:`sync_reconciler` does.
    """

    def reconcile_batch(requests: Sequence[Request]) -> list[Result | BaseException | None]:
        keys = [ObjectKey(r.namespace, r.name) for r in requests]
        outcomes: list[Result | BaseException | None] = [None] * len(keys)
        with syncer.reconciling(keys):
            read: list[tuple[int, ObjectKey, dict[str, Any] | None]] = []
            for index, key in enumerate(keys):
                try:
                    read.append((index, key, syncer.read(key)))
                except Exception as error:  # noqa: BLE001 - this request fails; the controller logs it
                    outcomes[index] = error
            failures = syncer.write([(key, obj) for _, key, obj in read])
            for (index, _, _), failure in zip(read, failures, strict=True):
                outage = isinstance(failure, DatabaseUnavailableError)
                outcomes[index] = _OUTAGE_REQUEUE if outage else failure
        return outcomes

    return reconcile_batch


class MirrorSyncer:
    """The :class:`~tracker.syncapi.Syncer` of a kind mirrored into ``store``.

    :param store: the table.
    :param reader: live reads of the kind (``reader.resource`` must be the
        store's).
    :param parents: ``(resource, map_func)`` pairs: an informer source per
        parent kind whose changes must re-sync rows (``map_func`` maps a
        parent object to the requests of this kind).
    :param relist_batch: the most operations in one transaction of a relist.
    :param on_relist: called with the number of changes after each relist was
        written (on the informer's listener thread, no lock held), e.g. for a
        test to wait on; an exception from it is logged.

    Thread-safe. ``sources`` snapshots the rows (the restart comparison, see
    the module docstring); the snapshot is consumed as the informer's initial
    list arrives. :meth:`reconciling` marks the keys a worker is working on,
    so that a relist written meanwhile has them reconciled again afterwards
    (see the module docstring).
    """

    def __init__(
        self,
        store: MirrorStore,
        reader: LiveReader,
        *,
        parents: Sequence[tuple[Resource, MapFunc]] = (),
        relist_batch: int = RELIST_BATCH,
        on_relist: Callable[[int], object] | None = None,
    ) -> None:
        if reader.resource != store.resource:
            raise SyncerConfigError(
                f"the reader reads {reader.resource}, the store mirrors {store.resource}"
            )
        if reader.metadata_only:
            outside = [c.name for c in store.columns if c.parts[0] != "metadata"]
            if outside:
                raise SyncerConfigError(
                    f"a metadata-only mirror of {store.resource} has only metadata: "
                    f"column(s) {', '.join(outside)} would always be NULL"
                )
        if isinstance(relist_batch, bool) or not isinstance(relist_batch, int) or relist_batch < 1:
            raise SyncerConfigError(f"relist_batch must be a positive int, not {relist_batch!r}")
        self.store = store
        self.reader = reader
        self.resource = store.resource
        self.parents = tuple(parents)
        self.relist_batch = relist_batch
        self.on_relist = on_relist
        self._lock = threading.Lock()
        # Guarded by _lock: rows not yet compared with the informer's initial
        # list, by uid (taken by sources(); entries leave as objects arrive).
        self._snapshot: dict[str, MirrorRow] = {}
        # Guarded by _lock: keys a worker is reconciling -> how many workers
        # (a key is in one batch at a time, but a parent may map to it too).
        self._busy: dict[ObjectKey, int] = {}
        # Guarded by _lock: relists written, and their transactions that failed.
        self._relists = 0
        self._relist_failures = 0

    def __repr__(self) -> str:
        return f"MirrorSyncer({self.resource})"

    @property
    def relists(self) -> int:
        """How many relists were written (whole or not)."""
        with self._lock:
            return self._relists

    @property
    def relist_failures(self) -> int:
        """How many relist transactions failed (their keys were requeued)."""
        with self._lock:
            return self._relist_failures

    @property
    def metadata_only(self) -> bool:
        """Whether the kind is mirrored as ``PartialObjectMetadata`` objects
        (the reader's ``metadata_only``)."""
        return self.reader.metadata_only

    def new_object(self) -> dict[str, Any]:
        """An empty object of the kind (``apiVersion`` and ``kind`` set; a
        ``PartialObjectMetadata`` for a metadata-only mirror)."""
        if self.metadata_only:
            return {"apiVersion": META_API_VERSION, "kind": PARTIAL_KIND}
        return {"apiVersion": self.resource.api_version, "kind": self.resource.kind}

    def sources(self, factory: SharedInformerFactory) -> Sequence[Any]:
        """The kind's :class:`~tracker.mirror.relist.RelistSource` (relists
        written in batches; initial objects whose row already matches are
        skipped), then an informer source per parent kind. Takes the row
        snapshot (:meth:`take_snapshot`)."""
        self.take_snapshot()
        informer = (
            factory.for_resource(self.resource, metadata_only=True, managed_fields=True)
            if self.metadata_only
            else factory.for_resource(self.resource)
        )
        own = RelistSource(informer, self, name=f"informer {self.resource}")
        parents = [
            InformerSource(
                factory.for_resource(resource), map_func=map_func, name=f"parent {resource}"
            )
            for resource, map_func in self.parents
        ]
        return [own, *parents]

    def take_snapshot(self) -> None:
        """Snapshot the rows, for :meth:`needs_sync` to compare the initial
        list with (a database failure is logged: every object is written)."""
        try:
            snapshot = self.store.rows()
        except MirrorDatabaseError as error:
            log.warning(
                "mirror %s: no row snapshot (%s); every object will be written again",
                self.resource,
                error,
            )
            snapshot = {}
        with self._lock:
            self._snapshot = snapshot

    def needs_sync(self, obj: Any) -> bool:
        """For an added object: false only when the snapshot's row of its uid
        still matches it (a restart with nothing to do)."""
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        uid = metadata.get("uid") if isinstance(metadata, dict) else None
        with self._lock:
            row = self._snapshot.pop(uid, None) if isinstance(uid, str) else None
        return row is None or not self.store.matches(obj, row)

    @contextlib.contextmanager
    def reconciling(self, keys: Sequence[ObjectKey]) -> Iterator[None]:
        """Mark ``keys`` as being reconciled for the block (read live, then
        written). A relist written meanwhile requeues those of its keys."""
        with self._lock:
            for key in keys:
                self._busy[key] = self._busy.get(key, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                for key in keys:
                    left = self._busy[key] - 1
                    if left:
                        self._busy[key] = left
                    else:
                        del self._busy[key]

    def read(self, key: ObjectKey) -> dict[str, Any] | None:
        """The object of ``key`` read live, ``None`` when NotFound."""
        return self.reader.get(key)

    def sync(self, obj: dict[str, Any]) -> None:
        self.store.sync(obj)

    def delete(self, key: ObjectKey) -> None:
        self.store.delete(key)

    def write(
        self, changes: Sequence[RelistChange], resource_version: str | None = None
    ) -> list[BaseException | None]:
        """Write ``changes`` (``(key, object)`` to sync, ``(key, None)`` to
        delete) in one transaction, with ``resource_version`` recorded as
        applied when given. Returns one outcome per change: ``None`` when it
        was written, a :class:`~informers.toolkit.runtime.TerminalError` for an
        object that can never be stored (left out of the transaction), or the
        :class:`~tracker.errors.MirrorDatabaseError` of a failed transaction
        (then nothing of it was written). When the database refused the
        transaction (an error that is not
        :attr:`~tracker.errors.MirrorDatabaseError.retryable`), each change is
        tried again alone, so that only the change at fault fails; the
        resourceVersion is then not recorded."""
        outcomes: list[BaseException | None] = [None] * len(changes)
        batch = self.store.batch()
        for index, (key, obj) in enumerate(changes):
            if obj is None:
                batch.delete(key)
                continue
            try:
                batch.sync(obj)
            except InvalidObjectError as error:
                log.error("mirror %s: %s cannot be stored: %s", self.resource, key, error)
                outcomes[index] = TerminalError(error)
        if resource_version is not None:
            batch.set_resource_version(resource_version)
        try:
            self.store.apply(batch)
        except MirrorDatabaseError as error:
            written = [i for i, outcome in enumerate(outcomes) if outcome is None]
            if error.retryable or len(written) < 2:
                return [error if outcome is None else outcome for outcome in outcomes]
            # Refused, not unreachable: one change may be at fault. Each is
            # tried alone, so one bad row does not hold back the others.
            log.warning(
                "mirror %s: a batch of %d change(s) was refused (%s); writing each alone",
                self.resource,
                len(written),
                error,
            )
            for index in written:
                outcomes[index] = self.write([changes[index]])[0]
        return outcomes

    def _as_read(self, obj: dict[str, Any] | None) -> dict[str, Any] | None:
        """A listed object as a GET returns it: the items of a list response
        carry no ``apiVersion`` and ``kind``; they are put back (a shallow
        copy; the informer's object is never mutated)."""
        if obj is None or ("kind" in obj and "apiVersion" in obj):
            return obj
        return {**self.new_object(), **obj}

    def apply_relist(
        self, changes: Sequence[RelistChange], resource_version: str, sink: Sink
    ) -> None:
        """Write one relist's changes, :attr:`relist_batch` at a time, each
        chunk in one transaction (the last records ``resource_version`` when
        every chunk before it was written). The keys of a chunk whose
        transaction failed are requeued into ``sink`` with backoff (the
        reconcile path reads them live); so are the keys a worker is
        reconciling meanwhile. Never raises."""
        size = self.relist_batch
        chunks = [changes[i : i + size] for i in range(0, len(changes), size)] or [[]]
        failed: list[ObjectKey] = []
        for number, chunk in enumerate(chunks, 1):
            last = number == len(chunks)
            rv = resource_version if last and not failed and resource_version else None
            if not chunk and rv is None:
                continue
            # The copies live only as long as their chunk (no heap of 100k at once).
            outcomes = self.write([(key, self._as_read(obj)) for key, obj in chunk], rv)
            errors = [o for o in outcomes if isinstance(o, MirrorDatabaseError)]
            if errors:
                with self._lock:
                    self._relist_failures += 1
                log.warning(
                    "mirror %s: a relist transaction of %d change(s) failed (%s); "
                    "its keys are requeued with backoff",
                    self.resource,
                    len(chunk),
                    errors[0],
                )
                failed.extend(
                    key
                    for (key, _), outcome in zip(chunk, outcomes, strict=True)
                    if isinstance(outcome, MirrorDatabaseError)
                )
        with self._lock:
            self._relists += 1
            busy = [key for key, _ in changes if key in self._busy]
        add_later = getattr(sink, "add_rate_limited", sink.add)
        for key in failed:
            add_later(Request(key.namespace, key.name))
        for key in busy:
            sink.add(Request(key.namespace, key.name))
        log.info(
            "mirror %s: relist at rv %s written: %d change(s) in %d transaction(s), %d requeued",
            self.resource,
            resource_version or "?",
            len(changes),
            len(chunks),
            len(failed) + len(busy),
        )
        if self.on_relist is not None:
            try:
                self.on_relist(len(changes))
            except Exception:
                log.exception("mirror %s: the on_relist callback raised", self.resource)

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
    """Runs a :class:`~tracker.syncapi.Syncer` on an :class:`informers.toolkit.runtime.Controller`.

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
    :param reconcile_batch, max_batch: a worker takes up to ``max_batch``
        queued requests at once and hands two or more to ``reconcile_batch``
        (see :class:`informers.toolkit.runtime.Controller`); default 1, no batching.

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
        reconcile_batch: BatchReconcileFunc | None = None,
        max_batch: int = 1,
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
        self.reconcile_batch = reconcile_batch
        self.max_batch = max_batch
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
            reconcile_batch=self.reconcile_batch,
            max_batch=self.max_batch,
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
        """The runtime controller's :meth:`~informers.toolkit.runtime.Controller.wait_idle`."""
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
    batch_wrapper: Callable[[BatchReconcileFunc], BatchReconcileFunc] | None = None,
    relist_batch: int = RELIST_BATCH,
    burst_batch: int = BURST_BATCH,
    on_relist: Callable[[int], object] | None = None,
    metadata_only: bool = False,
    **options: Any,
) -> SyncController:
    """A :class:`SyncController` that mirrors ``store``'s kind: a
    :class:`MirrorSyncer` over a :class:`~tracker.mirror.live.LiveReader` of
    ``api_client``, :func:`sync_reconciler` for one request and
    :func:`batch_sync_reconciler` for a burst of up to ``burst_batch``
    (1: every request alone); relists are written ``relist_batch``
    operations per transaction (``on_relist``: see :class:`MirrorSyncer`).
    ``reconcile_wrapper`` and ``batch_wrapper``
    may wrap the two reconcile functions (to count or trace calls);
    ``options`` go to :class:`SyncController`; ``sync_timeout`` defaults to
    :data:`INITIAL_SYNC_TIMEOUT` there, since the informer's source has
    synced only once the whole initial list is written. ``metadata_only``
    mirrors ``PartialObjectMetadata`` objects (see the module docstring)."""
    options.setdefault("sync_timeout", INITIAL_SYNC_TIMEOUT)
    reader = LiveReader(api_client, store.resource, namespace, metadata_only=metadata_only)
    syncer = MirrorSyncer(
        store, reader, parents=parents, relist_batch=relist_batch, on_relist=on_relist
    )
    single = sync_reconciler(syncer, syncer.read)

    def marked(request: Request) -> Result | None:
        with syncer.reconciling([ObjectKey(request.namespace, request.name)]):
            return single(request)

    reconcile: ReconcileFunc = marked
    if reconcile_wrapper is not None:
        reconcile = reconcile_wrapper(reconcile)
    reconcile_batch: BatchReconcileFunc | None = None
    if burst_batch > 1:
        reconcile_batch = batch_sync_reconciler(syncer)
        if batch_wrapper is not None:
            reconcile_batch = batch_wrapper(reconcile_batch)
    return SyncController(
        str(store.resource),
        syncer,
        reconcile,
        factory,
        reconcile_batch=reconcile_batch,
        max_batch=max(1, burst_batch),
        **options,
    )
