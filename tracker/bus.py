"""An in-process event bus over blinker, with buffered subscriptions, and a
component base class that consumes one subscription on its own thread.

Events are small typed objects with an ``event_type`` string (see
:class:`Event`); the bus keeps one blinker signal per event type, plus one for
subscribers that want every event.

* :meth:`EventBus.subscribe` gives a named :class:`Subscription`: a bounded
  buffer fed by the bus. The publisher never waits for a subscriber: when a
  subscription's buffer is full the event is **dropped for that subscriber
  only**, counted in :attr:`Subscription.dropped`, logged, and reported to the
  subscription's ``on_drop`` callback.
* Events published before :meth:`EventBus.start` are kept by the bus, in
  order, and delivered to the subscriptions that exist when it starts.
* :class:`Component` runs a dispatch loop over its subscription on a named
  thread, calls :meth:`Component.handle_event` for each event, logs and
  survives handler exceptions, and offers :meth:`Component.wait_idle` as a
  deterministic point where every delivered event has been handled.

Thread-safety: every method may be called from any thread. No subscriber code
(``on_drop`` callbacks, handlers) runs while a bus, subscription or component
lock is held; blinker sends over a snapshot of the connected receivers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

import blinker

from informers.errors import (
    ChannelClosedError,
    ChannelEmptyError,
    ChannelFullError,
    InformerStateError,
)
from informers.util.channels import Channel
from tracker.errors import (
    DuplicateSubscriptionError,
)

__all__ = ["Component", "Event", "EventBus", "Subscription"]

_logger = logging.getLogger(__name__)

#: Signature of a drop callback: ``on_drop(subscription, event)``.
DropCallback = Callable[["Subscription", "Event"], object]


@runtime_checkable
class Event(Protocol):
    """What the bus carries: any object with an ``event_type`` string.

    A frozen dataclass with a ``ClassVar`` is the usual shape::

        @dataclasses.dataclass(frozen=True)
        class Hello:
            event_type: ClassVar[str] = "hello"
            who: str
    """

    @property
    def event_type(self) -> str:
        """The routing key subscriptions select on, like ``"index.synchronized"``."""
        ...


class Subscription:
    """A named, bounded buffer of the events an :class:`EventBus` routes to it.

    Made by :meth:`EventBus.subscribe`, not directly. Consumers call
    :meth:`get` (or iterate) and, when they want :meth:`wait_idle` to mean
    something, :meth:`task_done` after handling each event (as with
    :class:`queue.Queue`); :class:`Component` does both.

    What blocks: :meth:`get` and iteration on an empty buffer, and
    :meth:`wait_idle` until every accepted event was marked done. Delivery by
    the bus never blocks: a full buffer drops the event for this subscription.
    """

    def __init__(
        self,
        bus: EventBus,
        name: str,
        buffer_size: int,
        event_types: frozenset[str],
        on_drop: DropCallback | None,
    ) -> None:
        self._bus = bus
        self._name = name
        self._buffer_size = buffer_size
        self._event_types = event_types
        self._on_drop = on_drop
        # The buffer is a bounded Channel (its own lock). _lock guards the
        # counters and _closed only, and is never held while calling the
        # channel. Invariants: _unfinished >= len(_channel) (accepted events
        # not yet marked done); once _closed, nothing is accepted and the
        # channel is closed and empty.
        self._channel: Channel[Event] = Channel(buffer_size)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._closed = False
        self._accepted = 0
        self._dropped = 0
        self._unfinished = 0

    @property
    def name(self) -> str:
        """The subscription's name, unique on its bus while it is open."""
        return self._name

    @property
    def buffer_size(self) -> int:
        """How many events may wait in the buffer."""
        return self._buffer_size

    @property
    def event_types(self) -> frozenset[str]:
        """The event types routed here; empty means every event."""
        return self._event_types

    @property
    def accepted(self) -> int:
        """How many events were put into the buffer since it was made."""
        with self._lock:
            return self._accepted

    @property
    def dropped(self) -> int:
        """How many events were dropped because the buffer was full."""
        with self._lock:
            return self._dropped

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        with self._lock:
            return self._closed

    def __len__(self) -> int:
        """How many events wait in the buffer now."""
        return len(self._channel)

    def __repr__(self) -> str:
        waiting = len(self._channel)
        with self._lock:
            return (
                f"<Subscription {self._name!r} {waiting}/{self._buffer_size}"
                f" dropped={self._dropped}{' closed' if self._closed else ''}>"
            )

    def get(self, timeout: float | None = None) -> Event:
        """Remove and return the oldest buffered event, waiting for one.

        Raises :class:`~informers.errors.ChannelEmptyError` after ``timeout``
        seconds without an event and :class:`~informers.errors.ChannelClosedError`
        once the subscription is closed.
        """
        try:
            return self._channel.get(timeout)
        except ChannelEmptyError:
            raise ChannelEmptyError(f"no event for {self._name!r} after {timeout} s") from None
        except ChannelClosedError:
            raise ChannelClosedError(f"subscription {self._name!r} is closed") from None

    def __iter__(self) -> Iterator[Event]:
        """Yield events as they arrive until the subscription is closed."""
        while True:
            try:
                yield self.get()
            except ChannelClosedError:
                return

    def task_done(self) -> None:
        """Mark one event obtained from :meth:`get` as handled (a no-op once
        the subscription is closed)."""
        with self._lock:
            if self._closed:
                return
            if self._unfinished <= 0:
                raise ValueError("task_done() called more times than events were accepted")
            self._unfinished -= 1
            if self._unfinished == 0:
                self._idle.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every accepted event was marked done (or the subscription
        closed); return whether that happened within ``timeout`` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._unfinished == 0, timeout)

    def close(self) -> None:
        """Disconnect from the bus and discard what is buffered; idempotent.

        Wakes every waiter: :meth:`get` raises
        :class:`~informers.errors.ChannelClosedError`, :meth:`wait_idle` returns.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._unfinished = 0
            self._idle.notify_all()
        discarded = self._channel.close(discard=True)
        self._bus._disconnect(self)
        if discarded:
            _logger.debug(
                "subscription %r closed, %d buffered events discarded", self._name, discarded
            )

    def _deliver(self, event: Event) -> None:
        """Called by the bus, in the publisher's thread: buffer or drop."""
        with self._lock:
            if self._closed:
                return
            # Counted before the put, so a consumer's task_done() for this
            # event can never run ahead of it.
            self._accepted += 1
            self._unfinished += 1
        try:
            self._channel.put(event, timeout=0)
            return
        except ChannelClosedError:
            full = False
        except ChannelFullError:
            full = True
        with self._lock:
            self._accepted -= 1
            self._unfinished = max(0, self._unfinished - 1)
            if self._unfinished == 0:
                self._idle.notify_all()
            if not full:
                return
            self._dropped += 1
            dropped = self._dropped
        if dropped == 1 or dropped % 100 == 0:
            _logger.warning(
                "subscription %r is full (%d); dropped %s events so far",
                self._name,
                self._buffer_size,
                dropped,
            )
        else:
            _logger.debug("subscription %r dropped a %s event", self._name, event.event_type)
        if self._on_drop is not None:
            try:
                self._on_drop(self, event)
            except Exception:
                _logger.exception("on_drop callback of subscription %r failed", self._name)

    def _receive(self, sender: object, **kwargs: Any) -> None:
        """The blinker receiver."""
        self._deliver(kwargs["event"])


class EventBus:
    """Publish/subscribe for :class:`Event` objects, over blinker signals.

    :meth:`publish` routes an event to every open subscription for its type
    (and to those that take every type). Before :meth:`start` the bus keeps
    published events in order (unbounded) and delivers them on start.
    Publishing never blocks on subscribers; it returns once every subscription
    has buffered or dropped the event.
    """

    def __init__(self) -> None:
        # _lock guards _started, _flushing, _pending, _subscriptions and _signals,
        # and is held while receivers are connected or disconnected. Never held
        # during a send. _flushing: one start() is delivering the backlog.
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._started = False
        self._flushing = False
        self._pending: list[Event] = []
        self._subscriptions: dict[str, Subscription] = {}
        self._signals: dict[str, blinker.NamedSignal] = {}
        self._every_event = blinker.NamedSignal("*")

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has been called."""
        with self._lock:
            return self._started

    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """A snapshot of the open subscriptions."""
        with self._lock:
            return tuple(self._subscriptions.values())

    def subscribe(
        self,
        name: str,
        buffer_size: int,
        *event_types: str,
        on_drop: DropCallback | None = None,
    ) -> Subscription:
        """Open a subscription called ``name`` for ``event_types`` (none: every type).

        ``subscribe("sink", 10, "a", "b")``. ``buffer_size`` (an int, at least
        1) bounds its buffer; ``on_drop(subscription, event)`` is called, in the
        publisher's thread, for each event dropped because the buffer was full
        (its exceptions are logged). Raises
        :class:`~tracker.errors.DuplicateSubscriptionError` when an open
        subscription has that name already, :class:`TypeError` when
        ``buffer_size`` is not an int and :class:`ValueError` for an empty name
        or event type or a ``buffer_size`` below 1.
        """
        if isinstance(buffer_size, bool) or not isinstance(buffer_size, int):
            raise TypeError(f"buffer_size must be an int, not {buffer_size!r}")
        if not isinstance(name, str) or not name:
            raise ValueError("a subscription needs a non-empty name")
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be at least 1, not {buffer_size}")
        for event_type in event_types:
            if not isinstance(event_type, str) or not event_type:
                raise ValueError(f"event types are non-empty strings, not {event_type!r}")
        subscription = Subscription(self, name, buffer_size, frozenset(event_types), on_drop)
        with self._lock:
            if name in self._subscriptions:
                raise DuplicateSubscriptionError(name)
            self._subscriptions[name] = subscription
            for signal in self._signals_for_locked(subscription, create=True):
                signal.connect(subscription._receive, weak=False)
        _logger.debug("subscribed %r to %s", name, sorted(event_types) or "every event")
        return subscription

    def publish(self, event: Event) -> None:
        """Send ``event`` to its subscribers (or keep it until :meth:`start`)."""
        event_type = getattr(event, "event_type", None)
        if not isinstance(event_type, str) or not event_type:
            raise TypeError(f"{type(event).__name__} has no event_type string; not an Event")
        with self._lock:
            if not self._started:
                self._pending.append(event)
                return
        self._send(event)

    def start(self) -> None:
        """Deliver the events published so far, in order, then deliver each new
        event as it is published. Idempotent; when several threads call it at
        once, one delivers the backlog and the others wait until it is done."""
        with self._lock:
            while self._flushing:
                self._flushed.wait()
            if self._started:
                return
            self._flushing = True
        try:
            while True:
                with self._lock:
                    batch, self._pending = self._pending, []
                    if not batch:
                        # Nothing left: from now on publish() sends directly.
                        # Events published while the batches went out were
                        # appended to _pending, so order is kept.
                        self._started = True
                        _logger.debug("event bus started")
                        return
                for event in batch:
                    self._send(event)
        finally:
            with self._lock:
                self._flushing = False
                self._flushed.notify_all()

    def _send(self, event: Event) -> None:
        with self._lock:
            typed = self._signals.get(event.event_type)
        if typed is not None:
            typed.send(self, event=event)
        self._every_event.send(self, event=event)

    def _signals_for_locked(
        self, subscription: Subscription, *, create: bool
    ) -> list[blinker.NamedSignal]:
        if not subscription.event_types:
            return [self._every_event]
        signals = []
        for event_type in sorted(subscription.event_types):
            signal = self._signals.get(event_type)
            if signal is None and create:
                signal = self._signals[event_type] = blinker.NamedSignal(event_type)
            if signal is not None:
                signals.append(signal)
        return signals

    def _disconnect(self, subscription: Subscription) -> None:
        with self._lock:
            if self._subscriptions.get(subscription.name) is subscription:
                del self._subscriptions[subscription.name]
            for signal in self._signals_for_locked(subscription, create=False):
                signal.disconnect(subscription._receive)


class Component:
    """A named consumer of one bus subscription, running on its own thread.

    Subclasses override :meth:`handle_event`. The subscription is opened at
    construction, so events published from then on are buffered (up to
    ``buffer_size``) until :meth:`start` runs the loop.

    Lifecycle: :meth:`start` once (a second call raises
    :class:`~informers.errors.InformerStateError`); :meth:`stop` any number of
    times, from any thread, the handler included; :meth:`join` to wait for the
    thread. Stopping closes the subscription (events still buffered are
    discarded) and a stopped component cannot start again.

    The loop logs an exception raised by :meth:`handle_event` (with the
    component name and event type) and goes on with the next event.

    The component has one lock, ``_lock``; subclasses may guard their own
    state with it too, as long as they call no other code while holding it.
    """

    #: How often the loop looks at an external ``stop`` event given to
    #: :meth:`start`; :meth:`stop` itself wakes the loop at once.
    stop_poll_interval: float = 0.05

    def __init__(
        self,
        bus: EventBus,
        name: str,
        buffer_size: int,
        *event_types: str,
        on_drop: DropCallback | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self._bus = bus
        self._name = name
        self._logger = logger if logger is not None else _logger
        self._subscription = bus.subscribe(name, buffer_size, *event_types, on_drop=on_drop)
        # _lock guards _thread and _stopped. _stopped goes False -> True once.
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def name(self) -> str:
        """The component's name (also its subscription's name)."""
        return self._name

    @property
    def bus(self) -> EventBus:
        """The bus the component subscribes to."""
        return self._bus

    @property
    def subscription(self) -> Subscription:
        """The component's subscription (see :attr:`Subscription.dropped`)."""
        return self._subscription

    @property
    def running(self) -> bool:
        """Whether the dispatch thread is alive."""
        with self._lock:
            thread = self._thread
        return thread is not None and thread.is_alive()

    def handle_event(self, event: Event) -> None:
        """Handle one event; called on the component's thread. Override it."""
        raise NotImplementedError

    def start(self, stop: threading.Event | None = None) -> None:
        """Start the dispatch loop on a thread named ``component-<name>``.

        The loop runs until :meth:`stop` is called or ``stop`` is set (the
        latter is noticed within :attr:`stop_poll_interval` seconds). Does not
        block.
        """
        with self._lock:
            if self._thread is not None or self._stopped:
                raise InformerStateError(f"component {self._name!r} was started or stopped already")
            self._thread = threading.Thread(
                target=self._run, args=(stop,), name=f"component-{self._name}", daemon=True
            )
            thread = self._thread
        thread.start()
        self._logger.info("component %r started", self._name)

    def stop(self) -> None:
        """Stop the loop (after the event being handled, if any); idempotent.
        Does not wait: use :meth:`join`."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._subscription.close()
        self._logger.info("component %r stopped", self._name)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the dispatch thread to end; return whether it has (also
        ``True`` when it never started)."""
        with self._lock:
            thread = self._thread
        if thread is None or thread is threading.current_thread():
            return thread is None
        thread.join(timeout)
        return not thread.is_alive()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every event delivered so far has been handled; return
        whether that happened within ``timeout`` seconds. Events the bus still
        holds because it has not started are not "delivered"."""
        return self._subscription.wait_idle(timeout)

    def _run(self, stop: threading.Event | None) -> None:
        poll = None if stop is None else self.stop_poll_interval
        subscription = self._subscription
        try:
            while stop is None or not stop.is_set():
                try:
                    event = subscription.get(timeout=poll)
                except ChannelEmptyError:
                    continue
                except ChannelClosedError:
                    break
                try:
                    self.handle_event(event)
                except Exception:
                    self._logger.exception(
                        "component %r failed to handle a %r event; going on",
                        self._name,
                        getattr(event, "event_type", "?"),
                    )
                finally:
                    subscription.task_done()
        finally:
            self.stop()
