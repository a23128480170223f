"""Proportional scaling: a Deployment scaled while several of its
ReplicaSets are active (a stalled rollout, or paused) spreads the new total
across them by size, with the ``desired-replicas`` / ``max-replicas``
annotations, as the real deployment controller does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from controllers_helpers import Cluster
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client
from test_deployment_controller import deployment

from informers.testing import ApiServer
from informers.testing.controllers import ControllerManager
from informers.testing.controllers._proportional import (
    DESIRED_REPLICAS_ANNOTATION,
    MAX_REPLICAS_ANNOTATION,
    is_scaling_event,
    scale_plan,
)
from informers.wire.resources import REPLICASETS


@pytest.fixture
def stalled() -> Iterator[Cluster]:
    """Deployments and ReplicaSets, but no kubelet: pods never become
    available, so a rollout stalls with both ReplicaSets active."""
    with (
        ApiServer() as server,
        ControllerManager(
            server, ready_delay=0, controllers=["deployment", "replicaset"]
        ) as manager,
    ):
        cluster = Cluster(server, manager)
        try:
            yield cluster
        finally:
            cluster.close()


def sizes(want: dict[str, int]) -> Any:
    """The ReplicaSets' sizes by image are ``want``."""

    def check(rss: list[dict[str, Any]]) -> bool:
        got = {
            rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["spec"]["replicas"]
            for rs in rss
        }
        return got == want

    return check


def rolling(name: str, replicas: int, surge: int, unavailable: int) -> dict[str, Any]:
    body = deployment(name, replicas, image="nginx:1.25")
    body["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }
    return body


def stall(cluster: Cluster, replicas: int, surge: int, unavailable: int) -> client.AppsV1Api:
    """Deployment ``web`` at ``replicas``, then rolled to an image whose
    pods never become available."""
    apps = client.AppsV1Api(cluster.client)
    apps.create_namespaced_deployment("default", rolling("web", replicas, surge, unavailable))
    cluster.until(REPLICASETS, sizes({"nginx:1.25": replicas}))
    image = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "bad:1"}]}}}}
    apps.patch_namespaced_deployment("web", "default", image)
    return apps


def patch_spec(apps: client.AppsV1Api, **spec: Any) -> None:
    apps.patch_namespaced_deployment("web", "default", {"spec": spec})


def test_a_stalled_rollout_scales_proportionally(stalled: Cluster) -> None:
    apps = stall(stalled, 10, 3, 2)
    # maxSurge 3, maxUnavailable 2: the new ReplicaSet gets 5, the old keeps 8.
    stalled.until(REPLICASETS, sizes({"nginx:1.25": 8, "bad:1": 5}))
    assert stalled.manager.wait_idle()
    for rs in stalled.objects(REPLICASETS):
        assert rs["metadata"]["annotations"][MAX_REPLICAS_ANNOTATION] == "13"
    # To 15: 18 allowed, 5 more, spread 3 to the old and 2 to the new.
    patch_spec(apps, replicas=15)
    rss = stalled.until(REPLICASETS, sizes({"nginx:1.25": 11, "bad:1": 7}))
    for rs in rss:
        annotations = rs["metadata"]["annotations"]
        assert annotations[DESIRED_REPLICAS_ANNOTATION] == "15"
        assert annotations[MAX_REPLICAS_ANNOTATION] == "18"
    assert stalled.manager.wait_idle()  # 18 is all maxSurge allows: it holds
    assert sizes({"nginx:1.25": 11, "bad:1": 7})(stalled.objects(REPLICASETS))
    # Paused (so the rollout does not go on), down to 5: 8 allowed, 10
    # fewer, taken from both by size.
    patch_spec(apps, paused=True)
    patch_spec(apps, replicas=5)
    stalled.until(REPLICASETS, sizes({"nginx:1.25": 5, "bad:1": 3}))
    assert stalled.manager.wait_idle()
    assert sizes({"nginx:1.25": 5, "bad:1": 3})(stalled.objects(REPLICASETS))


def test_a_paused_deployment_scales_every_active_replica_set(stalled: Cluster) -> None:
    apps = stall(stalled, 4, 2, 0)
    stalled.until(REPLICASETS, sizes({"nginx:1.25": 4, "bad:1": 2}))
    patch_spec(apps, paused=True)
    patch_spec(apps, replicas=8)
    # 10 allowed (8 + 2), 4 more: 4 * 10/6 rounds to 7 (+3), 2 * 10/6 to 3 (+1).
    stalled.until(REPLICASETS, sizes({"nginx:1.25": 7, "bad:1": 3}))


def test_to_zero_and_back(stalled: Cluster) -> None:
    apps = stall(stalled, 4, 1, 1)
    stalled.until(
        REPLICASETS, lambda rss: len(rss) == 2 and all(r["spec"]["replicas"] for r in rss)
    )
    patch_spec(apps, replicas=0)
    stalled.until(REPLICASETS, sizes({"nginx:1.25": 0, "bad:1": 0}))


# ---------------------------------------------------------------- the plan


def rs(name: str, size: int, created: str, max_replicas: int | None) -> dict[str, Any]:
    annotations = {} if max_replicas is None else {MAX_REPLICAS_ANNOTATION: str(max_replicas)}
    return {
        "metadata": {"name": name, "creationTimestamp": created, "annotations": annotations},
        "spec": {"replicas": size},
        "status": {"availableReplicas": 0},
    }


@given(
    st.lists(st.integers(0, 20), min_size=2, max_size=5),
    st.integers(0, 40),
    st.integers(0, 5),
    st.booleans(),
)
def test_the_plan_reaches_the_allowed_total(
    old_sizes: list[int], replicas: int, surge: int, annotated: bool
) -> None:
    before = sum(old_sizes)
    replica_sets = [
        rs(f"rs{i}", size, f"2026-01-01T00:00:0{i}Z", before if annotated else None)
        for i, size in enumerate(old_sizes)
    ]
    new_rs, old = replica_sets[-1], replica_sets[:-1]
    plan = scale_plan(
        new_rs, old, replicas=replicas, max_surge=surge, status_replicas=before, rolling=True
    )
    active = [r for r in replica_sets if r["spec"]["replicas"] > 0]
    planned = {r["metadata"]["name"]: size for r, size in plan}
    assert all(size >= 0 for size in planned.values())
    if len(active) <= 1:
        assert list(planned.values()) == [replicas]
        return
    # Only active ones move, and together they reach replicas + maxSurge.
    assert set(planned) == {r["metadata"]["name"] for r in active}
    allowed = replicas + surge if replicas else 0
    assert sum(planned.values()) == allowed
    if allowed >= before:  # scaling up takes nothing away
        assert all(planned[r["metadata"]["name"]] >= r["spec"]["replicas"] for r in active)
    else:
        assert all(planned[r["metadata"]["name"]] <= r["spec"]["replicas"] for r in active)


def test_a_scaling_event_needs_an_active_replica_set_of_other_desire() -> None:
    scaled = rs("a", 3, "t", 4)
    scaled["metadata"]["annotations"][DESIRED_REPLICAS_ANNOTATION] = "3"
    idle = rs("b", 0, "t", 4)
    idle["metadata"]["annotations"][DESIRED_REPLICAS_ANNOTATION] = "9"
    assert not is_scaling_event([scaled, idle], 3)
    assert is_scaling_event([scaled, idle], 5)
    assert not is_scaling_event([rs("c", 3, "t", None)], 5)  # no annotation: no event
