"""tracker.bus: the event bus, its subscriptions and the component base."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import deque
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from informers.errors import ChannelClosedError, ChannelEmptyError, InformerStateError
from tests.helpers import drain
from tracker.bus import Component, Event, EventBus, Subscription
from tracker.errors import (
    DuplicateSubscriptionError,
)

JOIN = 5.0


@dataclasses.dataclass(frozen=True)
class Ping:
    event_type: ClassVar[str] = "ping"
    n: int = 0


@dataclasses.dataclass(frozen=True)
class Pong:
    event_type: ClassVar[str] = "pong"
    n: int = 0


@dataclasses.dataclass(frozen=True)
class Tagged:
    """An event whose type is per instance."""

    event_type: str
    n: int = 0


class Recorder(Component):
    """Records what it handles; raises for events with n < 0; can block."""

    def __init__(self, bus: EventBus, name: str = "recorder", size: int = 10, *types: str) -> None:
        super().__init__(bus, name, size, *types)
        self.handled: list[Event] = []
        self.threads: set[str] = set()
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def handle_event(self, event: Event) -> None:
        self.threads.add(threading.current_thread().name)
        self.entered.set()
        self.gate.wait(JOIN)
        if getattr(event, "n", 0) < 0:
            raise RuntimeError("boom")
        self.handled.append(event)


@pytest.fixture
def bus() -> EventBus:
    b = EventBus()
    b.start()
    return b


def test_events_satisfy_the_event_protocol() -> None:
    assert isinstance(Ping(), Event)
    assert isinstance(Tagged("x"), Event)
    assert not isinstance(object(), Event)


def test_publish_routes_by_event_type(bus: EventBus) -> None:
    pings = bus.subscribe("pings", 10, "ping")
    pongs = bus.subscribe("pongs", 10, "pong")
    both = bus.subscribe("both", 10, "ping", "pong")
    bus.publish(Ping(1))
    bus.publish(Pong(2))
    bus.publish(Tagged("other"))
    assert drain(pings) == [Ping(1)]
    assert drain(pongs) == [Pong(2)]
    assert drain(both) == [Ping(1), Pong(2)]


def test_subscription_without_types_gets_every_event(bus: EventBus) -> None:
    everything = bus.subscribe("all", 10)
    assert everything.event_types == frozenset()
    bus.publish(Ping(1))
    bus.publish(Tagged("other"))
    assert drain(everything) == [Ping(1), Tagged("other")]


def test_events_published_before_start_are_delivered_on_start_in_order() -> None:
    bus = EventBus()
    early = bus.subscribe("early", 10, "ping")
    bus.publish(Ping(1))
    late = bus.subscribe("late", 10, "ping")  # subscribed before start: gets them too
    bus.publish(Ping(2))
    assert not bus.started
    assert len(early) == 0
    bus.start()
    bus.publish(Ping(3))
    assert drain(early) == [Ping(1), Ping(2), Ping(3)]
    assert drain(late) == [Ping(1), Ping(2), Ping(3)]


def test_start_is_idempotent() -> None:
    bus = EventBus()
    sub = bus.subscribe("s", 10)
    bus.publish(Ping(1))
    bus.start()
    bus.start()
    assert bus.started
    assert drain(sub) == [Ping(1)]


def test_concurrent_starts_deliver_the_backlog_once_in_order() -> None:
    bus = EventBus()
    sub = bus.subscribe("s", 1000, "ping")
    for n in range(200):
        bus.publish(Ping(n))
    starters = [threading.Thread(target=bus.start, name=f"test-starter-{i}") for i in range(3)]
    for thread in starters:
        thread.start()
    for thread in starters:
        thread.join(JOIN)
    assert bus.started
    assert drain(sub) == [Ping(n) for n in range(200)]


def test_full_buffer_drops_for_that_subscriber_only_and_counts(bus: EventBus) -> None:
    small = bus.subscribe("small", 2, "ping")
    large = bus.subscribe("large", 10, "ping")
    for n in range(5):
        bus.publish(Ping(n))
    assert small.dropped == 3
    assert small.accepted == 2
    assert drain(small) == [Ping(0), Ping(1)]  # the newest are dropped, the oldest kept
    assert large.dropped == 0
    assert len(drain(large)) == 5


def test_on_drop_callback_gets_subscription_and_event(bus: EventBus) -> None:
    drops: list[tuple[str, Event]] = []
    sub = bus.subscribe("s", 1, "ping", on_drop=lambda s, e: drops.append((s.name, e)))
    bus.publish(Ping(1))
    bus.publish(Ping(2))
    assert drops == [("s", Ping(2))]
    assert sub.dropped == 1


def test_failing_on_drop_callback_is_logged_and_publish_goes_on(
    bus: EventBus, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(sub: Subscription, event: Event) -> None:
        raise RuntimeError("callback bug")

    sub = bus.subscribe("s", 1, "ping", on_drop=explode)
    other = bus.subscribe("other", 10, "ping")
    with caplog.at_level(logging.WARNING, logger="tracker.bus"):
        bus.publish(Ping(1))
        bus.publish(Ping(2))
    assert sub.dropped == 1
    assert len(drain(other)) == 2
    assert "on_drop callback of subscription 's' failed" in caplog.text


def test_drop_is_logged_as_warning(bus: EventBus, caplog: pytest.LogCaptureFixture) -> None:
    bus.subscribe("s", 1, "ping")
    with caplog.at_level(logging.WARNING, logger="tracker.bus"):
        bus.publish(Ping(1))
        bus.publish(Ping(2))
    assert "subscription 's' is full" in caplog.text


def test_duplicate_subscription_name_is_rejected_until_closed(bus: EventBus) -> None:
    first = bus.subscribe("name", 1)
    with pytest.raises(DuplicateSubscriptionError, match="'name'"):
        bus.subscribe("name", 1)
    first.close()
    second = bus.subscribe("name", 1)
    assert bus.subscriptions == (second,)


@pytest.mark.parametrize(
    ("name", "size", "types"), [("", 1, ()), ("s", 0, ()), ("s", 1, ("",)), ("s", 1, (3,))]
)
def test_subscribe_validates_arguments(
    bus: EventBus, name: str, size: int, types: tuple[str, ...]
) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - several messages
        bus.subscribe(name, size, *types)


def test_publish_rejects_objects_without_event_type(bus: EventBus) -> None:
    with pytest.raises(TypeError, match="event_type"):
        bus.publish(object())  # type: ignore[arg-type]


def test_close_disconnects_discards_and_wakes(bus: EventBus) -> None:
    sub = bus.subscribe("s", 10, "ping")
    bus.publish(Ping(1))
    sub.close()
    sub.close()
    assert sub.closed
    bus.publish(Ping(2))
    assert len(sub) == 0
    assert sub.dropped == 0
    with pytest.raises(ChannelClosedError):
        sub.get(timeout=0)
    assert list(sub) == []
    assert sub.wait_idle(0)
    assert bus.subscriptions == ()


def test_close_disconnects_the_blinker_receivers(bus: EventBus) -> None:
    typed = bus.subscribe("typed", 1, "ping", "pong")
    every = bus.subscribe("every", 1)
    assert bus._signals["ping"].receivers
    assert bus._every_event.receivers
    typed.close()
    every.close()
    assert not bus._signals["ping"].receivers
    assert not bus._signals["pong"].receivers
    assert not bus._every_event.receivers


def test_on_drop_callback_may_use_the_bus_and_subscription(bus: EventBus) -> None:
    """Callbacks run with no lock held: re-entering the bus must not deadlock."""
    seen: list[int] = []

    def on_drop(sub: Subscription, event: Event) -> None:
        seen.append(sub.dropped)
        bus.publish(Pong(len(sub)))
        bus.subscribe(f"made-in-callback-{len(seen)}", 1)

    bus.subscribe("s", 1, "ping", on_drop=on_drop)
    pongs = bus.subscribe("pongs", 10, "pong")
    bus.publish(Ping(1))
    bus.publish(Ping(2))
    assert seen == [1]
    assert drain(pongs) == [Pong(1)]


def test_wait_idle_counts_task_done(bus: EventBus) -> None:
    sub = bus.subscribe("s", 10, "ping")
    assert sub.wait_idle(0)
    bus.publish(Ping(1))
    assert not sub.wait_idle(0)
    sub.get(timeout=0)
    assert not sub.wait_idle(0)
    sub.task_done()
    assert sub.wait_idle(0)
    with pytest.raises(ValueError, match="task_done"):
        sub.task_done()


def test_repr_shows_counts(bus: EventBus) -> None:
    sub = bus.subscribe("s", 1, "ping")
    bus.publish(Ping(1))
    bus.publish(Ping(2))
    assert repr(sub) == "<Subscription 's' 1/1 dropped=1>"


# --- Component -------------------------------------------------------------


def test_component_handles_events_on_its_named_thread(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10, "ping")
    rec.start()
    try:
        bus.publish(Ping(1))
        bus.publish(Pong(9))  # not subscribed
        bus.publish(Ping(2))
        assert rec.wait_idle(JOIN)
        assert rec.handled == [Ping(1), Ping(2)]
        assert rec.threads == {"component-rec"}
        assert rec.running
    finally:
        rec.stop()
        assert rec.join(JOIN)
    assert not rec.running


def test_events_published_before_component_start_are_handled_on_start(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10, "ping")
    bus.publish(Ping(1))
    bus.publish(Ping(2))
    rec.start()
    assert rec.wait_idle(JOIN)
    rec.stop()
    assert rec.join(JOIN)
    assert rec.handled == [Ping(1), Ping(2)]


def test_handler_exception_is_logged_and_loop_goes_on(
    bus: EventBus, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Recorder(bus, "rec", 10, "ping")
    rec.start()
    with caplog.at_level(logging.ERROR, logger="tracker.bus"):
        bus.publish(Ping(-1))
        bus.publish(Ping(2))
        assert rec.wait_idle(JOIN)
    rec.stop()
    assert rec.join(JOIN)
    assert rec.handled == [Ping(2)]
    assert "component 'rec' failed to handle a 'ping' event" in caplog.text


def test_stop_is_idempotent_and_closes_the_subscription(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10)
    rec.start()
    rec.stop()
    rec.stop()
    assert rec.join(JOIN)
    assert rec.subscription.closed
    bus.publish(Ping(1))  # goes nowhere, no drop counted
    assert rec.subscription.dropped == 0


def test_start_twice_or_after_stop_raises(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10)
    rec.start()
    with pytest.raises(InformerStateError):
        rec.start()
    rec.stop()
    assert rec.join(JOIN)
    stopped = Recorder(bus, "never", 10)
    stopped.stop()
    with pytest.raises(InformerStateError):
        stopped.start()
    assert stopped.join(0)  # never started: nothing to wait for


def test_external_stop_event_ends_the_loop(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10, "ping")
    stop = threading.Event()
    rec.start(stop)
    bus.publish(Ping(1))
    assert rec.wait_idle(JOIN)
    stop.set()
    assert rec.join(JOIN)
    assert rec.subscription.closed
    assert rec.handled == [Ping(1)]


def test_stop_from_inside_the_handler(bus: EventBus) -> None:
    class StopsItself(Component):
        def handle_event(self, event: Event) -> None:
            self.stop()
            assert not self.join(0)  # joining its own thread returns at once

    comp = StopsItself(bus, "self-stopper", 10)
    comp.start()
    bus.publish(Ping(1))
    assert comp.join(JOIN)


def test_wait_idle_times_out_while_a_handler_runs(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 10, "ping")
    rec.gate.clear()
    rec.start()
    bus.publish(Ping(1))
    assert rec.entered.wait(JOIN)
    assert not rec.wait_idle(0.01)
    rec.gate.set()
    assert rec.wait_idle(JOIN)
    rec.stop()
    assert rec.join(JOIN)


def test_slow_component_drops_beyond_its_buffer_and_never_blocks_publisher(bus: EventBus) -> None:
    rec = Recorder(bus, "rec", 2, "ping")
    rec.gate.clear()
    rec.start()
    bus.publish(Ping(0))
    assert rec.entered.wait(JOIN)  # the handler holds Ping(0); the buffer is empty
    for n in range(1, 6):
        bus.publish(Ping(n))
    assert rec.subscription.dropped == 3
    rec.gate.set()
    assert rec.wait_idle(JOIN)
    rec.stop()
    assert rec.join(JOIN)
    assert rec.handled == [Ping(0), Ping(1), Ping(2)]


def test_base_handle_event_is_abstract(bus: EventBus) -> None:
    with pytest.raises(NotImplementedError):
        Component(bus, "base", 1).handle_event(Ping())


# --- properties --------------------------------------------------------------

TYPES = ("a", "b", "c")


class BusMachine(RuleBasedStateMachine):
    """The bus against a model: per subscription a deque, a size and a drop count."""

    @initialize()
    def setup(self) -> None:
        self.bus = EventBus()
        self.started = False
        self.pending: list[Tagged] = []
        self.subs: dict[str, Subscription] = {}
        self.model: dict[str, tuple[frozenset[str], int, deque[Tagged]]] = {}
        self.drops: dict[str, int] = {}
        self.counter = 0

    def _route(self, event: Tagged) -> None:
        for name, (types, size, buf) in self.model.items():
            if types and event.event_type not in types:
                continue
            if len(buf) < size:
                buf.append(event)
            else:
                self.drops[name] += 1

    @rule(
        name=st.sampled_from(["s1", "s2", "s3"]),
        size=st.integers(1, 3),
        types=st.frozensets(st.sampled_from(TYPES), max_size=2),
    )
    def subscribe(self, name: str, size: int, types: frozenset[str]) -> None:
        if name in self.subs:
            with pytest.raises(DuplicateSubscriptionError):
                self.bus.subscribe(name, size, *types)
            return
        self.subs[name] = self.bus.subscribe(name, size, *sorted(types))
        self.model[name] = (types, size, deque())
        self.drops[name] = 0

    @rule(event_type=st.sampled_from(TYPES))
    def publish(self, event_type: str) -> None:
        self.counter += 1
        event = Tagged(event_type, self.counter)
        self.bus.publish(event)
        if self.started:
            self._route(event)
        else:
            self.pending.append(event)

    @rule()
    def start(self) -> None:
        self.bus.start()
        if not self.started:
            self.started = True
            for event in self.pending:
                self._route(event)
            self.pending.clear()

    @precondition(lambda self: self.subs)
    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.subs)))
        buf = self.model[name][2]
        if buf:
            assert self.subs[name].get(timeout=0) == buf.popleft()
        else:
            with pytest.raises(ChannelEmptyError):
                self.subs[name].get(timeout=0)

    @precondition(lambda self: self.subs)
    @rule(data=st.data())
    def close(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.subs)))
        self.subs.pop(name).close()
        del self.model[name]
        del self.drops[name]

    @invariant()
    def buffers_and_drops_match(self) -> None:
        for name, sub in self.subs.items():
            assert len(sub) == len(self.model[name][2])
            assert sub.dropped == self.drops[name]

    def teardown(self) -> None:
        for sub in getattr(self, "subs", {}).values():
            sub.close()


TestBusMachine = BusMachine.TestCase


@given(
    per_publisher=st.lists(st.integers(0, 12), min_size=1, max_size=3),
    size=st.integers(1, 40),
    start_when=st.sampled_from(["before", "during", "after"]),
)
def test_concurrent_publishers_each_event_buffered_or_dropped_once_in_order(
    per_publisher: list[int], size: int, start_when: str
) -> None:
    bus = EventBus()
    sub = bus.subscribe("sink", size)
    if start_when == "before":
        bus.start()

    def publish(publisher: int, count: int) -> None:
        for seq in range(count):
            bus.publish(Tagged(f"p{publisher}", seq))

    threads = [
        threading.Thread(target=publish, args=(p, n), name=f"test-publisher-{p}")
        for p, n in enumerate(per_publisher)
    ]
    for thread in threads:
        thread.start()
    if start_when == "during":  # racing the publishers: per-publisher order must hold
        bus.start()
    for thread in threads:
        thread.join(JOIN)
    bus.start()
    got = drain(sub)
    total = sum(per_publisher)
    assert sub.accepted == len(got) == min(total, size)
    assert sub.dropped == total - len(got)
    assert len(set(got)) == len(got)
    for p in range(len(per_publisher)):
        seqs = [e.n for e in got if isinstance(e, Tagged) and e.event_type == f"p{p}"]
        assert seqs == sorted(seqs)
