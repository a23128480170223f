"""The compact storage option (informers.cache.compact): codecs, the store against
the default Indexer and against the shared store state machine, the LRU's
bound and order, and the informer end to end over the emulator."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from cachetools import LRUCache
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from informers import (
    IndexFunctionError,
    ObjectKeyError,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    SharedInformerFactory,
    UnknownIndexError,
)
from informers.cache.compact import (
    DEFAULT_HOT_OBJECTS,
    KUBERNETES_DICTIONARY,
    Codec,
    CompactStore,
    JSONCodec,
    MsgpackCodec,
    ZlibCodec,
    available_codecs,
)
from informers.cache.listers import Lister
from informers.cache.protocols import InformerStore
from informers.cache.store import Indexer
from informers.cache.transforms import strip_managed_fields
from informers.errors import ObjectEncodeError
from informers.rest.listwatch import HTTPListerWatcher
from informers.testing import ApiServer
from informers.testing.stateful import INDEX_FUNCTIONS, indexed_store_machine
from informers.wire.objects import NAMESPACE_INDEX, IndexFunc, KeyFunc, get_labels, namespace_index
from informers.wire.resources import PODS

CODECS = available_codecs()

# ---------------------------------------------------------------------------- codecs

json_documents = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("name", sorted(CODECS))
@settings(max_examples=150, deadline=None)
@given(doc=json_documents)
def test_codecs_round_trip_json_documents(name: str, doc: Any) -> None:
    codec = CODECS[name]
    try:
        data = codec.encode(doc)
    except ValueError:
        # msgpack alone refuses integers beyond 64 bits
        assert name == "msgpack"
        return
    assert isinstance(data, bytes)
    assert codec.decode(data) == doc


def test_json_codecs_keep_what_orjson_refuses() -> None:
    for doc in ({"big": 2**70, "text": "é"}, {"surrogate": "\ud800"}):
        for codec in (JSONCodec(), ZlibCodec(), ZlibCodec(dictionary=b"")):
            assert codec.decode(codec.encode(doc)) == doc


def test_infinities_are_the_documented_exception() -> None:
    # Not JSON, never sent by an API server: orjson writes them as null.
    decoded = JSONCodec().decode(JSONCodec().encode({"x": float("inf")}))
    assert decoded["x"] in (None, float("inf"))
    if "msgpack" in CODECS:
        codec = CODECS["msgpack"]
        assert codec.decode(codec.encode({"x": float("inf")})) == {"x": float("inf")}


def test_codecs_follow_the_protocol() -> None:
    assert {"zlib", "json"} <= set(CODECS)
    for name, codec in CODECS.items():
        assert isinstance(codec, Codec)
        assert codec.name == name
        assert repr(codec)


def test_zlib_codec_options() -> None:
    pod = {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}}
    sized = {level: len(ZlibCodec(level).encode(pod)) for level in (1, 9)}  # any level round-trips
    assert all(size > 0 for size in sized.values())
    plain, preset = ZlibCodec(dictionary=b""), ZlibCodec()
    assert len(preset.encode(pod)) < len(plain.encode(pod))
    trained = ZlibCodec.with_samples([pod])
    assert len(trained.encode(pod)) <= len(preset.encode(pod))
    assert trained.decode(trained.encode(pod)) == pod
    assert len(ZlibCodec(dictionary=b"x" * 40000).dictionary) == 32768
    assert KUBERNETES_DICTIONARY.startswith(b"{")
    with pytest.raises(ValueError, match="level"):
        ZlibCodec(10)
    with pytest.raises(TypeError, match="bytes"):
        ZlibCodec(dictionary="text")  # type: ignore[arg-type]


@pytest.mark.skipif("msgpack" not in CODECS, reason="msgpack is not installed")
def test_msgpack_codec_refuses_huge_integers() -> None:
    with pytest.raises(ValueError, match="out of range"):
        MsgpackCodec().encode({"n": 2**70})


# ---------------------------------------------------------------------------- the store


def pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": {"n": 1}}


def api_pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    """A pod the API server accepts (one container, image ``app:1``)."""
    spec = {"containers": [{"name": "app", "image": "app:1"}]}
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": spec}


def test_store_basics_and_errors() -> None:
    store = CompactStore(indexers={NAMESPACE_INDEX: namespace_index}, hot_objects=2)
    assert isinstance(store, InformerStore)
    assert store.hot_objects == 2
    assert store.codec.name == "zlib"
    assert CompactStore().hot_objects == DEFAULT_HOT_OBJECTS
    for i in range(4):
        store.add(pod(f"p{i}", "a" if i % 2 else "b"))
    assert len(store) == 4
    assert sorted(store.list_keys()) == ["a/p1", "a/p3", "b/p0", "b/p2"]
    assert store.by_index(NAMESPACE_INDEX, "a") == [pod("p1", "a"), pod("p3", "a")]
    assert store.index_keys(NAMESPACE_INDEX, "a") == ["a/p1", "a/p3"]
    assert store.by_index(NAMESPACE_INDEX, "zzz") == []
    assert sorted(store.list_index_func_values(NAMESPACE_INDEX)) == ["a", "b"]
    assert store.get(pod("p0", "b")) == pod("p0", "b")
    assert store.get_by_key("nope") is None
    assert store.get_many(["b/p0", "nope"]) == [pod("p0", "b"), None]
    stats = store.stats()
    assert stats["objects"] == 4
    assert stats["hot"] == 2
    assert stats["encoded_bytes"] > 0
    assert "4 objects, 2 hot" in repr(store)
    # upsert returns what it replaced, hot or decoded
    assert store.upsert("b/p0", pod("p0", "b", v="2")) == pod("p0", "b")
    assert store.upsert("zz/new", pod("new", "zz")) is None
    assert store.delete_key("zz/new") == pod("new", "zz")
    assert store.delete_key("zz/new") is None
    store.delete(pod("p3", "a"))
    assert store.index_keys(NAMESPACE_INDEX, "a") == ["a/p1"]
    store.resync()
    with pytest.raises(UnknownIndexError):
        store.by_index("missing", "a")
    with pytest.raises(UnknownIndexError):
        store.index("missing", pod("x"))
    with pytest.raises(ObjectKeyError):
        store.add({"metadata": {}})
    with pytest.raises(ValueError, match="hot_objects"):
        CompactStore(hot_objects=-1)


def test_objects_the_codec_cannot_encode_raise_and_change_nothing() -> None:
    store = CompactStore(codec=JSONCodec())
    store.add(pod("keep"))
    bad = {"metadata": {"name": "bad", "namespace": "default"}, "spec": {"s": {1, 2}}}
    with pytest.raises(ObjectEncodeError, match="default/bad") as info:
        store.add(bad)
    assert isinstance(info.value, TypeError)
    with pytest.raises(ObjectEncodeError):
        store.upsert("default/bad", bad)
    with pytest.raises(ObjectEncodeError):
        store.replace([pod("other"), bad], "9")
    with pytest.raises(ObjectEncodeError):
        store.add({"metadata": {"name": "k", "namespace": "default"}, "m": {1: "int key"}})
    assert store.list_keys() == ["default/keep"]


def test_replace_empties_the_hot_set_and_index_errors_follow_the_contract() -> None:
    failures: list[IndexFunctionError] = []

    def picky(obj: Any) -> list[str]:
        if "bad" in get_labels(obj):
            raise ValueError("bad")
        return [get_labels(obj).get("app", "")]

    strict = CompactStore(indexers={"app": picky})
    strict.add(pod("a", app="x"))
    with pytest.raises(IndexFunctionError, match="default/b"):
        strict.add(pod("b", bad="1"))
    with pytest.raises(IndexFunctionError):
        strict.replace([pod("c"), pod("d", bad="1")], "5")
    assert strict.list_keys() == ["default/a"]
    assert strict.hot_keys() == ["default/a"]
    strict.replace([pod("c", app="y"), pod("d", app="y")], "6")
    assert strict.hot_keys() == []
    assert strict.index_keys("app", "y") == ["default/c", "default/d"]
    with pytest.raises(IndexFunctionError):
        strict.index("app", pod("probe", bad="1"))

    tolerant = CompactStore(indexers={"app": picky}, on_index_error=failures.append)
    tolerant.add(pod("b", bad="1"))
    assert tolerant.get_by_key("default/b") == pod("b", bad="1")
    assert [f.key for f in failures] == ["default/b"]


def test_add_indexers_on_stored_objects() -> None:
    store = CompactStore(hot_objects=1)
    for i in range(5):
        store.add(pod(f"p{i}", app=f"a{i % 2}"))
    store.add_indexers({"app": INDEX_FUNCTIONS["app"]})
    assert store.index_keys("app", "a0") == ["default/p0", "default/p2", "default/p4"]
    with pytest.raises(Exception, match="already exists"):
        store.add_indexers({"app": INDEX_FUNCTIONS["app"]})
    with pytest.raises(TypeError):
        store.add_indexers({"x": 3})  # type: ignore[dict-item]
    store.add_indexers({})


def test_lru_bound_and_order_against_cachetools() -> None:
    store = CompactStore(indexers={NAMESPACE_INDEX: namespace_index}, hot_objects=3)
    model: LRUCache[str, bool] = LRUCache(3)
    for i in range(6):
        store.add(pod(f"p{i}", f"ns{i % 2}"))
        model[f"ns{i % 2}/p{i}"] = True
    assert store.hot_keys() == list(model)[-3:] == ["ns1/p3", "ns0/p4", "ns1/p5"]
    # a hot read moves the key; a cold read decodes and inserts (evicting)
    first = store.get_by_key("ns1/p3")
    assert store.get_by_key("ns1/p3") is first
    assert store.hot_keys() == ["ns0/p4", "ns1/p5", "ns1/p3"]
    store.get_by_key("ns0/p0")
    assert store.hot_keys() == ["ns1/p5", "ns1/p3", "ns0/p0"]
    # list() and get_many() decode without caching
    assert len(store.list()) == 6
    store.get_many(store.list_keys())
    assert store.hot_keys() == ["ns1/p5", "ns1/p3", "ns0/p0"]
    # a read of more objects than the bound keeps the bound
    assert len(store.by_index(NAMESPACE_INDEX, "ns1")) == 3
    assert len(store.hot_keys()) == 3
    assert store.stats()["hot"] == 3
    # no hot set at all
    cold = CompactStore(hot_objects=0)
    cold.add(pod("x"))
    assert cold.get_by_key("default/x") == pod("x")
    assert cold.by_index is not None
    assert cold.hot_keys() == []


def test_many_reads_of_hot_objects_keep_the_touch_list_bounded() -> None:
    store = CompactStore(indexers={NAMESPACE_INDEX: namespace_index}, hot_objects=4)
    for i in range(4):
        store.add(pod(f"p{i}"))
    for _ in range(1000):
        assert len(store.by_index(NAMESPACE_INDEX, "default")) == 4
        store.get_by_key("default/p0")
    store.add(pod("p9"))  # evicts the least recently used: p1
    assert store.hot_keys() == ["default/p2", "default/p3", "default/p0", "default/p9"]


def test_concurrent_readers_and_a_writer_see_whole_objects() -> None:
    store = CompactStore(indexers={NAMESPACE_INDEX: namespace_index}, hot_objects=8)
    stop = threading.Event()
    errors: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            for obj in store.by_index(NAMESPACE_INDEX, "default"):
                if obj["spec"]["n"] != int(obj["metadata"]["labels"]["v"]):
                    errors.append("torn object")
            store.list()

    threads = [threading.Thread(target=reader, name=f"compact-reader-{i}") for i in range(2)]
    for t in threads:
        t.start()
    try:
        for v in range(300):
            for i in range(20):
                obj = pod(f"p{i}", v=str(v))
                obj["spec"]["n"] = v
                store.upsert(f"default/p{i}", obj)
            if v % 50 == 0:
                store.replace([pod(f"p{i}", v="0") | {"spec": {"n": 0}} for i in range(20)], "1")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert len(store) == 20


# ---------------------------------------------------------------------------- state machines


def _compact_factory(hot: int, codec: Codec | None = None) -> Any:
    def make(key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> CompactStore:
        return CompactStore(key_func, indexers, codec=codec, hot_objects=hot)

    make.__name__ = f"CompactStore_hot{hot}_{codec.name if codec else 'zlib'}"
    return make


# The shared machine (informers.testing.stateful): contents and indexes
# against brute force, the error contract, for a few LRU sizes and codecs.
TestCompactStoreMachine = indexed_store_machine(_compact_factory(2)).TestCase
TestCompactStoreNoHotSet = indexed_store_machine(_compact_factory(0)).TestCase
TestCompactStoreJSON = indexed_store_machine(_compact_factory(100, JSONCodec())).TestCase
if "msgpack" in CODECS:
    TestCompactStoreMsgpack = indexed_store_machine(_compact_factory(3, CODECS["msgpack"])).TestCase
for _case in (TestCompactStoreMachine, TestCompactStoreNoHotSet, TestCompactStoreJSON):
    _case.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)


_names = st.sampled_from(["a/x", "a/y", "b/x", "b/y", "c/z", "w"])
_apps = st.sampled_from(["", "web", "db"])
_tags = st.lists(st.sampled_from(["red", "blue", "green"]), max_size=3)


def _obj(key: str, app: str, tags: list[str], version: int) -> dict[str, Any]:
    ns, _, name = key.rpartition("/")
    labels = {f"tag-{i}": t for i, t in enumerate(tags)}
    if app:
        labels["app"] = app
    meta: dict[str, Any] = {"name": name, "labels": labels, "resourceVersion": str(version)}
    if ns:
        meta["namespace"] = ns
    return {"metadata": meta, "spec": {"v": version, "list": [version, None, 1.5]}}


_INDEX = {
    NAMESPACE_INDEX: namespace_index,
    "app": INDEX_FUNCTIONS["app"],
    "tags": lambda o: [v for k, v in sorted(get_labels(o).items()) if k.startswith("tag-")],
}


class CompactAgainstIndexer(RuleBasedStateMachine):
    """The same operations on a CompactStore and on the default Indexer give
    the same results; the CompactStore's hot set is the one a cachetools
    LRU updated on every read would hold, and never exceeds its bound."""

    #: The store under test (the decode-on-demand store subclasses it).
    store_class: type[CompactStore] = CompactStore

    def __init__(self) -> None:
        super().__init__()
        self.version = 0
        self.hot = 3
        self.compact = self.store_class(hot_objects=self.hot)
        self.reference = Indexer()
        self.lru: LRUCache[str, bool] = LRUCache(self.hot)

    @initialize(names=st.sets(st.sampled_from(sorted(_INDEX))), hot=st.integers(1, 4))
    def setup(self, names: set[str], hot: int) -> None:
        indexers = {n: _INDEX[n] for n in sorted(names)}
        self.hot = hot
        self.compact = self.store_class(indexers=indexers, hot_objects=hot)
        self.reference = Indexer(indexers=indexers)
        self.lru = LRUCache(hot)

    def _read(self, keys: list[str]) -> None:
        """What a read does to the model LRU: hits first, then inserts."""
        hits = [k for k in keys if k in self.lru]
        for key in hits:
            self.lru[key]
        for key in keys:
            if key not in hits:
                self.lru[key] = True

    def _next(self, key: str, app: str, tags: list[str]) -> dict[str, Any]:
        self.version += 1
        return _obj(key, app, tags, self.version)

    @rule(key=_names, app=_apps, tags=_tags, how=st.sampled_from(["add", "update", "upsert"]))
    def write(self, key: str, app: str, tags: list[str], how: str) -> None:
        obj = self._next(key, app, tags)
        if how == "upsert":
            assert self.compact.upsert(key, obj) == self.reference.upsert(key, obj)
        else:
            getattr(self.compact, how)(obj)
            getattr(self.reference, how)(obj)
        self.lru[key] = True

    @rule(key=_names)
    def delete(self, key: str) -> None:
        assert self.compact.delete_key(key) == self.reference.delete_key(key)
        self.lru.pop(key, None)

    @rule(entries=st.lists(st.tuples(_names, _apps, _tags), max_size=6))
    def replace(self, entries: list[tuple[str, str, list[str]]]) -> None:
        objs = [self._next(*entry) for entry in entries]
        self.compact.replace(objs, str(self.version))
        self.reference.replace(objs, str(self.version))
        self.lru.clear()

    @rule(name=st.sampled_from(sorted(_INDEX)))
    def add_index(self, name: str) -> None:
        if name in self.reference.get_indexers():
            return
        self.compact.add_indexers({name: _INDEX[name]})
        self.reference.add_indexers({name: _INDEX[name]})

    @rule(key=_names)
    def get(self, key: str) -> None:
        got = self.compact.get_by_key(key)
        assert got == self.reference.get_by_key(key)
        if got is not None:
            self._read([key])

    @rule(keys=st.lists(_names, max_size=4))
    def get_many(self, keys: list[str]) -> None:
        assert self.compact.get_many(keys) == self.reference.get_many(keys)

    @precondition(lambda self: bool(self.reference.get_indexers()))
    @rule(data=st.data())
    def by_index(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.reference.get_indexers())))
        value = data.draw(st.sampled_from(["", "a", "b", "c", "web", "db", "red", "blue"]))
        got = self.compact.by_index(name, value)
        assert got == self.reference.by_index(name, value)
        assert self.compact.index_keys(name, value) == self.reference.index_keys(name, value)
        self._read(self.reference.index_keys(name, value))

    @precondition(lambda self: bool(self.reference.get_indexers()))
    @rule(data=st.data(), key=_names, app=_apps, tags=_tags)
    def index(self, data: st.DataObject, key: str, app: str, tags: list[str]) -> None:
        name = data.draw(st.sampled_from(sorted(self.reference.get_indexers())))
        probe = _obj(key, app, tags, 0)
        got = self.compact.index(name, probe)
        assert got == self.reference.index(name, probe)
        self._read([self.reference.key_of(o) for o in got])

    @invariant()
    def same_contents(self) -> None:
        compact, reference = self.compact, self.reference
        assert sorted(compact.list_keys()) == sorted(reference.list_keys())
        key = reference.key_of
        assert sorted(compact.list(), key=key) == sorted(reference.list(), key=key)
        assert len(compact) == len(reference)
        for name in reference.get_indexers():
            assert sorted(compact.list_index_func_values(name)) == sorted(
                reference.list_index_func_values(name)
            )

    @invariant()
    def hot_set_is_the_lru_one(self) -> None:
        hot = self.compact.hot_keys()
        assert len(hot) <= self.hot
        assert hot == list(_lru_order(self.lru))
        assert self.compact.stats()["hot"] == len(hot)


def _lru_order(lru: LRUCache[str, bool]) -> Iterator[str]:
    """A cachetools LRU's keys, least recently used first (from a copy)."""
    import copy

    clone = copy.copy(lru)
    while clone:
        yield clone.popitem()[0]


TestCompactAgainstIndexer = CompactAgainstIndexer.TestCase
TestCompactAgainstIndexer.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None
)


# ---------------------------------------------------------------------------- the informer


def test_informer_rejects_a_store_instance() -> None:
    with pytest.raises(TypeError, match="store factory"):
        SharedIndexInformer(object(), store=CompactStore())  # type: ignore[arg-type]


def test_informer_with_the_compact_store_over_the_emulator(api_server: ApiServer) -> None:
    for ns in ("a", "b"):
        api_server.create("namespaces", {"metadata": {"name": ns}})
    for i in range(30):
        body = api_pod(f"p{i}", "a" if i % 3 else "b", app=f"app{i % 4}")
        body["metadata"]["managedFields"] = [{"manager": "test", "operation": "Update"}]
        api_server.create(PODS, body)
    client = api_server.api_client()
    seen: list[tuple[Any, Any]] = []
    informer = SharedIndexInformer(
        HTTPListerWatcher(client, PODS),
        indexers={NAMESPACE_INDEX: namespace_index, "app": INDEX_FUNCTIONS["app"]},
        name="pods",
        store=functools.partial(CompactStore, hot_objects=5),
    )
    informer.set_transform(strip_managed_fields)
    informer.add_event_handler(
        ResourceEventHandlerFuncs(update_func=lambda old, new: seen.append((old, new)))
    )
    informer.start()
    try:
        assert informer.wait_synced(30)
        store = informer.get_indexer()
        assert isinstance(store, CompactStore)
        assert len(store) == 30
        server_pods = {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": p
            for p in api_server.list_objects(PODS)
        }
        for key, obj in server_pods.items():
            obj.pop("kind", None)
            obj.pop("apiVersion", None)
            cached = store.get_by_key(key)
            assert cached is not None
            assert "managedFields" not in cached["metadata"]
            assert cached["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
        lister = Lister(store)
        assert len(lister.namespace("b").list()) == 10
        expected = sum(1 for i in range(30) if i % 3 and i % 4 == 1)
        assert len(lister.namespace("a").list("app=app1")) == expected
        assert sorted(o["metadata"]["name"] for o in store.by_index("app", "app0")) == sorted(
            f"p{i}" for i in range(0, 30, 4)
        )
        assert store.stats()["hot"] <= 5
        # changes arrive: an update hands the handler the old version
        old = store.get_by_key("a/p1")
        assert old is not None
        changed = {**old["spec"]["containers"][0], "image": "app:2"}
        updated = api_server.update(PODS, {**old, "spec": {**old["spec"], "containers": [changed]}})
        api_server.delete(PODS, "p2", "a")
        assert informer.wait_for_resource_version(api_server.resource_version, 30)
        assert informer.wait_idle(30)
        now = store.get_by_key("a/p1")
        assert now is not None
        assert now["spec"]["containers"][0]["image"] == "app:2"
        assert now["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
        assert store.get_by_key("a/p2") is None
        assert store.index_keys(NAMESPACE_INDEX, "a").count("a/p2") == 0
        olds = [o for o, n in seen if n["metadata"]["name"] == "p1"]
        assert olds
        assert olds[-1]["spec"]["containers"][0]["image"] == "app:1"
    finally:
        informer.stop()
        client.close()


def test_factory_store_option(api_server: ApiServer) -> None:
    api_server.create("namespaces", {"metadata": {"name": "a"}})
    for i in range(5):
        api_server.create(PODS, api_pod(f"p{i}", "a"))
    client = api_server.api_client()
    factory = SharedInformerFactory(client, store=CompactStore, transform=strip_managed_fields)
    try:
        informer = factory.pods()
        factory.start()
        assert factory.wait_for_cache_sync(30)
        assert isinstance(informer.get_store(), CompactStore)
        assert len(factory.lister(PODS).namespace("a").list()) == 5
    finally:
        factory.shutdown()
        client.close()


def test_resync_items_hand_objects_over_undecoded_and_keep_the_hot_set() -> None:
    # What an informer's resync hands its handlers: nothing is decoded (or
    # made hot) until a handler reads it, so a resync of a large cache costs
    # the loop a snapshot, not a decode of every object.
    store = CompactStore(hot_objects=1)
    for i in range(3):
        store.add(pod(f"p{i}", "a"))
    assert store.get_by_key("a/p0") == pod("p0", "a")  # the one hot object
    before = store.stats()["hot"]
    decoded: list[bytes] = []
    real_decode = store._decode

    def counting_decode(data: bytes) -> Any:
        decoded.append(data)
        return real_decode(data)

    store._decode = counting_decode
    items = store.resync_items()
    assert decoded == []
    assert store.stats()["hot"] == before
    objects = sorted((d.get() for d in items), key=lambda o: o["metadata"]["name"])
    assert objects == [pod(f"p{i}", "a") for i in range(3)]
    assert len(decoded) == 2  # the two objects that were not hot, once each


def test_encoded_json_holds_no_more_than_its_bytes() -> None:
    # orjson's own bytes keep the whole buffer it wrote into (about 8 KB); a
    # cache of them would hold that per object, so the codec copies them.
    import tracemalloc

    codec = JSONCodec()
    obj = {"metadata": {"name": "x" * 40, "labels": {"app": "web"}}}
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [codec.encode(obj) for _ in range(200)]
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown / len(kept) < 4 * len(kept[0]) + 200
