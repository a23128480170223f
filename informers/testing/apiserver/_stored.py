"""The emulator's stored values: one version of an object with its JSON bytes
cached (:class:`Stored`), and one entry of a kind's event log (:class:`Event`).

Stored objects are never mutated after they are stored: a write stores a new
dict. :class:`Stored` caches an object's JSON bytes, so a list is a join of
cached bytes and an event is serialised once for all watchers.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["ADDED", "DELETED", "MODIFIED", "Event", "Stored", "join_items", "object_key"]

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


class Stored:
    """One version of an object, with its JSON bytes cached.

    ``obj`` is never mutated; its first keys are ``kind`` and ``apiVersion``.
    ``full_json`` is its serialisation; :attr:`list_rest` is the part of it an
    item of a list response needs after the opening brace (built-in kinds drop
    ``kind``/``apiVersion`` from list items), as a view of ``full_json``, so a
    list is one join of cached bytes. Computing the cache twice from two
    threads is harmless (same bytes).
    """

    __slots__ = ("_full", "builtin", "key", "obj", "partial", "rv")

    def __init__(self, obj: dict[str, Any], key: str, rv: int, builtin: bool) -> None:
        self.obj = obj
        self.key = key
        self.rv = rv
        self.builtin = builtin
        self._full: bytes | None = None
        #: This version's ``PartialObjectMetadata`` form, cached by :mod:`._partial`.
        self.partial: Stored | None = None

    @property
    def full_json(self) -> bytes:
        if self._full is None:
            self._full = json.dumps(self.obj, separators=(",", ":")).encode()
        return self._full

    @property
    def list_rest(self) -> bytes | memoryview:
        """This object as a list item, without its opening ``{``."""
        full = self.full_json
        if self.builtin:
            prefix = _type_prefix(self.obj.get("kind"), self.obj.get("apiVersion"))
            if full.startswith(prefix):
                return memoryview(full)[len(prefix) :]
            trimmed = {k: v for k, v in self.obj.items() if k not in ("kind", "apiVersion")}
            return json.dumps(trimmed, separators=(",", ":")).encode()[1:]
        return memoryview(full)[1:]

    def with_rv(self, rv: int) -> Stored:
        """A copy whose ``metadata.resourceVersion`` is ``rv`` (its JSON, if
        already made, edited rather than made again)."""
        obj = dict(self.obj)
        meta = dict(obj.get("metadata") or {})
        old = meta.get("resourceVersion")
        meta["resourceVersion"] = str(rv)
        obj["metadata"] = meta
        out = Stored(obj, self.key, rv, self.builtin)
        if self._full is not None and isinstance(old, str):
            before = b'"resourceVersion":' + json.dumps(old).encode()
            if self._full.count(before) == 1:  # only metadata's
                after = b'"resourceVersion":' + json.dumps(meta["resourceVersion"]).encode()
                out._full = self._full.replace(before, after)
        return out


_PREFIXES: dict[tuple[Any, Any], bytes] = {}


def _type_prefix(kind: Any, api_version: Any) -> bytes:
    """``{"kind":"Pod","apiVersion":"v1",`` as ``json.dumps`` writes it."""
    prefix = _PREFIXES.get((kind, api_version))
    if prefix is None:
        text = json.dumps({"kind": kind, "apiVersion": api_version, "x": 0}, separators=(",", ":"))
        prefix = text[: -len('"x":0}')].encode()
        _PREFIXES[(kind, api_version)] = prefix
    return prefix


def join_items(items: list[Stored]) -> bytes:
    """The JSON array of ``items`` as list items."""
    if not items:
        return b"[]"
    return b"".join((b"[{", b",{".join([s.list_rest for s in items]), b"]"))


@dataclasses.dataclass(slots=True)
class Event:
    """One entry of a kind's event log. For DELETED, ``obj`` is the last state
    carrying the deletion's RV; ``prev`` is the state before the change
    (``None`` for ADDED)."""

    rv: int
    type: str
    obj: Stored
    prev: Stored | None


def object_key(namespace: str, name: str) -> str:
    """The storage key of an object: ``namespace/name``, or ``name`` for a
    cluster-scoped one."""
    return f"{namespace}/{name}" if namespace else name
