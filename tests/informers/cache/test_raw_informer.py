"""An informer whose store keeps raw objects (RawStore) over the emulator:
lists and watch events arrive undecoded, the cache answers as the default
store does, and a key-only handler never makes an object decode."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from informers.cache.compact.raw import RawStore
from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.cache.listers import Lister
from informers.cache.protocols import decode_on_demand_source
from informers.cache.store import Indexer
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.testing import ApiServer
from informers.wire import _json
from informers.wire.objects import NAMESPACE_INDEX, meta_namespace_key, namespace_index
from informers.wire.raw import RawObject
from informers.wire.resources import PODS


def _pod(name: str, ns: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "img:1"}]},
    }


def _image(pod: Any) -> str:
    return str(pod["spec"]["containers"][0]["image"])


def test_the_raw_store_selects_the_undecoded_path(api_server: ApiServer) -> None:
    client = api_server.api_client()
    try:
        lw = HTTPListerWatcher(client, PODS)
        assert decode_on_demand_source(lw, Indexer()) is lw
        view = decode_on_demand_source(lw, RawStore())
        assert view is not lw
        api_server.create("namespaces", {"metadata": {"name": "a"}})
        api_server.create(PODS, _pod("p", "a"))
        listed = view.list(ListOptions())
        assert [type(item) for item in listed["items"]] == [RawObject]
        assert listed["items"][0]["spec"]["containers"][0]["image"] == "img:1"
        assert listed["metadata"]["resourceVersion"]
        assert all(type(item) is dict for item in lw.list(ListOptions())["items"])
    finally:
        client.close()


def test_informer_with_the_raw_store_over_the_emulator(
    api_server: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for ns in ("a", "b"):
        api_server.create("namespaces", {"metadata": {"name": ns}})
    for i in range(20):
        api_server.create(PODS, _pod(f"p{i}", "a" if i % 2 else "b", app=f"app{i % 3}"))
    client = api_server.api_client()
    keys: list[str] = []
    updates: list[tuple[Any, Any]] = []
    handler_threads: set[str] = set()
    got_update = threading.Event()

    def on_update(old: Any, new: Any) -> None:
        updates.append((_image(old), _image(new)))  # decodes here
        handler_threads.add(threading.current_thread().name)
        got_update.set()

    informer = SharedIndexInformer(
        HTTPListerWatcher(client, PODS),
        indexers={NAMESPACE_INDEX: namespace_index},
        name="pods",
        store=RawStore,
    )
    informer.add_event_handler(
        ResourceEventHandlerFuncs(add_func=lambda obj, *_: keys.append(meta_namespace_key(obj)))
    )
    informer.add_event_handler(ResourceEventHandlerFuncs(update_func=on_update))
    # Every full decode is counted from here: the sync and the key-only
    # handler must make none.
    decodes: list[str] = []
    exact = _json.loads

    def counting(data: Any) -> Any:
        decodes.append(threading.current_thread().name)
        return exact(data)

    monkeypatch.setattr(_json, "loads", counting)
    informer.start()
    try:
        assert informer.wait_synced(30)
        assert informer.wait_idle(30)
        assert decodes == []
        assert sorted(keys) == sorted(f"{'a' if i % 2 else 'b'}/p{i}" for i in range(20))
        store = informer.get_indexer()
        assert isinstance(store, RawStore)
        server = {meta_namespace_key(o): o for o in api_server.list_objects(PODS)}
        for key, obj in server.items():
            cached = store.get_by_key(key)
            assert cached is not None
            assert cached["metadata"] == obj["metadata"]
            assert cached["spec"] == obj["spec"]
        assert len(Lister(store).namespace("a").list("app=app1")) == sum(
            1 for i in range(20) if i % 2 and i % 3 == 1
        )
        old = store.get_by_key("a/p1")
        assert old is not None
        spec = {**old["spec"], "containers": [{**old["spec"]["containers"][0], "image": "img:2"}]}
        api_server.update(PODS, {**old, "spec": spec})
        assert got_update.wait(30)
        assert informer.wait_idle(30)
        assert updates == [("img:1", "img:2")]
        assert _image(store.get_by_key("a/p1")) == "img:2"
        # The handler's reads decoded on its own thread, not the informer's.
        assert not any(name.startswith(("informer-", "reflector-")) for name in decodes)
        assert handler_threads
    finally:
        informer.stop()
        client.close()
