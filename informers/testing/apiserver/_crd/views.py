"""The custom-resource parts of the emulator's answers that depend on the
stored CustomResourceDefinition: the ``scale`` subresource (an
``autoscaling/v1`` Scale over the CRD's ``specReplicasPath``,
``statusReplicasPath`` and ``labelSelectorPath``), the Table columns of its
``additionalPrinterColumns`` and whether discovery lists ``scale``.

Each function reads the CRD from :class:`Storage` (thread-safe: storage takes
its lock); kinds without a CRD (built-in, or registered from Python) get
``None`` or nothing.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._crd import definition
from informers.testing.apiserver._crd.jsonpath import find
from informers.testing.apiserver._scale import SCALABLE
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._table import human_duration
from informers.wire.resources import BUILTIN_RESOURCES, CUSTOMRESOURCEDEFINITIONS, Resource

__all__ = [
    "Column",
    "crd_of",
    "from_scale",
    "scalable",
    "scale_paths",
    "table_columns",
    "to_scale",
]

#: ``(title, type, cell function, priority)`` as :func:`._table.to_table` takes them.
Column = tuple[str, str, Callable[[dict[str, Any]], Any], int]

_BUILTIN = frozenset((r.group, r.plural) for r in BUILTIN_RESOURCES)
_IDENTITY = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def crd_of(storage: Storage, resource: Resource) -> dict[str, Any] | None:
    """The stored CRD of ``resource`` (None for built-in kinds and kinds
    without one)."""
    if (resource.group, resource.plural) in _BUILTIN:
        return None
    try:
        return storage.get(CUSTOMRESOURCEDEFINITIONS, definition.crd_name(resource)).obj
    except _status.StatusError:
        return None


def scale_paths(storage: Storage, resource: Resource) -> definition.ScalePaths | None:
    """The scale paths of ``resource``'s version, or None (no scale subresource)."""
    return definition.scale_paths(crd_of(storage, resource), resource.version)


def _first(obj: dict[str, Any], path: str) -> Any:
    try:
        found = find(obj, path) if path else []
    except ValueError:
        return None
    return found[0] if found else None


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def to_scale(paths: definition.ScalePaths, obj: dict[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of a custom resource (replicas read at the
    CRD's paths, 0 when absent)."""
    spec_path, status_path, selector_path = paths
    meta = obj.get("metadata") or {}
    status: dict[str, Any] = {"replicas": _int(_first(obj, status_path))}
    selector = _first(obj, selector_path)
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _IDENTITY if k in meta},
        "spec": {"replicas": _int(_first(obj, spec_path))},
        "status": status,
    }


def from_scale(paths: definition.ScalePaths) -> str:
    """The path a Scale's ``spec.replicas`` is written to."""
    return paths[0]


def _cell(kind: str, path: str) -> Callable[[dict[str, Any]], Any]:
    def cell(obj: dict[str, Any]) -> Any:
        try:
            found = find(obj, path)
        except ValueError:
            return None
        if not found or found[0] is None:
            return None
        value = found[0]
        if kind == "string":
            if isinstance(value, str):
                return value
            return json.dumps(value, separators=(",", ":"))
        if kind == "integer":
            return int(value) if isinstance(value, int | float) else None
        if kind == "number":
            return value if isinstance(value, int | float) else None
        if kind == "boolean":
            return value if isinstance(value, bool) else None
        if kind == "date":
            return _age(value)
        return value

    return cell


def _age(value: Any) -> Any:
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.UTC)
    return human_duration((datetime.datetime.now(datetime.UTC) - stamp).total_seconds())


def table_columns(storage: Storage, resource: Resource) -> list[Column] | None:
    """The columns after NAME of ``resource``'s Tables when its CRD declares
    ``additionalPrinterColumns`` (then there is no implicit AGE), else None."""
    columns = definition.printer_columns(crd_of(storage, resource), resource.version)
    if not columns:
        return None
    out: list[Column] = []
    for column in columns:
        kind = str(column.get("type") or "string")
        priority = column.get("priority")
        out.append(
            (
                str(column["name"]),
                kind,
                _cell(kind, str(column["jsonPath"])),
                priority if isinstance(priority, int) else 0,
            )
        )
    return out


def scalable(storage: Storage) -> Callable[[Resource], bool]:
    """Whether a resource serves ``scale``: the built-in scalable kinds, and
    custom resources whose CRD version declares ``subresources.scale`` (what
    discovery lists)."""

    def serves_scale(resource: Resource) -> bool:
        return resource in SCALABLE or scale_paths(storage, resource) is not None

    return serves_scale
