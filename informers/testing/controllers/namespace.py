"""The namespace controller: empties a Terminating namespace, then lets it go.

A namespace being deleted (``deletionTimestamp`` set; the emulator marks it
``phase: Terminating`` while ``spec.finalizers`` holds ``kubernetes``) has
every object of every namespaced kind the server serves (found through
discovery, over HTTP) deleted, in the background. While anything is left the
request comes back after ``recheck`` seconds; once the namespace is empty
the ``kubernetes`` finalizer is taken out of ``spec.finalizers`` through the
``finalize`` subresource and the server removes the namespace. The kinds are
discovered again at every pass (custom resources come and go).

An object whose deletion waits only for the garbage collector's finalizers
(``foregroundDeletion``, ``orphan``) but whose kind the collector does not
watch (see :data:`~.garbagecollector.DEPENDENT_KINDS`; custom resources are
watched) would hold the namespace forever: those finalizers are removed.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers.api import ConflictError, JsonApi, NotFoundError
from informers.testing.controllers.garbagecollector import DEPENDENT_KINDS, FOREGROUND, ORPHAN
from informers.toolkit.runtime import Controller, InformerSource, Request, Result
from informers.wire.resources import BUILTIN_RESOURCES, NAMESPACES, Resource

__all__ = ["NamespaceReconciler", "namespace_controller", "namespaced_resources"]

log = logging.getLogger(__name__)

FINALIZER = "kubernetes"

_GC_FINALIZERS = frozenset({FOREGROUND, ORPHAN})
_BUILTIN = frozenset((r.group, r.plural) for r in BUILTIN_RESOURCES)
_GC_WATCHED = frozenset((r.group, r.plural) for r in DEPENDENT_KINDS)


def _unwatched_by_gc(resource: Resource) -> bool:
    key = (resource.group, resource.plural)
    return key in _BUILTIN and key not in _GC_WATCHED


def namespaced_resources(api: JsonApi) -> list[Resource]:
    """Every namespaced kind the server serves that can be listed and
    deleted, from discovery (the preferred version of each group)."""
    found: list[Resource] = []
    versions = [("", "v1")]
    groups = api.request("GET", "/apis").get("groups") or []
    for group in groups:
        preferred = (group.get("preferredVersion") or {}).get("version")
        if group.get("name") and preferred:
            versions.append((group["name"], preferred))
    for group, version in versions:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            listing = api.request("GET", path)
        except NotFoundError:
            continue
        for entry in listing.get("resources") or []:
            name = entry.get("name", "")
            verbs = set(entry.get("verbs") or ())
            if "/" in name or not entry.get("namespaced") or not {"list", "delete"} <= verbs:
                continue
            found.append(Resource(group, version, name, entry.get("kind", ""), namespaced=True))
    return found


class NamespaceReconciler:
    """``reconcile(request)`` for one namespace. Thread-safe: one lock
    guards the last discovery answer."""

    def __init__(
        self, api: JsonApi, namespaces: SharedIndexInformer, *, recheck: float = 0.2
    ) -> None:
        self.api = api
        self.namespaces = namespaces
        self.recheck = recheck
        self._lock = threading.Lock()
        #: guarded by _lock: the kinds to empty, as last discovered
        self._resources: list[Resource] | None = None

    def _kinds(self) -> list[Resource]:
        known = namespaced_resources(self.api)
        with self._lock:
            self._resources = known
        return known

    def __call__(self, request: Request) -> Result | None:
        namespace = self.namespaces.get_indexer().get_by_key(request.key)
        if namespace is None or not namespace["metadata"].get("deletionTimestamp"):
            return None
        finalizers = (namespace.get("spec") or {}).get("finalizers") or []
        if FINALIZER not in finalizers:
            return None
        left = 0
        for resource in self._kinds():
            try:
                items = self.api.request("GET", resource.collection_path(request.name)).get("items")
            except NotFoundError:
                continue
            for item in items or []:
                meta = item.get("metadata") or {}
                left += 1
                if not meta.get("deletionTimestamp"):
                    self.api.delete(
                        resource, request.name, meta.get("name", ""), propagation="Background"
                    )
                elif _unwatched_by_gc(resource):
                    self._release(resource, request.name, meta)
        if left:
            log.debug("namespace %s: %d objects left", request, left)
            return Result(requeue_after=self.recheck)
        body: dict[str, Any] = dict(namespace)
        body["spec"] = {
            **(namespace.get("spec") or {}),
            "finalizers": [f for f in finalizers if f != FINALIZER],
        }
        try:
            self.api.update(NAMESPACES, body, subresource="finalize")
        except NotFoundError:
            return None
        except ConflictError:
            return Result(requeue=True)
        log.info("namespace %s: emptied and finalized", request)
        return None

    def _release(self, resource: Resource, namespace: str, meta: dict[str, Any]) -> None:
        """Drop the garbage collector's finalizers from an object it does not
        watch (nobody else would)."""
        finalizers = list(meta.get("finalizers") or [])
        kept = [f for f in finalizers if f not in _GC_FINALIZERS]
        if kept == finalizers:
            return
        body = {
            "metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": kept or None}
        }
        try:
            self.api.patch(resource, namespace, meta.get("name", ""), body)
        except (NotFoundError, ConflictError):
            return  # gone, or changed: the next pass looks again


def namespace_controller(
    api: JsonApi, namespaces: SharedIndexInformer, *, recheck: float = 0.2
) -> Controller:
    """The ``namespace`` controller (namespace events)."""
    return Controller(
        "namespace",
        NamespaceReconciler(api, namespaces, recheck=recheck),
        [InformerSource(namespaces)],
        workers=1,
    )
