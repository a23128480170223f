"""``kubectl apply --server-side`` against the emulator: create, re-apply,
a conflict with another manager, ``--force-conflicts``, and pruning what a
manifest drops. Uses the kubectl harness of the emulator's kubectl tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_kubectl import Kubectl

from informers.testing.apiserver import ApiServer

pytestmark = pytest.mark.kubectl


def _manifest(replicas: int, *containers: str) -> str:
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": c, "image": f"{c}:1"} for c in containers]},
            },
        },
    }
    return json.dumps(doc)


def _get(kubectl: Kubectl, *flags: str) -> dict[str, Any]:
    return dict(json.loads(kubectl.run("get", "deployment", "web", "-o", "json", *flags)))


def test_server_side_apply_conflict_and_force(
    kubectl: Kubectl,
    server: ApiServer,
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "web.yaml"
    manifest.write_text(_manifest(2, "app", "side"))
    apply = ("apply", "--server-side", "--field-manager=ci", "-f", str(manifest))
    assert "serverside-applied" in kubectl.run(*apply)
    first = _get(kubectl, "--show-managed-fields")
    assert [(e["manager"], e["operation"]) for e in first["metadata"]["managedFields"]] == [
        ("ci", "Apply")
    ]
    assert "managedFields" not in _get(kubectl)["metadata"]  # hidden unless asked for

    kubectl.run(*apply)  # the same manifest again changes nothing
    assert _get(kubectl)["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]

    kubectl.run("scale", "deployment", "web", "--replicas=5")
    refused = kubectl.run(*apply, ok=False)
    assert "Apply failed with 1 conflict" in refused
    assert ".spec.replicas" in refused
    assert _get(kubectl)["spec"]["replicas"] == 5

    assert "serverside-applied" in kubectl.run(*apply, "--force-conflicts")
    forced = _get(kubectl, "--show-managed-fields")
    assert forced["spec"]["replicas"] == 2
    managers = {
        (e["manager"], e.get("subresource", "")) for e in forced["metadata"]["managedFields"]
    }
    assert managers == {("ci", "")}  # the scaler lost its only field

    manifest.write_text(_manifest(2, "app"))  # the manifest drops a container
    kubectl.run(*apply)
    containers = _get(kubectl)["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app"]


def test_server_side_apply_dry_run_and_diff(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "web.yaml"
    manifest.write_text(_manifest(1, "app"))
    kubectl.run("apply", "--server-side", "--dry-run=server", "-f", str(manifest))
    assert "NotFound" in kubectl.run("get", "deployment", "web", ok=False)
    kubectl.run("apply", "--server-side", "-f", str(manifest))
    manifest.write_text(_manifest(3, "app"))
    diff = kubectl.run("diff", "--server-side", "-f", str(manifest), ok=False)
    assert "replicas: 3" in diff
