"""The decode-on-demand store's costs kept down (informers.cache.compact.raw,
informers.wire.raw): projections for index functions reading past metadata,
deflated bytes (``compress=True``), relists recognising unchanged objects by
their bytes, and the compact store's machines run over RawStore."""

from __future__ import annotations

import functools
import json
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from informers.cache.compact.raw import RAW_HOT_OBJECTS, RawCodec, RawStore
from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import BackoffManager
from informers.cache.store import Indexer
from informers.testing.stateful import indexed_store_machine
from informers.wire import _json
from informers.wire.objects import (
    NAMESPACE_INDEX,
    IndexFunc,
    KeyFunc,
    deletion_handling_meta_namespace_key,
    get_resource_version,
    meta_namespace_key,
    namespace_index,
)
from informers.wire.raw import Projection, RawObject, reads
from tests.helpers import RawFakeListerWatcher, count_decodes
from tests.informers.cache.test_compact_store import CompactAgainstIndexer


def _pod(ns: str, name: str, rv: str = "1", node: Any = "n1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns, "resourceVersion": rv, "labels": {"a": "b"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running"},
    }


@reads("spec.nodeName")
def by_node(obj: Any) -> list[str]:
    spec = obj.get("spec")
    node = spec.get("nodeName") if isinstance(spec, dict) else None
    return [node] if isinstance(node, str) else []


# ---------------------------------------------------------------- projections

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


@given(
    spec=st.none()
    | st.integers()
    | st.dictionaries(st.sampled_from(["nodeName", "x"]), _json_values),
    status=st.dictionaries(st.sampled_from(["phase", "y"]), _json_values),
    meta=st.booleans(),
)
def test_projection_is_the_exact_decode_of_its_fields(
    spec: Any, status: dict[str, Any], meta: bool
) -> None:
    doc: dict[str, Any] = {"spec": spec, "status": status, "other": [1, {"z": 2}]}
    if meta:
        doc["metadata"] = {"name": "p", "namespace": "n", "annotations": {"k": "v"}}
    raw = RawObject.from_object(doc)
    got = Projection("spec.nodeName", "status.phase").of(raw)
    full = _json.loads(raw.data)
    want: dict[str, Any] = {}
    if type(full["spec"]) is dict:
        if "nodeName" in full["spec"]:
            want["spec"] = {"nodeName": full["spec"]["nodeName"]}
        else:
            want["spec"] = {}
    else:
        want["spec"] = full["spec"]
    want["status"] = {"phase": status["phase"]} if "phase" in status else {}
    if meta:
        want["metadata"] = full["metadata"]
    assert {k: (dict(v) if k == "metadata" else v) for k, v in got.items()} == want
    assert Projection("spec.nodeName").of(doc) is doc  # a dict is read as it is


@pytest.mark.parametrize(
    "data",
    [
        b'{"metadata":{"name":"a"},"spec":{"nodeName":NaN}}',
        b'{"metadata":{"name":"a"},"spec":{"nodeName":123456789012345678901234567890}}',
        b'{"metadata":{"name":"a"},"spec":"text"}',
        b'{"metadata":null,"spec":{"nodeName":"x","nodeName":"y"}}',
        b"[1,2]",
    ],
)
def test_projection_of_hostile_input_matches_the_exact_parser(data: bytes) -> None:
    full = _json.loads(data)
    got = Projection("spec.nodeName").of(RawObject(data))
    if type(full) is not dict:
        assert got == {}
        return
    spec = full["spec"]
    assert got["spec"] == ({"nodeName": spec["nodeName"]} if type(spec) is dict else spec)
    assert ("metadata" in got) == ("metadata" in full)


@pytest.mark.parametrize(
    "paths", [(), ("",), ("metadata.name",), ("spec..x",), ("spec", "spec.x"), ("spec.x", "spec")]
)
def test_projection_refuses_bad_paths(paths: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match=r"."):
        Projection(*paths)


def test_projected_index_never_decodes_and_answers_as_the_dict_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decodes = count_decodes(monkeypatch)
    indexers: dict[str, IndexFunc] = {"node": by_node, NAMESPACE_INDEX: namespace_index}
    raw, plain = RawStore(indexers=indexers), Indexer(indexers=indexers)
    pods = [_pod("a", f"p{i}", node=f"n{i % 3}") for i in range(9)]
    raw.replace([RawObject.from_object(p) for p in pods[:6]], "1")
    plain.replace(pods[:6], "1")
    for pod in pods[6:]:
        raw.upsert(meta_namespace_key(pod), RawObject.from_object(pod))
        plain.upsert(meta_namespace_key(pod), pod)
    assert decodes == []
    assert by_node.projection.paths == ("spec.nodeName",)  # type: ignore[attr-defined]
    assert by_node.__name__ == "by_node"
    for node in ("n0", "n1", "n2"):
        assert raw.index_keys("node", node) == plain.index_keys("node", node)
    assert raw.by_index("node", "n1") == plain.by_index("node", "n1")  # decodes here


# ---------------------------------------------------------------- deflated bytes


def test_compressed_store_keeps_deflated_bytes_and_reads_exactly() -> None:
    store = RawStore(indexers={"node": by_node}, compress=True)
    assert store.codec.name == "raw+zstd"  # the fast extra (zlib without it)
    assert repr(store.codec) == "RawCodec(compress=True)"
    pods = [_pod("a", f"p{i}", str(i)) for i in range(50)]
    raws = [RawObject.from_object(p) for p in pods]
    store.replace(raws, "50")
    stats = store.stats()
    assert stats["encoded_bytes"] < sum(len(r.data) for r in raws) // 2
    assert store.raw_by_key("a/p3") == raws[3].data  # the JSON, inflated
    assert store.get_by_key("a/p3") == pods[3]
    assert store.metadata_by_key("a/p4")["resourceVersion"] == "4"
    assert store.index_keys("node", "n1") == [f"a/p{i}" for i in range(50)]
    old = store.upsert("a/p5", RawObject.from_object(_pod("a", "p5", "51")))
    assert type(old) is RawObject
    assert old == pods[5]
    gone = store.delete_key("a/p6")
    assert gone == pods[6]
    store.add({"metadata": {"name": "d", "namespace": "a"}, "n": 10**30})
    assert store.get_by_key("a/d") == {"metadata": {"name": "d", "namespace": "a"}, "n": 10**30}


@given(st.lists(st.dictionaries(st.text(max_size=5), _json_values, max_size=4), max_size=5))
def test_compressing_codec_round_trips_and_is_deterministic(docs: list[dict[str, Any]]) -> None:
    codec = RawCodec(compress=True)
    for doc in docs:
        data = json.dumps(doc).encode()
        blob = codec.pack(data)
        assert codec.unpack(blob) == data
        assert codec.pack(data) == blob  # equal JSON, equal stored bytes
        assert codec.decode(codec.encode(RawObject(data))) == doc


def test_raw_store_default_hot_set() -> None:
    assert RawStore().hot_objects == RAW_HOT_OBJECTS
    assert RawStore(hot_objects=5).hot_objects == 5


# ---------------------------------------------------------------- relists


@pytest.mark.parametrize("compress", [False, True])
def test_relist_recognises_unchanged_bytes_without_a_decode(
    compress: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relisted object whose bytes equal the stored ones is a resync (no
    update to a handler that is not resyncing) and is never decoded; a
    changed one is an update; a vanished one a tombstone."""
    lw = RawFakeListerWatcher()
    lw.set_objects([_pod("a", "same", "5"), _pod("a", "moved", "6"), _pod("a", "gone", "7")], "10")
    informer = SharedIndexInformer(
        lw,
        name="pods",
        backoff=BackoffManager(initial=0.001, cap=0.002),
        store=functools.partial(RawStore, compress=compress),
    )
    updates: list[tuple[str, str]] = []
    deletes: list[Any] = []
    done = threading.Event()

    def on_update(old: Any, new: Any) -> None:
        updates.append((get_resource_version(old), get_resource_version(new)))

    def on_delete(obj: Any) -> None:
        deletes.append(obj)
        done.set()

    informer.add_event_handler(
        ResourceEventHandlerFuncs(update_func=on_update, delete_func=on_delete)
    )
    informer.start()
    try:
        watch = lw.wait_for_watch(1)
        assert informer.wait_synced(10)
        assert informer.wait_idle(10)
        decodes = count_decodes(monkeypatch)
        lw.set_objects([_pod("a", "same", "5"), _pod("a", "moved", "11")], "11")
        watch.error(410, "Expired", "too old resource version")
        lw.wait_for_watch(2)
        assert done.wait(10)
        assert informer.wait_idle(10)
        assert updates == [("6", "11")]
        assert [deletion_handling_meta_namespace_key(o) for o in deletes] == ["a/gone"]
        assert type(deletes[0].obj) is RawObject  # handed over undecoded
        assert decodes == []  # keys, versions and the comparison: no decode
        assert deletes[0].obj == _pod("a", "gone", "7")
        assert sorted(informer.get_store().list_keys()) == ["a/moved", "a/same"]
    finally:
        informer.stop()


# ---------------------------------------------------------------- the shipped machines


def _factory(hot: int, compress: bool) -> Any:
    def make(key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> RawStore:
        return RawStore(key_func, indexers, hot_objects=hot, compress=compress)

    make.__name__ = f"RawStore_hot{hot}_{'zlib' if compress else 'plain'}"
    return make


TestCompressedRawStoreMachine = indexed_store_machine(_factory(2, True)).TestCase
TestCompressedRawStoreMachine.settings = settings(
    max_examples=30, stateful_step_count=30, deadline=None
)


class RawAgainstIndexer(CompactAgainstIndexer):
    """The compact store's machine (answers equal to the Indexer's, the hot
    set an exact LRU) over the decode-on-demand store."""

    store_class = RawStore


TestRawAgainstIndexer = RawAgainstIndexer.TestCase
TestRawAgainstIndexer.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
