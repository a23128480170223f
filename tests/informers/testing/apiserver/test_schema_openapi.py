"""OpenAPI documents built from the client's models: ``components.schemas``
in every OpenAPI v3 group-version document (so ``kubectl explain`` works)
and the swagger 2.0 ``/openapi/v2``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3

from informers.testing.apiserver import ApiServer
from informers.testing.apiserver._schema.kinds import ALL_BUILTINS
from informers.testing.apiserver._schema.openapi import definitions

KUBECTL = shutil.which("kubectl")


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_v3_documents_carry_the_kinds_schemas(server: ApiServer, http: urllib3.PoolManager) -> None:
    index = json.loads(http.request("GET", f"{server.url}/openapi/v3").data)
    for key, entry in index["paths"].items():
        document = json.loads(http.request("GET", f"{server.url}{entry['serverRelativeURL']}").data)
        schemas = document["components"]["schemas"]
        gvks = {
            (gvk["group"], gvk["version"], gvk["kind"])
            for schema in schemas.values()
            for gvk in schema.get("x-kubernetes-group-version-kind", [])
        }
        group_version = key.removeprefix("api/").removeprefix("apis/")
        for res in ALL_BUILTINS:
            if res.group_version == group_version:
                assert (res.group, res.version, res.kind) in gvks, (key, res)
        for ref in _refs(schemas):
            assert ref.removeprefix("#/components/schemas/") in schemas, ref


def test_v3_deployment_schema(server: ApiServer, http: urllib3.PoolManager) -> None:
    index = json.loads(http.request("GET", f"{server.url}/openapi/v3").data)
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    schemas = json.loads(http.request("GET", f"{server.url}{url}").data)["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    spec = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["replicas"]["type"] == "integer"
    assert spec["replicas"]["format"] == "int32"
    assert spec["template"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec"}
    ]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    meta = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert meta["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": meta["labels"]["description"],
    }


def test_v2_swagger(server: ApiServer, http: urllib3.PoolManager) -> None:
    document = json.loads(http.request("GET", f"{server.url}/openapi/v2").data)
    assert document["swagger"] == "2.0"
    found = document["definitions"]
    assert found["io.k8s.api.rbac.v1.Role"]["x-kubernetes-group-version-kind"] == [
        {"group": "rbac.authorization.k8s.io", "kind": "Role", "version": "v1"}
    ]
    for ref in _refs(found):
        assert ref.removeprefix("#/definitions/") in found, ref
    assert found == definitions(server.resources())


@pytest.fixture
def kubectl(server: ApiServer, tmp_path: Path) -> Any:
    if KUBECTL is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the kubectl tests")
        pytest.skip("kubectl is not on PATH")
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(tmp_path / "c")}

    def run(*args: str) -> str:
        result = subprocess.run(
            [str(KUBECTL), *args], capture_output=True, text=True, env=env, timeout=60, check=False
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout

    return run


@pytest.mark.kubectl
def test_kubectl_explain(kubectl: Any) -> None:
    containers = kubectl("explain", "pods.spec.containers")
    assert "FIELD: containers <[]Container>" in containers
    assert "image\t<string>" in containers
    assert "resources\t<ResourceRequirements>" in containers
    deployments = kubectl("explain", "deployments")
    assert "GROUP:      apps" in deployments
    assert "KIND:       Deployment" in deployments
    assert "spec\t<DeploymentSpec>" in deployments
    replicas = kubectl("explain", "deployments.spec.replicas")
    assert "FIELD: replicas <integer>" in replicas
    rules = kubectl("explain", "roles.rules")
    assert "FIELD: rules <[]PolicyRule>" in rules
    assert "verbs\t<[]string>" in rules
