"""Pods terminate gracefully: a DELETE marks a running pod Terminating
(``deletionTimestamp``, ``deletionGracePeriodSeconds``) and the simulated
kubelet ends it; grace period 0 (``--force``) deletes at once."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from controllers_helpers import Cluster
from kubernetes import client, watch
from test_controllers_kubectl import Kubectl, env, kubectl_path  # noqa: F401 - fixtures

from informers.testing import ApiServer
from informers.testing.controllers import ControllerManager
from informers.wire.resources import PODS


def pod(name: str, grace: int | None = None) -> dict[str, object]:
    spec: dict[str, object] = {"containers": [{"name": "c", "image": "busybox"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": {"name": name}, "spec": spec}


@pytest.fixture
def slow_kubelet() -> Iterator[Cluster]:
    """A cluster whose kubelet takes a minute to end a pod."""
    with ApiServer() as server:
        server.pod_termination_delay = 60
        with ControllerManager(server, ready_delay=0) as manager:
            cluster = Cluster(server, manager)
            try:
                yield cluster
            finally:
                cluster.close()


def running(name: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda ps: any(
        p["metadata"]["name"] == name and p.get("status", {}).get("phase") == "Running" for p in ps
    )


def test_a_deleted_pod_stays_terminating_until_the_kubelet_ends_it(
    slow_kubelet: Cluster,
) -> None:
    core = client.CoreV1Api(slow_kubelet.client)
    core.create_namespaced_pod("default", pod("p", grace=45))
    slow_kubelet.until(PODS, running("p"))
    answer = core.delete_namespaced_pod("p", "default")
    assert answer.metadata.deletion_timestamp is not None
    assert answer.metadata.deletion_grace_period_seconds == 45
    got = core.read_namespaced_pod("p", "default")
    assert got.metadata.deletion_grace_period_seconds == 45
    # A shorter grace period shortens it; 0 ends it at once.
    shorter = core.delete_namespaced_pod("p", "default", grace_period_seconds=5)
    assert shorter.metadata.deletion_grace_period_seconds == 5
    longer = core.delete_namespaced_pod("p", "default", grace_period_seconds=50)
    assert longer.metadata.deletion_grace_period_seconds == 5
    core.delete_namespaced_pod("p", "default", grace_period_seconds=0)
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod("p", "default")
    assert err.value.status == 404


def test_the_kubelet_ends_a_terminating_pod_and_watchers_see_both_steps(
    cluster: Cluster,
) -> None:
    core = client.CoreV1Api(cluster.client)
    created = core.create_namespaced_pod("default", pod("p"))
    cluster.until(PODS, running("p"))
    answer = core.delete_namespaced_pod("p", "default")
    assert answer.metadata.deletion_grace_period_seconds == 30
    seen = []
    w = watch.Watch()
    for event in w.stream(
        core.list_namespaced_pod,
        "default",
        resource_version=created.metadata.resource_version,
        timeout_seconds=30,
    ):
        obj = event["object"]
        seen.append((event["type"], obj.metadata.deletion_timestamp is not None))
        if event["type"] == "DELETED":
            w.stop()
    assert ("MODIFIED", True) in seen
    assert seen[-1] == ("DELETED", True)


def test_a_pod_no_node_runs_goes_at_once(slow_kubelet: Cluster) -> None:
    core = client.CoreV1Api(slow_kubelet.client)
    slow_kubelet.manager.stop()  # nothing schedules it; the lifecycle stays on
    slow_kubelet.server.deletion_lifecycle = True
    core.create_namespaced_pod("default", pod("p"))
    answer = core.delete_namespaced_pod("p", "default")
    assert answer.metadata.deletion_timestamp is None
    with pytest.raises(client.ApiException):
        core.read_namespaced_pod("p", "default")


def test_kubectl_delete_waits_for_termination_and_force_skips_it(
    env: tuple[Kubectl, Cluster],  # noqa: F811
) -> None:
    kubectl, cluster = env
    kubectl("run", "a", "--image=busybox")
    kubectl("run", "b", "--image=busybox")
    cluster.until(PODS, lambda ps: len(ps) == 2 and all(running(n)(ps) for n in ("a", "b")))
    out = kubectl("delete", "pod", "a")  # waits until the kubelet ended it
    assert 'pod "a" deleted' in out
    out = kubectl("delete", "pod", "b", "--force", "--grace-period=0", "--wait=false")
    assert 'pod "b" force deleted' in out
    assert [p["metadata"]["name"] for p in cluster.until(PODS, lambda ps: not ps)] == []


def test_a_deleted_collection_of_pods_terminates_gracefully(slow_kubelet: Cluster) -> None:
    core = client.CoreV1Api(slow_kubelet.client)
    for name in ("a", "b"):
        core.create_namespaced_pod(
            "default", {**pod(name, grace=40), "metadata": {"name": name, "labels": {"app": "x"}}}
        )
    core.create_namespaced_pod("default", pod("other"))
    slow_kubelet.until(PODS, lambda ps: all(running(n)(ps) for n in ("a", "b", "other")))
    answer = json.loads(
        core.delete_collection_namespaced_pod(
            "default", label_selector="app=x", _preload_content=False
        ).data
    )
    assert answer["kind"] == "PodList"
    assert sorted(p["metadata"]["name"] for p in answer["items"]) == ["a", "b"]
    assert all(p["metadata"]["deletionGracePeriodSeconds"] == 40 for p in answer["items"])
    # They stay, Terminating, until the kubelet ends them; the rest is untouched.
    left = {p.metadata.name: p for p in core.list_namespaced_pod("default").items}
    assert sorted(left) == ["a", "b", "other"]
    assert left["a"].metadata.deletion_timestamp is not None
    assert left["other"].metadata.deletion_timestamp is None
    # A second delete-collection with grace period 0 ends them at once.
    core.delete_collection_namespaced_pod("default", label_selector="app=x", grace_period_seconds=0)
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["other"]


def test_the_kubelet_ends_a_deleted_collection(cluster: Cluster) -> None:
    core = client.CoreV1Api(cluster.client)
    for name in ("a", "b"):
        core.create_namespaced_pod("default", pod(name))
    cluster.until(PODS, lambda ps: len(ps) == 2 and all(running(n)(ps) for n in ("a", "b")))
    answer = json.loads(
        core.delete_collection_namespaced_pod("default", _preload_content=False).data
    )
    assert all(p["metadata"]["deletionTimestamp"] for p in answer["items"])
    assert cluster.until(PODS, lambda ps: not ps) == []


def test_a_dry_run_delete_collection_keeps_the_pods(slow_kubelet: Cluster) -> None:
    core = client.CoreV1Api(slow_kubelet.client)
    core.create_namespaced_pod("default", pod("a"))
    slow_kubelet.until(PODS, running("a"))
    core.delete_collection_namespaced_pod("default", dry_run="All")
    kept = core.read_namespaced_pod("a", "default")
    assert kept.metadata.deletion_timestamp is None
