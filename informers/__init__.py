"""kube-informers: thread-based Kubernetes informers for synchronous Python.

The public API is exactly what ``__all__`` lists (a test pins it). Objects are
the parsed JSON of the API (plain dicts) and are shared read-only between the
cache and every consumer: never mutate what the library hands you.
"""

from __future__ import annotations

# --- informer: lister-watcher, reflector, shared informer, factory ---
from informers.cache.factory import SharedInformerFactory

# --- in-order delta queue (informers.cache.fifo) ---
from informers.cache.fifo import Delta, DeltaType, RealFIFO, Relist
from informers.cache.informer import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from informers.cache.listers import Lister, NamespaceLister

# --- the store protocols (informers.cache.protocols) ---
from informers.cache.protocols import IndexedStore, KeyListerGetter, Store
from informers.cache.reflector import Reflector, ReflectorConfig

# --- the indexed store (informers.cache.store) ---
from informers.cache.store import Indexer, ThreadSafeStore
from informers.cache.wait import wait_for_cache_sync

# --- errors (informers.errors) ---
from informers.errors import (
    AlreadyExistsError,
    AlreadyOwnedError,
    ApiError,
    BadRequestError,
    CacheSyncTimeoutError,
    ChannelClosedError,
    ChannelEmptyError,
    ChannelFullError,
    ChannelTimeoutError,
    ConflictError,
    ExpiredError,
    FIFOClosedError,
    ForbiddenError,
    IndexConflictError,
    IndexerError,
    IndexFunctionError,
    InformersError,
    InformerStateError,
    InvalidConditionError,
    InvalidError,
    InvalidEventError,
    NotFoundError,
    ObjectEncodeError,
    ObjectKeyError,
    ObjectReferenceError,
    OwnerReferenceError,
    ResourceVersionTooLargeError,
    SelectorParseError,
    TooManyRequestsError,
    UnauthorizedError,
    UnknownIndexError,
    UnknownResourceError,
    WatchDecodeError,
    WatchStalledError,
)
from informers.rest.listwatch import (
    HTTPListerWatcher,
    ListerWatcher,
    ListOptions,
    RequestAborter,  # aborts requests in flight
    discover_resource,
)

# --- the raw HTTP path to the API server (informers.rest.transport) ---
from informers.rest.transport import ApiClientTransport, Transport

# --- writing back (informers.toolkit.client) ---
from informers.toolkit.client import (
    Client,
    OperationResult,
    create_or_patch,
    create_or_update,
)

# --- raw objects: keys, index functions, accessors (informers.wire.objects) ---
from informers.wire.objects import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexers,
    IndexFunc,
    KeyFunc,
    KubeObject,
    deletion_handling_meta_namespace_key,
    get_labels,
    get_name,
    get_namespace,
    get_resource_version,
    get_uid,
    meta_namespace_key,
    meta_namespace_keys,
    namespace_index,
    split_meta_namespace_key,
)

# --- resource descriptions (informers.wire.resources) ---
from informers.wire.resources import Resource

# --- label and field selectors (informers.wire.selectors) ---
from informers.wire.selectors import FieldSelector, LabelSelector

__version__ = "0.1.0.dev0"

__all__ = [
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
    "Relist",
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
    "ThreadSafeStore",
    "deletion_handling_meta_namespace_key",
    "get_labels",
    "get_name",
    "get_namespace",
    "get_resource_version",
    "get_uid",
    "meta_namespace_key",
    "meta_namespace_keys",
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
]
