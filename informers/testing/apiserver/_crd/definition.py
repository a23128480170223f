"""What a CustomResourceDefinition says about one served version of its
kind: the ``openAPIV3Schema``, the subresources (``status``, ``scale`` with
its paths) and the ``additionalPrinterColumns``; and :func:`admit`, the
schema's defaulting, pruning and validation of an object on its way into
storage.

Pure functions of the CRD document (a dict as stored); thread-safe.
"""

from __future__ import annotations

import threading
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._crd import schema as _schema
from informers.testing.apiserver._crd.validator import Validator, compile_schema
from informers.wire.resources import Resource

__all__ = [
    "ScalePaths",
    "admit",
    "crd_name",
    "printer_columns",
    "read_defaults",
    "scale_paths",
    "subresource_names",
    "version_entry",
    "version_schema",
]

#: ``(specReplicasPath, statusReplicasPath, labelSelectorPath or "")``.
ScalePaths = tuple[str, str, str]


def crd_name(resource: Resource) -> str:
    """The name of the CRD that defines ``resource``: ``<plural>.<group>``."""
    return f"{resource.plural}.{resource.group}"


def version_entry(crd: dict[str, Any] | None, version: str) -> dict[str, Any]:
    """The ``spec.versions[]`` entry of ``version`` (``{}`` when absent)."""
    if not isinstance(crd, dict):
        return {}
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    for entry in versions if isinstance(versions, list) else ():
        if isinstance(entry, dict) and entry.get("name") == version:
            return entry
    return {}


def version_schema(crd: dict[str, Any] | None, version: str) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of ``version``, or None (no schema)."""
    schema = version_entry(crd, version).get("schema")
    found = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
    return found if isinstance(found, dict) else None


def _subresources(crd: dict[str, Any] | None, version: str) -> dict[str, Any]:
    found = version_entry(crd, version).get("subresources")
    return found if isinstance(found, dict) else {}


def subresource_names(crd: dict[str, Any] | None, version: str) -> tuple[str, ...]:
    """The subresources ``version`` serves, of ``status`` and ``scale``."""
    subs = _subresources(crd, version)
    return tuple(name for name in ("status", "scale") if isinstance(subs.get(name), dict))


def scale_paths(crd: dict[str, Any] | None, version: str) -> ScalePaths | None:
    """The paths of the ``scale`` subresource of ``version``, or None."""
    scale = _subresources(crd, version).get("scale")
    if not isinstance(scale, dict):
        return None
    return (
        str(scale.get("specReplicasPath") or ".spec.replicas"),
        str(scale.get("statusReplicasPath") or ".status.replicas"),
        str(scale.get("labelSelectorPath") or ""),
    )


def printer_columns(crd: dict[str, Any] | None, version: str) -> list[dict[str, Any]]:
    """The ``additionalPrinterColumns`` of ``version`` (each with ``name``,
    ``type``, ``jsonPath`` and optionally ``description``, ``priority``,
    ``format``); empty when it declares none."""
    columns = version_entry(crd, version).get("additionalPrinterColumns")
    if not isinstance(columns, list):
        return []
    return [
        c
        for c in columns
        if isinstance(c, dict) and isinstance(c.get("name"), str) and c.get("jsonPath")
    ]


_COMPILED_LOCK = threading.Lock()
#: (CRD uid, CRD resourceVersion, version) -> its compiled validator; guarded
#: by _COMPILED_LOCK, bounded (oldest dropped).
_COMPILED: dict[tuple[str, str, str], Validator] = {}
_COMPILED_MAX = 256


def _validator(crd: dict[str, Any], version: str, schema: dict[str, Any]) -> Validator:
    """The compiled validator of ``schema``, cached per CRD version (a stored
    CRD is never mutated: a new resourceVersion is a new schema)."""
    meta = crd.get("metadata") or {}
    key = (str(meta.get("uid")), str(meta.get("resourceVersion")), version)
    with _COMPILED_LOCK:
        found = _COMPILED.get(key)
    if found is not None:
        return found
    compiled = compile_schema(schema)
    with _COMPILED_LOCK:
        if len(_COMPILED) >= _COMPILED_MAX:
            del _COMPILED[next(iter(_COMPILED))]
        _COMPILED[key] = compiled
    return compiled


def admit(
    crd: dict[str, Any] | None,
    resource: Resource,
    obj: dict[str, Any],
    *,
    creating: bool = False,
) -> dict[str, Any]:
    """``obj`` (a custom resource of ``resource``) defaulted and pruned by its
    version's schema; 422 Invalid naming every field that violates it. An
    object of a kind without a CRD or schema is returned unchanged, except
    that a create (``creating``) drops the ``status`` of a version with a
    status subresource (as the real server does). Thread-safe (compiled
    validators are cached under a lock)."""
    if creating and "status" in obj and "status" in subresource_names(crd, resource.version):
        obj = {k: v for k, v in obj.items() if k != "status"}
    schema = version_schema(crd, resource.version)
    if crd is None or schema is None:
        return obj
    new: dict[str, Any] = _schema.default_and_prune(schema, obj)
    causes = _validator(crd, resource.version, schema).validate(new)
    if causes:
        name = str((new.get("metadata") or {}).get("name") or "")
        raise _status.invalid(resource.group, resource.kind, name, causes)
    return new


def read_defaults(crd: dict[str, Any] | None, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as a read returns it: the defaults of the schema of its
    ``apiVersion`` applied (the same dict when there is nothing to add)."""
    api_version = str(obj.get("apiVersion") or "")
    schema = version_schema(crd, api_version.rpartition("/")[2])
    if schema is None:
        return obj
    defaulted: dict[str, Any] = _schema.default(schema, obj)
    return obj if defaulted == obj else defaulted
