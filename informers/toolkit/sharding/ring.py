"""A consistent-hash ring over shard names, and the ring key of an object.

Each shard owns ``virtual_nodes`` points on a 64-bit ring; a key belongs to
the shard of the first point at or after the key's hash (wrapping around).
Adding a shard moves to it only the keys that now fall before its points;
removing one moves only its own keys, each to its successor: no other key
changes shard. More virtual nodes spread the keys more evenly (the tests
state the bound measured for the default).

The hash is BLAKE2b cut to 64 bits (:func:`stable_hash`): in the standard
library, stable across processes, machines and Python versions (unlike
:func:`hash`, which is salted per process), and well mixed for short,
similar keys such as ``apps/ReplicaSet/default/web-1``, so every replica of
a controller computes the same assignment from the same set of shards.

Objects controlled by an owner hash by their controller owner
(:func:`ring_key`), so a ReplicaSet and its Pods land on the same shard and
one shard sees a parent together with its children.

Rings are immutable: :meth:`HashRing.with_shard` and
:meth:`HashRing.without_shard` return new rings; share them freely between
threads.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["DEFAULT_VIRTUAL_NODES", "HashRing", "ring_key", "stable_hash"]

#: Points per shard on the ring.
DEFAULT_VIRTUAL_NODES = 128

_SPACE = 1 << 64  # the hash space, [0, 2**64)


def stable_hash(text: str) -> int:
    """The ring's 64-bit hash of ``text`` (BLAKE2b, 8-byte digest, big-endian).
    Pure; the same everywhere."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class HashRing:
    """An immutable consistent-hash ring over ``shards`` (names; duplicates
    collapse). An empty ring assigns nothing (:meth:`shard_for` is ``None``).
    """

    __slots__ = ("_hashes", "_owners", "_shards", "_virtual_nodes")

    def __init__(self, shards: Iterable[str] = (), *, virtual_nodes: int = DEFAULT_VIRTUAL_NODES):
        if virtual_nodes < 1:
            raise ValueError(f"virtual_nodes must be at least 1, not {virtual_nodes}")
        names = sorted(set(shards))
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"shard names are non-empty strings, not {name!r}")
        self._shards = tuple(names)
        self._virtual_nodes = virtual_nodes
        points = sorted(
            (stable_hash(f"{name}#{index}"), name)
            for name in names
            for index in range(virtual_nodes)
        )
        self._hashes = [h for h, _ in points]
        self._owners = [name for _, name in points]

    @property
    def shards(self) -> tuple[str, ...]:
        """The shard names, sorted."""
        return self._shards

    @property
    def virtual_nodes(self) -> int:
        """Points per shard."""
        return self._virtual_nodes

    def __len__(self) -> int:
        return len(self._shards)

    def __contains__(self, shard: object) -> bool:
        return shard in self._shards

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HashRing):
            return NotImplemented
        return (self._shards, self._virtual_nodes) == (other._shards, other._virtual_nodes)

    def __hash__(self) -> int:
        return hash((self._shards, self._virtual_nodes))

    def __repr__(self) -> str:
        return f"HashRing({list(self._shards)!r}, virtual_nodes={self._virtual_nodes})"

    def shard_for(self, key: str) -> str | None:
        """The shard that owns ``key`` (``None`` on an empty ring)."""
        return self.shard_for_hash(stable_hash(key))

    def shard_for_hash(self, value: int) -> str | None:
        """The shard that owns the 64-bit hash ``value``: the owner of the
        first point at or after it, wrapping around (``None`` on an empty
        ring)."""
        if not self._hashes:
            return None
        index = bisect.bisect_left(self._hashes, value)
        return self._owners[index if index < len(self._owners) else 0]

    def ranges(self, shard: str) -> tuple[tuple[int, int], ...]:
        """The half-open hash ranges ``[start, end)`` of ``[0, 2**64)`` that
        ``shard`` owns (:meth:`shard_for_hash`), sorted, adjacent ones
        merged; empty when it is not on the ring. The ranges of all shards
        tile the space: what a server-side ``shardSelector`` needs
        (:func:`~informers.toolkit.sharding.selector.ring_shard_selector`)."""
        if shard not in self._shards:
            return ()
        out: list[tuple[int, int]] = []
        previous_end = 0  # keys in [previous_end, point + 1) go to the point
        for point, owner in zip(self._hashes, self._owners, strict=True):
            start, end = previous_end, point + 1
            previous_end = max(previous_end, end)
            if owner != shard or start >= end:
                continue  # not ours, or a point equal to the one before
            if out and out[-1][1] == start:
                out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
        if self._owners[0] == shard and previous_end < _SPACE:  # the wrap-around
            if out and out[-1][1] == previous_end:
                out[-1] = (out[-1][0], _SPACE)
            else:
                out.append((previous_end, _SPACE))
        return tuple(out)

    def with_shard(self, shard: str) -> HashRing:
        """This ring plus ``shard``."""
        return HashRing((*self._shards, shard), virtual_nodes=self._virtual_nodes)

    def without_shard(self, shard: str) -> HashRing:
        """This ring minus ``shard`` (unchanged when it is not in it)."""
        return HashRing((s for s in self._shards if s != shard), virtual_nodes=self._virtual_nodes)


def _controller_owner(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("name"):
            return ref
    return None


def ring_key(obj: Mapping[str, Any], group: str, kind: str) -> str:
    """The ring key of ``obj`` of ``group``/``kind``:
    ``group/Kind/namespace/name`` of its controller owner when it has one
    (``ownerReferences`` entry with ``controller: true``), else of itself.

    The group of an owner is the part of its ``apiVersion`` before the slash
    (``""`` for the core group). Raises :class:`ValueError` for an object
    without ``metadata.name``.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        raise ValueError("an object without metadata.name has no ring key")
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    owner = _controller_owner(obj)
    if owner is not None:
        api_version = str(owner.get("apiVersion") or "")
        owner_group = api_version.rpartition("/")[0]
        return f"{owner_group}/{owner.get('kind', '')}/{namespace}/{owner['name']}"
    return f"{group}/{kind}/{namespace}/{meta['name']}"
