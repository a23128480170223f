"""Server-side apply and managedFields through the emulator's HTTP API, with
the official client and raw requests."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.utils import create_from_yaml

from informers.testing import ApiServer
from tests.helpers import crd

APPLY = "application/apply-patch+yaml"


def _request(
    server: ApiServer,
    method: str,
    path: str,
    body: bytes | None = None,
    *,
    content_type: str = "application/json",
    user_agent: str = "test-agent/1.0",
) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        server.url + path,
        data=body,
        method=method,
        headers={"Content-Type": content_type, "User-Agent": user_agent},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


def _deployment(ns: str, replicas: int = 2, image: str = "app:1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }


def _apply_deployment(
    apps: client.AppsV1Api, ns: str, body: dict[str, Any], manager: str, **kw: Any
) -> tuple[Any, int]:
    data, code, _ = apps.patch_namespaced_deployment_with_http_info(
        "web", ns, body, field_manager=manager, _content_type=APPLY, **kw
    )
    return data, code


def _managers(obj: Any) -> list[tuple[str, str]]:
    return [(m.manager, m.operation) for m in obj.metadata.managed_fields or []]


def test_apply_creates_then_reapplying_changes_nothing(apps: client.AppsV1Api, ns: str) -> None:
    created, code = _apply_deployment(apps, ns, _deployment(ns), "ci")
    assert code == 201
    assert _managers(created) == [("ci", "Apply")]
    again, code = _apply_deployment(apps, ns, _deployment(ns), "ci")
    assert code == 200
    assert again.metadata.resource_version == created.metadata.resource_version


def test_conflict_is_409_with_one_cause_per_field(
    server: ApiServer, apps: client.AppsV1Api, ns: str
) -> None:
    _apply_deployment(apps, ns, _deployment(ns), "ci")
    apps.patch_namespaced_deployment(
        "web", ns, {"spec": {"replicas": 5}}, field_manager="autoscaler"
    )
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/web?fieldManager=ci"
    code, status = _request(
        server, "PATCH", path, json.dumps(_deployment(ns)).encode(), content_type=APPLY
    )
    assert code == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "autoscaler" using apps/v1: .spec.replicas'
    )
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "autoscaler" using apps/v1',
                "field": ".spec.replicas",
            }
        ]
    }
    forced, _ = _apply_deployment(apps, ns, _deployment(ns), "ci", force=True)
    assert forced.spec.replicas == 2
    assert ("autoscaler", "Update") not in _managers(forced)


def test_yaml_body_dry_run_and_required_field_manager(server: ApiServer, ns: str) -> None:
    manifest = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\n"
        "data:\n  when: 2024-01-01\n  count: '3'\n"
    ).encode()
    path = f"/api/v1/namespaces/{ns}/configmaps/settings"
    code, status = _request(server, "PATCH", path, manifest, content_type=APPLY)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "fieldManager"
    code, _ = _request(
        server, "PATCH", path + "?fieldManager=me&dryRun=All", manifest, content_type=APPLY
    )
    assert code == 201
    assert _request(server, "GET", path)[0] == 404
    code, obj = _request(server, "PATCH", path + "?fieldManager=me", manifest, content_type=APPLY)
    assert code == 201
    assert obj["data"] == {"when": "2024-01-01", "count": "3"}  # a date stays a string
    code, status = _request(
        server,
        "PATCH",
        path + "?force=true",
        b'{"data":{"a":"1"}}',
        content_type="application/merge-patch+json",
    )
    assert (code, status["details"]["causes"][0]["field"]) == (422, "force")


def test_malformed_apply_bodies(server: ApiServer, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps/c?fieldManager=me"
    code, status = _request(server, "PATCH", path, b"a: [unclosed", content_type=APPLY)
    assert code == 400
    wrong = {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "c"}}
    code, status = _request(server, "PATCH", path, json.dumps(wrong).encode(), content_type=APPLY)
    assert code == 400
    assert "Incorrect version specified in apply patch" in status["message"]
    elsewhere = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "x"},
    }
    code, status = _request(
        server, "PATCH", path, json.dumps(elsewhere).encode(), content_type=APPLY
    )
    assert (code, status["reason"]) == (400, "BadRequest")
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}}
    assert _request(server, "PATCH", path, json.dumps(other).encode(), content_type=APPLY)[0] == 400


def test_status_subresource_is_applied_on_its_own(server: ApiServer, ns: str) -> None:
    _request(
        server,
        "PATCH",
        f"/apis/apps/v1/namespaces/{ns}/deployments/web?fieldManager=ci",
        json.dumps(_deployment(ns)).encode(),
        content_type=APPLY,
    )
    status_config = {**_deployment(ns, replicas=9), "status": {"replicas": 1, "readyReplicas": 1}}
    code, obj = _request(
        server,
        "PATCH",
        f"/apis/apps/v1/namespaces/{ns}/deployments/web/status?fieldManager=controller",
        json.dumps(status_config).encode(),
        content_type=APPLY,
    )
    assert code == 200
    assert obj["status"]["readyReplicas"] == 1
    assert obj["spec"]["replicas"] == 2
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == "controller")
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:readyReplicas": {}, "f:replicas": {}}}
    missing = f"/apis/apps/v1/namespaces/{ns}/deployments/nope/status?fieldManager=c"
    status_config["metadata"] = {"name": "nope", "namespace": ns}
    assert (
        _request(server, "PATCH", missing, json.dumps(status_config).encode(), content_type=APPLY)[
            0
        ]
        == 404
    )


def test_every_write_records_its_manager(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    body = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    code, created = _request(
        server, "POST", path, json.dumps(body).encode(), user_agent="kubectl/v1.32.4 (linux)"
    )
    assert code == 201
    assert [(e["manager"], e["operation"]) for e in created["metadata"]["managedFields"]] == [
        ("kubectl", "Update")
    ]
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    core.patch_namespaced_config_map("c", ns, {"data": {"b": "2"}}, field_manager="patcher")
    replaced = core.read_namespaced_config_map("c", ns)
    replaced.data["a"] = "changed"
    after = core.replace_namespaced_config_map("c", ns, replaced)
    owners = {m.manager: m.fields_v1 for m in after.metadata.managed_fields}
    assert owners["patcher"] == {"f:data": {"f:b": {}}}
    assert owners["OpenAPI-Generator"] == {"f:data": {"f:a": {}}}  # the client's User-Agent
    assert owners["kubectl"] == {"f:data": {}}


def test_custom_resources_merge_by_their_schema_markers(
    server: ApiServer, custom: client.CustomObjectsApi, ns: str
) -> None:
    parts = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
        },
    }
    spec = {"type": "object", "properties": {"parts": parts}}
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}
    server.create("customresourcedefinitions", crd(schema=schema))

    def widget(*parts: tuple[str, int]) -> dict[str, Any]:
        return {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": ns},
            "spec": {"parts": [{"name": n, "size": s} for n, s in parts]},
        }

    path = f"/apis/example.com/v1/namespaces/{ns}/widgets/w"
    assert (
        _request(
            server,
            "PATCH",
            path + "?fieldManager=a",
            json.dumps(widget(("x", 1))).encode(),
            content_type=APPLY,
        )[0]
        == 201
    )
    code, obj = _request(
        server,
        "PATCH",
        path + "?fieldManager=b",
        json.dumps(widget(("y", 2))).encode(),
        content_type=APPLY,
    )
    assert code == 200
    assert obj["spec"]["parts"] == [{"name": "x", "size": 1}, {"name": "y", "size": 2}]
    fields = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    assert fields["b"] == {
        "f:spec": {"f:parts": {'k:{"name":"y"}': {".": {}, "f:name": {}, "f:size": {}}}}
    }
    assert custom.get_namespaced_custom_object("example.com", "v1", ns, "widgets", "w")


def test_official_client_create_from_yaml_applies(api: client.ApiClient, ns: str) -> None:
    objects = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": ns},
            "data": {"k": "v"},
        }
    ]
    # the client applies to its ``namespace`` argument's URL; a manifest naming
    # another namespace is a 400, as on a real server
    created = create_from_yaml(api, yaml_objects=objects, apply=True, namespace=ns)[0][0].to_dict()
    entries = created["metadata"]["managedFields"]
    assert [(e["manager"], e["operation"]) for e in entries] == [("python-client", "Apply")]
    objects[0]["data"] = {"k": "v2"}
    updated = create_from_yaml(api, yaml_objects=objects, apply=True, namespace=ns)[0][0].to_dict()
    assert updated["data"] == {"k": "v2"}


def test_apply_conflict_surfaces_as_api_exception(apps: client.AppsV1Api, ns: str) -> None:
    _apply_deployment(apps, ns, _deployment(ns), "one")
    with pytest.raises(ApiException) as info:
        _apply_deployment(apps, ns, _deployment(ns, image="app:2"), "two")
    assert info.value.status == 409
    cause = json.loads(info.value.body)["details"]["causes"][0]
    assert cause["field"] == '.spec.template.spec.containers[name="app"].image'


def test_concurrent_appliers_all_land(server: ApiServer, ns: str) -> None:
    """Applies racing on one object re-read and retry: none is lost."""
    path = f"/api/v1/namespaces/{ns}/configmaps/shared"
    errors: list[int] = []

    def applier(n: int) -> None:
        for round_ in range(5):
            config = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "shared", "namespace": ns},
                "data": {f"key-{n}": f"round-{round_}"},
            }
            code, _ = _request(
                server,
                "PATCH",
                f"{path}?fieldManager=writer-{n}",
                json.dumps(config).encode(),
                content_type=APPLY,
            )
            if code not in (200, 201):
                errors.append(code)

    threads = [threading.Thread(target=applier, args=(n,), name=f"applier-{n}") for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    code, obj = _request(server, "GET", path)
    assert code == 200
    assert obj["data"] == {f"key-{n}": "round-4" for n in range(4)}
    owners = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    assert owners == {f"writer-{n}": {"f:data": {f"f:key-{n}": {}}} for n in range(4)}


def test_field_management_off_records_no_update_entries(server: ApiServer, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    server.field_management = False
    try:
        status, made = _request(server, "POST", path, json.dumps(_deployment(ns)).encode())
        assert status == 201
        assert "managedFields" not in made["metadata"]
    finally:
        server.field_management = True
    assert server.field_management
    made["spec"]["replicas"] = 3
    status, updated = _request(server, "PUT", f"{path}/web", json.dumps(made).encode())
    assert status == 200
    # an object created untracked stays untracked, as before field management
    assert "managedFields" not in updated["metadata"]
    status, other = _request(
        server, "POST", path, json.dumps({**_deployment(ns), "metadata": {"name": "db"}}).encode()
    )
    assert status == 201
    [entry] = other["metadata"]["managedFields"]
    assert entry["manager"] == "test-agent"
    assert entry["fieldsV1"]["f:spec"]["f:replicas"] == {}
