"""Objects kept as their JSON bytes, with only their metadata decoded (in C,
by :mod:`msgspec`): what the decode-on-demand store
(:mod:`informers.cache.compact.raw`) is written with.

* :class:`RawObject`: an object as it came off the wire -- its JSON bytes
  (``data``) read as a read-only mapping equal to their exact decode.
  ``obj["metadata"]`` answers the :class:`RawMeta` fields (name, namespace,
  resourceVersion, uid, labels, annotations, ownerReferences, generation,
  deletionTimestamp, finalizers) from a record msgspec decodes without
  building the rest, so the key and metadata helpers of
  :mod:`informers.wire.objects` (:func:`~informers.meta_namespace_key`,
  :func:`~informers.get_labels`, :func:`~informers.namespace_index`, ...) and
  the runtime's owner mapping read it without a decode; any other read
  decodes the whole object once.
* :func:`split_list`: a list response body split into its envelope (decoded)
  and its items (each a :class:`RawObject`), the items never decoded.
* :func:`split_watch_event`: a watch line split into its type and its object
  (a :class:`RawObject`).
* :class:`Projection` and :func:`reads`: the fields an index function reads
  beyond metadata (``spec.nodeName``), declared so that a raw object gives
  them decoded in C, without the rest of the object.

Exactness: every answer is the exact parser's (:mod:`informers.wire._json`).
The record's values are decoded by msgspec as generic JSON (equal to what the
exact parser gives: integers beyond 64 bits exactly, duplicate keys the last
winning); anything msgspec refuses (NaN and infinities, lone surrogates,
nesting deeper than it follows, metadata that is not an object) is decoded by
the exact parser instead, and bytes that are not UTF-8 are refused with
:class:`ValueError` (msgspec does not check the strings it skips, so a
non-ASCII input is checked first). Cost: one pass of msgspec over an object's
bytes to read its metadata (about a tenth of a full parse), plus a UTF-8
check of non-ASCII input.

Thread-safety: a :class:`RawObject` is immutable after construction (its
full decode is cached on first use; a race decodes twice, harmlessly); the
functions are pure.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import msgspec

from informers.wire import _json

__all__ = [
    "Projection",
    "RawMeta",
    "RawObject",
    "loads_list",
    "loads_watch_event",
    "reads",
    "split_list",
    "split_watch_event",
]


class RawMeta(msgspec.Struct, rename="camel", frozen=True):
    """The metadata fields a :class:`RawObject` reads without the rest,
    ``UNSET`` when absent: the scalars (name, namespace, resourceVersion,
    uid, generation, deletionTimestamp) as the exact parser decodes them
    (any JSON value); labels, annotations, ownerReferences and finalizers as
    their JSON (:class:`msgspec.Raw`), which :attr:`RawObject.metadata`
    decodes when first read (a key or a namespace never needs them; about
    0.2 us each when read). Read through :attr:`RawObject.metadata`, a
    mapping with the JSON names and decoded values."""

    name: Any = msgspec.UNSET
    namespace: Any = msgspec.UNSET
    resource_version: Any = msgspec.UNSET
    uid: Any = msgspec.UNSET
    labels: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    annotations: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    owner_references: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    # What controllers' predicates and finalizer helpers read:
    generation: Any = msgspec.UNSET
    deletion_timestamp: Any = msgspec.UNSET
    finalizers: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


#: JSON name -> RawMeta attribute.
_META_FIELDS = {
    "name": "name",
    "namespace": "namespace",
    "resourceVersion": "resource_version",
    "uid": "uid",
    "labels": "labels",
    "annotations": "annotations",
    "ownerReferences": "owner_references",
    "generation": "generation",
    "deletionTimestamp": "deletion_timestamp",
    "finalizers": "finalizers",
}


class _Envelope(msgspec.Struct):
    metadata: RawMeta | msgspec.UnsetType | None = msgspec.UNSET


class _ListEnvelope(msgspec.Struct, rename="camel"):
    # A list's other members, decoded (UNSET: absent).
    api_version: Any = msgspec.UNSET
    kind: Any = msgspec.UNSET
    metadata: Any = msgspec.UNSET
    items: list[msgspec.Raw] | None = None


class _EventEnvelope(msgspec.Struct):
    type: str
    object: msgspec.Raw


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_list = msgspec.json.Decoder(_ListEnvelope).decode
_decode_event = msgspec.json.Decoder(_EventEnvelope).decode
_decode_value = msgspec.json.Decoder().decode
#: What msgspec raises for input it will not read (the exact parser decides).
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

_NOT_DECODED: Any = object()


def _check_utf8(data: bytes) -> None:
    if not data.isascii():
        data.decode("utf-8")  # UnicodeDecodeError is a ValueError


class _MetadataView(Mapping[str, Any]):
    """``metadata`` of a :class:`RawObject`: the :class:`RawMeta` fields
    without a decode, any other key (and iteration, ``len``) from the
    object's full decode. Read-only."""

    __slots__ = ("_decoded", "_meta", "_owner")

    def __init__(self, meta: RawMeta, owner: RawObject) -> None:
        self._meta = meta
        self._owner = owner
        self._decoded: dict[str, Any] | None = None  # the record's JSON fields, once read

    def _field(self, key: str, attr: str) -> Any:
        # A record field (UNSET: absent), its JSON decoded once.
        value = getattr(self._meta, attr)
        if type(value) is not msgspec.Raw:
            return value
        decoded = self._decoded
        if decoded is None:
            decoded = self._decoded = {}
        found = decoded.get(key, _NOT_DECODED)
        if found is _NOT_DECODED:
            try:
                found = _decode_value(value)
            except _REFUSED:  # what msgspec will not read: the exact parser's
                found = self._full()[key]
            decoded[key] = found
        return found

    def __getitem__(self, key: str) -> Any:
        attr = _META_FIELDS.get(key)
        if attr is not None:
            value = self._field(key, attr)
            if value is msgspec.UNSET:
                raise KeyError(key)
            return value
        return self._full()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when absent (a record field is read
        without a decode of the object)."""
        attr = _META_FIELDS.get(key)
        if attr is not None:
            value = self._field(key, attr)
            return default if value is msgspec.UNSET else value
        return self._full().get(key, default)

    def _full(self) -> Mapping[str, Any]:
        full: Mapping[str, Any] = self._owner.decoded()["metadata"]
        return full

    def __iter__(self) -> Iterator[str]:
        return iter(self._full())

    def __len__(self) -> int:
        return len(self._full())

    def __repr__(self) -> str:
        return f"<metadata of {self._owner!r}>"


class RawObject(Mapping[str, Any]):
    """An object kept as its JSON bytes (``data``), read as a read-only
    mapping equal to the exact parser's decode of them: ``obj["metadata"]``
    (also :attr:`metadata`) answers its :class:`RawMeta` fields without a
    decode; any other key, iteration, ``len`` and comparison decode the
    whole object (once: :meth:`decoded`).

    Raises :class:`ValueError` for bytes the exact parser refuses (invalid
    JSON that msgspec skips over, outside metadata, is refused when the
    object is first decoded). With ``lazy=True`` (what :func:`split_list` and
    :func:`split_watch_event` make, whose input was checked whole) the
    metadata record is read on first use instead of at once. Not a
    :class:`dict`: code testing ``type(obj) is dict`` takes its general path.
    """

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
            envelope = _decode_envelope(self.data)
        except _REFUSED:
            obj = self.decoded()  # ValueError for what the exact parser refuses
            meta = obj.get("metadata", msgspec.UNSET) if type(obj) is dict else msgspec.UNSET
        else:
            meta = envelope.metadata
            if type(meta) is RawMeta:
                meta = _MetadataView(meta, self)
        self._meta = meta
        return meta

    @property
    def metadata(self) -> Any:
        """``obj["metadata"]`` (``None`` when absent): a mapping answering the
        :class:`RawMeta` fields without a decode."""
        meta = self._meta
        if meta is _NOT_DECODED:
            meta = self._read_metadata()
        return None if meta is msgspec.UNSET else meta

    def forget(self) -> None:
        """Drop what was decoded and kept (the metadata record, the full
        decode): both are decoded again when next used. What a store that
        keeps only the bytes calls after ingest, so the decoded forms of a
        list's objects never all live at once."""
        self._meta = _NOT_DECODED
        self._decoded = _NOT_DECODED

    @classmethod
    def from_object(cls, obj: Any) -> RawObject:
        """The :class:`RawObject` of a decoded JSON document (encoded compactly
        with :mod:`json`; mostly for tests and fixtures)."""
        return cls(json.dumps(obj, separators=(",", ":")).encode())

    def decoded(self) -> Any:
        """The whole object, decoded by the exact parser (once; the result is
        shared by every reader: do not mutate it)."""
        obj = self._decoded
        if obj is _NOT_DECODED:
            obj = self._decoded = _json.loads(self.data)
        return obj

    def __getitem__(self, key: str) -> Any:
        if key == "metadata":
            meta = self._meta
            if meta is _NOT_DECODED:
                meta = self._read_metadata()
            if meta is msgspec.UNSET:
                raise KeyError(key)
            return meta
        obj = self.decoded()
        if type(obj) is not dict:
            raise KeyError(key)
        return obj[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when absent (``metadata`` without a
        decode)."""
        if key == "metadata":
            meta = self._meta
            if meta is _NOT_DECODED:
                meta = self._read_metadata()
            return default if meta is msgspec.UNSET else meta
        obj = self.decoded()
        return obj.get(key, default) if type(obj) is dict else default

    def __object_key__(self) -> str | None:
        """The key :func:`~informers.meta_namespace_key` gives, read from the
        metadata record (``"namespace/name"``, or ``"name"`` without a
        namespace); ``None`` when the record has no non-empty string name or
        a namespace that is neither a string nor absent (the general path
        then answers, or raises). The hook
        :func:`informers.wire.fastpath.object_key` calls."""
        meta = self._meta
        if meta is _NOT_DECODED:
            meta = self._read_metadata()
        if type(meta) is not _MetadataView:
            return None
        record = meta._meta
        name = record.name
        if type(name) is not str or not name:
            return None
        namespace = record.namespace
        if type(namespace) is str and namespace:
            return f"{namespace}/{name}"
        if namespace is msgspec.UNSET or namespace is None or namespace == "":
            return name
        return None

    def __iter__(self) -> Iterator[str]:
        obj = self.decoded()
        return iter(obj if type(obj) is dict else ())

    def __len__(self) -> int:
        obj = self.decoded()
        return len(obj) if type(obj) is dict else 0

    def __eq__(self, other: object) -> bool:
        if type(other) is RawObject:
            return self.data == other.data or self.decoded() == other.decoded()
        return bool(self.decoded() == other)

    __hash__ = None  # type: ignore[assignment]  # a mapping

    def __repr__(self) -> str:
        meta = self.metadata
        name = meta.get("name") if isinstance(meta, Mapping) else None
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
    if body.api_version is not msgspec.UNSET:  # decoded as the exact parser does
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


def loads_list(data: bytes) -> dict[str, Any]:
    """A list response body as a dict whose ``items`` are :class:`RawObject`
    (see :func:`split_list`): what a lister-watcher decoding on demand
    returns from ``list``."""
    envelope, items = split_list(data)
    envelope["items"] = items
    return envelope


def loads_watch_event(line: bytes) -> dict[str, Any]:
    """A watch line as ``{"type": ..., "object": RawObject}`` (see
    :func:`split_watch_event`): what a lister-watcher decoding on demand
    yields from a watch."""
    etype, obj = split_watch_event(line)
    return {"type": etype, "object": obj}


class Projection:
    """Some fields of objects, named by dotted paths (``"spec.nodeName"``,
    ``"status.phase"``; not ``metadata``, whose fields a
    :class:`RawObject` reads without a decode): :meth:`of` gives a raw
    object's fields decoded in C by a typed msgspec decoder that skips the
    rest, a projection costing about what the metadata record costs (a tenth
    of a full decode).

    Exactness: each field as the exact parser decodes it; a document msgspec
    refuses, or one where a path crosses a value that is neither an object
    nor ``null``, is projected from the exact parser's full decode instead.
    Thread-safe (immutable).
    """

    __slots__ = ("_decode", "paths")

    def __init__(self, *paths: str) -> None:
        if not paths:
            raise ValueError("a projection names at least one field")
        tree: dict[str, Any] = {}
        for path in paths:
            parts = path.split(".")
            if not all(parts) or parts[0] == "metadata":
                raise ValueError(
                    f"bad projection path {path!r}: dotted field names, not under metadata"
                )
            node = tree
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if child is None:
                    raise ValueError(f"projection path {path!r} goes under a projected field")
                node = child
            if node.get(parts[-1]):
                raise ValueError(f"projection path {path!r} is the parent of another one")
            node[parts[-1]] = None
        self.paths = paths
        self._decode: Callable[[bytes], Any] = msgspec.json.Decoder(
            _projection_struct(tree, [0], top=True)
        ).decode

    def of(self, obj: Any) -> Any:
        """``obj`` as an index function declaring these fields reads it: for
        a :class:`RawObject`, a dict of the projected fields (those present)
        and ``metadata`` (:attr:`RawObject.metadata`); anything else as it
        is."""
        if type(obj) is not RawObject:
            return obj
        try:
            found = self._decode(obj.data)
        except _REFUSED:
            full = obj.decoded()
            projected = _project(full, self._decode) if type(full) is dict else {}
        else:
            # The metadata record came in the same pass: keep it.
            if obj._meta is _NOT_DECODED and type(found.meta) is RawMeta:
                obj._meta = _MetadataView(found.meta, obj)
            projected = _to_dict(found)
        with contextlib.suppress(KeyError):  # no metadata, as in the full decode
            projected["metadata"] = obj["metadata"]
        return projected

    def __repr__(self) -> str:
        return f"Projection{self.paths!r}"


def _projection_struct(tree: dict[str, Any], counter: list[int], *, top: bool = False) -> type:
    """A msgspec Struct type decoding the fields of ``tree`` (JSON name ->
    subtree, or ``None`` for a leaf decoded as any JSON value); at the
    ``top``, also the metadata record (attribute ``meta``)."""
    fields: list[tuple[str, Any, Any]] = []
    rename: dict[str, str] = {}
    if top:
        fields.append(("meta", RawMeta | msgspec.UnsetType | None, msgspec.UNSET))
        rename["meta"] = "metadata"
    for i, (name, sub) in enumerate(tree.items()):
        kind: Any = Any if sub is None else _projection_struct(sub, counter) | None
        fields.append((f"f{i}", kind, msgspec.UNSET))
        rename[f"f{i}"] = name
    counter[0] += 1
    struct: type = msgspec.defstruct(f"_Projection{counter[0]}", fields, rename=rename)
    return struct


def _to_dict(value: Any) -> Any:
    """A decoded projection as plain dicts, absent fields left out."""
    if not isinstance(value, msgspec.Struct):
        return value
    config = value.__struct_fields__
    names = value.__struct_encode_fields__
    out: dict[str, Any] = {}
    for attr, name in zip(config, names, strict=True):
        if attr == "meta":
            continue  # the metadata record (see Projection.of)
        field = getattr(value, attr)
        if field is not msgspec.UNSET:
            out[name] = _to_dict(field)
    return out


def _project(full: dict[str, Any], decode: Callable[[bytes], Any]) -> dict[str, Any]:
    """The projection of a fully decoded object (what msgspec refused):
    the decoder's struct type tells the paths."""
    struct_type: Any = decode.__self__.type  # type: ignore[attr-defined]
    projected: dict[str, Any] = _project_value(full, struct_type)
    return projected


def _project_value(value: Any, struct_type: Any) -> Any:
    if type(value) is not dict:
        return value
    out: dict[str, Any] = {}
    hints = msgspec.structs.fields(struct_type)
    for field in hints:
        if field.name != "meta" and field.encode_name in value:
            sub = field.type
            inner = [t for t in getattr(sub, "__args__", ()) if isinstance(t, type)]
            nested = next((t for t in inner if issubclass(t, msgspec.Struct)), None)
            got = value[field.encode_name]
            out[field.encode_name] = got if nested is None else _project_value(got, nested)
    return out


_F = TypeVar("_F", bound=Callable[[Any], Any])


def reads(*paths: str) -> Callable[[_F], _F]:
    """Declare the fields an index (or key) function reads beyond metadata:
    ``@reads("spec.nodeName")`` makes it receive, for a :class:`RawObject`,
    the :class:`Projection` of those fields (with ``metadata``) instead of
    the object, so the decode-on-demand store indexes it without a full
    decode; for a dict it receives the dict. The function must read only the
    declared fields and metadata (anything else is absent from the
    projection). The wrapper keeps the function's name and has the
    projection as ``projection``."""
    projection = Projection(*paths)

    def decorate(func: _F) -> _F:
        of = projection.of

        @functools.wraps(func)
        def projected(obj: Any) -> Any:
            return func(of(obj))

        projected.projection = projection  # type: ignore[attr-defined]
        return projected  # type: ignore[return-value]

    return decorate
