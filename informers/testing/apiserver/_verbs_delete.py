"""The delete verbs: DELETE of one object (DeleteOptions: preconditions,
``propagationPolicy``, ``dryRun``, ``gracePeriodSeconds``) and of a
collection (with selectors; each object deleted with the same options, so
pods terminate gracefully there too)."""

from __future__ import annotations

import json
import logging
from typing import Any

from informers.testing.apiserver import _graceful, _status
from informers.testing.apiserver._body import decode_body
from informers.testing.apiserver._exchange import Reply, Request, dry_run
from informers.testing.apiserver._filtering import build_predicate
from informers.testing.apiserver._schema.kinds import RETURNS_OBJECT_ON_DELETE
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._stored import join_items
from informers.testing.apiserver._writes import DeleteOptions
from informers.wire.resources import PODS, Resource

__all__ = ["DeleteVerbs"]

log = logging.getLogger("informers.testing.apiserver")

#: The finalizer a DELETE's ``propagationPolicy`` adds for the garbage collector.
_PROPAGATION_FINALIZERS: dict[str, tuple[str, ...]] = {
    "Foreground": ("foregroundDeletion",),
    "Orphan": ("orphan",),
}


def _options_body(request: Request) -> dict[str, Any]:
    """The request's DeleteOptions body ({} without one)."""
    if not request.body.strip():
        return {}
    options = decode_body(request)
    if not isinstance(options, dict):
        raise _status.bad_request("DeleteOptions must be a JSON object")
    return options


class DeleteVerbs:
    """DELETE of an object or a collection. Stateless apart from its
    collaborators; called from every connection thread at once. With
    ``settings.deletion_lifecycle`` a propagation policy adds its finalizer
    and a Namespace waits for its controller."""

    def __init__(self, storage: Storage, settings: Settings) -> None:
        self._storage = storage
        self._settings = settings

    def _options(
        self, request: Request, resource: Resource, options: dict[str, Any]
    ) -> DeleteOptions:
        """What a DELETE (of one object or each of a collection) asks for,
        besides preconditions: dry run, the propagation policy's
        finalizers, the pods' grace period."""
        lifecycle = self._settings.deletion_lifecycle
        policy = options.get("propagationPolicy") or request.param("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        finalizers = _PROPAGATION_FINALIZERS.get(str(policy or ""), ()) if lifecycle else ()
        return {
            "dry_run": dry_run(request) or bool(options.get("dryRun")),
            "add_finalizers": finalizers,
            "namespace_lifecycle": lifecycle,
            "graceful": lifecycle and resource == PODS,
            "grace_seconds": _graceful.requested_grace(
                options, request.param("gracePeriodSeconds")
            ),
        }

    def delete(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None, name: str
    ) -> None:
        options = _options_body(request)
        preconditions = options.get("preconditions") or {}
        asked = self._options(request, resource, options)
        asked["precondition_uid"] = str(preconditions.get("uid") or "")
        asked["precondition_rv"] = str(preconditions.get("resourceVersion") or "")
        stored, deleted = self._storage.delete(resource, name, namespace, **asked)
        log.debug("deleted %s %s rv=%s (final=%s)", resource, stored.key, stored.rv, deleted)
        if not deleted or (resource.group, resource.plural) in RETURNS_OBJECT_ON_DELETE:
            reply.send(200, stored.full_json)
        else:
            uid = str(stored.obj["metadata"].get("uid", ""))
            success = _status.success(resource, name, uid)
            reply.send(200, json.dumps(success, separators=(",", ":")).encode() + b"\n")

    def delete_collection(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None
    ) -> None:
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        storage = self._storage
        options = self._options(request, resource, _options_body(request))
        deleted = storage.delete_collection(resource, namespace, predicate, **options)
        head = json.dumps(
            {
                "kind": resource.list_kind,
                "apiVersion": resource.api_version,
                "metadata": {"resourceVersion": str(storage.resource_version)},
            },
            separators=(",", ":"),
        ).encode()
        reply.send(200, head[:-1] + b',"items":' + join_items(deleted) + b"}")
