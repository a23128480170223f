"""Sharding a controller over several active replicas.

Each replica holds its own shard Lease (:class:`ShardLease`); every replica
watches the ring's Leases (:class:`RingWatcher`) and computes the same
consistent-hash ring (:class:`HashRing`) of the ready shards; an object
belongs to the shard its ring key (:func:`ring_key`, the controller owner's
for owned objects) falls on. Two ways to route objects to their shard:

* client-side (:mod:`informers.toolkit.sharding.routing`): every replica watches
  everything and filters (:func:`shard_filter`, :class:`RingChangeSource`);
* label-based (:mod:`informers.toolkit.sharding.labels`): a leader-elected sharder
  labels each object with its shard, replicas watch only their label, and a
  drain handshake moves objects so that no two shards work on one at once.

See the guide ``docs/guide/sharding.rst``.
"""

from __future__ import annotations

from informers.toolkit.sharding.labels import (
    DRAIN_LABEL_PREFIX,
    SHARD_LABEL_PREFIX,
    DrainingReconciler,
    Sharder,
    drain_label,
    shard_label,
    shard_label_selector,
)
from informers.toolkit.sharding.lease import (
    DEFAULT_ORPHAN_GRACE,
    RING_LABEL,
    ShardLease,
    ShardLeaseLock,
    ShardState,
    lease_state,
    state_changes_at,
)
from informers.toolkit.sharding.metrics import (
    NOOP_SHARDING_METRICS,
    NoopShardingMetrics,
    ShardingMetrics,
)
from informers.toolkit.sharding.ring import DEFAULT_VIRTUAL_NODES, HashRing, ring_key, stable_hash
from informers.toolkit.sharding.routing import RingChangeSource, ShardFilter, shard_filter
from informers.toolkit.sharding.watcher import RingCallback, RingWatcher

__all__ = [
    "DEFAULT_ORPHAN_GRACE",
    "DEFAULT_VIRTUAL_NODES",
    "DRAIN_LABEL_PREFIX",
    "SHARD_LABEL_PREFIX",
    "DrainingReconciler",
    "Sharder",
    "drain_label",
    "shard_label",
    "shard_label_selector",
    "NOOP_SHARDING_METRICS",
    "RING_LABEL",
    "HashRing",
    "NoopShardingMetrics",
    "RingCallback",
    "RingChangeSource",
    "RingWatcher",
    "ShardFilter",
    "ShardLease",
    "ShardLeaseLock",
    "ShardState",
    "ShardingMetrics",
    "lease_state",
    "ring_key",
    "shard_filter",
    "stable_hash",
    "state_changes_at",
]
