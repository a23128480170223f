"""The informer over real HTTP against the API server emulator."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import BackoffManager, ReflectorConfig, Watching
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.testing import ApiServer
from informers.testing.apiserver import ApiServerError
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.wire.resources import CONFIGMAPS, PODS
from tests import helpers
from tests.helpers import new_pod

FAST = ReflectorConfig(description="pods", min_watch_timeout=30, watch_list_deadline=1.0)


def _annotated(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """``obj`` with annotation ``n`` set to ``n``: an update that changes it."""
    meta = {**obj["metadata"], "annotations": {"n": str(n)}}
    return {**obj, "metadata": meta}


def fast_backoff() -> BackoffManager:
    return BackoffManager(initial=0.01, cap=0.05)


class Recorder(helpers.Recorder):
    """Records events as ``(kind, object)`` and replays them into ``model``."""

    def added(self, obj: Any, is_in_initial_list: bool) -> tuple[Any, ...]:
        return ("add", obj)

    def updated(self, old: Any, new: Any) -> tuple[Any, ...]:
        return ("update", new)

    def deleted(self, obj: Any) -> tuple[Any, ...]:
        return ("delete", obj)


class CountingLW(HTTPListerWatcher):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lists: list[ListOptions] = []
        self.watches: list[ListOptions] = []

    def list(self, options: ListOptions) -> dict[str, Any]:
        self.lists.append(options)
        return super().list(options)

    def watch(self, options: ListOptions) -> Any:
        self.watches.append(options)
        return super().watch(options)


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def server_state(server: ApiServer) -> dict[str, str]:
    return {
        meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in server.list_objects(PODS)
    }


def cache_state(informer: SharedIndexInformer) -> dict[str, str]:
    return {
        meta_namespace_key(o): o["metadata"]["resourceVersion"] for o in informer.get_store().list()
    }


def converge(informer: SharedIndexInformer, server: ApiServer, rec: Recorder | None = None) -> None:
    """Wait until the cache equals the server's pods (RVs included)."""
    want = server_state(server)
    reflector = informer.reflector
    assert reflector is not None
    last = server.resource_version

    def caught_up(state: Any) -> bool:
        rv = state.mem.last_sync_rv
        return isinstance(state, Watching) and rv.isdigit() and int(rv) >= last

    assert reflector.wait_for(caught_up, 20), reflector.state
    assert informer.wait_idle(20)
    assert cache_state(informer) == want
    if rec is not None:
        with rec.lock:
            assert {k: v["metadata"]["resourceVersion"] for k, v in rec.model.items()} == want


def make_informer(
    client: Any, lw: HTTPListerWatcher | None = None, **config: Any
) -> SharedIndexInformer:
    return SharedIndexInformer(
        lw or HTTPListerWatcher(client, PODS),
        name="pods",
        reflector_config=replace(FAST, **config),
        backoff=fast_backoff(),
    )


def test_initial_sync_and_delivery_order(api_server: ApiServer, client: Any) -> None:
    for i in range(30):
        api_server.create(PODS, new_pod(f"p{i:02}", ns="default" if i % 2 else "kube-system"))
    rec = Recorder()
    inf = make_informer(client)
    reg = inf.add_event_handler(rec)
    try:
        inf.start()
        assert reg.wait_synced(10)
        assert len(inf.get_store().list()) == 30
        obj = api_server.get(PODS, "p01")
        for n in range(5):
            obj = api_server.update(PODS, _annotated(obj, n))
        api_server.delete(PODS, "p01")
        converge(inf, api_server, rec)
        with rec.lock:
            mine = [
                (t, o["metadata"]["resourceVersion"])
                for t, o in rec.events
                if o["metadata"]["name"] == "p01"
            ]
        assert [t for t, _ in mine] == [
            "add",
            "update",
            "update",
            "update",
            "update",
            "update",
            "delete",
        ]
        rvs = [int(rv) for _, rv in mine]
        assert rvs == sorted(rvs)
    finally:
        inf.stop()


def test_410_relist_delivers_tombstones_for_missed_deletes(
    api_server: ApiServer, client: Any
) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.create(PODS, new_pod("b"))
    rec = Recorder()
    lw = CountingLW(client, PODS)
    inf = make_informer(client, lw)
    inf.add_event_handler(rec)
    try:
        inf.start()
        assert inf.wait_synced(10)
        api_server.stall_watches(30)
        api_server.delete(PODS, "b")
        api_server.create(PODS, new_pod("c"))
        api_server.compact()
        api_server.drop_watches()
        api_server.stall_watches(0)
        converge(inf, api_server, rec)
        with rec.lock:
            deletes = [o for t, o in rec.events if t == "delete"]
        assert len(deletes) == 1
        assert isinstance(deletes[0], DeletedFinalStateUnknown)
        assert deletes[0].key == "default/b"
        assert len(lw.lists) >= 2
    finally:
        inf.stop()


class CompactingLW(CountingLW):
    """Lists at RV "" in pages, compacting the server between pages."""

    def __init__(self, server: ApiServer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.server = server

    def list(self, options: ListOptions) -> dict[str, Any]:
        if options.resource_version == "0":
            options = replace(options, resource_version="")
        if options.continue_token:
            self.server.create(PODS, new_pod(f"late-{len(self.lists)}"))
            self.server.compact()
        return super().list(options)


def test_expired_continue_falls_back_to_full_list(api_server: ApiServer, client: Any) -> None:
    for i in range(7):
        api_server.create(PODS, new_pod(f"p{i}"))
    lw = CompactingLW(api_server, client, PODS)
    inf = make_informer(client, lw, page_size=3)
    try:
        inf.start()
        assert inf.wait_synced(10)
        converge(inf, api_server)
        assert lw.lists[1].continue_token
        assert lw.lists[2] == ListOptions()  # the full-list fallback
    finally:
        inf.stop()


def test_relist_paginated_by_a_tweak_keeps_every_object(api_server: ApiServer, client: Any) -> None:
    # The reflector relists at its last RV without a limit; a tweak that sets
    # one makes the server answer in pages, and every page must be fetched.
    for i in range(5):
        api_server.create(PODS, new_pod(f"p{i}"))
    rec = Recorder()
    lw = CountingLW(client, PODS, tweak_list_options=lambda o: replace(o, limit=2))
    inf = make_informer(client, lw)
    inf.add_event_handler(rec)
    try:
        inf.start()
        assert inf.wait_synced(10)
        api_server.fail_next(1, 500)  # the next request (watch or list) fails: relist
        api_server.drop_watches()
        reflector = inf.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: len(lw.lists) >= 2 and isinstance(s, Watching), 10)
        converge(inf, api_server, rec)
        assert lw.lists[1].resource_version not in (None, "", "0"), lw.lists
        with rec.lock:
            assert not [o for t, o in rec.events if t == "delete"]
    finally:
        inf.stop()


def test_bookmarks_advance_the_resource_version() -> None:
    with ApiServer(bookmark_interval=0.05) as server:
        client = server.api_client()
        inf = make_informer(client, HTTPListerWatcher(client, PODS, "default"))
        try:
            inf.start()
            assert inf.wait_synced(10)
            cm = server.create(CONFIGMAPS, {"metadata": {"name": "x", "namespace": "default"}})
            target = int(cm["metadata"]["resourceVersion"])
            reflector = inf.reflector
            assert reflector is not None
            assert reflector.wait_for(lambda s: int(s.mem.last_sync_rv or 0) >= target, 10)
        finally:
            inf.stop()
            client.close()


@pytest.mark.parametrize("mode", ["on", "off", "no-end-bookmark"])
def test_watch_list_modes(api_server: ApiServer, client: Any, mode: str) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.watch_list_mode = mode
    lw = CountingLW(client, PODS)
    inf = make_informer(client, lw, use_watch_list=True, watch_list_deadline=0.5)
    try:
        inf.start()
        assert inf.wait_synced(10)
        api_server.create(PODS, new_pod("b"))
        converge(inf, api_server)
        assert lw.watches[0].send_initial_events
        if mode == "on":
            assert lw.lists == []
        else:
            assert len(lw.lists) == 1
    finally:
        inf.stop()


def test_429_rewatches_after_retry_after_without_relist(api_server: ApiServer, client: Any) -> None:
    errors: list[BaseException] = []
    lw = CountingLW(client, PODS)
    inf = make_informer(client, lw)
    inf.set_watch_error_handler(lambda r, e: errors.append(e))
    try:
        inf.start()
        assert inf.wait_synced(10)
        reflector = inf.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: isinstance(s, Watching), 10)
        api_server.create(PODS, new_pod("w"))
        converge(inf, api_server)  # the watch has had an event: not a "very short" one
        api_server.fail_next(1, 429, retry_after=1)
        api_server.drop_watches()
        api_server.create(PODS, new_pod("x"))
        converge(inf, api_server)
        assert len(lw.lists) == 1
        assert len(lw.watches) >= 3
        # Reported to the hook (it sees every list/watch error), yet no relist.
        assert [type(e).__name__ for e in errors] == ["TooManyRequestsError"]
        assert errors[0].retry_after == 1
    finally:
        inf.stop()


@pytest.mark.parametrize("mid_line", [False, True])
def test_dropped_streams_converge(api_server: ApiServer, client: Any, mid_line: bool) -> None:
    rec = Recorder()
    inf = make_informer(client)
    inf.add_event_handler(rec)
    try:
        inf.start()
        assert inf.wait_synced(10)
        for i in range(3):
            api_server.create(PODS, new_pod(f"d{i}"))
            api_server.drop_watches(mid_line=mid_line)
        converge(inf, api_server, rec)
    finally:
        inf.stop()


def test_stalled_stream_is_abandoned_after_the_read_timeout(
    api_server: ApiServer, client: Any
) -> None:
    lw = CountingLW(client, PODS, read_timeout_margin=0.3)
    inf = make_informer(client, lw, min_watch_timeout=1)
    try:
        inf.start()
        assert inf.wait_synced(10)
        api_server.stall_watches(60)
        api_server.create(PODS, new_pod("s"))
        reflector = inf.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: len(lw.watches) >= 2, 10)
        api_server.stall_watches(0)
        converge(inf, api_server)
    finally:
        api_server.stall_watches(0)
        inf.stop()


def test_restart_of_the_server(api_server: ApiServer, client: Any) -> None:
    inf = make_informer(client)
    try:
        inf.start()
        assert inf.wait_synced(10)
        api_server.restart()
        api_server.create(PODS, new_pod("after-restart"))
        converge(inf, api_server)
    finally:
        inf.stop()


def test_replaying_server_does_not_move_cache_back(api_server: ApiServer, client: Any) -> None:
    created = api_server.create(PODS, new_pod("r"))
    inf = make_informer(client)
    try:
        inf.start()
        assert inf.wait_synced(10)
        obj = created
        for n in range(3):
            obj = api_server.update(PODS, _annotated(obj, n))
        converge(inf, api_server)
        api_server.replay_events_from(int(created["metadata"]["resourceVersion"]))
        api_server.drop_watches()
        api_server.create(PODS, new_pod("r2"))
        converge(inf, api_server)
    finally:
        inf.stop()


# ---------------------------------------------------------------- convergence property

_NAMES = st.sampled_from(["a", "b", "c", "d"])
_NAMESPACES = st.sampled_from(["default", "kube-system"])
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), _NAMES, _NAMESPACES, st.integers(0, 3)),
        st.tuples(st.just("delete"), _NAMES, _NAMESPACES),
        st.tuples(st.just("compact")),
        st.tuples(st.just("drop"), st.booleans()),
        st.tuples(st.just("fail"), st.sampled_from([500, 429])),
        st.tuples(st.just("restart")),
    ),
    max_size=12,
)


def _apply(server: ApiServer, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "put":
        _, name, ns, version = op
        try:
            current = server.get(PODS, name, ns)
        except ApiServerError:
            server.create(PODS, new_pod(name, ns, v=str(version)))
        else:
            meta = {**current["metadata"], "labels": {"v": str(version)}}
            server.update(PODS, {**current, "metadata": meta})
    elif kind == "delete":
        with contextlib.suppress(ApiServerError):
            server.delete(PODS, op[1], op[2])
    elif kind == "compact":
        server.compact()
    elif kind == "drop":
        server.drop_watches(mid_line=op[1])
    elif kind == "fail":
        server.fail_next(1, op[1], retry_after=0 if op[1] == 429 else None)
    else:
        server.restart()


def test_informer_converges_to_server_state_after_any_writes_and_faults() -> None:
    """Any sequence of writes interleaved with faults: once the server is
    quiet, the cache equals the server's state and each handler's events
    replay to exactly that state."""
    with ApiServer(bookmark_interval=0.05) as server:
        client = server.api_client()

        # One server for every example (cheap); each example runs a new informer.
        @settings(deadline=None, suppress_health_check=list(HealthCheck))
        @given(before=_OPS, during=_OPS)
        def check(before: list[tuple[Any, ...]], during: list[tuple[Any, ...]]) -> None:
            for op in before:
                _apply(server, op)
            server.clear_faults()
            rec = Recorder()
            inf = make_informer(client)
            inf.add_event_handler(rec)
            try:
                inf.start()
                for op in during:
                    _apply(server, op)
                server.clear_faults()
                converge(inf, server, rec)
            finally:
                inf.stop()

        try:
            check()
        finally:
            client.close()
