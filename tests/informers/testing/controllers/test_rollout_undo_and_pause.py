"""``kubectl rollout undo`` reuses the old ReplicaSet; a paused Deployment
does not roll out until it is resumed."""

from __future__ import annotations

from typing import Any

from controllers_helpers import Cluster
from kubernetes import client
from test_controllers_kubectl import Kubectl, env, kubectl_path  # noqa: F401 - fixtures
from test_deployment_controller import complete, condition, deployment

from informers.testing.controllers import REVISION_ANNOTATION
from informers.wire.resources import DEPLOYMENTS, PODS, REPLICASETS


def _images(pods: list[dict[str, Any]]) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in pods}


def test_rollout_undo_scales_the_old_replica_set_back(env: tuple[Kubectl, Cluster]) -> None:  # noqa: F811
    kubectl, cluster = env
    kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    (first,) = cluster.objects(REPLICASETS)
    kubectl("set", "image", "deployment/web", "nginx=nginx:1.27")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    kubectl("rollout", "undo", "deployment/web")
    kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.until(PODS, lambda ps: len(ps) == 2 and _images(ps) == {"nginx:1.25"})
    rss = {rs["metadata"]["name"]: rs for rs in cluster.objects(REPLICASETS)}
    assert len(rss) == 2  # no third ReplicaSet
    again = rss[first["metadata"]["name"]]
    assert again["metadata"]["uid"] == first["metadata"]["uid"]
    assert again["metadata"]["annotations"][REVISION_ANNOTATION] == "3"
    assert again["spec"]["replicas"] == 2


def test_a_paused_deployment_holds_until_resumed(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster.until(DEPLOYMENTS, complete(2))
    apps.patch_namespaced_deployment("web", "default", {"spec": {"paused": True}})
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }
    patched = apps.patch_namespaced_deployment("web", "default", patch)
    (d,) = cluster.until(
        DEPLOYMENTS,
        lambda ds: ds[0].get("status", {}).get("observedGeneration") == patched.metadata.generation,
    )
    assert cluster.manager.wait_idle()
    assert condition(d, "Progressing")["reason"] == "DeploymentPaused"
    assert len(cluster.objects(REPLICASETS)) == 1
    assert _images(cluster.objects(PODS)) == {"nginx:1.25"}
    assert d["metadata"]["annotations"][REVISION_ANNOTATION] == "1"
    resumed = apps.patch_namespaced_deployment("web", "default", {"spec": {"paused": False}})
    cluster.until(DEPLOYMENTS, complete(2, resumed.metadata.generation))
    cluster.until(PODS, lambda ps: len(ps) == 2 and _images(ps) == {"nginx:1.27"})
    assert len(cluster.objects(REPLICASETS)) == 2


def test_a_paused_deployment_still_scales(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster.until(DEPLOYMENTS, complete(2))
    apps.patch_namespaced_deployment("web", "default", {"spec": {"paused": True}})
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 3}})
    cluster.until(PODS, lambda ps: len(ps) == 3)
    (rs,) = cluster.objects(REPLICASETS)
    assert rs["spec"]["replicas"] == 3
