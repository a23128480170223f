"""informers.toolkit.events.sink: the Event bodies and patches of both
APIs, and the discovery of events.k8s.io/v1 against the emulator."""

from __future__ import annotations

from informers.rest.transport import ApiClientTransport
from informers.testing import ApiServer
from informers.toolkit.events import (
    CORE_V1,
    EVENTS_V1,
    Correlation,
    Occurrence,
    discover_events_api,
)
from informers.toolkit.events.sink import (
    event_body,
    event_path,
    series_patch,
)
from informers.wire.resources import Resource

EVENTS_K8S_IO = Resource("events.k8s.io", "v1", "events", "Event")
T = 1_790_000_000.25  # 2026-09-21T14:13:20.25Z
REF = {"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "shop", "uid": "u"}


def _correlation(count: int = 1, message: str = "started", **occ: object) -> Correlation:
    occurrence = Occurrence(REF, "Normal", "Started", message, "Start", "ctl", "ctl-1", T, **occ)  # type: ignore[arg-type]
    return Correlation(("k",), "web.1", count, T, T + 60, occurrence)


def test_paths() -> None:
    assert event_path(CORE_V1, "ns") == "/api/v1/namespaces/ns/events"
    assert event_path(EVENTS_V1, "ns", "e") == "/apis/events.k8s.io/v1/namespaces/ns/events/e"


def test_core_v1_body_and_patch() -> None:
    body = event_body(_correlation(3), CORE_V1, host="node-1")
    assert body == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "shop"},
        "involvedObject": REF,
        "reason": "Started",
        "message": "started",
        "type": "Normal",
        "action": "Start",
        "source": {"component": "ctl", "host": "node-1"},
        "reportingComponent": "ctl",
        "reportingInstance": "ctl-1",
        "count": 3,
        "firstTimestamp": "2026-09-21T14:13:20Z",
        "lastTimestamp": "2026-09-21T14:14:20Z",
    }
    assert series_patch(_correlation(3, "again"), CORE_V1) == {
        "count": 3,
        "lastTimestamp": "2026-09-21T14:14:20Z",
        "message": "again",
    }


def test_events_v1_body_series_and_related() -> None:
    related = {"apiVersion": "v1", "kind": "Node", "name": "n1"}
    first = event_body(_correlation(1, related=related), EVENTS_V1)
    assert first == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "shop"},
        "eventTime": "2026-09-21T14:13:20.250000Z",
        "reportingController": "ctl",
        "reportingInstance": "ctl-1",
        "action": "Start",
        "reason": "Started",
        "regarding": REF,
        "related": related,
        "note": "started",
        "type": "Normal",
    }
    series = {"count": 2, "lastObservedTime": "2026-09-21T14:14:20.250000Z"}
    assert event_body(_correlation(2), EVENTS_V1)["series"] == series
    assert series_patch(_correlation(2), EVENTS_V1) == {"series": series}


def test_events_v1_note_is_cut_to_one_kib_on_a_character_boundary() -> None:
    body = event_body(_correlation(message="é" * 600), EVENTS_V1)
    assert len(body["note"].encode()) <= 1024
    assert body["note"] == "é" * 512
    assert event_body(_correlation(message="é" * 600), CORE_V1)["message"] == "é" * 600


def test_discovery_against_the_emulator() -> None:
    with ApiServer() as server:
        api = server.api_client()
        try:
            transport = ApiClientTransport(api)
            # The emulator serves events.k8s.io/v1, as a cluster does.
            assert discover_events_api(transport, 5) == EVENTS_V1
        finally:
            api.close()
