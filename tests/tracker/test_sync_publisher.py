"""tracker.sync_publisher: informers' synced signals to ResourceSyncCompleteEvents,
end to end with real informers (fed by FakeListerWatchers) and the index tracker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from informers.cache import signals
from informers.cache.informer import SharedIndexInformer
from informers.testing.fake import FakeListerWatcher
from tests.helpers import drain, obj
from tracker.bus import EventBus
from tracker.index_sync import (
    IndexSynchronizationTracker,
    IndexSynchronizedEvent,
    ResourceSyncCompleteEvent,
)
from tracker.sync_publisher import SyncEventPublisher

JOIN = 5.0


def make_informer(name: str, count: int) -> SharedIndexInformer:
    lw = FakeListerWatcher()
    lw.set_objects([obj(f"{name}-{i}", "ns", "1") for i in range(count)], "10")
    return SharedIndexInformer(lw, name=name)


@pytest.fixture
def informers() -> Iterator[list[SharedIndexInformer]]:
    made = [make_informer("pods", 3), make_informer("services", 2), make_informer("configmaps", 0)]
    yield made
    for informer in made:
        informer.stop()


@pytest.fixture
def bus() -> EventBus:
    b = EventBus()
    b.start()
    return b


def test_tracker_fires_once_after_all_three_kinds_synced_never_before(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    ready = bus.subscribe("controller", 10, IndexSynchronizedEvent.event_type)
    with SyncEventPublisher(bus, informers) as publisher:
        assert publisher.resource_names == ("pods", "services", "configmaps")
        index = IndexSynchronizationTracker(bus, publisher.resource_names)
        index.start()
        try:
            for informer in informers[:2]:
                informer.start()
                assert informer.wait_synced(JOIN)
                assert informer.wait_idle()
            assert index.wait_idle(JOIN)
            assert publisher.published() == {"pods", "services"}
            assert drain(ready) == []
            assert not index.all_synced()

            informers[2].start()
            event = ready.get(timeout=JOIN)
            assert event == IndexSynchronizedEvent({"pods": 3, "services": 2, "configmaps": 0})
            assert index.wait_idle(JOIN)
            assert drain(ready) == []
        finally:
            index.stop()
            assert index.join(JOIN)


def test_informer_synced_before_the_publisher_is_published_at_construction(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    sink = bus.subscribe("sink", 10, ResourceSyncCompleteEvent.event_type)
    informers[0].start()
    assert informers[0].wait_synced(JOIN)
    assert informers[0].wait_idle()
    with SyncEventPublisher(bus, informers[:1]):
        assert drain(sink) == [ResourceSyncCompleteEvent("pods", 3)]
        signals.synced.send(informers[0])  # a second synced signal changes nothing
        assert drain(sink) == []


def test_mapping_gives_the_names(bus: EventBus, informers: list[SharedIndexInformer]) -> None:
    sink = bus.subscribe("sink", 10, ResourceSyncCompleteEvent.event_type)
    with SyncEventPublisher(bus, {"v1/pods": informers[0]}) as publisher:
        assert publisher.resource_names == ("v1/pods",)
        informers[0].start()
        assert sink.get(timeout=JOIN) == ResourceSyncCompleteEvent("v1/pods", 3)


def test_same_informer_under_two_names_is_rejected(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    with pytest.raises(ValueError, match="two names"):
        SyncEventPublisher(bus, {"a": informers[0], "b": informers[0]})


def test_two_informers_with_the_same_name_are_rejected(bus: EventBus) -> None:
    # Two namespaced informers of one kind are both named "pods": keyed by
    # name, one of them would silently be left out, and the index tracker
    # would fire when the other one synced.
    first, second = make_informer("pods", 1), make_informer("pods", 2)
    try:
        with pytest.raises(ValueError, match="'pods'"):
            SyncEventPublisher(bus, [first, second])
        assert not any(
            isinstance(getattr(r, "__self__", None), SyncEventPublisher)
            for r in signals.synced.receivers.values()
        )
    finally:
        first.stop()
        second.stop()


def test_close_stops_listening(bus: EventBus, informers: list[SharedIndexInformer]) -> None:
    sink = bus.subscribe("sink", 10, ResourceSyncCompleteEvent.event_type)
    publisher = SyncEventPublisher(bus, informers[:1])
    publisher.close()
    publisher.close()
    informers[0].start()
    assert informers[0].wait_synced(JOIN)
    assert informers[0].wait_idle()
    assert drain(sink) == []
    assert not any(
        getattr(r, "__self__", None) is publisher for r in signals.synced.receivers.values()
    )


def test_synced_signals_of_other_informers_are_ignored(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    sink = bus.subscribe("sink", 10, ResourceSyncCompleteEvent.event_type)
    with SyncEventPublisher(bus, informers[:1]):
        signals.synced.send(informers[1])
        signals.synced.send(object())
        assert drain(sink) == []


def test_the_publisher_is_a_handler_that_leaves_once_published(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    sink = bus.subscribe("sink", 10, ResourceSyncCompleteEvent.event_type)
    before = len(informers[0].registrations())
    with SyncEventPublisher(bus, informers[:1]):
        assert len(informers[0].registrations()) == before + 1  # its own handler
        informers[0].start()
        assert sink.get(timeout=JOIN) == ResourceSyncCompleteEvent("pods", 3)
        assert informers[0].wait_idle()
        assert len(informers[0].registrations()) == before  # removed itself


def test_close_removes_the_handlers_still_waiting(
    bus: EventBus, informers: list[SharedIndexInformer]
) -> None:
    publisher = SyncEventPublisher(bus, informers)
    assert all(len(informer.registrations()) == 1 for informer in informers)
    publisher.close()
    assert all(informer.registrations() == [] for informer in informers)
