"""SharedIndexInformer: one list+watch of a resource shared by many handlers.

Data flow: a :class:`~informers.cache.reflector.Reflector` (its own thread) feeds a
:class:`~informers.cache.fifo.RealFIFO`; the informer loop (one thread) pops each
entry, applies it to the :class:`~informers.cache.store.Indexer` (a
:class:`~informers.cache.fifo.Relist` in one atomic replace) and only then hands the
notifications to every registered handler's listener
(:mod:`informers.cache.registration`: its own thread and unbounded buffer, so a slow
or failing handler never delays the others; a handler that raises is logged
and keeps receiving events).

Handlers are described in :mod:`informers.cache.handlers` (``on_add``,
``on_update``, ``on_delete``, and the optional relist and synced hooks).
Objects handed to handlers and readers are shared and **read-only**. The
blinker signals of :mod:`informers.cache.signals` are one such handler, registered
by every informer.

A handler added after start is admitted by the loop between two entries (the
loop is woken for it with :meth:`RealFIFO.wake <informers.cache.fifo.RealFIFO.wake>`,
never with a fake entry): it first receives the cache's contents, then every
change after them, with nothing missed or repeated.

Threads: ``informer-<name>`` (the loop), ``reflector-<name>`` (list/watch),
``reflector-<name>-stop`` and one ``listener-<name>-<n>`` per handler. All
are joined by :meth:`SharedIndexInformer.stop` -- called from another
thread; called where the library runs user code (a handler, the watch
error handler, an index function, a timer callback), ``stop()`` signals
every thread to end and returns, and the next ``stop()`` from another
thread joins them (see :func:`~informers.cache.registration.on_library_thread`).

Resync: the reflector's resync timer runs on the clock's timer thread,
which every timer of the process shares, so it only hands the resync to
the loop (a counter and a :meth:`~informers.cache.fifo.RealFIFO.wake`). The loop,
between two entries, picks the handlers that are due and hands each of
them every cached object as an update of the object to itself (the
cache's content at that point, which is exactly what the handlers have
seen: nothing is stale, so no key is skipped). A cache that keeps objects
encoded (``resync_items()``, as :class:`~informers.cache.compact.CompactStore`
offers) has them decoded only when a handler reads them.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from cachetools import LRUCache

from informers.cache import signals
from informers.cache.fifo import (
    Delta,
    DeltaType,
    Entry,
    ListBufferFactory,
    RealFIFO,
    Relist,
    TransformFunc,
)
from informers.cache.handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from informers.cache.keys import keys_plain_dicts
from informers.cache.listbuffer import PreparedList
from informers.cache.metrics import (
    InformerMetricsProvider,
    ReflectorMetrics,
    default_informer_metrics,
)
from informers.cache.mutation import (
    CacheMutationDetector,
    MutationCheckingHandler,
    detection_enabled,
)
from informers.cache.protocols import (
    InformerStore,
    KeyFuncStore,
    PreparedListStore,
    StoreFactory,
    decode_on_demand_source,
)
from informers.cache.reflector import BackoffManager, Reflector, ReflectorConfig, WatchErrorHandler
from informers.cache.registration import (
    AddNotification,
    DeferredAddNotification,
    DeferredUpdateNotification,
    DeleteNotification,
    LazyNotification,
    Notification,
    ResourceEventHandlerRegistration,
    SharedProcessor,
    UpdateNotification,
    mark_library_thread,
    on_library_thread,
)
from informers.cache.store import Indexer, ThreadSafeStore
from informers.errors import FIFOClosedError, IndexFunctionError, InformerStateError
from informers.rest.listwatch import ListerWatcher
from informers.util.clock import REAL_CLOCK, Clock
from informers.util.metrics import HistogramMetric
from informers.wire.objects import (
    Indexers,
    get_resource_version,
)

__all__ = [
    "FilteringResourceEventHandler",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
]

log = logging.getLogger(__name__)

#: Queue entries the informer loop processes per lock round trip.
_BATCH = 64


class SharedIndexInformer:
    """Keeps an :class:`~informers.cache.store.Indexer` of one resource in sync and
    delivers its changes to any number of handlers.

    :param lister_watcher: where objects come from (e.g.
        :class:`~informers.rest.listwatch.HTTPListerWatcher`).
    :param indexers: initial indexes of the cache.
    :param resync_period: default resync period of handlers, seconds (0 = never).
        Resync replays the cache to due handlers as updates; it never re-lists.
    :param name: used in thread names and logs (e.g. the resource name).
    :param reflector_config: tunables of the reflector (paging, watch-list, timeouts).
    :param clock: time source (tests inject a FakeClock).
    :param backoff: the reflector's retry backoff (default 0.8 s to 30 s).
    :param detect_mutations: turn the cache mutation detector on (a debug
        mode: see :mod:`informers.cache.mutation`); ``None`` (the default)
        reads the ``KUBE_CACHE_MUTATION_DETECTOR`` environment variable.
    :param store: builds the cache (a
        :class:`~informers.cache.protocols.StoreFactory`; default
        :class:`~informers.cache.store.Indexer`). ``store=CompactStore`` keeps the
        objects encoded (:mod:`informers.cache.compact`, for very large
        caches). A store that offers list buffers (a
        :class:`~informers.cache.protocols.PreparedListStore`, as
        :class:`~informers.cache.compact.store.CompactStore` is) gets every list
        collected in its own form, page by page, and
        its relists' notifications decoded only as handlers receive them
        (:mod:`informers.cache.listbuffer`): a list never exists decoded in full.
        Objects are stored under the store's own keys: with the default key
        function (``meta_namespace_key``; the ``key_func`` of a
        :class:`~informers.cache.protocols.KeyFuncStore`) the loop
        reuses the keys the delta queue computed, and a store built with a
        key function of its own (``functools.partial(Indexer, key_func=...)``)
        keys every object itself.
    :param metrics: where the informer reports its metrics
        (:mod:`informers.cache.metrics`, labelled with ``name``); default the
        process-wide provider as :meth:`start` finds it
        (:func:`~informers.cache.metrics.default_informer_metrics`: none unless
        installed, e.g. by :func:`informers.cache.prometheus.install_informer_metrics`).

    Lifecycle: configure (``add_indexers``, ``set_transform``,
    ``set_watch_error_handler``, ``add_event_handler``), then :meth:`start`
    (threads) or :meth:`run` (blocks until ``stop`` is set), then
    :meth:`stop`. An informer runs once. Every method is thread-safe.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        indexers: Indexers | None = None,
        resync_period: float = 0.0,
        name: str = "",
        reflector_config: ReflectorConfig | None = None,
        clock: Clock = REAL_CLOCK,
        backoff: BackoffManager | None = None,
        store: StoreFactory | None = None,
        detect_mutations: bool | None = None,
        metrics: InformerMetricsProvider | None = None,
    ) -> None:
        self.name = name or (
            getattr(getattr(lister_watcher, "resource", None), "plural", "") or "informer"
        )
        #: The ``extra`` of this informer's log records (informers.util.logfmt).
        self._log_extra: dict[str, str] = {"kind": self.name}
        # Never change after construction:
        self._lw = lister_watcher
        if store is not None and not callable(store):
            raise TypeError(
                "store= takes a store factory (e.g. CompactStore, or functools.partial("
                f"CompactStore, ...)), not a {type(store).__name__}"
            )
        make_store: StoreFactory = Indexer if store is None else store
        self._indexer: InformerStore = make_store(
            indexers=dict(indexers or {}), on_index_error=self._index_function_failed
        )
        #: The cache mutation detector (see :mod:`informers.cache.mutation`),
        #: or ``None`` when off or when the store shares no objects.
        self.mutation_detector: CacheMutationDetector | None = None
        if detection_enabled(detect_mutations) and isinstance(self._indexer, ThreadSafeStore):
            self.mutation_detector = CacheMutationDetector(self.name, self._indexer.list)
        # Whether the store keys a plain-dict object as the delta queue does
        # (the default key functions agree on those): the loop then writes
        # such objects under the queue's keys instead of keying them again.
        # A store with a key function of its own (or none it tells) keys them
        # itself.
        self._queue_keys = isinstance(self._indexer, KeyFuncStore) and keys_plain_dicts(
            self._indexer.key_func
        )
        # The store's list buffers, when it offers them (see informers.cache.listbuffer).
        self._replace_prepared: Callable[[Any, str], Callable[[str], Any]] | None = None
        self._list_buffers: ListBufferFactory | None = None
        if isinstance(self._indexer, PreparedListStore):
            self._replace_prepared = self._indexer.replace_prepared
            self._list_buffers = self._indexer.new_list_buffer
        # A store keeping raw bytes gets raw objects (informers.cache.compact.raw).
        self._lw = decode_on_demand_source(lister_watcher, self._indexer)
        self._default_resync = resync_period
        config = reflector_config or ReflectorConfig(description=self.name)
        if config.paginate_lists is None and self._list_buffers is not None:
            # The store collects lists page by page: have them arrive so.
            config = dataclasses.replace(config, paginate_lists=True)
        self._reflector_config = config
        self._clock = clock
        self._backoff = backoff
        self._metrics = metrics
        self._stop_event = threading.Event()
        self._synced_event = threading.Event()  # set by the loop, once
        # Used by the loop thread only (the one caller of _index_function_failed):
        self._index_failures: LRUCache[tuple[str, str], bool] = LRUCache(maxsize=10_000)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Loop iterations finished (a batch of entries, or an admission);
        # wait_idle waits for it to move. Written by the loop thread alone,
        # without the lock; read under it (see _progressed: no lost wake-up).
        self._progress = 0
        # The highest resourceVersion applied to the store (a relist's, or a
        # watch event's; resyncs do not move it): written by the loop thread
        # alone, read by wait_for_resource_version like _progress.
        self._applied_rv = -1
        # Resyncs requested (by the reflector's resync timer, its only writer)
        # and done (by the loop, its only writer): the loop resyncs when they
        # differ. Plain ints read without a lock (see the GIL notes in
        # docs/guide/concurrency.rst): a request is never lost, as the
        # counter only grows and the wake-up after it makes the loop look.
        self._resync_requests = 0
        self._resyncs_done = 0
        # --- guarded by _lock -------------------------------------------------
        self._idle_waiters = 0  # threads in wait_idle(); read by the loop without the lock
        # The reflector's resync check period: the shortest handler period
        # before start, fixed once started.
        self._resync_check = resync_period
        self._transform: TransformFunc | None = None
        self._error_handler: WatchErrorHandler | None = None
        self._started = False
        self._stopped = False
        # start() is between its first and last locked section: stop() from
        # outside waits for it (a thread recorded then may not be started yet).
        self._launching = False
        self._threads: list[threading.Thread] = []
        self._fifo: RealFIFO | None = None
        self._reflector: Reflector | None = None
        # ----------------------------------------------------------------------
        # The registrations, their threads and resync schedule (its own lock).
        self._processor = SharedProcessor(self.name, clock, self._wake_loop)
        self._bridge = self._processor.add(
            signals.SignalBridge(self), 0.0, gate=signals.has_event_receivers
        )

    def __repr__(self) -> str:
        return f"<SharedIndexInformer {self.name}>"

    # ------------------------------------------------------------------ configuration

    def add_event_handler(
        self,
        handler: ResourceEventHandler,
        resync_period: float | None = None,
        *,
        deliver_existing: bool = True,
    ) -> ResourceEventHandlerRegistration:
        """Register a handler; returns its registration. Added after start,
        it first receives the current contents (``is_in_initial_list=True``)
        unless ``deliver_existing`` is False (then it receives only the changes
        from its admission on, and is synced once admitted after the informer
        synced). ``resync_period`` defaults to the informer's; after start it
        cannot be shorter than the informer's resync check period."""
        period = self._default_resync if resync_period is None else resync_period
        if self.mutation_detector is not None:
            handler = MutationCheckingHandler(handler, self.mutation_detector)
        with self._lock:
            if self._stopped:
                raise InformerStateError(f"{self.name}: the informer was stopped")
            if period > 0:
                if self._started:
                    period = max(period, self._resync_check) if self._resync_check > 0 else 0.0
                elif self._resync_check <= 0 or period < self._resync_check:
                    self._resync_check = period
        return self._processor.add(handler, period, deliver_existing=deliver_existing)

    def add_indexers(self, indexers: Indexers) -> None:
        """Add indexes to the cache (also after start). Raises
        :class:`~informers.IndexFunctionError` (adding nothing) when a new
        index function fails on an object already cached.

        Once added, an index function that fails on an incoming object does
        not stop it from being cached: the object is stored, indexed under no
        value in that index, and the failure is logged as an error naming the
        index and the object's key (as :class:`~informers.Indexer` does with
        ``on_index_error``) -- once per object and index; repeats (every
        resync would repeat it) are logged at debug level."""
        self._indexer.add_indexers(indexers)

    def _index_function_failed(self, error: IndexFunctionError) -> None:
        # Called on the informer loop thread only. Every resync and relist
        # would repeat the same failure: an error once per (index, key),
        # remembered in a bounded cache, then debug lines.
        seen = (error.index_name, error.key)
        repeated = seen in self._index_failures
        self._index_failures[seen] = True
        cause = error.__cause__
        log.log(
            logging.DEBUG if repeated else logging.ERROR,
            "%s: %s; the object is cached, but not in index %r",
            self.name,
            error,
            error.index_name,
            exc_info=None
            if repeated or cause is None
            else (type(cause), cause, cause.__traceback__),
        )

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Set a function applied once to every incoming object before it is
        cached (never to tombstones). Only before start."""
        with self._lock:
            if self._started:
                raise InformerStateError(f"{self.name}: set_transform after start")
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Called as ``handler(reflector, error)`` for every list/watch error.
        Only before start."""
        with self._lock:
            if self._started:
                raise InformerStateError(f"{self.name}: set_watch_error_handler after start")
            self._error_handler = handler

    # ------------------------------------------------------------------ reading

    def get_store(self) -> InformerStore:
        """The cache (read it; never write to it)."""
        return self._indexer

    def get_indexer(self) -> InformerStore:
        """The cache with its indexes (same object as :meth:`get_store`)."""
        return self._indexer

    def has_synced(self) -> bool:
        """Whether the first full list has been applied to the cache."""
        return self._synced_event.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced`, ``timeout`` real seconds passed,
        or the informer is stopped (then at once: a stopped informer never
        syncs); returns :meth:`has_synced`."""
        synced = self._synced_event
        if synced.is_set():
            return True
        with self._cond:
            self._cond.wait_for(lambda: synced.is_set() or self._stopped, timeout)
        return synced.is_set()

    def last_sync_resource_version(self) -> str:
        """The RV the reflector last synced to ("" before start)."""
        with self._lock:
            reflector = self._reflector
        return reflector.last_sync_resource_version() if reflector else ""

    @property
    def reflector(self) -> Reflector | None:
        """The reflector, once started."""
        with self._lock:
            return self._reflector

    def registrations(self) -> list[ResourceEventHandlerRegistration]:
        """The handlers' registrations (not the internal signal bridge)."""
        return [r for r in self._processor.registrations() if r is not self._bridge]

    def is_stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        with self._lock:
            return self._stopped

    def _stopped_locked(self) -> bool:
        return self._stopped

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until every queued entry has been applied (none is being
        processed either), every handler added so far has been admitted, and
        every handler is idle: the deterministic point tests compare against
        (events still arriving from the server may make it busy again).
        ``timeout`` is in real seconds; returns False when it passed."""
        deadline = REAL_CLOCK.now() + timeout
        with self._lock:
            fifo = self._fifo
        if fifo is not None:
            while True:
                with self._cond:
                    if self._stopped:
                        break
                    seen = self._progress
                # Read after ``seen``: progress made since is not missed.
                if (
                    fifo.pending() == 0
                    and not self._processor.has_joining()
                    and self._resyncs_done == self._resync_requests
                ):
                    break
                if not self._wait_progress(seen, deadline):
                    return False
        for reg in self._processor.registrations():
            if not reg.wait_idle(max(0.0, deadline - REAL_CLOCK.now())):
                return False
        return True

    def applied_resource_version(self) -> str:
        """The highest resourceVersion the store has applied so far (a list's
        or a watch event's, bookmarks included): ``""`` before the first list.
        What a write returned is in the cache once this reached its
        resourceVersion (see :meth:`wait_for_resource_version`)."""
        rv = self._applied_rv
        return str(rv) if rv >= 0 else ""

    def wait_for_resource_version(
        self,
        target: str | int | Mapping[str, Any] | object,
        timeout: float = 10.0,
        *,
        handler: ResourceEventHandlerRegistration | None = None,
    ) -> bool:
        """Read-your-writes: block until the store has applied everything up
        to ``target`` and, with ``handler`` (a registration of this
        informer), until that handler has also returned from every
        notification up to it.

        ``target`` is a resourceVersion (``str`` or ``int``) or an object as a
        write returned it: a dict (``metadata.resourceVersion``), an official
        client model such as ``V1ConfigMap``, or anything else with
        ``metadata.resource_version``. Raises :class:`TypeError` for a target
        it cannot read a resourceVersion from, and :class:`ValueError` for a
        resourceVersion that is not a number: the wait is never skipped
        silently.

        Event-driven (no polling). ``timeout`` is in real seconds; returns
        False when it passed or the informer stopped first. A write that the
        informer does not see (another namespace, a selector that excludes
        it) is covered by the next bookmark or event after it, so prefer a
        target the informer watches. Thread-safe; never call it from a
        handler of this informer (the handler would wait for itself).
        """
        want = _target_resource_version(target)
        deadline = REAL_CLOCK.now() + timeout
        while self._applied_rv < want:
            with self._cond:
                if self._stopped:
                    return False
                seen = self._progress
            # Read after ``seen``: an entry applied since is not missed.
            if self._applied_rv >= want:
                break
            if not self._wait_progress(seen, deadline):
                return False
        if handler is None:
            return True
        # Every notification up to ``want`` was handed to the handler before
        # the loop moved on: wait until it returned from all handed out so far.
        return handler.wait_handled(handler.handed_out, max(0.0, deadline - REAL_CLOCK.now()))

    def _wait_progress(self, seen: int, deadline: float) -> bool:
        """Wait until the loop moved on from ``seen`` (or stop, or deadline)."""
        with self._cond:
            self._idle_waiters += 1
            try:
                return self._cond.wait_for(
                    lambda: self._progress != seen or self._stopped,
                    max(0.0, deadline - REAL_CLOCK.now()),
                )
            finally:
                self._idle_waiters -= 1

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the reflector, the loop and the listeners on their threads.

        Raises :class:`~informers.errors.InformerStateError` when started
        already, or stopped (before or while this call ran: an informer runs
        once; a start that loses a race with :meth:`stop` starts nothing).
        Atomic with respect to :meth:`stop`: a concurrent ``stop()`` from
        another thread waits for the threads to be started, then joins them.
        """
        with self._lock:
            if self._stopped:
                raise InformerStateError(
                    f"{self.name}: the informer was stopped; an informer runs once"
                )
            if self._started:
                raise InformerStateError(f"{self.name}: already started")
            self._started = True
            self._launching = True
            transform = self._transform
            handler = self._error_handler
            resync_check = self._resync_check
        try:
            provider = self._metrics or default_informer_metrics()
            fifo = RealFIFO(
                known_objects=self._indexer, transform=transform, list_buffer=self._list_buffers
            )
            reflector = Reflector(
                self._lw,
                fifo,
                config=self._reflector_config,
                name=f"reflector-{self.name}",
                resync_period=resync_check,
                resync_handoff=self._request_resync,
                watch_error_handler=handler,
                clock=self._clock,
                backoff=self._backoff,
                metrics=None if provider is None else ReflectorMetrics(provider, self.name),
            )
            if provider is not None:
                self._instrument(provider, reflector)
            loop = threading.Thread(target=self._loop, args=(fifo,), name=f"informer-{self.name}")
            refl = threading.Thread(
                target=self._reflect, args=(reflector,), name=f"reflector-{self.name}"
            )
            loop.daemon = refl.daemon = True
            with self._lock:
                refused = self._stopped_locked()  # (a stop() may have run since)
                if not refused:
                    self._fifo = fifo
                    self._reflector = reflector
                    self._threads = [refl, loop]
            if refused:  # stop() came first: nothing starts, no loop will end delivery
                self._processor.end_delivery()
                raise InformerStateError(
                    f"{self.name}: stopped while starting; an informer runs once"
                )
            # From here on, handlers join (the loop admits them). A stop()
            # meanwhile closed the queue and halted the listeners: the
            # threads started below end at once.
            self._processor.start()
            loop.start()
            refl.start()
        finally:
            with self._lock:
                self._launching = False
                self._cond.notify_all()
        log.info("%s: informer started", self.name, extra=self._log_extra)

    def run(self, stop: threading.Event) -> None:
        """Start, block until ``stop`` is set, then :meth:`stop`."""
        self.start()
        try:
            self._clock.wait(stop, None)
        finally:
            self.stop()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop every thread and join them (each join waits up to ``timeout``
        seconds). A list or watch request in flight is aborted when the
        lister-watcher supports it (:meth:`HTTPListerWatcher.abortable
        <informers.rest.listwatch.HTTPListerWatcher.abortable>`), so the
        reflector thread ends at once. Threads waiting in
        :meth:`wait_synced`, :meth:`wait_idle`,
        :meth:`wait_for_resource_version` or a registration's
        ``wait_synced`` return at once.

        Safe from any thread, and idempotent: the first call signals every
        thread to end. Called on a thread the library runs user code on (a
        handler, the watch error handler, an index function, a timer
        callback: see :func:`~informers.cache.registration.on_library_thread`) it
        returns without joining (a thread cannot join itself, and joining
        another that waits for it would deadlock); every call from another
        thread joins what is still running -- so a later ``stop()`` joins
        what an earlier one could not. Threads still running when
        ``timeout`` expired are logged (a handler that never returns keeps
        its thread); each handler still gets what was handed to it before
        the loop ended: the loop stops between two batches of entries and
        only then puts the listeners' stop markers, so nothing is ever
        queued behind them.
        """
        with self._lock:
            first = not self._stopped
            self._stopped = True
            self._cond.notify_all()
            fifo = self._fifo
            loop_runs = bool(self._threads)
        if first:
            self._stop_event.set()
            self._processor.halt()  # sync waiters return; no listener starts
            if fifo is not None:
                fifo.close()
            if not loop_runs:  # else the loop ends delivery as it ends
                self._processor.end_delivery()
            log.info("%s: informer stopping", self.name, extra=self._log_extra)
        if on_library_thread():
            return
        with self._cond:
            self._cond.wait_for(lambda: not self._launching)
            threads = list(self._threads)
        current = threading.current_thread()
        for t in threads:
            if t is not current:
                t.join(timeout)
        alive = [t for t in threads if t.is_alive()]
        # Once the loop ended, every listener has its stop marker.
        alive += self._processor.join(timeout if not alive else 0.0)
        if alive:
            log.warning(
                "%s: stopped, but %s still running after %s s; a later stop() joins them",
                self.name,
                ", ".join(t.name for t in alive),
                timeout,
                extra=self._log_extra,
            )
        elif first:
            log.info("%s: informer stopped", self.name, extra=self._log_extra)

    def _instrument(self, provider: InformerMetricsProvider, reflector: Reflector) -> None:
        """Hand ``provider`` the gauges read on scrape (holding this informer
        only weakly: 0.0 once it is gone) and have the handlers' latency
        sampled. Called once, by :meth:`start`."""
        me = weakref.ref(self)
        clock = self._clock
        name = self.name

        def objects() -> float:
            informer = me()
            return float(len(informer._indexer)) if informer is not None else 0.0

        refl = weakref.ref(reflector)

        def age() -> float:
            r = refl()
            return max(0.0, clock.now() - r.last_data_time()) if r is not None else 0.0

        provider.new_objects_metric(name).set_function(objects)
        provider.new_last_event_age_metric(name).set_function(age)
        processor = weakref.ref(self._processor)
        bridge = self._bridge

        def instrument(reg: ResourceEventHandlerRegistration) -> HistogramMetric | None:
            if reg is bridge:
                return None
            handle = weakref.ref(reg)

            def backlog() -> float:
                r = handle()
                return float(r.pending()) if r is not None else 0.0

            def lag() -> float:
                r, p = handle(), processor()
                if r is None:
                    return 0.0
                if p is not None and r.pending():
                    p.request_probe()
                return r.lag()

            provider.new_handler_backlog_metric(name, reg.name).set_function(backlog)
            provider.new_handler_lag_metric(name, reg.name).set_function(lag)
            return provider.new_handler_latency_metric(name, reg.name)

        self._processor.enable_metrics(instrument)

    # ------------------------------------------------------------------ the loop

    def _wake_loop(self) -> None:
        # A handler joined after start: the loop admits it between entries.
        with self._lock:
            fifo = self._fifo
        if fifo is not None:
            fifo.wake()

    def _request_resync(self) -> None:
        """The reflector's resync timer (on the clock's shared timer thread):
        hand the resync to the loop, and nothing more."""
        self._resync_requests += 1
        self._wake_loop()

    def _reflect(self, reflector: Reflector) -> None:
        mark_library_thread()  # the watch error handler and transforms run here
        reflector.run(self._stop_event)

    def _loop(self, fifo: RealFIFO) -> None:
        mark_library_thread()  # index functions run here
        try:
            self._run_loop(fifo)
        finally:
            # The one producer of the listeners' buffers ends: only now do
            # they get their stop markers (nothing is ever put behind one).
            self._processor.end_delivery()

    def _run_loop(self, fifo: RealFIFO) -> None:
        processor = self._processor
        stop = self._stop_event
        while not stop.is_set():
            if self._resyncs_done != self._resync_requests:
                self._resyncs_done = self._resync_requests
                try:
                    self._resync()
                except Exception:
                    log.exception("%s: resync failed", self.name, extra=self._log_extra)
                self._progressed()
            if processor.has_joining() and processor.admit_joining(
                self._indexer.list, self._synced_event.is_set(), fifo.last_resource_version()
            ):
                self._progressed()
            # Several entries per wake-up, each processed exactly as one pop().
            try:
                fifo.pop_batch(self._process, _BATCH, process_delta=self._process_delta)
            except FIFOClosedError:
                return
            except Exception:
                # A handler's notification cannot raise here (listeners run on
                # their own threads) and index functions that fail are logged
                # by _index_function_failed: what is left is a key function
                # failing, or a bug. The store is left as it was.
                log.exception(
                    "%s: applying a queue entry failed; the cache misses that change",
                    self.name,
                    extra=self._log_extra,
                )
            self._progressed()

    def _progressed(self) -> None:
        # Lock-free unless someone waits: the loop writes _progress, then
        # reads _idle_waiters; wait_idle raises _idle_waiters, then reads
        # _progress (both under the GIL's sequential consistency), so at least
        # one of them sees the other's write: a waiter either finds the
        # progress made or is notified.
        self._progress += 1
        if self._idle_waiters:
            with self._cond:
                self._cond.notify_all()

    def _process(self, entry: Entry, is_in_initial_list: bool) -> None:
        """Applies a relist (pop_batch hands an entry of one delta to
        :meth:`_process_delta` instead)."""
        if type(entry) is not Relist:
            raise TypeError(f"{self.name}: a single delta reached the relist path")
        if self._replace_prepared is not None and isinstance(entry.objects, PreparedList):
            self._apply_prepared_relist(entry, is_in_initial_list, self._replace_prepared)
        else:
            self._apply_relist(entry, is_in_initial_list)
        rv = entry.resource_version
        if rv.isdigit() and rv.isascii():
            self._applied_rv = max(self._applied_rv, int(rv))
        if not self._synced_event.is_set():
            self._first_synced()

    def _process_delta(self, delta: Delta, key: str, initial: bool) -> None:
        """Applies an entry of one delta, whose object the queue keyed as
        ``key``. A plain-dict object (every watch event's) is written under
        that key when the store keys as the queue does (``_queue_keys``, as
        :meth:`_apply_relist` relies on too); anything else is keyed by the
        store. One key computation (at most) and one lock for the read and
        the write."""
        kind = delta.type
        obj = delta.object
        indexer = self._indexer
        if kind is DeltaType.BOOKMARK:
            rv = obj
        elif kind is DeltaType.DELETED:
            indexer.delete(obj)
            self._processor.distribute(DeleteNotification(obj))
            rv = get_resource_version(obj)
        else:
            if type(obj) is not dict or not self._queue_keys:
                key = indexer.key_of(obj)
            old = indexer.upsert(key, obj)
            if old is None:
                self._processor.distribute(AddNotification(obj, initial))
            else:
                self._processor.distribute(UpdateNotification(old, obj), kind is DeltaType.SYNC)
            rv = "" if kind is DeltaType.SYNC else get_resource_version(obj)
        if rv.isdigit() and rv.isascii():
            self._applied_rv = max(self._applied_rv, int(rv))
        if kind is DeltaType.BOOKMARK and not self._synced_event.is_set():
            self._first_synced()

    def _resync(self) -> None:
        """On the loop, between entries: hand every cached object, as an
        update to itself, to the handlers due for a resync (see the module
        documentation)."""
        if not self._processor.should_resync():
            return
        lazy: Callable[[], list[Any]] | None = getattr(self._indexer, "resync_items", None)
        if lazy is not None:
            self._processor.distribute_resync(lazy(), lazy=True)
        else:
            self._processor.distribute_resync(self._indexer.list(), lazy=False)

    def _first_synced(self) -> None:
        # Entries are applied in order by this one thread: once the first
        # relist (or bookmark) is applied, so is everything queued before it.
        self._synced_event.set()
        with self._cond:  # wait_synced waits on the condition
            self._cond.notify_all()
        log.info("%s: synced (%d objects)", self.name, len(self._indexer), extra=self._log_extra)
        self._processor.distribute_synced()

    def _apply_relist(self, relist: Relist, initial: bool) -> None:
        objects = relist.objects
        # The queue's keys of plain-dict objects are reused when the store
        # keys those as the queue does (_queue_keys); anything else is keyed
        # by the store itself (raising ObjectKeyError as get() would).
        key_of = self._indexer.key_of
        if self._queue_keys:
            keys = [
                key if type(obj) is dict else key_of(obj)
                for key, obj in zip(relist.keys, objects, strict=True)
            ]
        else:
            keys = [key_of(obj) for obj in objects]
        olds = self._indexer.get_many(keys)
        # Parallel lists (no tuple per object): the notification, and whether
        # it is a resync (same resource version as the cached object).
        notes: list[Notification] = []
        syncs: list[bool] = []
        add_note, add_sync = notes.append, syncs.append
        for obj, old in zip(objects, olds, strict=True):
            if old is None:
                add_note(AddNotification(obj, initial))
                add_sync(False)
            else:
                add_note(UpdateNotification(old, obj))
                add_sync(get_resource_version(old) == get_resource_version(obj) != "")
        for tombstone in relist.deleted:
            add_note(DeleteNotification(tombstone))
            add_sync(False)
        # Later duplicates win, as in Indexer.replace.
        self._indexer.replace_items(dict(zip(keys, objects, strict=True)), relist.resource_version)
        self._processor.distribute_relist(notes, syncs, relist.resource_version)

    def _apply_prepared_relist(
        self,
        relist: Relist,
        initial: bool,
        replace_prepared: Callable[[Any, str], Callable[[str], Any]],
    ) -> None:
        """A relist collected by the store's list buffer: the store adopts it
        as it is (atomically), then each notification is made as it is
        handed out, its objects decoded only when a handler receives them --
        the same notifications, in the same order, as :meth:`_apply_relist`
        makes, without ever holding the list decoded."""
        prepared = relist.objects
        assert isinstance(prepared, PreparedList)
        previous = replace_prepared(prepared, relist.resource_version)

        def notes(need_sync: bool) -> Iterator[tuple[LazyNotification, bool]]:
            for i, key in enumerate(prepared.keys):
                new = prepared.deferred(i)
                old = previous(key)
                if old is None:
                    yield DeferredAddNotification(new, initial), False
                else:
                    # A resync when the resource version did not move: known
                    # from equal blobs (an object the relist left unchanged)
                    # or else from the old object, decoded for that alone.
                    rv = prepared.resource_version(i)
                    is_sync = need_sync and (
                        rv != ""
                        if old.same_source(new)
                        else get_resource_version(old.peek()) == rv != ""
                    )
                    yield DeferredUpdateNotification(old, new), is_sync
            for tombstone in relist.deleted:
                yield DeleteNotification(tombstone), False

        self._processor.distribute_relist_lazily(notes, relist.resource_version)


def _target_resource_version(target: object) -> int:
    """The resourceVersion of a :meth:`SharedIndexInformer.wait_for_resource_version`
    target, as a number (see there for what is accepted and raised)."""
    if isinstance(target, bool):
        raise TypeError("a resourceVersion target is a str, an int or an object, not a bool")
    if isinstance(target, int):
        text = str(target)
    elif isinstance(target, str):
        text = target
    else:
        metadata = None if isinstance(target, bytes | bytearray) else _object_metadata(target)
        if metadata is None:
            raise TypeError(
                f"cannot read a resourceVersion from a {type(target).__name__}: pass a "
                "resourceVersion, a dict with metadata.resourceVersion, or an object with "
                "metadata.resource_version (a kubernetes client model)"
            )
        text = get_resource_version(target)
        if not text:
            raise ValueError(
                f"the {type(target).__name__} has no metadata.resourceVersion: "
                "pass the object a write returned"
            )
    if not (text.isdigit() and text.isascii()):
        raise ValueError(f"resourceVersion {text!r} is not a number")
    return int(text)


def _object_metadata(target: object) -> Any:
    if isinstance(target, Mapping):
        return target.get("metadata")
    return getattr(target, "metadata", None)
