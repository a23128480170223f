"""Injected faults of the HTTP side: failing requests (``fail_next``),
delayed ones (``delay_next``) and watches that replay old events
(``replay_events_from``), and the answer a failing request gets.
"""

from __future__ import annotations

import threading
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._exchange import Headers, Reply
from informers.testing.apiserver._status import StatusError

__all__ = ["FaultState", "send_failure"]


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
        headers: Headers | None,
        prefix: str | None,
        header: tuple[str, str] | None,
    ) -> bool:
        if prefix is not None and not path.startswith(prefix):
            return False
        if header is None:
            return True
        return headers is not None and headers.get(header[0]) == header[1]

    def take_failure(
        self, path: str, headers: Headers | None = None
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

    def take_delay(self, path: str, headers: Headers | None = None) -> float:
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


def send_failure(reply: Reply, status: int, retry_after: int | None, plain: bool) -> None:
    """Answer with an injected failure: a ``Status`` (429 with
    ``Retry-After``, default 1), or with ``plain`` the text/plain body API
    priority and fairness sends."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    if status == 429 and plain:
        headers.setdefault("Retry-After", "1")
        headers["X-Content-Type-Options"] = "nosniff"
        reply.send(
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
        reply.send(
            error.code,
            error.body["message"].encode() + b"\n",
            "text/plain; charset=utf-8",
            error.headers,
        )
    else:
        reply.send_status(error)
