"""Shared helpers of the manager tests: probing an endpoint over HTTP."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable

WAIT = 20.0


def get(address: tuple[str, int] | None, path: str) -> tuple[int, str]:
    """GET ``path`` from ``address``: (status, body text)."""
    assert address is not None
    host, port = address
    conn = http.client.HTTPConnection(host or "127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def poll_until(
    condition: Callable[[], bool], timeout: float = WAIT, stop: threading.Event | None = None
) -> bool:
    """Ask ``condition`` again, every 20 ms of waiting on an event nobody sets
    (the probe is an HTTP round trip: there is nothing to wait on), until it
    holds or ``timeout`` passes."""
    idle = stop or threading.Event()
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline or idle.wait(0.02):
            return condition()
    return True
