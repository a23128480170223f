"""Property tests: random create/update/delete sequences, then for random RVs a
list at that RV (Exact) equals the model's state at that RV, and a watch from
that RV yields exactly the model's later events.

The model check drives the storage layer directly (cheap, 200 examples in CI);
a smaller HTTP-level sample goes through the real client against one server
per module (one namespace per example).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_helpers import RawWatch
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client

from informers.testing import ApiServer
from informers.testing.apiserver._filtering import build_predicate
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.wire.resources import CONFIGMAPS

NAMES = ["a", "b", "c", "d"]
ops_strategy = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete"]), st.sampled_from(NAMES), st.integers(0, 9)
    ),
    min_size=1,
    max_size=12,
)


class Model:
    """Expected state and events of one namespace's ConfigMaps."""

    def __init__(self, start_rv: int) -> None:
        self.state: dict[str, str] = {}
        self.history: list[tuple[int, dict[str, str]]] = [(start_rv, {})]
        self.events: list[tuple[int, str, str, str]] = []  # rv, type, name, value

    def expect(self, op: str, name: str) -> int | None:
        """The HTTP error the op must fail with, or None."""
        if op == "create":
            return 409 if name in self.state else None
        return None if name in self.state else 404

    def apply(self, op: str, name: str, value: str, rv: int) -> None:
        if op == "delete":
            value = self.state.pop(name)
            self.events.append((rv, "DELETED", name, value))
        else:
            self.events.append((rv, "ADDED" if op == "create" else "MODIFIED", name, value))
            self.state[name] = value
        self.history.append((rv, dict(self.state)))

    def state_at(self, rv: int) -> dict[str, str]:
        current: dict[str, str] = {}
        for at, state in self.history:
            if at <= rv:
                current = state
        return current


def _storage_run(storage: Storage, ops: list[tuple[str, str, int]]) -> Model:
    model = Model(storage.resource_version)
    for op, name, number in ops:
        value = str(number)
        error = model.expect(op, name)
        try:
            if op == "create":
                stored = storage.create(
                    CONFIGMAPS, {"metadata": {"name": name}, "data": {"v": value}}, "default"
                )
            elif op == "update":
                # A changed value per update, so no update is a no-op.
                value = f"{value}-{len(model.events)}"
                body = {"metadata": {"name": name}, "data": {"v": value}}
                stored = storage.update(CONFIGMAPS, body, "default")
            else:
                stored, _ = storage.delete(CONFIGMAPS, name, "default")
        except StatusError as exc:
            failed = exc.code
        else:
            failed = None
        assert failed == error, (op, name)
        if failed is not None:
            continue
        model.apply(op, name, value, stored.rv)
    return model


def _listed(storage: Storage, rv: int, limit: int) -> dict[str, str]:
    out: dict[str, str] = {}
    start = None
    while True:
        page = storage.list_page(
            CONFIGMAPS, "default", exact_rv=rv, limit=limit, start_after=start, predicate=None
        )
        assert page.rv == rv
        for stored in page.items:
            out[stored.obj["metadata"]["name"]] = stored.obj["data"]["v"]
        if page.continue_token is None:
            return out
        start = page.items[-1].key


@given(ops=ops_strategy, data=st.data())
def test_storage_list_and_watch_at_any_rv_match_the_model(
    ops: list[tuple[str, str, int]], data: st.DataObject
) -> None:
    storage = Storage(history_window=data.draw(st.integers(1, 20), label="window"))
    model = _storage_run(storage, ops)
    first, last = model.history[0][0], storage.resource_version
    if data.draw(st.booleans(), label="compact"):
        storage.compact(data.draw(st.integers(first, last), label="compact_rv"))
    floor = max(storage.compacted_rv, 0)
    kind_events = [e for e in model.events]
    window_floor = 0
    if len(kind_events) > storage.history_window:
        window_floor = kind_events[-storage.history_window - 1][0]
    floor = max(floor, window_floor)
    for _ in range(3):
        rv = data.draw(st.integers(first, last), label="rv")
        limit = data.draw(st.integers(0, 3), label="limit")
        if rv < floor:
            with pytest.raises(StatusError) as err:
                _listed(storage, rv, limit)
            assert err.value.code == 410
            with pytest.raises(StatusError):
                storage.open_watch(
                    CONFIGMAPS, "default", None, from_rv=rv, initial=False, capacity=100
                )
            continue
        assert _listed(storage, rv, limit) == model.state_at(rv)
        watcher, first_events, _ = storage.open_watch(
            CONFIGMAPS, "default", None, from_rv=rv, initial=False, capacity=100
        )
        storage.close_watch(watcher)
        got = [(s.rv, t, s.obj["metadata"]["name"], s.obj["data"]["v"]) for t, s in first_events]
        assert got == [e for e in model.events if e[0] > rv]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ApiServer]:
    with ApiServer() as server:
        yield server


def _http_run(
    core: client.CoreV1Api, ns: str, ops: list[tuple[str, str, int]], start: int
) -> Model:
    model = Model(start)
    for op, name, number in ops:
        value = f"{number}-{len(model.events)}"
        error = model.expect(op, name)
        body: dict[str, Any] = {"metadata": {"name": name}, "data": {"v": value}}
        try:
            if op == "create":
                rv = core.create_namespaced_config_map(ns, body).metadata.resource_version
            elif op == "update":
                rv = core.replace_namespaced_config_map(name, ns, body).metadata.resource_version
            else:
                response = core.delete_namespaced_config_map(name, ns, _preload_content=False)
                rv = json.loads(response.data)["details"]["name"] and None
                rv = core.list_namespaced_config_map(ns, limit=1).metadata.resource_version
        except client.ApiException as exc:
            failed = exc.status
        else:
            failed = None
        assert failed == error, (op, name)
        if failed is not None:
            continue
        model.apply(op, name, value, int(rv))
    return model


@settings(max_examples=25)
@given(ops=ops_strategy, data=st.data())
def test_http_list_exact_and_watch_at_random_rvs_match_the_model(
    shared_server: ApiServer, ops: list[tuple[str, str, int]], data: st.DataObject
) -> None:
    ns = f"p-{uuid.uuid4().hex[:10]}"
    shared_server.create("namespaces", {"metadata": {"name": ns}})
    with shared_server.api_client() as api:
        core = client.CoreV1Api(api)
        model = _http_run(core, ns, ops, shared_server.resource_version)
        first, last = model.history[0][0], shared_server.resource_version
        # Fixed bounds: the server's RVs differ between runs of one example.
        rv = first + data.draw(st.integers(0, 40), label="rv offset") % (last - first + 1)
        listed = core.list_namespaced_config_map(
            ns, resource_version=str(rv), resource_version_match="Exact"
        )
        assert {c.metadata.name: c.data["v"] for c in listed.items} == model.state_at(rv)
        response = core.list_namespaced_config_map(
            ns, watch=True, resource_version=str(rv), timeout_seconds=10, _preload_content=False
        )
        with RawWatch(response) as stream:
            core.create_namespaced_config_map(ns, {"metadata": {"name": "zz-end"}})
            got = []
            while (event := stream.next()) is not None:
                obj = event["object"]
                if obj["metadata"]["name"] == "zz-end":
                    break
                got.append(
                    (
                        int(obj["metadata"]["resourceVersion"]),
                        event["type"],
                        obj["metadata"]["name"],
                        obj["data"]["v"],
                    )
                )
        assert got == [e for e in model.events if e[0] > rv]


label_ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete"]),
        st.sampled_from(NAMES),
        st.sampled_from(["on", "off"]),
    ),
    min_size=1,
    max_size=12,
)


def _watch_expectation(
    events: list[tuple[int, str, str, str | None, str | None]], after: int
) -> list[tuple[int, str, str]]:
    """What a watch with ``x=on`` from ``after`` must send: selector
    transitions become ADDED/DELETED."""
    out = []
    for rv, kind, name, old, new in events:
        if rv <= after:
            continue
        was, now = old == "on", new == "on"
        if kind == "ADDED" and now:
            out.append((rv, "ADDED", name))
        elif kind == "DELETED" and was:
            out.append((rv, "DELETED", name))
        elif kind == "MODIFIED":
            if was and now:
                out.append((rv, "MODIFIED", name))
            elif now:
                out.append((rv, "ADDED", name))
            elif was:
                out.append((rv, "DELETED", name))
    return out


@given(ops=label_ops, data=st.data())
def test_storage_selector_watch_sends_transitions(
    ops: list[tuple[str, str, str]], data: st.DataObject
) -> None:
    storage = Storage()
    predicate = build_predicate(CONFIGMAPS, "x=on", None)
    first = storage.resource_version
    labels: dict[str, str] = {}
    events: list[tuple[int, str, str, str | None, str | None]] = []
    for op, name, value in ops:
        body = {"metadata": {"name": name, "labels": {"x": value}}}
        if op == "create" and name not in labels:
            stored = storage.create(CONFIGMAPS, body, "default")
            events.append((stored.rv, "ADDED", name, None, value))
            labels[name] = value
        elif op == "update" and name in labels and labels[name] != value:
            stored = storage.update(CONFIGMAPS, body, "default")
            events.append((stored.rv, "MODIFIED", name, labels[name], value))
            labels[name] = value
        elif op == "delete" and name in labels:
            stored, _ = storage.delete(CONFIGMAPS, name, "default")
            events.append((stored.rv, "DELETED", name, labels.pop(name), None))
    after = data.draw(st.integers(first, storage.resource_version), label="rv")
    watcher, replayed, _ = storage.open_watch(
        CONFIGMAPS, "default", predicate, from_rv=after, initial=False, capacity=100
    )
    storage.close_watch(watcher)
    got = [(s.rv, t, s.obj["metadata"]["name"]) for t, s in replayed]
    assert got == _watch_expectation(events, after)
    # A DELETED for an object leaving the selection carries the change's RV.
    for _, stored in replayed:
        assert stored.obj["metadata"]["resourceVersion"] == str(stored.rv)
    # The initial events of a new watch are exactly the matching objects, in order.
    watcher, initial, _ = storage.open_watch(
        CONFIGMAPS, "default", predicate, from_rv=None, initial=True, capacity=100
    )
    storage.close_watch(watcher)
    assert [s.obj["metadata"]["name"] for _, s in initial] == sorted(
        n for n, v in labels.items() if v == "on"
    )
