"""The Controller end to end: informers over real HTTP against the API server
emulator, through the workqueue to reconcile workers."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from runtime_helpers import ListSource, Reconciler

from informers.cache.informer import SharedIndexInformer
from informers.errors import CacheSyncTimeoutError
from informers.testing import ApiServer
from informers.toolkit.runtime import (
    Controller,
    InformerSource,
    PeriodicSource,
    Request,
    Result,
    enqueue_owner,
    generation_changed,
)
from informers.toolkit.workqueue import (
    PRIORITY_LOW,
    ItemExponentialFailureRateLimiter,
    PriorityQueue,
)
from informers.util.clock import REAL_CLOCK
from informers.wire.resources import CONFIGMAPS, PODS, REPLICASETS
from tests.helpers import POD_SPEC, new_pod

R = Request
MakeInformer = Callable[..., SharedIndexInformer]


def namespace(server: ApiServer, *names: str) -> None:
    for name in names:
        server.create("namespaces", {"metadata": {"name": name}})


def replica_set(name: str, ns: str = "default") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {**POD_SPEC}},
        },
    }


def owned_pod(name: str, rs: dict[str, Any], controller: bool = True) -> dict[str, Any]:
    body = new_pod(name, rs["metadata"]["namespace"], app=rs["metadata"]["name"])
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": rs["metadata"]["name"],
            "uid": rs["metadata"]["uid"],
            "controller": controller,
        }
    ]
    return body


def test_a_pod_event_reconciles_its_replica_set(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    namespace(api_server, "team")
    rs_a = api_server.create(REPLICASETS, replica_set("rs-a"))
    rs_b = api_server.create(REPLICASETS, replica_set("rs-b", ns="team"))
    api_server.create(PODS, owned_pod("rs-a-1", rs_a))
    api_server.create(PODS, owned_pod("rs-a-2", rs_a))
    api_server.create(PODS, owned_pod("rs-b-1", rs_b))
    pods, replica_sets = make_informer(PODS), make_informer(REPLICASETS)
    pods.start()
    replica_sets.start()
    rec = Reconciler(REAL_CLOCK)
    controller = Controller(
        "replicaset",
        rec,
        [
            InformerSource(replica_sets),
            InformerSource(pods, map_func=enqueue_owner(REPLICASETS)),
        ],
        workers=2,
    )
    controller.start()
    try:
        assert controller.wait_idle(10)
        # initial lists: each RS once (its own add and its pods' adds coalesce
        # in the queue while the workers were not started)
        assert sorted(r for r, _ in rec.calls) == [R("default", "rs-a"), R("team", "rs-b")]
        before = rec.count(R("team", "rs-b"))
        # an un-owned pod and a pod owned by someone else map to nothing ...
        api_server.create(PODS, new_pod("loner", "team"))
        foreign = owned_pod("foreign", rs_b)
        foreign["metadata"]["ownerReferences"][0]["kind"] = "StatefulSet"
        api_server.create(PODS, foreign)
        # ... an update of an owned pod reconciles its RS
        p = api_server.get(PODS, "rs-b-1", "team")
        p["metadata"]["labels"]["touched"] = "yes"
        api_server.update(PODS, p)
        assert rec.wait_for(lambda calls: sum(r == R("team", "rs-b") for r, _ in calls) > before)
        assert controller.wait_idle(10)
        assert {r for r, _ in rec.calls} == {R("default", "rs-a"), R("team", "rs-b")}
        # a deleted pod reconciles its RS too
        count = rec.count(R("default", "rs-a"))
        api_server.delete(PODS, "rs-a-2", "default")
        assert rec.wait_for(lambda calls: sum(r == R("default", "rs-a") for r, _ in calls) > count)
    finally:
        controller.stop()


def test_generation_changed_skips_status_updates(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    api_server.create(PODS, new_pod("web"))
    pods = make_informer(PODS)
    pods.start()
    rec = Reconciler(REAL_CLOCK)
    controller = Controller(
        "spec-only", rec, [InformerSource(pods, predicates=[generation_changed()])]
    )
    controller.start()
    try:
        assert controller.wait_idle(10)
        assert rec.count(R("default", "web")) == 1
        current = api_server.get(PODS, "web")
        current["status"] = {"phase": "Running"}
        api_server.update(PODS, current)  # a status change: same generation
        api_server.create(PODS, new_pod("marker"))  # after it on the same watch
        assert rec.wait_for(lambda calls: any(r == R("default", "marker") for r, _ in calls))
        assert controller.wait_idle(10)
        assert rec.count(R("default", "web")) == 1
        current = api_server.get(PODS, "web")
        current["spec"]["containers"][0]["image"] = "nginx:2"
        api_server.update(PODS, current)
        assert rec.wait_for(lambda calls: sum(r == R("default", "web") for r, _ in calls) == 2)
    finally:
        controller.stop()


def test_sources_push_their_initial_state_in_order_before_workers_start(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    namespace(api_server, "pods", "cms")
    for n in range(5):
        api_server.create(PODS, new_pod(f"pod-{n}", "pods"))
    for n in range(3):
        api_server.create(CONFIGMAPS, {"metadata": {"name": f"cm-{n}", "namespace": "cms"}})
    pods, cms = make_informer(PODS), make_informer(CONFIGMAPS)
    pods.start()
    cms.start()
    sources: list[Any] = []
    synced_at_reconcile: list[bool] = []
    rec = Reconciler(REAL_CLOCK)

    def reconcile(request: Request) -> None:
        synced_at_reconcile.append(all(s.has_synced() for s in sources))
        rec(request)

    sources.extend(
        [
            InformerSource(pods),
            InformerSource(cms),
            PeriodicSource(lambda: ["periodic/tick"], every=3600, name="tick"),
        ]
    )
    controller = Controller("ordered", reconcile, sources, workers=1)
    controller.start()
    try:
        assert controller.wait_idle(10)
    finally:
        controller.stop()
    order = [r for r, _ in rec.calls]
    assert sorted(order[:5]) == [R("pods", f"pod-{n}") for n in range(5)]
    assert sorted(order[5:8]) == [R("cms", f"cm-{n}") for n in range(3)]
    assert order[8:] == [R("periodic", "tick")]
    assert all(synced_at_reconcile)


def test_an_informer_nobody_started_fails_the_start_at_once(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    # Issue 30 item 4: no silent wait of sync_timeout (60 s by default) first.
    cms = make_informer(CONFIGMAPS)
    controller = Controller("never", lambda r: None, [InformerSource(cms)], sync_timeout=2)
    with pytest.raises(CacheSyncTimeoutError) as info:
        controller.start()
    assert info.value.not_synced == {  # not "initial state not pushed after 2 s"
        "informer configmaps": "the informer is not started: start it, or its factory, first"
    }
    assert cms.registrations() == []
    assert not controller.is_running()
    controller.stop()


def test_the_sync_timeout_names_the_informer_not_started(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    pods, cms = make_informer(PODS), make_informer(CONFIGMAPS)
    pods.start()  # configmaps is never started: the controller does not start it
    log: list[str] = []
    first = ListSource("first", [R("ns", "x")], log)
    controller = Controller(
        "unsynced",
        lambda r: None,
        [first, InformerSource(pods), InformerSource(cms)],
        sync_timeout=0.3,
    )
    with pytest.raises(CacheSyncTimeoutError) as info:
        controller.start()
    assert list(info.value.not_synced) == ["informer configmaps"]
    assert "informer configmaps" in str(info.value)
    assert "not started" in str(info.value)
    assert log == ["start first", "stop first"]  # what was started was stopped
    assert pods.registrations() == []
    assert cms.registrations() == []
    assert controller.queue.shutting_down()
    assert not controller.is_running()
    controller.stop()


def test_errors_are_retried_with_backoff_until_success(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    api_server.create(PODS, new_pod("flaky"))
    api_server.create(PODS, new_pod("steady"))
    pods = make_informer(PODS)
    pods.start()
    failures = {R("default", "flaky"): 3}
    lock = threading.Lock()
    rec = Reconciler(REAL_CLOCK)

    def reconcile(request: Request) -> None:
        rec(request)
        with lock:
            left = failures.get(request, 0)
            failures[request] = left - 1
        if left > 0:
            raise RuntimeError(f"attempt failed, {left} to go")

    controller = Controller(
        "flaky",
        reconcile,
        [InformerSource(pods)],
        rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01),
    )
    controller.start()
    try:
        assert rec.wait_for(lambda calls: sum(r == R("default", "flaky") for r, _ in calls) == 4)
        assert controller.wait_idle(10)
        assert rec.count(R("default", "flaky")) == 4
        assert rec.count(R("default", "steady")) == 1
        times = rec.times(R("default", "flaky"))
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(gap >= delay for gap, delay in zip(gaps, (0.001, 0.002, 0.004), strict=True))
        assert controller.queue.num_requeues(R("default", "flaky")) == 0
    finally:
        controller.stop()


def test_stop_with_an_informer_source_and_work_in_flight(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    api_server.create(PODS, new_pod("slow"))
    pods = make_informer(PODS)
    pods.start()
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def reconcile(request: Request) -> None:
        entered.set()
        assert release.wait(10)
        finished.set()

    # stop() stops sources last to first: once the list source is stopped,
    # the informer source (after it in the list) is stopped already
    last_stopped = ListSource("first", [])
    controller = Controller("in-flight", reconcile, [last_stopped, InformerSource(pods)], workers=3)
    controller.start()
    assert entered.wait(5)
    stopper = threading.Thread(target=controller.stop, name="test-stopper")
    stopper.start()
    assert last_stopped.stopped.wait(5)
    assert pods.registrations() == []  # our handler is gone ...
    assert stopper.is_alive()  # ... and stop() waits for the reconcile in flight
    release.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert finished.is_set()
    assert not [t for t in threading.enumerate() if t.name.startswith("reconcile-in-flight")]
    assert not pods.is_stopped()  # the informer is not the controller's to stop


def test_priority_queue_reconciles_an_event_before_the_initial_list(
    api_server: ApiServer, make_informer: MakeInformer
) -> None:
    """With ``priority_queue=True`` the initial list waits with low priority
    and a request added meanwhile goes ahead of it; a failed initial-list
    request is requeued low."""
    names = [f"p{n:02d}" for n in range(30)]
    for name in names:
        api_server.create(PODS, new_pod(name))
    pods = make_informer(PODS)
    pods.start()
    first_started, release = threading.Event(), threading.Event()
    calls: list[Request] = []
    lock = threading.Lock()

    def reconcile(request: Request) -> Result | None:
        with lock:
            calls.append(request)
            first = len(calls) == 1
        if first:
            first_started.set()
            assert release.wait(10)
            raise RuntimeError("first attempt fails")
        return None

    controller = Controller(
        "prio",
        reconcile,
        [InformerSource(pods)],
        priority_queue=True,
        priority_max_wait=600.0,
        rate_limiter=ItemExponentialFailureRateLimiter(base=0.0, cap=0.0),
    )
    queue = controller.queue
    assert isinstance(queue, PriorityQueue)
    assert queue.max_wait == 600.0
    controller.start()
    try:
        assert first_started.wait(10)
        waiting = [R("default", n) for n in names if R("default", n) != calls[0]]
        assert all(queue.priority(r) == PRIORITY_LOW for r in waiting)
        queue.add(R("default", "fresh"))
        release.set()
        assert controller.wait_idle(10)
        with lock:
            assert calls[1] == R("default", "fresh")
            assert sorted(calls[2:]) == sorted([*waiting, calls[0]])
            assert calls[-1] == calls[0]  # its retry kept its low priority: last
    finally:
        controller.stop()


def test_a_map_function_that_raises_is_named_logged_and_counted(
    api_server: ApiServer, make_informer: MakeInformer, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 30 item 12: not "handler _EnqueueHandler raised", and not lost
    # without a trace: an ERROR naming the controller and the map function,
    # and controller_runtime_map_errors_total.
    import logging

    import prometheus_client

    from informers.toolkit.runtime.prometheus import PrometheusControllerMetrics

    registry = prometheus_client.CollectorRegistry()
    reconciled: list[Request] = []

    def explode_or_own(obj: Any) -> list[Request]:
        if obj["metadata"]["name"].startswith("explode"):
            raise ValueError("no owner here")
        return [Request("default", obj["metadata"]["name"])]

    pods = make_informer(PODS)
    pods.start()
    controller = Controller(
        "owners",
        reconciled.append,
        [InformerSource(pods, map_func=explode_or_own)],
        metrics=PrometheusControllerMetrics(registry),
    )
    with caplog.at_level(logging.ERROR, "informers"):
        controller.start()
        try:
            api_server.create(PODS, new_pod("explode-1"))
            api_server.create(PODS, new_pod("fine"))
            assert pods.wait_for_resource_version(api_server.resource_version, 10)
            assert controller.wait_idle(10)
        finally:
            controller.stop()
    assert reconciled == [Request("default", "fine")]  # the raising event made no request
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, caplog.text
    message = errors[0].getMessage()
    assert "controller owners" in message
    assert "explode_or_own" in message
    assert "add of default/explode-1" in message
    assert "_EnqueueHandler" not in message
    assert errors[0].exc_info is not None  # the traceback
    count = registry.get_sample_value(
        "controller_runtime_map_errors_total", {"controller": "owners"}
    )
    assert count == 1.0
