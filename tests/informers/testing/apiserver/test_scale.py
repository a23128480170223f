"""The ``/scale`` subresource of deployments, replicasets, statefulsets and
replicationcontrollers, through the real client."""

from __future__ import annotations

import json
from typing import Any

import pytest
import urllib3
from kubernetes import client

from informers.testing import ApiServer
from informers.wire.resources import (
    DEPLOYMENTS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    STATEFULSETS,
    Resource,
)

TEMPLATE = {
    "metadata": {"labels": {"app": "web", "tier": "front"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "Exists"}],
}


def _deployment(server: ApiServer, ns: str, replicas: int = 2) -> dict[str, Any]:
    body = {
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": SELECTOR, "template": TEMPLATE},
        "status": {"replicas": 1},
    }
    return server.create(DEPLOYMENTS, body, ns)


def test_get_scale_of_a_deployment(server: ApiServer, apps: client.AppsV1Api, ns: str) -> None:
    made = _deployment(server, ns)
    scale = apps.read_namespaced_deployment_scale("web", ns)
    assert (scale.kind, scale.api_version) == ("Scale", "autoscaling/v1")
    assert scale.metadata.name == "web"
    assert scale.metadata.uid == made["metadata"]["uid"]
    assert scale.metadata.resource_version == made["metadata"]["resourceVersion"]
    assert scale.spec.replicas == 2
    assert scale.status.replicas == 1
    assert scale.status.selector == "app=web,tier"


def test_replace_scale_checks_the_resource_version(
    server: ApiServer, apps: client.AppsV1Api, ns: str
) -> None:
    made = _deployment(server, ns)
    rv = made["metadata"]["resourceVersion"]
    body = {"metadata": {"name": "web", "resourceVersion": rv}, "spec": {"replicas": 4}}
    scaled = apps.replace_namespaced_deployment_scale("web", ns, body)
    assert scaled.spec.replicas == 4
    assert int(scaled.metadata.resource_version) > int(rv)
    with pytest.raises(client.ApiException) as err:
        apps.replace_namespaced_deployment_scale("web", ns, body)  # stale now
    assert err.value.status == 409
    assert json.loads(err.value.body)["reason"] == "Conflict"
    after = server.get(DEPLOYMENTS, "web", ns)
    assert after["spec"]["replicas"] == 4
    assert after["metadata"]["generation"] == 2
    assert after["status"] == {"replicas": 1}  # the status is kept
    assert after["spec"]["template"] == made["spec"]["template"]
    unconditional = {"spec": {"replicas": 0}}
    assert apps.replace_namespaced_deployment_scale("web", ns, unconditional).spec.replicas == 0


def test_patch_scale_and_bad_values(server: ApiServer, apps: client.AppsV1Api, ns: str) -> None:
    _deployment(server, ns)
    assert (
        apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 7}}).spec.replicas
        == 7
    )
    assert server.get(DEPLOYMENTS, "web", ns)["spec"]["replicas"] == 7
    for body, status in [({"spec": {"replicas": -1}}, 422), ({"spec": {"replicas": "x"}}, 400)]:
        with pytest.raises(client.ApiException) as err:
            apps.patch_namespaced_deployment_scale("web", ns, body)
        assert err.value.status == status
    stale = {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 3}}
    with pytest.raises(client.ApiException) as err:
        apps.patch_namespaced_deployment_scale("web", ns, stale)
    assert err.value.status == 409
    assert server.get(DEPLOYMENTS, "web", ns)["spec"]["replicas"] == 7
    dry = apps.patch_namespaced_deployment_scale(
        "web", ns, {"spec": {"replicas": 1}}, dry_run="All"
    )
    assert dry.spec.replicas == 1
    assert server.get(DEPLOYMENTS, "web", ns)["spec"]["replicas"] == 7


@pytest.mark.parametrize(
    ("resource", "spec", "selector"),
    [
        (REPLICASETS, {"selector": {"matchLabels": {"app": "web"}}}, "app=web"),
        (STATEFULSETS, {"selector": {"matchLabels": {"app": "web"}}}, "app=web"),
        (REPLICATIONCONTROLLERS, {"selector": {"b": "2", "a": "1"}}, "a=1,b=2"),
    ],
)
def test_scale_of_other_workloads(
    server: ApiServer, ns: str, resource: Resource, spec: dict[str, Any], selector: str
) -> None:
    server.create(resource, {"metadata": {"name": "w"}, "spec": {**spec, "template": TEMPLATE}}, ns)
    group = f"apis/{resource.group_version}" if resource.group else "api/v1"
    url = f"{server.url}/{group}/namespaces/{ns}/{resource.plural}/w/scale"
    http = urllib3.PoolManager()
    try:
        got = http.request("GET", url)
        patched = http.request(
            "PATCH",
            url,
            body=json.dumps({"spec": {"replicas": 5}}).encode(),
            headers={"Content-Type": "application/merge-patch+json"},
        )
    finally:
        http.clear()
    scale = json.loads(got.data)
    assert got.status == 200
    assert scale["spec"]["replicas"] == 1  # the defaulted replicas
    assert scale["status"] == {"replicas": 0, "selector": selector}
    assert patched.status == 200
    assert json.loads(patched.data)["spec"]["replicas"] == 5
    assert server.get(resource, "w", ns)["spec"]["replicas"] == 5


def test_scale_is_only_served_for_scalable_kinds_and_existing_objects(
    server: ApiServer, ns: str
) -> None:
    server.create("configmaps", {"metadata": {"name": "c"}}, ns)
    http = urllib3.PoolManager()
    try:
        for path in (
            f"/api/v1/namespaces/{ns}/configmaps/c/scale",
            f"/apis/apps/v1/namespaces/{ns}/deployments/missing/scale",
            f"/apis/apps/v1/namespaces/{ns}/daemonsets/x/scale",
        ):
            assert http.request("GET", f"{server.url}{path}").status == 404, path
    finally:
        http.clear()


def test_scale_subresources_are_discoverable(server: ApiServer) -> None:
    http = urllib3.PoolManager()
    try:
        apps = json.loads(http.request("GET", f"{server.url}/apis/apps/v1").data)
        core = json.loads(http.request("GET", f"{server.url}/api/v1").data)
    finally:
        http.clear()
    entries = {r["name"]: r for r in apps["resources"] + core["resources"]}
    for name in ("deployments", "replicasets", "statefulsets", "replicationcontrollers"):
        scale = entries[f"{name}/scale"]
        assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")
        assert scale["verbs"] == ["get", "patch", "update"]
    assert "daemonsets/scale" not in entries
