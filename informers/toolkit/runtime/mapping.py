"""Map functions: from the object of an event to the requests it causes.

A :data:`MapFunc` takes an object and returns the :class:`Request`\\ s to
enqueue (controller-runtime's ``handler.MapFunc``). Without one, a source
enqueues the object's own key (:func:`request_for_object`, controller-runtime's
``EnqueueRequestForObject``). :func:`enqueue_owner` maps an object to its
owners named in ``metadata.ownerReferences``: a Pod event reconciles the
ReplicaSet that owns it.

Map functions run on the source's thread (an informer's listener); they must
be quick and must not mutate the object. The ones here are pure and
thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias

from informers.errors import ObjectKeyError
from informers.toolkit._logcontext import context_logger
from informers.toolkit.runtime.request import Request
from informers.wire.objects import DeletedFinalStateUnknown, get_namespace
from informers.wire.resources import Resource

__all__ = ["MapFunc", "enqueue_owner", "request_for_object"]

log = context_logger(logging.getLogger(__name__))

#: From an object to the requests it causes (possibly none).
MapFunc: TypeAlias = Callable[[Any], Iterable[Request]]


def request_for_object(obj: Any) -> list[Request]:
    """The object's own request (a tombstone: the key it carries). Raises
    :class:`~informers.errors.ObjectKeyError` when it has no usable key."""
    return [Request.for_object(obj)]


def _group_of(api_version: Any) -> str | None:
    """The group of an ``apiVersion`` (``"apps/v1"`` → ``"apps"``, ``"v1"`` →
    ``""``); ``None`` when it does not parse."""
    if not isinstance(api_version, str) or not api_version:
        return None
    group, slash, version = api_version.partition("/")
    if not slash:
        return ""
    if not group or not version or "/" in version:
        return None
    return group


def _owner_references(obj: Any) -> list[Mapping[str, Any]]:
    if isinstance(obj, DeletedFinalStateUnknown):
        obj = obj.obj
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
    if not isinstance(refs, list):
        return []
    return [r for r in refs if isinstance(r, Mapping)]


def enqueue_owner(
    owner: str | Resource,
    group: str | None = None,
    *,
    controller_only: bool = True,
    namespaced: bool | None = None,
) -> MapFunc:
    """A map function from an object to its owners of one kind.

    ``owner`` is the owner's kind (``"ReplicaSet"``, with ``group``, default
    ``""``, the core group) or a :class:`~informers.wire.resources.Resource`
    (kind, group and scope taken from it, e.g. ``REPLICASETS``). An owner
    reference matches when its ``kind`` and the group of its ``apiVersion``
    match; the version is ignored. With ``controller_only`` (the default,
    controller-runtime's ``OnlyControllerOwner``) only the first reference
    with ``controller: true`` is looked at; otherwise every reference is.

    A matching reference becomes ``Request(namespace, ref.name)`` with the
    object's own namespace, or ``""`` when the owner kind is cluster-scoped
    (``namespaced=False``; a Resource says it itself). Malformed references
    are skipped (logged at DEBUG with the object's key). Each owner is
    returned once.
    """
    if isinstance(owner, Resource):
        kind, owner_group = owner.kind, owner.group if group is None else group
        owner_namespaced = owner.namespaced if namespaced is None else namespaced
    elif isinstance(owner, str) and owner:
        kind, owner_group = owner, group or ""
        owner_namespaced = True if namespaced is None else namespaced
    else:
        raise ValueError(f"owner must be a kind name or a Resource, not {owner!r}")

    def map_owners(obj: Any) -> list[Request]:
        refs = _owner_references(obj)
        if controller_only:
            refs = [r for r in refs if r.get("controller") is True][:1]
        target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        namespace = get_namespace(target) if owner_namespaced else ""
        out: list[Request] = []
        for ref in refs:
            ref_group = _group_of(ref.get("apiVersion"))
            if ref.get("kind") != kind or ref_group != owner_group:
                continue
            try:
                request = Request(namespace, ref.get("name"))  # type: ignore[arg-type]
            except ObjectKeyError as error:
                log.debug(
                    "skipping an owner reference of %s: %s",
                    _key(obj),
                    error,
                    extra={"key": _key(obj)},
                )
                continue
            if request not in out:
                out.append(request)
        return out

    map_owners.__name__ = f"enqueue_owner_{kind}"
    return map_owners


def _key(obj: Any) -> str:
    try:
        return str(Request.for_object(obj))
    except ObjectKeyError:
        return "?"
