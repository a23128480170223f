"""SharedIndexInformer: one list+watch of a resource shared by many handlers.

Data flow: a :class:`~informers.reflector.Reflector` (its own thread) feeds a
:class:`~informers.fifo.RealFIFO`; the informer loop (one thread) pops each
entry, applies it to the :class:`~informers.store.Indexer` (a relist in one
atomic ``replace``) and hands notifications to every registered handler's
listener. Each listener has its own thread and an unbounded buffer, so a slow
or failing handler never delays the others; a handler that raises is logged
(kind, key, RV) and keeps receiving events.

Handlers are any object with ``on_add(obj, is_in_initial_list)``,
``on_update(old, new)`` and ``on_delete(obj)`` (``obj`` may be a
:class:`~informers.objects.DeletedFinalStateUnknown` when the deletion was
missed). Objects handed to handlers and readers are shared and **read-only**.

Threads: ``informer-<name>`` (the loop), ``reflector-<name>`` (list/watch),
``reflector-<name>-stop`` and one ``listener-<name>-<n>`` per handler. All
are joined by :meth:`SharedIndexInformer.stop`.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from cachetools import LRUCache

from informers import signals as _signals
from informers.clock import REAL_CLOCK, Clock
from informers.errors import FIFOClosedError, IndexFunctionError, InformerStateError
from informers.fifo import Delta, DeltaType, RealFIFO, TransformFunc, _KeyedDeltas
from informers.listwatch import ListerWatcher
from informers.objects import (
    DeletedFinalStateUnknown,
    Indexers,
    deletion_handling_meta_namespace_key,
    get_resource_version,
)
from informers.reflector import BackoffManager, Reflector, ReflectorConfig, WatchErrorHandler
from informers.store import Indexer

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


@runtime_checkable
class ResourceEventHandler(Protocol):
    """What an informer calls, on the handler's own listener thread, in order.

    Handlers must not mutate the objects they receive.
    """

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


class ResourceEventHandlerFuncs:
    """A handler made of optional functions; missing ones ignore the event.

    ``add_func`` may take ``(obj)`` or ``(obj, is_in_initial_list)``; pass
    ``add_func_with_initial=True`` for the latter."""

    def __init__(
        self,
        add_func: Callable[..., None] | None = None,
        update_func: Callable[[Any, Any], None] | None = None,
        delete_func: Callable[[Any], None] | None = None,
        *,
        add_func_with_initial: bool = False,
    ) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func
        self._with_initial = add_func_with_initial

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            if self._with_initial:
                self.add_func(obj, is_in_initial_list)
            else:
                self.add_func(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


class FilteringResourceEventHandler:
    """Passes to ``handler`` only objects for which ``filter_func`` is true.

    An update whose old object passed and new one does not is delivered as a
    delete of the old object; one that starts passing, as an add."""

    def __init__(self, filter_func: Callable[[Any], bool], handler: ResourceEventHandler) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        was, now = self.filter_func(old), self.filter_func(new)
        if was and now:
            self.handler.on_update(old, new)
        elif now:
            self.handler.on_add(new, False)
        elif was:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if self.filter_func(target):
            self.handler.on_delete(obj)


# --------------------------------------------------------------------------- listeners


@dataclass(slots=True)
class _Add:
    obj: Any
    initial: bool


@dataclass(slots=True)
class _Update:
    old: Any
    new: Any


@dataclass(slots=True)
class _Delete:
    obj: Any


@dataclass(slots=True)
class _Synced:
    """The informer synced and this listener got all of its initial list."""


_STOP = object()
_Notification = _Add | _Update | _Delete | _Synced


def _describe(obj: Any) -> str:
    try:
        key = deletion_handling_meta_namespace_key(obj)
    except Exception:  # noqa: BLE001 - only for a log line
        key = "?"
    target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    rv = get_resource_version(target) if isinstance(target, Mapping) else ""
    return f"{key} (rv {rv or '?'})"


class ResourceEventHandlerRegistration:
    """One handler added to an informer: its listener thread and buffer.

    ``has_synced()`` is true once the informer synced and this handler
    returned from every ``on_add`` of its initial list. ``remove()`` stops
    delivery and joins the thread. Thread-safe.
    """

    def __init__(
        self,
        informer: SharedIndexInformer,
        handler: ResourceEventHandler,
        resync_period: float,
        name: str,
    ) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.name = name
        self._informer = informer
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._cond = threading.Condition()
        # Written only by the informer loop (the one producer), read anywhere:
        self._puts = 0  # notifications put
        # Guarded by _cond:
        self._done = 0  # notifications handled (written by the listener thread)
        self._synced = False
        self._thread: threading.Thread | None = None
        self._removed = False
        self._next_resync = 0.0

    # producer side (informer loop)
    def _put(self, item: _Notification) -> None:
        # Only the informer loop calls this: the counter needs no lock.
        self._puts += 1
        self._queue.put(item)

    def _start(self) -> None:
        thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        with self._cond:
            self._thread = thread
        thread.start()

    def _stop(self) -> None:
        with self._cond:
            thread = self._thread
        self._queue.put(_STOP)
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            try:
                self._deliver(item)
            finally:
                with self._cond:
                    self._done += 1
                    if isinstance(item, _Synced):
                        self._synced = True
                    if isinstance(item, _Synced) or self._done >= self._puts:
                        self._cond.notify_all()
            if isinstance(item, _Synced):
                self._informer._registration_synced(self)

    def _deliver(self, item: _Notification) -> None:
        try:
            match item:
                case _Add(obj, initial):
                    self.handler.on_add(obj, initial)
                case _Update(old, new):
                    self.handler.on_update(old, new)
                case _Delete(obj):
                    self.handler.on_delete(obj)
                case _Synced():
                    pass
        except Exception:
            obj = getattr(item, "obj", None) or getattr(item, "new", None)
            log.exception(
                "%s: handler %s raised on %s of %s",
                self._informer.name,
                type(self.handler).__name__,
                type(item).__name__.strip("_").lower(),
                _describe(obj),
            )

    # consumer-facing
    def has_synced(self) -> bool:
        """Whether this handler has processed its whole initial list."""
        with self._cond:
            return self._synced

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced` or ``timeout``; returns it."""
        with self._cond:
            return self._cond.wait_for(lambda: self._synced or self._removed, timeout) and (
                self._synced
            )

    def pending(self) -> int:
        """Notifications buffered or being handled right now."""
        with self._cond:
            return max(0, self._puts - self._done)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the buffer is empty and the handler is not running."""
        with self._cond:
            return self._cond.wait_for(lambda: self._done >= self._puts, timeout)

    def remove(self) -> None:
        """Stop delivering to this handler and join its thread. Idempotent."""
        self._informer._remove(self)
        with self._cond:
            self._removed = True
            self._cond.notify_all()

    def __repr__(self) -> str:
        return f"<ResourceEventHandlerRegistration {self.name}>"


class _SignalBridge:
    """Sends the informer's blinker signals (a handler like any other)."""

    def __init__(self, informer: SharedIndexInformer) -> None:
        self._informer = informer

    # send_to_each, not Signal.send: one raising receiver must not keep the
    # others (a ResourceTracker, say) from seeing the event.
    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if _signals.added.receivers:
            _signals.send_to_each(
                _signals.added, self._informer, obj=obj, is_in_initial_list=is_in_initial_list
            )

    def on_update(self, old: Any, new: Any) -> None:
        if _signals.updated.receivers:
            _signals.send_to_each(_signals.updated, self._informer, old=old, new=new)

    def on_delete(self, obj: Any) -> None:
        if _signals.deleted.receivers:
            _signals.send_to_each(_signals.deleted, self._informer, obj=obj)


# --------------------------------------------------------------------------- informer


class SharedIndexInformer:
    """Keeps an :class:`~informers.store.Indexer` of one resource in sync and
    delivers its changes to any number of handlers.

    :param lister_watcher: where objects come from (e.g.
        :class:`~informers.listwatch.HTTPListerWatcher`).
    :param indexers: initial indexes of the cache.
    :param resync_period: default resync period of handlers, seconds (0 = never).
        Resync replays the cache to due handlers as updates; it never re-lists.
    :param name: used in thread names and logs (e.g. the resource name).
    :param reflector_config: tunables of the reflector (paging, watch-list, timeouts).
    :param clock: time source (tests inject a FakeClock).
    :param backoff: the reflector's retry backoff (default 0.8 s to 30 s).

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
    ) -> None:
        self.name = name or (
            getattr(getattr(lister_watcher, "resource", None), "plural", "") or "informer"
        )
        self._lw = lister_watcher
        self._index_failures: LRUCache[tuple[str, str], bool] = LRUCache(maxsize=10_000)
        self._indexer = Indexer(
            indexers=dict(indexers or {}), on_index_error=self._index_function_failed
        )
        self._default_resync = resync_period
        self._resync_check = resync_period
        self._reflector_config = reflector_config or ReflectorConfig(description=self.name)
        self._clock = clock
        self._backoff = backoff
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Guarded by _lock:
        self._processed = 0  # queue entries applied (written by the loop thread only)
        self._idle_waiters = 0  # threads in wait_idle()
        self._transform: TransformFunc | None = None
        self._error_handler: WatchErrorHandler | None = None
        self._registrations: tuple[ResourceEventHandlerRegistration, ...] = ()
        self._joining: list[ResourceEventHandlerRegistration] = []
        self._syncing: frozenset[ResourceEventHandlerRegistration] = frozenset()
        self._started = False
        self._stopped = False
        self._threads: list[threading.Thread] = []
        self._fifo: RealFIFO | None = None
        self._reflector: Reflector | None = None
        self._synced_sent = False
        self._counter = itertools.count()
        self._stop_event = threading.Event()
        self._synced_event = threading.Event()
        self._bridge = self._new_registration(_SignalBridge(self), 0.0)

    def __repr__(self) -> str:
        return f"<SharedIndexInformer {self.name}>"

    # ------------------------------------------------------------------ configuration

    def _new_registration(
        self, handler: ResourceEventHandler, resync: float
    ) -> ResourceEventHandlerRegistration:
        n = next(self._counter)
        reg = ResourceEventHandlerRegistration(self, handler, resync, f"listener-{self.name}-{n}")
        with self._lock:
            started = self._started and not self._stopped
            if started:
                self._joining.append(reg)
            else:
                self._registrations = (*self._registrations, reg)
        if started:
            reg._next_resync = self._clock.now() + resync
            reg._start()
            self._kick()
        return reg

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> ResourceEventHandlerRegistration:
        """Register a handler; returns its registration. Added after start,
        it first receives the current contents (``is_in_initial_list=True``).
        ``resync_period`` defaults to the informer's; after start it cannot
        be shorter than the informer's resync check period."""
        period = self._default_resync if resync_period is None else resync_period
        with self._lock:
            if self._stopped:
                raise InformerStateError(f"{self.name}: the informer was stopped")
            if period > 0:
                if self._started:
                    period = max(period, self._resync_check) if self._resync_check > 0 else 0.0
                elif self._resync_check <= 0 or period < self._resync_check:
                    self._resync_check = period
        return self._new_registration(handler, period)

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

    def get_store(self) -> Indexer:
        """The cache (read it; never write to it)."""
        return self._indexer

    def get_indexer(self) -> Indexer:
        """The cache with its indexes (same object as :meth:`get_store`)."""
        return self._indexer

    def has_synced(self) -> bool:
        """Whether the first full list has been applied to the cache."""
        return self._synced_event.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced` or ``timeout`` real seconds; returns it."""
        return self._synced_event.wait(timeout)

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
        with self._lock:
            regs = [*self._registrations, *self._joining]
        return [r for r in regs if r is not self._bridge]

    def is_stopped(self) -> bool:
        with self._lock:
            return self._stopped

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until the queue is drained and every handler is idle: the
        deterministic point tests compare against (events still arriving from
        the server may make it busy again). Returns False on timeout."""
        deadline = self._clock.now() + timeout
        with self._lock:
            fifo = self._fifo
        while fifo is not None and len(fifo) > 0 and not self.is_stopped():
            if not self._wait_processed(deadline):
                return False
        for reg in [self._bridge, *self.registrations()]:
            if not reg.wait_idle(max(0.0, deadline - self._clock.now())):
                return False
        return True

    def _wait_processed(self, deadline: float) -> bool:
        with self._cond:
            seen = self._processed
            self._idle_waiters += 1
            try:
                return self._cond.wait_for(
                    lambda: self._processed > seen or self._stopped,
                    max(0.0, deadline - self._clock.now()),
                )
            finally:
                self._idle_waiters -= 1

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the reflector, the loop and the listeners on their threads."""
        with self._lock:
            if self._started:
                raise InformerStateError(f"{self.name}: already started")
            self._started = True
            transform = self._transform
            handler = self._error_handler
            regs = self._registrations
        fifo = RealFIFO(known_objects=self._indexer, transform=transform)
        reflector = Reflector(
            self._lw,
            fifo,
            config=self._reflector_config,
            name=f"reflector-{self.name}",
            resync_period=self._resync_check,
            should_resync=self._should_resync,
            watch_error_handler=handler,
            clock=self._clock,
            backoff=self._backoff,
        )
        with self._lock:
            self._fifo = fifo
            self._reflector = reflector
        now = self._clock.now()
        for reg in regs:
            reg._next_resync = now + reg.resync_period
            reg._start()
        loop = threading.Thread(target=self._loop, args=(fifo,), name=f"informer-{self.name}")
        refl = threading.Thread(
            target=reflector.run, args=(self._stop_event,), name=f"reflector-{self.name}"
        )
        loop.daemon = refl.daemon = True
        with self._lock:
            self._threads = [refl, loop]
        loop.start()
        refl.start()
        log.info("%s: informer started", self.name)

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
        <informers.listwatch.HTTPListerWatcher.abortable>`), so the
        reflector thread ends at once. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._cond.notify_all()
            threads = self._threads
            fifo = self._fifo
            regs = (*self._registrations, *self._joining)
        self._stop_event.set()
        if fifo is not None:
            fifo.close()
        for t in threads:
            t.join(timeout)
        for reg in regs:
            reg._stop()
        log.info("%s: informer stopped", self.name)

    # ------------------------------------------------------------------ internals

    def _kick(self) -> None:
        # Wake the loop so it admits late handlers. Before the first sync the
        # initial relist is on its way and will do it (a bookmark must not be
        # mistaken for that relist).
        with self._lock:
            fifo = self._fifo
        if fifo is not None and self._synced_event.is_set():
            fifo.bookmark(fifo.last_resource_version())

    def _remove(self, reg: ResourceEventHandlerRegistration) -> None:
        with self._lock:
            self._registrations = tuple(r for r in self._registrations if r is not reg)
            if reg in self._joining:
                self._joining.remove(reg)
        reg._stop()

    def _registration_synced(self, reg: ResourceEventHandlerRegistration) -> None:
        if reg is self._bridge and _signals.synced.receivers:
            _signals.send_to_each(_signals.synced, self)

    def _should_resync(self) -> bool:
        now = self._clock.now()
        with self._lock:
            due = frozenset(
                r for r in self._registrations if r.resync_period > 0 and now >= r._next_resync
            )
            for r in due:
                r._next_resync = now + r.resync_period
            self._syncing = due
        return bool(due)

    def _loop(self, fifo: RealFIFO) -> None:
        while True:
            # Several entries per wake-up, each processed exactly as one pop().
            try:
                done = fifo.pop_batch(self._process, _BATCH)
            except FIFOClosedError:
                return
            except Exception:
                # A handler's notification cannot raise here (listeners run on
                # their own threads) and index functions that fail are logged
                # by _index_function_failed: what is left is a key function
                # failing, or a bug. The store is left as it was.
                log.exception(
                    "%s: applying a queue entry failed; the cache misses that change", self.name
                )
                done = 1
            self._processed += done  # only this thread writes it
            if self._idle_waiters:
                with self._cond:
                    self._cond.notify_all()

    def _admit_joining(self) -> None:
        if not self._joining:  # racy read: a joiner missed now is admitted next entry
            return
        with self._lock:
            joining, self._joining = self._joining, []
            synced = self._synced_event.is_set()
        if not joining:
            return
        snapshot = self._indexer.list()
        for reg in joining:
            for obj in snapshot:
                reg._put(_Add(obj, True))
            if synced:
                reg._put(_Synced())
        with self._lock:
            self._registrations = (*self._registrations, *joining)

    def _process(self, deltas: list[Delta], is_in_initial_list: bool) -> None:
        self._admit_joining()
        with self._lock:
            regs = self._registrations
            syncing = self._syncing
        relist = len(deltas) > 1 or (deltas and deltas[0].type is DeltaType.REPLACED)
        if relist:
            self._apply_relist(deltas, is_in_initial_list, regs, syncing)
        else:
            for delta in deltas:
                self._apply_one(delta, is_in_initial_list, regs, syncing)
        if not self._synced_event.is_set() and any(
            d.type in (DeltaType.REPLACED, DeltaType.BOOKMARK) for d in deltas
        ):
            # Entries are applied in order by this one thread: once the first
            # relist is applied, so is everything queued before it.
            self._synced_event.set()
            log.info("%s: synced (%d objects)", self.name, len(self._indexer))
            for reg in regs:
                reg._put(_Synced())

    def _notify(
        self,
        item: _Notification,
        regs: Iterable[ResourceEventHandlerRegistration],
        syncing: frozenset[ResourceEventHandlerRegistration],
        *,
        is_sync: bool = False,
    ) -> None:
        quiet = not (
            _signals.added.receivers or _signals.updated.receivers or _signals.deleted.receivers
        )
        for reg in regs:
            if is_sync and reg not in syncing:
                continue
            if reg is self._bridge and quiet:
                continue  # nobody listens to the signals: save the hand-off
            reg._put(item)

    def _apply_one(
        self,
        delta: Delta,
        initial: bool,
        regs: tuple[ResourceEventHandlerRegistration, ...],
        syncing: frozenset[ResourceEventHandlerRegistration],
    ) -> None:
        obj = delta.object
        kind = delta.type
        if kind is DeltaType.BOOKMARK:
            return
        indexer = self._indexer
        if kind is DeltaType.DELETED:
            indexer.delete(obj)
            self._notify(_Delete(obj), regs, syncing)
            return
        # One key computation and one lock for the read and the write.
        old = indexer._upsert_keyed(indexer._key(obj), obj)
        if old is not None:
            self._notify(_Update(old, obj), regs, syncing, is_sync=kind is DeltaType.SYNC)
        else:
            self._notify(_Add(obj, initial), regs, syncing)

    def _apply_relist(
        self,
        deltas: list[Delta],
        initial: bool,
        regs: tuple[ResourceEventHandlerRegistration, ...],
        syncing: frozenset[ResourceEventHandlerRegistration],
    ) -> None:
        # The queue hands its keys along: its key function (the deletion-
        # handling one) and the indexer's (meta_namespace_key) agree on every
        # plain-dict object, so those keys are reused; anything else is keyed
        # by the indexer itself (raising ObjectKeyError as get() would).
        given = deltas.keys if isinstance(deltas, _KeyedDeltas) else None
        key_of = self._indexer._key
        rv = ""
        keys: list[str] = []
        listed: list[Any] = []
        for i, delta in enumerate(deltas):
            kind = delta.type
            if kind is DeltaType.BOOKMARK:
                rv = str(delta.object)
            elif kind is not DeltaType.DELETED:
                obj = delta.object
                listed.append(obj)
                keys.append(given[i] if given is not None and type(obj) is dict else key_of(obj))
        olds = iter(self._indexer._get_many(keys))
        # Parallel lists (no tuple per object): the notification, and whether
        # it is a resync (same resource version as the cached object).
        notes: list[_Notification] = []
        syncs: list[bool] = []
        for delta in deltas:
            kind = delta.type
            if kind is DeltaType.BOOKMARK:
                continue
            obj = delta.object
            if kind is DeltaType.DELETED:
                notes.append(_Delete(obj))
                syncs.append(False)
                continue
            old = next(olds)
            if old is None:
                notes.append(_Add(obj, initial))
                syncs.append(False)
            else:
                notes.append(_Update(old, obj))
                syncs.append(get_resource_version(old) == get_resource_version(obj) != "")
        # Later duplicates win, as in Indexer.replace.
        self._indexer._replace_keyed(dict(zip(keys, listed, strict=True)), rv)
        self._notify_relist(notes, syncs, regs, syncing)

    def _notify_relist(
        self,
        notes: list[_Notification],
        syncs: list[bool],
        regs: tuple[ResourceEventHandlerRegistration, ...],
        syncing: frozenset[ResourceEventHandlerRegistration],
    ) -> None:
        """:meth:`_notify` for each notification of a relist, in order
        (``syncs[i]``: is ``notes[i]`` a resync), asking once (not per object)
        whether anyone listens to the signals (a receiver connecting meanwhile
        gets the next entry's)."""
        quiet = not (
            _signals.added.receivers or _signals.updated.receivers or _signals.deleted.receivers
        )
        targets = [
            (reg in syncing, reg._put) for reg in regs if not (reg is self._bridge and quiet)
        ]
        for note, is_sync in zip(notes, syncs, strict=True):
            for in_syncing, put in targets:
                if is_sync and not in_syncing:
                    continue
                put(note)
