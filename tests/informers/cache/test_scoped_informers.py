"""What a factory caches, per kind (issue 29): metadata-only informers with
their listers and indexes (built-in kind and CRD, list and watch-list),
differently scoped informers of one kind, multi-namespace informers through
churn and a forced relist, and removing an informer (busy handlers, runtime
sources, a CRD uninstalled and reinstalled) -- all against the emulator."""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from informers import wait_for_cache_sync
from informers.cache.compact import CompactStore
from informers.cache.compact.raw import RawStore
from informers.cache.factory import SharedInformerFactory
from informers.cache.multinamespace import MultiNamespaceInformer
from informers.cache.reflector import ReflectorConfig
from informers.cache.scope import InformerKey
from informers.cache.store import Indexer
from informers.errors import InformerStateError
from informers.testing import ApiServer
from informers.toolkit.runtime import InformerSource
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.wire.resources import CONFIGMAPS, SECRETS, Resource
from tests.helpers import WAIT, WIDGETS, HookedRecorder, Recorder, install_widgets
from tracker import ResourceTracker
from tracker.mirror import Column, MirrorDatabase, MirrorStore


@dataclass
class PartialMeta:
    """A typed metadata-only object, as a tracker's model (the official
    client has no PartialObjectMetadata model)."""

    kind: str = ""
    api_version: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def _namespace(server: ApiServer, name: str) -> None:
    server.create("namespaces", {"metadata": {"name": name}})


def _object(resource: Resource, name: str, **labels: str) -> dict[str, Any]:
    body: dict[str, Any] = {"metadata": {"name": name, "labels": labels}}
    if resource == WIDGETS:
        body.update(apiVersion="example.com/v1", kind="Widget", spec={"size": len(name)})
    else:
        body["data"] = {"payload": name * 50}
    return body


def _server_metadata(
    server: ApiServer, resource: Resource, namespaces: tuple[str, ...] | None = None
) -> dict[str, dict[str, Any]]:
    return {
        meta_namespace_key(o): o["metadata"]
        for o in server.list_objects(resource)
        if namespaces is None or o["metadata"].get("namespace") in namespaces
    }


def _cache_metadata(informer: Any) -> dict[str, dict[str, Any]]:
    return {meta_namespace_key(o): o["metadata"] for o in informer.get_indexer().list()}


def _by_label(obj: Any) -> list[str]:
    return [obj["metadata"].get("labels", {}).get("tier", "")]


#: The caches a metadata-only informer may have: the default (compact JSON),
#: dicts, and raw JSON (whose handlers get read-only RawObjects).
STORES = {"default": {}, "dicts": {"store": Indexer}, "raw": {"store": RawStore}}


@pytest.mark.parametrize("store", sorted(STORES))
@pytest.mark.parametrize("watch_list", [False, True], ids=["list", "watch-list"])
@pytest.mark.parametrize("kind", ["configmaps", "widgets"])
def test_metadata_only_informer_lister_and_index(
    api_server: ApiServer, client: Any, kind: str, watch_list: bool, store: str
) -> None:
    options: dict[str, Any] = {"metadata_only": True, **STORES[store]}
    resource = CONFIGMAPS
    if kind == "widgets":
        install_widgets(api_server)
        resource = WIDGETS
    _namespace(api_server, "a")
    for i in range(6):
        api_server.create(resource, _object(resource, f"o{i}", tier="web" if i % 2 else "db"), "a")
    config = ReflectorConfig(use_watch_list=watch_list, watch_list_deadline=5.0)
    factory = SharedInformerFactory(client, reflector_config=config)
    try:
        informer = factory.for_resource(kind, **options)
        assert factory.for_resource(kind, **options) is informer
        informer.add_indexers({"tier": _by_label})
        recorder = Recorder()
        informer.add_event_handler(recorder)
        factory.start()
        assert wait_for_cache_sync(informer, timeout=WAIT)
        reflector = informer.reflector
        assert reflector is not None
        # a streaming list was served (no fall-back to a plain list)
        assert reflector.state.mem.watch_list is watch_list
        lister = factory.lister(kind, **options)
        every = lister.list()
        assert len(every) == 6
        assert {o["kind"] for o in every} == {"PartialObjectMetadata"}
        assert {o["apiVersion"] for o in every} == {"meta.k8s.io/v1"}
        assert all(set(o) == {"kind", "apiVersion", "metadata"} for o in every)
        assert [o["metadata"]["name"] for o in lister.list("tier=web")] == ["o1", "o3", "o5"]
        got = lister.namespace("a").get("o2")
        assert got is not None
        assert got["metadata"]["labels"] == {"tier": "db"}
        index = informer.get_indexer()
        assert sorted(o["metadata"]["name"] for o in index.by_index("tier", "db")) == [
            "o0",
            "o2",
            "o4",
        ]
        # watch events arrive metadata-only too
        api_server.create(resource, _object(resource, "late", tier="web"), "a")
        changed = api_server.get(resource, "o0", "a")
        changed["metadata"]["labels"] = {"tier": "web"}
        api_server.update(resource, changed)
        last = api_server.delete(resource, "o1", "a")
        assert informer.wait_for_resource_version(last, timeout=WAIT)
        assert informer.wait_idle()
        assert _cache_metadata(informer) == _server_metadata(api_server, resource)
        assert sorted(o["metadata"]["name"] for o in index.by_index("tier", "web")) == [
            "late",
            "o0",
            "o3",
            "o5",
        ]
        with recorder.lock:
            assert {k: o["metadata"] for k, o in recorder.model.items()} == _cache_metadata(
                informer
            )
            assert all(o["kind"] == "PartialObjectMetadata" for o in recorder.model.values())
        # the typed trackers read them
        with ResourceTracker(informer, PartialMeta) as tracker:
            assert tracker.informer is informer
            tracked = tracker.known_resources()
        assert sorted(t.metadata["name"] for t in tracked) == [
            "late",
            "o0",
            "o2",
            "o3",
            "o4",
            "o5",
        ]
        assert {(t.kind, t.api_version) for t in tracked} == {
            ("PartialObjectMetadata", "meta.k8s.io/v1")
        }
    finally:
        factory.shutdown()


def test_differently_scoped_informers_of_one_kind_hold_their_own(
    api_server: ApiServer, client: Any
) -> None:
    for ns in ("a", "b", "c"):
        _namespace(api_server, ns)
        for app in ("web", "db"):
            secret = {"metadata": {"name": f"{app}", "labels": {"app": app}}, "type": "Opaque"}
            secret["data"] = {"k": "dmFsdWU="}
            api_server.create(SECRETS, secret, ns)
    factory = SharedInformerFactory(client)
    try:
        everything = factory.secrets()
        web = factory.for_resource("secrets", label_selector="app=web")
        web_meta = factory.for_resource("secrets", label_selector="app=web", metadata_only=True)
        in_ab = factory.for_resource("secrets", namespaces=["a", "b"])
        db_in_c = factory.for_resource(
            "secrets", namespaces=["c"], field_selector="metadata.name=db"
        )
        informers = [everything, web, web_meta, in_ab, db_in_c]
        assert len({id(i) for i in informers}) == 5
        # the same options (spelled the same or not) are the same informer
        assert factory.for_resource(SECRETS, label_selector="app=web") is web
        assert factory.for_resource("secret", namespaces=["b", "a", "b"]) is in_ab
        keys = factory.informers()
        assert SECRETS in keys
        assert InformerKey in {type(k) for k in keys}
        assert {str(k) for k in keys} >= {
            "secrets",
            "secrets[labels app=web]",
            "secrets[metadata-only; labels app=web]",
            "secrets[namespaces a,b]",
            "secrets[namespaces c; fields metadata.name=db]",
        }
        factory.start()
        assert wait_for_cache_sync(*informers, timeout=WAIT)

        def keys_of(informer: Any) -> set[str]:
            return set(informer.get_indexer().list_keys())

        assert keys_of(everything) == {f"{ns}/{a}" for ns in "abc" for a in ("web", "db")}
        assert keys_of(web) == {"a/web", "b/web", "c/web"}
        assert keys_of(web_meta) == {"a/web", "b/web", "c/web"}
        assert keys_of(in_ab) == {"a/web", "a/db", "b/web", "b/db"}
        assert keys_of(db_in_c) == {"c/db"}
        assert all("data" in o for o in web.get_indexer().list())
        assert all("data" not in o for o in web_meta.get_indexer().list())
        with pytest.raises(ValueError, match="cluster-scoped"):
            factory.for_resource("namespaces", namespaces=["a"])
        with pytest.raises(TypeError, match="list of names"):
            factory.for_resource("secrets", namespaces="a")  # type: ignore[call-overload]
    finally:
        factory.shutdown()


def test_multi_namespace_informer_through_churn_and_a_forced_relist(
    api_server: ApiServer, client: Any
) -> None:
    namespaces = ("a", "b", "c")
    for ns in namespaces:
        _namespace(api_server, ns)
    # Short watches (1-2 s), so that each namespace re-watches during the test.
    factory = SharedInformerFactory(client, reflector_config=ReflectorConfig(min_watch_timeout=1))
    rng = random.Random(29)
    live: dict[str, set[str]] = {ns: set() for ns in namespaces}
    serial = itertools.count()

    def churn(steps: int) -> dict[str, Any]:
        last: dict[str, Any] = {}
        for _ in range(steps):
            step = next(serial)
            ns = rng.choice(namespaces)
            names = sorted(live[ns])
            roll = rng.random()
            if names and roll < 0.3:
                name = rng.choice(names)
                last = api_server.delete(CONFIGMAPS, name, ns)
                live[ns].discard(name)
            elif names and roll < 0.6:
                obj = api_server.get(CONFIGMAPS, rng.choice(names), ns)
                obj["data"] = {"step": str(step)}
                last = api_server.update(CONFIGMAPS, obj)
            else:
                name = f"cm{step}"
                last = api_server.create(CONFIGMAPS, {"metadata": {"name": name}}, ns)
                live[ns].add(name)
        return last

    churn(30)
    try:
        informer = factory.for_resource("configmaps", namespaces=["a", "b"])
        assert isinstance(informer, MultiNamespaceInformer)
        assert informer.namespaces == ("a", "b")

        class Synced(Recorder):
            def __init__(self) -> None:
                super().__init__()
                self.synced = 0
                self.callers: set[str] = set()

            def on_synced(self) -> None:
                self.record("synced")

        recorder = Synced()
        registration = informer.add_event_handler(recorder)
        # each namespace's own informer, watched for its relists
        relists = {ns: HookedRecorder() for ns in ("a", "b")}
        for ns, hooked in relists.items():
            informer.informers[ns].add_event_handler(hooked)
        source = InformerSource(informer, name="configmaps in a and b")
        sink = _Sink()
        source.start(sink)
        factory.start()
        assert registration.wait_synced(WAIT)
        assert informer.has_synced()
        assert recorder.wait_for(lambda events: ("synced",) in events)
        # a runtime source over it syncs with every namespace's objects
        assert source.wait_synced(WAIT)
        assert {str(r) for r in sink.items} == set(informer.get_indexer().list_keys())
        source.stop()
        churn(40)
        # A forced relist of namespace "a" only: its next re-watch (watches
        # end every second or two) is answered 410 Expired; "b" re-watches
        # where it was.
        api_server.fail_next(1, 410, path_prefix="/api/v1/namespaces/a/configmaps")
        last = churn(20)
        assert relists["a"].wait_for(lambda events: [e[0] for e in events].count("begin") == 2)
        last = churn(20)
        marker = api_server.create(CONFIGMAPS, {"metadata": {"name": "marker"}}, "a")
        other = api_server.create(CONFIGMAPS, {"metadata": {"name": "marker"}}, "b")
        assert informer.wait_for_resource_version(marker, timeout=WAIT)
        assert informer.wait_for_resource_version(other, timeout=WAIT)
        assert last is not None
        assert informer.wait_idle()
        assert registration.wait_idle(WAIT)
        want = _server_metadata(api_server, CONFIGMAPS, ("a", "b"))
        assert _cache_metadata(informer) == want
        assert not any(k.startswith("c/") for k in _cache_metadata(informer))
        with recorder.lock:
            assert {k: o["metadata"] for k, o in recorder.model.items()} == want
            assert recorder.events.count(("synced",)) == 1
        lister = factory.lister("configmaps", namespaces=["a", "b"])
        assert lister.namespace("a").get("marker") is not None
        assert lister.namespace("c").list() == []
        assert len(informer.get_indexer()) == len(want)
        # namespace "a" relisted (its initial list, then the forced one), "b" did not
        with relists["a"].lock, relists["b"].lock:
            begins = {ns: [e for e in relists[ns].events if e[0] == "begin"] for ns in "ab"}
        assert len(begins["a"]) == 2, begins
        assert len(begins["b"]) == 1, begins
    finally:
        factory.shutdown()


def test_removal_while_handlers_are_busy(api_server: ApiServer, client: Any) -> None:
    api_server.create(CONFIGMAPS, {"metadata": {"name": "a"}})
    api_server.create(CONFIGMAPS, {"metadata": {"name": "b"}})
    factory = SharedInformerFactory(client)
    entered = threading.Event()
    release = threading.Event()
    calls: list[str] = []

    class Busy:
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            calls.append(f"add {obj['metadata']['name']}")
            entered.set()
            assert release.wait(WAIT)

        def on_update(self, old: Any, new: Any) -> None:
            calls.append("update")

        def on_delete(self, obj: Any) -> None:
            calls.append("delete")

        def on_removed(self) -> None:
            calls.append("removed")

    try:
        informer = factory.configmaps()
        registration = informer.add_event_handler(Busy())
        other = factory.for_resource("configmaps", metadata_only=True)
        factory.start()
        assert entered.wait(WAIT)  # the handler is busy with its first object
        removed: list[bool] = []
        remover = threading.Thread(target=lambda: removed.append(factory.remove("configmaps")))
        remover.start()
        release.set()
        remover.join(WAIT)
        assert not remover.is_alive()
        assert removed == [True]
        assert informer.is_stopped()
        assert registration.is_stopped()
        # the handler finished what it was handed, then heard of the removal once
        assert calls[-1] == "removed"
        assert calls.count("removed") == 1
        assert calls[0] == "add a"
        assert SECRETS not in factory.informers()
        assert CONFIGMAPS not in factory.informers()
        assert not factory.remove("configmaps")  # gone already
        # the factory stays ready: the other informer runs on, a new one starts
        assert wait_for_cache_sync(other, timeout=WAIT)
        again = factory.configmaps()
        assert again is not informer
        factory.start()
        assert wait_for_cache_sync(again, timeout=WAIT)
        assert factory.remove(other)
        assert other.is_stopped()
        # a multi-namespace informer's handler hears of its removal once
        spread = factory.for_resource("configmaps", namespaces=["default", "kube-system"])
        heard: list[str] = []
        spread_reg = spread.add_event_handler(
            type("Told", (Recorder,), {"on_removed": lambda self: heard.append("removed")})()
        )
        factory.start()
        assert spread_reg.wait_synced(WAIT)
        assert factory.remove("configmaps", namespaces=["kube-system", "default"])
        assert heard == ["removed"]
        assert spread.is_stopped()
        assert spread_reg.is_stopped()
    finally:
        factory.shutdown()


class _Sink:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, item: Any) -> None:
        self.items.append(item)


def test_a_crd_uninstalled_and_reinstalled(api_server: ApiServer, client: Any) -> None:
    install_widgets(api_server)
    api_server.create(WIDGETS, _object(WIDGETS, "w1"), "default")
    factory = SharedInformerFactory(client)
    try:
        informer = factory.for_resource("widgets.example.com", metadata_only=True)
        source = InformerSource(informer, name="widgets")
        sink = _Sink()
        source.start(sink)
        factory.start()
        assert source.wait_synced(WAIT)
        assert [str(r) for r in sink.items] == ["default/w1"]
        # uninstalled: the informer would retry its 404s for ever; remove it
        api_server.delete("customresourcedefinitions", "widgets.example.com")
        assert factory.remove("widgets.example.com", metadata_only=True)
        assert informer.is_stopped()
        assert source.registration is not None
        assert source.registration.is_stopped()
        with pytest.raises(InformerStateError, match="stopped"):
            source.start(sink)  # the removal stopped the source
        source.stop()  # idempotent
        # reinstalled: a new informer of the same name serves the new objects
        install_widgets(api_server)
        api_server.create(WIDGETS, _object(WIDGETS, "w2"), "default")
        fresh = factory.for_resource("widgets.example.com", metadata_only=True)
        assert fresh is not informer
        again = InformerSource(fresh, name="widgets again")
        sink2 = _Sink()
        again.start(sink2)
        factory.start()
        assert again.wait_synced(WAIT)
        assert [str(r) for r in sink2.items] == ["default/w2"]
        assert [o["metadata"]["name"] for o in fresh.get_indexer().list()] == ["w2"]
        again.stop()
    finally:
        factory.shutdown()


def test_the_mirror_stores_metadata_only_objects(
    api_server: ApiServer, client: Any, tmp_path: Path
) -> None:
    for i in range(4):
        body = {"metadata": {"name": f"c{i}", "labels": {"app": f"a{i % 2}"}}, "data": {"k": "v"}}
        api_server.create(CONFIGMAPS, body)
    database = MirrorDatabase(f"sqlite:///{tmp_path / 'mirror.db'}")
    store = MirrorStore(database, CONFIGMAPS, [Column("app", "metadata.labels.app")])

    class ToMirror:
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            store.sync(obj)

        def on_update(self, old: Any, new: Any) -> None:
            store.sync(new)

        def on_delete(self, obj: Any) -> None:
            store.delete(
                obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key(obj)
            )

    factory = SharedInformerFactory(client)
    try:
        informer = factory.for_resource("configmaps", metadata_only=True)
        registration = informer.add_event_handler(ToMirror())
        factory.start()
        assert registration.wait_synced(WAIT)
        last = api_server.delete(CONFIGMAPS, "c0", "default")
        assert informer.wait_for_resource_version(last, timeout=WAIT, handler=registration)
        rows = store.rows()
        assert sorted(r.name for r in rows.values()) == ["c1", "c2", "c3"]
        assert {r.name: r.columns["app"] for r in rows.values()} == {
            "c1": "a1",
            "c2": "a0",
            "c3": "a1",
        }
        stored = store.get("default/c1")
        assert stored is not None
        assert stored["kind"] == "PartialObjectMetadata"
        assert "data" not in stored
    finally:
        factory.shutdown()
        database.close()


def test_what_a_metadata_only_informer_holds_by_default(api_server: ApiServer, client: Any) -> None:
    managed = [
        {
            "manager": "m",
            "operation": "Update",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {}},
        }
    ]
    body = {"metadata": {"name": "c", "managedFields": managed}, "data": {"k": "v"}}
    api_server.create(CONFIGMAPS, body, "default")
    seen: list[Any] = []

    def tag(obj: Any) -> Any:
        seen.append(type(obj))
        return obj

    factory = SharedInformerFactory(client)
    try:
        meta = factory.for_resource(CONFIGMAPS, metadata_only=True)
        # managed_fields=None means the default (dropped): the same informer
        assert factory.for_resource(CONFIGMAPS, metadata_only=True, managed_fields=False) is meta
        kept = factory.for_resource(CONFIGMAPS, metadata_only=True, managed_fields=True)
        stripped_full = factory.for_resource(CONFIGMAPS, managed_fields=False, transform=tag)
        dicts = factory.for_resource(CONFIGMAPS, metadata_only=True, store=Indexer)
        assert len({id(i) for i in (meta, kept, stripped_full, dicts)}) == 4
        assert str(InformerKey(CONFIGMAPS, _options_of(factory, dicts))).endswith("store Indexer]")
        assert type(meta.get_indexer()) is CompactStore
        assert meta.get_indexer().codec.name == "zstd"  # the fast extra (json without it)
        assert type(dicts.get_indexer()) is Indexer
        with pytest.raises(TypeError, match="unknown informer options"):
            factory.for_resource(CONFIGMAPS, metadata_onyl=True)  # type: ignore[call-overload]
        factory.start()
        assert wait_for_cache_sync(meta, kept, stripped_full, dicts, timeout=WAIT)

        def cached(informer: Any) -> dict[str, Any]:
            obj = informer.get_indexer().get_by_key("default/c")
            assert obj is not None
            return dict(obj["metadata"])

        assert "managedFields" not in cached(meta)
        assert "managedFields" not in cached(dicts)
        assert cached(kept)["managedFields"] == managed
        full = stripped_full.get_indexer().get_by_key("default/c")
        assert full["data"] == {"k": "v"}
        assert "managedFields" not in full["metadata"]
        assert seen == [dict]  # the transform ran after the strip, on a dict
    finally:
        factory.shutdown()


def _options_of(factory: SharedInformerFactory, informer: Any) -> Any:
    return next(k.options for k, i in factory.informers().items() if i is informer)
