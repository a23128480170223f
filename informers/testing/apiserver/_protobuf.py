"""Decoding of Kubernetes protobuf request bodies into JSON-shaped dicts.

``kubectl create namespace|configmap|secret`` (1.32 and later) sends its
object as ``application/vnd.kubernetes.protobuf``: the four magic bytes
``k8s\\0`` and then a ``runtime.Unknown`` message::

    Unknown  { 1: TypeMeta {1: apiVersion, 2: kind}, 2: raw (the object's own
               encoding), 3: contentEncoding, 4: contentType }

:func:`decode_object` understands the core v1 kinds ``Namespace``,
``ConfigMap`` and ``Secret`` (with their ``ObjectMeta``), which is what
kubectl's imperative commands send. Anything else raises
:class:`UnsupportedMediaError`, which the server answers with a 415 Status.
The result has the shape the JSON form of the object would have: empty
strings, maps and lists are left out (the Go types mark them ``omitempty``)
and Secret ``data`` (bytes) is base64-encoded.

The wire format is decoded by hand (varints, fixed 32/64-bit fields,
length-delimited fields, map entries); unknown fields are skipped. Pure
functions, thread-safe.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable, Iterator
from typing import Any

from informers.errors import InformersError

__all__ = ["MAGIC", "PROTOBUF_MEDIA_TYPE", "UnsupportedMediaError", "decode_object"]

PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: Every Kubernetes protobuf body starts with these bytes.
MAGIC = b"k8s\x00"

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


class UnsupportedMediaError(InformersError, ValueError):
    """The protobuf body cannot be decoded here (malformed, or a kind this
    emulator has no protobuf schema for); the server answers 415."""


def decode_object(body: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\0``-prefixed protobuf body into the object's JSON form
    (``apiVersion`` and ``kind`` included).

    Raises :class:`UnsupportedMediaError` for malformed bodies and kinds other
    than core v1 Namespace, ConfigMap and Secret.
    """
    if not body.startswith(MAGIC):
        raise UnsupportedMediaError("protobuf body does not start with the k8s magic prefix")
    try:
        return _decode_unknown(memoryview(body)[len(MAGIC) :])
    except _WireError as exc:
        raise UnsupportedMediaError(f"malformed protobuf body: {exc}") from exc


class _WireError(Exception):
    """The bytes are not a valid protobuf encoding of the expected message."""


def _read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise _WireError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise _WireError("varint longer than 10 bytes")


def _fields(data: memoryview) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) for every field of a message:
    an int for varints and fixed fields, a memoryview for length-delimited."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _WireError("field number 0")
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
            yield number, wire, value
        elif wire == _BYTES:
            length, pos = _read_varint(data, pos)
            if pos + length > len(data):
                raise _WireError("length-delimited field runs past the end")
            yield number, wire, data[pos : pos + length]
            pos += length
        elif wire == _FIXED64:
            if pos + 8 > len(data):
                raise _WireError("truncated fixed64")
            yield number, wire, int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == _FIXED32:
            if pos + 4 > len(data):
                raise _WireError("truncated fixed32")
            yield number, wire, int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise _WireError(f"unsupported wire type {wire}")


def _expect_bytes(wire: int, value: Any) -> memoryview:
    if wire != _BYTES:
        raise _WireError("expected a length-delimited field")
    assert isinstance(value, memoryview)
    return value


def _expect_varint(wire: int, value: Any) -> int:
    if wire != _VARINT:
        raise _WireError("expected a varint field")
    assert isinstance(value, int)
    return value


def _string(wire: int, value: Any) -> str:
    try:
        return bytes(_expect_bytes(wire, value)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _WireError("string field is not UTF-8") from exc


def _int64(wire: int, value: Any) -> int:
    number = _expect_varint(wire, value)
    return number - (1 << 64) if number >= 1 << 63 else number


def _map_entry(data: memoryview, value_of: Callable[[int, Any], Any]) -> tuple[str, Any]:
    key, value = "", None
    for number, wire, raw in _fields(data):
        if number == 1:
            key = _string(wire, raw)
        elif number == 2:  # map entry value field
            value = value_of(wire, raw)
    if value is None:
        value = value_of(_BYTES, memoryview(b""))
    return key, value


def _bytes_b64(wire: int, value: Any) -> str:
    return base64.b64encode(bytes(_expect_bytes(wire, value))).decode("ascii")


def _time(data: memoryview) -> str | None:
    """A ``meta.v1.Time`` (seconds, nanos) as RFC 3339; ``None`` for the zero time."""
    seconds = nanos = 0
    for number, wire, raw in _fields(data):
        if number == 1:
            seconds = _int64(wire, raw)
        elif number == 2:
            nanos = _int64(wire, raw)
    if seconds == 0 and nanos == 0:
        return None
    try:
        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise _WireError("timestamp out of range") from exc
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _owner_reference(data: memoryview) -> dict[str, Any]:
    ref: dict[str, Any] = {}
    names = {5: "apiVersion", 1: "kind", 3: "name", 4: "uid"}
    for number, wire, raw in _fields(data):
        if number in names:
            ref[names[number]] = _string(wire, raw)
        elif number == 6:
            ref["controller"] = bool(_expect_varint(wire, raw))
        elif number == 7:
            ref["blockOwnerDeletion"] = bool(_expect_varint(wire, raw))
    return ref


def _object_meta(data: memoryview) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    strings = {1: "name", 2: "generateName", 3: "namespace", 5: "uid", 6: "resourceVersion"}
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    finalizers: list[str] = []
    owners: list[dict[str, Any]] = []
    for number, wire, raw in _fields(data):
        if number in strings:
            text = _string(wire, raw)
            if text:
                meta[strings[number]] = text
        elif number == 7:  # generation
            generation = _int64(wire, raw)
            if generation:
                meta["generation"] = generation
        elif number in (8, 9):  # creationTimestamp, deletionTimestamp
            stamp = _time(_expect_bytes(wire, raw))
            if stamp is not None:
                key = "creationTimestamp" if number == 8 else "deletionTimestamp"
                meta[key] = stamp
        elif number == 10:  # deletionGracePeriodSeconds
            meta["deletionGracePeriodSeconds"] = _int64(wire, raw)
        elif number == 11:
            key, text = _map_entry(_expect_bytes(wire, raw), _string)
            labels[key] = text
        elif number == 12:
            key, text = _map_entry(_expect_bytes(wire, raw), _string)
            annotations[key] = text
        elif number == 13:
            owners.append(_owner_reference(_expect_bytes(wire, raw)))
        elif number == 14:
            finalizers.append(_string(wire, raw))
        # 4 selfLink, 15 clusterName, 17 managedFields: not kept
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    return meta


def _decode_config_map(data: memoryview) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    values: dict[str, str] = {}
    binary: dict[str, str] = {}
    for number, wire, raw in _fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(_expect_bytes(wire, raw))
        elif number == 2:
            key, text = _map_entry(_expect_bytes(wire, raw), _string)
            values[key] = text
        elif number == 3:
            key, text = _map_entry(_expect_bytes(wire, raw), _bytes_b64)
            binary[key] = text
        elif number == 4:
            obj["immutable"] = bool(_expect_varint(wire, raw))
    if values:
        obj["data"] = values
    if binary:
        obj["binaryData"] = binary
    return obj


def _decode_secret(data: memoryview) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    values: dict[str, str] = {}
    string_data: dict[str, str] = {}
    for number, wire, raw in _fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(_expect_bytes(wire, raw))
        elif number == 2:
            key, text = _map_entry(_expect_bytes(wire, raw), _bytes_b64)
            values[key] = text
        elif number == 3:
            secret_type = _string(wire, raw)
            if secret_type:
                obj["type"] = secret_type
        elif number == 4:
            key, text = _map_entry(_expect_bytes(wire, raw), _string)
            string_data[key] = text
        elif number == 5:
            obj["immutable"] = bool(_expect_varint(wire, raw))
    if values:
        obj["data"] = values
    if string_data:
        obj["stringData"] = string_data
    return obj


def _namespace_condition(data: memoryview) -> dict[str, Any]:
    condition: dict[str, Any] = {}
    names = {1: "type", 2: "status", 5: "reason", 6: "message"}
    for number, wire, raw in _fields(data):
        if number in names:
            text = _string(wire, raw)
            if text:
                condition[names[number]] = text
        elif number == 4:
            stamp = _time(_expect_bytes(wire, raw))
            if stamp is not None:
                condition["lastTransitionTime"] = stamp
    return condition


def _decode_namespace(data: memoryview) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        if number == 1:
            obj["metadata"] = _object_meta(_expect_bytes(wire, raw))
        elif number == 2:  # NamespaceSpec {1: finalizers}
            finalizers = [_string(w, r) for n, w, r in _fields(_expect_bytes(wire, raw)) if n == 1]
            obj["spec"] = {"finalizers": finalizers} if finalizers else {}
        elif number == 3:  # NamespaceStatus {1: phase, 2: conditions}
            status: dict[str, Any] = {}
            conditions = []
            for n, w, r in _fields(_expect_bytes(wire, raw)):
                if n == 1:
                    phase = _string(w, r)
                    if phase:
                        status["phase"] = phase
                elif n == 2:
                    conditions.append(_namespace_condition(_expect_bytes(w, r)))
            if conditions:
                status["conditions"] = conditions
            obj["status"] = status
    return obj


_DECODERS: dict[tuple[str, str], Callable[[memoryview], dict[str, Any]]] = {
    ("v1", "ConfigMap"): _decode_config_map,
    ("v1", "Secret"): _decode_secret,
    ("v1", "Namespace"): _decode_namespace,
}


def _decode_unknown(data: memoryview) -> dict[str, Any]:
    api_version = kind = ""
    raw = memoryview(b"")
    encoding = ""
    for number, wire, value in _fields(data):
        if number == 1:
            for n, w, v in _fields(_expect_bytes(wire, value)):
                if n == 1:
                    api_version = _string(w, v)
                elif n == 2:
                    kind = _string(w, v)
        elif number == 2:
            raw = _expect_bytes(wire, value)
        elif number == 3:
            encoding = _string(wire, value)
    if encoding:
        raise UnsupportedMediaError(f"protobuf content encoding {encoding!r} is not supported")
    decoder = _DECODERS.get((api_version, kind))
    if decoder is None:
        shown = f"{api_version}/{kind}" if api_version or kind else "an object without a kind"
        raise UnsupportedMediaError(
            f"protobuf bodies of {shown} are not supported by this server; send "
            "application/json (only v1 Namespace, ConfigMap and Secret decode from protobuf)"
        )
    obj = {"apiVersion": api_version, "kind": kind}
    obj.update(decoder(raw))
    return obj
