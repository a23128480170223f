"""Metadata-only answers: the ``as=PartialObjectMetadata`` /
``as=PartialObjectMetadataList`` content negotiation of the real API server
(k8s.io/apiserver ``handlers/response.go``, ``transformObject``), for every
kind, built-in or custom.

A request whose ``Accept`` asks for ``application/json;as=PartialObjectMetadata
(List);g=meta.k8s.io;v=v1`` (or ``v1beta1``) gets, instead of whole objects,
objects of kind ``PartialObjectMetadata`` with that apiVersion and only the
object's ``metadata``:

* get: ``as=PartialObjectMetadata``; ``as=PartialObjectMetadataList`` is
  406 ("... the requested object is not a list");
* list: ``as=PartialObjectMetadataList`` -- a ``PartialObjectMetadataList``
  whose items carry their kind and apiVersion, with the list's
  resourceVersion, continue token and remainingItemCount;
  ``as=PartialObjectMetadata`` is 406 ("... the requested object is a list");
* watch (and watch-list with ``sendInitialEvents``): ``as=PartialObjectMetadata``;
  every event's object, bookmarks included, in that form. The real server
  fails such a watch asked for ``as=PartialObjectMetadataList`` on its first
  event; the emulator answers 406 before the stream starts.

The ``Accept`` clauses are tried in order, as the server's negotiation does:
the first one the emulator can serve decides. A JSON clause (or ``*/*``)
without ``as`` means whole objects; a protobuf clause is passed over (the
emulator speaks JSON); an ``as=Table`` clause belongs to the Table verbs.
When every clause asks for a transformation the server does not offer
(another ``as``, or ``g``/``v`` other than ``meta.k8s.io`` ``v1``/``v1beta1``),
the answer is 406 NotAcceptable.

The metadata-only form of a stored version is built once and cached on it
(``Stored.partial``, ``v1`` only), so a list is still a join of cached bytes.
Pure functions apart from that cache (whose double computation from two
threads is harmless); thread-safe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from informers.testing.apiserver._exchange import Request
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._stored import Stored
from informers.wire.partial import (
    META_API_VERSION,
    PARTIAL_KIND,
    PARTIAL_LIST_KIND,
    as_partial_object_metadata,
)
from informers.wire.resources import Resource

__all__ = [
    "Partial",
    "bookmark_line",
    "check_watch",
    "event_line",
    "get_json",
    "list_parts",
    "wanted",
]

_JSON_TYPES = frozenset(("application/json", "application/*", "*/*"))
_META_GROUP = "meta.k8s.io"
_META_VERSIONS = frozenset(("v1", "v1beta1"))


@dataclass(frozen=True, slots=True)
class Partial:
    """What a request asked for: ``as`` (``PartialObjectMetadata`` or
    ``PartialObjectMetadataList``) and the apiVersion of the answer."""

    target: str
    api_version: str


def _clauses(accept: str) -> list[tuple[str, dict[str, str]]]:
    clauses = []
    for clause in accept.split(","):
        media, *params = (part.strip() for part in clause.split(";"))
        if not media:
            continue
        parsed: dict[str, str] = {}
        for param in params:
            name, _, value = param.partition("=")
            parsed[name.strip().lower()] = value.strip().strip('"')
        clauses.append((media.lower(), parsed))
    return clauses


def wanted(request: Request) -> Partial | None:
    """The metadata-only form ``request`` negotiated, or ``None`` (whole
    objects, or a Table). Raises 406 when no ``Accept`` clause can be
    served (see the module documentation)."""
    accept = request.header("Accept")
    if "as=" not in accept:
        return None
    refused: list[str] = []
    for media, params in _clauses(accept):
        target = params.get("as", "")
        if not target:
            return None  # whole objects (JSON, YAML or protobuf: the emulator answers JSON)
        if media not in _JSON_TYPES:
            continue  # e.g. protobuf;as=...: a later JSON clause may follow
        if target == "Table":
            return None
        group, version = params.get("g", ""), params.get("v", "")
        if (
            target in (PARTIAL_KIND, PARTIAL_LIST_KIND)
            and group == _META_GROUP
            and version in _META_VERSIONS
        ):
            return Partial(target, f"{_META_GROUP}/{version}")
        refused.append(f"{media};as={target};g={group};v={version}")
    raise _not_acceptable(
        "only the following media types are accepted: application/json, "
        "application/yaml, application/vnd.kubernetes.protobuf"
        + (f" (not {', '.join(refused)})" if refused else "")
    )


def _not_acceptable(message: str) -> StatusError:
    return StatusError(406, "NotAcceptable", message)


def _go_type(resource: Resource, kind: str) -> str:
    return f"*{resource.version}.{kind}" if resource.group == "" else f"*{resource.group}.{kind}"


def _stored_partial(stored: Stored, api_version: str) -> Stored:
    if api_version == META_API_VERSION:
        cached = stored.partial
        if cached is None:
            cached = Stored(as_partial_object_metadata(stored.obj), stored.key, stored.rv, False)
            stored.partial = cached
        return cached
    return Stored(as_partial_object_metadata(stored.obj, api_version), stored.key, stored.rv, False)


def get_json(partial: Partial, resource: Resource, stored: Stored) -> bytes:
    """The body of a get asking for ``partial`` (406 for a list form)."""
    if partial.target != PARTIAL_KIND:
        raise _not_acceptable(
            f"you requested {PARTIAL_LIST_KIND}, but the requested object is not a list "
            f"({_go_type(resource, resource.kind)})"
        )
    return _stored_partial(stored, partial.api_version).full_json


def list_parts(
    partial: Partial, resource: Resource, metadata: dict[str, Any], items: list[Stored]
) -> tuple[bytes, list[Stored]]:
    """The head (JSON up to, without, ``,"items":``) and the items of a
    list asking for ``partial`` (406 for the single-object form)."""
    if partial.target != PARTIAL_LIST_KIND:
        raise _not_acceptable(
            f"you requested {PARTIAL_KIND}, but the requested object is a list "
            f"({_go_type(resource, resource.list_kind)})"
        )
    head = json.dumps(
        {"kind": PARTIAL_LIST_KIND, "apiVersion": partial.api_version, "metadata": metadata},
        separators=(",", ":"),
    ).encode()
    return head[:-1], [_stored_partial(s, partial.api_version) for s in items]


def check_watch(partial: Partial, resource: Resource) -> None:
    """406 for a watch asking for the list form (see the module documentation)."""
    if partial.target != PARTIAL_KIND:
        raise _not_acceptable(
            f"you requested {PARTIAL_LIST_KIND}, but the requested object is not a list "
            f"({_go_type(resource, resource.kind)})"
        )


def event_line(partial: Partial) -> Callable[[str, Stored], bytes]:
    """The watch event encoder of ``partial``."""
    api_version = partial.api_version

    def line(event_type: str, stored: Stored) -> bytes:
        obj = _stored_partial(stored, api_version).full_json
        return b'{"type":"' + event_type.encode() + b'","object":' + obj + b"}\n"

    return line


def bookmark_line(partial: Partial) -> Callable[..., bytes]:
    """The watch bookmark encoder of ``partial`` (signature of the watch
    verb's own: ``(resource, rv, initial_end=False)``)."""
    api_version = partial.api_version

    def line(_resource: Resource, rv: int, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": PARTIAL_KIND, "apiVersion": api_version, "metadata": meta}
        text = json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":"))
        return text.encode() + b"\n"

    return line
