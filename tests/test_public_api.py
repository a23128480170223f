"""Pins the public surface of both packages: adding or removing a public name
is a deliberate change to this file."""

from __future__ import annotations

import importlib

import pytest

import informers
import tracker

INFORMERS_ALL = {
    # errors
    "ApiError",
    "CacheSyncTimeoutError",
    "ExpiredError",
    "FIFOClosedError",
    "IndexConflictError",
    "IndexFunctionError",
    "IndexerError",
    "InformerStateError",
    "InformersError",
    "ObjectKeyError",
    "ResourceVersionTooLargeError",
    "SelectorParseError",
    "TooManyRequestsError",
    "UnknownIndexError",
    "WatchDecodeError",
    # resources
    "Resource",
    # fifo
    "Delta",
    "DeltaType",
    "KeyListerGetter",
    "RealFIFO",
    # selectors
    "FieldSelector",
    "LabelSelector",
    # objects and the indexed store
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "IndexedStore",
    "Indexer",
    "Indexers",
    "KeyFunc",
    "KubeObject",
    "NAMESPACE_INDEX",
    "Store",
    "deletion_handling_meta_namespace_key",
    "get_labels",
    "get_name",
    "get_namespace",
    "get_resource_version",
    "get_uid",
    "meta_namespace_key",
    "namespace_index",
    "split_meta_namespace_key",
    # informer
    "FilteringResourceEventHandler",
    "HTTPListerWatcher",
    "ListOptions",
    "Lister",
    "ListerWatcher",
    "NamespaceLister",
    "Reflector",
    "ReflectorConfig",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "discover_resource",
    "wait_for_cache_sync",
    # aborting requests in flight
    "RequestAborter",
}

TRACKER_ALL = {
    # event bus
    "Component",
    "Event",
    "EventBus",
    "Subscription",
    # channels
    "Channel",
    # errors
    "ChannelClosedError",
    "ChannelEmptyError",
    "ChannelFullError",
    "ChannelRegistrationError",
    "ChannelTimeoutError",
    "ConversionError",
    "DuplicateSubscriptionError",
    "ResourceNotSyncedError",
    "TrackerError",
    "UnknownResourceTypeError",
    # index synchronization
    "IndexSynchronizationTracker",
    "IndexSynchronizedEvent",
    "ResourceSyncCompleteEvent",
    # typed resource trackers
    "ResourceTracker",
    "TrackerDeleteResource",
    # informers to sync events
    "SyncEventPublisher",
}


TESTING_ALL = {
    "ApiServer",
    "ApiServerError",
    "FakeClock",
    "FakeListerWatcher",
    "FakeWatch",
    "IndexedStoreStateMachine",
    "indexed_store_machine",
    "RealFIFOStateMachine",
    "real_fifo_machine",
}


def test_informers_testing_all_is_pinned() -> None:
    import informers.testing

    assert set(informers.testing.__all__) == TESTING_ALL


def test_informers_all_is_pinned() -> None:
    assert set(informers.__all__) == INFORMERS_ALL
    assert len(informers.__all__) == len(set(informers.__all__)), "duplicate names in __all__"


def test_tracker_all_is_pinned() -> None:
    assert set(tracker.__all__) == TRACKER_ALL
    assert len(tracker.__all__) == len(set(tracker.__all__)), "duplicate names in __all__"


@pytest.mark.parametrize("package", ["informers", "tracker", "informers.testing"])
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


LEADERELECTION_ALL = {
    "JITTER_FACTOR",
    "LeaderElectionConfig",
    "LeaderElector",
    "Runnable",
    "run_with_leader_election",
    "Candidate",
    "LeaseLock",
    "LockState",
    "ResourceLock",
    "MICRO_TIME_FORMAT",
    "LeaderElectionRecord",
    "ObservedRecord",
    "expires_at",
    "format_micro_time",
    "is_expired",
    "lease_duration_seconds",
    "may_acquire",
    "next_renew_time",
    "observe",
    "parse_micro_time",
    "NOOP_LEADER_METRICS",
    "LeaderMetrics",
    "NoopLeaderMetrics",
    "PrometheusLeaderMetrics",
    "InvalidLeaseRecordError",
    "LeaderElectionConfigError",
    "LeaderElectionError",
    "LeaseLockError",
}


def test_informers_leaderelection_all_is_pinned() -> None:
    import informers.leaderelection

    assert set(informers.leaderelection.__all__) == LEADERELECTION_ALL
    assert len(informers.leaderelection.__all__) == len(set(informers.leaderelection.__all__))
    for name in informers.leaderelection.__all__:
        assert getattr(informers.leaderelection, name) is not None, name
