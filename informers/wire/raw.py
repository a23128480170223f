"""Objects kept as their JSON bytes, with only their metadata decoded (in C,
by :mod:`msgspec`): what the decode-on-demand store
(:mod:`informers.cache.compact.raw`) is written with.

* :class:`RawObject`: an object as it came off the wire -- its JSON bytes
  (``data``) beside a :class:`RawMeta` record (``metadata``: name, namespace,
  resourceVersion, uid, labels, annotations, ownerReferences) decoded without
  building the rest. It is an attribute-style object, so the key and metadata
  helpers of :mod:`informers.wire.objects` (:func:`~informers.meta_namespace_key`,
  :func:`~informers.get_labels`, :func:`~informers.namespace_index`, ...) read
  it as they read a dict, without a decode.
* :func:`split_list`: a list response body split into its envelope (decoded)
  and its items (each a :class:`RawObject`), the items never decoded.
* :func:`split_watch_event`: a watch line split into its type and its object
  (a :class:`RawObject`).

Exactness: every answer is the exact parser's (:mod:`informers.wire._json`).
msgspec decodes the metadata record only of bytes it reads as the exact
parser would; on anything it refuses (NaN and infinities, lone surrogates, a
mistyped metadata field, nesting deeper than it follows) the exact parser
decodes the object instead and its ``metadata`` is that decode's. Bytes that
are not UTF-8 are refused with :class:`ValueError` (msgspec does not check
the strings it skips, so a non-ASCII input is checked first). Integers beyond
64 bits, duplicate keys (the last wins) and deep nesting decode as
:func:`json.loads` decodes them, because the full decode is the exact
parser's. Cost: one pass of msgspec over an object's bytes to read its
metadata (about a tenth of a full parse), plus a UTF-8 check of non-ASCII
input.

Thread-safety: a :class:`RawObject` is immutable after construction (its
full decode is cached on first use; a race decodes twice, harmlessly); the
functions are pure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from informers.wire import _json

__all__ = [
    "RawMeta",
    "RawObject",
    "RawOwnerReference",
    "split_list",
    "split_watch_event",
]


class RawOwnerReference(msgspec.Struct, rename="camel", frozen=True):
    """One ``metadata.ownerReferences`` entry (attribute names snake_case)."""

    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class RawMeta(msgspec.Struct, rename="camel", frozen=True):
    """The metadata fields a :class:`RawObject` decodes; attribute names are
    snake_case, as the ``kubernetes`` client's models have them, so the
    metadata helpers of :mod:`informers.wire.objects` read it."""

    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = None
    uid: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[RawOwnerReference] | None = None


class _Envelope(msgspec.Struct):
    metadata: RawMeta | None = None


class _ListEnvelope(msgspec.Struct, rename="camel"):
    # A list's other members, decoded (UNSET: absent).
    api_version: str | msgspec.UnsetType = msgspec.UNSET
    kind: str | msgspec.UnsetType = msgspec.UNSET
    metadata: dict[str, Any] | msgspec.UnsetType | None = msgspec.UNSET
    items: list[msgspec.Raw] | None = None


class _EventEnvelope(msgspec.Struct):
    type: str
    object: msgspec.Raw


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_list = msgspec.json.Decoder(_ListEnvelope).decode
_decode_event = msgspec.json.Decoder(_EventEnvelope).decode
#: What msgspec raises for input it will not read (the exact parser decides).
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

_NOT_DECODED: Any = object()


def _check_utf8(data: bytes) -> None:
    if not data.isascii():
        data.decode("utf-8")  # UnicodeDecodeError is a ValueError


class RawObject:
    """An object kept as its JSON bytes (``data``) with its metadata record
    (:attr:`metadata`).

    Raises :class:`ValueError` for bytes the exact parser refuses (invalid
    JSON that msgspec skips over, in fields outside metadata, is refused when
    the object is first decoded). With ``lazy=True`` (what :func:`split_list`
    makes, whose body was checked whole) the metadata record is decoded on
    first use instead of at once. Immutable; :meth:`decoded` decodes the
    whole object once and keeps it."""

    __slots__ = ("_decoded", "_meta", "data")

    data: bytes

    def __init__(self, data: bytes, *, checked: bool = False, lazy: bool = False) -> None:
        # checked: the caller has verified that data is UTF-8.
        if not checked:
            _check_utf8(data)
        self.data = data
        self._decoded = _NOT_DECODED
        self._meta = _NOT_DECODED
        if not lazy:
            self._read_metadata()

    def _read_metadata(self) -> Any:
        try:
            meta = _decode_envelope(self.data).metadata
        except _REFUSED:
            obj = self.decoded()  # ValueError for what the exact parser refuses
            meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        self._meta = meta
        return meta

    @property
    def metadata(self) -> Any:
        """A :class:`RawMeta`, ``None`` when the object has none, or -- for
        input msgspec refuses -- the exact parser's decoded metadata."""
        meta = self._meta
        return self._read_metadata() if meta is _NOT_DECODED else meta

    def forget_metadata(self) -> None:
        """Drop the metadata record kept since it was read (it is decoded
        again when next read): what a store that keeps only the bytes calls
        after ingest, so a list's records never all live at once."""
        self._meta = _NOT_DECODED

    @classmethod
    def from_object(cls, obj: Any) -> RawObject:
        """The :class:`RawObject` of a decoded JSON document (encoded compactly
        with :mod:`json`; mostly for tests and fixtures)."""
        return cls(json.dumps(obj, separators=(",", ":")).encode())

    def decoded(self) -> Any:
        """The whole object, decoded by the exact parser (once)."""
        obj = self._decoded
        if obj is _NOT_DECODED:
            obj = self._decoded = _json.loads(self.data)
        return obj

    def __repr__(self) -> str:
        meta = self.metadata
        name = meta.get("name") if isinstance(meta, Mapping) else getattr(meta, "name", None)
        return f"<RawObject {name!r}: {len(self.data)} bytes>"


def split_list(data: bytes) -> tuple[dict[str, Any], list[Any]]:
    """A list response body split into its envelope (the decoded body with
    ``items`` set to ``[]``; ``null`` items count as none) and its items, each
    a :class:`RawObject` -- or, when msgspec refuses the body, each as the
    exact parser decoded it (a dict). Raises :class:`ValueError` for a body
    the exact parser refuses, and for one that is not an object whose
    ``items`` is a list."""
    _check_utf8(data)
    try:
        body = _decode_list(data)
    except _REFUSED:
        parsed = _json.loads(data)
        if not isinstance(parsed, dict):
            raise ValueError("a list response is a JSON object") from None
        found = parsed.get("items")
        if found is not None and not isinstance(found, list):
            raise ValueError("a list response's items are a JSON array") from None
        parsed["items"] = []
        return parsed, found or []
    envelope: dict[str, Any] = {}
    if body.api_version is not msgspec.UNSET:
        envelope["apiVersion"] = body.api_version
    if body.kind is not msgspec.UNSET:
        envelope["kind"] = body.kind
    if body.metadata is not msgspec.UNSET:
        envelope["metadata"] = body.metadata
    envelope["items"] = []
    return envelope, [RawObject(bytes(item), checked=True, lazy=True) for item in body.items or ()]


def split_watch_event(line: bytes) -> tuple[str, Any]:
    """A watch line split into its ``type`` and its ``object`` (a
    :class:`RawObject`, or the exact parser's decode of a line msgspec
    refuses). Raises :class:`ValueError` for a line the exact parser refuses
    or that is not an object with a string ``type`` and an ``object``."""
    _check_utf8(line)
    try:
        event = _decode_event(line)
    except _REFUSED:
        parsed = _json.loads(line)
        if not isinstance(parsed, dict) or not isinstance(parsed.get("type"), str):
            raise ValueError("a watch event is a JSON object with a string type") from None
        if "object" not in parsed:
            raise ValueError("a watch event has an object") from None
        return parsed["type"], parsed["object"]
    return event.type, RawObject(bytes(event.object), checked=True, lazy=True)
