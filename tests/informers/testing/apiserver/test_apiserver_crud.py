"""Storage rules of SEMANTICS.md Part A, through the real kubernetes client."""

from __future__ import annotations

import json

import pytest
from apiserver_helpers import pod
from kubernetes import client, watch

from informers.testing import ApiServer, ApiServerError
from informers.wire.resources import Resource
from tests.helpers import configmap, crd


def _status(exc: client.ApiException) -> dict:
    return json.loads(exc.body)


def test_fresh_cluster_has_namespaces_and_default_service_account(
    core: client.CoreV1Api,
) -> None:
    names = [n.metadata.name for n in core.list_namespace().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    sa = core.read_namespaced_service_account("default", "default")
    assert sa.metadata.uid


def test_one_global_resource_version_across_kinds(core: client.CoreV1Api, ns: str) -> None:
    first = core.create_namespaced_config_map(ns, configmap("a"))
    second = core.create_namespaced_pod(ns, pod("p"))
    third = core.create_namespaced_config_map(ns, configmap("b"))
    rvs = [int(o.metadata.resource_version) for o in (first, second, third)]
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == 3
    listed = core.list_namespaced_config_map(ns)
    assert int(listed.metadata.resource_version) == rvs[2]


def test_empty_list_carries_the_global_resource_version(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    listed = core.list_namespaced_pod(ns)
    assert listed.items == []
    assert int(listed.metadata.resource_version) == server.resource_version


def test_create_fills_uid_timestamp_rv_and_generation(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_pod(ns, pod("p"))
    assert created.metadata.uid
    assert created.metadata.creation_timestamp is not None
    assert created.metadata.resource_version.isdigit()
    assert created.metadata.generation == 1
    assert created.metadata.namespace == ns


def test_configmap_and_namespace_have_no_generation(core: client.CoreV1Api, ns: str) -> None:
    cm = core.create_namespaced_config_map(ns, configmap("a", k="v"))
    assert cm.metadata.generation is None
    assert core.read_namespace(ns).metadata.generation is None


def test_update_bumps_generation_only_on_spec_change(apps: client.AppsV1Api, ns: str) -> None:
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    created = apps.create_namespaced_deployment(ns, body)
    assert created.metadata.generation == 1
    created.metadata.labels = {"x": "y"}
    relabelled = apps.replace_namespaced_deployment("d", ns, created)
    assert relabelled.metadata.generation == 1
    relabelled.spec.replicas = 3
    scaled = apps.replace_namespaced_deployment("d", ns, relabelled)
    assert scaled.metadata.generation == 2


def test_update_with_stale_rv_is_409_conflict(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_config_map(ns, configmap("a", k="1"))
    created.data = {"k": "2"}
    core.replace_namespaced_config_map("a", ns, created)
    created.data = {"k": "3"}
    with pytest.raises(client.ApiException) as err:
        core.replace_namespaced_config_map("a", ns, created)
    assert err.value.status == 409
    status = _status(err.value)
    assert status["reason"] == "Conflict"
    assert status["details"] == {"name": "a", "kind": "configmaps"}
    assert "the object has been modified" in status["message"]


def test_update_without_rv_is_unconditional(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_config_map(ns, configmap("a", k="1"))
    core.patch_namespaced_config_map("a", ns, {"data": {"k": "2"}})
    replaced = core.replace_namespaced_config_map("a", ns, configmap("a", k="3"))
    assert replaced.data == {"k": "3"}


def test_unchanged_update_keeps_the_resource_version(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_config_map(ns, configmap("a", k="1"))
    again = core.replace_namespaced_config_map("a", ns, created)
    assert again.metadata.resource_version == created.metadata.resource_version


def test_create_existing_name_is_409_already_exists(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, pod("p"))
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_pod(ns, pod("p"))
    assert err.value.status == 409
    assert _status(err.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "p" already exists',
        "reason": "AlreadyExists",
        "details": {"name": "p", "kind": "pods"},
        "code": 409,
    }


def test_get_missing_object_is_404_not_found(apps: client.AppsV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        apps.read_namespaced_deployment("nope", ns)
    assert err.value.status == 404
    status = _status(err.value)
    assert status["message"] == 'deployments.apps "nope" not found'
    assert status["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("missing", configmap("a"))
    assert err.value.status == 404
    assert _status(err.value)["details"] == {"name": "missing", "kind": "namespaces"}


def test_generate_name_creates_a_unique_name(core: client.CoreV1Api, ns: str) -> None:
    body = {"metadata": {"generateName": "cm-"}, "data": {}}
    a = core.create_namespaced_config_map(ns, body)
    b = core.create_namespaced_config_map(ns, body)
    assert a.metadata.name.startswith("cm-")
    assert a.metadata.name != b.metadata.name


def test_merge_patch_and_json_patch(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_config_map(ns, configmap("a", k="1", gone="x"))
    merged = core.patch_namespaced_config_map("a", ns, {"data": {"k": "2", "gone": None}})
    assert merged.data == {"k": "2"}
    patched = core.patch_namespaced_config_map(
        "a", ns, [{"op": "add", "path": "/data/n", "value": "3"}]
    )
    assert patched.data == {"k": "2", "n": "3"}
    assert int(patched.metadata.resource_version) > int(merged.metadata.resource_version)


def test_delete_returns_object_for_pods(core: client.CoreV1Api, ns: str) -> None:
    created = core.create_namespaced_pod(ns, pod("p"))
    deleted = core.delete_namespaced_pod("p", ns)
    assert deleted.metadata.uid == created.metadata.uid
    assert int(deleted.metadata.resource_version) > int(created.metadata.resource_version)
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod("p", ns)
    assert err.value.status == 404


def test_delete_returns_success_status_for_other_kinds(
    api: client.ApiClient, core: client.CoreV1Api, ns: str
) -> None:
    created = core.create_namespaced_config_map(ns, configmap("a"))
    response = core.delete_namespaced_config_map("a", ns, _preload_content=False)
    assert json.loads(response.data) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "a", "kind": "configmaps", "uid": created.metadata.uid},
    }


def test_delete_with_finalizers_sets_deletion_timestamp(core: client.CoreV1Api, ns: str) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/keep"]
    core.create_namespaced_config_map(ns, body)
    response = core.delete_namespaced_config_map("a", ns, _preload_content=False)
    marked = json.loads(response.data)
    assert marked["kind"] == "ConfigMap"
    assert marked["metadata"]["deletionTimestamp"]
    still = core.read_namespaced_config_map("a", ns)
    assert still.metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("a", ns, {"metadata": {"finalizers": None}})
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_config_map("a", ns)
    assert err.value.status == 404


def test_delete_collection_with_label_selector_deletes_matching(
    core: client.CoreV1Api, ns: str
) -> None:
    core.create_namespaced_config_map(ns, {"metadata": {"name": "a", "labels": {"x": "1"}}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "b", "labels": {"x": "2"}}})
    core.delete_collection_namespaced_config_map(ns, label_selector="x=1")
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns).items] == ["b"]


def test_delete_collection_without_selector_deletes_all(core: client.CoreV1Api, ns: str) -> None:
    for name in "abc":
        core.create_namespaced_config_map(ns, configmap(name))
    core.delete_collection_namespaced_config_map(ns)
    assert core.list_namespaced_config_map(ns).items == []


def test_delete_namespace_removes_its_objects(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    deleted = json.loads(core.delete_namespace(ns, _preload_content=False).data)
    assert deleted["kind"] == "Namespace"
    assert deleted["metadata"]["name"] == ns
    remaining = core.list_config_map_for_all_namespaces().items
    assert all(c.metadata.namespace != ns for c in remaining)


def test_status_subresource_writes_only_status(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, pod("p"))
    core.patch_namespaced_pod_status("p", ns, {"status": {"phase": "Running"}})
    assert core.read_namespaced_pod("p", ns).status.phase == "Running"
    # A write to the main resource keeps the stored status.
    core.patch_namespaced_pod(
        "p", ns, {"status": {"phase": "Failed"}, "metadata": {"labels": {"a": "b"}}}
    )
    current = core.read_namespaced_pod("p", ns)
    assert current.status.phase == "Running"
    assert current.metadata.labels == {"a": "b"}


def test_all_listed_kinds_are_served(api: client.ApiClient, server: ApiServer, ns: str) -> None:
    plurals = {(r.group, r.plural) for r in server.resources()}
    expected = {
        ("", p)
        for p in [
            "namespaces",
            "pods",
            "services",
            "endpoints",
            "configmaps",
            "secrets",
            "serviceaccounts",
            "nodes",
            "events",
            "replicationcontrollers",
            "persistentvolumeclaims",
        ]
    } | {
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("apps", "statefulsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("coordination.k8s.io", "leases"),
        ("discovery.k8s.io", "endpointslices"),
        ("networking.k8s.io", "ingresses"),
    }
    assert expected <= plurals
    lease = client.CoordinationV1Api(api).create_namespaced_lease(
        ns, {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    )
    assert lease.spec.holder_identity == "me"
    node = client.CoreV1Api(api).create_node({"metadata": {"name": "n1"}})
    assert node.metadata.namespace is None


def test_crd_creation_registers_its_resource(
    api: client.ApiClient, custom: client.CustomObjectsApi, ns: str
) -> None:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd(schema=None))
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    created = custom.create_namespaced_custom_object("example.com", "v1", ns, "widgets", body)
    assert created["metadata"]["generation"] == 1
    listed = custom.list_namespaced_custom_object("example.com", "v1", ns, "widgets")
    assert listed["kind"] == "WidgetList"
    assert [i["kind"] for i in listed["items"]] == ["Widget"]  # CR items keep kind


def test_register_resource_from_python_cluster_scoped(
    server: ApiServer, custom: client.CustomObjectsApi
) -> None:
    server.register_resource(Resource("example.com", "v1", "gadgets", "Gadget", namespaced=False))
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    custom.create_cluster_custom_object("example.com", "v1", "gadgets", body)
    got = custom.get_cluster_custom_object("example.com", "v1", "gadgets", "g")
    assert got["metadata"]["name"] == "g"


def test_python_object_api_round_trips(server: ApiServer, ns: str) -> None:
    created = server.create("configmaps", configmap("a", k="v"), ns)
    assert server.get("configmaps", "a", ns)["data"] == {"k": "v"}
    created["data"] = {"k": "w"}
    updated = server.update("configmaps", created)
    assert int(updated["metadata"]["resourceVersion"]) == server.resource_version
    assert [o["metadata"]["name"] for o in server.list_objects("configmaps", ns)] == ["a"]
    server.delete("configmaps", "a", ns)
    with pytest.raises(ApiServerError) as err:
        server.get("configmaps", "a", ns)
    assert err.value.code == 404


def _widget_crd(scope: str = "Namespaced") -> dict[str, object]:
    return crd(scope=scope, schema=None, subresources={"status": {}})


def test_crd_deletion_unregisters_its_resource(
    api: client.ApiClient, custom: client.CustomObjectsApi, ns: str
) -> None:
    ext = client.ApiextensionsV1Api(api)
    created = ext.create_custom_resource_definition(_widget_crd())
    conditions = {c.type: c.status for c in created.status.conditions}
    assert conditions["Established"] == "True"
    custom.list_namespaced_custom_object("example.com", "v1", ns, "widgets")
    ext.delete_custom_resource_definition("widgets.example.com")
    with pytest.raises(client.ApiException) as err:
        custom.list_namespaced_custom_object("example.com", "v1", ns, "widgets")
    assert err.value.status == 404


def test_custom_resource_status_subresource(
    api: client.ApiClient, custom: client.CustomObjectsApi, ns: str
) -> None:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(_widget_crd())
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    custom.create_namespaced_custom_object("example.com", "v1", ns, "widgets", body)
    custom.patch_namespaced_custom_object_status(
        "example.com", "v1", ns, "widgets", "w", {"status": {"ready": True}}
    )
    got = custom.get_namespaced_custom_object("example.com", "v1", ns, "widgets", "w")
    assert got["status"] == {"ready": True}
    assert got["metadata"]["generation"] == 1  # status writes do not bump it


def test_custom_resource_watch(
    api: client.ApiClient, custom: client.CustomObjectsApi, ns: str
) -> None:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(_widget_crd())
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    custom.create_namespaced_custom_object("example.com", "v1", ns, "widgets", body)
    w = watch.Watch()
    seen = []
    for event in w.stream(
        custom.list_namespaced_custom_object, "example.com", "v1", ns, "widgets", timeout_seconds=5
    ):
        seen.append((event["type"], event["object"]["kind"], event["object"]["metadata"]["name"]))
        w.stop()
    assert seen == [("ADDED", "Widget", "w")]


def test_api_server_fixture_serves(api_server: ApiServer) -> None:
    with api_server.api_client() as api:
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
    assert "default" in names


def test_table_accept_header_gets_a_plain_or_table_answer(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    import urllib3

    core.create_namespaced_config_map(ns, configmap("a"))
    http = urllib3.PoolManager()
    try:
        response = http.request(
            "GET",
            f"{server.url}/api/v1/namespaces/{ns}/configmaps",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
        )
    finally:
        http.clear()
    assert response.status == 200
    assert json.loads(response.data)["kind"] in ("Table", "ConfigMapList")


def test_status_subresource_of_kind_without_one_is_404(server: ApiServer, ns: str) -> None:
    import urllib3

    server.create("configmaps", configmap("a"), ns)
    http = urllib3.PoolManager()
    try:
        response = http.request(
            "PUT",
            f"{server.url}/api/v1/namespaces/{ns}/configmaps/a/status",
            body=json.dumps(configmap("a")).encode(),
            headers={"Content-Type": "application/json"},
        )
    finally:
        http.clear()
    assert response.status == 404


def test_dry_run_validates_and_stores_nothing(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    core.create_namespaced_config_map(ns, configmap("a", k="1"))
    before = server.resource_version
    made = core.create_namespaced_config_map(ns, configmap("b"), dry_run="All")
    assert made.metadata.name == "b"
    assert made.metadata.uid
    changed = core.patch_namespaced_config_map("a", ns, {"data": {"k": "2"}}, dry_run="All")
    assert changed.data == {"k": "2"}
    core.delete_namespaced_config_map("a", ns, dry_run="All")
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map(ns, configmap("a"), dry_run="All")
    assert err.value.status == 409
    assert server.resource_version == before
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns).items] == ["a"]
    assert core.read_namespaced_config_map("a", ns).data == {"k": "1"}


def test_create_many_loads_objects_in_bulk(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    rv = server.create_many("configmaps", (configmap(f"cm-{i}") for i in range(5)), ns)
    listed = core.list_namespaced_config_map(ns)
    assert [c.metadata.name for c in listed.items] == [f"cm-{i}" for i in range(5)]
    assert listed.metadata.resource_version == str(rv)
    with pytest.raises(ApiServerError) as err:
        server.create_many("configmaps", [configmap("Bad_Name")], ns)
    assert err.value.code == 422
