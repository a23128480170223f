"""The decode-on-demand store (informers.cache.compact.raw): RawObject's
metadata record against the exact parser, RawStore's writes of raw bytes, and
the shipped store state machine over raw writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from informers import ObjectKeyError
from informers.cache.compact.raw import RawCodec, RawStore
from informers.cache.protocols import InformerStore, PreparedListStore
from informers.cache.store import Indexer
from informers.testing.stateful import app_index, indexed_store_machine
from informers.wire import _json
from informers.wire.objects import (
    NAMESPACE_INDEX,
    IndexFunc,
    KeyFunc,
    get_labels,
    get_name,
    get_namespace,
    get_resource_version,
    get_uid,
    meta_namespace_key,
    namespace_index,
)
from informers.wire.raw import RawObject, split_list, split_watch_event
from tests.helpers import count_decodes


def _pod(ns: str, name: str, rv: str = "1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "resourceVersion": rv,
            "uid": f"uid-{name}",
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "rs",
                    "uid": "u1",
                    "controller": True,
                }
            ],
        },
        "spec": {"nodeName": f"node-{name[-1]}", "big": 123456789012345678901234567890},
    }


def _raw(obj: Any) -> RawObject:
    return RawObject(json.dumps(obj).encode())


def test_raw_object_reads_metadata_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = count_decodes(monkeypatch)
    pod = _pod("a", "x", "7", app="web")
    raw = _raw(pod)
    assert raw["metadata"] is raw.metadata
    assert meta_namespace_key(raw) == "a/x"
    assert get_name(raw) == "x"
    assert get_namespace(raw) == "a"
    assert get_resource_version(raw) == "7"
    assert get_uid(raw) == "uid-x"
    assert dict(get_labels(raw)) == {"app": "web"}
    assert namespace_index(raw) == ["a"]
    assert raw["metadata"]["ownerReferences"] == pod["metadata"]["ownerReferences"]
    assert decodes == []
    assert raw == pod  # a mapping equal to the exact decode
    assert raw["spec"]["big"] == 123456789012345678901234567890
    assert raw.decoded() is raw.decoded()
    assert len(decodes) == 1
    assert dict(raw["metadata"]) == pod["metadata"]
    raw.forget()
    assert raw.metadata["uid"] == "uid-x"
    assert len(decodes) == 1
    assert "RawObject 'x'" in repr(raw)


HOSTILE = [
    b'{"metadata":{"name":"n"},"spec":NaN}',
    b'{"metadata":{"name":"n"},"spec":-Infinity}',
    b'{"metadata":{"name":"a"},"metadata":{"name":"b"}}',
    b'{"metadata":{"name":"\\ud800"}}',
    b'{"metadata":{"name":7}}',
    b'{"metadata":{"name":"n","labels":{"a":1}}}',
    b'{"metadata":{"name":"n","labels":{"a":"\\ud800"}}}',
    b'{"metadata":{"name":"n","annotations":{"a":NaN},"finalizers":[1e999]}}',
    b'{"metadata":{"name":"n","ownerReferences":[{"uid":123456789012345678901234567890}]}}',
    b'{"metadata":{"name":"n","labels":null,"finalizers":"x"}}',
    b'{"metadata":{"name":"n","namespace":5}}',
    b'{"metadata":{"name":"","namespace":"a"}}',
    b'{"metadata":{"name":"n"},"x":' + b"[" * 900 + b"]" * 900 + b"}",
    b'{"metadata":{"name":"n"},"x":1e999}',
    b'{"metadata":"nope"}',
    b"[1, 2]",
]
INVALID = [
    b'{"metadata":{"name":"\xff"}}',
    b"{",
    b"",
    b'{"a":1}x',
    b'{"metadata":{"name":"n"},"x":' + b"[" * 3000 + b"]" * 3000 + b"}",
]


@pytest.mark.parametrize("data", HOSTILE)
def test_hostile_input_keys_and_decodes_as_the_exact_parser(data: bytes) -> None:
    raw = RawObject(data)
    expected = _json.loads(data)
    assert raw.decoded() == expected or repr(raw.decoded()) == repr(expected)  # NaN
    meta, want_meta = (
        RawObject(data).metadata,
        expected.get("metadata") if type(expected) is dict else None,
    )
    if isinstance(want_meta, dict):
        for field in (
            "name",
            "namespace",
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
        ):
            assert repr(meta.get(field)) == repr(want_meta.get(field))  # repr: NaN
    try:
        want: Any = meta_namespace_key(expected)
    except ObjectKeyError as err:
        want = type(err)
    try:
        got: Any = meta_namespace_key(raw)
    except ObjectKeyError as err:
        got = type(err)
    assert got == want


@pytest.mark.parametrize("data", INVALID)
def test_bytes_the_exact_parser_refuses_raise_value_error(data: bytes) -> None:
    with pytest.raises(ValueError, match=r"."):
        _json.loads(data)
    with pytest.raises(ValueError, match=r"."):
        RawObject(data)


_text = st.text(max_size=6)
_meta = st.fixed_dictionaries(
    {"name": st.one_of(_text, st.integers(), st.none())},
    optional={
        "namespace": _text,
        "resourceVersion": _text,
        "uid": _text,
        "labels": st.dictionaries(_text, st.one_of(_text, st.integers()), max_size=3),
        "annotations": st.dictionaries(_text, _text, max_size=2),
        "ownerReferences": st.lists(
            st.fixed_dictionaries({"uid": _text, "controller": st.booleans()}), max_size=2
        ),
        "finalizers": st.one_of(st.lists(_text, max_size=2), st.none()),
        "generation": st.integers(),
    },
)


@settings(max_examples=150, deadline=None)
@given(_meta, st.integers(min_value=-(2**80), max_value=2**80))
def test_metadata_record_agrees_with_the_exact_parser(meta: dict[str, Any], n: int) -> None:
    data = json.dumps({"metadata": meta, "spec": {"n": n}}).encode()
    raw = RawObject(data)
    full = _json.loads(data)
    assert raw.decoded() == full
    for read in (get_namespace, get_resource_version, get_uid):
        assert read(raw) == read(full)
    assert dict(get_labels(raw)) == dict(get_labels(full))
    fresh = RawObject(data).metadata
    for field in full["metadata"]:
        assert fresh[field] == full["metadata"][field]
        assert fresh.get(field) == full["metadata"].get(field)
    assert fresh.get("missing", 7) == 7
    try:
        want: Any = meta_namespace_key(full)
    except ObjectKeyError:
        want = ObjectKeyError
    try:
        got: Any = meta_namespace_key(raw)
    except ObjectKeyError:
        got = ObjectKeyError
    assert got == want


def _node_index(obj: Any) -> list[str]:
    return [obj["spec"]["nodeName"]]


def test_store_keeps_bytes_and_decodes_on_read() -> None:
    store = RawStore(indexers={NAMESPACE_INDEX: namespace_index, "node": _node_index})
    assert isinstance(store, InformerStore)
    assert isinstance(store, PreparedListStore)
    assert store.get_indexers() == {NAMESPACE_INDEX: namespace_index, "node": _node_index}
    pod = _pod("a", "x1")
    data = json.dumps(pod).encode()
    assert store.add_raw(data) == "a/x1"
    assert store.raw_by_key("a/x1") is data  # kept as it came
    assert store.hot_keys() == []  # a raw write is not decoded
    assert store.metadata_by_key("a/x1")["uid"] == "uid-x1"
    assert store.metadata_by_key("nope") is None
    assert store.get_by_key("a/x1") == pod
    assert store.hot_keys() == ["a/x1"]
    assert store.by_index("node", "node-1") == [pod]
    store.update(_raw(_pod("a", "x1", "2")))  # a new raw write drops the stale hot object
    assert store.hot_keys() == []
    assert store.get_by_key("a/x1")["metadata"]["resourceVersion"] == "2"
    store.add({"metadata": {"name": "y2", "namespace": "b"}, "spec": {"nodeName": "n"}})
    assert sorted(store.list_keys()) == ["a/x1", "b/y2"]
    assert store.index_keys(NAMESPACE_INDEX, "b") == ["b/y2"]
    assert store.delete_key("a/x1")["metadata"]["resourceVersion"] == "2"
    store.replace([_raw(_pod("c", "z3"))], "9")
    assert store.list() == [_pod("c", "z3")]
    assert store.codec.name == "raw"
    assert repr(RawCodec()) == "RawCodec(compress=False)"
    assert repr(store).startswith("<RawStore (raw): 1 objects")
    with pytest.raises(ValueError, match=r"."):
        store.add_raw(b"{")
    with pytest.raises(ObjectKeyError):
        store.add_raw(b'{"metadata":{}}')


def test_metadata_index_functions_never_decode(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = count_decodes(monkeypatch)
    calls: list[Any] = []

    def by_app(obj: Any) -> list[str]:
        calls.append(obj)
        return [get_labels(obj).get("app", "")]

    store = RawStore(indexers={"app": by_app})
    store.add(_raw(_pod("a", "x1", app="web")))
    assert type(calls[0]) is RawObject
    assert decodes == []
    assert store.index_keys("app", "web") == ["a/x1"]
    store.add_indexers({"node": _node_index})  # reads spec: the stored object is decoded
    assert len(decodes) == 1
    assert store.index_keys("node", "node-1") == ["a/x1"]


def test_custom_key_function_keys_the_decode() -> None:
    def by_uid(obj: Any) -> str:
        return str(obj["metadata"]["uid"])

    store = RawStore(by_uid)
    store.add(_raw(_pod("a", "x1")))
    assert store.list_keys() == ["uid-x1"]


def test_reads_match_the_default_store() -> None:
    pods = [
        _pod(ns, f"p{i}", str(i), app=("web" if i % 2 else "db"))
        for i, ns in enumerate(["a", "b", "a", "c", "b"])
    ]
    indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index, "app": app_index}
    raw, plain = RawStore(indexers=indexers, hot_objects=2), Indexer(indexers=indexers)
    for pod in pods:
        raw.add(_raw(pod))
        plain.add(pod)
    for ns in "abc":
        assert raw.by_index(NAMESPACE_INDEX, ns) == plain.by_index(NAMESPACE_INDEX, ns)
    assert sorted(raw.list_index_func_values("app")) == sorted(plain.list_index_func_values("app"))
    assert raw.index("app", pods[1]) == plain.index("app", pods[1])
    assert sorted(map(meta_namespace_key, raw.list())) == sorted(plain.list_keys())


# ---------------------------------------------------------------- state machine


class _WireStore(RawStore):
    """Every dict written goes in as its JSON bytes (the path the wire takes)."""

    def add(self, obj: Any) -> None:
        super().add(_raw(obj))

    def update(self, obj: Any) -> None:
        super().update(_raw(obj))

    def upsert(self, key: str, obj: Any) -> Any | None:
        return super().upsert(key, _raw(obj))

    def replace(self, objects: Any, resource_version: str) -> None:
        super().replace([_raw(o) for o in objects], resource_version)


def _factory(hot: int, wire: bool) -> Any:
    def make(key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> RawStore:
        cls = _WireStore if wire else RawStore
        return cls(key_func, indexers, hot_objects=hot)

    make.__name__ = f"RawStore_hot{hot}_{'wire' if wire else 'dicts'}"
    return make


TestRawStoreWire = indexed_store_machine(_factory(2, True)).TestCase
TestRawStoreWireCold = indexed_store_machine(_factory(0, True)).TestCase
TestRawStoreDicts = indexed_store_machine(_factory(3, False)).TestCase
for _case in (TestRawStoreWire, TestRawStoreWireCold, TestRawStoreDicts):
    _case.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)


# ---------------------------------------------------------------- list and watch splitting


def _list_body(items: list[Any]) -> bytes:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {"resourceVersion": "42"},
            "items": items,
        }
    ).encode()


def test_split_list_keeps_items_raw_and_the_envelope_decoded() -> None:
    pods = [_pod("a", f"p{i}", str(i)) for i in range(3)]
    envelope, items = split_list(_list_body(pods))
    assert envelope == {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "42"},
        "items": [],
    }
    assert all(type(item) is RawObject for item in items)
    assert [item.decoded() for item in items] == pods
    assert split_list(b'{"kind":"PodList","items":null}') == ({"kind": "PodList", "items": []}, [])


@pytest.mark.parametrize("item", HOSTILE)
def test_split_list_of_hostile_items_matches_the_exact_parser(item: bytes) -> None:
    body = b'{"metadata":{},"items":[' + item + b"]}"
    expected = _json.loads(body)
    _, items = split_list(body)
    got = [i.decoded() if type(i) is RawObject else i for i in items]
    assert repr(got) == repr(expected["items"])


@pytest.mark.parametrize("body", [*INVALID, b"[]", b'{"items":{}}', b'{"items":[1,}'])
def test_split_list_refuses_what_the_exact_parser_refuses(body: bytes) -> None:
    with pytest.raises(ValueError, match=r"."):
        split_list(body)


def test_split_watch_event() -> None:
    pod = _pod("a", "x")
    kind, obj = split_watch_event(json.dumps({"type": "MODIFIED", "object": pod}).encode())
    assert kind == "MODIFIED"
    assert type(obj) is RawObject
    assert get_resource_version(obj) == "1"
    assert obj.decoded() == pod
    kind, obj = split_watch_event(b'{"type":"ADDED","object":{"metadata":{"name":"n"},"v":NaN}}')
    assert kind == "ADDED"
    assert obj["metadata"] == {"name": "n"}
    for bad in (
        b'{"type":1,"object":{}}',
        b'{"type":"ADDED"}',
        b"{",
        b'{"type":"A","object":{"a":"\xff"}}',
    ):
        with pytest.raises(ValueError, match=r"."):
            split_watch_event(bad)


def test_metadata_maps_are_decoded_when_read_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = count_decodes(monkeypatch)
    pod = _pod("a", "x")
    pod["metadata"]["labels"] = {"app": "web"}
    pod["metadata"]["ownerReferences"] = [{"uid": "u1", "controller": True}]
    pod["metadata"]["finalizers"] = ["f"]
    raw = _raw(pod)
    assert meta_namespace_key(raw) == "a/x"
    meta = raw["metadata"]
    labels = meta["labels"]
    assert labels == {"app": "web"}
    assert meta["labels"] is labels  # decoded once, then kept
    assert meta.get("ownerReferences") == [{"uid": "u1", "controller": True}]
    assert meta["finalizers"] == ["f"]
    assert decodes == []  # none of this decoded the object
    # A map msgspec will not decode is the exact parser's (one full decode).
    odd = RawObject(b'{"metadata":{"name":"n","labels":{"a":"\\ud800"}}}')
    assert odd["metadata"]["labels"] == _json.loads(b'{"a":"\\ud800"}')


def test_metadata_view_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    decodes = count_decodes(monkeypatch)
    pod = _pod("a", "x")
    pod["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    del pod["metadata"]["uid"]
    raw = _raw(pod)
    meta = raw["metadata"]
    assert "uid" not in meta
    assert meta.get("uid") is None
    assert decodes == []
    assert meta["creationTimestamp"] == "2024-01-01T00:00:00Z"  # beyond the record: decoded
    assert len(decodes) == 1
    assert dict(meta) == pod["metadata"]
    assert len(meta) == len(pod["metadata"])
    assert "metadata of" in repr(meta)
    assert RawObject(b'{"metadata":null}')["metadata"] is None
    assert RawObject(b'{"metadata":null}').metadata is None
    with pytest.raises(KeyError):
        RawObject(b'{"kind":"X"}')["metadata"]
    nothing = RawObject(b"[1]")
    assert len(nothing) == 0
    assert list(nothing) == []
    with pytest.raises(KeyError):
        nothing["kind"]
    assert RawObject(b'{"a":1}') == RawObject(b'{"a": 1}')
    assert RawObject(b'{"a":1}') != RawObject(b'{"a":2}')
    assert RawObject.from_object(pod) == pod


def test_the_runtime_mapping_reads_raw_objects_without_a_decode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from informers.toolkit.runtime.mapping import enqueue_owner
    from informers.toolkit.runtime.request import Request

    decodes = count_decodes(monkeypatch)
    pod = _pod("a", "x")
    pod["metadata"]["generation"] = 3
    pod["metadata"]["finalizers"] = ["f"]
    raw = _raw(pod)
    assert enqueue_owner("ReplicaSet", "apps")(raw) == [Request("a", "rs")]
    assert Request.for_object(raw) == Request("a", "x")
    assert raw["metadata"]["generation"] == 3
    assert raw["metadata"]["finalizers"] == ["f"]
    assert "deletionTimestamp" not in raw["metadata"]
    assert decodes == []
