"""The endpoints beside the resources: ``/version``, discovery (``/api``,
``/apis``, each group version's resource list), the health checks and
OpenAPI v3. The documents are built by :mod:`._discovery` and
:mod:`._openapi` from the resources served now."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from informers.testing.apiserver import _discovery, _openapi, _scale, _status
from informers.testing.apiserver import _discovery_aggregated as _aggregated
from informers.testing.apiserver._crd.openapi import crd_definitions, crd_v3_schemas
from informers.testing.apiserver._exchange import Reply, Request
from informers.testing.apiserver._schema import openapi as _schema_openapi
from informers.testing.apiserver._storage import Storage
from informers.wire.resources import CUSTOMRESOURCEDEFINITIONS, Resource

__all__ = ["MetaEndpoints"]


class MetaEndpoints:
    """Serves the GETs outside ``/api/<version>/...`` and
    ``/apis/<group>/<version>/...`` resources. Stateless apart from storage;
    called from every connection thread at once."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def serve(self, reply: Reply, request: Request) -> bool:
        """Answer ``request`` if it is one of these endpoints (True), else
        leave it to the resource routes (False)."""
        path, storage = request.path, self._storage
        if request.method != "GET":
            return False
        if path == "/version":
            reply.send_json(200, _discovery.version_document())
        elif path in ("/api", "/apis") and _aggregated.wants_aggregated(request.header("Accept")):
            aggregated = _aggregated.discovery_document(
                path == "/api",
                storage.resources(),
                storage.has_status_subresource,
                self._scalable(),
            )
            body = json.dumps(aggregated, separators=(",", ":")).encode()
            reply.send(200, body, _aggregated.CONTENT_TYPE)
        elif path == "/api":
            reply.send_json(200, _discovery.core_versions_document())
        elif path == "/apis":
            reply.send_json(200, _discovery.group_list_document(storage.resources()))
        elif path in ("/healthz", "/readyz", "/livez"):
            reply.send(200, b"ok", "text/plain; charset=utf-8")
        elif path.startswith("/openapi/"):
            self._openapi(reply, request)
        else:
            parts = path.strip("/").split("/")
            if parts[0] == "apis" and len(parts) == 2:
                group = _discovery.group_document(parts[1], storage.resources())
                if group is None:
                    raise _status.no_such_route()
                reply.send_json(200, group)
                return True
            if parts[0] == "api" and len(parts) == 2:
                group_version = parts[1]
            elif parts[0] == "apis" and len(parts) == 3:
                group_version = f"{parts[1]}/{parts[2]}"
            else:
                return False
            document = _discovery.resource_list_document(
                group_version,
                storage.resources(),
                storage.has_status_subresource,
                self._scalable(),
            )
            if document is None:
                raise _status.no_such_route()
            reply.send_json(200, document)
        return True

    def _scalable(self) -> Callable[[Resource], bool]:
        """Which served resources have a ``scale`` subresource: the built-in
        ones and the custom resources whose CRD declares one."""
        custom = _aggregated.crd_scale_keys(self._crds())

        def scalable(res: Resource) -> bool:
            return res in _scale.SCALABLE or (res.group, res.version, res.plural) in custom

        return scalable

    def _crds(self) -> list[dict[str, Any]]:
        """The stored CustomResourceDefinitions."""
        crds = self._storage.list_page(
            CUSTOMRESOURCEDEFINITIONS,
            None,
            exact_rv=None,
            limit=0,
            start_after=None,
            predicate=None,
        ).items
        return [stored.obj for stored in crds]

    def _openapi(self, reply: Reply, request: Request) -> None:
        path = request.path
        if path == "/openapi/v2":
            custom = crd_definitions(self._crds())
            reply.send_json(
                200, _schema_openapi.v2_openapi(request, self._storage.resources(), custom)
            )
            return
        if not path.startswith("/openapi/v3"):
            raise _status.no_such_route()
        resources = self._storage.resources()
        schemas = crd_v3_schemas(self._crds())
        document: dict[str, Any] | None
        if path == "/openapi/v3":
            document = _openapi.openapi_v3_index(resources, schemas)
        else:
            rest = path[len("/openapi/v3/") :]
            group_version = rest[len("api/") :] if rest.startswith("api/") else rest[5:]
            document = _openapi.openapi_v3_document(group_version, resources, schemas)
        if document is None:
            raise _status.no_such_route()
        reply.send_json(200, document)
