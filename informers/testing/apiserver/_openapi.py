"""OpenAPI v3 documents: just enough for ``kubectl apply``.

``kubectl apply`` (and ``create -f``) validate with ``--validate=strict`` by
default. Before sending, kubectl checks in the server's OpenAPI v3 document
for the object's group/version that the ``patch`` operation of the kind (found
by its ``x-kubernetes-group-version-kind`` extension) takes the
``fieldValidation`` query parameter; if it does, kubectl leaves validation to
the server (``?fieldValidation=Strict``) instead of downloading schemas.

So the documents here describe paths and operations, and the schemas of the
built-in kinds (for ``kubectl explain``, from :mod:`._schema.openapi`) and
of custom resources (:mod:`._crd.openapi`):
``GET /openapi/v3`` answers :func:`openapi_v3_index` and
``GET /openapi/v3/<api/v1 | apis/<group>/<version>>`` answers
:func:`openapi_v3_document`. The patch operations deliberately do not list
``application/strategic-merge-patch+json`` as a request body: kubectl would
then try to compute the patch from (absent) schemas and print a warning;
without it kubectl asks for OpenAPI v2 (which the emulator answers 404) and
then computes strategic merge patches from its compiled-in types.

Pure functions of the served resources; thread-safe.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from informers.testing.apiserver._discovery import SERVER_GIT_VERSION
from informers.testing.apiserver._schema.openapi import v3_schemas
from informers.wire.resources import Resource

__all__ = ["openapi_v3_document", "openapi_v3_index", "openapi_v3_path"]

_QUERY_PARAMETERS = {
    "fieldValidation": "how the server treats unknown or duplicate fields: Ignore, Warn or Strict",
    "dryRun": "when present, do not persist the change (All)",
    "fieldManager": "the name of the actor making the change",
    "pretty": "pretty-print the output",
}


def _schemas(
    group_version: str, served: list[Resource], custom: Mapping[str, dict[str, Any]] | None
) -> dict[str, Any]:
    builtin = v3_schemas(served)
    extra = (custom or {}).get(group_version)
    return dict(sorted({**builtin, **extra}.items())) if extra else builtin


def openapi_v3_path(group_version: str) -> str:
    """The index key of ``group_version``: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group_version}" if "/" in group_version else f"api/{group_version}"


def _group_versions(resources: Iterable[Resource]) -> list[str]:
    seen: dict[str, None] = {}
    for res in resources:
        seen.setdefault(res.group_version, None)
    return list(seen)


def openapi_v3_index(
    resources: Iterable[Resource], custom: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The ``/openapi/v3`` answer: one entry per served group/version, whose
    ``serverRelativeURL`` carries a hash of the document (clients cache by
    it, so a changed CRD schema is a new URL)."""
    resources = list(resources)
    paths = {}
    for group_version in _group_versions(resources):
        document = openapi_v3_document(group_version, resources, custom)
        encoded = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        digest = hashlib.sha256(encoded).hexdigest().upper()
        key = openapi_v3_path(group_version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def _parameter(name: str, location: str, description: str) -> dict[str, Any]:
    param: dict[str, Any] = {
        "name": name,
        "in": location,
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }
    if location == "path":
        param["required"] = True
    return param


def _gvk(res: Resource) -> dict[str, str]:
    return {"group": res.group, "version": res.version, "kind": res.kind}


def _operation_id(action: str, res: Resource, *, namespaced: bool, collection: bool) -> str:
    group = "".join(part.capitalize() for part in (res.group or "core").split(".")[:1])
    scope = "Namespaced" if namespaced else ""
    suffix = f"{res.kind}List" if collection and action != "create" else res.kind
    return f"{action}{group}{res.version.capitalize()}{scope}{suffix}"


def _operation(
    action: str, res: Resource, *, namespaced: bool, collection: bool, queries: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "operationId": _operation_id(action, res, namespaced=namespaced, collection=collection),
        "parameters": [_parameter(q, "query", _QUERY_PARAMETERS[q]) for q in queries],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(res),
    }


def _paths_for(res: Resource) -> dict[str, Any]:
    prefix = res.api_prefix
    scoped = f"{prefix}/namespaces/{{namespace}}/{res.plural}" if res.namespaced else None
    collection = scoped or f"{prefix}/{res.plural}"
    path_params = [_parameter("name", "path", f"name of the {res.kind}")]
    if res.namespaced:
        path_params.append(_parameter("namespace", "path", "object name and auth scope"))
    writes = ("dryRun", "fieldManager", "fieldValidation", "pretty")
    paths: dict[str, Any] = {}
    item: dict[str, Any] = {"parameters": path_params}
    verbs = set(res.verbs)
    ns = res.namespaced
    if "get" in verbs:
        item["get"] = _operation("get", res, namespaced=ns, collection=False, queries=("pretty",))
    if "update" in verbs:
        item["put"] = _operation("replace", res, namespaced=ns, collection=False, queries=writes)
    if "patch" in verbs:
        patch = _operation("patch", res, namespaced=ns, collection=False, queries=writes)
        patch["x-kubernetes-action"] = "patch"
        patch["requestBody"] = {
            "content": {
                "application/json-patch+json": {"schema": {"type": "object"}},
                "application/merge-patch+json": {"schema": {"type": "object"}},
            }
        }
        item["patch"] = patch
    if "delete" in verbs:
        item["delete"] = _operation(
            "delete", res, namespaced=ns, collection=False, queries=("dryRun", "pretty")
        )
    paths[f"{collection}/{{name}}"] = item
    listing: dict[str, Any] = {}
    if ns:
        listing["parameters"] = [_parameter("namespace", "path", "object name and auth scope")]
    if "list" in verbs:
        listing["get"] = _operation(
            "list", res, namespaced=ns, collection=True, queries=("pretty",)
        )
    if "create" in verbs:
        listing["post"] = _operation("create", res, namespaced=ns, collection=True, queries=writes)
    paths[collection] = listing
    return paths


def openapi_v3_document(
    group_version: str,
    resources: Iterable[Resource],
    custom: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any] | None:
    """The OpenAPI v3 document of ``group_version`` (``"v1"``, ``"apps/v1"``):
    item and collection paths of each served kind with their operations,
    ``x-kubernetes-group-version-kind`` and query parameters, and the
    schemas of its built-in kinds (:mod:`._schema.openapi`) and of its
    custom resources (``custom``: group-version -> schemas, from
    :mod:`._crd.openapi`). ``None`` when nothing is served there (the
    server answers 404)."""
    served = [res for res in resources if res.group_version == group_version]
    if not served:
        return None
    paths: dict[str, Any] = {}
    for res in served:
        for path, item in _paths_for(res).items():
            paths.setdefault(path, item)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": SERVER_GIT_VERSION.split("+", 1)[0]},
        "paths": paths,
        "components": {"schemas": _schemas(group_version, served, custom)},
    }
