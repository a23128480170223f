"""Decoding of ``application/vnd.kubernetes.protobuf`` bodies: fixed bodies
captured from kubectl 1.32, and a small wire-format encoder here that
round-trips random objects through the decoder."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._protobuf import MAGIC, UnsupportedMediaError, decode_object

# What `kubectl create namespace n2`, `kubectl create configmap c2 -n n2
# --from-literal=k=v` and `kubectl create secret generic s2 -n n2
# --from-literal=k=v --type=Opaque` (kubectl 1.32) send.
KUBECTL_NAMESPACE = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121a0a120a026e3212001a0022002a0032003800420012001a020a"
    "001a002200"
)
KUBECTL_CONFIGMAP = bytes.fromhex(
    "6b3873000a0f0a0276311209436f6e6669674d6170121e0a140a02633212001a026e3222002a003200380042001206"
    "0a016b1201761a002200"
)
KUBECTL_SECRET = bytes.fromhex(
    "6b3873000a0c0a027631120653656372657412260a140a02733212001a026e3222002a003200380042001206"
    "0a016b1201761a064f70617175651a002200"
)


def test_kubectl_namespace_body() -> None:
    assert decode_object(KUBECTL_NAMESPACE) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "n2"},
        "spec": {},
        "status": {},
    }


def test_kubectl_configmap_body() -> None:
    assert decode_object(KUBECTL_CONFIGMAP) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c2", "namespace": "n2"},
        "data": {"k": "v"},
    }


def test_kubectl_secret_body_base64_encodes_data() -> None:
    assert decode_object(KUBECTL_SECRET) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s2", "namespace": "n2"},
        "data": {"k": base64.b64encode(b"v").decode()},
        "type": "Opaque",
    }


# ------------------------------------------------------------------ encoder


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_bytes(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _field_str(number: int, text: str) -> bytes:
    return _field_bytes(number, text.encode())


def _map(number: int, mapping: dict[str, Any]) -> bytes:
    out = b""
    for key, value in mapping.items():
        raw = value if isinstance(value, bytes) else value.encode()
        out += _field_bytes(number, _field_str(1, key) + _field_bytes(2, raw))
    return out


def _meta(meta: dict[str, Any]) -> bytes:
    out = b""
    for number, name in ((1, "name"), (2, "generateName"), (3, "namespace")):
        out += _field_str(number, meta.get(name, ""))
    out += _field_str(6, meta.get("resourceVersion", ""))
    out += _field_varint(7, meta.get("generation", 0))
    out += _field_bytes(8, b"")  # zero creationTimestamp, as Go always sends it
    out += _map(11, meta.get("labels", {}))
    out += _map(12, meta.get("annotations", {}))
    for finalizer in meta.get("finalizers", []):
        out += _field_str(14, finalizer)
    return out


def _unknown(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field_str(1, api_version) + _field_str(2, kind)
    return MAGIC + _field_bytes(1, type_meta) + _field_bytes(2, raw) + _field_str(3, "")


def _encode(obj: dict[str, Any]) -> bytes:
    raw = _field_bytes(1, _meta(obj["metadata"]))
    kind = obj["kind"]
    if kind == "ConfigMap":
        raw += _map(2, obj.get("data", {}))
        raw += _map(3, {k: base64.b64decode(v) for k, v in obj.get("binaryData", {}).items()})
        if "immutable" in obj:
            raw += _field_varint(4, int(obj["immutable"]))
    elif kind == "Secret":
        raw += _map(2, {k: base64.b64decode(v) for k, v in obj.get("data", {}).items()})
        raw += _field_str(3, obj.get("type", ""))
        raw += _map(4, obj.get("stringData", {}))
        if "immutable" in obj:
            raw += _field_varint(5, int(obj["immutable"]))
    else:
        spec = b"".join(_field_str(1, f) for f in obj["spec"].get("finalizers", []))
        status = _field_str(1, obj["status"].get("phase", ""))
        raw += _field_bytes(2, spec) + _field_bytes(3, status)
    return _unknown("v1", kind, raw)


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_NAME = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
_STRINGS = st.dictionaries(_NAME, _TEXT, max_size=3)
_B64 = st.dictionaries(_NAME, st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()))


def _drop_empty(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v not in ("", {}, [], 0)}


@st.composite
def _metadata(draw: st.DrawFn, namespaced: bool) -> dict[str, Any]:
    meta = {
        "name": draw(_NAME),
        "generateName": draw(st.sampled_from(["", "gen-"])),
        "resourceVersion": draw(st.sampled_from(["", "1", "42"])),
        "generation": draw(st.integers(0, 2**40)),
        "labels": draw(_STRINGS),
        "annotations": draw(_STRINGS),
        "finalizers": draw(st.lists(_NAME, max_size=2)),
    }
    if namespaced:
        meta["namespace"] = draw(_NAME)
    return _drop_empty(meta)


@st.composite
def _objects(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["ConfigMap", "Secret", "Namespace"]))
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind}
    obj["metadata"] = draw(_metadata(kind != "Namespace"))
    if kind == "ConfigMap":
        obj.update(_drop_empty({"data": draw(_STRINGS), "binaryData": draw(_B64)}))
    elif kind == "Secret":
        fields = {"data": draw(_B64), "type": draw(st.sampled_from(["", "Opaque"]))}
        obj.update(_drop_empty({**fields, "stringData": draw(_STRINGS)}))
    else:
        finalizers = draw(st.lists(_NAME, max_size=2))
        obj["spec"] = {"finalizers": finalizers} if finalizers else {}
        phase = draw(st.sampled_from(["", "Active"]))
        obj["status"] = {"phase": phase} if phase else {}
    if kind != "Namespace" and draw(st.booleans()):
        obj["immutable"] = draw(st.booleans())
    return obj


@given(_objects())
def test_round_trip_of_random_objects(obj: dict[str, Any]) -> None:
    assert decode_object(_encode(obj)) == obj


def test_encoder_reproduces_kubectl_configmap_fields() -> None:
    obj = decode_object(KUBECTL_CONFIGMAP)
    assert decode_object(_encode(obj)) == obj


# ------------------------------------------------------------------ errors


def test_other_kinds_are_unsupported() -> None:
    body = _unknown("v1", "Pod", _field_bytes(1, _meta({"name": "p"})))
    with pytest.raises(UnsupportedMediaError, match="v1/Pod"):
        decode_object(body)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        b"k8s",
        MAGIC + b"\x0a\x05\x0a",  # length past the end
        MAGIC + b"\x0a",  # truncated length
        MAGIC + b"\x0b",  # wire type 3 (groups) not supported
        MAGIC + b"\x00\x00",  # field number 0
        MAGIC + b"\x08" + b"\xff" * 11,  # endless varint
        MAGIC + _field_bytes(1, _field_bytes(2, b"\xff\xfe")),  # kind not UTF-8
        _unknown("v1", "ConfigMap", _field_varint(1, 3)),  # metadata is not a message
        _unknown("v1", "ConfigMap", b"") + _field_str(3, "gzip"),
    ],
)
def test_malformed_bodies_are_unsupported(body: bytes) -> None:
    with pytest.raises(UnsupportedMediaError):
        decode_object(body)


def test_unknown_fields_are_skipped() -> None:
    raw = (
        _field_bytes(1, _meta({"name": "c"}) + _field_str(4, "/selflink"))
        + _varint(99 << 3 | 1)
        + b"\x00" * 8
        + _varint(98 << 3 | 5)
        + b"\x00" * 4
        + _field_varint(97, 5)
    )
    obj = decode_object(_unknown("v1", "ConfigMap", raw))
    assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def test_timestamps_and_owner_references_decode() -> None:
    stamp = _field_varint(1, 1_700_000_000)
    owner = _field_str(1, "ReplicaSet") + _field_str(3, "rs") + _field_str(4, "u1")
    owner += _field_str(5, "apps/v1") + _field_varint(6, 1)
    meta = _field_str(1, "c") + _field_bytes(8, stamp) + _field_bytes(13, owner)
    obj = decode_object(_unknown("v1", "ConfigMap", _field_bytes(1, meta)))
    assert obj["metadata"] == {
        "name": "c",
        "creationTimestamp": "2023-11-14T22:13:20Z",
        "ownerReferences": [
            {
                "kind": "ReplicaSet",
                "name": "rs",
                "uid": "u1",
                "apiVersion": "apps/v1",
                "controller": True,
            }
        ],
    }
