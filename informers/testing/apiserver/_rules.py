"""What the API server does to an object on its way into storage: name and
namespace checks, the fields it sets on create, defaults, ``generation``,
the merge of an update with the stored object, namespaces' labels and
finalizers, the resources a CustomResourceDefinition serves and the marks
of a pending deletion (validation is :mod:`._validation`'s).

Everything here is a function of its arguments; storage calls all of it
under its lock. Arguments are never mutated unless a docstring says so.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Sequence
from typing import Any

from informers.testing.apiserver import _status, _validation
from informers.testing.apiserver._defaults import apply_defaults
from informers.wire.resources import CUSTOMRESOURCEDEFINITIONS, NAMESPACES, SERVICES, Resource

__all__ = [
    "NO_STATUS_SUBRESOURCE",
    "awaits_finalize",
    "body_metadata",
    "crd_resources",
    "deletion_marked",
    "fill_namespace",
    "generate_name",
    "merge_update",
    "new_object",
    "object_namespace",
    "precondition_failed",
    "same_content",
    "validate_name",
    "with_finalizers",
]

#: Kinds whose ``metadata.generation`` the server does not maintain.
_NO_GENERATION = frozenset(
    {
        "Namespace",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Endpoints",
        "Event",
        "Node",
        "Lease",
        "EndpointSlice",
    }
)
#: Built-in kinds without a ``status`` subresource (a PUT writes their status).
NO_STATUS_SUBRESOURCE = frozenset(
    {
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Endpoints",
        "Event",
        "Lease",
        "EndpointSlice",
        "CustomResourceDefinition",
    }
)
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ------------------------------------------------------------------ names


def generate_name(prefix: str) -> str:
    """``prefix`` and five random characters, as ``generateName`` asks."""
    return prefix + "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))


def validate_name(resource: Resource, name: str) -> None:
    """422 Invalid unless ``name`` follows the kind's name rule (see
    :func:`._validation.meta.name_errors`)."""
    _validation.validate_name(resource, name)


def body_metadata(obj: Any) -> dict[str, Any]:
    """The ``metadata`` of a request body (``{}`` when absent); 400 when the
    body or its metadata is not a JSON object."""
    if not isinstance(obj, dict):
        raise _status.bad_request("the request body must be a JSON object")
    meta = obj.get("metadata") if obj.get("metadata") is not None else {}
    if not isinstance(meta, dict):
        raise _status.bad_request("metadata must be a JSON object")
    return meta


def object_namespace(resource: Resource, namespace: str | None, meta: dict[str, Any]) -> str:
    """The namespace an object is written to: the request's, else the body's,
    else ``default`` ("" for cluster-scoped kinds); 400 when the two differ."""
    if not resource.namespaced:
        return ""
    body_ns = meta.get("namespace") or ""
    if namespace and body_ns and body_ns != namespace:
        raise _status.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    return str(namespace or body_ns or "default")


def precondition_failed(
    resource: Resource, name: str, field: str, wanted: str, meta: dict[str, Any]
) -> _status.StatusError:
    """The 409 Conflict for a ``UID`` or ``ResourceVersion`` precondition
    that ``meta`` (the stored object's metadata) does not meet."""
    actual = meta["uid" if field == "UID" else "resourceVersion"]
    return _status.conflict(
        resource,
        name,
        f"Precondition failed: {field} in precondition: {wanted}, {field} in object meta: {actual}",
    )


# ----------------------------------------------------------------- create


def new_object(
    resource: Resource,
    builtin: bool,
    obj: dict[str, Any],
    meta: dict[str, Any],
    *,
    namespace: str,
    name: str,
    rv: int,
) -> dict[str, Any]:
    """The object a create stores: ``obj`` with ``kind`` and ``apiVersion``
    first, the server-set metadata (``meta`` is a copy of the body's, updated
    in place: name, namespace, uid, resourceVersion, creationTimestamp,
    generation), the kind's defaults and, for a Namespace, its name label,
    finalizer and phase. Cluster IPs are not assigned here."""
    meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    meta["uid"] = str(uuid.uuid4())
    meta["resourceVersion"] = str(rv)
    meta["creationTimestamp"] = _now()
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    if builtin and resource.kind in _NO_GENERATION:
        meta.pop("generation", None)
    else:
        meta["generation"] = 1
    new: dict[str, Any] = {
        "kind": resource.kind,
        "apiVersion": resource.api_version,
        "metadata": meta,
    }
    new.update((k, v) for k, v in obj.items() if k not in new)
    if builtin:
        new = apply_defaults(resource, new, creating=True)
    if resource == NAMESPACES:
        fill_namespace(new)
    return new


def fill_namespace(obj: dict[str, Any]) -> None:
    """Give a new Namespace (``obj``, changed in place) its name label, the
    ``kubernetes`` finalizer and the Active phase."""
    meta = obj["metadata"]
    labels = dict(meta.get("labels") or {})
    labels["kubernetes.io/metadata.name"] = meta["name"]
    meta["labels"] = labels
    spec = dict(obj.get("spec") or {})
    spec.setdefault("finalizers", ["kubernetes"])
    obj["spec"] = spec
    obj["status"] = {"phase": "Active"}


def crd_resources(crd: dict[str, Any]) -> tuple[list[Resource], bool, dict[str, Any]]:
    """What a CustomResourceDefinition serves: one resource per served
    version, whether they have a status subresource, and the CRD's status
    (names accepted, established); 422 Invalid when its spec is incomplete."""
    try:
        spec = crd["spec"]
        names = spec["names"]
        group = spec["group"]
        versions = [v["name"] for v in spec["versions"] if v.get("served", True)]
        resources = [
            Resource(
                group,
                version,
                names["plural"],
                names["kind"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular", ""),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
            )
            for version in versions
        ]
        status_sub = any("status" in (v.get("subresources") or {}) for v in spec["versions"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise _status.invalid(
            CUSTOMRESOURCEDEFINITIONS.group,
            CUSTOMRESOURCEDEFINITIONS.kind,
            str(crd["metadata"]["name"]),
            [("spec", "FieldValueRequired", f"Required value: {exc}")],
        ) from None
    status = {
        "acceptedNames": dict(names),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ],
        "storedVersions": versions[:1],
    }
    return resources, status_sub, status


# ----------------------------------------------------------------- update


def merge_update(
    resource: Resource,
    builtin: bool,
    *,
    old: dict[str, Any],
    obj: dict[str, Any],
    meta: dict[str, Any],
    subresource: str,
    keep_status: bool,
) -> dict[str, Any]:
    """The object an update of ``old`` with ``obj`` (whose metadata is
    ``meta``) stores, before its new resourceVersion: ``subresource="status"``
    takes only the status; otherwise the server-owned metadata is kept,
    ``keep_status`` keeps the stored status, a Namespace keeps its name label
    and (unless ``subresource="finalize"``) its finalizers, defaults apply,
    and ``generation`` counts changes outside metadata and status."""
    old_meta = old["metadata"]
    if subresource == "status":
        new = dict(old)
        if "status" in obj:
            new["status"] = obj["status"]
        else:
            new.pop("status", None)
        new["metadata"] = dict(old_meta)
        return new
    new_meta = dict(meta)
    for field in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp"):
        if field in old_meta:
            new_meta[field] = old_meta[field]
        else:
            new_meta.pop(field, None)
    if "deletionGracePeriodSeconds" in old_meta:
        new_meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    new = {"kind": old["kind"], "apiVersion": old["apiVersion"], "metadata": new_meta}
    new.update((k, v) for k, v in obj.items() if k not in new)
    if keep_status:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    if resource == NAMESPACES:
        # As the real server: the name label is defaulted on every write,
        # and the finalizers change only through the finalize subresource.
        labels = dict(new_meta.get("labels") or {})
        labels["kubernetes.io/metadata.name"] = old_meta["name"]
        new_meta["labels"] = labels
        old_spec: dict[str, Any] = old.get("spec") or {}
        sent = new.get("spec")
        new_spec: dict[str, Any] = dict(sent) if isinstance(sent, dict) else {}
        if subresource != "finalize" and isinstance(old_spec, dict) and "finalizers" in old_spec:
            new_spec["finalizers"] = old_spec["finalizers"]
        new["spec"] = new_spec
        new["status"] = old.get("status", {"phase": "Active"})
    if builtin:  # before the generation check: defaults are no change
        if resource == SERVICES:
            _keep_cluster_ip(new, old)
        new = apply_defaults(resource, new, creating=False)
        new_meta = new["metadata"]
    if "generation" in old_meta:
        changed = _spec_part(new) != _spec_part(old)
        new_meta["generation"] = old_meta["generation"] + (1 if changed else 0)
    else:
        new_meta.pop("generation", None)
    return new


def _keep_cluster_ip(new: dict[str, Any], old: dict[str, Any]) -> None:
    """An update that leaves the cluster IP out keeps the allocated one (as the
    real server does)."""
    new_spec, old_spec = new.get("spec"), old.get("spec")
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict):
        return
    if new_spec.get("clusterIP") or not old_spec.get("clusterIP"):
        return
    if new_spec.get("type", "ClusterIP") == "ExternalName":
        return
    spec = dict(new_spec)
    spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = old_spec["clusterIPs"]
    new["spec"] = spec


def _spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def same_content(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether an update changes nothing but the resourceVersion (the server
    then stores nothing and answers with the stored object)."""
    if {k: v for k, v in new.items() if k != "metadata"} != {
        k: v for k, v in old.items() if k != "metadata"
    }:
        return False
    a = {k: v for k, v in new["metadata"].items() if k != "resourceVersion"}
    b = {k: v for k, v in old["metadata"].items() if k != "resourceVersion"}
    return a == b


# ----------------------------------------------------------------- delete


def awaits_finalize(resource: Resource, obj: dict[str, Any]) -> bool:
    """A Terminating namespace stays until its ``spec.finalizers`` are empty."""
    return (
        resource == NAMESPACES
        and bool((obj.get("spec") or {}).get("finalizers"))
        and (obj.get("status") or {}).get("phase") == "Terminating"
    )


def with_finalizers(obj: dict[str, Any], finalizers: Sequence[str]) -> dict[str, Any] | None:
    """``obj`` with ``finalizers`` appended to ``metadata.finalizers`` (each
    once), or None when it has them all."""
    current = list(obj["metadata"].get("finalizers") or [])
    added = [f for f in finalizers if f not in current]
    if not added:
        return None
    new = dict(obj)
    new["metadata"] = {**obj["metadata"], "finalizers": current + added}
    return new


def deletion_marked(obj: dict[str, Any], rv: int, *, terminating: bool) -> dict[str, Any]:
    """``obj`` marked for deletion at ``rv`` (``deletionTimestamp`` now, no
    grace period); ``terminating`` also sets ``status.phase: Terminating``
    (a Namespace waiting for its controller)."""
    new = dict(obj)
    new["metadata"] = {
        **obj["metadata"],
        "deletionTimestamp": _now(),
        "deletionGracePeriodSeconds": 0,
        "resourceVersion": str(rv),
    }
    generation = obj["metadata"].get("generation")
    if isinstance(generation, int) and generation > 0:  # the deletion is a change of intent
        new["metadata"]["generation"] = generation + 1
    if terminating:
        new["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
    return new
