"""The ``/scale`` subresource: what ``kubectl scale`` and autoscalers read and
write.

Deployments, ReplicaSets, StatefulSets and ReplicationControllers serve
``<plural>/<name>/scale`` as an ``autoscaling/v1`` ``Scale``: the object's
identity (name, namespace, uid, resourceVersion, creationTimestamp),
``spec.replicas`` from the object's spec and ``status`` from its status
(``replicas``, 0 when unset, and ``selector``, the label selector as a
string). Writing a Scale changes only the object's ``spec.replicas``; a
``metadata.resourceVersion`` in it must match the object's (else 409).

Pure functions; thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.errors import SelectorParseError
from informers.resources import (
    DEPLOYMENTS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    STATEFULSETS,
    Resource,
)
from informers.testing.apiserver import _status
from informers.wire.selectors import LabelSelector

__all__ = ["SCALABLE", "replicas_from_scale", "to_scale"]

#: Built-in resources serving a ``scale`` subresource.
SCALABLE = frozenset({DEPLOYMENTS, REPLICASETS, STATEFULSETS, REPLICATIONCONTROLLERS})

_IDENTITY = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def _selector(resource: Resource, spec: dict[str, Any]) -> str:
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return ""
    if resource == REPLICATIONCONTROLLERS:  # a plain map of labels
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    try:
        return str(LabelSelector.from_dict(selector))
    except SelectorParseError:
        return ""  # not validated on write; a Scale still answers


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def to_scale(resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of ``obj`` (an object of ``resource``)."""
    meta = obj.get("metadata") or {}
    spec: Any = obj.get("spec")
    status: Any = obj.get("status")
    spec = spec if isinstance(spec, dict) else {}
    status = status if isinstance(status, dict) else {}
    scale_status: dict[str, Any] = {"replicas": _int(status.get("replicas"), 0)}
    selector = _selector(resource, spec)
    if selector:
        scale_status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _IDENTITY if k in meta},
        "spec": {"replicas": _int(spec.get("replicas"), 1)},
        "status": scale_status,
    }


def replicas_from_scale(name: str, scale: Any) -> tuple[int, str]:
    """``(spec.replicas, metadata.resourceVersion or "")`` of a Scale a client
    sent for the object ``name``: 400 when it is not a Scale-shaped object or
    names another object, 422 for a negative count."""
    if not isinstance(scale, dict):
        raise _status.bad_request("the request body must be a JSON object")
    meta = scale.get("metadata") if scale.get("metadata") is not None else {}
    spec = scale.get("spec") if scale.get("spec") is not None else {}
    if not isinstance(meta, dict) or not isinstance(spec, dict):
        raise _status.bad_request("metadata and spec of a Scale must be JSON objects")
    if meta.get("name") and meta["name"] != name:
        raise _status.bad_request("the name of the object does not match the name on the URL")
    replicas = spec.get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        raise _status.bad_request(
            f"json: cannot unmarshal {type(replicas).__name__} into Go struct field "
            "ScaleSpec.spec.replicas of type int32"
        )
    if replicas < 0:
        raise _status.invalid(
            "autoscaling",
            "Scale",
            name,
            [
                (
                    "spec.replicas",
                    "FieldValueInvalid",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                )
            ],
        )
    return replicas, str(meta.get("resourceVersion") or "")
