"""kube-informers trackers: typed resource trackers, an event bus, and the
index synchronization tracker, all fed by informer event handlers; the
syncapi contract for mirroring a kind elsewhere (its SQL implementation,
:mod:`tracker.mirror`, needs the ``mirror`` extra and is imported on its own).

The public API is exactly what ``__all__`` lists (a test pins it).
"""

from __future__ import annotations

# --- channels and their errors (informers.util.channels, informers.errors) ---
from informers.errors import (
    ChannelClosedError,
    ChannelEmptyError,
    ChannelFullError,
    ChannelTimeoutError,
)
from informers.util.channels import Channel

# --- event bus (tracker.bus) ---
from tracker.bus import Component, Event, EventBus, Subscription

# --- errors (tracker.errors) ---
from tracker.errors import (
    ChannelRegistrationError,
    ComparisonError,
    ConversionError,
    DatabaseUnavailableError,
    DiffError,
    DuplicateSubscriptionError,
    IncompleteListError,
    InvalidListItemError,
    InvalidObjectError,
    MirrorConfigError,
    MirrorDatabaseError,
    MirrorError,
    ObjectKeyParseError,
    ResourceNotSyncedError,
    SchemaMismatchError,
    SyncAPIError,
    SyncerConfigError,
    TrackerError,
    UnknownResourceTypeError,
)

# --- index synchronization (tracker.index_sync) ---
from tracker.index_sync import (
    IndexSynchronizationTracker,
    IndexSynchronizedEvent,
    ResourceSyncCompleteEvent,
)

# --- typed resource trackers (tracker.resource) ---
from tracker.resource import ResourceTracker, TrackerDeleteResource

# --- informers to sync events (tracker.sync_publisher) ---
from tracker.sync_publisher import SyncEventPublisher

# --- the mirroring contract (tracker.syncapi) ---
from tracker.syncapi import ObjectKey, Syncer, diff

__all__ = [
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
    # index synchronization
    "IndexSynchronizationTracker",
    "IndexSynchronizedEvent",
    "ResourceSyncCompleteEvent",
    # typed resource trackers
    "ResourceTracker",
    "TrackerDeleteResource",
    # informers to sync events
    "SyncEventPublisher",
    # the mirroring contract
    "ObjectKey",
    "Syncer",
    "diff",
]
