"""The ReplicaSet controller against the emulator, through the kubernetes client."""

from __future__ import annotations

from typing import Any

from controllers_helpers import Cluster
from kubernetes import client

from informers.wire.resources import PODS, REPLICASETS


def replica_set(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }


def test_a_replica_set_gets_its_pods_with_owner_references(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    rs = apps.create_namespaced_replica_set("default", replica_set("front", 3))
    pods = cluster.until(PODS, lambda ps: len(ps) == 3)
    for pod in pods:
        assert pod["metadata"]["name"].startswith("front-")
        assert pod["metadata"]["labels"] == {"app": "front", "tier": "web"}
        assert pod["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "front",
                "uid": rs.metadata.uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert pod["spec"]["containers"][0]["image"] == "nginx:1.25"
    (done,) = cluster.until(
        REPLICASETS, lambda rss: bool(rss) and rss[0].get("status", {}).get("readyReplicas") == 3
    )
    assert done["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    # a stable count: no second round of pods once the cache caught up
    assert cluster.manager.wait_idle()
    assert len(cluster.objects(PODS)) == 3


def test_scaling_up_and_down(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_replica_set("default", replica_set("front", 2))
    cluster.until(PODS, lambda ps: len(ps) == 2)
    apps.patch_namespaced_replica_set_scale("front", "default", {"spec": {"replicas": 5}})
    cluster.until(PODS, lambda ps: len(ps) == 5)
    apps.patch_namespaced_replica_set_scale("front", "default", {"spec": {"replicas": 1}})
    cluster.until(PODS, lambda ps: len(ps) == 1)
    (rs,) = cluster.until(
        REPLICASETS,
        lambda rss: (
            rss[0].get("status", {}).get("observedGeneration") == 3
            and rss[0]["status"]["replicas"] == 1
        ),
    )
    assert rs["status"]["readyReplicas"] == 1
    assert cluster.manager.wait_idle()
    assert len(cluster.objects(PODS)) == 1


def test_a_deleted_pod_is_replaced(cluster: Cluster) -> None:
    apps, core = client.AppsV1Api(cluster.client), client.CoreV1Api(cluster.client)
    apps.create_namespaced_replica_set("default", replica_set("front", 2))
    first = cluster.until(PODS, lambda ps: len(ps) == 2)
    core.delete_namespaced_pod(first[0]["metadata"]["name"], "default")
    names = {p["metadata"]["name"] for p in first}
    cluster.until(PODS, lambda ps: len(ps) == 2 and {p["metadata"]["name"] for p in ps} != names)
