"""Table answers (``kubectl get``): whether a request asked for a ``Table``,
its ``includeObject`` option, and watch events encoded as Tables. The Tables
themselves are built by :func:`._table.to_table`.
"""

from __future__ import annotations

import json
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._exchange import Request
from informers.testing.apiserver._stored import Stored
from informers.testing.apiserver._table import to_table
from informers.wire.resources import Resource

__all__ = ["TableEvents", "include_object", "wants_table"]


def wants_table(request: Request) -> bool:
    """Whether the client asked for Table output (``Accept: ...;as=Table``)."""
    return "as=Table" in request.header("Accept")


def include_object(request: Request) -> str:
    """The ``includeObject`` table option (400 for an unknown value)."""
    value = request.param("includeObject") or "PartialObjectMetadata"
    if value not in ("PartialObjectMetadata", "Object", "None"):
        raise _status.bad_request(f'unrecognized includeObject value: "{value}"')
    return value


class TableEvents:
    """Encodes one watch stream's events as ``Table`` objects (a watch asked
    for ``as=Table``), the way the real server does: each event's object is a
    Table of one row; only the first Table carries ``columnDefinitions``
    (later ones hold ``null``, and kubectl reuses the columns it has), so
    ``kubectl get -w`` prints one header. A BOOKMARK's object is a Table with
    no rows whose metadata carries the resourceVersion. Not thread-safe: one
    per stream."""

    def __init__(
        self,
        resource: Resource,
        include_object: str,
        custom: list[tuple[str, str, Any, int]] | None = None,
    ) -> None:
        self._resource = resource
        self._include = include_object
        self._custom = custom
        self._headers_sent = False

    def _line(self, event_type: str, objects: list[dict[str, Any]], rv: str) -> bytes:
        document = to_table(
            self._resource,
            objects,
            {"resourceVersion": rv},
            include_object=self._include,
            custom=self._custom,
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
