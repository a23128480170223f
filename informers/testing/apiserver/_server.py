"""The HTTP side of the emulator: the standard library's threaded HTTP/1.1
server, one :class:`Handler` per connection, and the plumbing of an answer
(Status errors, lists streamed in chunks, watch streams). What a request
means is decided by :class:`~._routing.Router` and the verb objects it
dispatches to.

Every connection runs in its own named thread, tracked by the server so
:meth:`ApiServer.stop` can close the socket and join it; with TLS the
handshake happens in that thread too. A handler never lets an exception
escape: an unexpected one is answered with a 500 Status and logged (kind and
key only, never objects). Request logs carry the method and path, never a
header: the ``Authorization`` header is read only to authenticate.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._body import read_body
from informers.testing.apiserver._exchange import JSON, chunk
from informers.testing.apiserver._faults import FaultState
from informers.testing.apiserver._routing import Router
from informers.testing.apiserver._security import Security
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._stored import Stored, join_items

__all__ = ["HTTPServer", "Handler"]

log = logging.getLogger("informers.testing.apiserver")

#: Lists longer than this are streamed chunked, this many items per write.
_LIST_BATCH = 1000
#: Seconds a new TLS connection may take to finish its handshake.
_HANDSHAKE_TIMEOUT = 10.0


class HTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server tracking its connection threads and sockets.

    With ``ssl_context`` every connection is wrapped in TLS in its own thread
    (a slow handshake never holds up the accept loop). Every connection's
    requests go to one :class:`~._routing.Router`; ``security`` (None: no
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
        self.settings = settings
        self.router = Router(storage, settings, faults, stopping, security)
        self.ssl_context = ssl_context
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


class Handler(BaseHTTPRequestHandler):
    """One connection; requests on it are served in turn (keep-alive). It is
    the :class:`~._exchange.Reply` the verbs answer through."""

    protocol_version = "HTTP/1.1"
    server_version = "kube-informers-apiserver"
    #: Seconds a connection may sit idle (or a write may block) before it is closed.
    timeout = 900
    server: HTTPServer

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

    def _dispatch(self, method: str) -> None:
        try:
            # Always read: an unread body would be taken for the next request.
            body = self._read_body()
            self.server.router.route(self, method, self.path, self.headers, body)
        except StatusError as error:
            self.send_status(error)
        except OSError:  # the connection broke (client gone, drop_watches, stop)
            self.close_connection = True
        except Exception as exc:
            log.exception("request %s %s failed", method, self.path.split("?")[0])
            self.send_status(_status.internal_error(f"{type(exc).__name__}: {exc}"))

    def _read_body(self) -> bytes:
        try:
            return read_body(self.rfile, self.headers, self.server.settings.max_body_bytes)
        except StatusError:
            self.close_connection = True  # the rest of the body must not be parsed
            raise

    # ------------------------------------------------- Reply (see _exchange)

    def send(
        self,
        code: int,
        body: bytes,
        content_type: str = JSON,
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

    def send_json(self, code: int, obj: Any) -> None:
        self.send(code, json.dumps(obj, separators=(",", ":")).encode())

    def send_status(self, error: StatusError) -> None:
        self.send(
            error.code,
            # The real server's encoder ends every body with a newline.
            json.dumps(error.body, separators=(",", ":")).encode() + b"\n",
            headers=error.headers,
        )

    def send_list(self, head: bytes, items: list[Stored]) -> None:
        """A short list goes out in one write with a Content-Length. A long one
        is streamed chunked, ``_LIST_BATCH`` items per write, so no copy of the
        whole body is ever held, and the per-item views are short-lived (a
        long-lived one per item made the garbage collector walk every stored
        object, several times per 100k-item list)."""
        if len(items) <= _LIST_BATCH or self.command == "HEAD":
            self.send(200, b"".join((head, b',"items":', join_items(items), b"}")))
            return
        write = self.start_stream()
        write(chunk(head + b',"items":['))
        separator = b"{"
        for start in range(0, len(items), _LIST_BATCH):
            batch = items[start : start + _LIST_BATCH]
            write(chunk(separator + b",{".join([s.list_rest for s in batch])))
            separator = b",{"
        write(chunk(b"]}") + b"0\r\n\r\n")

    def start_stream(self) -> Callable[[bytes], object]:
        self.send_response(200)
        self.send_header("Content-Type", JSON)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        return self.wfile.write

    def drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):  # already closed
            self.connection.shutdown(socket.SHUT_RDWR)

    def client_gone(self) -> bool:
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
