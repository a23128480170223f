"""The endpoints beside the resources: ``/version``, discovery (``/api``,
``/apis``, each group version's resource list), the health checks and
OpenAPI v3. The documents are built by :mod:`._discovery` and
:mod:`._openapi` from the resources served now."""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver import _discovery, _openapi, _status
from informers.testing.apiserver._crd.views import scalable
from informers.testing.apiserver._exchange import Reply, Request
from informers.testing.apiserver._storage import Storage

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
        elif path == "/api":
            reply.send_json(200, _discovery.core_versions_document())
        elif path == "/apis":
            reply.send_json(200, _discovery.group_list_document(storage.resources()))
        elif path in ("/healthz", "/readyz", "/livez"):
            reply.send(200, b"ok", "text/plain; charset=utf-8")
        elif path.startswith("/openapi/"):
            self._openapi(reply, path)
        else:
            parts = path.strip("/").split("/")
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
                scalable(storage),
            )
            if document is None:
                raise _status.no_such_route()
            reply.send_json(200, document)
        return True

    def _openapi(self, reply: Reply, path: str) -> None:
        if not path.startswith("/openapi/v3"):
            raise _status.no_such_route()
        resources = self._storage.resources()
        document: dict[str, Any] | None
        if path == "/openapi/v3":
            document = _openapi.openapi_v3_index(resources)
        else:
            rest = path[len("/openapi/v3/") :]
            group_version = rest[len("api/") :] if rest.startswith("api/") else rest[5:]
            document = _openapi.openapi_v3_document(group_version, resources)
        if document is None:
            raise _status.no_such_route()
        reply.send_json(200, document)
