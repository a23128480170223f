"""``ObjectMeta`` validation (apimachinery ``ValidateObjectMetaAccessor`` and
``...Update``): which name rule a kind's names follow, labels, annotations
(keys and total size), owner references and finalizers; on update, no new
finalizers once the object is being deleted.

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers.testing.apiserver._validation import names
from informers.testing.apiserver._validation.errors import FieldErrors, go_strings
from informers.wire.resources import Resource

__all__ = [
    "ANNOTATIONS_LIMIT",
    "name_errors",
    "validate_labels",
    "validate_meta",
    "validate_meta_update",
]

#: ``TotalAnnotationSizeLimitB``: keys and values together, in bytes.
ANNOTATIONS_LIMIT = 256 * 1024

_RBAC = "rbac.authorization.k8s.io"


def _name_rule(resource: Resource) -> Callable[[str], tuple[str, ...]]:
    if resource.group == _RBAC:
        return names.path_segment
    if resource.group == "" and resource.kind == "Service":
        return names.dns1035_label
    if resource.group == "" and resource.kind == "Namespace":
        return names.dns1123_label
    return names.dns1123_subdomain


def name_errors(resource: Resource, name: str, *, prefix: bool = False) -> list[str]:
    """What is wrong with ``name`` (or, ``prefix``, a ``generateName``) as
    the name of a ``resource`` object: the kind's name rule (RBAC: a path
    segment; Service: a DNS-1035 label; Namespace: a DNS-1123 label; else a
    DNS-1123 subdomain), and at most 52 characters for a CronJob."""
    rule = _name_rule(resource)
    if prefix and name.endswith("-") and rule is not names.path_segment:
        name = name[:-1] + "a"  # maskTrailingDash
    errs = list(rule(name))
    if resource.kind == "CronJob" and resource.group == "batch" and len(name) > 52 and not prefix:
        errs.append("must be no more than 52 characters")
    return errs


def _string_map(errs: FieldErrors, path: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.invalid(path, value, "must be a map of strings")
        return {}
    return value


def validate_labels(errs: FieldErrors, path: str, labels: Any) -> None:
    """``ValidateLabels``: every key a qualified name, every value a label value."""
    items = _string_map(errs, path, labels)
    qualified, label_value = names.qualified_name, names.label_value
    for key, value in items.items():  # the common case: all valid, in any order
        if qualified(key) or type(value) is not str or label_value(value):
            break
    else:
        return
    for key, value in sorted(items.items()):
        for msg in names.qualified_name(key):
            errs.invalid(path, key, msg)
        text = value if isinstance(value, str) else str(value)
        for msg in names.label_value(text):
            errs.invalid(path, text, msg)


def _annotations(errs: FieldErrors, path: str, annotations: Any) -> None:
    items = _string_map(errs, path, annotations)
    qualified = names.qualified_name
    size = 0
    for key, value in items.items():  # the common case: all valid, in any order
        if qualified(key.lower()) or type(value) is not str:
            break
        size += len(key.encode()) + len(value.encode())
    else:
        if size <= ANNOTATIONS_LIMIT:
            return
    size = 0
    for key, value in sorted(items.items()):
        for msg in names.qualified_name(key.lower()):
            errs.invalid(path, key, msg)
        size += len(key.encode()) + len(str(value).encode())
    if size > ANNOTATIONS_LIMIT:
        errs.too_long(path, ANNOTATIONS_LIMIT)


def _owner_references(errs: FieldErrors, refs: Any) -> None:
    path = "metadata.ownerReferences"
    if refs is None:
        return
    if not isinstance(refs, list):
        errs.invalid(path, refs, "must be a list")
        return
    controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            errs.invalid(path, ref, "must be an object")
            continue
        api_version = str(ref.get("apiVersion") or "")
        if not api_version.rpartition("/")[2]:
            errs.invalid(f"{path}.apiVersion", api_version, "version must not be empty")
        for field in ("kind", "name", "uid"):
            if not ref.get(field):
                errs.invalid(f"{path}.{field}", str(ref.get(field) or ""), "must not be empty")
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                errs.invalid(
                    path,
                    refs,
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {controller} and {current}",
                )
            else:
                controller = current


def _finalizers(errs: FieldErrors, finalizers: Any) -> None:
    path = "metadata.finalizers"
    if finalizers is None:
        return
    if not isinstance(finalizers, list):
        errs.invalid(path, finalizers, "must be a list of strings")
        return
    for finalizer in finalizers:
        for msg in names.qualified_name(str(finalizer)):
            errs.invalid(path, str(finalizer), msg)
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.invalid(
            path,
            None,
            "finalizer orphan and foregroundDeletion cannot be both set",
            shown=go_strings(finalizers),
        )


def validate_meta(errs: FieldErrors, meta: dict[str, Any], resource: Resource) -> None:
    """``ValidateObjectMeta`` less the name (the storage checks it first):
    ``generateName``, generation, labels, annotations, owner references and
    finalizers."""
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        for msg in name_errors(resource, generate, prefix=True):
            errs.invalid("metadata.generateName", generate, msg)
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        errs.invalid("metadata.generation", generation, "must be greater than or equal to 0")
    validate_labels(errs, "metadata.labels", meta.get("labels"))
    _annotations(errs, "metadata.annotations", meta.get("annotations"))
    _owner_references(errs, meta.get("ownerReferences"))
    _finalizers(errs, meta.get("finalizers"))


def validate_meta_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """``ValidateObjectMetaUpdate``: no finalizer may be added once the
    object is being deleted; labels, annotations and owner references as
    on create. (The storage keeps the server-owned fields itself.)"""
    if old.get("deletionTimestamp"):
        before = set(old.get("finalizers") or ())
        added = sorted({str(f) for f in new.get("finalizers") or () if f not in before})
        if added:
            errs.forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the object is being deleted, found new "
                f"finalizers {go_strings(added)}",
            )
    validate_labels(errs, "metadata.labels", new.get("labels"))
    _annotations(errs, "metadata.annotations", new.get("annotations"))
    _owner_references(errs, new.get("ownerReferences"))
