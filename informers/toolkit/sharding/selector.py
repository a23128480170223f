"""Server-side sharded list and watch: the ``shardSelector`` of KEP-5866
(an alpha feature of Kubernetes 1.36 behind the ``ShardedListAndWatch``
feature gate), for the replicas of a sharded controller.

The selectors live in the wire layer, :mod:`informers.wire.selectors.shard`,
which documents their grammar, the server's hash and what a server without
the feature does (the list-watch and the emulator use them), and are
re-exported here: :meth:`ShardSelector.parse` and ``str()``,
:meth:`ShardSelector.matches`, and the selector of one replica:
:func:`even_shard_selector` (replica ``i`` of ``n`` owns one ``n``-th of the
hash space) or :func:`ring_shard_selector` (the ranges a shard owns on a
:class:`~informers.toolkit.sharding.HashRing`, which is then a ring over the server's
hash of the field, not over :func:`~informers.toolkit.sharding.ring_key`: owned
objects no longer follow their owner, see the sharding guide).

Everything here is pure and immutable; share it freely between threads.
"""

from __future__ import annotations

from informers.toolkit.sharding.ring import HashRing
from informers.wire.selectors.shard import (
    HASH_SPACE,
    SHARD_FIELDS,
    SHARD_INFO_FIELD,
    ShardRange,
    ShardSelector,
    even_shard_range,
    even_shard_selector,
    fnv1a_64,
)

__all__ = [
    "HASH_SPACE",
    "SHARD_FIELDS",
    "SHARD_INFO_FIELD",
    "ShardRange",
    "ShardSelector",
    "even_shard_range",
    "even_shard_selector",
    "fnv1a_64",
    "ring_shard_selector",
]


def ring_shard_selector(ring: HashRing, shard: str, field: str = "uid") -> str:
    """The ``shardSelector`` of ``shard`` on ``ring``: the hash ranges the
    shard owns (:meth:`~informers.toolkit.sharding.HashRing.ranges`), so the shards
    of a ring partition every set of objects, and adding or removing a shard
    moves only the objects the ring moves. :class:`ValueError` when
    ``shard`` is not on the ring."""
    if shard not in ring:
        raise ValueError(f"shard {shard!r} is not on the ring")
    return str(ShardSelector.of(ring.ranges(shard), field))
