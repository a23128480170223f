"""Every verb of the client against the emulator, on built-in kinds and a
custom resource: plain dicts in and out, models accepted, typed errors,
server-side apply and its conflicts, dry runs that store nothing."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client import V1ConfigMap, V1ObjectMeta, V1Pod

from informers import SharedInformerFactory, wait_for_cache_sync
from informers.errors import (
    AlreadyExistsError,
    ConflictError,
    InvalidError,
    NotFoundError,
    ObjectKeyError,
    UnknownResourceError,
)
from informers.testing import ApiServer
from informers.toolkit.client import Client
from informers.wire.resources import CONFIGMAPS, DEPLOYMENTS, Resource


def cm(name: str, ns: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": dict(data),
    }


def widget(name: str, ns: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": ns},
        "spec": dict(spec),
    }


def deployment(name: str, ns: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def test_create_get_update_delete_a_configmap(live: Client, ns: str) -> None:
    created = live.create(cm("a", ns, x="1"))
    assert created["metadata"]["uid"]
    assert created["data"] == {"x": "1"}
    got = live.get("configmaps", "a", namespace=ns)
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    got["data"]["x"] = "2"
    updated = live.update(got)
    assert updated["data"] == {"x": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(got["metadata"]["resourceVersion"])
    with pytest.raises(ConflictError):
        live.update(got)  # its resourceVersion is stale now
    with pytest.raises(AlreadyExistsError):
        live.create(cm("a", ns))
    live.delete("cm", "a", namespace=ns)
    with pytest.raises(NotFoundError):
        live.get("cm", "a", namespace=ns)
    with pytest.raises(NotFoundError):
        live.delete("cm", "a", namespace=ns)


def test_names_resolve_as_kubectl_reads_them(live: Client, ns: str) -> None:
    live.create(cm("a", ns))
    for name in ("configmaps", "configmap", "cm", "ConfigMap", CONFIGMAPS):
        assert live.get(name, "a", namespace=ns)["metadata"]["name"] == "a"
    assert live.resolve("deploy") == DEPLOYMENTS
    with pytest.raises(UnknownResourceError):
        live.resolve("configmapz")


def test_the_three_patch_types(live: Client, ns: str) -> None:
    live.create(cm("a", ns, x="1"))
    merged = live.patch("cm", "a", {"data": {"y": "2", "x": None}}, namespace=ns)
    assert merged["data"] == {"y": "2"}
    op = [{"op": "add", "path": "/data/z", "value": "3"}]
    assert live.patch("cm", "a", op, namespace=ns, patch_type="json")["data"] == {
        "y": "2",
        "z": "3",
    }
    live.create(deployment("web", ns))
    containers = {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "b"}]}}}}
    patched = live.patch("deploy", "web", containers, namespace=ns, patch_type="strategic")
    names = [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]]
    assert sorted(names) == ["c", "side"]  # strategic: merged by name, not replaced
    with pytest.raises(ValueError, match="patch_type"):
        live.patch("cm", "a", {}, namespace=ns, patch_type="yaml")  # type: ignore[arg-type]


def test_models_are_accepted_and_returned(live: Client, ns: str) -> None:
    model = V1ConfigMap(metadata=V1ObjectMeta(name="m", namespace=ns), data={"k": "v"})
    created = live.create(model)
    assert created["kind"] == "ConfigMap"
    assert created["data"] == {"k": "v"}
    typed = live.get("cm", "m", namespace=ns, model=V1ConfigMap)
    assert isinstance(typed, V1ConfigMap)
    assert typed.data == {"k": "v"}
    assert live.get("cm", "m", namespace=ns, model=V1ConfigMap) is typed  # memoised
    items = live.list("cm", namespace=ns, model=V1ConfigMap)
    assert [i.metadata.name for i in items] == ["m"]
    with pytest.raises(TypeError):
        live.get("cm", "m", namespace=ns, model=dict)


def test_list_with_selectors(live: Client, ns: str) -> None:
    for name, tier in (("a", "web"), ("b", "db"), ("c", "web")):
        body = cm(name, ns)
        body["metadata"]["labels"] = {"tier": tier}
        live.create(body)
    web = live.list("cm", namespace=ns, label_selector="tier=web")
    assert sorted(o["metadata"]["name"] for o in web) == ["a", "c"]
    assert {(o["apiVersion"], o["kind"]) for o in web} == {("v1", "ConfigMap")}
    named = live.list("cm", namespace=ns, field_selector="metadata.name=b")
    assert [o["metadata"]["name"] for o in named] == ["b"]


def test_invalid_objects_name_their_fields(live: Client, ns: str) -> None:
    with pytest.raises(InvalidError) as caught:
        live.create(cm("Not_A_Name", ns))
    assert any(c.get("field") == "metadata.name" for c in caught.value.causes)
    with pytest.raises(ObjectKeyError):
        live.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_apply_creates_then_conflicts_naming_the_other_manager(live: Client, ns: str) -> None:
    first = live.apply(cm("a", ns, k="1"), field_manager="one")
    assert first["data"] == {"k": "1"}
    managers = {e["manager"] for e in first["metadata"]["managedFields"]}
    assert managers == {"one"}
    with pytest.raises(ConflictError, match='"one"') as caught:
        live.apply(cm("a", ns, k="2"), field_manager="two")
    assert caught.value.causes
    assert caught.value.causes[0]["field"] == ".data.k"
    forced = live.apply(cm("a", ns, k="2"), field_manager="two", force=True)
    assert forced["data"] == {"k": "2"}
    with pytest.raises(ValueError, match="field_manager"):
        live.apply(cm("a", ns), field_manager="")


def test_delete_options(api_server: ApiServer, live: Client, ns: str) -> None:
    created = live.create(cm("a", ns))
    with pytest.raises(ConflictError, match="Precondition"):
        live.delete("cm", "a", namespace=ns, uid="not-its-uid")
    with pytest.raises(ConflictError, match="Precondition"):
        live.delete("cm", "a", namespace=ns, resource_version="1")
    live.delete(
        "cm",
        "a",
        namespace=ns,
        uid=created["metadata"]["uid"],
        resource_version=created["metadata"]["resourceVersion"],
        propagation_policy="Background",
        grace_period_seconds=0,
    )
    with pytest.raises(NotFoundError):
        live.get("cm", "a", namespace=ns)
    api_server.deletion_lifecycle = True  # the propagation policy's finalizers
    held = cm("held", ns)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    live.create(held)
    answer = live.delete("cm", "held", namespace=ns, propagation_policy="Foreground")
    assert answer["metadata"]["deletionTimestamp"]  # held by its finalizers
    assert "foregroundDeletion" in answer["metadata"]["finalizers"]


def test_dry_run_stores_nothing(api_server: ApiServer, live: Client, ns: str) -> None:
    answer = live.create(cm("dry", ns, k="v"), dry_run=True)
    assert answer["data"] == {"k": "v"}
    live.apply(cm("dry2", ns), field_manager="m", dry_run=True)
    assert api_server.list_objects("configmaps", ns) == []
    live.create(cm("a", ns, k="1"))
    rv = api_server.resource_version
    live.patch("cm", "a", {"data": {"k": "2"}}, namespace=ns, dry_run=True)
    got = live.get("cm", "a", namespace=ns)
    got["data"]["k"] = "3"
    live.update(got, dry_run=True)
    live.delete("cm", "a", namespace=ns, dry_run=True)
    assert api_server.resource_version == rv
    assert api_server.get("configmaps", "a", ns)["data"] == {"k": "1"}


def test_every_verb_on_a_custom_resource(live: Client, ns: str, widgets: Resource) -> None:
    created = live.create(widget("w", ns, size=1))
    assert created["kind"] == "Widget"
    assert live.get("widgets.example.com", "w", namespace=ns)["spec"] == {"size": 1}
    assert live.get("wd", "w", namespace=ns)["metadata"]["name"] == "w"
    created["spec"]["size"] = 2
    assert live.update(created)["spec"] == {"size": 2}
    assert live.patch(widgets, "w", {"spec": {"color": "red"}}, namespace=ns)["spec"] == {
        "size": 2,
        "color": "red",
    }
    status = live.patch_status(widgets, "w", {"status": {"ready": True}}, namespace=ns)
    assert status["status"] == {"ready": True}
    current = live.get(widgets, "w", namespace=ns)
    current["status"] = {"ready": False}
    current["spec"]["size"] = 99  # ignored by a status update
    after = live.update_status(current)
    assert after["status"] == {"ready": False}
    assert after["spec"]["size"] == 2
    applied = widget("w", ns)
    applied["status"] = {"phase": "Running"}
    after = live.apply_status(applied, field_manager="ctl", force=True)
    assert after["status"]["phase"] == "Running"
    spec_applied = live.apply(widget("w", ns, size=3), field_manager="ctl", force=True)
    assert spec_applied["spec"]["size"] == 3
    assert [o["metadata"]["name"] for o in live.list("widgets.example.com", namespace=ns)] == ["w"]
    live.delete("widgets.example.com", "w", namespace=ns)
    with pytest.raises(NotFoundError):
        live.get(widgets, "w", namespace=ns)


def test_status_subresource_of_a_built_in_kind(live: Client, ns: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    live.create(pod)
    answer = live.patch_status("pods", "p", {"status": {"phase": "Running"}}, namespace=ns)
    assert answer["status"]["phase"] == "Running"
    assert live.get("po", "p", namespace=ns, model=V1Pod).status.phase == "Running"


def test_reads_come_from_the_cache_when_the_factory_has_the_kind(
    api_server: ApiServer, api: Any, factory: SharedInformerFactory, ns: str
) -> None:
    informer = factory.configmaps()
    factory.start()
    wait_for_cache_sync(informer, timeout=10)
    client = Client(api, factory=factory)
    created = client.create(cm("a", ns, k="1"))
    cached = client.get("cm", "a", namespace=ns)  # waits for the informer to catch up
    assert cached is informer.get_indexer().get_by_key(f"{ns}/a")
    assert cached["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    # A change the client did not make is not waited for: the cache answers what it has.
    api_server.stall_watches(60)
    try:
        api_server.update("configmaps", {**cm("a", ns, k="2")})
        assert client.get("cm", "a", namespace=ns)["data"] == {"k": "1"}
        assert client.get("cm", "a", namespace=ns, live=True)["data"] == {"k": "2"}
    finally:
        api_server.stall_watches(0)
    assert [o["metadata"]["name"] for o in client.list("cm", namespace=ns)] == ["a"]
    assert client.list("cm", namespace=ns, field_selector="metadata.name=b") == []
    with pytest.raises(NotFoundError):
        client.get("cm", "missing", namespace=ns)
    # Kinds the factory has no informer for are read live.
    client.create({**cm("x", ns), "kind": "Secret", "data": {}})
    assert client.get("secrets", "x", namespace=ns)["kind"] == "Secret"


def test_a_cached_read_never_answers_older_than_the_clients_own_write(
    api_server: ApiServer, api: Any, factory: SharedInformerFactory, ns: str
) -> None:
    informer = factory.configmaps()
    factory.start()
    wait_for_cache_sync(informer, timeout=10)
    client = Client(api, factory=factory, catch_up_timeout=0.2)
    client.create(cm("a", ns, k="1"))
    assert client.get("cm", "a", namespace=ns)["data"] == {"k": "1"}  # read back
    assert client.get("cm", "a", namespace=ns) is informer.get_indexer().get_by_key(f"{ns}/a")
    api_server.stall_watches(60)
    try:
        client.patch("cm", "a", {"data": {"k": "2"}}, namespace=ns)
        # The cache cannot catch up while the watch is held: after the
        # catch-up timeout the read goes to the server instead.
        assert client.get("cm", "a", namespace=ns)["data"] == {"k": "2"}
        assert [o["data"] for o in client.list("cm", namespace=ns)] == [{"k": "2"}]
    finally:
        api_server.stall_watches(0)
    assert client.get("cm", "a", namespace=ns)["data"] == {"k": "2"}
    assert client.get("cm", "a", namespace=ns) is informer.get_indexer().get_by_key(f"{ns}/a")
    assert client.list("cm", namespace=ns)[0] is informer.get_indexer().get_by_key(f"{ns}/a")


def test_a_client_without_read_your_writes_reads_the_cache_as_it_is(
    api_server: ApiServer, api: Any, factory: SharedInformerFactory, ns: str
) -> None:
    informer = factory.configmaps()
    factory.start()
    wait_for_cache_sync(informer, timeout=10)
    client = Client(api, factory=factory, read_your_writes=False)
    api_server.stall_watches(60)
    try:
        client.create(cm("a", ns))
        with pytest.raises(NotFoundError):
            client.get("cm", "a", namespace=ns)  # not in the cache yet
    finally:
        api_server.stall_watches(0)


def test_a_factory_of_one_namespace_serves_that_namespace_and_no_other(
    api_server: ApiServer, api: Any, ns: str
) -> None:
    other = f"{ns}-b"
    api_server.create("namespaces", {"metadata": {"name": other}})
    for where in (ns, other):
        api_server.create("configmaps", cm("a", where, k=where))
    scoped = SharedInformerFactory(api, namespace=ns)
    try:
        informer = scoped.configmaps()
        scoped.start()
        wait_for_cache_sync(informer, timeout=10)
        client = Client(api, factory=scoped)
        for _ in range(2):  # the first read resolves the kind, the second takes the fast path
            assert client.get("cm", "a", namespace=ns) is informer.get_indexer().get_by_key(
                f"{ns}/a"
            )
            # another namespace is in no store of the factory: read live
            assert client.get("cm", "a", namespace=other)["data"] == {"k": other}
            with pytest.raises(NotFoundError):
                client.get("cm", "missing", namespace=ns)
            with pytest.raises(NotFoundError):
                client.get("cm", "missing", namespace=other)
        api_server.stall_watches(60)
        try:  # what the cache answers is the cache's: a change it has not seen is not there
            api_server.update("configmaps", cm("a", ns, k="changed"))
            api_server.update("configmaps", cm("a", other, k="changed"))
            assert client.get("cm", "a", namespace=ns)["data"] == {"k": ns}
            assert client.get("cm", "a", namespace=other)["data"] == {"k": "changed"}
        finally:
            api_server.stall_watches(0)
    finally:
        scoped.shutdown()
