"""A CRD's scale subresource, printer columns, discovery entries and its
deletion, driven by kubectl and the official client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import RawWatch
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client
from test_kubectl import Kubectl, kubectl_path  # noqa: F401 - the fixture

from informers.testing import ApiServer
from informers.testing.apiserver._crd import jsonpath
from informers.testing.apiserver._kubeconfig import write_kubeconfig

GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"


def widget_crd() -> dict[str, Any]:
    return {
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "count": {"type": "integer", "minimum": 0},
                                        "color": {"type": "string"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "ready": {"type": "integer"},
                                        "selector": {"type": "string"},
                                        "conditions": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True,
                                            },
                                        },
                                    },
                                },
                            },
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.count",
                            "statusReplicasPath": ".status.ready",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Count", "type": "integer", "jsonPath": ".spec.count"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                        {
                            "name": "Ready",
                            "type": "string",
                            "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
                        },
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


def widget(name: str, count: int, color: str = "red") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"count": count, "color": color},
    }


@pytest.fixture
def widgets(api: client.ApiClient) -> client.CustomObjectsApi:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(widget_crd())
    return client.CustomObjectsApi(api)


@pytest.fixture
def kubectl(kubectl_path: str, server: ApiServer, tmp_path: Path) -> Kubectl:  # noqa: F811
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
    return Kubectl(kubectl_path, kubeconfig, tmp_path / "cache")


def test_scale_subresource_reads_and_writes_the_crd_paths(
    widgets: client.CustomObjectsApi, ns: str
) -> None:
    widgets.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, widget("w", 2))
    widgets.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, PLURAL, "w", {"status": {"ready": 1, "selector": "app=w"}}
    )
    scale = widgets.get_namespaced_custom_object_scale(GROUP, VERSION, ns, PLURAL, "w")
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 1, "selector": "app=w"}
    done = widgets.patch_namespaced_custom_object_scale(
        GROUP, VERSION, ns, PLURAL, "w", {"spec": {"replicas": 5}}
    )
    assert done["spec"] == {"replicas": 5}
    got = widgets.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w")
    assert got["spec"] == {"count": 5, "color": "red"}
    assert got["status"]["ready"] == 1  # the status is kept


def test_kubectl_scale_and_printer_columns(
    kubectl: Kubectl, widgets: client.CustomObjectsApi, ns: str
) -> None:
    widgets.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, widget("w", 2, "blue"))
    widgets.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        ns,
        PLURAL,
        "w",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
    )
    out = kubectl.run("scale", "widgets", "w", "--replicas=4", "-n", ns)
    assert "scaled" in out
    got = widgets.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w")
    assert got["spec"]["count"] == 4
    lines = kubectl.run("get", "widgets", "-n", ns).splitlines()
    assert lines[0].split() == ["NAME", "COUNT", "COLOR", "READY", "AGE"]
    assert lines[1].split()[:4] == ["w", "4", "blue", "True"]


def test_discovery_names_the_custom_subresources(
    api: client.ApiClient, widgets: client.CustomObjectsApi
) -> None:
    resources = widgets.get_api_resources(GROUP, VERSION)
    names = {r.name: r for r in resources.resources}
    assert set(names) == {PLURAL, f"{PLURAL}/status", f"{PLURAL}/scale"}
    assert names[f"{PLURAL}/scale"].kind == "Scale"
    assert names[f"{PLURAL}/scale"].group == "autoscaling"


def test_deleting_the_crd_deletes_its_resources_and_watchers_see_it(
    api: client.ApiClient,
    widgets: client.CustomObjectsApi,
    ns: str,
    raw_watch: Any,
) -> None:
    for name in ("a", "b"):
        widgets.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, widget(name, 1))
    listed = widgets.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)
    stream: RawWatch = raw_watch(
        widgets.list_namespaced_custom_object,
        GROUP,
        VERSION,
        ns,
        PLURAL,
        resource_version=listed["metadata"]["resourceVersion"],
    )
    ext = client.ApiextensionsV1Api(api)
    ext.delete_custom_resource_definition(f"{PLURAL}.{GROUP}")
    seen = []
    while (event := stream.next()) is not None:
        seen.append((event["type"], event["object"]["metadata"]["name"]))
    assert seen == [("DELETED", "a"), ("DELETED", "b")]
    with pytest.raises(client.ApiException) as err:
        widgets.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)
    assert err.value.status == 404
    # Reinstalled, the kind starts empty.
    ext.create_custom_resource_definition(widget_crd())
    assert widgets.list_namespaced_custom_object(GROUP, VERSION, ns, PLURAL)["items"] == []
    widgets.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, widget("a", 1))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".spec.count", [3]),
        ("{.spec.items[1].name}", ["y"]),
        (".spec.items[*].name", ["x", "y"]),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[?(@.type!='Ready')].type", ["Synced"]),
        (".metadata.labels['app.kubernetes.io/name']", ["w"]),
        (".spec.missing", []),
    ],
)
def test_jsonpath_finds(path: str, expected: list[Any]) -> None:
    obj = {
        "metadata": {"labels": {"app.kubernetes.io/name": "w"}},
        "spec": {"count": 3, "items": [{"name": "x"}, {"name": "y"}]},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced"}],
        },
    }
    assert jsonpath.find(obj, path) == expected
    assert json.dumps(obj)  # not mutated into something unserialisable


def test_tables_of_lists_and_watches_carry_the_printer_columns(
    server: ApiServer, widgets: client.CustomObjectsApi, ns: str
) -> None:
    import urllib3

    widgets.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, widget("w", 7))
    http = urllib3.PoolManager()
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    base = f"{server.url}/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURAL}"
    try:
        table = json.loads(http.request("GET", base, headers=accept).data)
        assert [c["name"] for c in table["columnDefinitions"]] == [
            "Name",
            "Count",
            "Color",
            "Ready",
            "Age",
        ]
        assert [c["type"] for c in table["columnDefinitions"]][1:3] == ["integer", "string"]
        (row,) = table["rows"]
        assert row["cells"][:4] == ["w", 7, "red", None]
        response = http.request(
            "GET",
            f"{base}?watch=true&timeoutSeconds=1",
            headers=accept,
            preload_content=False,
        )
        stream = RawWatch(response)
        event = stream.next()
        stream.close()
        assert event is not None
        assert event["object"]["kind"] == "Table"
        assert event["object"]["rows"][0]["cells"][:3] == ["w", 7, "red"]
    finally:
        http.clear()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["spec", "status", "a", "b-c", "x_y"]), min_size=1, max_size=4),
    st.one_of(st.integers(), st.text(max_size=5), st.none()),
)
def test_set_path_then_find_reads_the_value_back(keys: list[str], value: Any) -> None:
    path = "".join(f".{k}" for k in keys)
    base: dict[str, Any] = {"spec": {"keep": 1}, "a": 2}
    updated = jsonpath.set_path(base, path, value)
    assert jsonpath.find(updated, path) == [value]
    assert base == {"spec": {"keep": 1}, "a": 2}  # not mutated
    if keys[0] == "spec" and len(keys) > 1:
        assert updated["spec"]["keep"] == 1  # siblings on the way are kept


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=".[]*?@()=!'\"{}$ab0-_ ", max_size=20))
def test_jsonpath_reads_or_refuses_any_text(path: str) -> None:
    try:
        steps = jsonpath.parse(path)
    except ValueError:
        return
    assert isinstance(steps, tuple)
    assert isinstance(jsonpath.find({"a": [{"b": 0}], "b": {"a": 1}}, path), list)
