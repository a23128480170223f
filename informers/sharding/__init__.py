"""Sharding a controller over several replicas: a consistent-hash ring over
the shards (:mod:`informers.sharding.ring`). Each replica owns the objects
whose ring key falls on its shard; a parent and the children it controls
share a key, so they share a shard."""

from __future__ import annotations

from informers.sharding.ring import DEFAULT_VIRTUAL_NODES, HashRing, ring_key, stable_hash

__all__ = ["DEFAULT_VIRTUAL_NODES", "HashRing", "ring_key", "stable_hash"]
