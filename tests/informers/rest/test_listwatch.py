"""HTTPListerWatcher over a tiny scripted HTTP server (no emulator needed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from scripted_http import Script, j, serve, status

import informers
import informers.errors
import informers.rest.discovery
import informers.rest.transport
from informers.errors import (
    ApiError,
    ExpiredError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    WatchDecodeError,
)
from informers.rest.listwatch import HTTPListerWatcher, ListOptions, RequestAborter
from informers.rest.transport import ApiClientTransport
from informers.wire.resources import DEPLOYMENTS, PODS


@pytest.fixture
def server() -> Iterator[tuple[Script, Any]]:
    with serve() as running:
        yield running


def test_list_sends_options_and_parses_raw_json(server: tuple[Script, Any]) -> None:
    script, client = server
    body = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "7"},
        "items": [{"metadata": {"name": "a"}}],
    }
    script.responses["/api/v1/namespaces/ns/pods"] = (200, {}, [j(body)])
    lw = HTTPListerWatcher(client, PODS, "ns", label_selector="app in (a,b)")
    got = lw.list(
        ListOptions(resource_version="0", limit=500, field_selector="status.phase=Running")
    )
    assert got == body
    _path, query, headers = script.requests[0]
    assert query["labelSelector"] == ["app in (a,b)"]
    assert query["fieldSelector"] == ["status.phase=Running"]
    assert query["limit"] == ["500"]
    assert query["resourceVersion"] == ["0"]
    assert headers["authorization"] == "Bearer sekret"


def test_watch_reads_lines_across_chunks(server: tuple[Script, Any]) -> None:
    script, client = server
    e1 = j({"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "2"}}})
    e2 = j({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "3"}}})
    chunks = [e1[:10], e1[10:] + b"\n" + e2[:5], e2[5:] + b"\n"]
    script.responses["/apis/apps/v1/deployments?watch"] = (200, {}, chunks)
    script.hold.set()
    lw = HTTPListerWatcher(client, DEPLOYMENTS)
    stream = lw.watch(
        ListOptions(resource_version="1", allow_watch_bookmarks=True, timeout_seconds=5)
    )
    events = list(stream)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    _, query, _ = script.requests[0]
    assert query["watch"] == ["true"]
    assert query["allowWatchBookmarks"] == ["true"]
    assert query["timeoutSeconds"] == ["5"]


def test_watch_reads_one_line_per_chunk_and_mixed_chunks(server: tuple[Script, Any]) -> None:
    # One event per chunk (the fast path), blank lines skipped, then chunks
    # holding several lines or part of one (the buffered path), in any order.
    script, client = server
    ev = [j({"type": "ADDED", "object": {"metadata": {"name": n}}}) for n in "abcdef"]
    chunks = [
        ev[0] + b"\n",
        b"\n",
        b" \r\n",
        ev[1] + b"\r\n",
        ev[2] + b"\n" + ev[3][:7],
        ev[3][7:] + b"\n",
        ev[4] + b"\n",
        ev[5],
    ]
    script.responses["/api/v1/pods?watch"] = (200, {}, chunks)
    script.hold.set()
    stream = HTTPListerWatcher(client, PODS).watch(ListOptions(timeout_seconds=5))
    names = [e["object"]["metadata"]["name"] for e in stream]
    assert names == list("abcdef")


def test_watch_stop_from_another_thread_ends_iteration(server: tuple[Script, Any]) -> None:
    script, client = server
    e1 = j({"type": "ADDED", "object": {"metadata": {"name": "a"}}}) + b"\n"
    script.responses["/api/v1/pods?watch"] = (200, {}, [e1])
    stream = HTTPListerWatcher(client, PODS).watch(ListOptions(timeout_seconds=30))
    it = iter(stream)
    assert next(it)["type"] == "ADDED"
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.extend(it), name="test-reader")
    t.start()
    stream.stop()
    t.join(5)
    assert not t.is_alive()
    assert got == []
    stream.stop()  # idempotent


def test_watch_malformed_line_raises_decode_error(server: tuple[Script, Any]) -> None:
    script, client = server
    script.responses["/api/v1/pods?watch"] = (200, {}, [b'{"type": "ADDED", "obj\n'])
    script.hold.set()
    stream = HTTPListerWatcher(client, PODS).watch(ListOptions(timeout_seconds=5))
    with pytest.raises(WatchDecodeError, match="pods") as info:
        list(stream)
    assert "obj" not in str(info.value)


def test_list_accepts_null_items_as_empty(server: tuple[Script, Any]) -> None:
    script, client = server
    body = {"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": None}
    script.responses["/api/v1/pods"] = (200, {}, [j(body)])
    got = HTTPListerWatcher(client, PODS).list(ListOptions())
    assert got["items"] == []
    assert got["metadata"]["resourceVersion"] == "7"


def test_list_with_items_not_a_list_is_a_decode_error(server: tuple[Script, Any]) -> None:
    script, client = server
    script.responses["/api/v1/pods"] = (200, {}, [j({"kind": "PodList", "items": {"a": 1}})])
    with pytest.raises(WatchDecodeError, match="items"):
        HTTPListerWatcher(client, PODS).list(ListOptions())


@pytest.mark.parametrize(
    ("code", "headers", "body", "cls", "retry_after"),
    [
        (410, {}, status(410, "Expired", "too old"), ExpiredError, None),
        (429, {"Retry-After": "3"}, status(429, "TooManyRequests"), TooManyRequestsError, 3.0),
        (
            429,
            {"Retry-After": "2", "Content-Type": "text/plain"},
            b"Too many requests, please try again later.\n",
            TooManyRequestsError,
            2.0,
        ),
        (
            504,
            {},
            status(
                504,
                "Timeout",
                "Too large resource version: 99, current: 5",
                details={"causes": [{"reason": "ResourceVersionTooLarge"}]},
            ),
            ResourceVersionTooLargeError,
            None,
        ),
        (500, {}, b"oops", ApiError, None),
    ],
)
def test_error_responses_map_to_typed_errors(  # noqa: PLR0917
    server: tuple[Script, Any],
    code: int,
    headers: dict[str, str],
    body: bytes,
    cls: type[ApiError],
    retry_after: float | None,
) -> None:
    script, client = server
    script.responses["/api/v1/pods"] = (code, headers, [body])
    script.responses["/api/v1/pods?watch"] = (code, headers, [body])
    lw = HTTPListerWatcher(client, PODS)
    for call in (lambda: lw.list(ListOptions()), lambda: lw.watch(ListOptions())):
        with pytest.raises(ApiError) as info:
            call()
        assert type(info.value) is cls
        assert info.value.status == code
        assert info.value.retry_after == retry_after


@pytest.mark.parametrize("abortable", [False, True])
def test_a_watch_stopped_before_it_is_iterated_gives_its_connection_back(
    server: tuple[Script, Any], abortable: bool
) -> None:
    script, client = server
    script.responses["/api/v1/pods?watch"] = (200, {}, [j({"type": "ADDED"}) + b"\n"])
    aborter = RequestAborter()
    lw = HTTPListerWatcher(client, PODS)
    view = lw.abortable(aborter) if abortable else lw
    pool = client.rest_client.pool_manager.connection_from_url(client.configuration.host)
    free = pool.pool.qsize()
    stream = view.watch(ListOptions(timeout_seconds=30))
    assert pool.pool.qsize() == free - 1  # the watch holds a slot
    stream.stop()
    assert pool.pool.qsize() == free
    assert aborter._conns == set()  # no longer tracked as in flight
    assert list(stream) == []  # iterating afterwards yields nothing, releases nothing twice
    stream.stop()
    assert pool.pool.qsize() == free


def test_a_watch_body_read_to_its_end_is_untracked_before_it_returns_to_the_pool(
    server: tuple[Script, Any],
) -> None:
    # urllib3 gives the connection back to the pool by itself once it read a
    # sized body to its end, before the stream's own cleanup runs: the aborter
    # must not track it by then (an abort would shut down the socket of
    # whichever request takes it next), and a stop() must still be harmless.
    script, client = server
    script.sized_watch = True
    events = [j({"type": "ADDED", "object": {"metadata": {"name": n}}}) + b"\n" for n in "ab"]
    script.responses["/api/v1/pods?watch"] = (200, {}, events)
    aborter = RequestAborter()
    pool = client.rest_client.pool_manager.connection_from_url(client.configuration.host)
    free = pool.pool.qsize()
    stream = (
        HTTPListerWatcher(client, PODS).abortable(aborter).watch(ListOptions(timeout_seconds=30))
    )
    it = iter(stream)
    assert next(it)["object"]["metadata"]["name"] == "a"
    assert pool.pool.qsize() == free  # the whole body was read: back in the pool
    assert aborter._conns == set()
    raised: list[BaseException] = []

    def stop() -> None:
        try:
            stream.stop()
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            raised.append(exc)

    stopper = threading.Thread(target=stop, name="test-stopper")
    stopper.start()
    stopper.join()
    assert raised == []
    list(it)  # what was read already may still come; nothing raises
    assert pool.pool.qsize() == free
    assert aborter._conns == set()


def test_moved_names_are_still_importable_from_listwatch() -> None:
    # What other modules imported from informers.rest.listwatch before the
    # transport, discovery and error mapping moved out of it.
    from informers.rest import listwatch

    assert listwatch.RequestAborter is informers.rest.transport.RequestAborter
    assert listwatch.discover_resource is informers.rest.discovery.discover_resource
    assert listwatch.error_from_status is informers.errors.error_from_status
    assert listwatch.is_connection_refused is informers.errors.is_connection_refused
    assert informers.RequestAborter is informers.rest.transport.RequestAborter
    assert informers.discover_resource is informers.rest.discovery.discover_resource
    for name in listwatch.__all__:
        assert getattr(listwatch, name) is not None, name


def test_a_lister_watcher_over_a_given_transport(server: tuple[Script, Any]) -> None:
    script, client = server
    body = {"kind": "PodList", "metadata": {"resourceVersion": "3"}, "items": []}
    script.responses["/api/v1/pods"] = (200, {}, [j(body)])
    transport = ApiClientTransport(client)
    lw = HTTPListerWatcher(transport, PODS)
    assert lw.transport is transport
    assert lw.list(ListOptions()) == body
    plain = HTTPListerWatcher(client, PODS)
    assert isinstance(plain.transport, ApiClientTransport)
    assert plain.transport.api_client is client
