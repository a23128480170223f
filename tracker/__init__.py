"""kube-informers trackers: typed resource trackers, an event bus, and the
index synchronization tracker, all fed by informer event handlers.

The public API is exactly what ``__all__`` lists (a test pins it).
"""

from __future__ import annotations

# --- event bus (tracker.bus) ---
from tracker.bus import Component, Event, EventBus, Subscription

# --- channels (tracker.channels) ---
from tracker.channels import Channel

# --- errors (tracker.errors) ---
from tracker.errors import (
    ChannelClosedError,
    ChannelEmptyError,
    ChannelFullError,
    ChannelRegistrationError,
    ChannelTimeoutError,
    ConversionError,
    DuplicateSubscriptionError,
    ResourceNotSyncedError,
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
    # index synchronization
    "IndexSynchronizationTracker",
    "IndexSynchronizedEvent",
    "ResourceSyncCompleteEvent",
    # typed resource trackers
    "ResourceTracker",
    "TrackerDeleteResource",
    # informers to sync events
    "SyncEventPublisher",
]
