"""The HTTP side of the emulator: routing, request parsing, list/watch/CRUD
handlers, Status errors and injected faults, over the standard library's
threaded HTTP/1.1 server.

Every connection runs in its own named thread, tracked by the server so
:meth:`ApiServer.stop` can close the socket and join it; with TLS the
handshake happens in that thread too. Each request is authenticated (when
tokens are set), then injected faults apply, then the authorizer is asked,
then it is routed. A handler never lets an exception escape: an unexpected
one is answered with a 500 Status and logged (kind and key only, never
objects). Request logs carry the method and path, never a header: the
``Authorization`` header is read only to authenticate.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import select
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any, Protocol

from informers._shard_selector import SHARD_INFO_FIELD
from informers.resources import NAMESPACES, PODS, SERVICEACCOUNTS, Resource
from informers.testing.apiserver import _discovery, _patch, _scale, _status
from informers.testing.apiserver._filtering import build_predicate, shard_predicate, with_shard
from informers.testing.apiserver._history import decode_continue
from informers.testing.apiserver._security import Security, request_access, unauthorized
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._stored import Stored, join_items
from informers.testing.apiserver._watch import Watcher

__all__ = ["FaultState", "HTTPServer", "Handler"]

log = logging.getLogger("informers.testing.apiserver")

_JSON = "application/json"
_PROTOBUF = "application/vnd.kubernetes.protobuf"
_RETURNS_OBJECT_ON_DELETE = frozenset({PODS, NAMESPACES, SERVICEACCOUNTS})
#: Lists longer than this are streamed chunked, this many items per write.
_LIST_BATCH = 1000
#: Seconds a new TLS connection may take to finish its handshake.
_HANDSHAKE_TIMEOUT = 10.0


def _optional(name: str) -> ModuleType | None:
    """A helper module that may not exist yet (protobuf, openapi, table)."""
    try:
        return importlib.import_module(f"informers.testing.apiserver.{name}")
    except ModuleNotFoundError:
        return None


class _Headers(Protocol):
    """What fault matching reads of request headers (``http.client.HTTPMessage``:
    case-insensitive ``get``)."""

    def get(self, name: str, /) -> Any: ...


class FaultState:
    """Injected HTTP failures (``fail_next``), delays (``delay_next``) and
    one-shot watch replays.

    A failure or delay may be limited to requests whose path starts with a
    prefix and to requests carrying one header value (``header``: name, matched
    case-insensitively, and exact value), so a test can target one client.

    Thread-safe (one lock); never calls out while holding it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: [remaining, status, retry_after, path_prefix, plain_text, header]
        self._failures: list[list[Any]] = []
        #: [remaining, seconds, path_prefix, header]
        self._delays: list[list[Any]] = []
        self._replay: list[int] = []

    def add_failure(
        self,
        n: int,
        status: int,
        retry_after: int | None,
        prefix: str | None,
        plain: bool,
        *,
        header: tuple[str, str] | None = None,
    ) -> None:
        with self._lock:
            self._failures.append([n, status, retry_after, prefix, plain, header])

    def add_delay(
        self, n: int, seconds: float, prefix: str | None, header: tuple[str, str] | None
    ) -> None:
        with self._lock:
            self._delays.append([n, seconds, prefix, header])

    @staticmethod
    def _matches(
        path: str,
        headers: _Headers | None,
        prefix: str | None,
        header: tuple[str, str] | None,
    ) -> bool:
        if prefix is not None and not path.startswith(prefix):
            return False
        if header is None:
            return True
        return headers is not None and headers.get(header[0]) == header[1]

    def take_failure(
        self, path: str, headers: _Headers | None = None
    ) -> tuple[int, int | None, bool] | None:
        with self._lock:
            for entry in self._failures:
                remaining, status, retry_after, prefix, plain, header = entry
                if remaining > 0 and self._matches(path, headers, prefix, header):
                    entry[0] -= 1
                    if entry[0] == 0:
                        self._failures.remove(entry)
                    return status, retry_after, plain
            return None

    def take_delay(self, path: str, headers: _Headers | None = None) -> float:
        """Seconds to hold the request back (0: none); consumes one count."""
        with self._lock:
            for entry in self._delays:
                remaining, seconds, prefix, header = entry
                if remaining > 0 and self._matches(path, headers, prefix, header):
                    entry[0] -= 1
                    if entry[0] == 0:
                        self._delays.remove(entry)
                    return float(seconds)
            return 0.0

    def add_replay(self, rv: int, count: int) -> None:
        with self._lock:
            self._replay.extend([rv] * count)

    def take_replay(self) -> int | None:
        with self._lock:
            return self._replay.pop(0) if self._replay else None

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()
            self._delays.clear()
            self._replay.clear()


#: The finalizer a DELETE's ``propagationPolicy`` adds for the garbage collector.
_PROPAGATION_FINALIZERS: dict[str, tuple[str, ...]] = {
    "Foreground": ("foregroundDeletion",),
    "Orphan": ("orphan",),
}


class Settings:
    """Tunables the handlers read (plain attributes; reads are atomic)."""

    def __init__(
        self,
        *,
        bookmark_interval: float,
        watch_buffer_size: int,
        max_body_bytes: int,
        rv_wait_seconds: float,
        heartbeat: float,
    ) -> None:
        self.bookmark_interval = bookmark_interval
        self.watch_buffer_size = watch_buffer_size
        self.max_body_bytes = max_body_bytes
        self.rv_wait_seconds = rv_wait_seconds
        self.heartbeat = heartbeat
        self.list_latency = 0.0
        self.watch_list_mode = "on"
        #: The ShardedListAndWatch feature gate: serve ``shardSelector``.
        self.sharded_list_and_watch = False
        #: How long before a watch's deadline the last bookmark goes out.
        self.deadline_bookmark = 2.0
        #: Deletions wait for controllers (see ``ApiServer.deletion_lifecycle``).
        self.deletion_lifecycle = False


class HTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server tracking its connection threads and sockets.

    With ``ssl_context`` every connection is wrapped in TLS in its own thread
    (a slow handshake never holds up the accept loop). ``security`` (None: no
    authentication) authenticates and authorizes each request.
    """

    daemon_threads = True
    allow_reuse_address = True
    #: Many clients (informers) connect at once; a short backlog would make
    #: some of them wait for a SYN retry (1 s).
    request_queue_size = 256

    def __init__(
        self,
        address: tuple[str, int],
        storage: Storage,
        settings: Settings,
        faults: FaultState,
        stopping: threading.Event,
        *,
        ssl_context: ssl.SSLContext | None = None,
        security: Security | None = None,
    ) -> None:
        super().__init__(address, Handler)
        self.storage = storage
        self.settings = settings
        self.faults = faults
        self.stopping = stopping
        self.ssl_context = ssl_context
        self.security = security
        self._conn_lock = threading.Lock()
        # guarded by _conn_lock: each connection thread and the plain TCP
        # socket close_connections() shuts down (for TLS a duplicate of the
        # connection's descriptor, so no SSL object is touched across threads)
        self._connections: dict[threading.Thread, socket.socket] = {}
        self._counter = 0  # guarded by _conn_lock

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._counter += 1
            number = self._counter
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name=f"apiserver-conn-{number}",
            daemon=True,
        )
        # Wrapping in TLS detaches the accepted socket: keep a duplicate to
        # shut the connection down from another thread.
        handle = request.dup() if self.ssl_context is not None else request
        with self._conn_lock:
            self._connections[thread] = handle
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        handle = None
        with self._conn_lock:
            handle = self._connections.get(threading.current_thread())
        try:
            if self.ssl_context is not None:
                request.settimeout(_HANDSHAKE_TIMEOUT)
                try:
                    request = self.ssl_context.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError) as exc:
                    # A client that does not trust the certificate, or speaks
                    # plain HTTP: nothing to answer. (No secret is in exc.)
                    log.debug("TLS handshake with %s failed: %s", client_address[0], exc)
                    return
            self.finish_request(request, client_address)
        except OSError:
            pass  # the peer went away; nothing to answer
        except Exception:
            log.exception("connection handler failed")
        finally:
            self.shutdown_request(request)
            with self._conn_lock:
                self._connections.pop(threading.current_thread(), None)
            if handle is not None and handle is not request:
                handle.close()

    def close_connections(self) -> list[threading.Thread]:
        """Shut every open connection down; returns their threads (to join)."""
        with self._conn_lock:
            items = list(self._connections.items())
        for _, sock in items:
            with contextlib.suppress(OSError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)
        return [thread for thread, _ in items]


class _Request:
    """What a route needs to know about the request."""

    def __init__(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        self.method = method
        self.path = path
        self.query = query

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    def flag(self, name: str) -> bool | None:
        value = self.param(name)
        if value is None:
            return None
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0", ""):
            return False
        raise _status.bad_request(f"invalid boolean value {value!r} for {name}")

    def integer(self, name: str) -> int | None:
        value = self.param(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise _status.bad_request(
                f"invalid value {value!r} for {name}: not an integer"
            ) from None


def _dry_run(request: _Request) -> bool:
    """``dryRun=All``: validate and answer, store nothing (400 for other values)."""
    values = request.query.get("dryRun")
    if not values:
        return False
    for value in values:
        if value != "All":
            raise _status.bad_request(f'unsupported dryRun value "{value}": only "All"')
    return True


def _parse_rv(value: str | None) -> int | None:
    """None for unset/empty; 500 for non-numeric (as the real server)."""
    if value is None or value == "":
        return None
    try:
        rv = int(value)
    except ValueError:
        raise _status.internal_error(
            f'invalid resource version "{value}": strconv.ParseUint: parsing "{value}": '
            "invalid syntax"
        ) from None
    if rv < 0:
        raise _status.internal_error(f'invalid resource version "{value}"')
    return rv


def _include_object(request: _Request) -> str:
    """The ``includeObject`` table option (400 for an unknown value)."""
    value = request.param("includeObject") or "PartialObjectMetadata"
    if value not in ("PartialObjectMetadata", "Object", "None"):
        raise _status.bad_request(f'unrecognized includeObject value: "{value}"')
    return value


def _rv_set_by_patch(body: bytes) -> str:
    """The ``metadata.resourceVersion`` a (merge, strategic or JSON) patch
    sets itself, or ""."""
    try:
        sent = json.loads(body)
    except ValueError:
        return ""
    if isinstance(sent, dict):
        meta = sent.get("metadata")
        return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""
    if isinstance(sent, list):
        for op in sent:
            if (
                isinstance(op, dict)
                and op.get("op") in ("add", "replace")
                and op.get("path") == "/metadata/resourceVersion"
            ):
                return str(op.get("value") or "")
    return ""


def _bookmark_line(resource: Resource, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": meta}
    return json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":")).encode() + b"\n"


def _event_line(event_type: str, stored: Stored) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + stored.full_json + b"}\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class _TableEvents:
    """Encodes one watch stream's events as ``Table`` objects (a watch asked
    for ``as=Table``), the way the real server does: each event's object is a
    Table of one row; only the first Table carries ``columnDefinitions``
    (later ones hold ``null``, and kubectl reuses the columns it has), so
    ``kubectl get -w`` prints one header. A BOOKMARK's object is a Table with
    no rows whose metadata carries the resourceVersion. Not thread-safe: one
    per stream."""

    def __init__(self, table: ModuleType, resource: Resource, include_object: str) -> None:
        self._table = table
        self._resource = resource
        self._include = include_object
        self._headers_sent = False

    def _line(self, event_type: str, objects: list[dict[str, Any]], rv: str) -> bytes:
        document = self._table.to_table(
            self._resource, objects, {"resourceVersion": rv}, include_object=self._include
        )
        if self._headers_sent:
            document["columnDefinitions"] = None
        self._headers_sent = True
        line = json.dumps({"type": event_type, "object": document}, separators=(",", ":"))
        return line.encode() + b"\n"

    def event(self, event_type: str, stored: Stored) -> bytes:
        rv = str((stored.obj.get("metadata") or {}).get("resourceVersion", ""))
        return self._line(event_type, [stored.obj], rv)

    def bookmark(self, resource: Resource, rv: int, initial_end: bool = False) -> bytes:
        return self._line("BOOKMARK", [], str(rv))


class Handler(BaseHTTPRequestHandler):
    """One connection; requests on it are served in turn (keep-alive)."""

    protocol_version = "HTTP/1.1"
    server_version = "kube-informers-apiserver"
    #: Seconds a connection may sit idle (or a write may block) before it is closed.
    timeout = 900
    server: HTTPServer

    # ------------------------------------------------------------ plumbing

    def setup(self) -> None:
        super().setup()
        # Small writes (watch events, headers) must not wait for delayed ACKs.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _send(
        self,
        code: int,
        body: bytes,
        content_type: str = _JSON,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.command == "HEAD":
            self.end_headers()
        elif len(body) <= 65536:  # headers and a small body leave in one write
            pending: list[bytes] = self._headers_buffer  # type: ignore[attr-defined]
            pending.append(b"\r\n")
            pending.append(body)
            self.flush_headers()
        else:  # no copy of a large body
            self.end_headers()
            self.wfile.write(body)

    def _send_list(self, head: bytes, items: list[Stored]) -> None:
        """A list answer: ``head`` is its JSON up to (without) ``,"items":``.

        A short list goes out in one write with a Content-Length. A long one
        is streamed chunked, ``_LIST_BATCH`` items per write, so no copy of the
        whole body is ever held, and the per-item views are short-lived (a
        long-lived one per item made the garbage collector walk every stored
        object, several times per 100k-item list)."""
        if len(items) <= _LIST_BATCH or self.command == "HEAD":
            self._send(200, b"".join((head, b',"items":', join_items(items), b"}")))
            return
        self.send_response(200)
        self.send_header("Content-Type", _JSON)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        write = self.wfile.write
        write(_chunk(head + b',"items":['))
        separator = b"{"
        for start in range(0, len(items), _LIST_BATCH):
            batch = items[start : start + _LIST_BATCH]
            write(_chunk(separator + b",{".join([s.list_rest for s in batch])))
            separator = b",{"
        write(_chunk(b"]}") + b"0\r\n\r\n")

    def _send_json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj, separators=(",", ":")).encode())

    def _send_error(self, error: StatusError) -> None:
        self._send(
            error.code,
            json.dumps(error.body, separators=(",", ":")).encode(),
            headers=error.headers,
        )

    def _read_body(self) -> bytes:
        limit = self.server.settings.max_body_bytes
        too_large = StatusError(
            413,
            "RequestEntityTooLarge",
            f"Request entity too large: limit is {limit}",
        )
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                size_line = self.rfile.readline(1024)
                try:
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    self.close_connection = True
                    raise _status.bad_request("malformed chunked request body") from None
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                total += size
                if total > limit:
                    self.close_connection = True
                    raise too_large
                parts.append(self.rfile.read(size))
                self.rfile.readline(16)
        length_text = self.headers.get("Content-Length") or "0"
        try:
            length = int(length_text)
        except ValueError:
            self.close_connection = True
            raise _status.bad_request("invalid Content-Length") from None
        if length > limit:
            self.close_connection = True  # the unread body must not be parsed as a request
            raise too_large
        return self.rfile.read(length) if length > 0 else b""

    def _decode_body(self, body: bytes) -> Any:
        content_type = (self.headers.get("Content-Type") or _JSON).split(";")[0].strip().lower()
        if content_type == _PROTOBUF:
            module = _optional("_protobuf")
            if module is None:
                raise StatusError(
                    415, "UnsupportedMediaType", f"the body of type {_PROTOBUF} is not supported"
                )
            try:
                return module.decode_object(body)
            except module.UnsupportedMediaError as exc:
                raise StatusError(415, "UnsupportedMediaType", str(exc)) from None
        if content_type not in (_JSON, "application/yaml", "*/*", ""):
            raise StatusError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f'include: {_JSON}, application/yaml, {_PROTOBUF}; got "{content_type}"',
            )
        try:
            return json.loads(body)
        except ValueError as exc:
            raise _status.bad_request(
                f"the object provided is unrecognized or malformed JSON: {exc}"
            ) from None

    def _dispatch(self, method: str) -> None:
        try:
            self._route(method)
        except StatusError as error:
            self._send_error(error)
        except OSError:  # the connection broke (client gone, drop_watches, stop)
            self.close_connection = True
        except Exception as exc:
            log.exception("request %s %s failed", method, self.path.split("?")[0])
            self._send_error(_status.internal_error(f"{type(exc).__name__}: {exc}"))

    # -------------------------------------------------------------- routing

    def _route(self, method: str) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        path = parsed.path.rstrip("/") or "/"
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        body = self._read_body()  # always: an unread body would be taken for the next request
        security = self.server.security
        user = ""
        if security is not None:
            # The header is read here and nowhere else, and never logged.
            found = security.authenticate(self.headers.get("Authorization"))
            if found is None:
                log.debug("unauthenticated request %s %s", method, path)
                raise unauthorized()
            user = found
        delay = self.server.faults.take_delay(path, self.headers)
        if delay > 0:
            self.server.stopping.wait(delay)
        failure = self.server.faults.take_failure(path, self.headers)
        if failure is not None:
            self._send_failure(*failure)
            return
        if security is not None:
            access = request_access(user, method, path, query)
            if access is not None:
                security.authorize(access)
        request = _Request(method, path, query)
        if self._route_meta(request):
            return
        segments = [urllib.parse.unquote(s) for s in path.strip("/").split("/")]
        if segments[0] == "api" and len(segments) >= 2:
            group, version, rest = "", segments[1], segments[2:]
        elif segments[0] == "apis" and len(segments) >= 3:
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            raise _status.no_such_route()
        if rest and rest[0] == "watch":
            rest = rest[1:]
            request.query["watch"] = ["true"]
        self._route_resource(request, group, version, rest, body)

    def _route_meta(self, request: _Request) -> bool:
        """Discovery, version, health and OpenAPI; False for anything else."""
        path, storage = request.path, self.server.storage
        if request.method != "GET":
            return False
        if path == "/version":
            self._send_json(200, _discovery.version_document())
        elif path == "/api":
            self._send_json(200, _discovery.core_versions_document())
        elif path == "/apis":
            self._send_json(200, _discovery.group_list_document(storage.resources()))
        elif path in ("/healthz", "/readyz", "/livez"):
            self._send(200, b"ok", "text/plain; charset=utf-8")
        elif path.startswith("/openapi/"):
            self._serve_openapi(path)
        else:
            parts = path.strip("/").split("/")
            if parts[0] == "api" and len(parts) == 2:
                group_version = parts[1]
            elif parts[0] == "apis" and len(parts) == 3:
                group_version = f"{parts[1]}/{parts[2]}"
            else:
                return False
            document = _discovery.resource_list_document(group_version, storage.resources())
            if document is None:
                raise _status.no_such_route()
            self._send_json(200, document)
        return True

    def _serve_openapi(self, path: str) -> None:
        module = _optional("_openapi")
        not_found = _status.no_such_route()
        if module is None or not path.startswith("/openapi/v3"):
            raise not_found
        resources = self.server.storage.resources()
        if path == "/openapi/v3":
            document = module.openapi_v3_index(resources)
        else:
            rest = path[len("/openapi/v3/") :]
            group_version = rest[len("api/") :] if rest.startswith("api/") else rest[5:]
            document = module.openapi_v3_document(group_version, resources)
        if document is None:
            raise not_found
        self._send_json(200, document)

    def _send_failure(self, status: int, retry_after: int | None, plain: bool) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        if status == 429 and plain:
            headers.setdefault("Retry-After", "1")
            headers["X-Content-Type-Options"] = "nosniff"
            self._send(
                429,
                b"Too many requests, please try again later.\n",
                "text/plain; charset=utf-8",
                headers,
            )
            return
        if status == 429:
            error = _status.too_many_requests(retry_after if retry_after is not None else 1)
        else:
            reason = _status.REASONS.get(status, "InternalError")
            details = {"retryAfterSeconds": retry_after} if retry_after is not None else None
            error = StatusError(status, reason, f"injected failure ({status} {reason})", details)
            error.headers.update(headers)
        if plain:
            self._send(
                error.code,
                error.body["message"].encode() + b"\n",
                "text/plain; charset=utf-8",
                error.headers,
            )
        else:
            self._send_error(error)

    def _route_resource(
        self, request: _Request, group: str, version: str, rest: list[str], body: bytes
    ) -> None:
        storage = self.server.storage
        namespace: str | None = None
        plural = rest[0] if rest else ""
        tail = rest[1:]
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = storage.lookup(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, plural, tail = rest[1], rest[2], rest[3:]
        resource = storage.lookup(group, version, plural)
        if resource is None or len(tail) > 2:
            raise _status.no_such_route()
        if not resource.namespaced and namespace is not None:
            raise _status.no_such_route()
        name = tail[0] if tail else None
        subresource = tail[1] if len(tail) > 1 else ""
        if subresource == "scale" and resource in _scale.SCALABLE:
            if namespace is None or name is None:
                raise _status.no_such_route()
            self._scale(request, resource, namespace, name, body)
            return
        if subresource == "finalize" and resource == NAMESPACES and name is not None:
            self._finalize_namespace(request, name, body)
            return
        if subresource and (
            subresource != "status" or not storage.has_status_subresource(resource)
        ):
            raise _status.no_such_route()
        method = request.method
        if name is None:
            if method == "GET":
                if request.flag("watch"):
                    self._watch(request, resource, namespace)
                else:
                    self._list(request, resource, namespace)
            elif method == "POST":
                if resource.namespaced and namespace is None:
                    raise _status.method_not_allowed()
                self._create(resource, namespace, body, dry_run=_dry_run(request))
            elif method == "DELETE":
                self._delete_collection(request, resource, namespace)
            else:
                raise _status.method_not_allowed()
            return
        if resource.namespaced and namespace is None:
            raise _status.no_such_route()
        if method == "GET":
            stored = storage.get(resource, name, namespace)
            table = self._wants_table()
            if table is not None:
                document = table.to_table(
                    resource, [stored.obj], {}, include_object=_include_object(request)
                )
                self._send_json(200, document)
            else:
                self._send(200, stored.full_json)
        elif method == "PUT":
            obj = self._decode_body(body)
            keep = not subresource and storage.has_status_subresource(resource)
            stored = storage.update(
                resource,
                obj,
                namespace,
                name,
                subresource=subresource,
                keep_status=keep,
                dry_run=_dry_run(request),
            )
            self._send(200, stored.full_json)
        elif method == "PATCH":
            self._patch(resource, namespace, name, subresource, body, dry_run=_dry_run(request))
        elif method == "DELETE":
            self._delete(resource, namespace, name, body, request)
        else:
            raise _status.method_not_allowed()

    # ------------------------------------------------------------- handlers

    def _scale(
        self, request: _Request, resource: Resource, namespace: str, name: str, body: bytes
    ) -> None:
        """GET, PUT and PATCH of ``<name>/scale`` (an ``autoscaling/v1`` Scale)."""
        storage = self.server.storage
        method = request.method
        if method == "GET":
            stored = storage.get(resource, name, namespace)
        elif method == "PUT":
            replicas, rv = _scale.replicas_from_scale(name, self._decode_body(body))
            stored = storage.scale(
                resource, name, namespace, replicas, rv, dry_run=_dry_run(request)
            )
        elif method == "PATCH":
            content_type = self.headers.get("Content-Type") or ""
            if content_type.split(";")[0].strip() == "application/apply-patch+yaml":
                raise StatusError(
                    415,
                    "UnsupportedMediaType",
                    "server-side apply is not supported by the emulator",
                )
            current = _scale.to_scale(resource, storage.get(resource, name, namespace).obj)
            try:
                patched = _patch.apply_patch(current, body, content_type, resource)
            except _patch.PatchError as exc:
                reason = _status.REASONS.get(exc.status, "BadRequest")
                raise StatusError(exc.status, reason, exc.message) from None
            replicas, rv = _scale.replicas_from_scale(name, patched)
            # As for any patch, only a resourceVersion the patch itself sets
            # is a precondition.
            if not _rv_set_by_patch(body):
                rv = ""
            stored = storage.scale(
                resource, name, namespace, replicas, rv, dry_run=_dry_run(request)
            )
        else:
            raise _status.method_not_allowed()
        self._send_json(200, _scale.to_scale(resource, stored.obj))

    def _wants_table(self) -> ModuleType | None:
        """The Table module when the client asked for Table output and it exists."""
        accept = self.headers.get("Accept") or ""
        if "as=Table" not in accept:
            return None
        return _optional("_table")

    def _create(
        self, resource: Resource, namespace: str | None, body: bytes, *, dry_run: bool
    ) -> None:
        obj = self._decode_body(body)
        stored = self.server.storage.create(resource, obj, namespace, dry_run=dry_run)
        log.debug("created %s %s rv=%s", resource, stored.key, stored.rv)
        self._send(201, stored.full_json)

    def _patch(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        subresource: str,
        body: bytes,
        *,
        dry_run: bool,
    ) -> None:
        storage = self.server.storage
        content_type = self.headers.get("Content-Type") or ""
        if content_type.split(";")[0].strip() == "application/apply-patch+yaml":
            raise StatusError(
                415, "UnsupportedMediaType", "server-side apply is not supported by the emulator"
            )
        current = storage.get(resource, name, namespace)
        try:
            patched = _patch.apply_patch(current.obj, body, content_type, resource)
        except _patch.PatchError as exc:
            reason = _status.REASONS.get(exc.status, "BadRequest")
            raise StatusError(exc.status, reason, exc.message) from None
        meta = patched.get("metadata")
        if not isinstance(meta, dict):
            raise _status.bad_request("the patched object has no metadata")
        # A patch applies to the state it was computed from; only an RV the
        # patch itself sets is a precondition.
        try:
            sent = json.loads(body)
        except ValueError:
            sent = None
        sent_rv = (
            ((sent.get("metadata") or {}).get("resourceVersion") or "")
            if isinstance(sent, dict)
            else ""
        )
        meta = dict(meta)
        meta["resourceVersion"] = sent_rv or current.obj["metadata"]["resourceVersion"]
        patched = dict(patched)
        patched["metadata"] = meta
        keep = not subresource and storage.has_status_subresource(resource)
        stored = storage.update(
            resource,
            patched,
            namespace,
            name,
            subresource=subresource,
            keep_status=keep,
            dry_run=dry_run,
        )
        self._send(200, stored.full_json)

    def _delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        body: bytes,
        request: _Request,
    ) -> None:
        options: Any = {}
        if body.strip():
            options = self._decode_body(body)
            if not isinstance(options, dict):
                raise _status.bad_request("DeleteOptions must be a JSON object")
        preconditions = options.get("preconditions") or {}
        lifecycle = self.server.settings.deletion_lifecycle
        policy = options.get("propagationPolicy") or request.param("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        finalizers = _PROPAGATION_FINALIZERS.get(str(policy or ""), ()) if lifecycle else ()
        stored, deleted = self.server.storage.delete(
            resource,
            name,
            namespace,
            precondition_uid=str(preconditions.get("uid") or ""),
            precondition_rv=str(preconditions.get("resourceVersion") or ""),
            dry_run=_dry_run(request) or bool(options.get("dryRun")),
            add_finalizers=finalizers,
            namespace_lifecycle=lifecycle,
        )
        log.debug("deleted %s %s rv=%s (final=%s)", resource, stored.key, stored.rv, deleted)
        if not deleted or resource in _RETURNS_OBJECT_ON_DELETE:
            self._send(200, stored.full_json)
        else:
            uid = str(stored.obj["metadata"].get("uid", ""))
            self._send_json(200, _status.success(resource, name, uid))

    def _finalize_namespace(self, request: _Request, name: str, body: bytes) -> None:
        """``PUT /api/v1/namespaces/<name>/finalize``: writes ``spec.finalizers``
        (the namespace controller's last step; the status is kept)."""
        if request.method != "PUT":
            raise _status.method_not_allowed()
        obj = self._decode_body(body)
        if not isinstance(obj, dict):
            raise _status.bad_request("a Namespace must be a JSON object")
        storage = self.server.storage
        current = storage.get(NAMESPACES, name, None).obj
        spec: dict[str, Any] = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
        update = {
            **current,
            "metadata": {
                **current["metadata"],
                "resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")
                or current["metadata"]["resourceVersion"],
            },
            "spec": {
                **(current.get("spec") or {}),
                "finalizers": list(spec.get("finalizers") or []),
            },
        }
        stored = storage.update(
            NAMESPACES,
            update,
            None,
            name,
            subresource="finalize",
            keep_status=True,
            dry_run=_dry_run(request),
        )
        self._send(200, stored.full_json)

    def _delete_collection(
        self, request: _Request, resource: Resource, namespace: str | None
    ) -> None:
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        storage = self.server.storage
        deleted = storage.delete_collection(resource, namespace, predicate)
        head = json.dumps(
            {
                "kind": resource.list_kind,
                "apiVersion": resource.api_version,
                "metadata": {"resourceVersion": str(storage.resource_version)},
            },
            separators=(",", ":"),
        ).encode()
        self._send(200, head[:-1] + b',"items":' + join_items(deleted) + b"}")

    # ----------------------------------------------------------------- list

    def _validate_list(self, request: _Request) -> None:
        rv = request.param("resourceVersion") or ""
        match = request.param("resourceVersionMatch") or ""
        cont = request.param("continue") or ""
        if match:
            if not rv:
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                    "provided",
                )
            if cont:
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                )
            if match not in ("Exact", "NotOlderThan"):
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueNotSupported",
                    f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""',
                )
            if match == "Exact" and rv == "0":
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
        if request.param("sendInitialEvents") is not None:
            raise _status.invalid_list_options(
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for list",
            )

    def _wait_for(self, rv: int) -> None:
        storage, settings = self.server.storage, self.server.settings
        if storage.resource_version >= rv:
            return
        if not storage.wait_for_rv(rv, settings.rv_wait_seconds):
            raise _status.resource_version_too_large(rv, storage.resource_version)

    def _list(self, request: _Request, resource: Resource, namespace: str | None) -> None:
        self._validate_list(request)
        storage, settings = self.server.storage, self.server.settings
        raw_rv = request.param("resourceVersion")
        rv = _parse_rv(raw_rv)
        match = request.param("resourceVersionMatch") or ""
        limit = max(request.integer("limit") or 0, 0)
        request.integer("timeoutSeconds")  # validated; lists are never slow enough to need it
        token = request.param("continue") or ""
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        shard_text = request.param("shardSelector")
        shard = shard_predicate(shard_text, settings.sharded_list_and_watch)
        predicate = with_shard(predicate, shard)
        if settings.list_latency > 0:
            self.server.stopping.wait(settings.list_latency)
        start_after: str | None = None
        exact: int | None = None
        if token:
            if raw_rv not in (None, "", "0"):
                raise _status.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
            token_rv, start_after = decode_continue(token)
            storage.check_continue(resource, token_rv, start_after)
            exact = token_rv if token_rv >= 0 else None
        elif rv is None:
            pass
        elif raw_rv == "0":
            limit = 0
        elif match == "Exact":
            self._wait_for(rv)
            exact = rv
        else:
            self._wait_for(rv)
            if not match and limit:
                exact = rv
        result = storage.list_page(
            resource,
            namespace,
            exact_rv=exact,
            limit=limit,
            start_after=start_after,
            predicate=predicate,
        )
        metadata: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            metadata["continue"] = result.continue_token
            if result.remaining is not None:
                metadata["remainingItemCount"] = result.remaining
        if shard is not None:
            metadata[SHARD_INFO_FIELD] = {"selector": shard_text}
        table = self._wants_table()
        if table is not None:
            document = table.to_table(
                resource,
                [s.obj for s in result.items],
                metadata,
                include_object=_include_object(request),
            )
            self._send_json(200, document)
            return
        head = json.dumps(
            {"kind": resource.list_kind, "apiVersion": resource.api_version, "metadata": metadata},
            separators=(",", ":"),
        ).encode()
        self._send_list(head[:-1], result.items)

    # ---------------------------------------------------------------- watch

    def _validate_watch(self, request: _Request, initial: bool | None) -> None:
        match = request.param("resourceVersionMatch") or ""
        if initial is not None:
            if match != "NotOlderThan":
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    "NotOlderThan",
                )
            if self.server.settings.watch_list_mode == "off":
                raise _status.invalid_list_options(
                    "sendInitialEvents",
                    "FieldValueForbidden",
                    "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList "
                    "feature gate is enabled",
                )
        if match:
            if initial is None:
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless "
                    "sendInitialEvents is provided",
                )
            if request.param("continue"):
                raise _status.invalid_list_options(
                    "resourceVersionMatch",
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                )

    def _watch(self, request: _Request, resource: Resource, namespace: str | None) -> None:
        server = self.server
        storage, settings = server.storage, server.settings
        initial_param = request.flag("sendInitialEvents")
        self._validate_watch(request, initial_param)
        raw_rv = request.param("resourceVersion")
        rv = _parse_rv(raw_rv)
        bookmarks = bool(request.flag("allowWatchBookmarks"))
        timeout = request.integer("timeoutSeconds")
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        predicate = with_shard(
            predicate,
            shard_predicate(request.param("shardSelector"), settings.sharded_list_and_watch),
        )
        table = self._wants_table()
        include_object = _include_object(request) if table is not None else ""
        started = time.monotonic()
        deadline = started + timeout if timeout and timeout > 0 else None
        end_bookmark = False
        from_rv: int | None = None
        initial = False
        if initial_param:
            if rv is not None and rv > 0:
                self._wait_for(rv)
            initial = True
            end_bookmark = bookmarks and settings.watch_list_mode != "no-end-bookmark"
        elif initial_param is False:
            from_rv = rv if rv else None
        elif not rv:
            initial = True
        else:
            from_rv = rv
        replay = server.faults.take_replay()
        if replay is not None:
            initial, from_rv, end_bookmark = False, replay, False
        too_old: StatusError | None = None
        watcher: Watcher | None = None
        first: list[tuple[str, Stored]] = []
        try:
            watcher, first, start_rv = storage.open_watch(
                resource,
                namespace,
                predicate,
                from_rv=from_rv,
                initial=initial,
                capacity=max(1, settings.watch_buffer_size),
            )
        except StatusError as error:
            if error.code != 410:
                raise
            too_old = error
        self.send_response(200)
        self.send_header("Content-Type", _JSON)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        log.debug("watch %s ns=%s from=%s initial=%s", resource, namespace, from_rv, initial)
        if too_old is not None or watcher is None:  # a Status is never a Table
            status = dict(too_old.body) if too_old is not None else {}
            status.pop("details", None)
            line = json.dumps({"type": "ERROR", "object": status}, separators=(",", ":"))
            self.wfile.write(_chunk(line.encode() + b"\n") + b"0\r\n\r\n")
            return
        event_line, bookmark_line = _event_line, _bookmark_line
        if table is not None:
            encoder = _TableEvents(table, resource, include_object)
            event_line, bookmark_line = encoder.event, encoder.bookmark
        try:
            self._stream(
                watcher=watcher,
                first=first,
                start_rv=start_rv,
                bookmarks=bookmarks,
                end_bookmark=end_bookmark,
                deadline=deadline,
                event_line=event_line,
                bookmark_line=bookmark_line,
            )
        finally:
            storage.close_watch(watcher)

    def _stream(
        self,
        *,
        watcher: Watcher,
        first: list[tuple[str, Stored]],
        start_rv: int,
        bookmarks: bool,
        end_bookmark: bool,
        deadline: float | None,
        event_line: Callable[[str, Stored], bytes] = _event_line,
        bookmark_line: Callable[..., bytes] = _bookmark_line,
    ) -> None:
        storage, settings = self.server.storage, self.server.settings
        resource = watcher.resource
        write = self.wfile.write
        for start in range(0, len(first), 500):
            batch = first[start : start + 500]
            write(b"".join([_chunk(event_line(t, stored)) for t, stored in batch]))
        if end_bookmark:
            write(_chunk(bookmark_line(resource, start_rv, initial_end=True)))
        next_bookmark = time.monotonic() + settings.bookmark_interval
        deadline_bookmark_sent = False
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            wait = settings.heartbeat
            if deadline is not None:
                wait = min(wait, deadline - now)
            if bookmarks:
                wait = min(wait, max(0.0, next_bookmark - now))
            events, rv = storage.next_batch(watcher, wait)
            end = watcher.end
            if end is not None and not events:
                self._end_stream(end, watcher)
                return
            if events:  # one chunk per event, a batch per write
                write(b"".join([_chunk(event_line(t, stored)) for t, stored in events]))
            now = time.monotonic()
            if bookmarks and rv >= 0:
                due = now >= next_bookmark
                near_deadline = (
                    deadline is not None
                    and not deadline_bookmark_sent
                    and now >= deadline - settings.deadline_bookmark
                )
                if due or near_deadline:
                    write(_chunk(bookmark_line(resource, rv)))
                    next_bookmark = now + settings.bookmark_interval
                    deadline_bookmark_sent = deadline_bookmark_sent or near_deadline
            if not events and self._client_gone():
                self.close_connection = True
                return
        write(b"0\r\n\r\n")

    def _end_stream(self, reason: str, watcher: Watcher) -> None:
        if reason in ("drop", "drop-mid-line"):
            if reason == "drop-mid-line":
                partial = _bookmark_line(watcher.resource, 0)
                with contextlib.suppress(OSError):  # the client is gone already
                    self.wfile.write(_chunk(partial[: len(partial) // 2]))
            self.close_connection = True
            with contextlib.suppress(OSError):  # already closed
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reason == "overflow":
            log.info(
                "watch of %s disconnected: slow consumer overflowed its buffer", watcher.resource
            )
        if reason in ("restart", "stopped"):
            self.close_connection = True
        self.wfile.write(b"0\r\n\r\n")

    def _client_gone(self) -> bool:
        connection = self.connection
        try:
            readable, _, _ = select.select([connection], [], [], 0)
            if not readable:
                return False
            if isinstance(connection, ssl.SSLSocket):
                # No peeking through TLS. A client sends nothing while a watch
                # streams, so what is readable is its close_notify or EOF (or
                # bytes it should not send): the stream is over either way,
                # unless only part of a TLS record has arrived.
                connection.settimeout(0)
                try:
                    connection.recv(1)
                except ssl.SSLWantReadError:
                    return False
                finally:
                    connection.settimeout(self.timeout)
                return True
            return bool(connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True
