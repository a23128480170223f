"""Owner references on an object dict, with controller-runtime's rules
(``controllerutil.SetControllerReference`` and friends).

An owner reference in ``metadata.ownerReferences`` ties an object to the
object that made it: the garbage collector deletes it when the owner goes,
and ``blockOwnerDeletion`` makes a foreground deletion of the owner wait for
it. At most one reference is the *controller* (``controller: true``): the
object that manages this one, whose reconcile an event here should trigger
(:func:`informers.toolkit.runtime.enqueue_owner`).

Two references are to the same owner when they agree on the API *group*
(the version does not matter), ``kind`` and ``name``, as in
controller-runtime; setting a reference to an owner that is referred to
already replaces that reference (with the new ``uid`` and flags).

The garbage collector only honours references within one namespace, so an
owner must be in the object's namespace or cluster-scoped; anything else
raises :class:`~informers.errors.OwnerReferenceError`. A namespaced object
whose ``metadata.namespace`` is not set yet counts as cluster-scoped here,
as it does in controller-runtime: set the namespace first.

The owner is a dict or a ``kubernetes`` model; it needs ``apiVersion`` and
``kind`` (pass ``owner_resource`` for an object read from a cache, which has
neither), ``metadata.name`` and ``metadata.uid``
(:class:`~informers.errors.ObjectReferenceError` otherwise).

The functions that change something change the object dict **in place** and
return whether it changed: copy an object read from a cache first. Not
thread-safe for one object: the caller owns the dict.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from informers.errors import AlreadyOwnedError, ObjectReferenceError, OwnerReferenceError
from informers.toolkit.controllerutil.references import api_group, object_reference
from informers.wire.objects import get_namespace
from informers.wire.resources import Resource

__all__ = [
    "get_controller_of",
    "has_controller_reference",
    "has_owner_reference",
    "owner_reference",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]


def owner_reference(
    owner: Any,
    owner_resource: Resource | None = None,
    *,
    controller: bool | None = None,
    block_owner_deletion: bool | None = None,
) -> dict[str, Any]:
    """The owner reference to ``owner``: ``apiVersion``, ``kind``, ``name``,
    ``uid``, and the ``controller`` and ``blockOwnerDeletion`` flags when
    given. A new dict. Raises :class:`~informers.errors.ObjectReferenceError`
    when the owner lacks any of the four."""
    ref = object_reference(owner, owner_resource)
    if "uid" not in ref:
        raise ObjectReferenceError(
            f"the owner {ref['kind']} {ref['name']!r} has no metadata.uid (create it first)"
        )
    out: dict[str, Any] = {
        "apiVersion": ref["apiVersion"],
        "kind": ref["kind"],
        "name": ref["name"],
        "uid": ref["uid"],
    }
    if controller is not None:
        out["controller"] = controller
    if block_owner_deletion is not None:
        out["blockOwnerDeletion"] = block_owner_deletion
    return out


def _refs(obj: Mapping[str, Any]) -> list[Any]:
    metadata = obj.get("metadata")
    refs = metadata.get("ownerReferences") if isinstance(metadata, Mapping) else None
    return refs if isinstance(refs, list) else []


def _same_owner(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (
        api_group(str(a.get("apiVersion", ""))) == api_group(str(b.get("apiVersion", "")))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def _object_key(obj: Mapping[str, Any]) -> str:
    namespace = get_namespace(obj)
    metadata = obj.get("metadata")
    name = metadata.get("name", "") if isinstance(metadata, Mapping) else ""
    return f"{namespace}/{name}" if namespace else str(name)


def _validate_namespaces(owner: Any, obj: Mapping[str, Any]) -> None:
    owner_ns = get_namespace(owner)
    if not owner_ns:
        return
    obj_ns = get_namespace(obj)
    if not obj_ns:
        raise OwnerReferenceError(
            "a cluster-scoped object must not have a namespaced owner "
            f"(the owner's namespace is {owner_ns!r})"
        )
    if obj_ns != owner_ns:
        raise OwnerReferenceError(
            "cross-namespace owner references are not allowed: the owner is in "
            f"{owner_ns!r}, the object in {obj_ns!r}"
        )


def _upsert(obj: MutableMapping[str, Any], ref: dict[str, Any]) -> bool:
    metadata = obj.get("metadata")
    if not isinstance(metadata, MutableMapping):
        metadata = obj["metadata"] = {}
    refs = metadata.get("ownerReferences")
    if not isinstance(refs, list):
        refs = metadata["ownerReferences"] = []
    for index, existing in enumerate(refs):
        if isinstance(existing, Mapping) and _same_owner(existing, ref):
            if existing == ref:
                return False
            refs[index] = ref
            return True
    refs.append(ref)
    return True


def get_controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true``, or ``None`` (the
    object's own dict, not a copy). Reads only."""
    for ref in _refs(obj):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def has_controller_reference(obj: Mapping[str, Any]) -> bool:
    """Whether some owner reference has ``controller: true``."""
    return get_controller_of(obj) is not None


def has_owner_reference(
    obj: Mapping[str, Any], owner: Any, owner_resource: Resource | None = None
) -> bool:
    """Whether ``obj`` refers to ``owner`` (same group, kind and name; the
    uid is not compared). Raises
    :class:`~informers.errors.ObjectReferenceError` when the owner has no
    ``apiVersion``/``kind`` and no ``owner_resource``."""
    ref = object_reference(owner, owner_resource)
    return any(isinstance(r, Mapping) and _same_owner(r, ref) for r in _refs(obj))


def set_controller_reference(
    owner: Any,
    obj: MutableMapping[str, Any],
    *,
    owner_resource: Resource | None = None,
    block_owner_deletion: bool = True,
) -> bool:
    """Make ``owner`` the controller of ``obj``: a reference with
    ``controller: true`` and ``blockOwnerDeletion: true`` (or
    ``block_owner_deletion``), replacing a reference to the same owner.
    Returns whether ``obj`` changed.

    Raises :class:`~informers.errors.AlreadyOwnedError` (naming the other
    controller) when another object is the controller already,
    :class:`~informers.errors.OwnerReferenceError` when the namespaces do not
    allow the reference, :class:`~informers.errors.ObjectReferenceError` when
    the owner cannot be referred to. Nothing changes when it raises.
    """
    _validate_namespaces(owner, obj)
    ref = owner_reference(
        owner, owner_resource, controller=True, block_owner_deletion=block_owner_deletion
    )
    existing = get_controller_of(obj)
    if existing is not None and not _same_owner(existing, ref):
        raise AlreadyOwnedError(_object_key(obj), dict(existing))
    return _upsert(obj, ref)


def set_owner_reference(
    owner: Any,
    obj: MutableMapping[str, Any],
    *,
    owner_resource: Resource | None = None,
    block_owner_deletion: bool | None = None,
) -> bool:
    """Add a plain (not controller) reference to ``owner``, or replace the
    reference to the same owner, as controller-runtime's
    ``SetOwnerReference``: the new reference carries neither ``controller``
    nor (unless ``block_owner_deletion`` is given) ``blockOwnerDeletion``,
    so it also turns a controller reference to this owner into a plain one.
    Returns whether ``obj`` changed. Raises as
    :func:`set_controller_reference` does, except
    :class:`~informers.errors.AlreadyOwnedError`.
    """
    _validate_namespaces(owner, obj)
    ref = owner_reference(owner, owner_resource, block_owner_deletion=block_owner_deletion)
    return _upsert(obj, ref)


def remove_owner_reference(
    owner: Any, obj: MutableMapping[str, Any], *, owner_resource: Resource | None = None
) -> bool:
    """Remove the reference to ``owner`` (same group, kind and name) from
    ``obj``. Returns whether there was one (controller-runtime raises
    instead; here removing what is not there is a no-op). Raises
    :class:`~informers.errors.ObjectReferenceError` when the owner has no
    ``apiVersion``/``kind`` and no ``owner_resource``."""
    ref = object_reference(owner, owner_resource)
    refs = _refs(obj)
    kept = [r for r in refs if not (isinstance(r, Mapping) and _same_owner(r, ref))]
    if len(kept) == len(refs):
        return False
    refs[:] = kept
    return True
