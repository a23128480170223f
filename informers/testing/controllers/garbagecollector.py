"""The garbage collector: dependents go when their owners go.

It watches the built-in kinds of :data:`DEPENDENT_KINDS` (workloads, pods,
ConfigMaps, Secrets, Services, ServiceAccounts, PersistentVolumeClaims) and,
through :class:`~._monitors.CustomResourceMonitors`, every custom resource
kind while its CRD exists; any watched object may own or depend on any
other. A request names one object as ``Request(namespace,
"<resource>:<name>")`` (``deployments.apps:web``; ``:`` cannot occur in an
object name).

* **Background** (an owner is gone): a dependent whose every owner reference
  names an object that no longer exists, or exists with another uid (a
  dangling reference), is deleted. Both are checked live (a lagging cache
  never deletes anything; the dependent is deleted only at the version
  judged, so references an orphaning owner removed meanwhile are never
  overlooked); references to missing owners are dropped from a dependent
  that still has another owner. An owner's kind is resolved among the
  watched kinds and the built-in ones; an owner of a kind it cannot resolve
  is taken to exist.
* **Foreground** (the owner has ``deletionTimestamp`` and the
  ``foregroundDeletion`` finalizer): its dependents are deleted (those that
  own things themselves in the foreground too); once no dependent with
  ``blockOwnerDeletion`` is left, the finalizer is removed and the server
  removes the owner.
* **Orphan** (the ``orphan`` finalizer): the references to the owner are
  removed from its dependents, then the finalizer.

Objects of kinds it does not watch are neither collected nor finalized.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers._monitors import CustomResourceMonitors
from informers.testing.controllers.api import ConflictError, JsonApi, NotFoundError
from informers.toolkit.runtime import Controller, InformerSource, Request, Result, Source
from informers.wire.objects import DeletedFinalStateUnknown, get_namespace
from informers.wire.resources import (
    BUILTIN_RESOURCES,
    CONFIGMAPS,
    CRONJOBS,
    DAEMONSETS,
    DEPLOYMENTS,
    JOBS,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    STATEFULSETS,
    Resource,
)

__all__ = [
    "DEPENDENT_KINDS",
    "FOREGROUND",
    "ORPHAN",
    "OWNER_KINDS",
    "OWNER_UID_INDEX",
    "GarbageCollector",
    "garbage_collector",
    "owner_uid_index",
]

log = logging.getLogger(__name__)

#: The finalizer of a foreground delete: dependents go first.
FOREGROUND = "foregroundDeletion"
#: The finalizer of an orphaning delete: dependents lose the owner reference.
ORPHAN = "orphan"
#: The index (on every watched informer) from an owner's uid to its dependents.
OWNER_UID_INDEX = "gc-owner-uid"
#: The built-in kinds the collector watches, as owners and as dependents.
DEPENDENT_KINDS: tuple[Resource, ...] = (
    PODS,
    REPLICASETS,
    DEPLOYMENTS,
    STATEFULSETS,
    DAEMONSETS,
    JOBS,
    CRONJOBS,
    REPLICATIONCONTROLLERS,
    CONFIGMAPS,
    SECRETS,
    SERVICES,
    SERVICEACCOUNTS,
    PERSISTENTVOLUMECLAIMS,
)
#: Built-in owner kinds it can resolve (for a live read), by (group, kind).
OWNER_KINDS: dict[tuple[str, str], Resource] = {(r.group, r.kind): r for r in BUILTIN_RESOURCES}


def owner_uid_index(obj: Any) -> list[str]:
    """Index function: the uids of the object's owners."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [str(r["uid"]) for r in refs if isinstance(r, Mapping) and r.get("uid")]


def _refs(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [r for r in refs if isinstance(r, Mapping)]


def _ref_group_kind(ref: Mapping[str, Any]) -> tuple[str, str]:
    api_version = str(ref.get("apiVersion") or "")
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return group, str(ref.get("kind") or "")


def _request(resource: Resource, namespace: str, name: str) -> Request:
    return Request(namespace, f"{resource}:{name}")


class GarbageCollector:
    """``reconcile(request)`` for one watched object, and the map functions
    of its sources. Thread-safe: its state is the caches.

    :param informers: the informers of the built-in kinds it watches (each
        with the :data:`OWNER_UID_INDEX` index).
    :param custom: the custom resource kinds' informers, following the CRDs.
    """

    def __init__(
        self,
        api: JsonApi,
        informers: Mapping[Resource, SharedIndexInformer],
        custom: CustomResourceMonitors | None = None,
    ) -> None:
        self.api = api
        self.informers = dict(informers)
        self.custom = custom

    def _views(self) -> dict[Resource, SharedIndexInformer]:
        """Every watched kind's informer, now."""
        if self.custom is None:
            return self.informers
        return {**self.informers, **self.custom.informers()}

    def _owner_resource(self, ref: Mapping[str, Any]) -> Resource | None:
        """The resource of an owner reference's kind, or None (unresolvable)."""
        group_kind = _ref_group_kind(ref)
        for resource in self._views():
            if (resource.group, resource.kind) == group_kind:
                return resource
        return OWNER_KINDS.get(group_kind)

    def map_func(self, resource: Resource) -> Any:
        """The map function of ``resource``'s source: the object itself, its
        owners and its dependents."""

        def mapping(obj: Any) -> list[Request]:
            target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            meta = target.get("metadata") or {}
            namespace = get_namespace(target)
            out = [_request(resource, namespace, meta["name"])]
            views = self._views()
            for ref in _refs(target):
                group_kind = _ref_group_kind(ref)
                owner = next((r for r in views if (r.group, r.kind) == group_kind), None)
                if owner is not None and ref.get("name"):
                    out.append(
                        _request(owner, namespace if owner.namespaced else "", str(ref["name"]))
                    )
            if meta.get("uid"):
                for kind, dependent in self._dependents_of(str(meta["uid"]), views):
                    out.append(
                        _request(kind, get_namespace(dependent), dependent["metadata"]["name"])
                    )
            return out

        return mapping

    @staticmethod
    def _dependents_of(
        uid: str, views: Mapping[Resource, SharedIndexInformer]
    ) -> list[tuple[Resource, dict[str, Any]]]:
        return [
            (kind, d)
            for kind, informer in views.items()
            for d in informer.get_indexer().by_index(OWNER_UID_INDEX, uid)
        ]

    def _dependents(self, owner: Mapping[str, Any]) -> list[tuple[Resource, dict[str, Any]]]:
        return self._dependents_of(str(owner["metadata"]["uid"]), self._views())

    def _find(self, name: str) -> tuple[Resource, SharedIndexInformer] | None:
        views = self._views()
        for resource, informer in views.items():
            if str(resource) == name:
                return resource, informer
        for resource, informer in views.items():
            if resource.plural == name:
                return resource, informer
        return None

    def __call__(self, request: Request) -> Result | None:
        kind, _, name = request.name.partition(":")
        found = self._find(kind)
        if found is None or not name:
            return None
        resource, informer = found
        key = f"{request.namespace}/{name}" if request.namespace else name
        obj = informer.get_indexer().get_by_key(key)
        if obj is None:
            return None
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp") and FOREGROUND in finalizers:
            return self._foreground(resource, obj)
        if meta.get("deletionTimestamp") and ORPHAN in finalizers:
            return self._orphan(resource, obj)
        return self._collect(resource, obj)

    def _collect(self, resource: Resource, cached: dict[str, Any]) -> Result | None:
        if not _refs(cached):
            return None
        namespace = get_namespace(cached)
        # Decide on the live dependent, never on the cache alone: an orphaning
        # owner may have just had its references removed from it (while the
        # cache still shows them), and the owner be gone now.
        obj = self.api.get(resource, namespace, cached["metadata"]["name"])
        if obj is None or obj["metadata"].get("uid") != cached["metadata"].get("uid"):
            return None
        refs = _refs(obj)
        meta = obj["metadata"]
        present, gone = [], []
        for ref in refs:
            owner_resource = self._owner_resource(ref)
            if owner_resource is None:
                present.append(ref)
                continue
            owner_namespace = namespace if owner_resource.namespaced else None
            live = self.api.get(owner_resource, owner_namespace, str(ref.get("name") or ""))
            if live is None or live["metadata"].get("uid") != ref.get("uid"):
                gone.append(ref)
                continue
            present.append(ref)
            live_meta = live["metadata"]
            if (
                live_meta.get("deletionTimestamp")
                and FOREGROUND in (live_meta.get("finalizers") or [])
                and not meta.get("deletionTimestamp")
            ):
                self._delete_dependent(resource, obj)
                return None
        if not gone:
            return None
        try:
            if not present:
                if not meta.get("deletionTimestamp"):
                    log.info(
                        "gc: %s %s/%s has no owner left, deleting",
                        resource.kind,
                        namespace,
                        meta["name"],
                    )
                    # Only the version just judged: if its references changed
                    # since, it is judged again.
                    self._delete(resource, obj, "Background", check_version=True)
                return None
            self.api.patch(
                resource,
                namespace,
                meta["name"],
                {
                    "metadata": {
                        "resourceVersion": meta["resourceVersion"],
                        "ownerReferences": [dict(r) for r in present],
                    }
                },
            )
        except ConflictError:
            return Result(requeue=True)
        except NotFoundError:
            pass
        return None

    def _delete_dependent(self, resource: Resource, obj: dict[str, Any]) -> None:
        owns = bool(self._dependents(obj))
        self._delete(resource, obj, "Foreground" if owns else "Background")

    def _delete(
        self,
        resource: Resource,
        obj: dict[str, Any],
        propagation: str,
        *,
        check_version: bool = False,
    ) -> None:
        """Delete ``obj`` (not another object under its name). With
        ``check_version`` only its version as read: a change since raises
        :class:`ConflictError`."""
        meta = obj["metadata"]
        if check_version:
            self.api.delete(
                resource,
                get_namespace(obj),
                meta["name"],
                propagation=propagation,
                uid=meta["uid"],
                resource_version=meta["resourceVersion"],
            )
            return
        # a conflict: the name holds another object now, not ours to delete
        with contextlib.suppress(ConflictError):
            self.api.delete(
                resource, get_namespace(obj), meta["name"], propagation=propagation, uid=meta["uid"]
            )

    def _foreground(self, resource: Resource, owner: dict[str, Any]) -> Result | None:
        blocking = 0
        for kind, dependent in self._dependents(owner):
            ref = next(r for r in _refs(dependent) if r.get("uid") == owner["metadata"]["uid"])
            if ref.get("blockOwnerDeletion") is True:
                blocking += 1
            if not dependent["metadata"].get("deletionTimestamp"):
                self._delete_dependent(kind, dependent)
        if blocking:
            return None  # the dependents' deletions bring this request back
        return self._remove_finalizer(resource, owner, FOREGROUND)

    def _orphan(self, resource: Resource, owner: dict[str, Any]) -> Result | None:
        uid = owner["metadata"]["uid"]
        for kind, dependent in self._dependents(owner):
            refs = [dict(r) for r in _refs(dependent) if r.get("uid") != uid]
            try:
                self.api.patch(
                    kind,
                    get_namespace(dependent),
                    dependent["metadata"]["name"],
                    {"metadata": {"ownerReferences": refs or None}},
                )
            except NotFoundError:
                continue
        return self._remove_finalizer(resource, owner, ORPHAN)

    def _remove_finalizer(
        self, resource: Resource, owner: dict[str, Any], finalizer: str
    ) -> Result | None:
        meta = owner["metadata"]
        body = {
            "metadata": {
                "resourceVersion": meta["resourceVersion"],
                "finalizers": [f for f in meta.get("finalizers") or [] if f != finalizer] or None,
            }
        }
        try:
            self.api.patch(resource, get_namespace(owner), meta["name"], body)
        except NotFoundError:
            return None
        except ConflictError:
            return Result(requeue=True)
        log.info(
            "gc: %s %s/%s: removed %s", resource.kind, get_namespace(owner), meta["name"], finalizer
        )
        return None


def garbage_collector(
    api: JsonApi,
    informers: Mapping[Resource, SharedIndexInformer],
    *,
    crds: SharedIndexInformer | None = None,
    workers: int = 2,
) -> Controller:
    """The ``garbage-collector`` controller over ``informers`` (the built-in
    kinds it watches, each with the :data:`OWNER_UID_INDEX` index,
    :func:`owner_uid_index`) and, given ``crds`` (a started
    CustomResourceDefinition informer), every custom resource kind."""
    custom = None
    collector = GarbageCollector(api, informers)
    sources: list[Source] = [
        InformerSource(informer, map_func=collector.map_func(resource), name=f"gc {resource}")
        for resource, informer in informers.items()
    ]
    if crds is not None:
        custom = CustomResourceMonitors(
            api.api_client, crds, collector.map_func, {OWNER_UID_INDEX: owner_uid_index}
        )
        collector.custom = custom
        sources.append(custom)
    return Controller("garbage-collector", collector, sources, workers=workers)
