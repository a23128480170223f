"""Subresources with their own verbs: ``scale`` (an ``autoscaling/v1``
Scale over ``spec.replicas``: GET, PUT, PATCH) and a Namespace's
``finalize`` (PUT). The ``status`` subresource is served by the write and
patch verbs."""

from __future__ import annotations

import json
from typing import Any

from informers.testing.apiserver import _scale, _status
from informers.testing.apiserver._body import decode_body
from informers.testing.apiserver._crd import views as _crd_views
from informers.testing.apiserver._exchange import Reply, Request, dry_run, field_manager
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._verbs_patch import apply_request_patch, patch_type
from informers.wire.resources import NAMESPACES, Resource

__all__ = ["Subresources", "rv_set_by_patch"]


def rv_set_by_patch(body: bytes) -> str:
    """The ``metadata.resourceVersion`` a (merge, strategic or JSON) patch
    sets itself, or ""."""
    try:
        sent = json.loads(body)
    except ValueError:
        return ""
    if isinstance(sent, dict):
        meta = sent.get("metadata")
        return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""
    if isinstance(sent, list):
        for op in sent:
            if (
                isinstance(op, dict)
                and op.get("op") in ("add", "replace")
                and op.get("path") == "/metadata/resourceVersion"
            ):
                return str(op.get("value") or "")
    return ""


class Subresources:
    """``scale`` and ``finalize``. Stateless apart from storage; called from
    every connection thread at once."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def scale(
        self, reply: Reply, request: Request, resource: Resource, namespace: str, name: str
    ) -> None:
        """GET, PUT and PATCH of ``<name>/scale`` (an ``autoscaling/v1`` Scale)."""
        storage = self._storage
        method = request.method
        paths = None if resource in _scale.SCALABLE else _crd_views.scale_paths(storage, resource)

        def to_scale(obj: dict[str, Any]) -> dict[str, Any]:
            if paths is not None:
                return _crd_views.to_scale(paths, obj)
            return _scale.to_scale(resource, obj)

        replicas_path = ".spec.replicas" if paths is None else _crd_views.from_scale(paths)
        if method == "GET":
            stored = storage.get(resource, name, namespace)
        elif method == "PUT":
            replicas, rv = _scale.replicas_from_scale(name, decode_body(request))
            stored = storage.scale(
                resource,
                name,
                namespace,
                replicas,
                rv,
                dry_run=dry_run(request),
                manager=field_manager(request),
                replicas_path=replicas_path,
            )
        elif method == "PATCH":
            content_type = patch_type(request)
            current = to_scale(storage.get(resource, name, namespace).obj)
            patched = apply_request_patch(current, request, content_type, resource)
            replicas, rv = _scale.replicas_from_scale(name, patched)
            # As for any patch, only a resourceVersion the patch itself sets
            # is a precondition.
            if not rv_set_by_patch(request.body):
                rv = ""
            stored = storage.scale(
                resource,
                name,
                namespace,
                replicas,
                rv,
                dry_run=dry_run(request),
                manager=field_manager(request),
                replicas_path=replicas_path,
            )
        else:
            raise _status.method_not_allowed()
        reply.send_json(200, to_scale(stored.obj))

    def finalize_namespace(self, reply: Reply, request: Request, name: str) -> None:
        """``PUT /api/v1/namespaces/<name>/finalize``: writes ``spec.finalizers``
        (the namespace controller's last step; the status is kept)."""
        if request.method != "PUT":
            raise _status.method_not_allowed()
        obj = decode_body(request)
        if not isinstance(obj, dict):
            raise _status.bad_request("a Namespace must be a JSON object")
        storage = self._storage
        current = storage.get(NAMESPACES, name, None).obj
        spec: dict[str, Any] = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
        update = {
            **current,
            "metadata": {
                **current["metadata"],
                "resourceVersion": (obj.get("metadata") or {}).get("resourceVersion")
                or current["metadata"]["resourceVersion"],
            },
            "spec": {
                **(current.get("spec") or {}),
                "finalizers": list(spec.get("finalizers") or []),
            },
        }
        stored = storage.update(
            NAMESPACES,
            update,
            None,
            name,
            subresource="finalize",
            keep_status=True,
            dry_run=dry_run(request),
        )
        reply.send(200, stored.full_json)
