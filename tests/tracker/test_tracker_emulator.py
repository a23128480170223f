"""The trackers end to end over real HTTP: a SharedInformerFactory against the
API server emulator, the sync events wired to the index tracker, and a typed
ResourceTracker fed by the informer's signals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes.client import V1ConfigMap

from informers.cache.factory import SharedInformerFactory
from informers.testing import ApiServer
from informers.wire.resources import CONFIGMAPS, PODS, SERVICES
from tests.helpers import configmap, obj
from tracker import (
    Channel,
    ChannelEmptyError,
    EventBus,
    IndexSynchronizationTracker,
    IndexSynchronizedEvent,
    ResourceTracker,
    SyncEventPublisher,
    TrackerDeleteResource,
)

JOIN = 10.0


@pytest.fixture
def factory(api_server: ApiServer) -> Iterator[SharedInformerFactory]:
    client = api_server.api_client()
    made = SharedInformerFactory(client)
    yield made
    made.shutdown()
    client.close()


def test_index_tracker_fires_once_after_three_kinds_synced_never_before(
    api_server: ApiServer, factory: SharedInformerFactory
) -> None:
    for i in range(4):
        api_server.create(
            PODS, obj(f"p{i}", "default", spec={"containers": [{"name": "c", "image": "nginx"}]})
        )
    for i in range(2):
        api_server.create(SERVICES, obj(f"s{i}", "default", spec={"ports": [{"port": 80}]}))
    api_server.create(CONFIGMAPS, configmap("c0", "default"))
    expected_cms = len(api_server.list_objects(CONFIGMAPS))  # the emulator may seed some

    bus = EventBus()
    first_two = [factory.pods(), factory.services()]
    third = factory.configmaps()
    publisher = SyncEventPublisher(bus, [*first_two, third])
    assert publisher.resource_names == ("pods", "services", "configmaps")
    index = IndexSynchronizationTracker(bus, publisher.resource_names)
    ready = bus.subscribe("controller", 10, IndexSynchronizedEvent.event_type)
    bus.start()
    index.start()
    try:
        for informer in first_two:
            informer.start()
            assert informer.wait_synced(JOIN)
            assert informer.wait_idle(JOIN)
        assert index.wait_idle(JOIN)
        assert publisher.published() == {"pods", "services"}
        assert not index.all_synced()
        with pytest.raises(ChannelEmptyError):
            ready.get(timeout=0)

        third.start()
        event = ready.get(timeout=JOIN)
        assert event == IndexSynchronizedEvent(
            {"pods": 4, "services": 2, "configmaps": expected_cms}
        )
        api_server.create(CONFIGMAPS, configmap("c1", "default"))  # later changes: no new event
        assert third.wait_idle(JOIN)
        assert index.wait_idle(JOIN)
        with pytest.raises(ChannelEmptyError):
            ready.get(timeout=0)
    finally:
        index.stop()
        assert index.join(JOIN)
        publisher.close()


def test_resource_tracker_over_http(api_server: ApiServer, factory: SharedInformerFactory) -> None:
    api_server.create(CONFIGMAPS, obj("keep", "default", labels={"app": "web"}, data={"a": "1"}))
    api_server.create(CONFIGMAPS, obj("other", "default", labels={"app": "db"}, data={}))
    informer = factory.configmaps()
    with ResourceTracker(
        informer,
        V1ConfigMap,
        filter=lambda cm: (cm.metadata.labels or {}).get("app") == "web",
    ) as tracker:
        added: Channel[V1ConfigMap] = Channel()
        updated: Channel[tuple[V1ConfigMap, V1ConfigMap]] = Channel()
        deleted: Channel[TrackerDeleteResource[V1ConfigMap]] = Channel()
        tracker.register_added_resource_channel(added)
        tracker.register_updated_resource_channel(updated)
        tracker.register_deleted_resource_channel(deleted)
        factory.start()
        assert informer.wait_synced(JOIN)
        assert added.get(timeout=JOIN).metadata.name == "keep"
        assert [cm.metadata.name for cm in tracker.known_resources()] == ["keep"]
        assert tracker.known_resources_by_index("namespace", "default")[0].data == {"a": "1"}

        keep = api_server.get(CONFIGMAPS, "keep", "default")
        api_server.update(CONFIGMAPS, {**keep, "data": {"a": "2"}})
        old, new = updated.get(timeout=JOIN)
        assert (old.data, new.data) == ({"a": "1"}, {"a": "2"})

        other = api_server.get(CONFIGMAPS, "other", "default")
        api_server.update(
            CONFIGMAPS, {**other, "metadata": {**other["metadata"], "labels": {"app": "web"}}}
        )
        assert added.get(timeout=JOIN).metadata.name == "other"  # entered the filter

        api_server.delete(CONFIGMAPS, "keep", "default")
        gone = deleted.get(timeout=JOIN)
        assert gone.resource_key == "default/keep"
        assert not gone.unknown_state
        assert gone.resource is not None
        assert gone.resource.data == {"a": "2"}
