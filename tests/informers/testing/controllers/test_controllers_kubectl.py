"""The real kubectl against the emulator with its controllers: create, roll
out, wait, scale, set image, undo, get -o wide, cascading delete."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from controllers_helpers import Cluster

from informers.testing import ApiServer
from informers.testing.apiserver._kubeconfig import write_kubeconfig
from informers.testing.controllers import REVISION_ANNOTATION, ControllerManager
from informers.wire.resources import DEPLOYMENTS, PODS, REPLICASETS

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")
TIMEOUT = 60.0


class Kubectl:
    def __init__(self, binary: str, kubeconfig: Path, cache: Path) -> None:
        self.binary = binary
        self.env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(cache)}

    def __call__(self, *args: str) -> str:
        result = subprocess.run(
            [self.binary, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout


@pytest.fixture
def kubectl_path() -> str:
    if KUBECTL is None:
        reason = "kubectl is not on PATH (install kubectl, or Debian's kubernetes-client)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run the kubectl tests")
        pytest.skip(reason)
    return KUBECTL


@pytest.fixture
def env(kubectl_path: str, tmp_path: Path) -> Iterator[tuple[Kubectl, Cluster]]:
    with ApiServer() as server, ControllerManager(server, ready_delay=0) as manager:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        cluster = Cluster(server, manager)
        try:
            yield Kubectl(kubectl_path, kubeconfig, tmp_path / "cache"), cluster
        finally:
            cluster.close()


def images(pods: list[dict[str, Any]]) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in pods}


def test_a_deployment_rolls_out_scales_updates_and_undoes(env: tuple[Kubectl, Cluster]) -> None:
    kubectl, cluster = env
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3")
    out = kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert 'deployment "web" successfully rolled out' in out
    kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=60s")
    ready = kubectl("get", "deployment", "web", "-o", "jsonpath={.status.readyReplicas}")
    assert ready == "3"
    pods = cluster.until(PODS, lambda ps: len(ps) == 3)
    assert all(p["status"]["phase"] == "Running" for p in pods)

    kubectl("scale", "deployment/web", "--replicas=5")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.until(PODS, lambda ps: len(ps) == 5)

    kubectl("set", "image", "deployment/web", "nginx=nginx:1.27")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.until(PODS, lambda ps: len(ps) == 5 and images(ps) == {"nginx:1.27"})
    history = kubectl("rollout", "history", "deployment/web")
    assert "1 " in history
    assert "2 " in history

    kubectl("rollout", "undo", "deployment/web")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.until(PODS, lambda ps: len(ps) == 5 and images(ps) == {"nginx"})
    (d,) = cluster.until(
        DEPLOYMENTS, lambda ds: ds[0]["metadata"]["annotations"][REVISION_ANNOTATION] == "3"
    )
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


def test_get_wide_shows_containers_images_and_selector(env: tuple[Kubectl, Cluster]) -> None:
    kubectl, _ = env
    kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    header, row = kubectl("get", "deployment", "web", "-o", "wide").splitlines()
    assert header.split() == [
        "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"
    ]  # fmt: skip
    cells = row.split()
    assert cells[:4] == ["web", "2/2", "2", "2"]
    assert cells[-3:] == ["nginx", "nginx:1.25", "app=web"]
    header, row = kubectl("get", "replicasets", "-o", "wide").splitlines()
    assert header.split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert row.split()[-3].startswith("nginx")
    assert "pod-template-hash=" in row.split()[-1]
    header, *rows = kubectl("get", "pods", "-o", "wide").splitlines()
    assert "IP" in header.split()
    assert "NODE" in header.split()
    assert len(rows) == 2
    assert all("Running" in r and "1/1" in r for r in rows)


def test_deleting_a_deployment_cascades(env: tuple[Kubectl, Cluster]) -> None:
    kubectl, cluster = env
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    kubectl("delete", "deployment", "web")
    cluster.until(REPLICASETS, lambda rss: not rss)
    cluster.until(PODS, lambda ps: not ps)


def test_deleting_a_namespace_with_kubectl(env: tuple[Kubectl, Cluster]) -> None:
    kubectl, cluster = env
    kubectl("create", "namespace", "team")
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", "team")
    kubectl("rollout", "status", "deployment/web", "-n", "team", "--timeout=60s")
    kubectl("delete", "namespace", "team", "--timeout=60s")  # waits until it is gone
    names = json.loads(kubectl("get", "namespaces", "-o", "json"))["items"]
    assert "team" not in {n["metadata"]["name"] for n in names}
    assert cluster.server.list_objects(PODS, namespace="team") == []


def test_a_job_completes_with_kubectl(env: tuple[Kubectl, Cluster]) -> None:
    kubectl, _ = env
    kubectl("create", "job", "once", "--image=busybox")
    kubectl("wait", "--for=condition=complete", "job/once", "--timeout=60s")
    assert kubectl("get", "job", "once", "-o", "jsonpath={.status.succeeded}") == "1"
