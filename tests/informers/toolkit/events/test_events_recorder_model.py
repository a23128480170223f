"""The EventRecorder's write path against a model, with hypothesis: any
interleaving of events, transient server errors, lost answers and Events
expiring on the server ends, after flush(), with every live Event carrying
the count of its series. The server is an in-memory Transport (the
emulator's behaviour for Events, with faults on demand)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from informers.errors import AlreadyExistsError, ApiError, NotFoundError
from informers.rest.transport import Response, Transport
from informers.toolkit.events import CORE_V1, EVENTS_V1, EventRecorder


def _merge(target: dict[str, Any], patch: Mapping[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


class EventServer:
    """Events by (namespace, name), POST and merge PATCH. ``fail(n)`` makes
    the next n requests answer 503; ``lose(n)`` applies the next n writes
    but answers 503 (the answer was lost); ``hold()`` keeps the next request
    waiting (the recorder's worker with it) until ``release()``, so that
    occurrences pile up behind a request in flight. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: dict[tuple[str, str], dict[str, Any]] = {}  # guarded by _lock
        self._fail = 0  # guarded by _lock
        self._lose = 0  # guarded by _lock
        self._hold: threading.Event | None = None  # guarded by _lock: the next request waits on it
        self._arrived = threading.Event()  # set when a request waits on _hold

    def hold(self) -> None:
        with self._lock:
            if self._hold is None:
                self._hold = threading.Event()
                self._arrived = threading.Event()

    def wait_held(self) -> None:
        """When holding, wait until a request is held (the worker is busy)."""
        with self._lock:
            arrived = self._arrived if self._hold is not None else None
        if arrived is not None:
            assert arrived.wait(10)

    def release(self) -> None:
        with self._lock:
            hold, self._hold = self._hold, None
        if hold is not None:
            hold.set()

    def fail(self, n: int) -> None:
        with self._lock:
            self._fail += n

    def lose(self, n: int) -> None:
        with self._lock:
            self._lose += n

    def expire(self, name: str) -> None:
        with self._lock:
            self.events.pop(("default", name), None)

    def snapshot(self) -> dict[tuple[str, str], dict[str, Any]]:
        with self._lock:
            return json.loads(json.dumps({"|".join(k): v for k, v in self.events.items()}))  # type: ignore[no-any-return]

    def request(self, method: str, path: str, *, body: object = None, **_: object) -> Response:
        with self._lock:
            hold, arrived = self._hold, self._arrived
        if hold is not None:
            arrived.set()
            hold.wait(30)
        with self._lock:
            if self._fail:
                self._fail -= 1
                raise ApiError(503, "ServiceUnavailable", "try later")
            lost = self._lose > 0
            self._lose -= lost
            parts = path.strip("/").split("/")
            namespace = parts[parts.index("namespaces") + 1]
            assert isinstance(body, dict)
            if method == "POST":
                key = (namespace, body["metadata"]["name"])
                if key in self.events:
                    raise AlreadyExistsError(409, "AlreadyExists", "exists")
                self.events[key] = json.loads(json.dumps(body))
            else:
                assert method == "PATCH"
                key = (namespace, parts[-1])
                if key not in self.events:
                    raise NotFoundError(404, "NotFound", "no such event")
                _merge(self.events[key], body)
            if lost:
                raise ApiError(503, "ServiceUnavailable", "the answer was lost")
            return Response(201, {}, b"{}")

    def stream(self, *args: object, **kwargs: object) -> Any:
        raise NotImplementedError


def _count(event: dict[str, Any], api_version: str) -> int:
    if api_version == CORE_V1:
        return int(event["count"])
    return int(event.get("series", {}).get("count", 1))


OBJECTS = st.sampled_from(["a", "b", "c"])
REASONS = st.sampled_from(["Synced", "Failed"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("event"), OBJECTS, REASONS),
        st.tuples(st.just("fail"), st.integers(1, 3), st.just("")),
        st.tuples(st.just("lose"), st.integers(1, 2), st.just("")),
        st.tuples(st.just("expire"), OBJECTS, REASONS),
        st.tuples(st.just("flush"), st.just(""), st.just("")),
        st.tuples(st.just("hold"), st.just(""), st.just("")),
        st.tuples(st.just("release"), st.just(""), st.just("")),
    ),
    max_size=40,
)


def test_the_fake_is_a_transport() -> None:
    assert isinstance(EventServer(), Transport)


@pytest.mark.parametrize("api_version", [CORE_V1, EVENTS_V1])
@settings(max_examples=40)
@given(ops=OPS)
# the answer to a create is lost while the next occurrence waits: the retry
# finds the Event created and must still bring its count up
@example(
    ops=[
        ("hold", "", ""),
        ("lose", 1, ""),
        ("event", "a", "Synced"),
        ("event", "a", "Synced"),
        ("release", "", ""),
    ]
)
def test_live_events_carry_their_series_count(
    api_version: str, ops: list[tuple[str, Any, str]]
) -> None:
    server = EventServer()
    occurrences: dict[tuple[str, str], int] = {}
    names: dict[tuple[str, str], str] = {}
    live_model: set[tuple[str, str]] = set()  # series with an Event on the server
    with EventRecorder(
        server, "ctl", api_version=api_version, retry_delay=0.0, max_tries=1000
    ) as recorder:
        for op, arg, reason in ops:
            if op == "event":
                obj = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": arg, "namespace": "default", "uid": arg},
                }
                recorder.event(obj, "Normal", reason, f"{arg} {reason}")
                server.wait_held()  # later occurrences find this one in flight
                occurrences[arg, reason] = occurrences.get((arg, reason), 0) + 1
                live_model.add((arg, reason))
            elif op == "fail":
                server.fail(arg)
            elif op == "lose":
                server.lose(arg)
            elif op == "hold":
                server.hold()
            elif op == "release":
                server.release()
            elif op == "flush":
                server.release()
                assert recorder.flush(10)
            else:
                server.release()
                assert recorder.flush(10)  # expire only what was written
                for event in server.snapshot().values():
                    field = "involvedObject" if api_version == CORE_V1 else "regarding"
                    if (event[field]["name"], event["reason"]) == (arg, reason):
                        server.expire(event["metadata"]["name"])
                live_model.discard((arg, reason))
        server.release()
        assert recorder.flush(10)
        stats = recorder.stats()
    assert stats.pending == 0
    assert sum(stats.dropped.values()) == 0
    field = "involvedObject" if api_version == CORE_V1 else "regarding"
    for event in server.snapshot().values():
        series = (event[field]["name"], event["reason"])
        assert _count(event, api_version) == occurrences[series]
        assert names.setdefault(series, event["metadata"]["name"]) == event["metadata"]["name"]
    # a series is live when it occurred since it last expired
    live = {(e[field]["name"], e["reason"]) for e in server.snapshot().values()}
    assert live == live_model
