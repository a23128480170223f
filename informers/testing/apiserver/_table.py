"""Server-side printing: ``meta.k8s.io/v1`` ``Table`` answers.

``kubectl get`` asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``
and prints the columns the server chooses. :func:`to_table` builds that Table
for a list of objects: NAME, a few kind-specific columns like the real
server's (pods: READY, STATUS, RESTARTS; configmaps: DATA; services: TYPE,
CLUSTER-IP, PORT(S); deployments: READY, UP-TO-DATE, AVAILABLE; ...), and AGE.
Each row carries the object's metadata as a ``PartialObjectMetadata`` (what
kubectl reads namespaces and labels from), the whole object when
``include_object="Object"``, or nothing for ``"None"``.

Pure function of its arguments (``now`` defaults to the wall clock);
thread-safe.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from informers.wire.resources import Resource

__all__ = ["human_duration", "to_table"]

_Cell = Callable[[dict[str, Any]], Any]


def human_duration(seconds: float) -> str:
    """A duration the way kubectl prints ages: ``45s``, ``3m20s``, ``5h``, ``2d3h``."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    whole = int(seconds)
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y{rest}d" if rest else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _get(obj: Mapping[str, Any], *path: str) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _list(value: Any) -> list[Any]:
    """``value`` if it is a list, else an empty one (objects are not validated)."""
    return value if isinstance(value, list) else []


def _count(value: Any) -> int:
    return len(value) if isinstance(value, Mapping | list) else 0


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _pod_ready(pod: dict[str, Any]) -> str:
    containers = _list(_get(pod, "spec", "containers"))
    statuses = _list(_get(pod, "status", "containerStatuses"))
    ready = sum(1 for s in statuses if isinstance(s, Mapping) and s.get("ready") is True)
    return f"{ready}/{len(containers)}"


def _pod_status(pod: dict[str, Any]) -> str:
    if _get(pod, "metadata", "deletionTimestamp"):
        return "Terminating"
    reason = _get(pod, "status", "reason")
    return str(reason or _get(pod, "status", "phase") or "Pending")


def _pod_restarts(pod: dict[str, Any]) -> int:
    statuses = _list(_get(pod, "status", "containerStatuses"))
    return sum(_int(s.get("restartCount")) for s in statuses if isinstance(s, Mapping))


def _service_ports(service: dict[str, Any]) -> str:
    parts = []
    for port in _list(_get(service, "spec", "ports")):
        if not isinstance(port, Mapping):
            continue
        text = str(port.get("port", ""))
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        parts.append(f"{text}/{port.get('protocol') or 'TCP'}")
    return ",".join(parts) or "<none>"


def _external_ips(service: dict[str, Any]) -> str:
    ingress = _list(_get(service, "status", "loadBalancer", "ingress"))
    ips = [i.get("ip") or i.get("hostname") for i in ingress if isinstance(i, Mapping)]
    ips += _list(_get(service, "spec", "externalIPs"))
    if ips:
        return ",".join(str(ip) for ip in ips if ip)
    return "<pending>" if _get(service, "spec", "type") == "LoadBalancer" else "<none>"


def _node_status(node: dict[str, Any]) -> str:
    for condition in _list(_get(node, "status", "conditions")):
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return "Ready" if condition.get("status") == "True" else "NotReady"
    return "Unknown"


def _node_roles(node: dict[str, Any]) -> str:
    labels = _get(node, "metadata", "labels")
    if not isinstance(labels, Mapping):
        return "<none>"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix) :] for k in labels if k.startswith(prefix) and k != prefix)
    return ",".join(roles) or "<none>"


def _endpoints(endpoints: dict[str, Any]) -> str:
    found = []
    for subset in _list(_get(endpoints, "subsets")):
        if not isinstance(subset, Mapping):
            continue
        ports = [p.get("port") for p in _list(subset.get("ports")) if isinstance(p, Mapping)]
        for address in _list(subset.get("addresses")):
            ip = address.get("ip") if isinstance(address, Mapping) else None
            found += [f"{ip}:{p}" for p in ports] if ports else [str(ip)]
    if not found:
        return "<none>"
    shown = ",".join(found[:3])
    return shown + (f" + {len(found) - 3} more..." if len(found) > 3 else "")


def _replicas(obj: dict[str, Any], field: str) -> int:
    return _int(_get(obj, "status", field))


def _job_completions(job: dict[str, Any]) -> str:
    completions = _get(job, "spec", "completions")
    total = completions if type(completions) is int else 1
    return f"{_replicas(job, 'succeeded')}/{total}"


_STRING, _INTEGER = "string", "integer"

#: kind -> [(column name, type, cell function, priority)]; NAME and AGE are added.
_COLUMNS: dict[str, list[tuple[str, str, _Cell, int]]] = {
    "Pod": [
        ("Ready", _STRING, _pod_ready, 0),
        ("Status", _STRING, _pod_status, 0),
        ("Restarts", _INTEGER, _pod_restarts, 0),
        ("IP", _STRING, lambda p: _get(p, "status", "podIP") or "<none>", 1),
        ("Node", _STRING, lambda p: _get(p, "spec", "nodeName") or "<none>", 1),
    ],
    "Namespace": [("Status", _STRING, lambda n: _get(n, "status", "phase") or "Active", 0)],
    "ConfigMap": [
        ("Data", _INTEGER, lambda c: _count(c.get("data")) + _count(c.get("binaryData")), 0)
    ],
    "Secret": [
        ("Type", _STRING, lambda s: s.get("type") or "Opaque", 0),
        ("Data", _INTEGER, lambda s: _count(s.get("data")), 0),
    ],
    "ServiceAccount": [("Secrets", _INTEGER, lambda s: _count(s.get("secrets")), 0)],
    "Service": [
        ("Type", _STRING, lambda s: _get(s, "spec", "type") or "ClusterIP", 0),
        ("Cluster-IP", _STRING, lambda s: _get(s, "spec", "clusterIP") or "<none>", 0),
        ("External-IP", _STRING, _external_ips, 0),
        ("Port(s)", _STRING, _service_ports, 0),
    ],
    "Endpoints": [("Endpoints", _STRING, _endpoints, 0)],
    "Node": [
        ("Status", _STRING, _node_status, 0),
        ("Roles", _STRING, _node_roles, 0),
        ("Version", _STRING, lambda n: _get(n, "status", "nodeInfo", "kubeletVersion") or "", 0),
    ],
    "Deployment": [
        (
            "Ready",
            _STRING,
            lambda d: f"{_replicas(d, 'readyReplicas')}/{_int(_get(d, 'spec', 'replicas'))}",
            0,
        ),
        ("Up-to-date", _INTEGER, lambda d: _replicas(d, "updatedReplicas"), 0),
        ("Available", _INTEGER, lambda d: _replicas(d, "availableReplicas"), 0),
    ],
    "ReplicaSet": [
        ("Desired", _INTEGER, lambda r: _int(_get(r, "spec", "replicas")), 0),
        ("Current", _INTEGER, lambda r: _replicas(r, "replicas"), 0),
        ("Ready", _INTEGER, lambda r: _replicas(r, "readyReplicas"), 0),
    ],
    "StatefulSet": [
        (
            "Ready",
            _STRING,
            lambda s: f"{_replicas(s, 'readyReplicas')}/{_int(_get(s, 'spec', 'replicas'))}",
            0,
        )
    ],
    "DaemonSet": [
        ("Desired", _INTEGER, lambda d: _replicas(d, "desiredNumberScheduled"), 0),
        ("Current", _INTEGER, lambda d: _replicas(d, "currentNumberScheduled"), 0),
        ("Ready", _INTEGER, lambda d: _replicas(d, "numberReady"), 0),
    ],
    "Job": [("Completions", _STRING, _job_completions, 0)],
    "CronJob": [("Schedule", _STRING, lambda c: _get(c, "spec", "schedule") or "", 0)],
    "Lease": [("Holder", _STRING, lambda lease: _get(lease, "spec", "holderIdentity") or "", 0)],
}


def _containers(obj: dict[str, Any]) -> str:
    return ",".join(str(c.get("name", "")) for c in _template_containers(obj)) or "<none>"


def _images(obj: dict[str, Any]) -> str:
    return ",".join(str(c.get("image", "")) for c in _template_containers(obj)) or "<none>"


def _template_containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = _get(obj, "spec", "template", "spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    return [c for c in _list(containers) if isinstance(c, dict)]


def _selector(obj: dict[str, Any]) -> str:
    """A label selector as kubectl prints it (``app=web,tier in (a,b)``)."""
    selector = _get(obj, "spec", "selector")
    if not isinstance(selector, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in _list(selector.get("matchExpressions")):
        if not isinstance(expr, dict):
            continue
        key, op = expr.get("key", ""), str(expr.get("operator", ""))
        values = ",".join(str(v) for v in _list(expr.get("values")))
        if op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op.lower()} ({values})")
    return ",".join(parts) or "<none>"


_WORKLOAD_WIDE: list[tuple[str, str, _Cell, int]] = [
    ("Containers", _STRING, _containers, 1),
    ("Images", _STRING, _images, 1),
    ("Selector", _STRING, _selector, 1),
]

#: kind -> the columns after AGE (``-o wide`` shows the priority-1 ones).
_AFTER_AGE: dict[str, list[tuple[str, str, _Cell, int]]] = {
    "Deployment": _WORKLOAD_WIDE,
    "ReplicaSet": _WORKLOAD_WIDE,
    "Job": _WORKLOAD_WIDE,
}

_DESCRIPTIONS = {
    "Name": "Name must be unique within a namespace.",
    "Age": "Time since the object was created (metadata.creationTimestamp).",
}


def _parse_time(stamp: Any) -> datetime.datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _age(obj: dict[str, Any], now: datetime.datetime) -> str:
    created = _parse_time(_get(obj, "metadata", "creationTimestamp"))
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())


def _row_object(resource: Resource, obj: dict[str, Any], include_object: str) -> Any:
    if include_object == "Object":
        return {"kind": resource.kind, "apiVersion": resource.api_version, **obj}
    if include_object == "None":
        return None
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def to_table(
    resource: Resource,
    objects: list[dict[str, Any]],
    list_metadata: dict[str, Any],
    *,
    now: datetime.datetime | None = None,
    include_object: str = "PartialObjectMetadata",
    custom: list[tuple[str, str, _Cell, int]] | None = None,
) -> dict[str, Any]:
    """The ``Table`` answering a list (or one watch event: a one-object list) of
    ``resource``. ``list_metadata`` (``resourceVersion``, ``continue``,
    ``remainingItemCount``) becomes the Table's metadata. ``include_object``
    is the ``includeObject`` query parameter: ``"PartialObjectMetadata"``
    (default), ``"Object"`` or ``"None"``. ``custom`` columns (a CRD's
    ``additionalPrinterColumns``) follow NAME instead of the kind's own and
    AGE."""
    moment = now or datetime.datetime.now(datetime.UTC)
    extra = _COLUMNS.get(resource.kind, []) if custom is None else custom
    columns = [
        {
            "name": "Name",
            "type": _STRING,
            "format": "name",
            "description": _DESCRIPTIONS["Name"],
            "priority": 0,
        }
    ]
    for title, kind, _, priority in extra:
        columns.append(
            {
                "name": title,
                "type": kind,
                "format": "",
                "description": title,
                "priority": priority,
            }
        )
    if custom is None:
        columns.append(
            {
                "name": "Age",
                "type": _STRING,
                "format": "",
                "description": _DESCRIPTIONS["Age"],
                "priority": 0,
            }
        )
    after = _AFTER_AGE.get(resource.kind, []) if custom is None else []
    for title, kind, _, priority in after:
        columns.append(
            {
                "name": title,
                "type": kind,
                "format": "",
                "description": title,
                "priority": priority,
            }
        )
    rows = []
    for obj in objects:
        cells: list[Any] = [_get(obj, "metadata", "name") or ""]
        cells.extend(cell(obj) for _, _, cell, _ in extra)
        if custom is None:
            cells.append(_age(obj, moment))
        cells.extend(cell(obj) for _, _, cell, _ in after)
        row: dict[str, Any] = {"cells": cells}
        row_object = _row_object(resource, obj, include_object)
        if row_object is not None:
            row["object"] = row_object
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_metadata),
        "columnDefinitions": columns,
        "rows": rows,
    }
