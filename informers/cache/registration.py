"""Handler registrations: one listener thread and buffer per handler, and the
:class:`SharedProcessor` that hands an informer's notifications to them.

A :class:`ResourceEventHandlerRegistration` is what
:meth:`SharedIndexInformer.add_event_handler
<informers.cache.informer.SharedIndexInformer.add_event_handler>` returns: its
handler's own thread (``listener-<informer>-<n>``) and unbounded buffer, so a
slow or failing handler never delays the informer or another handler. A
handler that raises is logged (kind, key, resource version; never the object)
and keeps receiving events.

The :class:`SharedProcessor` is the informer's side (client-go's
``sharedProcessor``): it holds the registrations, admits handlers added after
start (current contents first, flagged ``is_in_initial_list``), decides which
are due for a resync, and distributes each notification -- an
:class:`AddNotification`, :class:`UpdateNotification` or
:class:`DeleteNotification` -- to every registration's buffer, a relist
wrapped in the handlers' relist hooks (see :mod:`informers.cache.handlers`).

Threads: the informer loop is the one producer (it alone calls
:meth:`SharedProcessor.distribute`, :meth:`~SharedProcessor.distribute_relist`,
:meth:`~SharedProcessor.distribute_synced` and
:meth:`~SharedProcessor.admit_joining`); every other method may be called from
any thread.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from informers.cache.handlers import ResourceEventHandler
from informers.cache.listbuffer import Deferred
from informers.cache.metrics import SAMPLE_EVERY
from informers.errors import InformerStateError
from informers.util.clock import Clock, on_timer_thread
from informers.util.metrics import HistogramMetric
from informers.wire.objects import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    get_resource_version,
)

__all__ = [
    "AddNotification",
    "DeferredAddNotification",
    "DeferredUpdateNotification",
    "DeleteNotification",
    "Notification",
    "ResourceEventHandlerRegistration",
    "SharedProcessor",
    "UpdateNotification",
    "mark_library_thread",
    "on_library_thread",
]

log = logging.getLogger(__name__)

#: ``library`` is set on the threads the library runs user code on (see
#: :func:`on_library_thread`).
_where = threading.local()


def mark_library_thread() -> None:
    """Mark the calling thread as one the library runs user code on (a
    listener, an informer loop, a reflector): call it first thing on such a
    thread. See :func:`on_library_thread`."""
    _where.library = True


def on_library_thread() -> bool:
    """Whether the calling thread is one the library runs user code on: a
    listener thread (handlers), an informer loop (index functions), a
    reflector thread (the watch error handler, transforms) or a timer
    callback (:func:`~informers.util.clock.on_timer_thread`). ``stop()`` and
    ``remove()`` called there never join threads (a thread joining another
    that waits for it would deadlock, and it cannot join itself): they
    signal, and a later ``stop()`` from another thread joins."""
    return bool(getattr(_where, "library", False)) or on_timer_thread()


@dataclass(slots=True)
class AddNotification:
    """``on_add(obj, is_in_initial_list)``. Not frozen (cheaper to make);
    never mutated once handed over."""

    obj: Any
    is_in_initial_list: bool


@dataclass(slots=True)
class UpdateNotification:
    """``on_update(old, new)``."""

    old: Any
    new: Any


@dataclass(slots=True)
class DeleteNotification:
    """``on_delete(obj)``; ``obj`` may be a tombstone."""

    obj: Any


#: What the informer distributes to its registrations.
Notification = AddNotification | UpdateNotification | DeleteNotification


class DeferredAddNotification:
    """``on_add(obj, is_in_initial_list)`` with the object decoded only when
    a handler receives it (a relist prepared by the cache, see
    :mod:`informers.cache.listbuffer`): the decoded object lives as long as the
    notification, that is until every handler given it has received it."""

    __slots__ = ("deferred", "is_in_initial_list")

    def __init__(self, deferred: Deferred, is_in_initial_list: bool) -> None:
        self.deferred = deferred
        self.is_in_initial_list = is_in_initial_list

    @property
    def obj(self) -> Any:
        """The object (decoded on first use)."""
        return self.deferred.get()


class DeferredUpdateNotification:
    """``on_update(old, new)`` with both decoded only when a handler
    receives it (see :class:`DeferredAddNotification`)."""

    __slots__ = ("deferred_new", "deferred_old")

    def __init__(self, old: Deferred, new: Deferred) -> None:
        self.deferred_old = old
        self.deferred_new = new

    @property
    def old(self) -> Any:
        """The object replaced (decoded on first use)."""
        return self.deferred_old.get()

    @property
    def new(self) -> Any:
        """The new object (decoded on first use)."""
        return self.deferred_new.get()


#: A notification of a prepared relist (see
#: :meth:`SharedProcessor.distribute_relist_lazily`).
LazyNotification: TypeAlias = Notification | DeferredAddNotification | DeferredUpdateNotification


@dataclass(slots=True)
class _RelistBegin:
    resource_version: str


@dataclass(slots=True)
class _RelistEnd:
    resource_version: str


class _Synced:
    """The informer synced and this listener got all of its initial list."""


class _Probe:
    """A latency sample: put in front of a notification at clock time
    ``at``; its delivery is the handler's call for that notification."""

    __slots__ = ("at",)

    def __init__(self, at: float) -> None:
        self.at = at


class _HandlerMetrics:
    """One registration's latency histogram and its sampling state. The
    producer (the informer loop) sets ``outstanding`` when it puts a probe;
    the listener clears it when the probe is delivered (each write is one
    GIL-atomic store, ordered by the buffer between them)."""

    __slots__ = ("last_latency", "latency", "now", "outstanding")

    def __init__(self, latency: HistogramMetric, now: Callable[[], float]) -> None:
        self.latency = latency
        self.now = now
        self.outstanding: float | None = None  # clock time of the probe in the buffer
        self.last_latency = 0.0


_SYNCED = _Synced()
_STOP = object()

#: How a log line names what a handler raised on.
_WHAT: dict[type, str] = {
    AddNotification: "add",
    UpdateNotification: "update",
    DeleteNotification: "delete",
    DeferredAddNotification: "add",
    DeferredUpdateNotification: "update",
    _RelistBegin: "relist begin",
    _RelistEnd: "relist end",
    _Synced: "synced",
    _Probe: "latency probe",
}


def _describe(obj: Any) -> str:
    """``key (rv N)`` of an object, for a log line (never the object)."""
    try:
        key = deletion_handling_meta_namespace_key(obj)
    except Exception:  # noqa: BLE001 - only for a log line
        key = "?"
    target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    rv = get_resource_version(target) if isinstance(target, Mapping) else ""
    return f"{key} (rv {rv or '?'})"


#: At most this many notifications are handled between two updates of a
#: registration's count of handled notifications.
_RUN = 64


class ResourceEventHandlerRegistration:
    """One handler added to an informer: its listener thread and buffer.

    ``has_synced()`` is true once the informer synced and this handler
    returned from every call of its initial list (the ``on_synced`` hook, if
    the handler has one, runs right after it turned true). ``remove()`` stops
    delivery and joins the thread. ``deliver_existing`` is False for a
    registration that skipped the replay of the cache when it was added after
    start. Thread-safe; never made directly (see
    :meth:`SharedProcessor.add`).
    """

    def __init__(
        self,
        processor: SharedProcessor,
        handler: ResourceEventHandler,
        resync_period: float,
        name: str,
        *,
        deliver_existing: bool = True,
        gate: Callable[[], bool] | None = None,
    ) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.name = name
        self.deliver_existing = deliver_existing
        # Never change after construction:
        self._processor = processor
        self._gate = gate
        self._relist_begin: Callable[[str], object] | None = getattr(
            handler, "on_relist_begin", None
        )
        self._relist_end: Callable[[str], object] | None = getattr(handler, "on_relist_end", None)
        self._on_synced: Callable[[], object] | None = getattr(handler, "on_synced", None)
        self._has_relist_hooks = self._relist_begin is not None or self._relist_end is not None
        # Set once by the processor before the registration gets anything.
        self._metrics: _HandlerMetrics | None = None
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Written only by the informer loop (the one producer), read anywhere:
        # notifications put so far (a GIL-atomic int; _done catches up with it).
        self._puts = 0
        self._cond = threading.Condition()
        # --- guarded by _cond ---------------------------------------------------
        #: Notifications handled (written by the listener thread, which counts
        #: them in runs: see _run).
        self._done = 0
        self._handled_waiters = 0  # threads in wait_handled()
        self._idle_waiters = 0  # threads in wait_idle()
        self._synced = False
        self._removed = False
        #: Set (once) by _halt: removed or its informer stopped; the thread is
        #: never started after that, and sync waiters give up.
        self._halted = False
        #: Set (once) when the thread has ended, or will never run.
        self._ended = False
        self._end_posted = False  # the stop marker is in the buffer
        #: Set and started together, under the lock (so a thread recorded is
        #: always a started one: joinable).
        self._thread: threading.Thread | None = None
        # ------------------------------------------------------------------------

    # producer side (the informer loop, through the processor)
    def _put(self, item: object) -> None:
        self._puts += 1
        self._queue.put(item)

    def _start(self) -> None:
        """Start the thread, unless halted. Started under the lock (the new
        thread takes it only later, so this never waits for it): a thread
        :meth:`_join` finds has always been started."""
        with self._cond:
            if self._halted or self._thread is not None:
                return
            thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            thread.start()
            self._thread = thread

    def _halt(self) -> None:
        """No thread starts from now on; sync waiters return at once."""
        with self._cond:
            self._halted = True
            if self._thread is None:
                self._ended = True
            self._cond.notify_all()

    def _end(self) -> None:
        """Halt, and stop the thread after what is buffered (without joining)."""
        self._halt()
        with self._cond:
            if self._end_posted:
                return
            self._end_posted = True
        self._queue.put(_STOP)

    def _join(self, timeout: float | None) -> bool:
        """Join the thread (never the calling one); True once it has ended
        or will never run."""
        with self._cond:
            thread = self._thread
            ended = self._ended
        if thread is None:
            return ended
        if thread is not threading.current_thread():
            thread.join(timeout)
        return not thread.is_alive()

    def _on_own_thread(self) -> bool:
        with self._cond:
            return self._thread is threading.current_thread()

    def _run(self) -> None:
        mark_library_thread()
        try:
            self._listen()
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify_all()

    def _listen(self) -> None:
        # Notifications are handled in runs: what is buffered, up to _RUN at a
        # time, then _done is advanced once (one lock, and a notify only when
        # someone waits). A run ends early once a wait_handled() caller is
        # seen (it reads the counts under the lock, so one that starts
        # waiting mid-run is woken by the run's end at the latest).
        get, get_nowait = self._queue.get, self._queue.get_nowait
        while True:
            item = get()
            if item is _STOP:
                return
            handled = 0
            stopping = False
            try:
                while True:
                    handled += 1  # counted even if the handler raises (as BaseException)
                    self._deliver(item)
                    if handled >= _RUN or self._handled_waiters:
                        break
                    try:
                        item = get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stopping = True
                        break
            finally:
                with self._cond:
                    self._done += handled
                    if self._handled_waiters or (self._idle_waiters and self._done >= self._puts):
                        self._cond.notify_all()
            if stopping:
                return

    def _deliver(self, item: object) -> None:
        handler = self.handler
        try:
            if type(item) is AddNotification:
                handler.on_add(item.obj, item.is_in_initial_list)
            elif type(item) is UpdateNotification:
                handler.on_update(item.old, item.new)
            elif type(item) is DeleteNotification:
                handler.on_delete(item.obj)
            elif type(item) is DeferredAddNotification:
                handler.on_add(item.deferred.get(), item.is_in_initial_list)
            elif type(item) is DeferredUpdateNotification:
                handler.on_update(item.deferred_old.get(), item.deferred_new.get())
            elif type(item) is _RelistBegin:
                if self._relist_begin is not None:
                    self._relist_begin(item.resource_version)
            elif type(item) is _RelistEnd:
                if self._relist_end is not None:
                    self._relist_end(item.resource_version)
            elif type(item) is _Synced:
                with self._cond:
                    self._synced = True
                    self._cond.notify_all()
                if self._on_synced is not None:
                    self._on_synced()
            elif type(item) is _Probe and self._metrics is not None:
                self._probed(item, self._metrics)
        except Exception:
            obj = getattr(item, "obj", None) or getattr(item, "new", None)
            log.exception(
                "%s: handler %s raised on %s of %s",
                self._processor.name,
                type(handler).__name__,
                _WHAT.get(type(item), "?"),
                _describe(obj) if obj is not None else "the informer",
                extra={"kind": self._processor.name},
            )

    @staticmethod
    def _probed(probe: _Probe, metrics: _HandlerMetrics) -> None:
        latency = max(0.0, metrics.now() - probe.at)
        metrics.last_latency = latency
        metrics.outstanding = None
        metrics.latency.observe(latency)

    def lag(self) -> float:
        """Seconds the handler is behind, from the latency samples (0.0
        without metrics): the age of the sample waiting in its buffer, else
        the last sample's latency while notifications wait, else 0.0."""
        metrics = self._metrics
        if metrics is None:
            return 0.0
        outstanding = metrics.outstanding
        if outstanding is not None:
            return max(0.0, metrics.now() - outstanding)
        return metrics.last_latency if self.pending() else 0.0

    # consumer-facing
    def has_synced(self) -> bool:
        """Whether this handler has processed its whole initial list."""
        with self._cond:
            return self._synced

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced`, or ``timeout`` real seconds, or
        the registration stops (removed, or its informer stopped: then at
        once); returns :meth:`has_synced`."""
        with self._cond:
            return self._cond.wait_for(lambda: self._synced or self._halted, timeout) and (
                self._synced
            )

    def is_stopped(self) -> bool:
        """Whether the registration was removed or its informer stopped: it
        will never become synced if it is not yet."""
        with self._cond:
            return self._halted

    def pending(self) -> int:
        """Notifications buffered or being handled right now (the handled
        ones are counted in runs of up to 64, so this may lag that far
        behind while the handler is busy; it is exact once the handler is
        idle). With informer metrics on, a latency probe waiting in the
        buffer counts as one (at most one waits at a time)."""
        with self._cond:
            return max(0, self._puts - self._done)

    @property
    def handed_out(self) -> int:
        """How many notifications were handed to this registration so far
        (with informer metrics on, the latency probes among them too)."""
        return self._puts

    def wait_handled(self, count: int, timeout: float | None = None) -> bool:
        """Block until the handler has returned from the first ``count``
        notifications handed to it (or the registration was removed), or
        ``timeout`` real seconds; unlike :meth:`wait_idle`, later
        notifications do not hold it up."""
        with self._cond:
            self._handled_waiters += 1
            try:
                return (
                    self._cond.wait_for(
                        lambda: self._done >= count or self._removed or self._ended, timeout
                    )
                    and self._done >= count
                )
            finally:
                self._handled_waiters -= 1

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the buffer is empty and the handler is not running (or
        the registration was removed), or ``timeout`` real seconds."""
        with self._cond:
            self._idle_waiters += 1
            try:
                return self._cond.wait_for(
                    lambda: self._done >= self._puts or self._removed or self._ended, timeout
                )
            finally:
                self._idle_waiters -= 1

    def remove(self) -> None:
        """Stop delivering to this handler and join its thread. Called on a
        thread the library runs user code on (this or another handler, a
        timer callback: see :func:`on_library_thread`), it joins nothing:
        the thread ends once the handler returns, and the informer's next
        ``stop()`` joins it. Idempotent."""
        self._processor.remove(self)
        with self._cond:
            self._removed = True
            self._cond.notify_all()

    def __repr__(self) -> str:
        return f"<ResourceEventHandlerRegistration {self.name}>"


class SharedProcessor:
    """The registrations of one informer and the hand-off of its
    notifications to them (see the module documentation).

    ``name`` names the informer in thread names and logs; ``clock`` times the
    resyncs; ``on_join()`` is called (outside the lock) after a handler was
    added to a started processor, to wake the informer loop that admits it.
    """

    def __init__(self, name: str, clock: Clock, on_join: Callable[[], None]) -> None:
        self.name = name
        self._clock = clock
        self._on_join = on_join
        # Numbers the listener threads: guarded by _lock (itertools.count
        # is thread-safe only under the GIL).
        self._next_number = 0
        self._lock = threading.Lock()
        # --- guarded by _lock -------------------------------------------------
        # Admitted registrations. Replaced (never mutated) under the lock, so
        # the loop's distribution reads the reference without it: a
        # consistent snapshot, one per entry.
        self._listeners: tuple[ResourceEventHandlerRegistration, ...] = ()
        # Added after start, not admitted yet (thread running, buffer empty).
        # has_joining() reads its length without the lock (see there).
        self._joining: list[ResourceEventHandlerRegistration] = []
        # Removed on a library thread (see on_library_thread), their threads
        # not joined yet: join() joins them (and forgets them once ended).
        self._retired: list[ResourceEventHandlerRegistration] = []
        # When each admitted or joining registration with a period is next due.
        self._next_resync: dict[ResourceEventHandlerRegistration, float] = {}
        # The registrations the last should_resync() found due. Replaced
        # (never mutated) under the lock; read without it, like _listeners.
        self._syncing: frozenset[ResourceEventHandlerRegistration] = frozenset()
        self._started = False
        self._stopped = False
        # ----------------------------------------------------------------------
        # Latency sampling (see enable_metrics): the loop alone counts down;
        # 0 is off. A scrape may set it to 1 (a probe with the next event).
        self._probe_in = 0
        self._instrument: Callable[[ResourceEventHandlerRegistration], None] | None = None

    # ------------------------------------------------------------ metrics

    def enable_metrics(
        self, instrument: Callable[[ResourceEventHandlerRegistration], HistogramMetric | None]
    ) -> None:
        """Sample the handlers' latency: ``instrument(registration)`` is
        called for every registration (those made so far, and each one added
        later, before it gets anything) and returns its latency histogram, or
        ``None`` to leave it out. From then on one event in
        :data:`~informers.cache.metrics.SAMPLE_EVERY` distributed carries a
        probe. Call before :meth:`start`."""
        clock_now = self._clock.now

        def attach(reg: ResourceEventHandlerRegistration) -> None:
            latency = instrument(reg)
            if latency is not None:
                reg._metrics = _HandlerMetrics(latency, clock_now)

        with self._lock:
            self._instrument = attach
            regs = [*self._listeners, *self._joining]
        for reg in regs:
            attach(reg)
        self._probe_in = 1

    def request_probe(self) -> None:
        """Have the next event distributed carry a probe (a scrape that
        found a handler busy asks, so a slow stream's lag stays current)."""
        if self._probe_in:
            self._probe_in = 1

    def _put_probes(self) -> None:
        self._probe_in = SAMPLE_EVERY
        at = self._clock.now()
        for reg in self._listeners:
            metrics = reg._metrics
            if metrics is not None and metrics.outstanding is None:
                metrics.outstanding = at
                reg._put(_Probe(at))

    # ------------------------------------------------------------ registrations

    def add(
        self,
        handler: ResourceEventHandler,
        resync_period: float,
        *,
        deliver_existing: bool = True,
        gate: Callable[[], bool] | None = None,
    ) -> ResourceEventHandlerRegistration:
        """Register ``handler``. Before :meth:`start` it simply joins; after,
        its thread starts at once and the informer loop admits it (see
        :meth:`admit_joining`). ``gate()``, when given, is asked once per
        entry whether to hand the registration that entry's notifications at
        all (the signal bridge skips them while nothing listens). Raises
        :class:`~informers.InformerStateError` once stopped."""
        with self._lock:
            number = self._next_number
            self._next_number += 1
        reg = ResourceEventHandlerRegistration(
            self,
            handler,
            resync_period,
            f"listener-{self.name}-{number}",
            deliver_existing=deliver_existing,
            gate=gate,
        )
        with self._lock:
            instrument = self._instrument
        if instrument is not None:
            instrument(reg)
        now = self._clock.now()
        with self._lock:
            if self._stopped:
                raise InformerStateError(f"{self.name}: the informer was stopped")
            started = self._started
            if started:
                self._joining.append(reg)
                self._next_resync[reg] = now + resync_period
            else:
                self._listeners = (*self._listeners, reg)
        if started:
            reg._start()
            self._on_join()
        return reg

    def remove(self, reg: ResourceEventHandlerRegistration) -> None:
        """Stop delivering to ``reg`` and stop its thread: joined here, or,
        called on a thread the library runs user code on (see
        :func:`on_library_thread`), by :meth:`join`. Idempotent."""
        defer = on_library_thread() or reg._on_own_thread()
        with self._lock:
            self._listeners = tuple(r for r in self._listeners if r is not reg)
            if reg in self._joining:
                self._joining.remove(reg)
            self._next_resync.pop(reg, None)
            if defer and reg not in self._retired:
                self._retired.append(reg)
        reg._end()
        if not defer:
            reg._join(None)

    def registrations(self) -> list[ResourceEventHandlerRegistration]:
        """Every registration, admitted or joining (not the removed ones)."""
        with self._lock:
            return [*self._listeners, *self._joining]

    def has_joining(self) -> bool:
        """Whether a handler added after start still waits to be admitted.

        Reads without the lock (the informer loop asks before every batch): a
        handler being added at that very moment may be missed, but its
        :meth:`add` calls ``on_join`` after appending it, and that wakes the
        loop to ask again, so it is never left waiting."""
        return bool(self._joining)

    def start(self) -> None:
        """Start the threads of the handlers added so far; later ones join."""
        now = self._clock.now()
        with self._lock:
            if self._started or self._stopped:
                return
            self._started = True
            regs = self._listeners
            for reg in regs:
                self._next_resync[reg] = now + reg.resync_period
        for reg in regs:
            reg._start()

    def stop(self, timeout: float | None = None) -> list[threading.Thread]:
        """:meth:`halt`, :meth:`end_delivery`, then :meth:`join` (from a
        thread the library runs user code on, no join: see
        :func:`on_library_thread`); returns the threads still running.
        Idempotent."""
        self.end_delivery()
        if on_library_thread():
            return []
        return self.join(timeout)

    def halt(self) -> None:
        """No handler can be added from now on, no listener thread starts,
        and every registration's sync waiters return at once. Delivery goes
        on until :meth:`end_delivery`. Idempotent; never blocks (beyond the
        locks)."""
        with self._lock:
            self._stopped = True
            regs = [*self._listeners, *self._joining, *self._retired]
        for reg in regs:
            reg._halt()

    def end_delivery(self) -> None:
        """Stop every registration's thread once it has handled what it has
        buffered (a stop marker behind it): called by the one producer (the
        informer loop) as it ends, or by the informer when no loop runs, so
        no notification is ever put behind the marker. Implies :meth:`halt`.
        Idempotent; never joins."""
        self.halt()
        with self._lock:
            regs = [*self._listeners, *self._joining, *self._retired]
        for reg in regs:
            reg._end()

    def join(self, timeout: float | None = None) -> list[threading.Thread]:
        """Join the listener threads (each up to ``timeout`` seconds; never
        the calling thread); returns those still alive. Registrations
        removed on a library thread are joined here too (and then
        forgotten)."""
        with self._lock:
            regs = [*self._listeners, *self._joining, *self._retired]
        alive: list[threading.Thread] = []
        ended: set[ResourceEventHandlerRegistration] = set()
        for reg in regs:
            if reg._join(timeout):
                ended.add(reg)
            else:
                thread = reg._thread  # set once, never cleared
                if thread is not None and thread is not threading.current_thread():
                    alive.append(thread)
        with self._lock:
            self._retired = [r for r in self._retired if r not in ended]
        return alive

    # ------------------------------------------------------------------- resync

    def should_resync(self) -> bool:
        """Find the registrations whose resync is due (and schedule their
        next one); True if there are any. Sync notifications distributed
        from then on reach only those. Called by the informer loop (the one
        that distributes them, so the set never changes under a delivery)."""
        now = self._clock.now()
        with self._lock:
            due = frozenset(
                r
                for r in self._listeners
                if r.resync_period > 0 and now >= self._next_resync.get(r, now)
            )
            for r in due:
                self._next_resync[r] = now + r.resync_period
            self._syncing = due
        return bool(due)

    # ------------------------------------------------------ distribution (loop)

    def admit_joining(
        self, snapshot: Callable[[], list[Any]], synced: bool, resource_version: str
    ) -> bool:
        """Admit the handlers added after start: each gets the current
        contents (``snapshot()``, as initial adds, wrapped in its relist hooks)
        unless it opted out, then ``synced`` tells whether it is synced
        already; from then on it receives every notification. Returns whether
        any was admitted. Only the informer loop calls this, between entries,
        so nothing is missed or delivered twice."""
        with self._lock:
            joining = list(self._joining)
        if not joining:
            return False
        objects = snapshot() if any(r.deliver_existing for r in joining) else []
        for reg in joining:
            if reg.deliver_existing:
                self._replay(reg, objects, resource_version)
            if synced:
                reg._put(_SYNCED)
        with self._lock:
            for reg in joining:
                if reg in self._joining:  # not removed meanwhile
                    self._joining.remove(reg)
                    self._listeners = (*self._listeners, reg)
        return True

    @staticmethod
    def _replay(
        reg: ResourceEventHandlerRegistration, objects: list[Any], resource_version: str
    ) -> None:
        hooks = reg._has_relist_hooks
        if hooks:
            reg._put(_RelistBegin(resource_version))
        for obj in objects:
            reg._put(AddNotification(obj, True))
        if hooks:
            reg._put(_RelistEnd(resource_version))

    def distribute(self, note: Notification, is_sync: bool = False) -> None:
        """Hand ``note`` to every admitted registration (a resync update,
        ``is_sync``, only to those found due by :meth:`should_resync`)."""
        syncing = self._syncing  # snapshots: see __init__
        countdown = self._probe_in
        if countdown:  # sampling the handlers' latency (off: 0)
            if countdown == 1:
                self._put_probes()
            else:
                self._probe_in = countdown - 1
        for reg in self._listeners:
            if is_sync and reg not in syncing:
                continue
            gate = reg._gate
            if gate is not None and not gate():
                continue
            reg._puts += 1
            reg._queue.put(note)

    def distribute_relist(
        self, notes: list[Notification], syncs: list[bool], resource_version: str
    ) -> None:
        """Hand one relist's notifications to every admitted registration, in
        order (``syncs[i]``: ``notes[i]`` is a resync update, as in
        :meth:`distribute`), between a relist begin and end for handlers with
        those hooks. Each gate is asked once for the whole relist."""
        self.distribute_relist_lazily(
            lambda _need_sync: zip(notes, syncs, strict=True), resource_version
        )

    def distribute_relist_lazily(
        self,
        make_notes: Callable[[bool], Iterable[tuple[LazyNotification, bool]]],
        resource_version: str,
    ) -> None:
        """As :meth:`distribute_relist`, for a relist whose notifications are
        made one at a time, as they are handed out: ``make_notes(need_sync)``
        yields ``(notification, is_sync)`` in order; ``need_sync`` tells
        whether the ``is_sync`` flags matter (some registration taking the
        relist is not due for a resync), so the maker can skip working them
        out. When no registration takes the relist (every gate closed, or
        none at all), ``make_notes`` is not called."""
        regs, syncing = self._listeners, self._syncing  # snapshots: see __init__
        targets = [(reg in syncing, reg) for reg in regs if reg._gate is None or reg._gate()]
        if not targets:
            return
        for _, reg in targets:
            if reg._has_relist_hooks:
                reg._put(_RelistBegin(resource_version))
        puts = [(in_syncing, reg._put) for in_syncing, reg in targets]
        need_sync = not all(in_syncing for in_syncing, _ in targets)
        for note, is_sync in make_notes(need_sync):
            for in_syncing, put in puts:
                if is_sync and not in_syncing:
                    continue
                put(note)
        for _, reg in targets:
            if reg._has_relist_hooks:
                reg._put(_RelistEnd(resource_version))

    def distribute_resync(self, objects: list[Any], *, lazy: bool) -> None:
        """Hand each of ``objects`` (the cache's content) as an update of
        itself to the registrations :meth:`should_resync` found due, in
        order (``lazy``: the objects are :class:`~informers.cache.listbuffer.Deferred`,
        decoded when a handler reads them)."""
        syncing = self._syncing  # snapshots: see __init__
        puts = [
            reg._put
            for reg in self._listeners
            if reg in syncing and (reg._gate is None or reg._gate())
        ]
        if not puts:
            return
        for obj in objects:
            note: LazyNotification = (
                DeferredUpdateNotification(obj, obj) if lazy else UpdateNotification(obj, obj)
            )
            for put in puts:
                put(note)

    def distribute_synced(self) -> None:
        """Tell every admitted registration that the informer has synced (it
        becomes synced itself once it handled everything before)."""
        for reg in self._listeners:  # a snapshot: see __init__
            reg._put(_SYNCED)
