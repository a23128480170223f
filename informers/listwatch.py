"""Listing and watching one resource: the :class:`ListerWatcher` protocol the
reflector consumes, and :class:`HTTPListerWatcher`, its implementation over the
official ``kubernetes`` client.

The HTTP implementation borrows only configuration, authentication and TLS from
:class:`kubernetes.client.ApiClient`. It reads raw bytes and parses JSON itself
(for watches, line by line from the socket): no model deserialisation happens
on this path, so objects arrive as plain dicts exactly as the server sent them.

Errors: an error ``Status`` from the server becomes an
:class:`~informers.errors.ApiError` (or one of its subclasses:
:class:`~informers.errors.ExpiredError` for 410,
:class:`~informers.errors.TooManyRequestsError` for 429 with ``retry_after``
read from the ``Retry-After`` header, :class:`~informers.errors.ResourceVersionTooLargeError`
for a resource version the server has not reached). A watch line that is not
JSON raises :class:`~informers.errors.WatchDecodeError` from the iterator.
Transport failures (connection refused, reset, read timeout) propagate as the
``urllib3`` / ``OSError`` exceptions they are; :func:`is_connection_refused`
classifies them.

Aborting: a :class:`RequestAborter` bound with
:meth:`HTTPListerWatcher.abortable` aborts, from any thread, the requests in
flight (connecting, waiting for response headers, reading a list body) by
shutting their sockets down; they raise :class:`ConnectionAbortedError`. The
reflector binds one per run and aborts it when it is stopped.
"""

from __future__ import annotations

import copy
import inspect
import logging
import socket
import threading
import urllib.parse
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import urllib3
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import allowed_gai_family
from urllib3.util.retry import Retry
from urllib3.util.url import parse_url

from informers import _json
from informers.errors import (
    ApiError,
    ExpiredError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    WatchDecodeError,
)
from informers.resources import Resource

__all__ = [
    "HTTPListerWatcher",
    "ListOptions",
    "ListerWatcher",
    "RequestAborter",
    "WatchStream",
    "discover_resource",
    "error_from_status",
    "is_connection_refused",
]

log = logging.getLogger(__name__)

#: Seconds added to the server-side ``timeoutSeconds`` for the client read timeout.
READ_TIMEOUT_MARGIN = 30.0
#: Read timeout for requests without a server-side timeout (plain lists).
DEFAULT_READ_TIMEOUT = 300.0
#: Connect timeout for every request.
CONNECT_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class ListOptions:
    """Query parameters of one list or watch request (``None`` / ``""`` = unset).

    Immutable; derive variants with :func:`dataclasses.replace`.
    """

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str | None = None
    resource_version_match: str = ""
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: int | None = None

    def query(self, *, watch: bool = False) -> list[tuple[str, str]]:
        """The URL query parameters, in a stable order."""
        q: list[tuple[str, str]] = []
        if watch:
            q.append(("watch", "true"))
        if self.label_selector:
            q.append(("labelSelector", self.label_selector))
        if self.field_selector:
            q.append(("fieldSelector", self.field_selector))
        if self.limit:
            q.append(("limit", str(self.limit)))
        if self.continue_token:
            q.append(("continue", self.continue_token))
        if self.resource_version:  # "" and None both mean "most recent"
            q.append(("resourceVersion", self.resource_version))
        if self.resource_version_match:
            q.append(("resourceVersionMatch", self.resource_version_match))
        if self.allow_watch_bookmarks:
            q.append(("allowWatchBookmarks", "true"))
        if self.send_initial_events is not None:
            q.append(("sendInitialEvents", "true" if self.send_initial_events else "false"))
        if self.timeout_seconds is not None:
            q.append(("timeoutSeconds", str(self.timeout_seconds)))
        return q


@runtime_checkable
class WatchStream(Protocol):
    """An open watch: iterate it for parsed events (``{"type", "object"}`` dicts).

    Iteration ends when the server closes the stream or :meth:`stop` is called.
    ``stop()`` is thread-safe, idempotent, and unblocks an iteration that is
    waiting for data in another thread.
    """

    def __iter__(self) -> Iterator[dict[str, Any]]: ...

    def stop(self) -> None: ...


@runtime_checkable
class ListerWatcher(Protocol):
    """What a reflector needs from the API: one resource, list and watch.

    ``list`` returns the parsed list object (``{"metadata": {...}, "items": [...]}``);
    ``watch`` opens a stream. Both raise :class:`~informers.errors.ApiError`
    for error responses. Implementations must be safe to call from the
    reflector's thread while ``WatchStream.stop`` is called from another.

    Optional (not part of the protocol): ``abortable(aborter)``, returning a
    lister-watcher whose requests a :class:`RequestAborter` aborts, as
    :meth:`HTTPListerWatcher.abortable`. A reflector uses it when present, so
    that stopping it does not wait for a list or watch request in flight.
    """

    def list(self, options: ListOptions) -> dict[str, Any]: ...

    def watch(self, options: ListOptions) -> WatchStream: ...


# --------------------------------------------------------------------------- errors


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP date: rare from kube-apiserver; fall back to backoff
    return max(0.0, seconds)


def error_from_status(
    status: Mapping[str, Any] | None,
    http_status: int = 0,
    *,
    retry_after: float | None = None,
    text: str = "",
) -> ApiError:
    """The :class:`~informers.errors.ApiError` subclass for a Status object
    (or, when the body was not a Status, for the HTTP code and text)."""
    body: Mapping[str, Any] = status or {}
    code = body.get("code") if isinstance(body.get("code"), int) else None
    code = code or http_status
    reason = str(body.get("reason") or "")
    message = str(body.get("message") or text.strip())
    details = body.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    cause_types = (
        {str(c.get("reason", "")) for c in causes if isinstance(c, Mapping)}
        if isinstance(causes, list)
        else set()
    )
    if isinstance(details, Mapping) and retry_after is None:
        secs = details.get("retryAfterSeconds")
        if isinstance(secs, int | float) and secs > 0:
            retry_after = float(secs)
    cls: type[ApiError] = ApiError
    if code == 410 or reason in ("Expired", "Gone"):
        cls = ExpiredError
    elif code == 429 or reason == "TooManyRequests":
        cls = TooManyRequestsError
    elif "ResourceVersionTooLarge" in cause_types or "too large resource version" in (
        message.lower()
    ):
        cls = ResourceVersionTooLargeError
    return cls(code, reason, message, body=body, retry_after=retry_after)


def _error_from_response(status: int, headers: Mapping[str, str], data: bytes) -> ApiError:
    retry_after = _parse_retry_after(headers.get("Retry-After"))
    text = data.decode("utf-8", "replace")
    parsed: Any = None
    try:
        parsed = _json.loads(data) if data else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        return error_from_status(parsed, status, retry_after=retry_after)
    return error_from_status(None, status, retry_after=retry_after, text=text[:500])


def is_connection_refused(exc: BaseException) -> bool:
    """Whether a transport exception means the server refused the connection
    (looks through urllib3's wrappers and the exception chain)."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ConnectionRefusedError):
            return True
        if "Connection refused" in str(e) or "Errno 111" in str(e):
            return True
        stack.extend([e.__cause__, e.__context__, getattr(e, "reason", None)])
    return False


# --------------------------------------------------------------------------- aborting


class RequestAborter:
    """Aborts the in-flight HTTP requests of the lister-watchers bound to it
    (:meth:`HTTPListerWatcher.abortable`).

    :meth:`abort` shuts down the socket of every request in flight (a list
    reading its body, a watch waiting for its headers or reading its stream)
    and is sticky: a request that starts, or finishes connecting, afterwards
    fails at once; a TCP connect in progress is interrupted too. Aborted
    requests raise :class:`ConnectionAbortedError` (or end, for an open watch
    stream). Only a DNS lookup in progress is not interrupted.

    Thread-safe; :meth:`abort` never blocks on the network.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aborted = False  # guarded by _lock
        self._conns: set[Any] = set()  # guarded by _lock: connections in flight

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

    def _track(self, conn: Any) -> None:
        with self._lock:
            if not self._aborted:
                self._conns.add(conn)
                return
        raise ConnectionAbortedError("the request was aborted")

    def _untrack(self, conn: Any) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _check_connected(self, conn: Any) -> None:
        # Called once the connection's socket exists: an abort() that ran
        # while it was connecting found no socket to shut down.
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


# --------------------------------------------------------------------------- HTTP


def _retries(configured: Any) -> Any:
    """The client's retry policy for connection errors, without urllib3's own
    retries on HTTP statuses (the reflector must see a 429 and its
    Retry-After, and stay stoppable while waiting)."""
    if configured is False:
        return False
    if configured is None or configured is True:
        configured = Retry.DEFAULT
    elif isinstance(configured, int):
        configured = Retry.from_int(configured)
    if isinstance(configured, Retry):
        return configured.new(status=0, status_forcelist=(), respect_retry_after_header=False)
    return configured


def _prepare_get(api_client: Any, path: str) -> tuple[str, dict[str, str]]:
    """The URL and headers of a GET of ``path`` (query string included) as
    ``api_client`` sends its own requests: the configured host, the client's
    default headers (user agent...) and cookie, ``Accept: application/json``
    and the bearer credentials of its configuration (``api_key``,
    ``api_key_prefix``, ``refresh_api_key_hook``). TLS and proxies are the
    pool manager's business. May call the configuration's refresh hook.

    ``kubernetes`` >= 37 has ``ApiClient.param_serialize`` for this;
    older clients (31 to 36) do the same steps inside their private
    ``__call_api``, so they are repeated here with the client's own parts.
    """
    serialize = getattr(api_client, "param_serialize", None)
    if serialize is not None:
        _method, url, headers, _body, _post = serialize(
            "GET",
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
        update(headers, queries, ["BearerToken"], path, "GET", None)
    else:  # 31 to 35: (headers, querys, auth_settings); 36 adds request_auth=None
        update(headers, queries, ["BearerToken"])
    url = api_client.configuration.host + path
    if queries:  # an auth setting carried in the query (none of the client's are today)
        separator = "&" if "?" in path else "?"
        url += separator + urllib.parse.urlencode(queries, quote_via=urllib.parse.quote)
    return url, headers


def _send(api_client: Any, path: str, read_timeout: float) -> Any:
    """GET ``path`` with the client's host, credentials, TLS and pool; the raw
    urllib3 response, body not read."""
    url, headers = _prepare_get(api_client, path)
    return api_client.rest_client.pool_manager.request(
        "GET",
        url,
        headers=headers,
        timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT, read=read_timeout),
        preload_content=False,
        retries=_retries(api_client.configuration.retries),
    )


def _send_abortable(
    api_client: Any, path: str, read_timeout: float, aborter: RequestAborter
) -> Any:
    """GET ``path`` on a pooled connection tracked by ``aborter``, one attempt
    (the reflector retries itself); the raw response, body not read. The
    connection is untracked as the response gives it back to the pool."""
    url, headers = _prepare_get(api_client, path)
    pool_manager = api_client.rest_client.pool_manager
    pool = pool_manager.connection_from_url(url)
    timeout = urllib3.Timeout(connect=CONNECT_TIMEOUT, read=read_timeout)
    # A slot of the pool (an idle keep-alive connection or a new one), as
    # urlopen takes it; it goes back with the response's release_conn().
    conn = pool._get_conn()
    try:
        aborter._track(conn)
    except ConnectionAbortedError:
        pool._put_conn(conn)
        raise
    conn.timeout = timeout.connect_timeout
    plain_connect = conn.connect

    def connect() -> None:
        plain_connect()
        aborter._check_connected(conn)

    def new_conn() -> socket.socket:
        return _connect(conn, aborter)

    conn.connect = connect  # only for this request: removed below
    conn._new_conn = new_conn
    try:
        response = pool._make_request(
            conn,
            "GET",
            parse_url(url).request_uri,
            headers=headers,
            retries=Retry(False),
            timeout=timeout,
            response_conn=conn,
            preload_content=False,
        )
    except BaseException as exc:
        del conn.connect, conn._new_conn
        aborter._untrack(conn)
        conn.close()
        pool._put_conn(None)  # the slot, for a fresh connection later
        if aborter.aborted and not isinstance(exc, ConnectionAbortedError):
            raise ConnectionAbortedError("the request was aborted") from exc
        raise
    del conn.connect, conn._new_conn
    # urllib3 gives the connection back to the pool by itself once it has read
    # a body to its end: untrack it first, or an abort could shut down the
    # socket of the next request that takes it.
    # (A weak reference: a closure holding the response would make a cycle,
    # and a response waiting for the collector keeps its socket open.)
    ref = weakref.ref(response)

    def release_conn() -> None:
        aborter._untrack(conn)
        alive = ref()
        if alive is not None:
            type(alive).release_conn(alive)

    response.release_conn = release_conn
    return response


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
            aborter._track(sock)
            try:
                sock.connect(address)
            finally:
                aborter._untrack(sock)
            aborter._check_connected(sock)
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


def _can_abort(api_client: Any) -> bool:
    """Whether requests of this client may go through :func:`_send_abortable`
    (a direct connection pool of urllib3 2; not through a proxy)."""
    pool_manager = getattr(getattr(api_client, "rest_client", None), "pool_manager", None)
    if pool_manager is None or getattr(pool_manager, "proxy", None) is not None:
        return False
    pool_cls = getattr(pool_manager, "pool_classes_by_scheme", {}).get("http")
    return pool_cls is not None and all(
        hasattr(pool_cls, name) for name in ("_get_conn", "_put_conn", "_make_request")
    )


class _HTTPWatchStream:
    """A watch over one urllib3 response, read line by line.

    The response (and its pooled connection) is released exactly once: when
    iteration ends, or by :meth:`stop` when iteration never started."""

    def __init__(self, response: Any, description: str) -> None:
        self._response = response
        self._description = description
        self._lock = threading.Lock()
        # Guarded by _lock:
        self._stopped = False
        self._started = False  # iteration began: its end releases the response
        self._closed = False

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            idle = not self._started
        try:
            self._response.shutdown()  # unblocks a recv() in another thread
        except (OSError, AttributeError, ValueError, RuntimeError):  # already released
            log.debug("shutdown of the %s watch failed", self._description, exc_info=True)
        if idle:  # nobody will iterate (or finish iterating) to release it
            self._close()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopped

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            # Close before releasing: a stream that ended early (a decode
            # error, a stop) may leave watch bytes unread on the socket, and
            # they must never reach the next request that reuses the pooled
            # connection. The pool reconnects a closed connection.
            self._response.close()
            self._response.release_conn()
        except OSError:
            log.debug("close of the %s watch failed", self._description, exc_info=True)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            if self.stopped:  # stop() came first and released the response
                return
            self._started = True
        pending = b""
        decode = self._decode
        try:
            for chunk in self._response.stream(65536, decode_content=True):
                if self._stopped:
                    return
                if not pending and chunk[:1] == b"{" and chunk.find(b"\n") == len(chunk) - 1:
                    # One whole event: what a server flushing each event sends.
                    yield decode(chunk)
                    continue
                pending += chunk
                if b"\n" not in chunk:
                    continue
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield decode(line)
            if pending.strip() and not self._stopped:
                yield decode(pending)
        except Exception:
            if self._stopped:  # the error is our own shutdown()
                return
            raise
        finally:
            self._close()

    def _decode(self, line: bytes) -> dict[str, Any]:
        try:
            event = _json.loads(line)
        except ValueError as exc:
            size = len(line.rstrip(b"\r\n"))
            what = f"watch line of {size} bytes is not JSON ({type(exc).__name__})"
            raise WatchDecodeError(f"{self._description}: {what}") from None
        if type(event) is not dict:
            raise WatchDecodeError(f"{self._description}: watch line is not a JSON object")
        return event


class HTTPListerWatcher:
    """Lists and watches one :class:`~informers.resources.Resource` over HTTP.

    ``api_client`` is a :class:`kubernetes.client.ApiClient` (its configuration,
    credentials, TLS and connection pool are used; the caller keeps ownership
    and closes it). ``namespace=None`` watches all namespaces. The selectors
    apply to every request; ``tweak_list_options`` may adjust the options of
    every request last (as client-go's ``TweakListOptionsFunc``). The client
    read timeout of a watch is its server timeout plus ``read_timeout_margin``
    seconds, so a stalled stream is abandoned.

    Requests block the calling thread (connect timeout 30 s, read timeout up
    to 300 s); :meth:`abortable` gives a view whose requests another thread
    can abort.

    Thread-safe: one instance may serve several concurrent requests.
    """

    def __init__(
        self,
        api_client: Any,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        read_timeout_margin: float = READ_TIMEOUT_MARGIN,
    ) -> None:
        self._client = api_client
        self._margin = read_timeout_margin
        self.resource = resource
        self.namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._tweak = tweak_list_options
        self._path = resource.collection_path(namespace)
        self._aborter: RequestAborter | None = None

    def abortable(self, aborter: RequestAborter) -> HTTPListerWatcher:
        """A copy of this lister-watcher whose requests ``aborter`` aborts.

        Each request of the copy takes a connection from the client's pool
        (returned to it afterwards) and makes one attempt, with
        no urllib3 retries: a caller that retries itself (the reflector) is
        not held by repeated connect timeouts. Through a proxy, the copy's
        requests are plain ones that cannot be aborted before their response
        arrives (an open watch stream still can be stopped).
        """
        view = copy.copy(self)
        view._aborter = aborter
        return view

    def __repr__(self) -> str:
        ns = f" in {self.namespace!r}" if self.namespace else ""
        return f"<HTTPListerWatcher {self.resource}{ns}>"

    def _options(self, options: ListOptions) -> ListOptions:
        if self._label_selector and not options.label_selector:
            options = replace(options, label_selector=self._label_selector)
        if self._field_selector and not options.field_selector:
            options = replace(options, field_selector=self._field_selector)
        if self._tweak is not None:
            options = self._tweak(options)
        return options

    def _request(self, query: list[tuple[str, str]], read_timeout: float) -> tuple[Any, bool]:
        """The response (status 2xx, body not read) and whether the aborter
        tracks it (until the response gives its connection back)."""
        path = self._path
        if query:
            path += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        aborter = self._aborter
        abortable = aborter is not None and _can_abort(self._client)
        if aborter is not None and abortable:
            response = _send_abortable(self._client, path, read_timeout, aborter)
        else:
            response = _send(self._client, path, read_timeout)
        if not 200 <= response.status <= 299:
            data = self._read(response, abortable)
            raise _error_from_response(response.status, response.headers, data)
        return response, abortable

    def _read(self, response: Any, abortable: bool) -> bytes:
        """The whole body; then the connection goes back to the pool (closed
        when the read failed, so no unread bytes can reach the next request)."""
        try:
            data: bytes = response.data or b""
        except BaseException as exc:
            response.close()
            response.release_conn()
            aborter = self._aborter
            if abortable and aborter is not None and aborter.aborted:
                raise ConnectionAbortedError("the request was aborted") from exc
            raise
        response.release_conn()
        return data

    def list(self, options: ListOptions) -> dict[str, Any]:
        """GET the collection (one page when ``options.limit`` is set)."""
        options = self._options(options)
        timeout = (
            options.timeout_seconds + self._margin
            if options.timeout_seconds
            else DEFAULT_READ_TIMEOUT
        )
        response, abortable = self._request(options.query(), timeout)
        data = self._read(response, abortable)
        try:
            parsed = _json.loads(data)
        except ValueError as exc:
            raise WatchDecodeError(f"{self.resource}: list response is not JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise WatchDecodeError(f"{self.resource}: list response is not a list object")
        if parsed.get("items") is None:  # an empty list may be encoded as null
            parsed["items"] = []
        elif not isinstance(parsed["items"], list):
            raise WatchDecodeError(f"{self.resource}: list response items are not a list")
        return parsed

    def watch(self, options: ListOptions) -> WatchStream:
        """Open a watch; the read timeout is the server's ``timeoutSeconds``
        plus a margin (so a stalled stream is noticed)."""
        options = self._options(options)
        timeout = (options.timeout_seconds or 0) + self._margin
        if not options.timeout_seconds:
            timeout = DEFAULT_READ_TIMEOUT
        response, _abortable = self._request(options.query(watch=True), timeout)
        return _HTTPWatchStream(response, str(self.resource))


# --------------------------------------------------------------------------- discovery


def _get_json(api_client: Any, path: str) -> Any:
    response = _send(api_client, path, 60.0)
    try:
        data = response.data or b""
    finally:
        response.release_conn()
    if not 200 <= response.status <= 299:
        raise _error_from_response(response.status, response.headers, data)
    return _json.loads(data)


def _match(entry: Mapping[str, Any], plain: str) -> bool:
    if "/" in str(entry.get("name", "")):
        return False  # a subresource
    names = {entry.get("name"), entry.get("singularName")} | set(entry.get("shortNames") or ())
    return plain in names or plain.lower() == str(entry.get("kind", "")).lower()


def _to_resource(group: str, version: str, entry: Mapping[str, Any]) -> Resource:
    return Resource(
        group,
        version,
        str(entry["name"]),
        str(entry.get("kind", "")),
        namespaced=bool(entry.get("namespaced", True)),
        singular=str(entry.get("singularName") or ""),
        short_names=tuple(entry.get("shortNames") or ()),
        verbs=tuple(entry.get("verbs") or ()),
        categories=tuple(entry.get("categories") or ()),
    )


def discover_resource(api_client: Any, name: str) -> Resource:
    """Resolve a resource name the way ``kubectl get`` does: ``"pods"``,
    ``"po"``, ``"Pod"``, ``"deployments.apps"``, ``"foos.example.com"``.

    Asks the server's discovery documents (``/api/v1``, ``/apis`` and the
    preferred version of each group); the core group wins for unqualified
    names. Raises :class:`~informers.errors.ApiError` (404) when nothing
    matches, or the error of a failing discovery request. Blocks on HTTP.
    """
    plain, _, group = name.partition(".")
    if not plain:
        raise ApiError(404, "NotFound", f"empty resource name {name!r}")
    candidates: list[tuple[str, str]] = []  # (group, version)
    if not group:
        candidates.append(("", "v1"))
    groups = _get_json(api_client, "/apis")
    for g in groups.get("groups") or ():
        gname = str(g.get("name", ""))
        if group and gname != group:
            continue
        preferred = (g.get("preferredVersion") or {}).get("version")
        versions = [str(v.get("version")) for v in g.get("versions") or ()]
        version = preferred or (versions[0] if versions else "")
        if version:
            candidates.append((gname, str(version)))
    for gname, version in candidates:
        prefix = f"/apis/{gname}/{version}" if gname else f"/api/{version}"
        try:
            doc = _get_json(api_client, prefix)
        except ApiError as exc:
            if exc.status == 404:
                continue
            raise
        for entry in doc.get("resources") or ():
            if isinstance(entry, Mapping) and _match(entry, plain):
                return _to_resource(gname, version, entry)
    raise ApiError(404, "NotFound", f"the server does not serve a resource named {name!r}")
