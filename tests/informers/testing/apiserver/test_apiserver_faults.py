"""Fault injection of the emulator, observed through the real kubernetes client."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
import urllib3
from apiserver_helpers import RawWatch, names
from kubernetes import client

from informers.testing import ApiServer
from tests.helpers import configmap


def _rv(obj: object) -> int:
    return int(obj.metadata.resource_version)  # type: ignore[attr-defined]


def test_compact_without_argument_compacts_to_current_rv(server: ApiServer) -> None:
    assert server.compact() == server.resource_version


def test_drop_watches_cuts_streams_without_clean_end(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(core.list_namespaced_config_map, ns)
    assert names(stream.take(1)) == [("ADDED", "a")]
    server.drop_watches()
    assert stream.next() is None
    assert stream.broken
    assert not stream.ended


def test_drop_watches_mid_line_leaves_a_partial_line(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    stream = raw_watch(core.list_namespaced_config_map, ns)
    core.create_namespaced_config_map(ns, configmap("a"))
    assert names(stream.take(1)) == [("ADDED", "a")]
    server.drop_watches(mid_line=True)
    assert stream.next() is None
    assert stream.broken
    assert stream.partial.startswith(b'{"type":')


def test_stall_watches_holds_events_back(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version="1")
    server.stall_watches(0.5)
    started = time.monotonic()
    core.create_namespaced_config_map(ns, configmap("a"))
    events = stream.take(1)
    assert time.monotonic() - started >= 0.4
    assert names(events)[-1] == ("ADDED", "a")


def test_slow_consumer_overflowing_its_buffer_is_disconnected(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.watch_buffer_size = 2
    stream = raw_watch(
        core.list_namespaced_config_map, ns, resource_version=str(server.resource_version)
    )
    server.stall_watches(30)
    for name in "abcde":
        core.create_namespaced_config_map(ns, configmap(name))
    assert stream.rest() == []  # the buffered events are dropped with the watch
    assert stream.ended  # a clean end: the client relists or rewatches
    server.stall_watches(0)


@pytest.mark.parametrize("plain", [False, True], ids=["json", "text-plain"])
def test_fail_next_429_with_retry_after(server: ApiServer, ns: str, plain: bool) -> None:
    config = server.configuration()
    config.retries = False  # urllib3 would otherwise honour Retry-After itself
    with client.ApiClient(config) as api:
        core = client.CoreV1Api(api)
        server.fail_next(1, 429, retry_after=3, plain_text=plain)
        with pytest.raises(client.ApiException) as err:
            core.list_namespaced_config_map(ns)
        assert err.value.status == 429
        assert err.value.headers["Retry-After"] == "3"
        body = err.value.body.decode() if isinstance(err.value.body, bytes) else err.value.body
        if plain:
            assert err.value.headers["Content-Type"] == "text/plain; charset=utf-8"
            assert body == "Too many requests, please try again later.\n"
        else:
            status = json.loads(body)
            assert status["reason"] == "TooManyRequests"
            assert status["code"] == 429
            assert status["details"] == {"retryAfterSeconds": 3}
        core.list_namespaced_config_map(ns)  # only the next request failed


def test_fail_next_counts_and_path_prefix(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    server.fail_next(2, 500, path_prefix="/api/v1/namespaces/" + ns + "/pods")
    core.list_namespaced_config_map(ns)  # another path: not affected
    for _ in range(2):
        with pytest.raises(client.ApiException) as err:
            core.list_namespaced_pod(ns)
        assert err.value.status == 500
    core.list_namespaced_pod(ns)


def test_replay_events_from_resends_older_events(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    core.create_namespaced_config_map(ns, configmap("b"))
    c = core.create_namespaced_config_map(ns, configmap("c"))
    server.replay_events_from(_rv(a))
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(c)))
    assert names(stream.take(2)) == [("ADDED", "b"), ("ADDED", "c")]
    stream.close()
    normal = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(c)))
    core.create_namespaced_config_map(ns, configmap("d"))
    assert names(normal.take(1)) == [("ADDED", "d")]


def test_watch_list_mode_off_rejects_send_initial_events(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.watch_list_mode = "off"
    with pytest.raises(client.ApiException) as err:
        raw_watch(
            core.list_namespaced_config_map,
            ns,
            send_initial_events=True,
            resource_version_match="NotOlderThan",
        )
    assert err.value.status == 422


def test_watch_list_mode_no_end_bookmark_never_sends_it(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.watch_list_mode = "no-end-bookmark"
    core.create_namespaced_config_map(ns, configmap("a"))
    events = raw_watch(
        core.list_namespaced_config_map,
        ns,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        allow_watch_bookmarks=True,
        timeout_seconds=1,
    ).rest()
    assert names(events)[0] == ("ADDED", "a")
    assert all("annotations" not in e["object"]["metadata"] for e in events[1:])


def test_watch_list_mode_rejects_unknown_values(server: ApiServer) -> None:
    with pytest.raises(ValueError, match="watch_list_mode"):
        server.watch_list_mode = "maybe"


def test_restart_ends_streams_and_keeps_state(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version="1")
    server.restart()
    stream.rest()
    assert stream.ended or stream.broken
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns).items] == ["a"]


def test_stop_then_start_serves_the_same_state(ns: str, server: ApiServer) -> None:
    server.create("configmaps", configmap("a"), ns)
    port = server.port
    server.stop()
    server.start()
    assert server.port == port
    http = urllib3.PoolManager()
    try:
        response = http.request("GET", f"{server.url}/api/v1/namespaces/{ns}/configmaps/a")
        assert response.status == 200
    finally:
        http.clear()
