"""``create_or_update`` and ``create_or_patch``: controller-runtime's
``controllerutil.CreateOrUpdate`` / ``CreateOrPatch`` on plain dicts.

Both take the object to reconcile (a dict naming at least ``apiVersion``,
``kind``, ``metadata.name`` and, for namespaced kinds,
``metadata.namespace``) and a ``mutate(obj)`` function that sets the fields
the controller wants on it, in place:

1. the object is read through the client (from its cache when it has one);
2. missing: ``mutate`` runs on ``obj`` as given and it is created --
   :attr:`OperationResult.CREATED`;
3. present: ``obj`` is replaced by (a copy of) the stored object,
   ``mutate`` runs on it, and the result is compared with what was stored:
   equal -- :attr:`OperationResult.UNCHANGED`, nothing is written; else it is
   written back -- an update (``PUT`` with the stored ``resourceVersion``: a
   concurrent change is a :class:`~informers.errors.ConflictError`, retry the
   reconcile) or merge patches of the object and of its status.

``mutate`` must not change the name or namespace (:class:`ValueError`). On
return ``obj`` holds the server's answer (or the stored object when
unchanged). Errors of the reads and writes propagate.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from informers.errors import NotFoundError
from informers.toolkit.client.client import Client

__all__ = ["MutateFunc", "OperationResult", "create_or_patch", "create_or_update", "merge_patch"]

#: What ``create_or_update`` calls to set the wanted state on the object.
MutateFunc = Callable[[MutableMapping[str, Any]], object]


class OperationResult(enum.StrEnum):
    """What :func:`create_or_update` / :func:`create_or_patch` did (the
    values are controller-runtime's)."""

    #: Nothing was written: the stored object already was as wanted.
    UNCHANGED = "unchanged"
    #: The object did not exist and was created.
    CREATED = "created"
    #: The object was updated (by ``create_or_patch``: not its status).
    UPDATED = "updated"
    #: ``create_or_patch`` patched the object and its status.
    UPDATED_STATUS = "updatedStatus"
    #: ``create_or_patch`` patched only the status.
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


def _identity(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _mutate(mutate: MutateFunc, obj: MutableMapping[str, Any]) -> None:
    before = _identity(obj)
    mutate(obj)
    if _identity(obj) != before:
        raise ValueError("mutate must not change the object's name or namespace")


def _stored(client: Client, obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """A private copy of the stored object, or ``None`` when there is none."""
    resource = client.resource_of(obj)
    namespace, name = _identity(obj)
    try:
        found = client.get(resource, name, namespace=namespace or None)
    except NotFoundError:
        return None
    stored: dict[str, Any] = copy.deepcopy(found)  # the cache's objects are shared
    stored.setdefault("apiVersion", obj.get("apiVersion"))
    stored.setdefault("kind", obj.get("kind"))
    return stored


def _replace(obj: MutableMapping[str, Any], new: Mapping[str, Any]) -> None:
    obj.clear()
    obj.update(new)


def create_or_update(
    client: Client, obj: MutableMapping[str, Any], mutate: MutateFunc
) -> OperationResult:
    """Make the object ``obj`` names be as ``mutate`` wants it (see the module
    documentation): :attr:`~OperationResult.CREATED`,
    :attr:`~OperationResult.UPDATED` (one ``PUT``) or
    :attr:`~OperationResult.UNCHANGED`. Blocks on the reads and writes."""
    stored = _stored(client, obj)
    if stored is None:
        _mutate(mutate, obj)
        _replace(obj, client.create(obj))
        return OperationResult.CREATED
    _replace(obj, copy.deepcopy(stored))
    _mutate(mutate, obj)
    if obj == stored:
        return OperationResult.UNCHANGED
    _replace(obj, client.update(obj))
    return OperationResult.UPDATED


def merge_patch(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``before`` into ``after``:
    changed and new keys with their new values (nested mappings as patches
    of their own), removed keys as ``None``; lists are replaced whole."""
    patch: dict[str, Any] = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, new in after.items():
        old = before.get(key, _MISSING)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            patch[key] = merge_patch(old, new)
        else:
            patch[key] = copy.deepcopy(new)
    return patch


_MISSING: Any = object()


def create_or_patch(
    client: Client, obj: MutableMapping[str, Any], mutate: MutateFunc
) -> OperationResult:
    """As :func:`create_or_update`, but an existing object is changed with
    merge patches computed from the difference (no ``resourceVersion``
    precondition): one of the object without its status, one of the
    ``status`` subresource. Answers :attr:`~OperationResult.UPDATED`,
    :attr:`~OperationResult.UPDATED_STATUS` (both),
    :attr:`~OperationResult.UPDATED_STATUS_ONLY` or
    :attr:`~OperationResult.UNCHANGED`; :attr:`~OperationResult.CREATED`
    when it was missing (a status ``mutate`` set is then not written:
    creates ignore it, as in controller-runtime)."""
    stored = _stored(client, obj)
    if stored is None:
        _mutate(mutate, obj)
        _replace(obj, client.create(obj))
        return OperationResult.CREATED
    _replace(obj, copy.deepcopy(stored))
    _mutate(mutate, obj)
    if obj == stored:
        return OperationResult.UNCHANGED
    resource = client.resource_of(obj)
    namespace, name = _identity(obj)
    before = {k: v for k, v in stored.items() if k != "status"}
    after = {k: v for k, v in obj.items() if k != "status"}
    body_patch = merge_patch(before, after)
    status_patch = merge_patch(
        {"status": stored.get("status") or {}}, {"status": obj.get("status") or {}}
    )
    answer: dict[str, Any] = stored
    if body_patch:
        answer = client.patch(resource, name, body_patch, namespace=namespace or None)
    if status_patch:
        answer = client.patch_status(resource, name, status_patch, namespace=namespace or None)
    _replace(obj, answer)
    if body_patch and status_patch:
        return OperationResult.UPDATED_STATUS
    if status_patch:
        return OperationResult.UPDATED_STATUS_ONLY
    return OperationResult.UPDATED
