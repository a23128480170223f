"""WATCH rules of SEMANTICS.md Part A, through the real kubernetes client."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from apiserver_helpers import RawWatch, names
from kubernetes import client, watch

from informers.testing import ApiServer
from tests.helpers import configmap


def _rv(obj: object) -> int:
    return int(obj.metadata.resource_version)  # type: ignore[attr-defined]


def test_watch_headers_are_flushed_before_the_first_event(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    started = time.monotonic()
    stream = raw_watch(
        core.list_namespaced_config_map, ns, resource_version=str(1), timeout_seconds=5
    )
    assert stream.status == 200
    assert stream.headers["Transfer-Encoding"] == "chunked"
    assert time.monotonic() - started < 2


def test_watch_from_rv_is_strictly_after(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    core.create_namespaced_config_map(ns, configmap("b"))
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(a)))
    assert names(stream.take(1)) == [("ADDED", "b")]


def test_watch_rv_unset_sends_synthetic_added_with_own_rvs(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    b = core.create_namespaced_config_map(ns, configmap("b"))
    stream = raw_watch(core.list_namespaced_config_map, ns)
    events = stream.take(2)
    assert names(events) == [("ADDED", "a"), ("ADDED", "b")]
    assert [int(e["object"]["metadata"]["resourceVersion"]) for e in events] == [_rv(a), _rv(b)]
    core.create_namespaced_config_map(ns, configmap("c"))
    assert names(stream.take(1)) == [("ADDED", "c")]


def test_watch_rv_zero_sends_synthetic_added(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version="0")
    assert names(stream.take(1)) == [("ADDED", "a")]


def test_watch_events_carry_kind_and_api_version(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    (event,) = raw_watch(core.list_namespaced_config_map, ns).take(1)
    assert event["object"]["kind"] == "ConfigMap"
    assert event["object"]["apiVersion"] == "v1"


def test_watch_modified_and_deleted_with_deletion_rv(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(a)))
    modified = core.patch_namespaced_config_map("a", ns, {"data": {"k": "v"}})
    deleted = json.loads(core.delete_namespaced_config_map("a", ns, _preload_content=False).data)
    events = stream.take(2)
    assert names(events) == [("MODIFIED", "a"), ("DELETED", "a")]
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) == _rv(modified)
    deletion_rv = int(events[1]["object"]["metadata"]["resourceVersion"])
    assert deletion_rv > _rv(modified)
    assert events[1]["object"]["data"] == {"k": "v"}  # the last state
    assert deleted["status"] == "Success"


def test_watch_too_old_sends_error_event_410(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    core.create_namespaced_config_map(ns, configmap("b"))
    compacted = server.compact()
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(a)))
    assert stream.status == 200
    events = stream.rest()
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status"
    assert status["code"] == 410
    assert status["reason"] == "Expired"
    assert status["message"] == f"too old resource version: {_rv(a)} ({compacted})"


def test_watch_too_old_raises_410_in_the_official_watch(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    a = core.create_namespaced_config_map(ns, configmap("a"))
    core.create_namespaced_config_map(ns, configmap("b"))
    server.compact()
    w = watch.Watch()
    with pytest.raises(client.ApiException) as err:
        for _ in w.stream(
            core.list_namespaced_config_map, ns, resource_version=str(_rv(a)), timeout_seconds=2
        ):
            pass
    assert err.value.status == 410


def test_watch_history_window_expires_old_rvs(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.history_window = 2
    a = core.create_namespaced_config_map(ns, configmap("a"))
    for name in "bcd":
        core.create_namespaced_config_map(ns, configmap(name))
    (event,) = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(_rv(a))).rest()
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410


def test_watch_selector_transitions_are_added_and_deleted(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    a = core.create_namespaced_config_map(ns, {"metadata": {"name": "a", "labels": {"x": "no"}}})
    stream = raw_watch(
        core.list_namespaced_config_map, ns, resource_version=str(_rv(a)), label_selector="x=yes"
    )
    core.patch_namespaced_config_map("a", ns, {"metadata": {"labels": {"x": "yes"}}})
    core.patch_namespaced_config_map("a", ns, {"data": {"k": "v"}})
    gone = core.patch_namespaced_config_map("a", ns, {"metadata": {"labels": {"x": "no"}}})
    events = stream.take(3)
    assert names(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) == _rv(gone)


def test_watch_bookmarks_are_periodic(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.bookmark_interval = 0.05
    rv = server.resource_version
    stream = raw_watch(
        core.list_namespaced_config_map, ns, resource_version=str(rv), allow_watch_bookmarks=True
    )
    events = stream.take(2)
    assert [e["type"] for e in events] == ["BOOKMARK", "BOOKMARK"]
    obj = events[0]["object"]
    assert obj["kind"] == "ConfigMap"
    assert obj["metadata"] == {"resourceVersion": str(rv)}


def test_watch_bookmark_sent_shortly_before_timeout(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    rv = server.resource_version
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        resource_version=str(rv),
        allow_watch_bookmarks=True,
        timeout_seconds=1,
    )
    events = stream.rest()
    assert [e["type"] for e in events] == ["BOOKMARK"]


def test_watch_no_bookmarks_unless_asked(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    server.bookmark_interval = 0.05
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        resource_version=str(server.resource_version),
        timeout_seconds=1,
    )
    assert stream.rest() == []


def test_watch_timeout_seconds_ends_stream_cleanly(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    started = time.monotonic()
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        resource_version=str(server.resource_version),
        timeout_seconds=1,
    )
    assert stream.rest() == []
    assert stream.ended
    assert 0.9 <= time.monotonic() - started < 3


def test_watch_send_initial_events_ends_with_bookmark(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    core.create_namespaced_config_map(ns, configmap("b"))
    list_rv = server.resource_version
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        allow_watch_bookmarks=True,
    )
    events = stream.take(3)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[2]["object"]["metadata"]
    assert bookmark["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["resourceVersion"] == str(list_rv)
    core.create_namespaced_config_map(ns, configmap("c"))
    assert names(stream.take(1)) == [("ADDED", "c")]


def test_watch_send_initial_events_without_bookmarks_has_no_end_bookmark(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        timeout_seconds=1,
    )
    assert names(stream.rest()) == [("ADDED", "a")]


def test_watch_send_initial_events_false_starts_now(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    stream = raw_watch(
        core.list_namespaced_config_map,
        ns,
        send_initial_events=False,
        resource_version_match="NotOlderThan",
    )
    core.create_namespaced_config_map(ns, configmap("b"))
    assert names(stream.take(1)) == [("ADDED", "b")]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"send_initial_events": True},
        {"send_initial_events": True, "resource_version_match": "Exact", "resource_version": "1"},
        {"resource_version_match": "NotOlderThan", "resource_version": "1"},
    ],
    ids=["initial-without-match", "initial-with-exact", "match-without-initial"],
)
def test_watch_invalid_options_are_422(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch], kwargs: dict
) -> None:
    with pytest.raises(client.ApiException) as err:
        raw_watch(core.list_namespaced_config_map, ns, **kwargs)
    assert err.value.status == 422
    assert json.loads(err.value.body)["reason"] == "Invalid"


def test_watch_from_future_rv_waits_for_events_after_it(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    future = server.resource_version + 1
    stream = raw_watch(core.list_namespaced_config_map, ns, resource_version=str(future))
    core.create_namespaced_config_map(ns, configmap("skipped"))  # rv == future: not after it
    core.create_namespaced_config_map(ns, configmap("seen"))
    assert names(stream.take(1)) == [("ADDED", "seen")]


def test_watch_official_client_stream_sees_events(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_config_map(ns, configmap("a"))
    w = watch.Watch()
    seen = []
    for event in w.stream(core.list_namespaced_config_map, ns, timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        w.stop()
    assert seen == [("ADDED", "a")]


def test_watch_all_namespaces_and_cluster_scoped(
    core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    rv = core.list_namespace().metadata.resource_version
    stream = raw_watch(core.list_config_map_for_all_namespaces, resource_version=rv)
    nodes = raw_watch(core.list_node, resource_version=rv)
    core.create_namespaced_config_map(ns, configmap("a"))
    core.create_node({"metadata": {"name": "n1"}})
    assert names(stream.take(1)) == [("ADDED", "a")]
    assert names(nodes.take(1)) == [("ADDED", "n1")]


def test_watch_legacy_watch_path_prefix(server: ApiServer, ns: str) -> None:
    import urllib3

    rv = server.resource_version
    http = urllib3.PoolManager()
    response = http.request(
        "GET",
        f"{server.url}/api/v1/watch/namespaces/{ns}/configmaps?resourceVersion={rv}"
        "&timeoutSeconds=5",
        preload_content=False,
    )
    try:
        stream = RawWatch(response)
        server.create("configmaps", configmap("a"), ns)
        assert names(stream.take(1)) == [("ADDED", "a")]
    finally:
        response.close()
        response.release_conn()
        http.clear()


def test_many_concurrent_watches_are_served(
    server: ApiServer, core: client.CoreV1Api, ns: str, raw_watch: Callable[..., RawWatch]
) -> None:
    rv = str(server.resource_version)
    streams = [
        raw_watch(core.list_namespaced_config_map, ns, resource_version=rv) for _ in range(8)
    ]
    assert server.watch_count() == 8
    core.create_namespaced_config_map(ns, configmap("a"))
    for stream in streams:
        assert names(stream.take(1)) == [("ADDED", "a")]


def _table_watch(server: ApiServer, query: str) -> tuple[Any, RawWatch]:
    import urllib3

    http = urllib3.PoolManager()
    response = http.request(
        "GET",
        f"{server.url}/api/v1/{query}",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
        preload_content=False,
    )
    return http, RawWatch(response)


def test_watch_as_table_sends_one_row_tables_with_headers_once(server: ApiServer, ns: str) -> None:
    server.create("configmaps", configmap("a", k="v"), ns)
    server.bookmark_interval = 0.05
    http, stream = _table_watch(
        server, f"namespaces/{ns}/configmaps?watch=true&timeoutSeconds=5&allowWatchBookmarks=true"
    )
    try:
        first = stream.next()
        assert first is not None
        server.delete("configmaps", "a", ns)
        events = [first]
        while events[-1]["type"] != "DELETED":
            event = stream.next()
            assert event is not None
            events.append(event)
    finally:
        stream.close()
        http.clear()
    added, deleted = events[0], events[-1]
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert added["type"] == "ADDED"
    assert {e["object"]["kind"] for e in events} == {"Table"}
    table = added["object"]
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert [row["cells"][:2] for row in table["rows"]] == [["a", 1]]
    row_object = table["rows"][0]["object"]
    assert row_object["kind"] == "PartialObjectMetadata"
    assert row_object["metadata"]["namespace"] == ns
    assert table["metadata"]["resourceVersion"] == row_object["metadata"]["resourceVersion"]
    assert deleted["object"]["columnDefinitions"] is None
    assert deleted["object"]["rows"][0]["cells"][0] == "a"
    assert int(deleted["object"]["metadata"]["resourceVersion"]) == server.resource_version
    for bookmark in bookmarks:
        assert bookmark["object"]["rows"] == []
        assert bookmark["object"]["metadata"]["resourceVersion"]


def test_watch_as_table_include_object_and_errors(server: ApiServer, ns: str) -> None:
    server.create("configmaps", configmap("a"), ns)
    http, stream = _table_watch(
        server, f"namespaces/{ns}/configmaps?watch=true&timeoutSeconds=5&includeObject=Object"
    )
    try:
        [event] = stream.take(1)
    finally:
        stream.close()
        http.clear()
    row_object = event["object"]["rows"][0]["object"]
    assert row_object["kind"] == "ConfigMap"
    assert row_object["data"] == {}
    server.compact()
    http, stream = _table_watch(
        server, f"namespaces/{ns}/configmaps?watch=true&resourceVersion=1&timeoutSeconds=5"
    )
    try:
        assert [(e["type"], e["object"]["kind"]) for e in stream.rest()] == [("ERROR", "Status")]
    finally:
        stream.close()
        http.clear()
    http, stream = _table_watch(
        server, f"namespaces/{ns}/configmaps?watch=true&includeObject=Everything"
    )
    try:
        assert stream.status == 400
    finally:
        stream.close()
        http.clear()
