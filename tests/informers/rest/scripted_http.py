"""A tiny scripted HTTP server speaking just enough of the API for the
lister-watcher and discovery tests that need answers the emulator would never
give (chunk boundaries, crafted discovery documents, error bodies).

Not a test module: the tests beside it import it (``from scripted_http import
...``; pytest puts this directory on ``sys.path``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import kubernetes.client

__all__ = ["Script", "j", "make_handler", "serve", "status"]


class Script:
    """What the server answers, keyed by path; records requests."""

    def __init__(self) -> None:
        self.responses: dict[str, tuple[int, dict[str, str], list[bytes]]] = {}
        self.requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = []
        self.hold = threading.Event()  # watch bodies wait on this after their chunks
        self.sized_watch = False  # watch bodies with a Content-Length, not chunked


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            script.requests.append((url.path, query, dict(self.headers)))
            key = url.path + ("?watch" if query.get("watch") else "")
            status, headers, chunks = script.responses.get(key, (404, {}, [b"{}"]))
            self.send_response(status)
            self.send_header("Connection", "close")
            for k, v in headers.items():
                self.send_header(k, v)
            if "watch" in key and status == 200 and not script.sized_watch:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                script.hold.wait(10)
                self.wfile.write(b"0\r\n\r\n")
                return
            body = b"".join(chunks)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def serve() -> Iterator[tuple[Script, Any]]:
    """A running server and an ApiClient for it (bearer token ``sekret``);
    everything stopped and joined on exit."""
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
    httpd.daemon_threads = False  # server_close() joins them
    thread = threading.Thread(
        target=httpd.serve_forever, args=(0.05,), name="test-http", daemon=True
    )
    thread.start()
    config = kubernetes.client.Configuration()
    config.host = f"http://127.0.0.1:{httpd.server_address[1]}"
    # The entry the client reads: "authorization" before kubernetes 36,
    # "BearerToken" in 36.0.1, either from 36.0.2 on.
    config.api_key = {"authorization": "Bearer sekret", "BearerToken": "Bearer sekret"}
    client = kubernetes.client.ApiClient(config)
    try:
        yield script, client
    finally:
        script.hold.set()
        client.close()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def j(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def status(code: int, reason: str, message: str = "", **extra: Any) -> bytes:
    return j(
        {
            "kind": "Status",
            "status": "Failure",
            "code": code,
            "reason": reason,
            "message": message,
            **extra,
        }
    )
