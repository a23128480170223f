"""kube-informers: thread-based Kubernetes informers for synchronous Python.

The public API is exactly what ``__all__`` lists (a test pins it). Objects are
the parsed JSON of the API (plain dicts) and are shared read-only between the
cache and every consumer: never mutate what the library hands you.
"""

from __future__ import annotations

# --- the store protocols (informers.cache.protocols) ---
from informers.cache.protocols import IndexedStore, KeyListerGetter, Store

# --- errors (informers.errors) ---
from informers.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    CacheSyncTimeoutError,
    ConflictError,
    ExpiredError,
    FIFOClosedError,
    ForbiddenError,
    IndexConflictError,
    IndexerError,
    IndexFunctionError,
    InformersError,
    InformerStateError,
    InvalidError,
    NotFoundError,
    ObjectEncodeError,
    ObjectKeyError,
    ResourceVersionTooLargeError,
    SelectorParseError,
    TooManyRequestsError,
    UnauthorizedError,
    UnknownIndexError,
    UnknownResourceError,
    WatchDecodeError,
    WatchStalledError,
)

# --- informer: lister-watcher, reflector, shared informer, factory (informer branch) ---
from informers.factory import SharedInformerFactory

# --- in-order delta queue (informers.fifo) ---
from informers.fifo import Delta, DeltaType, RealFIFO, Relist
from informers.informer import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from informers.listers import Lister, NamespaceLister
from informers.listwatch import (
    HTTPListerWatcher,
    ListerWatcher,
    ListOptions,
    RequestAborter,  # aborting requests in flight (stop-abort branch)
    discover_resource,
)

# --- raw objects: keys, index functions, accessors (informers.objects) ---
from informers.objects import (
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
from informers.reflector import Reflector, ReflectorConfig

# --- resource descriptions (informers.resources) ---
from informers.resources import Resource

# --- label and field selectors (informers.selectors) ---
from informers.selectors import FieldSelector, LabelSelector

# --- the indexed store (informers.store) ---
from informers.store import Indexer, ThreadSafeStore

# --- the raw HTTP path to the API server (informers.transport) ---
from informers.transport import ApiClientTransport, Transport
from informers.wait import wait_for_cache_sync

__version__ = "0.1.0.dev0"

__all__ = [
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
    # the transport and the typed API errors (transport branch)
    "AlreadyExistsError",
    "ApiClientTransport",
    "BadRequestError",
    "ConflictError",
    "ForbiddenError",
    "InvalidError",
    "NotFoundError",
    "Transport",
    "UnauthorizedError",
]
