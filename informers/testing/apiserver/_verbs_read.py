"""The read verbs: GET of one object and list (with resourceVersion
semantics, pagination, label, field and shard selectors, and Table output).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from informers.testing.apiserver import _partial, _status
from informers.testing.apiserver._crd.views import table_columns
from informers.testing.apiserver._exchange import Reply, Request, parse_rv
from informers.testing.apiserver._filtering import build_predicate, shard_predicate, with_shard
from informers.testing.apiserver._history import decode_continue
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._table import to_table
from informers.testing.apiserver._verbs_table import include_object, wants_table
from informers.wire.resources import Resource
from informers.wire.selectors.shard import SHARD_INFO_FIELD

__all__ = ["ReadVerbs", "wait_for_rv"]


def wait_for_rv(storage: Storage, settings: Settings, rv: int) -> None:
    """Return once storage has reached ``rv``; 504 (resourceVersion too
    large) when it has not within ``settings.rv_wait_seconds``."""
    if storage.resource_version >= rv:
        return
    if not storage.wait_for_rv(rv, settings.rv_wait_seconds):
        raise _status.resource_version_too_large(rv, storage.resource_version)


def _validate_list(request: Request) -> None:
    rv = request.param("resourceVersion") or ""
    match = request.param("resourceVersionMatch") or ""
    cont = request.param("continue") or ""
    if match:
        if not rv:
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        if cont:
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            )
        if match not in ("Exact", "NotOlderThan"):
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueNotSupported",
                f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""',
            )
        if match == "Exact" and rv == "0":
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
            )
    if request.param("sendInitialEvents") is not None:
        raise _status.invalid_list_options(
            "sendInitialEvents",
            "FieldValueForbidden",
            "Forbidden: sendInitialEvents is forbidden for list",
        )


class ReadVerbs:
    """GET of one object and list. Stateless apart from its collaborators;
    called from every connection thread at once. A list waits out
    ``settings.list_latency`` (ended early by ``stopping``) and, for a future
    resourceVersion, up to ``settings.rv_wait_seconds``."""

    def __init__(self, storage: Storage, settings: Settings, stopping: threading.Event) -> None:
        self._storage = storage
        self._settings = settings
        self._stopping = stopping

    def get(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None, name: str
    ) -> None:
        partial = _partial.wanted(request)
        stored = self._storage.get(resource, name, namespace)
        if partial is not None:
            reply.send(200, _partial.get_json(partial, resource, stored))
        elif wants_table(request):
            document = to_table(
                resource,
                [stored.obj],
                {},
                include_object=include_object(request),
                custom=table_columns(self._storage, resource),
            )
            reply.send_json(200, document)
        else:
            reply.send(200, stored.full_json)

    def list(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None
    ) -> None:
        _validate_list(request)
        partial = _partial.wanted(request)
        storage, settings = self._storage, self._settings
        raw_rv = request.param("resourceVersion")
        rv = parse_rv(raw_rv)
        match = request.param("resourceVersionMatch") or ""
        limit = max(request.integer("limit") or 0, 0)
        request.integer("timeoutSeconds")  # validated; lists are never slow enough to need it
        token = request.param("continue") or ""
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        shard_text = request.param("shardSelector")
        shard = shard_predicate(shard_text, settings.sharded_list_and_watch)
        predicate = with_shard(predicate, shard)
        if settings.list_latency > 0:
            self._stopping.wait(settings.list_latency)
        start_after: str | None = None
        exact: int | None = None
        if token:
            if raw_rv not in (None, "", "0"):
                raise _status.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
            token_rv, start_after = decode_continue(token)
            storage.check_continue(resource, token_rv, start_after)
            exact = token_rv if token_rv >= 0 else None
        elif rv is None:
            pass
        elif raw_rv == "0":
            limit = 0
        elif match == "Exact":
            wait_for_rv(storage, settings, rv)
            exact = rv
        else:
            wait_for_rv(storage, settings, rv)
            if not match and limit:
                exact = rv
        result = storage.list_page(
            resource,
            namespace,
            exact_rv=exact,
            limit=limit,
            start_after=start_after,
            predicate=predicate,
        )
        metadata: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            metadata["continue"] = result.continue_token
            if result.remaining is not None:
                metadata["remainingItemCount"] = result.remaining
        if shard is not None:
            metadata[SHARD_INFO_FIELD] = {"selector": shard_text}
        if partial is not None:
            reply.send_list(*_partial.list_parts(partial, resource, metadata, result.items))
            return
        if wants_table(request):
            document = to_table(
                resource,
                [s.obj for s in result.items],
                metadata,
                include_object=include_object(request),
                custom=table_columns(self._storage, resource),
            )
            reply.send_json(200, document)
            return
        head = json.dumps(
            {"kind": resource.list_kind, "apiVersion": resource.api_version, "metadata": metadata},
            separators=(",", ":"),
        ).encode()
        reply.send_list(head[:-1], result.items)
