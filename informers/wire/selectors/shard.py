"""The shard selector of KEP-5866: server-side sharded list and watch.

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
selector of replica ``i`` of ``n`` owning one ``n``-th of the hash space
(:func:`even_shard_selector`). :mod:`informers.toolkit.sharding.selector` re-exports
it, with the selector of a shard on a consistent-hash ring.

Everything here is pure and immutable; share it freely between threads.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from informers.errors import SelectorParseError

__all__ = [
    "HASH_SPACE",
    "SHARD_FIELDS",
    "SHARD_INFO_FIELD",
    "ShardRange",
    "ShardSelector",
    "even_shard_range",
    "even_shard_selector",
    "fnv1a_64",
]

#: The size of the hash space, 2**64; ranges lie within ``[0, HASH_SPACE]``.
HASH_SPACE = 1 << 64

#: The fields a shard selector may hash, as the selector names them.
SHARD_FIELDS = ("object.metadata.uid", "object.metadata.namespace")

#: The list metadata field in which a server that honours a selector echoes it.
SHARD_INFO_FIELD = "shardInfo"

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = HASH_SPACE - 1


@functools.lru_cache(maxsize=1 << 16)
def fnv1a_64(text: str) -> int:
    """64-bit FNV-1a of the UTF-8 bytes of ``text``: the hash the server
    computes for a shard selector (Go's ``hash/fnv.New64a``). Pure; the
    latest results are cached (a uid never changes, and every list and
    watch event hashes it again). Thread-safe."""
    h, prime, mask = _FNV_OFFSET, _FNV_PRIME, _MASK
    for byte in text.encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * prime) & mask
    return h


@dataclass(frozen=True, slots=True, order=True)
class ShardRange:
    """A half-open hash range ``[start, end)``, ``0 <= start < end <= 2**64``
    (:class:`ValueError` otherwise)."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end <= HASH_SPACE:
            raise ValueError(
                "a shard range needs 0 <= start < end <= 2**64, "
                f"not [{self.start:#x}, {self.end:#x})"
            )

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.start <= value < self.end

    def __str__(self) -> str:
        return f"[{_hex(self.start)}, {_hex(self.end)})"


def _hex(value: int) -> str:
    # Zero-padded to the 16 digits of the space (17 for 2**64 itself), as
    # Kubernetes' own examples write the bounds.
    return f"0x{value:016x}"


_TERM = re.compile(
    r"""\s*shardRange\s*\(\s*(?P<field>[A-Za-z_][\w.]*)\s*,
        \s*(?P<q1>['"])(?P<start>[^'"]*)(?P=q1)\s*,
        \s*(?P<q2>['"])(?P<end>[^'"]*)(?P=q2)\s*\)\s*""",
    re.VERBOSE,
)
_OR = re.compile(r"\s*\|\|\s*")
_HEX = re.compile(r"0x[0-9a-fA-F]{1,17}")


def _bound(text: str, which: str, term: str) -> int:
    if not _HEX.fullmatch(text):
        raise SelectorParseError(
            f"invalid shard selector: {which} of {term!r} must be a quoted hexadecimal "
            f"literal with a 0x prefix, such as '0x8000000000000000', not {text!r}"
        )
    return int(text, 16)


@dataclass(frozen=True, slots=True)
class ShardSelector:
    """A parsed shard selector: the ``field`` hashed (one of
    :data:`SHARD_FIELDS`) and the ``ranges`` (at least one) an object's hash
    must fall in, one of them.

    ``str()`` is the canonical wire form (bounds zero-padded to 16 digits,
    ranges joined by ``" || "``), which :meth:`parse` reads back to an equal
    selector.
    """

    field: str
    ranges: tuple[ShardRange, ...]

    def __post_init__(self) -> None:
        if self.field not in SHARD_FIELDS:
            raise ValueError(f"a shard selector hashes one of {SHARD_FIELDS}, not {self.field!r}")
        if not self.ranges:
            raise ValueError("a shard selector needs at least one range")

    @classmethod
    def parse(cls, text: str) -> ShardSelector:
        """Parse the value of a ``shardSelector`` parameter.

        Raises :class:`~informers.errors.SelectorParseError` (a
        :class:`ValueError`) naming what is wrong: an empty or malformed
        expression, a field other than :data:`SHARD_FIELDS`, ranges over
        different fields, a bound that is not a quoted ``0x`` hexadecimal
        literal, or a range that is empty or leaves ``[0, 2**64]``.
        """
        if not isinstance(text, str) or not text.strip():
            raise SelectorParseError("invalid shard selector: empty expression")
        terms = _OR.split(text.strip())
        field: str | None = None
        ranges: list[ShardRange] = []
        for term in terms:
            match = _TERM.fullmatch(term)
            if match is None:
                raise SelectorParseError(
                    f"invalid shard selector: expected shardRange(<field>, '<0xstart>', "
                    f"'<0xend>') joined by ||, got {term.strip()!r}"
                )
            name = match["field"]
            if name not in SHARD_FIELDS:
                raise SelectorParseError(
                    f"invalid shard selector: unsupported field {name!r}, expected one of "
                    + ", ".join(SHARD_FIELDS)
                )
            if field is not None and name != field:
                raise SelectorParseError(
                    f"invalid shard selector: every range must hash the same field "
                    f"({field!r} and {name!r})"
                )
            field = name
            start = _bound(match["start"], "the start", term.strip())
            end = _bound(match["end"], "the end", term.strip())
            if not 0 <= start < end <= HASH_SPACE:
                raise SelectorParseError(
                    f"invalid shard selector: the range of {term.strip()!r} must satisfy "
                    "0x0 <= start < end <= 0x10000000000000000"
                )
            ranges.append(ShardRange(start, end))
        assert field is not None
        return cls(field, tuple(ranges))

    @classmethod
    def of(
        cls, ranges: Iterable[ShardRange | tuple[int, int]], field: str = "uid"
    ) -> ShardSelector:
        """A selector over ``ranges`` (adjacent and overlapping ones merged,
        sorted). ``field`` is a full name from :data:`SHARD_FIELDS` or its
        last part (``"uid"``, ``"namespace"``). :class:`ValueError` for no
        ranges or an unknown field."""
        full = field if field.startswith("object.") else f"object.metadata.{field}"
        merged: list[ShardRange] = []
        for r in sorted(r if isinstance(r, ShardRange) else ShardRange(*r) for r in ranges):
            if merged and r.start <= merged[-1].end:
                if r.end > merged[-1].end:
                    merged[-1] = ShardRange(merged[-1].start, r.end)
                continue
            merged.append(r)
        return cls(full, tuple(merged))

    def __str__(self) -> str:
        return " || ".join(
            f"shardRange({self.field}, '{_hex(r.start)}', '{_hex(r.end)}')" for r in self.ranges
        )

    def value_of(self, obj: Mapping[str, Any]) -> str:
        """The value of the selector's field in ``obj`` (``""`` when unset,
        as a cluster-scoped object's namespace)."""
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(meta, Mapping):
            return ""
        value = meta.get(self.field.rpartition(".")[2])
        return value if isinstance(value, str) else ""

    def hash_of(self, obj: Mapping[str, Any]) -> int:
        """The hash of ``obj`` the ranges are compared with."""
        return fnv1a_64(self.value_of(obj))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` (a parsed object) falls in one of the ranges."""
        h = self.hash_of(obj)
        return any(r.start <= h < r.end for r in self.ranges)


def even_shard_range(index: int, count: int) -> ShardRange:
    """The ``index``-th of ``count`` equal, adjacent ranges tiling the hash
    space (``[index * 2**64 // count, (index + 1) * 2**64 // count)``).
    :class:`ValueError` unless ``0 <= index < count``."""
    if not 0 <= index < count:
        raise ValueError(f"shard index must satisfy 0 <= index < count, not {index} of {count}")
    return ShardRange(index * HASH_SPACE // count, (index + 1) * HASH_SPACE // count)


def even_shard_selector(index: int, count: int, field: str = "uid") -> str:
    """The ``shardSelector`` of replica ``index`` of ``count`` owning one
    ``count``-th of the space (as in Kubernetes' own examples); the
    selectors of ``0 .. count-1`` partition every set of objects."""
    return str(ShardSelector.of([even_shard_range(index, count)], field))
