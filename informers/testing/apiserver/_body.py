"""Request bodies: reading them off the connection (Content-Length or
chunked, within the size limit) and decoding them (JSON, YAML written as
JSON, or Kubernetes protobuf).

A body that is too large is 413, a malformed one 400, an unknown media type
415, as the real server answers them.
"""

from __future__ import annotations

import io
import json
from typing import Any

from informers.testing.apiserver import _protobuf, _protobuf_kinds, _status
from informers.testing.apiserver._exchange import JSON, PROTOBUF, Headers, Request
from informers.testing.apiserver._status import StatusError

__all__ = ["decode_body", "read_body"]


def read_body(rfile: io.BufferedIOBase, headers: Headers, limit: int) -> bytes:
    """The whole body of the request whose ``headers`` were just read from
    ``rfile``. After an error the connection must be closed: what is left
    of the body must not be taken for the next request."""
    too_large = StatusError(
        413,
        "RequestEntityTooLarge",
        f"Request entity too large: limit is {limit}",
    )
    if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
        parts: list[bytes] = []
        total = 0
        while True:
            size_line = rfile.readline(1024)
            try:
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise _status.bad_request("malformed chunked request body") from None
            if size == 0:
                while rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            total += size
            if total > limit:
                raise too_large
            parts.append(rfile.read(size))
            rfile.readline(16)
    length_text = headers.get("Content-Length") or "0"
    try:
        length = int(length_text)
    except ValueError:
        raise _status.bad_request("invalid Content-Length") from None
    if length > limit:
        raise too_large
    return rfile.read(length) if length > 0 else b""


def decode_body(request: Request) -> Any:
    """The request's body as an object, by its ``Content-Type``."""
    content_type = (request.header("Content-Type") or JSON).split(";")[0].strip().lower()
    if content_type == PROTOBUF:
        try:
            return _protobuf.decode_object(request.body, _protobuf_kinds.SCHEMAS)
        except _protobuf.UnsupportedMediaError as exc:
            raise StatusError(415, "UnsupportedMediaType", str(exc)) from None
    if content_type not in (JSON, "application/yaml", "*/*", ""):
        raise StatusError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types "
            f'include: {JSON}, application/yaml, {PROTOBUF}; got "{content_type}"',
        )
    try:
        return json.loads(request.body)
    except ValueError as exc:
        raise _status.bad_request(
            f"the object provided is unrecognized or malformed JSON: {exc}"
        ) from None
