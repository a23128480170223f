"""Helpers shared by the emulator tests: a pod builder and a raw watch reader
(the other object builders are in tests/helpers.py)."""

from __future__ import annotations

import json
from typing import Any

from urllib3.exceptions import ProtocolError


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
    }


class RawWatch:
    """Reads a watch response line by line as parsed events; ``close()``
    releases the connection (also as a context manager)."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.status = response.status
        self.headers = response.headers
        self._chunks = response.read_chunked(decode_content=False)
        self._pending = b""
        self.ended = False
        self.broken = False

    def __enter__(self) -> RawWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next(self) -> dict[str, Any] | None:
        """The next event, or None when the stream ended."""
        while b"\n" not in self._pending:
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self.ended = True
                return None
            except (ProtocolError, OSError):
                self.broken = True  # the server cut the connection
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        event: dict[str, Any] = json.loads(line)
        return event

    @property
    def partial(self) -> bytes:
        """Bytes received after the last complete line."""
        return self._pending

    def take(self, n: int) -> list[dict[str, Any]]:
        out = []
        for _ in range(n):
            event = self.next()
            if event is None:
                break
            out.append(event)
        return out

    def rest(self) -> list[dict[str, Any]]:
        out = []
        while (event := self.next()) is not None:
            out.append(event)
        return out

    def close(self) -> None:
        self.response.close()
        self.response.release_conn()


def names(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]
