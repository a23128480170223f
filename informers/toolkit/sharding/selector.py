"""Server-side sharded list and watch: the ``shardSelector`` of KEP-5866.

Kubernetes 1.36 added, as an alpha feature behind the ``ShardedListAndWatch``
feature gate (off by default), a ``shardSelector`` query parameter on list
and watch requests. Its value is one or more hash ranges joined by ``||``::

    shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
    shardRange(object.metadata.uid, '0x0', '0x4000000000000000') ||
        shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')

The server hashes the named field of every object with 64-bit FNV-1a (over
the field's UTF-8 bytes) and keeps the objects whose hash ``h`` falls in one
of the ranges, ``start <= h < end``; bounds are single-quoted hexadecimal
literals with a ``0x`` prefix over the space ``[0, 2**64)`` (the upper bound
``'0x10000000000000000'`` is 2**64 itself). The fields are
``object.metadata.uid`` and ``object.metadata.namespace``, and every range
of one selector names the same field. A server that honours the selector
echoes it in the list's ``metadata.shardInfo.selector``; one without the
feature ignores the parameter and sends everything (no ``shardInfo``), so a
client should be ready to filter by itself (:class:`ShardSelector` matches
objects locally, and :class:`~informers.rest.listwatch.HTTPListerWatcher` does it
for every request that carries one).

This module parses and prints selectors (:meth:`ShardSelector.parse`,
``str()``), matches objects (:meth:`ShardSelector.matches`), and builds the
selector of one replica: :func:`even_shard_selector` (replica ``i`` of ``n``
owns one ``n``-th of the hash space) or :func:`ring_shard_selector` (the
ranges a shard owns on a :class:`~informers.toolkit.sharding.HashRing`, which is
then a ring over the server's hash of the field, not over
:func:`~informers.toolkit.sharding.ring_key`: owned objects do not follow their
owner, see the sharding guide).

Everything here is pure and immutable; share it freely between threads.
"""

from __future__ import annotations

from informers.toolkit.sharding.ring import HashRing
from informers.wire.selectors import shard as _shard_selector
from informers.wire.selectors.shard import (
    ShardRange,
    ShardSelector,
    even_shard_range,
    even_shard_selector,
    fnv1a_64,
)

#: The size of the hash space, 2**64; ranges lie within ``[0, HASH_SPACE]``.
HASH_SPACE = _shard_selector.HASH_SPACE

#: The fields a shard selector may hash, as the selector names them.
SHARD_FIELDS = _shard_selector.SHARD_FIELDS

#: The list metadata field in which a server that honours a selector echoes it.
SHARD_INFO_FIELD = _shard_selector.SHARD_INFO_FIELD

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
