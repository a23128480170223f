"""Pods turning Ready, Jobs completing, namespace finalization and cascading
deletion, against the emulator through the kubernetes client."""

from __future__ import annotations

from typing import Any

import pytest
from controllers_helpers import Cluster
from kubernetes import client

from informers.testing import ApiServer
from informers.testing.controllers import ControllerManager
from informers.testing.controllers.pods import DEFAULT_NODE
from informers.testing.fake import FakeClock
from informers.util.clock import REAL_CLOCK
from informers.wire.resources import DEPLOYMENTS, JOBS, NAMESPACES, NODES, PODS, REPLICASETS


def pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "nginx"}]
        },
    }


def cond(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), {})


def running(pods: list[dict[str, Any]]) -> bool:
    return bool(pods) and all(p.get("status", {}).get("phase") == "Running" for p in pods)


def test_a_pod_becomes_running_and_ready(cluster: Cluster) -> None:
    client.CoreV1Api(cluster.client).create_namespaced_pod("default", pod("p"))
    (p,) = cluster.until(PODS, running)
    status = p["status"]
    for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        assert cond(p, kind)["status"] == "True"
    assert [c["name"] for c in status["containerStatuses"]] == ["a", "b"]
    for container in status["containerStatuses"]:
        assert container["ready"] is True
        assert container["started"] is True
        assert "running" in container["state"]
    assert status["podIP"].startswith("10.244.")
    assert status["hostIP"]
    assert p["spec"]["nodeName"] == DEFAULT_NODE


def test_a_pod_goes_to_an_existing_node() -> None:
    with ApiServer() as server:
        server.create(NODES, {"metadata": {"name": "worker-1"}})
        with ControllerManager(server, ready_delay=0, controllers=["pod-lifecycle"]) as manager:
            c = Cluster(server, manager)
            try:
                client.CoreV1Api(c.client).create_namespaced_pod("default", pod("p"))
                (p,) = c.until(PODS, running)
                assert p["spec"]["nodeName"] == "worker-1"
            finally:
                c.close()


def test_the_ready_delay_is_waited_on_the_clock() -> None:
    clock = FakeClock(REAL_CLOCK.now())
    with ApiServer() as server:
        manager = ControllerManager(
            server, ready_delay=5.0, controllers=["pod-lifecycle"], clock=clock
        ).start()
        c = Cluster(server, manager)
        try:
            client.CoreV1Api(c.client).create_namespaced_pod("default", pod("p"))
            c.until(PODS, lambda ps: len(ps) == 1)
            assert manager.wait_idle()  # seen, requeued after 5 s of the clock
            assert c.objects(PODS)[0].get("status", {}).get("phase") != "Running"
            clock.advance(5.0)
            c.until(PODS, running)
        finally:
            c.close()
            manager.stop()


def job(name: str, completions: int | None, parallelism: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": parallelism,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "work", "image": "busybox"}],
            }
        },
    }
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(("completions", "parallelism"), [(3, 2), (1, 1), (None, 1)])
def test_a_job_completes(cluster: Cluster, completions: int | None, parallelism: int) -> None:
    made = client.BatchV1Api(cluster.client).create_namespaced_job(
        "default", job("work", completions, parallelism)
    )
    (j,) = cluster.until(JOBS, lambda js: cond(js[0], "Complete").get("status") == "True")
    want = completions or 1
    assert j["status"]["succeeded"] == want
    assert j["status"]["active"] == 0
    assert j["status"]["completionTime"]
    assert cond(j, "Complete")["reason"] == "CompletionsReached"
    pods = cluster.objects(PODS)
    assert len(pods) == want
    assert all(p["status"]["phase"] == "Succeeded" for p in pods)
    for p in pods:
        assert p["metadata"]["labels"]["job-name"] == "work"
        assert p["metadata"]["ownerReferences"][0]["uid"] == made.metadata.uid
    assert cluster.manager.wait_idle()
    assert len(cluster.objects(PODS)) == want  # no pod after completion


def rs_body(name: str, replicas: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def test_deleting_a_namespace_removes_its_contents_then_itself(cluster: Cluster) -> None:
    core, apps = client.CoreV1Api(cluster.client), client.AppsV1Api(cluster.client)
    core.create_namespace({"metadata": {"name": "team"}})
    apps.create_namespaced_replica_set("team", rs_body("front", 2))
    core.create_namespaced_config_map("team", {"metadata": {"name": "settings"}})
    core.create_namespaced_config_map("default", {"metadata": {"name": "keep"}})
    cluster.until(PODS, lambda ps: len(ps) == 2, namespace="team")
    answer = core.delete_namespace("team")  # the client answers a dict here
    assert answer["status"]["phase"] == "Terminating"
    assert answer["metadata"]["deletionTimestamp"]
    cluster.until(NAMESPACES, lambda ns: "team" not in {n["metadata"]["name"] for n in ns}, None)
    assert cluster.server.list_objects(PODS, namespace="team") == []
    assert cluster.server.list_objects("configmaps", namespace="team") == []
    assert cluster.server.list_objects(REPLICASETS, namespace="team") == []
    assert [
        c["metadata"]["name"]
        for c in cluster.server.list_objects("configmaps", namespace="default")
    ] == ["keep"]


def test_a_bare_server_deletes_a_namespace_at_once() -> None:
    with ApiServer() as server:
        server.create(NAMESPACES, {"metadata": {"name": "team"}})
        server.create("configmaps", {"metadata": {"name": "c", "namespace": "team"}})
        server.delete(NAMESPACES, "team")
        assert server.list_objects("configmaps", namespace="team") == []
        assert "team" not in {n["metadata"]["name"] for n in server.list_objects(NAMESPACES)}


def make_deployment(cluster: Cluster) -> None:
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    client.AppsV1Api(cluster.client).create_namespaced_deployment("default", body)
    cluster.until(PODS, lambda ps: len(ps) == 2 and running(ps))


def test_background_deletion_removes_the_dependents(cluster: Cluster) -> None:
    make_deployment(cluster)
    client.AppsV1Api(cluster.client).delete_namespaced_deployment(
        "web", "default", propagation_policy="Background"
    )
    cluster.until(REPLICASETS, lambda rss: not rss)
    cluster.until(PODS, lambda ps: not ps)


def test_foreground_deletion_deletes_dependents_before_the_owner(cluster: Cluster) -> None:
    make_deployment(cluster)
    answer = client.AppsV1Api(cluster.client).delete_namespaced_deployment(
        "web", "default", propagation_policy="Foreground"
    )
    assert answer["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert answer["metadata"]["deletionTimestamp"]
    left_when_gone: list[int] = []

    def gone(ds: list[dict[str, Any]]) -> bool:
        if not ds:  # checked at the event: nothing may be left by then
            server = cluster.server
            left_when_gone.append(
                len(server.list_objects(PODS)) + len(server.list_objects(REPLICASETS))
            )
        return not ds

    cluster.until(DEPLOYMENTS, gone)
    assert left_when_gone[0] == 0


def test_orphan_deletion_keeps_the_dependents(cluster: Cluster) -> None:
    make_deployment(cluster)
    client.AppsV1Api(cluster.client).delete_namespaced_deployment(
        "web", "default", propagation_policy="Orphan"
    )
    cluster.until(DEPLOYMENTS, lambda ds: not ds)
    cluster.until(
        REPLICASETS, lambda rss: len(rss) == 1 and not rss[0]["metadata"].get("ownerReferences")
    )
    assert cluster.manager.wait_idle()
    assert len(cluster.objects(PODS)) == 2


def test_a_stale_cache_never_moves_a_finished_pod_back_to_running() -> None:
    # The lifecycle controller reads pods from its cache. A reconcile that
    # still sees the Pending version of a Job's pod the server already has
    # as Succeeded must not start it again (that made a Job's succeeded
    # count drop after it completed).
    from informers.cache.store import Indexer
    from informers.testing.controllers import JsonApi
    from informers.testing.controllers.pods import PodLifecycleReconciler
    from informers.toolkit.runtime import Request

    class StaleView:
        def __init__(self, obj: dict[str, Any]) -> None:
            self._indexer = Indexer()
            self._indexer.add(obj)

        def get_indexer(self) -> Indexer:
            return self._indexer

    with ApiServer() as server:
        template = {"spec": {**pod("t")["spec"], "restartPolicy": "Never"}}
        job = server.create(
            JOBS, {"metadata": {"name": "j"}, "spec": {"template": template}}, "default"
        )
        owner = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "j",
            "uid": job["metadata"]["uid"],
            "controller": True,
        }
        body = pod("p")
        body["metadata"]["ownerReferences"] = [owner]
        body["spec"]["restartPolicy"] = "Never"
        pending = server.create(PODS, body, "default")
        api_client = server.api_client()
        try:
            api = JsonApi(api_client)
            api.patch(PODS, "default", "p", {"spec": {"nodeName": "n"}})
            api.patch_status(PODS, "default", "p", {"phase": "Succeeded"})
            reconciler = PodLifecycleReconciler(
                api,
                StaleView(pending),  # type: ignore[arg-type]
                None,
                ready_delay=0,
                completion_delay=60,  # it would not succeed it again soon
            )
            result = reconciler(Request("default", "p"))
            assert server.get(PODS, "p")["status"]["phase"] == "Succeeded"
            assert result is None  # the next event brings the request back
        finally:
            api_client.close()


def test_a_stale_cache_never_deletes_a_dependent_that_was_just_orphaned() -> None:
    # An orphaning delete removes the owner reference from the dependent,
    # then the owner goes. A reconcile of the dependent whose cache still
    # shows the reference (and finds the owner gone) must not delete it
    # (that made test_orphan_deletion_keeps_the_dependents lose its
    # ReplicaSet in a clean-clone CI run).
    from informers.cache.store import Indexer
    from informers.testing.controllers import JsonApi
    from informers.testing.controllers.api import ConflictError
    from informers.testing.controllers.garbagecollector import (
        OWNER_UID_INDEX,
        GarbageCollector,
        owner_uid_index,
    )
    from informers.toolkit.runtime import Request

    class StaleView:
        def __init__(self, *objs: dict[str, Any]) -> None:
            self._indexer = Indexer(indexers={OWNER_UID_INDEX: owner_uid_index})
            for obj in objs:
                self._indexer.add(obj)

        def get_indexer(self) -> Indexer:
            return self._indexer

    with ApiServer() as server:
        owner = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "gone-uid",
            "controller": True,
        }
        spec = {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod("t")["spec"]},
        }
        stale = server.create(
            REPLICASETS,
            {"metadata": {"name": "rs", "ownerReferences": [owner]}, "spec": spec},
            "default",
        )
        api_client = server.api_client()
        try:
            api = JsonApi(api_client)
            orphaned = api.patch(
                REPLICASETS, "default", "rs", {"metadata": {"ownerReferences": None}}
            )
            collector = GarbageCollector(
                api,
                {
                    REPLICASETS: StaleView(stale),  # type: ignore[dict-item]
                    PODS: StaleView(),  # type: ignore[dict-item]
                },
            )
            assert collector(Request("default", "replicasets:rs")) is None
            assert server.get(REPLICASETS, "rs")["metadata"]["uid"] == stale["metadata"]["uid"]

            # and a delete only ever removes the version that was judged
            with pytest.raises(ConflictError):
                api.delete(
                    REPLICASETS,
                    "default",
                    "rs",
                    uid=stale["metadata"]["uid"],
                    resource_version=stale["metadata"]["resourceVersion"],
                )
            assert api.delete(
                REPLICASETS,
                "default",
                "rs",
                uid=orphaned["metadata"]["uid"],
                resource_version=orphaned["metadata"]["resourceVersion"],
            )
        finally:
            api_client.close()
