"""tracker.index_sync: one named test per behaviour, and properties over random
interleavings of sync events from several threads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import InformerStateError
from tests.helpers import drain
from tracker.bus import Event, EventBus, Subscription
from tracker.errors import ResourceNotSyncedError, UnknownResourceTypeError
from tracker.index_sync import (
    IndexSynchronizationTracker,
    IndexSynchronizedEvent,
    ResourceSyncCompleteEvent,
)

JOIN = 5.0
KINDS = ("pods", "services", "ingresses")


def synced(name: str, count: int = 0) -> ResourceSyncCompleteEvent:
    return ResourceSyncCompleteEvent(resource_type_name=name, initial_count=count)


@pytest.fixture
def bus() -> EventBus:
    b = EventBus()
    b.start()
    return b


@pytest.fixture
def sink(bus: EventBus) -> Subscription:
    """Collects every IndexSynchronizedEvent."""
    return bus.subscribe("sink", 10, IndexSynchronizedEvent.event_type)


@pytest.fixture
def tracker(bus: EventBus) -> Iterator[IndexSynchronizationTracker]:
    t = IndexSynchronizationTracker(bus, KINDS)
    yield t
    t.stop()
    assert t.join(JOIN)


def run(tracker: IndexSynchronizationTracker, bus: EventBus, *events: Event) -> None:
    """Start the tracker if needed, publish, and wait until all is handled."""
    if not tracker.running:
        tracker.start()
    for event in events:
        bus.publish(event)
    assert tracker.wait_idle(JOIN)


def test_constants_and_event_types() -> None:
    assert IndexSynchronizationTracker.COMPONENT_NAME == "index-tracker"
    assert IndexSynchronizationTracker.EVENT_BUFFER_SIZE == 100
    assert ResourceSyncCompleteEvent.event_type == "resource.sync.complete"
    assert IndexSynchronizedEvent.event_type == "index.synchronized"
    assert synced("pods", 1).event_type == "resource.sync.complete"


def test_subscribes_to_the_bus_at_construction(bus: EventBus) -> None:
    t = IndexSynchronizationTracker(bus, KINDS)
    (sub,) = bus.subscriptions
    assert sub is t.subscription
    assert sub.name == "index-tracker"
    assert sub.buffer_size == 100
    assert sub.event_types == {"resource.sync.complete"}
    t.stop()


def test_fires_once_all_expected_types_synced(
    tracker: IndexSynchronizationTracker, bus: EventBus, sink: Subscription
) -> None:
    run(tracker, bus, synced("pods", 3), synced("services", 2))
    assert drain(sink) == []
    assert not tracker.all_synced()
    run(tracker, bus, synced("ingresses", 1))
    assert drain(sink) == [IndexSynchronizedEvent({"pods": 3, "services": 2, "ingresses": 1})]
    assert tracker.all_synced()
    assert tracker.fired


def test_fires_exactly_once_ever(
    tracker: IndexSynchronizationTracker, bus: EventBus, sink: Subscription
) -> None:
    run(tracker, bus, *(synced(k) for k in KINDS))
    run(tracker, bus, *(synced(k, 9) for k in KINDS))
    assert len(drain(sink)) == 1


def test_duplicate_event_is_ignored_and_first_count_kept(
    tracker: IndexSynchronizationTracker, bus: EventBus, sink: Subscription
) -> None:
    run(tracker, bus, synced("pods", 3), synced("pods", 7))
    assert tracker.get_resource_count("pods") == 3
    run(tracker, bus, synced("services", 1), synced("ingresses", 1))
    (event,) = drain(sink)
    assert isinstance(event, IndexSynchronizedEvent)
    assert event.resource_counts["pods"] == 3


def test_unknown_name_is_logged_as_warning_and_ignored(
    tracker: IndexSynchronizationTracker, bus: EventBus, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tracker.index_sync"):
        run(tracker, bus, synced("secrets", 5))
    assert "unexpected resource type 'secrets'" in caplog.text
    assert not tracker.is_resource_synced("secrets")
    assert tracker.get_all_resource_counts() == {}


def test_duplicate_names_at_construction_collapse(bus: EventBus, sink: Subscription) -> None:
    t = IndexSynchronizationTracker(bus, ["pods", "pods", "services"])
    assert t.resource_names == ("pods", "services")
    try:
        run(t, bus, synced("pods", 1), synced("services", 2))
        assert drain(sink) == [IndexSynchronizedEvent({"pods": 1, "services": 2})]
    finally:
        t.stop()
        assert t.join(JOIN)


def test_published_counts_are_a_read_only_copy(
    tracker: IndexSynchronizationTracker, bus: EventBus, sink: Subscription
) -> None:
    run(tracker, bus, *(synced(k, 1) for k in KINDS))
    (event,) = drain(sink)
    assert isinstance(event, IndexSynchronizedEvent)
    with pytest.raises(TypeError):
        event.resource_counts["pods"] = 99  # type: ignore[index]
    counts = {"a": 1}
    made = IndexSynchronizedEvent(counts)
    counts["a"] = 2
    assert made.resource_counts == {"a": 1}


def test_publishes_without_holding_its_lock(bus: EventBus) -> None:
    """Subscriber code run by the publish (here an on_drop callback) may query
    the tracker: a lock held across the publish would deadlock this test."""
    t = IndexSynchronizationTracker(bus, ["pods"])
    seen: list[dict[str, int]] = []
    full = bus.subscribe(
        "full",
        1,
        "index.synchronized",
        on_drop=lambda s, e: seen.append(t.get_all_resource_counts()),
    )
    bus.publish(IndexSynchronizedEvent({}))  # fills the one-slot buffer
    t.handle_event(synced("pods", 2))
    assert seen == [{"pods": 2}]
    full.close()
    t.stop()


def test_get_all_resource_counts_returns_a_copy(
    tracker: IndexSynchronizationTracker, bus: EventBus
) -> None:
    run(tracker, bus, synced("pods", 4))
    counts = tracker.get_all_resource_counts()
    assert counts == {"pods": 4}
    counts["pods"] = 0
    counts["services"] = 1
    assert tracker.get_all_resource_counts() == {"pods": 4}
    assert not tracker.is_resource_synced("services")


def test_is_resource_synced(tracker: IndexSynchronizationTracker, bus: EventBus) -> None:
    assert not tracker.is_resource_synced("pods")
    run(tracker, bus, synced("pods"))
    assert tracker.is_resource_synced("pods")
    assert not tracker.is_resource_synced("services")
    assert not tracker.is_resource_synced("unknown")


def test_get_resource_count_for_unknown_name_raises(tracker: IndexSynchronizationTracker) -> None:
    with pytest.raises(UnknownResourceTypeError, match="'secrets' is not tracked"):
        tracker.get_resource_count("secrets")


def test_get_resource_count_before_sync_raises(tracker: IndexSynchronizationTracker) -> None:
    with pytest.raises(ResourceNotSyncedError, match="'pods' has not synced"):
        tracker.get_resource_count("pods")
    with pytest.raises(LookupError):
        tracker.get_resource_count("pods")


def test_empty_names_count_as_all_synced_and_publish_once_on_start(
    bus: EventBus, sink: Subscription
) -> None:
    t = IndexSynchronizationTracker(bus, [])
    assert t.all_synced()
    assert t.get_all_resource_counts() == {}
    assert not t.fired
    assert drain(sink) == []  # nothing before start
    t.start()
    try:
        assert drain(sink) == [IndexSynchronizedEvent({})]
        run(t, bus, synced("pods"))  # unknown: ignored, nothing more published
        assert drain(sink) == []
    finally:
        t.stop()
        assert t.join(JOIN)


def test_events_published_before_tracker_start_are_handled_on_start(
    tracker: IndexSynchronizationTracker, bus: EventBus, sink: Subscription
) -> None:
    for kind in KINDS:
        bus.publish(synced(kind, 1))
    assert not tracker.is_resource_synced("pods")
    assert len(tracker.subscription) == 3
    run(tracker, bus)
    assert tracker.all_synced()
    assert len(drain(sink)) == 1


def test_events_published_before_bus_start_are_handled_on_bus_start() -> None:
    bus = EventBus()
    t = IndexSynchronizationTracker(bus, KINDS)
    sink = bus.subscribe("sink", 10, IndexSynchronizedEvent.event_type)
    for kind in KINDS:
        bus.publish(synced(kind, 2))
    t.start()
    assert t.wait_idle(JOIN)
    assert not t.all_synced()
    bus.start()
    assert t.wait_idle(JOIN)
    t.stop()
    assert t.join(JOIN)
    assert drain(sink) == [IndexSynchronizedEvent(dict.fromkeys(KINDS, 2))]


def test_full_buffer_drops_are_counted(bus: EventBus, caplog: pytest.LogCaptureFixture) -> None:
    drops: list[Event] = []
    t = IndexSynchronizationTracker(bus, ["pods"], on_drop=lambda s, e: drops.append(e))
    with caplog.at_level(logging.ERROR):  # the drop warning is expected here
        for n in range(IndexSynchronizationTracker.EVENT_BUFFER_SIZE + 5):
            bus.publish(synced("other", n))
    assert t.subscription.dropped == 5
    assert len(drops) == 5
    t.stop()


def test_handler_exception_is_logged_and_the_loop_goes_on(
    tracker: IndexSynchronizationTracker,
    bus: EventBus,
    sink: Subscription,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = tracker._fire_if_complete
    calls = iter([RuntimeError("boom")])

    def flaky() -> None:
        err = next(calls, None)
        if err is not None:
            raise err
        original()

    monkeypatch.setattr(tracker, "_fire_if_complete", flaky)
    with caplog.at_level(logging.ERROR, logger="tracker.index_sync"):
        run(tracker, bus, synced("pods"), synced("services"), synced("ingresses"))
    assert "failed to handle a 'resource.sync.complete' event" in caplog.text
    assert tracker.all_synced()
    assert len(drain(sink)) == 1


def test_other_event_types_passed_to_handle_event_are_ignored(
    tracker: IndexSynchronizationTracker,
) -> None:
    tracker.handle_event(IndexSynchronizedEvent({"pods": 1}))
    assert tracker.get_all_resource_counts() == {}


def test_given_logger_is_used(bus: EventBus, caplog: pytest.LogCaptureFixture) -> None:
    t = IndexSynchronizationTracker(bus, ["pods"], logger=logging.getLogger("my.controller"))
    with caplog.at_level(logging.INFO, logger="my.controller"):
        t.handle_event(synced("pods", 1))
    assert any(r.name == "my.controller" and "'pods' synced" in r.message for r in caplog.records)
    t.stop()


def test_stop_is_idempotent_and_start_twice_raises(tracker: IndexSynchronizationTracker) -> None:
    tracker.start()
    with pytest.raises(InformerStateError):
        tracker.start()
    tracker.stop()
    tracker.stop()
    assert tracker.join(JOIN)


def test_external_stop_event(bus: EventBus) -> None:
    t = IndexSynchronizationTracker(bus, KINDS)
    stop = threading.Event()
    t.start(stop)
    stop.set()
    assert t.join(JOIN)


@pytest.mark.parametrize(
    ("name", "count", "error"),
    [("", 1, ValueError), ("pods", -1, ValueError), ("pods", True, TypeError)],
)
def test_sync_event_validates_its_fields(name: str, count: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        ResourceSyncCompleteEvent(name, count)


def test_bad_resource_name_at_construction_raises(bus: EventBus) -> None:
    with pytest.raises(ValueError, match="non-empty strings"):
        IndexSynchronizationTracker(bus, ["pods", ""])


# --- properties --------------------------------------------------------------

NAMES = ("a", "b", "c", "d")

event_lists = st.lists(
    st.tuples(st.sampled_from((*NAMES, "x", "y")), st.integers(0, 5)), max_size=30
)


def _expected_outcome(
    expected: list[str], per_thread: list[list[tuple[str, int]]]
) -> dict[str, int] | None:
    """All of a name's events come from one thread, so 'first' is well defined."""
    firsts: dict[str, int] = {}
    for events in per_thread:
        for name, count in events:
            if name in expected:
                firsts.setdefault(name, count)
    return firsts if set(expected) <= set(firsts) else None


def _split_by_name(events: list[tuple[str, int]], threads: int) -> list[list[tuple[str, int]]]:
    per_thread: list[list[tuple[str, int]]] = [[] for _ in range(threads)]
    for name, count in events:
        per_thread[(ord(name) * 7) % threads].append((name, count))
    return per_thread


@given(
    expected=st.lists(st.sampled_from(NAMES), min_size=1, max_size=6),
    events=event_lists,
    threads=st.integers(1, 3),
)
def test_direct_handle_event_from_threads_fires_once_iff_all_arrived(
    expected: list[str], events: list[tuple[str, int]], threads: int
) -> None:
    bus = EventBus()
    bus.start()
    sink = bus.subscribe("sink", 10, IndexSynchronizedEvent.event_type)
    t = IndexSynchronizationTracker(bus, expected)
    per_thread = _split_by_name(events, threads)
    workers = [
        threading.Thread(
            target=lambda evs=evs: [t.handle_event(synced(n, c)) for n, c in evs],
            name=f"test-sync-{i}",
        )
        for i, evs in enumerate(per_thread)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(JOIN)
    t.stop()
    outcome = _expected_outcome(expected, per_thread)
    got = drain(sink)
    if outcome is None:
        assert got == []
        assert not t.all_synced()
    else:
        assert got == [IndexSynchronizedEvent(outcome)]
        assert t.all_synced()
    assert t.get_all_resource_counts() == {
        n: c for n, c in _first_counts(per_thread).items() if n in expected
    }


def _first_counts(per_thread: list[list[tuple[str, int]]]) -> dict[str, int]:
    firsts: dict[str, int] = {}
    for events in per_thread:
        for name, count in events:
            firsts.setdefault(name, count)
    return firsts


@given(
    expected=st.lists(st.sampled_from(NAMES), min_size=0, max_size=6),
    events=event_lists,
    publishers=st.integers(1, 3),
    bus_start=st.sampled_from(["before", "during", "after"]),
)
def test_through_the_bus_fires_exactly_once_iff_all_arrived_with_first_counts(
    expected: list[str], events: list[tuple[str, int]], publishers: int, bus_start: str
) -> None:
    bus = EventBus()
    if bus_start == "before":
        bus.start()
    sink = bus.subscribe("sink", 10, IndexSynchronizedEvent.event_type)
    t = IndexSynchronizationTracker(bus, expected)
    t.start()
    per_thread = _split_by_name(events, publishers)
    workers = [
        threading.Thread(
            target=lambda evs=evs: [bus.publish(synced(n, c)) for n, c in evs],
            name=f"test-publisher-{i}",
        )
        for i, evs in enumerate(per_thread)
    ]
    for w in workers:
        w.start()
    if bus_start == "during":
        bus.start()
    for w in workers:
        w.join(JOIN)
    bus.start()
    assert t.wait_idle(JOIN)
    t.stop()
    assert t.join(JOIN)
    assert t.subscription.dropped == 0  # at most 30 events: never more than the buffer
    outcome = _expected_outcome(expected, per_thread) if expected else {}
    got = drain(sink)
    if outcome is None:
        assert got == []
    else:
        assert got == [IndexSynchronizedEvent(outcome)]
    assert t.fired == (outcome is not None)


def test_constructor_takes_names_then_keyword_only_options(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = EventBus()
    by_keyword = IndexSynchronizationTracker(bus, resource_names=["pods"], logger=OWN)
    by_keyword.handle_event(ResourceSyncCompleteEvent("nodes", 1))  # unknown: warned
    assert any(r.name == "mine" for r in caplog.records)
    by_keyword.subscription.close()
    short = IndexSynchronizationTracker(bus, ["pods", "pods", "nodes"])
    assert short.resource_names == ("pods", "nodes")
    short.subscription.close()
    with pytest.raises(TypeError, match="not one string"):
        IndexSynchronizationTracker(bus, "pods")
    with pytest.raises(TypeError):
        IndexSynchronizationTracker(bus)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        IndexSynchronizationTracker(bus, None, ["svc"])  # type: ignore[arg-type, call-arg]
    assert [s.name for s in bus.subscriptions] == []


OWN = logging.getLogger("mine")


def test_subscribe_takes_name_buffer_size_then_event_types() -> None:
    bus = EventBus()
    sized = bus.subscribe("sized", 7, "a", "b")
    assert (sized.buffer_size, sized.event_types) == (7, frozenset({"a", "b"}))
    with pytest.raises(TypeError, match="buffer_size must be an int"):
        bus.subscribe("no-size", "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="buffer_size must be an int"):
        bus.subscribe("bool-size", True, "a")
    assert [s.name for s in bus.subscriptions] == ["sized"]
    sized.close()
