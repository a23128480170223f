"""Sources: where a controller's requests come from.

A :class:`Source` pushes :class:`~informers.toolkit.runtime.Request`\\ s into a
:class:`Sink` (the controller's workqueue). Three ship here:

:class:`InformerSource`
    a handler on a :class:`~informers.cache.informer.SharedIndexInformer`: every
    add, update and delete that passes the source's predicates becomes the
    object's request (or, with ``map_func``, the requests it maps to, such
    as the owner's: :func:`~informers.toolkit.runtime.enqueue_owner`).
:class:`PeriodicSource`
    calls a function every so often (the wait starts when the previous call
    ended, client-go's ``JitterUntil`` with ``sliding=True``) and enqueues
    what it returns.
:class:`ChannelSource`
    enqueues what arrives on a :class:`informers.util.channels.Channel` (or a
    :class:`queue.Queue` the user feeds): requests, keys or objects.

Lifecycle, the same for every source: :meth:`~Source.start` (once, does not
block), then :meth:`~Source.wait_synced` tells when the source's *initial
state* is in the sink (an informer source: every object of the informer's
initial list; a periodic source: its first call; a channel source: what was
in the channel when it started), :meth:`~Source.wait_idle` when nothing is
being pushed right now, and :meth:`~Source.stop` stops it and joins its
thread (idempotent; after it returns nothing more is pushed). Every method is
thread-safe. A source instance serves one controller, once.

Items the user hands over (a periodic function's results, channel items)
may be :class:`~informers.toolkit.runtime.Request`\\ s or key strings
(``"namespace/name"``); anything else is logged and skipped.
"""

from __future__ import annotations

import functools
import logging
import math
import queue as _stdlib_queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from informers.errors import (
    ChannelClosedError,
    ChannelEmptyError,
    InformerStateError,
    ObjectKeyError,
)
from informers.toolkit._logcontext import context_logger
from informers.toolkit.runtime.mapping import MapFunc, request_for_object
from informers.toolkit.runtime.predicates import Predicate, as_predicate
from informers.toolkit.runtime.request import Request
from informers.toolkit.workqueue import PRIORITY_HIGH, PRIORITY_LOW, PriorityQueue
from informers.util.backoff import jittered
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.objects import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    get_resource_version,
)

__all__ = [
    "ChannelSource",
    "HandlerSource",
    "InformerSource",
    "MapErrorReporter",
    "PeriodicSource",
    "Sink",
    "Source",
    "coerce_request",
]

log = context_logger(logging.getLogger(__name__))

#: How long a channel source's ``get`` waits before it looks at its stop
#: event again (a channel cannot wake on another event).
CHANNEL_STOP_CHECK = 0.05


@runtime_checkable
class Sink(Protocol):
    """Where a source puts requests (the controller's workqueue).
    ``add`` must not block for long and must be thread-safe."""

    def add(self, item: Request) -> None: ...


@runtime_checkable
class Source(Protocol):
    """What a :class:`~informers.toolkit.runtime.Controller` starts and stops."""

    @property
    def name(self) -> str:
        """Names the source in logs and in a
        :class:`~informers.errors.CacheSyncTimeoutError`."""
        ...

    def start(self, sink: Sink) -> None:
        """Begin pushing requests into ``sink``; returns at once. Raises
        :class:`~informers.errors.InformerStateError` when started before."""
        ...

    def has_synced(self) -> bool:
        """Whether the initial state is in the sink."""
        ...

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until :meth:`has_synced` (True) or ``timeout`` real seconds
        passed or the source stopped (False)."""
        ...

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is being pushed right now; False on timeout."""
        ...

    def stop(self, timeout: float | None = None) -> None:
        """Stop pushing and join the source's thread (each join waits up to
        ``timeout`` seconds). Idempotent; a source never started just stops."""
        ...


def coerce_request(item: Any) -> Request:
    """``item`` as a :class:`Request`: a Request itself, or a store key string.
    Raises :class:`~informers.errors.ObjectKeyError` for a malformed key and
    :class:`TypeError` for anything else."""
    if isinstance(item, Request):
        return item
    if isinstance(item, str):
        return Request.from_key(item)
    raise TypeError(f"expected a Request or a key string, not {type(item).__name__}")


def _predicates(values: Iterable[Predicate | Callable[[Any], bool]]) -> tuple[Predicate, ...]:
    if isinstance(values, Predicate) or callable(values):
        return (as_predicate(values),)  # a single predicate given without a sequence
    return tuple(as_predicate(p) for p in values)


def _check_map_func(map_func: MapFunc | None) -> MapFunc | None:
    if map_func is not None and not callable(map_func):
        raise TypeError(f"map_func must be callable, not {type(map_func).__name__}")
    return map_func


def _mapped(map_func: MapFunc | None, obj: Any) -> list[Request]:
    if map_func is None:
        return request_for_object(obj)
    return [coerce_request(r) for r in map_func(obj)]


def _func_name(func: Any) -> str:
    return str(getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or func)


def _key_of(obj: Any) -> str:
    try:
        return deletion_handling_meta_namespace_key(obj)
    except Exception:  # noqa: BLE001 - only for a log line
        return f"a {type(obj).__name__}"


class MapErrorReporter:
    """Where an :class:`InformerSource` reports a ``map_func`` that raised:
    the controller's name (for the log line) and a counter (the
    controller's ``controller_runtime_map_errors_total``). Immutable."""

    __slots__ = ("controller", "count")

    def __init__(self, controller: str, count: Callable[[], None]) -> None:
        self.controller = controller
        self.count = count


# --------------------------------------------------------------------------- informer


class _EnqueueHandler:
    """The informer event handler of an :class:`InformerSource`.

    Called on the registration's listener thread. It lets a raising predicate
    propagate: the listener logs it with the object's key and goes on with
    the next event (that event causes no request). A map function that raises
    is caught here: logged at ERROR naming the controller, the map function,
    the event and the key (with the traceback), and counted; that object's
    event causes no request (the other object of an update still does).

    When the sink is a :class:`~informers.toolkit.workqueue.PriorityQueue`, the
    requests of an initial-list add and of a resync (an update whose resource
    version did not move) are added with
    :data:`~informers.toolkit.workqueue.PRIORITY_LOW`, every other event's with
    :data:`~informers.toolkit.workqueue.PRIORITY_HIGH`.
    """

    def __init__(
        self,
        sink: Sink,
        predicates: tuple[Predicate, ...],
        map_func: MapFunc | None,
        errors: MapErrorReporter,
        on_removed: Callable[[], None] | None = None,
    ) -> None:
        self._sink = sink
        self._predicates = predicates
        self._map_func = map_func
        self._errors = errors
        self._prioritized = sink if isinstance(sink, PriorityQueue) else None
        self._removed = on_removed

    def on_removed(self) -> None:
        """The informer was removed from its factory: the source stops."""
        if self._removed is not None:
            self._removed()

    def _map(self, obj: Any, event: str) -> list[Request]:
        try:
            return _mapped(self._map_func, obj)
        except Exception:
            errors = self._errors
            log.exception(
                "controller %s: map function %s raised on %s of %s; the event causes no "
                "request (counted in controller_runtime_map_errors_total)",
                errors.controller,
                _func_name(self._map_func),
                event,
                _key_of(obj),
            )
            errors.count()
            return []

    def _push(self, requests: Iterable[Request], low: bool = False) -> None:
        prioritized = self._prioritized
        if prioritized is None:
            for request in requests:
                self._sink.add(request)
            return
        priority = PRIORITY_LOW if low else PRIORITY_HIGH
        for request in requests:
            prioritized.add(request, priority)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if all(p.create(obj) for p in self._predicates):
            self._push(self._map(obj, "add"), is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        if not all(p.update(old, new) for p in self._predicates):
            return
        resync = False
        if self._prioritized is not None:
            version = get_resource_version(new)
            resync = version != "" and get_resource_version(old) == version
        if self._map_func is None:
            self._push(request_for_object(new), resync)
            return
        requests = self._map(old, "update (old object)")
        requests += [r for r in self._map(new, "update") if r not in requests]
        self._push(requests, resync)

    def on_delete(self, obj: Any) -> None:
        target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not all(p.delete(target) for p in self._predicates):
            return
        if self._map_func is None:
            self._push(request_for_object(obj))  # a tombstone is keyed by its key
        else:
            self._push(self._map(target, "delete"))


class HandlerSource:
    """The lifecycle of a source that is one event handler on a shared
    informer: :meth:`start` adds the handler :meth:`add_handler` makes,
    :meth:`stop` removes it, and the source has synced when the handler's
    registration has (its initial state pushed into the sink).

    Subclass it for a source of your own and implement :meth:`add_handler`;
    :class:`InformerSource` is one. Thread-safe; a source starts at most once
    and a stopped one cannot start again.

    :param informer: anything with a shared informer's ``add_event_handler``.
    :param name: for logs and errors.
    """

    def __init__(self, informer: Any, *, name: str) -> None:
        if not callable(getattr(informer, "add_event_handler", None)):
            raise TypeError(
                f"informer must have add_event_handler(), {type(informer).__name__} has not"
            )
        self.informer = informer
        self._name = name
        self._logger = context_logger(
            log.logger, source=name, kind=str(getattr(informer, "name", "") or "")
        )
        self._lock = threading.Lock()
        # Guarded by _lock. _registration is set once by start(); _started
        # and _stopped only go from False to True.
        self._registration: Any = None
        self._started = False
        self._stopped = False

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name}>"

    @property
    def registration(self) -> Any:
        """The informer's handler registration, once started (else ``None``)."""
        with self._lock:
            return self._registration

    def add_handler(self, sink: Sink) -> Any:
        """Add this source's handler, feeding ``sink``, to :attr:`informer`
        and return the registration (called once, by :meth:`start`, without
        the lock held)."""
        raise NotImplementedError

    def start(self, sink: Sink) -> None:
        """Add the handler; its events go to ``sink``. Raises
        :class:`~informers.errors.InformerStateError` when started twice or
        after :meth:`stop`."""
        with self._lock:
            if self._stopped:
                raise InformerStateError(f"{self._name}: source was stopped")
            if self._started:
                raise InformerStateError(f"{self._name}: source already started")
            self._started = True
        registration = self.add_handler(sink)
        if self._keep_registration(registration):  # stop() ran while it was being added
            registration.remove()
        self._logger.info("%s: source started", self._name)

    def _keep_registration(self, registration: Any) -> bool:
        """Store the registration; answers whether the source was stopped meanwhile."""
        with self._lock:
            self._registration = registration
            return self._stopped

    def has_synced(self) -> bool:
        registration = self.registration
        return registration is not None and bool(registration.has_synced())

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until the handler has synced, up to ``timeout`` seconds;
        False if not started."""
        registration = self.registration
        return registration is not None and bool(registration.wait_synced(timeout))

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until the handler has delivered everything it was given."""
        registration = self.registration
        if registration is None or not hasattr(registration, "wait_idle"):
            return True
        return bool(registration.wait_idle(timeout))

    def informer_started(self) -> bool:
        """Whether the informer looks started (it has a reflector); used to
        say why a source did not sync. True when it cannot tell."""
        if not hasattr(self.informer, "reflector"):
            return True
        return self.informer.reflector is not None

    def stop(self, timeout: float | None = None) -> None:
        """Remove the handler (joins its listener thread). Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            registration = self._registration
        if registration is not None:
            registration.remove()
        self._logger.info("%s: source stopped", self._name)

    def informer_removed(self) -> None:
        """Its informer was removed from its factory
        (:meth:`~informers.cache.factory.SharedInformerFactory.remove`, which
        calls this through the handler's ``on_removed`` hook): the source
        stops, as :meth:`stop`; it never syncs if it had not."""
        log.info("%s: its informer was removed", self._name)
        self.stop()


class InformerSource(HandlerSource):
    """Requests from a shared informer's events.

    :param informer: a :class:`~informers.cache.informer.SharedIndexInformer` (or
        anything with its ``add_event_handler``); the source adds one handler
        on :meth:`start` and removes it on :meth:`stop`.
    :param predicates: every one must pass an event (see
        :mod:`informers.toolkit.runtime.predicates`); plain callables filter objects.
    :param map_func: object → requests (default: the object's own request;
        :func:`~informers.toolkit.runtime.enqueue_owner` for its owner). An update
        enqueues the union of what the old and the new object map to.
    :param resync_period: the handler's resync period (default: the
        informer's); a resync arrives as an update with the same object.
    :param name: for logs and errors (default ``"informer <informer name>"``).

    The source does not start the informer: start it (or its factory) before
    or after :meth:`start`; the controller waits for the handler to sync (up
    to its ``sync_timeout``), which needs the informer running. Its initial
    state is every object of the informer's initial list (or of its cache
    when the informer is running already), passed through predicates and map
    function into the sink.

    A predicate that raises is logged by the informer's listener with the
    object's key; that event causes no request. A map function that raises
    is logged at ERROR naming the controller (see :meth:`report_map_errors`),
    the map function, the event and the key, and counted in the
    controller's ``controller_runtime_map_errors_total``; that object's
    event causes no request (it is not retried: a map function is expected
    not to fail, fix it).

    Into a :class:`~informers.toolkit.workqueue.PriorityQueue` (a controller with
    ``priority_queue=True``) the requests of initial-list objects and of
    resyncs (an update whose resource version did not move) are added with
    :data:`~informers.toolkit.workqueue.PRIORITY_LOW`, those of every other add,
    update and delete with :data:`~informers.toolkit.workqueue.PRIORITY_HIGH`.
    """

    def __init__(
        self,
        informer: Any,
        *,
        predicates: Iterable[Predicate | Callable[[Any], bool]] = (),
        map_func: MapFunc | None = None,
        resync_period: float | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            informer,
            name=name or f"informer {getattr(informer, 'name', '') or type(informer).__name__}",
        )
        self._predicates = _predicates(predicates)
        self._map_func = _check_map_func(map_func)
        self._resync_period = resync_period
        # Set before start() (by the controller), read by add_handler().
        self._map_errors = MapErrorReporter(self.name, lambda: None)

    def report_map_errors(self, reporter: MapErrorReporter) -> None:
        """Name the controller in the log line of a ``map_func`` that raised,
        and count it with ``reporter.count``; a
        :class:`~informers.toolkit.runtime.Controller` calls it before
        :meth:`start`. Without it the line names the source and nothing counts."""
        self._map_errors = reporter

    def add_handler(self, sink: Sink) -> Any:
        handler = _EnqueueHandler(
            sink, self._predicates, self._map_func, self._map_errors, self.informer_removed
        )
        return self.informer.add_event_handler(handler, self._resync_period)


# --------------------------------------------------------------------------- threads


class _ThreadedSource:
    """The lifecycle shared by the sources that run their own thread.

    Subclasses implement ``_run(sink)`` (on the thread) and call
    ``_set_busy`` / ``_mark_synced``; the stop event is ``_stop_event``.
    """

    kind = "source"

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger = context_logger(log.logger, source=name)
        self._cond = threading.Condition()
        # Guarded by _cond. _started, _stopped, _synced and _ended only go
        # from False to True; _synced is set at the latest when the thread ends.
        self._started = False
        self._stopped = False
        self._synced = False
        self._busy = False  # pushing right now
        self._ended = False  # the thread returned (e.g. its channel closed)
        self._changes = 0  # +1 at every change of _busy (and of subclasses' idle state)
        self._thread: threading.Thread | None = None
        self._stop_event = threading.Event()

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name}>"

    def start(self, sink: Sink) -> None:
        with self._cond:
            if self._stopped:
                raise InformerStateError(f"{self._name}: source was stopped")
            if self._started:
                raise InformerStateError(f"{self._name}: source already started")
            self._started = True
            thread = threading.Thread(
                target=self._main, args=(sink,), name=f"{self.kind}-{self._name}", daemon=True
            )
            self._thread = thread
        thread.start()
        self._logger.info("%s: source started", self._name)

    def _main(self, sink: Sink) -> None:
        try:
            self._run(sink)
        finally:
            with self._cond:
                self._synced = True
                self._busy = False
                self._ended = True
                self._changes += 1
                self._cond.notify_all()

    def _run(self, sink: Sink) -> None:
        raise NotImplementedError

    def _set_busy(self, busy: bool) -> None:
        with self._cond:
            self._busy = busy
            self._changes += 1
            self._cond.notify_all()

    def _mark_synced(self) -> None:
        with self._cond:
            if not self._synced:
                self._synced = True
                self._cond.notify_all()
                self._logger.info("%s: initial state pushed", self._name)

    def has_synced(self) -> bool:
        with self._cond:
            return self._synced

    def wait_synced(self, timeout: float | None = None) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._synced or self._stopped, timeout)
            return self._synced

    def _observe(self) -> float:
        """What ``_idle_locked`` judges by, read outside the lock (another
        component's lock: the clock's, the channel's)."""
        return 0.0

    def _idle_locked(self, observed: float) -> bool:
        """With ``_cond`` held: nothing is being pushed."""
        return not self._busy or self._stopped

    def wait_idle(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            observed = self._observe()
            with self._cond:
                if self._idle_locked(observed):
                    return True
                seen = self._changes
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait_for(functools.partial(self._changed_since_locked, seen), remaining)

    def _changed_since_locked(self, seen: int) -> bool:
        return self._changes != seen

    def stop(self, timeout: float | None = None) -> None:
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            thread = self._thread
            self._changes += 1
            self._cond.notify_all()
        self._stop_event.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                self._logger.warning(
                    "%s: source thread still running after %s s", self._name, timeout
                )
        self._logger.info("%s: source stopped", self._name)


def _push_items(name: str, sink: Sink, items: Iterable[Any]) -> int:
    """Add each item (a Request or key) to the sink; log and skip the others."""
    pushed = 0
    for item in items:
        try:
            request = coerce_request(item)
        except (TypeError, ObjectKeyError) as error:
            log.error(
                "%s: skipping an item that is not a request: %s",
                name,
                error,
                extra={"source": name},
            )
            continue
        sink.add(request)
        pushed += 1
    return pushed


class PeriodicSource(_ThreadedSource):
    """Requests from a function called periodically, on its own thread.

    ``func()`` returns the requests to enqueue (Requests or key strings); it
    is called at once on start, then again ``every`` seconds (plus up to
    ``jitter * every`` at random) after the previous call *ended*. A call
    that raises is logged and the schedule goes on. The initial state is the
    first call's requests. Time comes from ``clock``; ``rng`` draws the
    jitter. The thread is named ``periodic-<name>``.
    """

    kind = "periodic"

    def __init__(
        self,
        func: Callable[[], Iterable[Request | str]],
        every: float,
        jitter: float = 0.0,
        *,
        name: str | None = None,
        clock: Clock = REAL_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"func must be callable, not {type(func).__name__}")
        for label, value in (("every", every), ("jitter", jitter)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{label} must be a number of seconds, not {type(value).__name__}")
            if math.isnan(value) or math.isinf(value) or value < 0:
                raise ValueError(f"{label} must be finite and >= 0, not {value!r}")
        if every <= 0:
            raise ValueError(f"every must be > 0, not {every!r}")
        super().__init__(name or getattr(func, "__name__", "") or "periodic")
        self._func = func
        self._every = float(every)
        self._jitter = float(jitter)
        self._clock = clock
        self._rng = rng
        # Guarded by _cond: when the next call is due (clock time; None until
        # the first call ended). A call that is due and has not started yet
        # keeps the source busy.
        self._next_due: float | None = None

    def _observe(self) -> float:
        return self._clock.now()

    def _idle_locked(self, observed: float) -> bool:
        now = observed
        if self._stopped or not self._started:
            return True
        if self._busy:
            return False
        return self._next_due is not None and now < self._next_due

    def _run(self, sink: Sink) -> None:
        while not self._stop_event.is_set():
            self._set_busy(True)
            try:
                _push_items(self._name, sink, self._func())
            except Exception:
                self._logger.exception(
                    "%s: periodic function raised; next call as scheduled", self._name
                )
            finally:
                delay = jittered(self._every, self._jitter, self._rng)
                due = self._clock.now() + delay
                with self._cond:
                    self._next_due = due
                self._set_busy(False)
                self._mark_synced()
            if self._clock.wait(self._stop_event, delay):
                return


class ChannelSource(_ThreadedSource):
    """Requests from a channel the user feeds, on its own thread.

    ``channel`` is a :class:`informers.util.channels.Channel` or a :class:`queue.Queue`
    / :class:`queue.SimpleQueue`; the source should be its only consumer.
    An item may be a :class:`~informers.toolkit.runtime.Request`, a key string, or an
    object (a raw dict): an object passes the ``predicates``' ``generic``
    hook and becomes its own request or, with ``map_func``, what that
    returns. Items that fit none of these are logged and skipped.

    The initial state is what the channel held when the source started.
    When the channel is closed and drained the source ends (it counts as
    synced and idle). The stop event is looked at every
    :data:`CHANNEL_STOP_CHECK` seconds while the channel is empty, so
    :meth:`stop` returns within about that long. The thread is named
    ``channel-<name>``.

    :meth:`wait_idle` waits while the channel holds items or one is being
    pushed; an item taken off the channel at that very instant may not be
    seen yet (a channel cannot be read and counted in one step), so after a
    ``put`` wait for the item's effect, not for idleness.
    """

    kind = "channel"

    def __init__(
        self,
        channel: Any,
        *,
        predicates: Iterable[Predicate | Callable[[Any], bool]] = (),
        map_func: MapFunc | None = None,
        name: str | None = None,
    ) -> None:
        if not callable(getattr(channel, "get", None)):
            raise TypeError(f"channel must have get(timeout=...), {type(channel).__name__} has not")
        super().__init__(name or f"channel-{id(channel):x}")
        self._channel = channel
        self._predicates = _predicates(predicates)
        self._map_func = _check_map_func(map_func)

    def _observe(self) -> float:
        return float(self._initial_count())

    def _idle_locked(self, observed: float) -> bool:
        if self._stopped or not self._started:
            return True
        return not self._busy and (observed == 0 or self._ended)

    def _initial_count(self) -> int:
        try:
            return len(self._channel)
        except TypeError:
            qsize = getattr(self._channel, "qsize", None)
            return int(qsize()) if callable(qsize) else 0

    def _requests(self, item: Any) -> Sequence[Request]:
        if isinstance(item, Request | str):
            return [coerce_request(item)]
        if not all(p.generic(item) for p in self._predicates):
            return []
        return _mapped(self._map_func, item)

    def _run(self, sink: Sink) -> None:
        initial = self._initial_count()
        taken = 0
        if initial == 0:
            self._mark_synced()
        while not self._stop_event.is_set():
            try:
                item = self._channel.get(timeout=CHANNEL_STOP_CHECK)
            except (ChannelEmptyError, _stdlib_queue.Empty):
                continue
            except ChannelClosedError:
                self._logger.info("%s: channel closed and drained; source ends", self._name)
                return
            self._set_busy(True)
            try:
                for request in self._requests(item):
                    sink.add(request)
            except (TypeError, ObjectKeyError) as error:
                self._logger.error("%s: skipping a channel item: %s", self._name, error)
            except Exception:
                self._logger.exception(
                    "%s: skipping a channel item: map or predicate raised", self._name
                )
            finally:
                self._set_busy(False)
            taken += 1
            if taken == initial:
                self._mark_synced()
