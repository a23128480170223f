"""The selectable fields of each resource, as the API server's registry
defines them: which names a ``fieldSelector`` may use
(:func:`supported_fields`; any other is a 400), and an object's values for
them (:func:`object_fields`, for
:meth:`~informers.wire.selectors.fields.FieldSelector.matches`).

Pure and thread-safe.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["object_fields", "supported_fields"]


_COMMON_FIELDS = ("metadata.name", "metadata.namespace")

#: Field paths (beyond metadata.name/namespace) the server supports per resource.
_RESOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "events": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "secrets": ("type",),
    "namespaces": ("status.phase",),
    "nodes": ("spec.unschedulable",),
    "replicasets": ("status.replicas",),
    "replicationcontrollers": ("status.replicas",),
    "jobs": ("status.successful",),
}

# Paths whose source differs from the field name.
# (The Job field is named ``status.successful``, as the real server names
# it, and reads ``status.succeeded``.)
_FIELD_SOURCES: dict[str, tuple[str, ...]] = {
    "source": ("source", "component"),
    "status.successful": ("status", "succeeded"),
}
# Defaults the server applies when the object leaves the field out.
_FIELD_DEFAULTS: dict[tuple[str, str], str] = {
    ("pods", "spec.hostNetwork"): "false",
    ("nodes", "spec.unschedulable"): "false",
    ("replicasets", "status.replicas"): "0",
    ("replicationcontrollers", "status.replicas"): "0",
    ("jobs", "status.successful"): "0",
}


def supported_fields(resource_plural: str) -> frozenset[str]:
    """The field names a field selector may use for this resource (as the API
    server: ``metadata.name`` and ``metadata.namespace`` everywhere, plus
    e.g. ``spec.nodeName`` and ``status.phase`` for pods). The emulator
    answers 400 for any other field."""
    return frozenset(_COMMON_FIELDS + _RESOURCE_FIELDS.get(resource_plural, ()))


def _field_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def object_fields(obj: Mapping[str, Any], resource_plural: str) -> dict[str, str]:
    """The selectable fields of a raw object, as strings (missing ones are
    ``""``, booleans ``"true"``/``"false"``), keyed by the names of
    :func:`supported_fields`; feed the result to
    :meth:`~informers.wire.selectors.fields.FieldSelector.matches`."""
    metadata = obj.get("metadata") or {}
    fields = {
        "metadata.name": _field_text(metadata.get("name")),
        "metadata.namespace": _field_text(metadata.get("namespace")),
    }
    for name in _RESOURCE_FIELDS.get(resource_plural, ()):
        value: Any = obj
        for part in _FIELD_SOURCES.get(name, tuple(name.split("."))):
            value = value.get(part) if isinstance(value, Mapping) else None
        text = _field_text(value)
        if value is None:
            text = _FIELD_DEFAULTS.get((resource_plural, name), "")
        fields[name] = text
    return fields
