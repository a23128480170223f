"""informers.toolkit.events.EventRecorder against the API server emulator,
over real HTTP with the real kubernetes client: Events created and counted
in both APIs, the spam filter, refusals and retries, and an API outage
during which event() neither blocks nor grows without bound."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from informers.errors import InvalidEventError, ObjectReferenceError
from informers.testing import ApiServer, FakeClock
from informers.toolkit.events import (
    CORE_V1,
    EVENTS_V1,
    DropReason,
    EventCorrelator,
    EventRecorder,
)
from informers.wire.resources import NODES, PODS, Resource
from tests.helpers import new_pod

EVENTS_K8S_IO = Resource("events.k8s.io", "v1", "events", "Event")
EVENTS_PATH = "/api/v1/namespaces/default/events"


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as api:
        yield api


@pytest.fixture
def api(server: ApiServer) -> Iterator[Any]:
    client = server.api_client()
    yield client
    client.close()


def _pod(server: ApiServer, name: str = "web") -> dict[str, Any]:
    return server.create(PODS, new_pod(name))


def _events(server: ApiServer, resource: Resource | str = "events") -> list[dict[str, Any]]:
    return server.list_objects(resource, "default")


def test_events_are_created_and_repeats_counted_on_core_v1(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    with EventRecorder(api, "shop-controller", instance="shop-1", api_version=CORE_V1) as recorder:
        assert any(t.name == "event-recorder-shop-controller" for t in threading.enumerate())
        for _ in range(3):
            recorder.event(pod, "Normal", "Synced", "pod is in sync")
        recorder.event(pod, "Warning", "Failed", "could not reach the backend")
        assert recorder.flush(10)
        for _ in range(2):  # now as updates of the existing Event
            recorder.event(pod, "Normal", "Synced", "pod is in sync")
        assert recorder.flush(10)
        stats = recorder.stats()
    assert stats.api_version == CORE_V1
    assert stats.accepted == 6
    assert stats.pending == 0
    assert sum(stats.dropped.values()) == 0
    by_reason = {e["reason"]: e for e in _events(server)}
    assert set(by_reason) == {"Synced", "Failed"}
    synced = by_reason["Synced"]
    assert synced["count"] == 5
    assert synced["type"] == "Normal"
    assert synced["message"] == "pod is in sync"
    assert synced["firstTimestamp"] <= synced["lastTimestamp"]
    assert synced["source"] == {"component": "shop-controller"}
    assert synced["reportingInstance"] == "shop-1"
    assert synced["involvedObject"]["uid"] == pod["metadata"]["uid"]
    assert synced["involvedObject"]["kind"] == "Pod"
    assert by_reason["Failed"]["count"] == 1


def test_events_k8s_io_is_preferred_and_counts_a_series(server: ApiServer, api: Any) -> None:
    server.register_resource(EVENTS_K8S_IO)
    pod = _pod(server)
    with EventRecorder(api, "shop-controller") as recorder:
        recorder.event(pod, "Normal", "Scaled", "scaled to 3", action="Scale")
        assert recorder.flush(10)
        recorder.event(pod, "Normal", "Scaled", "scaled to 3", action="Scale")
        recorder.event(pod, "Normal", "Scaled", "scaled to 3", action="Scale")
        assert recorder.flush(10)
        assert recorder.stats().api_version == EVENTS_V1
    (event,) = _events(server, EVENTS_K8S_IO)
    assert event["series"]["count"] == 3
    assert event["note"] == "scaled to 3"
    assert event["action"] == "Scale"
    assert event["regarding"]["name"] == "web"
    assert event["eventTime"].endswith("Z")
    # One storage, two versions: core v1 reads the same Event.
    (core,) = _events(server)
    assert core["message"] == "scaled to 3"
    assert core["series"]["count"] == 3
    assert core["metadata"]["uid"] == event["metadata"]["uid"]


def test_cluster_scoped_objects_and_cached_objects(server: ApiServer, api: Any) -> None:
    node = server.create(NODES, {"metadata": {"name": "node-1"}})
    cached = {"metadata": dict(node["metadata"])}  # as a list returns it: no kind
    with EventRecorder(api, "ctl", api_version=CORE_V1) as recorder:
        with pytest.raises(ObjectReferenceError, match="pass its resource"):
            recorder.event(cached, "Normal", "Ready", "ready")
        recorder.event(cached, "Normal", "Ready", "ready", resource=NODES)
        assert recorder.flush(10)
    (event,) = _events(server)  # in the default namespace
    assert event["involvedObject"]["kind"] == "Node"
    assert "namespace" not in event["involvedObject"]


def test_bad_input_raises_at_once(api: Any, server: ApiServer) -> None:
    pod = _pod(server)
    with EventRecorder(api, "ctl", api_version=CORE_V1) as recorder:
        with pytest.raises(InvalidEventError, match="Normal or Warning"):
            recorder.event(pod, "Error", "Failed", "x")
        with pytest.raises(InvalidEventError, match="reason"):
            recorder.event(pod, "Normal", "", "x")
        assert recorder.stats().accepted == 0
    with pytest.raises(ValueError, match="api_version"):
        EventRecorder(api, "ctl", api_version="v2")


def test_a_flood_about_one_object_is_cut_by_the_spam_filter(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    drops: list[DropReason] = []
    with EventRecorder(api, "ctl", api_version=CORE_V1, on_drop=drops.append) as recorder:
        for _ in range(40):
            recorder.event(pod, "Warning", "BackOff", "restarting failed container")
        assert recorder.flush(10)
        stats = recorder.stats()
    assert stats.accepted == 25
    assert stats.dropped[DropReason.SPAM] == 15
    assert drops == [DropReason.SPAM] * 15
    (event,) = _events(server)
    assert event["count"] == 25


def test_a_correlator_of_other_limits(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    clock = FakeClock()
    correlator = EventCorrelator(clock, spam_burst=3)
    with EventRecorder(
        api, "ctl", api_version=CORE_V1, clock=clock, correlator=correlator
    ) as recorder:
        for _ in range(5):
            recorder.event(pod, "Normal", "Synced", "ok")
        assert recorder.flush(10)
        assert recorder.stats().dropped[DropReason.SPAM] == 2
    (event,) = _events(server)
    assert event["count"] == 3


def test_a_refusal_is_not_retried(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    server.fail_next(1, 403, path_prefix=EVENTS_PATH)
    with EventRecorder(api, "ctl", api_version=CORE_V1) as recorder:
        recorder.event(pod, "Normal", "First", "refused")
        assert recorder.flush(10)
        recorder.event(pod, "Normal", "Second", "written")
        assert recorder.flush(10)
        stats = recorder.stats()
    assert stats.dropped[DropReason.REJECTED] == 1
    assert [e["reason"] for e in _events(server)] == ["Second"]


def test_server_errors_are_retried_after_the_delay(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    clock = FakeClock()
    server.fail_next(1, 503, path_prefix=EVENTS_PATH)
    with EventRecorder(api, "ctl", api_version=CORE_V1, clock=clock, retry_delay=10) as recorder:
        recorder.event(pod, "Normal", "Synced", "ok")
        assert clock.wait_for_waiters(1, 10)  # failed once, waits to retry
        assert not recorder.flush(0.05)
        assert _events(server) == []
        clock.advance(10)  # the first retry comes after a random part of the delay
        assert recorder.flush(10)
        assert recorder.stats().written == 1
    (event,) = _events(server)
    assert event["count"] == 1


def test_an_event_is_given_up_after_max_tries(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    clock = FakeClock()
    server.fail_next(2, 500, path_prefix=EVENTS_PATH)
    with EventRecorder(api, "ctl", api_version=CORE_V1, clock=clock, max_tries=2) as recorder:
        recorder.event(pod, "Normal", "Synced", "ok")
        assert clock.wait_for_waiters(1, 10)
        clock.advance(10)
        assert recorder.flush(10)  # the second failure was the last try
        stats = recorder.stats()
    assert stats.dropped[DropReason.RETRIES_EXHAUSTED] == 1
    assert stats.written == 0
    assert _events(server) == []


def test_during_an_outage_event_neither_blocks_nor_grows(
    server: ApiServer, api: Any, caplog: pytest.LogCaptureFixture
) -> None:
    pods = [_pod(server, f"web-{i}") for i in range(200)]
    clock = FakeClock()
    drops: list[DropReason] = []
    server.stop()  # the API server goes away: connections are refused
    recorder = EventRecorder(
        api,
        "ctl",
        api_version=CORE_V1,
        clock=clock,
        max_pending=50,
        retry_delay=10,
        on_drop=drops.append,
    )
    try:
        with caplog.at_level(logging.WARNING, logger="informers.toolkit.events.recorder"):
            recorder.event(pods[0], "Normal", "Synced", "ok")
            assert clock.wait_for_waiters(1, 10)  # the worker failed and waits to retry
            for pod in pods[1:]:  # returns at once although nothing can be written
                recorder.event(pod, "Normal", "Synced", "ok")
                recorder.event(pod, "Normal", "Synced", "ok")  # a repeat takes no room
                assert recorder.stats().pending <= 50
            assert not recorder.flush(0.05)
        stats = recorder.stats()
        assert stats.pending == 50
        assert stats.dropped[DropReason.BUFFER_FULL] == 2 * 150
        assert drops == [DropReason.BUFFER_FULL] * 300
        full = [r for r in caplog.records if "buffer full" in r.getMessage()]
        assert len(full) == 1  # logged once
        assert "Pod default/web-50 Synced" in full[0].getMessage()  # names, never the object
        # the server comes back; the retry writes what was kept
        server.start()
        clock.advance(10)
        assert recorder.flush(20)
        assert recorder.stats().written == 50
    finally:
        recorder.stop()
    events = _events(server)
    assert len(events) == 50
    assert sorted(e["count"] for e in events) == [1] + [2] * 49


def test_stop_aborts_the_request_in_flight_and_drops_the_rest(server: ApiServer, api: Any) -> None:
    pod = _pod(server)
    server.delay_next(1, 60, path_prefix=EVENTS_PATH)
    recorder = EventRecorder(api, "ctl", api_version=CORE_V1)
    recorder.event(pod, "Normal", "A", "held by the server")
    recorder.event(pod, "Normal", "B", "waits in the buffer")
    assert not recorder.flush(0.2)
    recorder.stop(timeout=10)
    assert not any(t.name == "event-recorder-ctl" for t in threading.enumerate())
    recorder.event(pod, "Normal", "C", "after stop")
    stats = recorder.stats()
    assert stats.dropped[DropReason.STOPPED] == 3
    assert stats.pending == 0
    recorder.stop()  # idempotent
