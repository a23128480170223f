"""informers.rest.transport: ApiClientTransport against the emulator over real HTTP
(CRUD of ConfigMaps and Leases, Status codes to typed errors, streaming,
aborting requests in flight), and RequestAborter's bookkeeping."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client as k8s

from informers.errors import (
    AlreadyExistsError,
    ApiError,
    ConflictError,
    InvalidError,
    NotFoundError,
    TooManyRequestsError,
)
from informers.rest import _urllib3
from informers.rest.transport import (
    ApiClientTransport,
    RequestAborter,
    Response,
    StreamingResponse,
    Transport,
    as_transport,
    encode_body,
    with_query,
)
from informers.testing import ApiServer
from informers.testing.apiserver._verbs_read import ReadVerbs
from informers.wire.resources import CONFIGMAPS, LEASES, PODS

#: How long an abort may take to end a request (generous for a loaded CI
#: machine; the requests it ends would otherwise block for 30 s or more).
STOP_BOUND = 3.0


@pytest.fixture
def transport(api_server: ApiServer) -> Iterator[ApiClientTransport]:
    api_client = api_server.api_client()
    try:
        yield ApiClientTransport(api_client)
    finally:
        api_client.close()


def _configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def _lease(name: str, holder: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15},
    }


# --------------------------------------------------------------------------- the protocol


def test_api_client_transport_is_a_transport(transport: ApiClientTransport) -> None:
    assert isinstance(transport, Transport)
    assert as_transport(transport) is transport
    wrapped = as_transport(transport.api_client)
    assert isinstance(wrapped, ApiClientTransport)
    assert wrapped.api_client is transport.api_client
    assert transport.api_client.configuration.host in repr(transport)


# --------------------------------------------------------------------------- CRUD


def test_configmap_create_get_update_patch_delete(
    api_server: ApiServer, transport: ApiClientTransport
) -> None:
    collection = CONFIGMAPS.collection_path("default")
    path = f"{collection}/settings"
    created = transport.request("POST", collection, body=_configmap("settings", a="1"))
    assert created.status == 201
    assert created.headers["content-type"].startswith("application/json")
    obj = created.json()
    assert obj["data"] == {"a": "1"}
    assert api_server.get(CONFIGMAPS, "settings", "default")["data"] == {"a": "1"}

    got = transport.request("GET", path, read_timeout=10).json()
    assert got["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]

    got["data"]["b"] = "2"
    updated = transport.request("PUT", path, body=got).json()
    assert updated["data"] == {"a": "1", "b": "2"}

    patched = transport.request(
        "PATCH",
        path,
        body=json.dumps({"data": {"a": None, "c": "3"}}).encode(),
        content_type="application/merge-patch+json",
    ).json()
    assert patched["data"] == {"b": "2", "c": "3"}

    listed = transport.request("GET", collection, query={"labelSelector": ""}).json()
    assert [item["metadata"]["name"] for item in listed["items"]] == ["settings"]

    deleted = transport.request("DELETE", path)
    assert 200 <= deleted.status <= 299
    with pytest.raises(NotFoundError) as info:
        transport.request("GET", path)
    assert info.value.status == 404
    assert info.value.reason == "NotFound"
    assert info.value.body["kind"] == "Status"


def test_lease_read_modify_write_and_its_conflicts(transport: ApiClientTransport) -> None:
    collection = LEASES.collection_path("default")
    path = f"{collection}/lock"
    with pytest.raises(NotFoundError):
        transport.request("GET", path)
    first = transport.request("POST", collection, body=_lease("lock", "a")).json()
    with pytest.raises(AlreadyExistsError) as exists:
        transport.request("POST", collection, body=_lease("lock", "b"))
    assert exists.value.status == 409
    assert exists.value.reason == "AlreadyExists"

    first["spec"]["holderIdentity"] = "a2"
    renewed = transport.request("PUT", path, body=first).json()
    assert renewed["spec"]["holderIdentity"] == "a2"
    # `first` still carries the old resourceVersion: another candidate's
    # update on a stale read is refused.
    first["spec"]["holderIdentity"] = "b"
    with pytest.raises(ConflictError) as conflict:
        transport.request("PUT", path, body=first)
    assert type(conflict.value) is ConflictError
    assert conflict.value.reason == "Conflict"
    assert transport.request("GET", path).json()["spec"]["holderIdentity"] == "a2"


def test_invalid_requests_and_throttling_map_to_typed_errors(
    api_server: ApiServer, transport: ApiClientTransport
) -> None:
    collection = CONFIGMAPS.collection_path("default")
    with pytest.raises(InvalidError) as invalid:
        transport.request("GET", collection, query=[("resourceVersionMatch", "Exact")])
    assert invalid.value.status == 422
    api_server.fail_next(1, 429, retry_after=3)
    with pytest.raises(TooManyRequestsError) as throttled:
        transport.request("GET", collection)
    assert throttled.value.retry_after == 3.0
    api_server.fail_next(1, 500)
    with pytest.raises(ApiError) as failed:
        transport.request("GET", collection)
    assert failed.value.status == 500
    # Each failure gave its connection back: the next request works.
    assert transport.request("GET", collection).json()["items"] == []


def test_a_body_that_is_not_json_is_refused_before_anything_is_sent(
    transport: ApiClientTransport,
) -> None:
    collection = CONFIGMAPS.collection_path("default")
    with pytest.raises(TypeError):
        transport.request("POST", collection, body={"data": object()})
    with pytest.raises(ValueError, match="JSON"):
        transport.request("POST", collection, body={"x": float("nan")})
    assert transport.request("GET", collection).json()["items"] == []


def test_a_request_with_an_aborter_that_is_not_aborted(transport: ApiClientTransport) -> None:
    aborter = RequestAborter()
    collection = LEASES.collection_path("default")
    transport.request("POST", collection, body=_lease("l", "a"), aborter=aborter)
    got = transport.request("GET", f"{collection}/l", aborter=aborter)
    assert got.json()["spec"]["holderIdentity"] == "a"
    with pytest.raises(NotFoundError):
        transport.request("GET", f"{collection}/nope", aborter=aborter)
    assert aborter._conns == set()  # every connection untracked once it went back


# --------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("abortable", [False, True])
def test_a_watch_streams_and_shuts_down(
    api_server: ApiServer, transport: ApiClientTransport, abortable: bool
) -> None:
    aborter = RequestAborter() if abortable else None
    response = transport.stream(
        "GET",
        CONFIGMAPS.collection_path("default"),
        query=[("watch", "true"), ("timeoutSeconds", "30")],
        aborter=aborter,
    )
    assert isinstance(response, StreamingResponse)
    assert response.status == 200
    api_server.create(CONFIGMAPS, _configmap("w"))
    chunks = response.chunks()
    line = next(chunks)
    while not line.endswith(b"\n"):
        line += next(chunks)
    event = json.loads(line)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "w")

    done = threading.Event()
    raised: list[BaseException] = []

    def read_rest() -> None:
        try:
            for _ in chunks:
                pass
        except Exception as exc:  # noqa: BLE001 - what the shutdown causes is recorded
            raised.append(exc)
        finally:
            done.set()

    reader = threading.Thread(target=read_rest, name="test-watch-reader")
    reader.start()
    response.shutdown()  # from another thread than the reader
    assert done.wait(STOP_BOUND)
    reader.join()
    response.shutdown()  # harmless again
    response.close()
    response.close()  # idempotent
    if aborter is not None:
        assert aborter._conns == set()


def test_a_streamed_error_is_raised_when_the_response_opens(
    transport: ApiClientTransport,
) -> None:
    with pytest.raises(NotFoundError):
        transport.stream("GET", "/api/v1/namespaces/default/nosuchthings")


def test_a_streamed_response_read_whole(
    api_server: ApiServer, transport: ApiClientTransport
) -> None:
    api_server.create(CONFIGMAPS, _configmap("r"))
    response = transport.stream("GET", f"{CONFIGMAPS.collection_path('default')}/r")
    assert json.loads(response.read())["metadata"]["name"] == "r"
    response.close()


# --------------------------------------------------------------------------- aborting


@pytest.fixture
def list_arrived(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when the emulator starts answering a list (it then waits out its
    list latency)."""
    arrived = threading.Event()
    plain = ReadVerbs.list

    def hooked(verbs: Any, *args: Any, **kwargs: Any) -> None:
        arrived.set()
        plain(verbs, *args, **kwargs)

    monkeypatch.setattr(ReadVerbs, "list", hooked)
    return arrived


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


@pytest.mark.parametrize("kind", ["request", "stream"])
def test_abort_ends_a_request_waiting_on_the_emulator(
    api_server: ApiServer,
    transport: ApiClientTransport,
    list_arrived: threading.Event,
    kind: str,
) -> None:
    api_server.list_latency = 30
    try:
        aborter = RequestAborter()
        call = getattr(transport, kind)
        path = PODS.collection_path("default")
        thread, raised = _call_in_thread(lambda: call("GET", path, aborter=aborter))
        assert list_arrived.wait(10)
        started = time.monotonic()
        aborter.abort()
        thread.join(STOP_BOUND)
        assert not thread.is_alive()
        assert time.monotonic() - started < STOP_BOUND
        assert len(raised) == 1, raised
        assert isinstance(raised[0], ConnectionAbortedError), raised
        assert aborter._conns == set()
        # Sticky: the next request with this aborter fails before it is sent.
        list_arrived.clear()
        with pytest.raises(ConnectionAbortedError):
            transport.request("GET", path, aborter=aborter)
        with pytest.raises(ConnectionAbortedError):
            transport.request("PUT", f"{path}/x", body={}, aborter=aborter)
        assert not list_arrived.is_set()
    finally:
        api_server.list_latency = 0
    # The pool is still good for requests without (or with a fresh) aborter.
    assert transport.request("GET", path).json()["items"] == []
    assert transport.request("GET", path, aborter=RequestAborter()).json()["items"] == []


class _FakeSock:
    def __init__(self) -> None:
        self.shutdowns = 0

    def shutdown(self, how: int) -> None:
        self.shutdowns += 1


class _FakeConn:
    def __init__(self, connected: bool) -> None:
        self.sock: _FakeSock | None = _FakeSock() if connected else None


@given(
    st.lists(st.tuples(st.sampled_from(["track", "untrack", "abort"]), st.booleans()), max_size=20)
)
def test_aborter_shuts_down_exactly_the_connections_in_flight(ops: list[tuple[str, bool]]) -> None:
    aborter = RequestAborter()
    in_flight: list[_FakeConn] = []
    shut: list[_FakeConn] = []
    for op, connected in ops:
        if op == "track":
            conn = _FakeConn(connected)
            if aborter.aborted:
                with pytest.raises(ConnectionAbortedError):
                    aborter.track(conn)
            else:
                aborter.track(conn)
                in_flight.append(conn)
        elif op == "untrack" and in_flight:
            aborter.untrack(in_flight.pop(0))
        elif op == "abort":
            aborter.abort()
            shut.extend(c for c in in_flight if c.sock is not None)
    for conn in in_flight:
        if conn.sock is None:  # it connects after the abort: refused then
            conn.sock = _FakeSock()
            if aborter.aborted:
                with pytest.raises(ConnectionAbortedError):
                    aborter.check_connected(conn)
                assert conn.sock.shutdowns == 1
            else:
                aborter.check_connected(conn)
                assert conn.sock.shutdowns == 0
    for conn in shut:
        assert conn.sock is not None
        assert conn.sock.shutdowns >= 1


class _SignallingAborter(RequestAborter):
    """Sets ``connecting`` once a socket is tracked (its connect is next)."""

    def __init__(self) -> None:
        super().__init__()
        self.connecting = threading.Event()

    def track(self, conn: Any) -> None:
        super().track(conn)
        if isinstance(conn, socket.socket):
            self.connecting.set()


@pytest.fixture
def unresponsive_port() -> Iterator[int]:
    """A port whose accept queue is full: a new connect hangs (SYNs dropped)."""
    listener = socket.socket()
    fillers: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(8):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_abort_interrupts_a_connect_in_progress(unresponsive_port: int) -> None:
    config = k8s.Configuration(host=f"http://127.0.0.1:{unresponsive_port}")
    api_client = k8s.ApiClient(config)
    try:
        aborter = _SignallingAborter()
        transport = ApiClientTransport(api_client)
        thread, raised = _call_in_thread(
            lambda: transport.request("GET", "/api/v1/pods", aborter=aborter)
        )
        assert aborter.connecting.wait(10)
        started = time.monotonic()
        aborter.abort()
        thread.join(STOP_BOUND)
        assert not thread.is_alive()
        assert time.monotonic() - started < STOP_BOUND
        assert len(raised) == 1, raised
        assert isinstance(raised[0], ConnectionAbortedError), raised
    finally:
        api_client.close()


def test_a_client_behind_a_proxy_sends_plain_requests_even_with_an_aborter() -> None:
    config = k8s.Configuration(host="http://127.0.0.1:1")
    config.proxy = "http://127.0.0.1:2"
    api_client = k8s.ApiClient(config)
    try:
        assert not _urllib3.can_abort(api_client)
    finally:
        api_client.close()


# --------------------------------------------------------------------------- helpers

_params = st.lists(st.tuples(st.text(max_size=8), st.text(max_size=8)), max_size=5)


@given(st.sampled_from(["/api/v1/pods", "/api/v1/pods?watch=true"]), _params)
def test_with_query_appends_what_parses_back(path: str, query: list[tuple[str, str]]) -> None:
    url = with_query(path, query)
    base, _, encoded = url.partition("?")
    assert base == "/api/v1/pods"
    parsed = urllib.parse.parse_qsl(encoded, keep_blank_values=True)
    expected = ([("watch", "true")] if "?" in path else []) + query
    assert parsed == expected
    assert " " not in url  # spaces as %20, as kube-apiserver and client-go expect


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(_json_values)
def test_encode_body_round_trips_through_json(value: Any) -> None:
    data = encode_body(value)
    if value is None:
        assert data is None
    else:
        assert data is not None
        assert json.loads(data) == value
        assert Response(200, {}, data).json() == value


@given(st.binary(max_size=50))
def test_encode_body_sends_bytes_as_they_are(data: bytes) -> None:
    assert encode_body(data) == data
    assert encode_body(bytearray(data)) == data


# --------------------------------------------------------------------------- reading


def test_a_response_reads_what_has_arrived_at_once_up_to_its_buffer() -> None:
    # http.client's default reader takes at most 8 KiB per read of the
    # socket; the abortable transport's responses take whatever has arrived,
    # up to READ_BUFFER_SIZE, so a burst of watch events costs one read.
    body = b"x" * 100_000
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(head + body)
        response = _urllib3.BufferedHTTPResponse(ours)
        response.begin()
        assert response.read(1) == b"x"
        buffered = response.fp.peek()  # read from the socket, not yet handed out
        assert len(buffered) == len(body) - 1 > 8192
        assert response.read() == body[1:]
        response.close()
        # the reader it replaced was closed, the socket was not
        theirs.sendall(b"still open")
        assert ours.recv(64) == b"still open"
    finally:
        ours.close()
        theirs.close()


def test_an_abortable_request_leaves_the_pooled_connection_as_it_was(
    transport: ApiClientTransport,
) -> None:
    # send_abortable reads through its own response class for the request
    # only: the connection goes back to the pool with http.client's, as the
    # client's own requests expect, whether the request succeeded or failed.
    aborter = RequestAborter()
    collection = LEASES.collection_path("default")
    got = transport.request("GET", collection, aborter=aborter)
    assert got.json()["kind"] == "LeaseList"
    with pytest.raises(NotFoundError):
        transport.request("GET", f"{collection}/nope", aborter=aborter)
    pool = transport._client.rest_client.pool_manager.connection_from_url(
        transport._client.configuration.host
    )
    conns = [c for c in list(pool.pool.queue) if c is not None]
    assert conns, "the connection went back to the pool"
    for conn in conns:
        assert not {"response_class", "connect", "_new_conn"} & set(vars(conn))
