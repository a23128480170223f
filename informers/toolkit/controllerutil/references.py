"""References to objects: the ``apiVersion``/``kind`` of an object, and the
``ObjectReference`` an Event or an owner reference is made from.

Objects a list returns (and so every object in an informer's cache) carry no
``apiVersion`` and ``kind``: only a single GET or a watch event has them. So
every function here takes an optional ``resource`` (a
:class:`~informers.wire.resources.Resource`) that supplies them when the object
lacks them; an object that has them keeps its own.

Objects are dicts (the parsed JSON) or attribute-style models of the
``kubernetes`` client. Pure and thread-safe; nothing here changes the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from informers.errors import ObjectKeyError, ObjectReferenceError
from informers.wire.objects import get_name, get_namespace, get_resource_version, get_uid
from informers.wire.resources import Resource

__all__ = ["api_group", "object_reference", "type_meta"]


def _top_field(obj: Any, json_name: str, attr_name: str) -> str:
    value = obj.get(json_name) if isinstance(obj, Mapping) else getattr(obj, attr_name, None)
    return value if isinstance(value, str) else ""


def type_meta(obj: Any, resource: Resource | None = None) -> tuple[str, str]:
    """``(apiVersion, kind)`` of ``obj``, each taken from the object when it
    has it and from ``resource`` otherwise. Raises
    :class:`~informers.errors.ObjectReferenceError` naming what is missing
    from both."""
    api_version = _top_field(obj, "apiVersion", "api_version")
    kind = _top_field(obj, "kind", "kind")
    if resource is not None:
        api_version = api_version or resource.api_version
        kind = kind or resource.kind
    missing = [name for name, value in (("apiVersion", api_version), ("kind", kind)) if not value]
    if missing:
        raise ObjectReferenceError(
            f"object has no {' or '.join(missing)} (a listed or cached object carries "
            "neither: pass its resource)"
        )
    return api_version, kind


def api_group(api_version: str) -> str:
    """The group of an ``apiVersion``: ``"apps"`` for ``"apps/v1"``, ``""``
    for the core ``"v1"``."""
    group, sep, _ = api_version.rpartition("/")
    return group if sep else ""


def _dict_reference(
    obj: dict[str, Any], resource: Resource | None, field_path: str
) -> dict[str, str] | None:
    """:func:`object_reference` of a well-formed dict; ``None`` for anything
    the general path must look at (and explain)."""
    metadata = obj.get("metadata")
    if type(metadata) is not dict:
        return None
    api_version = obj.get("apiVersion") or (resource.api_version if resource else None)
    kind = obj.get("kind") or (resource.kind if resource else None)
    name = metadata.get("name")
    if not (type(api_version) is str and type(kind) is str and type(name) is str and name):
        return None
    ref = {"apiVersion": api_version, "kind": kind, "name": name}
    for key in ("namespace", "uid", "resourceVersion"):
        value = metadata.get(key)
        if value and type(value) is str:
            ref[key] = value
    if field_path:
        ref["fieldPath"] = field_path
    return ref


def object_reference(
    obj: Any, resource: Resource | None = None, *, field_path: str = ""
) -> dict[str, str]:
    """The ``ObjectReference`` of ``obj`` (as client-go's
    ``reference.GetReference`` makes it): ``apiVersion``, ``kind``, ``name``,
    and ``namespace``, ``uid``, ``resourceVersion`` and ``fieldPath`` when
    they are not empty. A new dict.

    Raises :class:`~informers.errors.ObjectReferenceError` when ``obj`` has
    no ``metadata.name``, or no ``apiVersion``/``kind`` and no ``resource``.
    """
    if type(obj) is dict:  # the common case, without the general accessors
        ref = _dict_reference(obj, resource, field_path)
        if ref is not None:
            return ref
    api_version, kind = type_meta(obj, resource)
    try:
        name = get_name(obj)
    except ObjectKeyError as error:
        raise ObjectReferenceError(f"cannot refer to a {kind}: {error}") from None
    ref = {"apiVersion": api_version, "kind": kind, "name": name}
    for key, value in (
        ("namespace", get_namespace(obj)),
        ("uid", get_uid(obj)),
        ("resourceVersion", get_resource_version(obj)),
        ("fieldPath", field_path),
    ):
        if value:
            ref[key] = value
    return ref
