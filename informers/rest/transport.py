"""The raw HTTP path to the API server: the :class:`Transport` protocol every
component talks to the server through, and :class:`ApiClientTransport`, its
implementation over the official ``kubernetes`` client.

A transport sends one request and hands back raw bytes: no model
deserialisation, no caching, no retries on HTTP statuses (a 429 and its
``Retry-After`` reach the caller). Paths are absolute API paths
(``/api/v1/namespaces/default/pods``,
``/apis/coordination.k8s.io/v1/namespaces/ns/leases/name``); ``query`` is
encoded onto them. Two calls:

* :meth:`Transport.request` reads the whole body and returns a
  :class:`Response` (status, headers, data; :meth:`Response.json` parses it).
  A ``body`` that is not ``bytes`` is sent as JSON.
* :meth:`Transport.stream` returns as soon as the response headers arrive,
  with a :class:`StreamingResponse` whose body the caller reads as it comes
  (a watch) and must :meth:`~StreamingResponse.close` (or read whole).

Both raise, for a response outside 2xx, the
:class:`~informers.errors.ApiError` subclass of its ``Status``
(:class:`~informers.errors.NotFoundError`, :class:`~informers.errors.ConflictError`,
:class:`~informers.errors.AlreadyExistsError`,
:class:`~informers.errors.TooManyRequestsError` with ``retry_after``, ...:
see :func:`~informers.errors.error_from_response`). Transport failures
(connection refused, reset, timeouts) propagate as the ``urllib3`` /
:class:`OSError` exceptions they are.

Aborting: pass a :class:`RequestAborter` as ``aborter`` and call its
:meth:`~RequestAborter.abort` from any thread to end the requests in flight
(connecting, waiting for headers, reading a body) at once: they raise
:class:`ConnectionAbortedError`. It is sticky: a later request with the same
aborter fails before it is sent.

For example, the read-modify-write of a Lease::

    transport = ApiClientTransport(api_client)
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/lock"
    try:
        lease = transport.request("GET", path, read_timeout=10).json()
    except NotFoundError:
        lease = None
    ...
    transport.request("PUT", path, body=lease, read_timeout=10)  # ConflictError if stale

Thread-safe: one transport serves concurrent requests from several threads.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

import urllib3

from informers.errors import error_from_response
from informers.rest import _urllib3
from informers.wire import _json

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_READ_TIMEOUT",
    "JSON_CONTENT_TYPE",
    "ApiClientTransport",
    "Query",
    "RequestAborter",
    "Response",
    "StreamingResponse",
    "Transport",
    "as_transport",
    "encode_body",
    "warn_if_unverified",
    "with_query",
]

log = logging.getLogger(__name__)

#: Read timeout (seconds) of a request that names none.
DEFAULT_READ_TIMEOUT = 300.0
#: Connect timeout (seconds) of every request of an :class:`ApiClientTransport`.
CONNECT_TIMEOUT = 30.0
#: The ``Content-Type`` of a request body unless the caller names another.
JSON_CONTENT_TYPE = "application/json"

#: Query parameters: pairs in order (a name may repeat), or a mapping.
Query: TypeAlias = Sequence[tuple[str, str]] | Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response: its HTTP ``status`` (2xx: others are raised),
    ``headers`` (case-insensitive lookup) and body ``data``. Immutable."""

    status: int
    headers: Mapping[str, str]
    data: bytes

    def json(self) -> Any:
        """The body parsed as JSON (plain dicts and lists); raises
        :class:`ValueError` when it is not JSON."""
        return _json.loads(self.data)


@runtime_checkable
class StreamingResponse(Protocol):
    """A response whose body is read as it arrives (:meth:`Transport.stream`).

    The reading thread calls :meth:`chunks` (or :meth:`read`) and finally
    :meth:`close`, exactly as it would a file; another thread may call
    :meth:`shutdown` at any time to unblock it.
    """

    @property
    def status(self) -> int:
        """The HTTP status (2xx: others are raised when the response opens)."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers (case-insensitive lookup)."""
        ...

    def chunks(self, size: int = 65536) -> Iterator[bytes]:
        """The body in pieces of at most ``size`` bytes as they arrive, never
        empty; blocks for each. Ends at the end of the body; raises (an
        :class:`OSError` or urllib3 error) when the connection breaks,
        :meth:`shutdown` included."""
        ...

    def read(self) -> bytes:
        """The rest of the body, whole; then the connection is released."""
        ...

    def shutdown(self) -> None:
        """Shut the connection down so that a read blocked in another thread
        returns. Thread-safe; never raises; does not release anything."""
        ...

    def close(self) -> None:
        """Drop what is unread and release the connection. Idempotent."""
        ...


@runtime_checkable
class Transport(Protocol):
    """Sends one request to the API server (see the module documentation).

    ``method`` is the HTTP method (``"GET"``, ``"POST"``, ``"PUT"``,
    ``"PATCH"``, ``"DELETE"``); ``path`` the absolute API path, which may
    already hold a query string; ``query`` more parameters, appended in
    order. ``body`` is ``None`` (no body), ``bytes`` (sent as they are) or
    anything else, sent as JSON (:func:`encode_body`); ``content_type``
    labels it. ``read_timeout`` bounds each wait for data, in seconds.
    ``aborter``, when given, can abort the request from another thread.
    ``headers`` are sent besides the implementation's own (an ``Accept``
    given here replaces ``application/json``; callers pass it only when
    they need it, so an implementation written before it existed keeps
    serving the others).

    Both calls block the calling thread and raise
    :class:`~informers.errors.ApiError` (its subclass for the Status) for a
    response outside 2xx, :class:`ConnectionAbortedError` when aborted.
    Implementations are thread-safe.
    """

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: object = None,
        content_type: str = JSON_CONTENT_TYPE,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        aborter: RequestAborter | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """Send the request and read the whole response body."""
        ...

    def stream(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: object = None,
        content_type: str = JSON_CONTENT_TYPE,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        aborter: RequestAborter | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> StreamingResponse:
        """Send the request; return once the response headers arrived. The
        caller reads the body and closes the response (an aborter, if any,
        still aborts the reading)."""
        ...


def with_query(path: str, query: Query) -> str:
    """``path`` with ``query`` appended, percent-encoded (spaces as ``%20``)."""
    if not query:
        return path
    encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return path + ("&" if "?" in path else "?") + encoded


def encode_body(body: object) -> bytes | None:
    """The bytes of a request ``body``: ``None`` stays ``None``, bytes stay
    as they are, anything else becomes compact JSON. Raises
    :class:`TypeError` for what JSON cannot hold and :class:`ValueError` for
    NaN or infinities (the API server accepts neither)."""
    if body is None:
        return None
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()


# --------------------------------------------------------------------------- aborting


class RequestAborter:
    """Aborts the in-flight HTTP requests it is passed to (as the ``aborter``
    of a :class:`Transport` call, or bound to a lister-watcher with
    :meth:`HTTPListerWatcher.abortable <informers.rest.listwatch.HTTPListerWatcher.abortable>`).

    :meth:`abort` shuts down the socket of every request in flight (a list
    reading its body, a watch waiting for its headers or reading its stream)
    and is sticky: a request that starts, or finishes connecting, afterwards
    fails at once; a TCP connect in progress is interrupted too. Aborted
    requests raise :class:`ConnectionAbortedError` (or end, for an open watch
    stream). Only a DNS lookup in progress is not interrupted.

    A transport reports what it has in flight with :meth:`track`,
    :meth:`untrack` and :meth:`check_connected`; a "connection" there is a
    :class:`socket.socket` or an object whose ``sock`` attribute is one (or
    ``None`` while it has none).

    Thread-safe; :meth:`abort` never blocks on the network.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aborted = False  # guarded by _lock; once True, never False again
        # Guarded by _lock: the connections in flight. Invariant: a
        # connection only joins it while _aborted is False.
        self._conns: set[Any] = set()

    @property
    def aborted(self) -> bool:
        """Whether :meth:`abort` was called."""
        with self._lock:
            return self._aborted

    def abort(self) -> None:
        """Abort every request in flight and every later one. Idempotent."""
        with self._lock:
            # Under the lock (shutdown never blocks): a connection is untracked
            # under it before it goes back to the pool, so a request that
            # reuses it can never be hit.
            self._aborted = True
            for conn in self._conns:
                _shutdown(conn)

    def track(self, conn: Any) -> None:
        """Register ``conn`` as in flight, so that :meth:`abort` shuts it down.
        Raises :class:`ConnectionAbortedError` (and registers nothing) when
        the aborter has aborted already."""
        with self._lock:
            if not self._aborted:
                self._conns.add(conn)
                return
        raise ConnectionAbortedError("the request was aborted")

    def untrack(self, conn: Any) -> None:
        """Forget ``conn`` (its request is over, or it goes back to a pool
        where another request may take it). Idempotent."""
        with self._lock:
            self._conns.discard(conn)

    def check_connected(self, conn: Any) -> None:
        """Call once ``conn``'s socket exists: an :meth:`abort` that ran while
        it was connecting found no socket to shut down, so this shuts it down
        and raises :class:`ConnectionAbortedError` if the aborter aborted."""
        with self._lock:
            aborted = self._aborted
        if aborted:
            _shutdown(conn)
            raise ConnectionAbortedError("the request was aborted")


def _shutdown(conn: Any) -> None:
    sock = conn if isinstance(conn, socket.socket) else getattr(conn, "sock", None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)  # unblocks a recv() in another thread
    except OSError:  # not connected (any more)
        log.debug("shutdown of an aborted request failed", exc_info=True)


# --------------------------------------------------------------------------- the kubernetes client


# Guards _unverified_hosts: the HTTPS hosts already warned about.
_warn_lock = threading.Lock()
_unverified_hosts: set[str] = set()


def warn_if_unverified(configuration: Any) -> bool:
    """Log one WARNING per host, per process, when ``configuration`` (a
    ``kubernetes.client.Configuration``) talks HTTPS without verifying the
    server's certificate; returns whether it does.

    Verification is on by default (the kubernetes client's ``verify_ssl``);
    turning it off takes an explicit ``verify_ssl = False`` or a kubeconfig's
    ``insecure-skip-tls-verify: true``. The warning names the host only.
    """
    host = str(getattr(configuration, "host", "") or "")
    if not host.startswith("https://") or getattr(configuration, "verify_ssl", True):
        return False
    with _warn_lock:
        first = host not in _unverified_hosts
        _unverified_hosts.add(host)
    if first:
        log.warning(
            "TLS certificate verification is turned off for %s (verify_ssl is False, or "
            "insecure-skip-tls-verify in the kubeconfig): anyone on the path can read and "
            "change the traffic, credentials included",
            host,
        )
    return True


class ApiClientTransport:
    """A :class:`Transport` over a :class:`kubernetes.client.ApiClient`: its
    host, default headers (user agent), cookie, bearer credentials (with the
    configuration's refresh hook, per request), TLS settings, proxy and
    connection pool; ``kubernetes`` 31 to 37.

    The caller keeps ownership of ``api_client`` and closes it. Every request
    waits at most ``connect_timeout`` seconds to connect.

    Without an aborter, a request goes through the client's pool manager with
    the client's retry policy for connection errors (never for HTTP statuses).
    With one, it takes a connection from the client's pool (returned to it
    afterwards) and makes one attempt, with no urllib3 retries: a caller that
    retries itself is not held by repeated connect timeouts. Through a proxy,
    a request with an aborter is a plain one that cannot be aborted before
    its response arrives (a :class:`StreamingResponse` can still be shut
    down).

    Thread-safe.
    """

    __slots__ = ("_client", "_connect_timeout")

    def __init__(self, api_client: Any, *, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self._client = api_client
        self._connect_timeout = connect_timeout
        warn_if_unverified(getattr(api_client, "configuration", None))

    @property
    def api_client(self) -> Any:
        """The client whose configuration and pool the requests use."""
        return self._client

    def __repr__(self) -> str:
        host = getattr(getattr(self._client, "configuration", None), "host", "?")
        return f"<ApiClientTransport {host}>"

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: object = None,
        content_type: str = JSON_CONTENT_TYPE,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        aborter: RequestAborter | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """See :meth:`Transport.request`."""
        response, tracking = self._open(
            method, path, query, body, content_type, read_timeout, aborter, headers
        )
        data = _urllib3.read_body(response, tracking)
        return Response(response.status, response.headers, data)

    def stream(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: object = None,
        content_type: str = JSON_CONTENT_TYPE,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        aborter: RequestAborter | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> StreamingResponse:
        """See :meth:`Transport.stream`."""
        response, tracking = self._open(
            method, path, query, body, content_type, read_timeout, aborter, headers
        )
        return _urllib3.Urllib3StreamingResponse(response, tracking)

    def _open(  # noqa: PLR0917 - the private form of request()'s arguments
        self,
        method: str,
        path: str,
        query: Query,
        body: object,
        content_type: str,
        read_timeout: float,
        aborter: RequestAborter | None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> tuple[Any, RequestAborter | None]:
        """The response (status 2xx, body not read) and the aborter that
        tracks it until it gives its connection back (``None`` if none)."""
        data = encode_body(body)
        headers = {"Content-Type": content_type} if data is not None else {}
        if extra_headers:
            headers.update(extra_headers)
        path = with_query(path, query)
        timeout = urllib3.Timeout(connect=self._connect_timeout, read=read_timeout)
        client = self._client
        tracking = aborter if aborter is not None and _urllib3.can_abort(client) else None
        if tracking is not None:
            response = _urllib3.send_abortable(
                client, method, path, body=data, headers=headers, timeout=timeout, aborter=tracking
            )
        else:
            response = _urllib3.send(
                client, method, path, body=data, headers=headers, timeout=timeout
            )
        if not 200 <= response.status <= 299:
            error_body = _urllib3.read_body(response, tracking)
            raise error_from_response(response.status, response.headers, error_body)
        return response, tracking


def as_transport(client: Any) -> Transport:
    """``client`` itself when it is a :class:`Transport` (it has ``request``
    and ``stream`` methods), else an :class:`ApiClientTransport` over it
    (a :class:`kubernetes.client.ApiClient`)."""
    if isinstance(client, Transport):
        return client
    return ApiClientTransport(client)
