"""The urllib3 plumbing under :class:`~informers.rest.transport.ApiClientTransport`.

Requests go out as a :class:`kubernetes.client.ApiClient` sends its own (its
host, default headers, cookie, bearer credentials, TLS and connection pool)
but bypass its model layer: the body comes back as raw bytes.

Two ways to send: :func:`send`, through the pool manager with the client's
retry policy for connection errors; and :func:`send_abortable`, on a slot of
the connection pool taken and tracked by a
:class:`~informers.rest.transport.RequestAborter` for the whole request, so that
another thread can abort it at any point (connecting, waiting for the
response headers, reading the body). The second needs a direct pool of
urllib3 2 (:func:`can_abort`). Their responses are urllib3
``HTTPResponse`` objects, body not read; :func:`read_body` reads one whole,
:class:`Urllib3StreamingResponse` hands one out to be streamed.

Every function here blocks on the network only where it says so, and is
thread-safe as the client's pool is.
"""

from __future__ import annotations

import http.client
import inspect
import io
import logging
import socket
import urllib.parse
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

import urllib3
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family
from urllib3.util.retry import Retry
from urllib3.util.url import parse_url

if TYPE_CHECKING:
    from informers.rest.transport import RequestAborter

__all__ = [
    "READ_BUFFER_SIZE",
    "BufferedHTTPResponse",
    "Urllib3StreamingResponse",
    "can_abort",
    "prepare_request",
    "read_body",
    "retries_without_status",
    "send",
    "send_abortable",
]

log = logging.getLogger(__name__)

#: How many bytes a response sent by :func:`send_abortable` asks its socket
#: for at a time. http.client reads through an 8 KiB buffer by default, so a
#: watch of 2 KB events would read its socket every few events; on a socket
#: with a read timeout each read is a poll and a recv, both of which let go
#: of the GIL, and the reader then waits for the informer's other threads to
#: give it back. Reading what has arrived, up to this much, at once keeps
#: those waits under about 0.1 per event (``benchmarks/compare.py``'s
#: events). A read returns as soon as anything has arrived, within the read
#: timeout.
READ_BUFFER_SIZE = 256 * 1024


def retries_without_status(configured: Any) -> Any:
    """The client's retry policy (``Configuration.retries``) for connection
    errors, without urllib3's own retries on HTTP statuses: the caller must
    see a 429 and its Retry-After, and stay stoppable while it waits."""
    if configured is False:
        return False
    if configured is None or configured is True:
        configured = Retry.DEFAULT
    elif isinstance(configured, int):
        configured = Retry.from_int(configured)
    if isinstance(configured, Retry):
        return configured.new(status=0, status_forcelist=(), respect_retry_after_header=False)
    return configured


def prepare_request(api_client: Any, method: str, path: str) -> tuple[str, dict[str, str]]:
    """The URL and headers of a ``method`` request of ``path`` (query string
    included) as ``api_client`` sends its own requests: the configured host,
    the client's default headers (user agent...) and cookie,
    ``Accept: application/json`` and the bearer credentials of its
    configuration (``api_key``, ``api_key_prefix``, ``refresh_api_key_hook``).
    TLS and proxies are the pool manager's business. May call the
    configuration's refresh hook; does no I/O itself.

    ``kubernetes`` >= 37 has ``ApiClient.param_serialize`` for this;
    older clients (31 to 36) do the same steps inside their private
    ``__call_api``, so they are repeated here with the client's own parts.
    """
    serialize = getattr(api_client, "param_serialize", None)
    if serialize is not None:
        _method, url, headers, _body, _post = serialize(
            method,
            path,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        return str(url), dict(headers)
    headers = {"Accept": "application/json", **api_client.default_headers}
    if api_client.cookie:
        headers["Cookie"] = api_client.cookie
    headers = dict(
        api_client.parameters_to_tuples(api_client.sanitize_for_serialization(headers), None)
    )
    queries: list[tuple[str, str]] = []
    update = api_client.update_params_for_auth
    if "resource_path" in inspect.signature(update).parameters:
        # kubernetes >= 37 (a client that hides param_serialize): the request
        # itself is part of the signature.
        update(headers, queries, ["BearerToken"], path, method, None)
    else:  # 31 to 35: (headers, querys, auth_settings); 36 adds request_auth=None
        update(headers, queries, ["BearerToken"])
    url = api_client.configuration.host + path
    if queries:  # an auth setting carried in the query (none of the client's are today)
        separator = "&" if "?" in path else "?"
        url += separator + urllib.parse.urlencode(queries, quote_via=urllib.parse.quote)
    return url, headers


def send(
    api_client: Any,
    method: str,
    path: str,
    *,
    body: bytes | None,
    headers: Mapping[str, str],
    timeout: urllib3.Timeout,
) -> Any:
    """Send ``method path`` (with ``body`` and the extra ``headers``) with the
    client's host, credentials, TLS, pool and retry policy for connection
    errors (:func:`retries_without_status`). Blocks until the response
    headers arrive; returns the raw urllib3 response, body not read."""
    url, all_headers = prepare_request(api_client, method, path)
    all_headers.update(headers)
    return api_client.rest_client.pool_manager.urlopen(
        method,
        url,
        body=body,
        headers=all_headers,
        timeout=timeout,
        preload_content=False,
        retries=retries_without_status(api_client.configuration.retries),
    )


def send_abortable(
    api_client: Any,
    method: str,
    path: str,
    *,
    body: bytes | None,
    headers: Mapping[str, str],
    timeout: urllib3.Timeout,
    aborter: RequestAborter,
) -> Any:
    """Send ``method path`` on a pooled connection tracked by ``aborter``,
    one attempt (the caller retries itself); the raw response, body not read.

    The connection is untracked as the response gives it back to the pool
    (its ``release_conn``, which urllib3 also calls by itself once a body is
    read to its end). Raises :class:`ConnectionAbortedError` when ``aborter``
    aborts (or has aborted) the request. Requires :func:`can_abort`.
    """
    url, all_headers = prepare_request(api_client, method, path)
    all_headers.update(headers)
    pool_manager = api_client.rest_client.pool_manager
    pool = pool_manager.connection_from_url(url)
    # A slot of the pool (an idle keep-alive connection or a new one), as
    # urlopen takes it; it goes back with the response's release_conn().
    conn = pool._get_conn()
    try:
        aborter.track(conn)
    except ConnectionAbortedError:
        pool._put_conn(conn)
        raise
    conn.timeout = timeout.connect_timeout
    plain_connect = conn.connect

    def connect() -> None:
        plain_connect()
        aborter.check_connected(conn)

    def new_conn() -> socket.socket:
        return _connect(conn, aborter)

    conn.connect = connect  # only for this request: removed below
    conn._new_conn = new_conn
    conn.response_class = BufferedHTTPResponse
    try:
        response = pool._make_request(
            conn,
            method,
            parse_url(url).request_uri,
            body=body,
            headers=all_headers,
            retries=Retry(False),
            timeout=timeout,
            response_conn=conn,
            preload_content=False,
        )
    except BaseException as exc:
        del conn.connect, conn._new_conn, conn.response_class
        aborter.untrack(conn)
        conn.close()
        pool._put_conn(None)  # the slot, for a fresh connection later
        if aborter.aborted and not isinstance(exc, ConnectionAbortedError):
            raise ConnectionAbortedError("the request was aborted") from exc
        raise
    del conn.connect, conn._new_conn, conn.response_class
    # urllib3 gives the connection back to the pool by itself once it has read
    # a body to its end: untrack it first, or an abort could shut down the
    # socket of the next request that takes it.
    # (A weak reference: a closure holding the response would make a cycle,
    # and a response waiting for the collector keeps its socket open.)
    ref = weakref.ref(response)

    def release_conn() -> None:
        aborter.untrack(conn)
        alive = ref()
        if alive is not None:
            type(alive).release_conn(alive)

    response.release_conn = release_conn
    return response


class BufferedHTTPResponse(http.client.HTTPResponse):
    """An http.client response that reads its socket through a buffer of
    :data:`READ_BUFFER_SIZE` bytes instead of the default one. The
    connection builds it (its ``response_class``) before anything of the
    response was read, so the default reader it replaces holds nothing."""

    def __init__(
        self,
        sock: socket.socket,
        debuglevel: int = 0,
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(sock, debuglevel, method, url)
        # (makefile, not a BufferedReader made here: it counts the reader
        # among the socket's, so closing the socket waits for it as usual)
        buffered = cast("io.BufferedReader", sock.makefile("rb", READ_BUFFER_SIZE))
        default, self.fp = self.fp, buffered
        default.close()  # the socket stays open: only this reader of it is gone


def _connect(conn: Any, aborter: RequestAborter) -> socket.socket:
    """The connected socket of ``conn`` (as urllib3's ``_new_conn``), tracked
    by ``aborter`` while it connects so that an abort interrupts the connect."""
    host = str(conn._dns_host).strip("[]")
    try:
        addresses = socket.getaddrinfo(host, conn.port, allowed_gai_family(), socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise NameResolutionError(conn.host, conn, exc) from exc
    error: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _name, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            for option in conn.socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(conn.timeout)
            if conn.source_address:
                sock.bind(conn.source_address)
            aborter.track(sock)
            try:
                sock.connect(address)
            finally:
                aborter.untrack(sock)
            aborter.check_connected(sock)
        except ConnectionAbortedError:
            sock.close()
            raise
        except TimeoutError as exc:
            sock.close()
            msg = f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
            raise ConnectTimeoutError(conn, msg) from exc
        except OSError as exc:
            sock.close()
            error = exc
            continue
        return sock
    raise NewConnectionError(conn, f"Failed to establish a new connection: {error}") from error


def can_abort(api_client: Any) -> bool:
    """Whether requests of this client may go through :func:`send_abortable`
    (a direct connection pool of urllib3 2; not through a proxy)."""
    pool_manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
    if pool_manager is None or getattr(pool_manager, "proxy", None) is not None:
        return False
    pool_cls = getattr(pool_manager, "pool_classes_by_scheme", {}).get("http")
    return pool_cls is not None and all(
        hasattr(pool_cls, name) for name in ("_get_conn", "_put_conn", "_make_request")
    )


def read_body(response: Any, aborter: RequestAborter | None) -> bytes:
    """The whole body of ``response``; then its connection goes back to the
    pool (closed first when the read failed, so that no unread bytes can
    reach the next request). Blocks while the body arrives. A read that
    fails because ``aborter`` (the aborter that tracked the request, if any)
    aborted raises :class:`ConnectionAbortedError`."""
    try:
        data: bytes = response.data or b""
    except BaseException as exc:
        response.close()
        response.release_conn()
        if aborter is not None and aborter.aborted:
            raise ConnectionAbortedError("the request was aborted") from exc
        raise
    response.release_conn()
    return data


class Urllib3StreamingResponse:
    """A urllib3 response, body not read, as a
    :class:`~informers.rest.transport.StreamingResponse`.

    ``aborter`` is the aborter that tracks the request (``None`` when none
    does): :meth:`read` maps a read it broke to :class:`ConnectionAbortedError`.
    :meth:`shutdown` is thread-safe; the rest is for the one reading thread.
    """

    __slots__ = ("_aborter", "_response", "headers", "status")

    def __init__(self, response: Any, aborter: RequestAborter | None = None) -> None:
        self._response = response
        self._aborter = aborter
        self.status: int = response.status
        self.headers: Mapping[str, str] = response.headers

    def chunks(self, size: int = 65536) -> Iterator[bytes]:
        """The body as it arrives (content-decoded), in pieces of at most
        ``size`` bytes, never empty; blocks until each arrives. Ends at the
        end of the body, or with an error once :meth:`shutdown` was called."""
        stream: Iterator[bytes] = self._response.stream(size, decode_content=True)
        return stream

    def read(self) -> bytes:
        """The rest of the body; then the connection goes back to the pool."""
        return read_body(self._response, self._aborter)

    def shutdown(self) -> None:
        """Shut the connection down: a read blocked in another thread returns.
        Never raises (a response already released has nothing to shut)."""
        try:
            self._response.shutdown()
        except (OSError, AttributeError, ValueError, RuntimeError):  # already released
            log.debug("shutdown of a streamed response failed", exc_info=True)

    def close(self) -> None:
        """Close the connection, dropping what is unread, and give its slot
        back to the pool (which reconnects it for the next request).
        Idempotent; never raises :class:`OSError`."""
        try:
            # Close before releasing: bytes left unread on the socket must
            # never reach the next request that reuses the pooled connection.
            self._response.close()
            self._response.release_conn()
        except OSError:
            log.debug("close of a streamed response failed", exc_info=True)
