"""Aborting the list and watch requests of an abortable lister-watcher in
flight (RequestAborter), and stopping a reflector / informer whose request is
blocked on a server that does not answer. (The aborter's own bookkeeping and
the abort of a connect in progress are tested with the transport, in
test_transport.py.)"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client as k8s

from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import BackoffManager, Listing, ReflectorConfig, Watching
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.rest.transport import RequestAborter
from informers.testing import ApiServer
from informers.wire.resources import PODS

#: How long a stop may take (generous for a loaded CI machine; the requests
#: it aborts would otherwise block for 30 s or more).
STOP_BOUND = 3.0

EMPTY_LIST = json.dumps(
    {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "5"}, "items": []}
).encode()


@dataclass
class Behaviour:
    """What the stub server does: ``list`` / ``watch`` each one of
    ``"hang"`` (no headers), ``"stall"`` (headers and part of the body),
    ``"empty"`` (a whole empty list)."""

    list: str = "hang"
    watch: str = "hang"
    received: dict[str, threading.Event] = field(
        default_factory=lambda: {"list": threading.Event(), "watch": threading.Event()}
    )
    release: threading.Event = field(default_factory=threading.Event)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the handler threads
    behaviour: Behaviour


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        behaviour = self.server.behaviour
        kind = "watch" if "watch=true" in self.path else "list"
        what = getattr(behaviour, kind)
        try:
            if what == "empty":
                self._headers(len(EMPTY_LIST))
                self.wfile.write(EMPTY_LIST)
                behaviour.received[kind].set()
                return
            if what == "stall":
                self._headers(len(EMPTY_LIST))
                self.wfile.write(EMPTY_LIST[:10])
                self.wfile.flush()
            behaviour.received[kind].set()
            behaviour.release.wait(60)
        except OSError:  # the client went away
            pass
        self.close_connection = True

    def _headers(self, length: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()


@dataclass
class Stub:
    behaviour: Behaviour
    api_client: Any


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.behaviour = Behaviour()
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="stub-apiserver"
    )
    thread.start()
    config = k8s.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    api_client = k8s.ApiClient(config)
    try:
        yield Stub(server.behaviour, api_client)
    finally:
        server.behaviour.release.set()
        api_client.close()
        # Clients before kubernetes 37 keep their idle keep-alive connections
        # open through close(); server_close() below waits for them.
        api_client.rest_client.pool_manager.clear()
        server.shutdown()
        server.server_close()
        thread.join()


def _call_in_thread(fn: Any) -> tuple[threading.Thread, list[BaseException]]:
    raised: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            raised.append(exc)

    thread = threading.Thread(target=run, name="blocked-request")
    thread.start()
    return thread, raised


@pytest.mark.parametrize(
    ("list_mode", "watch_mode", "request_kind"),
    [("hang", "hang", "list"), ("stall", "hang", "list"), ("hang", "hang", "watch")],
)
def test_abort_unblocks_a_request_in_flight(
    stub: Stub, list_mode: str, watch_mode: str, request_kind: str
) -> None:
    stub.behaviour.list, stub.behaviour.watch = list_mode, watch_mode
    aborter = RequestAborter()
    lw = HTTPListerWatcher(stub.api_client, PODS).abortable(aborter)
    call = getattr(lw, request_kind)
    thread, raised = _call_in_thread(lambda: call(ListOptions(timeout_seconds=60)))
    assert stub.behaviour.received[request_kind].wait(10)
    started = time.monotonic()
    aborter.abort()
    thread.join(STOP_BOUND)
    assert not thread.is_alive()
    assert time.monotonic() - started < STOP_BOUND
    assert len(raised) == 1, raised
    assert isinstance(raised[0], ConnectionAbortedError), raised


def test_a_request_after_the_abort_fails_at_once(stub: Stub) -> None:
    aborter = RequestAborter()
    aborter.abort()
    assert aborter.aborted
    lw = HTTPListerWatcher(stub.api_client, PODS).abortable(aborter)
    with pytest.raises(ConnectionAbortedError):
        lw.list(ListOptions())
    with pytest.raises(ConnectionAbortedError):
        lw.watch(ListOptions())
    assert not stub.behaviour.received["list"].is_set()


def test_an_abortable_view_reuses_the_pool_and_leaves_the_original_alone(stub: Stub) -> None:
    stub.behaviour.list = "empty"
    plain = HTTPListerWatcher(stub.api_client, PODS)
    aborter = RequestAborter()
    view = plain.abortable(aborter)
    for _ in range(3):
        assert view.list(ListOptions())["metadata"]["resourceVersion"] == "5"
    aborter.abort()
    # The original (and the connections the view gave back) still work.
    assert plain.list(ListOptions())["items"] == []
    with pytest.raises(ConnectionAbortedError):
        view.list(ListOptions())


def _informer(lw: HTTPListerWatcher) -> SharedIndexInformer:
    return SharedIndexInformer(
        lw,
        name="pods",
        reflector_config=ReflectorConfig(description="pods", min_watch_timeout=60),
        backoff=BackoffManager(initial=0.01, cap=0.05),
    )


@pytest.mark.parametrize(
    ("list_mode", "blocked_in"), [("hang", "list"), ("stall", "list"), ("empty", "watch")]
)
def test_informer_stop_aborts_a_blocked_request(
    stub: Stub, list_mode: str, blocked_in: str
) -> None:
    stub.behaviour.list = list_mode
    informer = _informer(HTTPListerWatcher(stub.api_client, PODS))
    informer.start()
    try:
        assert stub.behaviour.received[blocked_in].wait(10)
    finally:
        started = time.monotonic()
        informer.stop(timeout=STOP_BOUND)
        elapsed = time.monotonic() - started
    assert elapsed < STOP_BOUND
    reflector = informer.reflector
    assert reflector is not None
    assert reflector.errors() == []  # the abort is the stop, not a failure
    alive = [
        t.name for t in threading.enumerate() if t.name.startswith(("reflector-", "informer-"))
    ]
    assert alive == []


def test_informer_stop_during_a_slow_emulator_list(api_server: ApiServer) -> None:
    api_client = api_server.api_client()
    try:
        api_server.list_latency = 30
        informer = _informer(HTTPListerWatcher(api_client, PODS))
        informer.start()
        reflector = informer.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: isinstance(s, Listing), 10)
        started = time.monotonic()
        informer.stop(timeout=STOP_BOUND)
        assert time.monotonic() - started < STOP_BOUND
        assert not informer.has_synced()
        assert reflector.errors() == []
        assert not isinstance(reflector.state, Watching)
    finally:
        api_server.list_latency = 0
        api_client.close()
