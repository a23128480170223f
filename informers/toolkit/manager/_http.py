"""The small HTTP server behind the manager's probe and metrics endpoints.

Standard library only (:class:`http.server.ThreadingHTTPServer`): one thread
accepts, one thread per request answers it. Every connection has a socket
timeout, request threads are not daemons and are joined when the server
stops, so :meth:`EndpointServer.stop` leaves no thread behind.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

__all__ = ["EndpointServer", "Response", "parse_bind_address", "query_flag"]

log = logging.getLogger(__name__)

#: (status, content type, body) answered for a GET.
Response = tuple[int, str, bytes]

#: Seconds a connection may stay silent (reading the request, writing the
#: answer) before the server drops it.
_SOCKET_TIMEOUT = 10.0


def parse_bind_address(address: str | None) -> tuple[str, int] | None:
    """``host:port`` (``:8081`` binds every interface, ``127.0.0.1:0`` a free
    loopback port) as ``(host, port)``; ``None``, ``""`` or ``"0"`` is off
    (``None``). Raises :class:`ValueError` for anything else."""
    if address is None:
        return None
    text = address.strip()
    if text in ("", "0"):
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"a bind address is host:port, ':port' or '0' (off), not {address!r}")
    return host.strip("[]"), int(port)


class _Server(ThreadingHTTPServer):
    # Request threads are joined at server_close(): none is left behind.
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True


class EndpointServer:
    """Serves GET requests on ``address`` with ``handle(path, query)``.

    ``handle`` is called on a request thread with the path and the parsed
    query string (``?verbose`` gives ``{"verbose": [""]}``) and answers a
    :data:`Response`; an exception it raises is logged and answered with 500.
    :meth:`start` binds (raising :class:`OSError` when it cannot) and serves
    on a thread named ``<name>-http``; :meth:`stop` stops accepting, joins the
    request threads (each bounded by the socket timeout) and the accept
    thread. Thread-safe; start once.
    """

    def __init__(
        self,
        name: str,
        address: tuple[str, int],
        handle: Callable[[str, dict[str, list[str]]], Response],
    ) -> None:
        self._name = name
        self._address = address
        self._handle = handle
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # guards _server and _thread

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(host, port)`` once started (the real port for port 0)."""
        with self._lock:
            server = self._server
        if server is None:
            return self._address
        host, port = server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        handle, name = self._handle, self._name

        class Handler(BaseHTTPRequestHandler):
            timeout = _SOCKET_TIMEOUT
            server_version = "kube-informers"

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                try:
                    status, ctype, body = handle(
                        parts.path, parse_qs(parts.query, keep_blank_values=True)
                    )
                except Exception:
                    log.exception("%s endpoint: answering %s failed", name, parts.path)
                    status, ctype, body = 500, "text/plain; charset=utf-8", b"internal error\n"
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Content-Type-Options", "nosniff")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s endpoint: " + format, name, *args)

        server = _Server(self._address, Handler)
        server.timeout = _SOCKET_TIMEOUT
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name=f"{name}-http"
        )
        with self._lock:
            self._server, self._thread = server, thread
        thread.start()
        host, port = self.address
        log.info("%s endpoint serving on %s:%d", name, host or "*", port)

    def stop(self) -> None:
        """Stop serving and join every thread; idempotent."""
        with self._lock:
            server, thread = self._server, self._thread
            self._thread = None
        if server is None or thread is None:
            return
        server.shutdown()
        thread.join()
        server.server_close()  # joins the request threads


def query_flag(query: dict[str, list[str]], name: str) -> bool:
    """Whether ``?name`` (with any value but ``false``/``0``) is in the query."""
    values = query.get(name)
    return values is not None and all(v.lower() not in ("false", "0") for v in values)
