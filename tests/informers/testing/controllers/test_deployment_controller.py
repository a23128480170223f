"""The Deployment controller against the emulator, through the kubernetes client."""

from __future__ import annotations

from typing import Any

from controllers_helpers import Cluster
from kubernetes import client

from informers.testing.controllers import HASH_LABEL, REVISION_ANNOTATION, pod_template_hash
from informers.wire.resources import DEPLOYMENTS, PODS, REPLICASETS


def deployment(name: str, replicas: int, image: str = "nginx:1.25") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


def complete(replicas: int, generation: int = 1) -> Any:
    """Rolled out at ``generation`` (or later) with ``replicas`` pods."""

    def check(ds: list[dict[str, Any]]) -> bool:
        if not ds:
            return False
        d, status = ds[0], ds[0].get("status", {})
        return (
            d["metadata"]["generation"] >= generation
            and status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas
            and status.get("availableReplicas") == replicas
            and condition(d, "Progressing").get("reason") == "NewReplicaSetAvailable"
        )

    return check


def images(pods: list[dict[str, Any]]) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in pods}


def test_the_hash_is_stable_and_ignores_its_own_label() -> None:
    template = deployment("web", 1)["spec"]["template"]
    labelled = {**template, "metadata": {"labels": {"app": "web", HASH_LABEL: "x"}}}
    assert pod_template_hash(template) == pod_template_hash(labelled)
    assert pod_template_hash(template) != pod_template_hash(template, collision_count=1)
    assert pod_template_hash(template) == pod_template_hash(
        deployment("web", 1)["spec"]["template"]
    )


def test_a_deployment_gets_a_replica_set_with_the_template_hash(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    made = apps.create_namespaced_deployment("default", deployment("web", 3))
    (d,) = cluster.until(DEPLOYMENTS, complete(3))
    (rs,) = cluster.objects(REPLICASETS)
    digest = pod_template_hash(d["spec"]["template"])  # as the server defaulted it
    assert rs["metadata"]["name"] == f"web-{digest}"
    assert rs["metadata"]["labels"] == {"app": "web", HASH_LABEL: digest}
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH_LABEL: digest}
    assert rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL] == digest
    assert rs["metadata"]["annotations"][REVISION_ANNOTATION] == "1"
    assert rs["metadata"]["ownerReferences"][0]["uid"] == made.metadata.uid
    assert d["metadata"]["annotations"][REVISION_ANNOTATION] == "1"
    pods = cluster.objects(PODS)
    assert len(pods) == 3
    assert all(p["metadata"]["labels"][HASH_LABEL] == digest for p in pods)
    status = d["status"]
    assert status["readyReplicas"] == 3
    assert status["unavailableReplicas"] == 0
    available = condition(d, "Available")
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    progressing = condition(d, "Progressing")
    assert progressing["status"] == "True"
    assert progressing["message"] == f'ReplicaSet "web-{digest}" has successfully progressed.'
    assert {"lastUpdateTime", "lastTransitionTime"} <= available.keys()


def test_a_rolling_update_moves_every_pod_to_a_second_replica_set(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", deployment("web", 4))
    cluster.until(DEPLOYMENTS, complete(4))
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }
    patched = apps.patch_namespaced_deployment("web", "default", patch)
    (d,) = cluster.until(DEPLOYMENTS, complete(4, patched.metadata.generation))
    old, new = sorted(
        cluster.objects(REPLICASETS),
        key=lambda rs: rs["metadata"]["annotations"][REVISION_ANNOTATION],
    )
    assert old["spec"]["replicas"] == 0
    assert new["spec"]["replicas"] == 4
    assert new["metadata"]["annotations"][REVISION_ANNOTATION] == "2"
    assert d["metadata"]["annotations"][REVISION_ANNOTATION] == "2"
    pods = cluster.until(PODS, lambda ps: len(ps) == 4 and images(ps) == {"nginx:1.27"})
    assert all(p["metadata"]["ownerReferences"][0]["name"] == new["metadata"]["name"] for p in pods)
    assert condition(d, "Available")["status"] == "True"


def test_going_back_to_an_old_template_reuses_its_replica_set(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster.until(DEPLOYMENTS, complete(2))
    for image in ("nginx:1.27", "nginx:1.25"):
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}}
        patched = apps.patch_namespaced_deployment("web", "default", patch)
        cluster.until(DEPLOYMENTS, complete(2, patched.metadata.generation))
    rss = cluster.objects(REPLICASETS)
    assert len(rss) == 2
    (d,) = cluster.objects(DEPLOYMENTS)
    first = pod_template_hash(d["spec"]["template"])
    by_name = {rs["metadata"]["name"]: rs for rs in rss}
    assert by_name[f"web-{first}"]["metadata"]["annotations"][REVISION_ANNOTATION] == "3"
    assert by_name[f"web-{first}"]["spec"]["replicas"] == 2
    assert d["metadata"]["annotations"][REVISION_ANNOTATION] == "3"


def test_scaling_a_deployment_scales_its_replica_set(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster.until(DEPLOYMENTS, complete(2))
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}})
    cluster.until(DEPLOYMENTS, complete(5, 2))
    assert len(cluster.until(PODS, lambda ps: len(ps) == 5)) == 5


def test_recreate_scales_the_old_replica_set_down_first(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    body = deployment("web", 2)
    body["spec"]["strategy"] = {"type": "Recreate"}
    apps.create_namespaced_deployment("default", body)
    cluster.until(DEPLOYMENTS, complete(2))
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }
    patched = apps.patch_namespaced_deployment("web", "default", patch)
    cluster.until(DEPLOYMENTS, complete(2, patched.metadata.generation))
    cluster.until(PODS, lambda ps: len(ps) == 2 and images(ps) == {"nginx:1.27"})
