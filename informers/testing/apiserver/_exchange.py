"""One HTTP exchange as the verbs see it: the parsed :class:`Request`, and the
:class:`Reply` they answer through (the connection's handler implements it).

A verb reads the request, calls storage, and answers with exactly one
``send*`` call, or with :meth:`Reply.start_stream` and its writes (a watch).
It raises :class:`~._status.StatusError` to answer with a Status instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from informers.testing.apiserver import _status
from informers.testing.apiserver._apply.managed import manager_name
from informers.testing.apiserver._stored import Stored

__all__ = [
    "field_manager",
    "JSON",
    "PROTOBUF",
    "Headers",
    "Reply",
    "Request",
    "chunk",
    "dry_run",
    "parse_rv",
]

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"


class Headers(Protocol):
    """What the emulator reads of request headers (``http.client.HTTPMessage``:
    case-insensitive ``get``)."""

    def get(self, name: str, /) -> Any: ...


class Reply(Protocol):
    """How a verb answers. Used from the connection's thread only."""

    #: Set to close the connection after this exchange.
    close_connection: bool

    def send(
        self,
        code: int,
        body: bytes,
        content_type: str = JSON,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``code`` with ``body`` (headers and a small body in one write)."""

    def send_json(self, code: int, obj: Any) -> None:
        """Answer ``code`` with ``obj`` as compact JSON."""

    def send_status(self, error: _status.StatusError) -> None:
        """Answer with the Status of ``error`` (and its headers)."""

    def send_list(self, head: bytes, items: list[Stored]) -> None:
        """Answer 200 with a list: ``head`` is its JSON up to (without)
        ``,"items":``; long lists are streamed chunked."""

    def start_stream(self) -> Callable[[bytes], object]:
        """Send a chunked 200 JSON response's head; returns the write function
        for its chunks (see :func:`chunk`)."""

    def client_gone(self) -> bool:
        """Whether the client closed its end (checked while a watch is idle)."""

    def drop(self) -> None:
        """Cut the connection without a clean end."""


def chunk(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class Request:
    """What a route needs to know about the request: ``path`` without its
    query or trailing slash, ``query`` as parsed (every value of a name),
    the headers and the (already read) body."""

    def __init__(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        headers: Headers | None = None,
        body: bytes = b"",
    ) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str:
        """The value of header ``name`` ("" when absent)."""
        return str(self.headers.get(name) or "") if self.headers is not None else ""

    def param(self, name: str) -> str | None:
        """The last value of query parameter ``name``, or None."""
        values = self.query.get(name)
        return values[-1] if values else None

    def flag(self, name: str) -> bool | None:
        """A boolean query parameter (None when absent; 400 when not one)."""
        value = self.param(name)
        if value is None:
            return None
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0", ""):
            return False
        raise _status.bad_request(f"invalid boolean value {value!r} for {name}")

    def integer(self, name: str) -> int | None:
        """An integer query parameter (None when absent or empty; 400 when
        not one)."""
        value = self.param(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise _status.bad_request(
                f"invalid value {value!r} for {name}: not an integer"
            ) from None


def dry_run(request: Request) -> bool:
    """``dryRun=All``: validate and answer, store nothing (400 for other values)."""
    values = request.query.get("dryRun")
    if not values:
        return False
    for value in values:
        if value != "All":
            raise _status.bad_request(f'unsupported dryRun value "{value}": only "All"')
    return True


def parse_rv(value: str | None) -> int | None:
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


def field_manager(request: Request) -> str:
    """The field manager of a write: ``fieldManager``, else derived from the
    User-Agent (the part before its first ``/``), as the API server does."""
    return manager_name(request.param("fieldManager"), request.header("User-Agent") or None)
