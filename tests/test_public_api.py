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
    "ChannelClosedError",
    "ChannelEmptyError",
    "ChannelFullError",
    "ChannelTimeoutError",
    "ExpiredError",
    "FIFOClosedError",
    "IndexConflictError",
    "IndexFunctionError",
    "IndexerError",
    "InformerStateError",
    "InformersError",
    "ObjectEncodeError",
    "ObjectKeyError",
    "ResourceVersionTooLargeError",
    "SelectorParseError",
    "TooManyRequestsError",
    "UnknownIndexError",
    "UnknownResourceError",
    "WatchDecodeError",
    "WatchStalledError",
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
    # the structure refactor: the batch key fast path, the keyed store layer,
    # the typed relist entry
    "meta_namespace_keys",
    "ThreadSafeStore",
    "Relist",
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
    # running controllers as a process
    "Manager",
    # aborting requests in flight
    "RequestAborter",
    # the transport and the typed API errors
    "AlreadyExistsError",
    "ApiClientTransport",
    "BadRequestError",
    "ConflictError",
    "ForbiddenError",
    "InvalidError",
    "NotFoundError",
    "Transport",
    "UnauthorizedError",
    # the controller helpers' and the event recorder's errors
    "AlreadyOwnedError",
    "InvalidConditionError",
    "InvalidEventError",
    "ObjectReferenceError",
    "OwnerReferenceError",
    # writing back: the client and create-or-update
    "Client",
    "OperationResult",
    "create_or_patch",
    "create_or_update",
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
    # syncapi and mirror errors
    "SyncAPIError",
    "ObjectKeyParseError",
    "SyncerConfigError",
    "DiffError",
    "InvalidListItemError",
    "IncompleteListError",
    "ComparisonError",
    "MirrorError",
    "MirrorConfigError",
    "InvalidObjectError",
    "SchemaMismatchError",
    "MirrorDatabaseError",
    "DatabaseUnavailableError",
    # the mirroring contract
    "ObjectKey",
    "Syncer",
    "diff",
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


REFLECTOR_ALL = {
    "Action",
    "BackingOff",
    "Backoff",
    "BackoffManager",
    "Begin",
    "Buffer",
    "BufferDelete",
    "BufferPut",
    "CancelDeadline",
    "ClearBuffer",
    "CloseWatch",
    "DeadlineFired",
    "INITIAL_EVENTS_END_ANNOTATION",
    "Idle",
    "Input",
    "ListError",
    "ListPage",
    "Listing",
    "Memory",
    "Next",
    "Reflector",
    "ReflectorConfig",
    "ReflectorState",
    "ReflectorStore",
    "Replace",
    "Report",
    "RequestList",
    "RequestWatch",
    "StopRequested",
    "Stopped",
    "StoreAdd",
    "StoreBookmark",
    "StoreDelete",
    "StoreUpdate",
    "Streaming",
    "TimerFired",
    "WatchEnded",
    "WatchEvent",
    "WatchOpenError",
    "Watching",
    "step",
}


def test_informers_reflector_all_is_pinned() -> None:
    import informers.cache.reflector
    from informers.cache import protocols
    from informers.cache.reflector import config, driver, machine

    assert set(informers.cache.reflector.__all__) == REFLECTOR_ALL
    assert len(informers.cache.reflector.__all__) == len(REFLECTOR_ALL), (
        "duplicate names in __all__"
    )
    # Each name has one home module (the store protocol's is the cache's
    # protocols module), and the package re-exports that object.
    for name in REFLECTOR_ALL:
        homes = [m for m in (config, driver, machine, protocols) if name in m.__all__]
        assert len(homes) == 1, (name, homes)
        assert getattr(informers.cache.reflector, name) is getattr(homes[0], name)


MIRROR_ALL = {
    # database
    "MirrorDatabase",
    "create_mirror_engine",
    "STATE_TABLE",
    # tables
    "MirrorStore",
    "MirrorBatch",
    "MirrorRow",
    # schema
    "Column",
    "ColumnType",
    "BUILTIN_COLUMNS",
    "table_name_for",
    # the controller
    "mirror_controller",
    "SyncController",
    "MirrorSyncer",
    "sync_reconciler",
    "LiveReader",
    # errors
    "MirrorError",
    "MirrorConfigError",
    "InvalidObjectError",
    "SchemaMismatchError",
    "MirrorDatabaseError",
    "DatabaseUnavailableError",
}


def test_tracker_mirror_all_is_pinned() -> None:
    import tracker.mirror

    assert set(tracker.mirror.__all__) == MIRROR_ALL
    assert len(tracker.mirror.__all__) == len(set(tracker.mirror.__all__))
    for name in tracker.mirror.__all__:
        assert getattr(tracker.mirror, name) is not None, name


WORKQUEUE_ALL = {
    # queues
    "DelayingQueue",
    "PriorityQueue",
    "PRIORITY_HIGH",
    "PRIORITY_LOW",
    "DEFAULT_MAX_WAIT",
    "Queue",
    "RateLimitingQueue",
    # rate limiters
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
    # metrics
    "CallbackGaugeMetric",
    "CounterMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueMetrics",
}


def test_informers_workqueue_all_is_pinned() -> None:
    import informers.toolkit.workqueue

    assert set(informers.toolkit.workqueue.__all__) == WORKQUEUE_ALL
    assert len(informers.toolkit.workqueue.__all__) == len(set(informers.toolkit.workqueue.__all__))
    for name in informers.toolkit.workqueue.__all__:
        assert getattr(informers.toolkit.workqueue, name) is not None, name


RUNTIME_ALL = {
    # the loop
    "Controller",
    "ReconcileContext",
    "current_context",
    "ReconcileFunc",
    "WriteLedger",
    # requests and results
    "Request",
    "Result",
    "TerminalError",
    "is_terminal",
    # sources
    "ChannelSource",
    "HandlerSource",
    "InformerSource",
    "PeriodicSource",
    "Sink",
    "Source",
    # predicates
    "Funcs",
    "Predicate",
    "and_",
    "annotation_changed",
    "generation_changed",
    "label_changed",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
    # map functions
    "MapFunc",
    "enqueue_owner",
    "request_for_object",
    # metrics
    "ControllerMetrics",
    "ControllerMetricsProvider",
    "NoopControllerMetricsProvider",
}


def test_informers_runtime_all_is_pinned() -> None:
    import informers.toolkit.runtime

    assert set(informers.toolkit.runtime.__all__) == RUNTIME_ALL
    assert len(informers.toolkit.runtime.__all__) == len(RUNTIME_ALL), "duplicate names in __all__"
    for name in informers.toolkit.runtime.__all__:
        assert getattr(informers.toolkit.runtime, name) is not None, name


TRANSPORT_ALL = {
    "CONNECT_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "JSON_CONTENT_TYPE",
    "ApiClientTransport",
    "Query",
    "RequestAborter",
    "Response",
    "StreamingResponse",
    "Transport",
    "as_transport",
    "encode_body",
    "warn_if_unverified",
    "with_query",
}

DISCOVERY_ALL = {"DISCOVERY_READ_TIMEOUT", "discover_resource", "resolve_resource"}


@pytest.mark.parametrize(
    ("module", "expected"),
    [("informers.rest.transport", TRANSPORT_ALL), ("informers.rest.discovery", DISCOVERY_ALL)],
)
def test_transport_and_discovery_all_are_pinned(module: str, expected: set[str]) -> None:
    names = importlib.import_module(module).__all__
    assert set(names) == expected
    assert len(names) == len(set(names)), "duplicate names in __all__"


TESTING_CONTROLLERS_ALL = {
    "CONTROLLER_NAMES",
    "HASH_LABEL",
    "REVISION_ANNOTATION",
    "ConflictError",
    "ControllerManager",
    "JsonApi",
    "NotFoundError",
    "pod_template_hash",
    "start_controllers",
}


def test_informers_testing_controllers_all_is_pinned() -> None:
    import informers.testing.controllers

    assert set(informers.testing.controllers.__all__) == TESTING_CONTROLLERS_ALL
    assert len(informers.testing.controllers.__all__) == len(TESTING_CONTROLLERS_ALL)
    for name in informers.testing.controllers.__all__:
        assert getattr(informers.testing.controllers, name) is not None, name


SHARDING_ALL = {
    "DEFAULT_ORPHAN_GRACE",
    "DEFAULT_VIRTUAL_NODES",
    "DRAIN_LABEL_PREFIX",
    "NOOP_SHARDING_METRICS",
    "RING_LABEL",
    "SHARD_LABEL_PREFIX",
    "DrainingReconciler",
    "HashRing",
    "NoopShardingMetrics",
    "RingCallback",
    "RingChangeSource",
    "RingWatcher",
    "ShardFilter",
    "ShardLease",
    "ShardLeaseLock",
    "ShardState",
    "Sharder",
    "ShardingMetrics",
    "drain_label",
    "lease_state",
    "ring_key",
    "shard_filter",
    "shard_label",
    "shard_label_selector",
    "stable_hash",
    "state_changes_at",
}


def test_sharding_all_is_pinned() -> None:
    sharding = importlib.import_module("informers.toolkit.sharding")
    names = sharding.__all__
    assert set(names) == SHARDING_ALL
    assert len(names) == len(set(names)), "duplicate names in __all__"
    for name in names:
        assert getattr(sharding, name) is not None, name


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
    import informers.toolkit.leaderelection

    assert set(informers.toolkit.leaderelection.__all__) == LEADERELECTION_ALL
    assert len(informers.toolkit.leaderelection.__all__) == len(
        set(informers.toolkit.leaderelection.__all__)
    )
    for name in informers.toolkit.leaderelection.__all__:
        assert getattr(informers.toolkit.leaderelection, name) is not None, name


MANAGER_ALL = {
    "DEFAULT_BACKOFF_BOUND",
    "SERVED_METRIC_NAMES",
    "Check",
    "CheckResult",
    "FunctionRunnable",
    "HealthChecks",
    "InformerLiveness",
    "InformersSynced",
    "Manager",
    "ManagerMetrics",
    "Runnable",
    "install_informer_metrics",
    "run_check",
}


def test_informers_manager_all_is_pinned() -> None:
    import informers.toolkit.manager

    assert set(informers.toolkit.manager.__all__) == MANAGER_ALL
    assert len(informers.toolkit.manager.__all__) == len(MANAGER_ALL)
    for name in informers.toolkit.manager.__all__:
        assert getattr(informers.toolkit.manager, name) is not None, name


COMPACT_ALL = {
    "DEFAULT_HOT_OBJECTS",
    "KUBERNETES_DICTIONARY",
    "Codec",
    "CompactStore",
    "EncodedList",
    "JSONCodec",
    "MsgpackCodec",
    "ZlibCodec",
    "ZstdCodec",
    "available_codecs",
}


def test_informers_cache_compact_all_is_pinned() -> None:
    import informers.cache.compact

    assert set(informers.cache.compact.__all__) == COMPACT_ALL
    assert len(informers.cache.compact.__all__) == len(set(informers.cache.compact.__all__))
    for name in informers.cache.compact.__all__:
        assert getattr(informers.cache.compact, name) is not None, name


COMPACT_RAW_ALL = {"RAW_HOT_OBJECTS", "RawCodec", "RawStore"}
WIRE_RAW_ALL = {
    "Projection",
    "RawMeta",
    "RawObject",
    "loads_list",
    "loads_watch_event",
    "reads",
    "split_list",
    "split_watch_event",
}


def test_informers_cache_compact_raw_all_is_pinned() -> None:
    import informers.wire.raw as wire_raw
    from informers.cache.compact import raw

    assert set(raw.__all__) == COMPACT_RAW_ALL
    assert set(wire_raw.__all__) == WIRE_RAW_ALL
    for module in (raw, wire_raw):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


CACHE_PROTOCOLS_ALL = {
    "DecodeOnDemandSource",
    "DecodeOnDemandStore",
    "decode_on_demand_source",
    "IndexedStore",
    "InformerStore",
    "KeyFuncStore",
    "KeyListerGetter",
    "ListBufferSource",
    "PreparedListStore",
    "ReflectorStore",
    "Store",
    "StoreFactory",
}


def test_informers_cache_protocols_all_is_pinned() -> None:
    import informers.cache.protocols

    assert set(informers.cache.protocols.__all__) == CACHE_PROTOCOLS_ALL
    assert len(informers.cache.protocols.__all__) == len(CACHE_PROTOCOLS_ALL)
    # The facades re-export the protocols from their one home.
    for name in ("IndexedStore", "KeyListerGetter", "Store"):
        assert getattr(informers, name) is getattr(informers.cache.protocols, name)


STORE_MODULES_ALL = {
    "informers.cache.store": {"Indexer", "ThreadSafeStore"},
    "informers.cache.informer": {
        "FilteringResourceEventHandler",
        "ResourceEventHandler",
        "ResourceEventHandlerFuncs",
        "ResourceEventHandlerRegistration",
        "SharedIndexInformer",
    },
}


@pytest.mark.parametrize(("module", "expected"), sorted(STORE_MODULES_ALL.items()))
def test_store_modules_all_are_pinned(module: str, expected: set[str]) -> None:
    assert set(importlib.import_module(module).__all__) == expected


LISTBUFFER_ALL = {"Deferred", "ListBuffer", "PreparedList"}


def test_informers_listbuffer_all_is_pinned() -> None:
    import informers.cache.listbuffer

    assert set(informers.cache.listbuffer.__all__) == LISTBUFFER_ALL
    for name in informers.cache.listbuffer.__all__:
        assert getattr(informers.cache.listbuffer, name) is not None, name


SHARDING_SELECTOR_ALL = {
    "HASH_SPACE",
    "SHARD_FIELDS",
    "SHARD_INFO_FIELD",
    "ShardRange",
    "ShardSelector",
    "even_shard_range",
    "even_shard_selector",
    "fnv1a_64",
    "ring_shard_selector",
}


def test_sharding_selector_all_is_pinned() -> None:
    selector = importlib.import_module("informers.toolkit.sharding.selector")
    names = selector.__all__
    assert set(names) == SHARDING_SELECTOR_ALL
    assert len(names) == len(set(names)), "duplicate names in __all__"
    for name in names:
        assert getattr(selector, name) is not None, name


SELECTORS_ALL = {
    # label requirements and selectors
    "LabelRequirement",
    "LabelSelector",
    "Operator",
    # field selectors
    "FieldRequirement",
    "FieldSelector",
    # the KEP-5866 shard selector
    "HASH_SPACE",
    "SHARD_FIELDS",
    "SHARD_INFO_FIELD",
    "ShardRange",
    "ShardSelector",
    "even_shard_range",
    "even_shard_selector",
    "fnv1a_64",
}


def test_wire_selectors_all_is_pinned() -> None:
    selectors = importlib.import_module("informers.wire.selectors")
    homes_of = [
        importlib.import_module(f"informers.wire.selectors.{name}")
        for name in ("requirements", "labels", "fields", "shard")
    ]
    assert set(selectors.__all__) == SELECTORS_ALL
    assert len(selectors.__all__) == len(SELECTORS_ALL), "duplicate names in __all__"
    # Each name has one home module, and the package re-exports that object.
    for name in SELECTORS_ALL:
        homes = [m for m in homes_of if name in m.__all__]
        assert len(homes) == 1, (name, homes)
        assert getattr(selectors, name) is getattr(homes[0], name)
    # The toolkit's sharding.selector re-exports the same shard selector.
    sharding_selector = importlib.import_module("informers.toolkit.sharding.selector")
    assert sharding_selector.ShardSelector is selectors.ShardSelector


FASTPATH_ALL = {
    "WATCH_EVENT_TYPES",
    "LabelTest",
    "in_namespace",
    "label_filter",
    "label_filter_both",
    "label_filter_equals",
    "labels_matcher",
    "named_items",
    "object_key",
    "object_keys",
    "resource_version",
    "watch_event",
}


def test_wire_fastpath_all_is_pinned() -> None:
    fastpath = importlib.import_module("informers.wire.fastpath")
    assert set(fastpath.__all__) == FASTPATH_ALL
    assert len(fastpath.__all__) == len(FASTPATH_ALL), "duplicate names in __all__"
    for name in FASTPATH_ALL:
        assert getattr(fastpath, name) is not None, name


def test_the_reflector_event_fast_step_is_private() -> None:
    from informers.cache.reflector import machine

    assert "watch_event_step" not in machine.__all__
    assert not hasattr(machine, "watch_event_step")


APISERVER_ALL = {
    "Access",
    "ApiServer",
    "ApiServerError",
    "Authorizer",
    "SecurityConfigError",
    "TLSConfig",
    "generate_self_signed",
    # the field tables, which selectors leave to the server
    "object_fields",
    "supported_fields",
    "is_loopback_address",
}


def test_informers_testing_apiserver_all_is_pinned() -> None:
    apiserver = importlib.import_module("informers.testing.apiserver")
    assert set(apiserver.__all__) == APISERVER_ALL
    assert len(apiserver.__all__) == len(APISERVER_ALL), "duplicate names in __all__"
    for name in APISERVER_ALL:
        assert getattr(apiserver, name) is not None, name
