"""Finalizers on an object dict: add, remove, ask, as controller-runtime's
``controllerutil.AddFinalizer`` and friends do.

A finalizer is a string in ``metadata.finalizers``. While an object has one,
deleting it only sets ``metadata.deletionTimestamp``; the object stays until
every finalizer is removed. A controller that must clean up something
outside the object (an external resource, a child in another namespace)
follows the pattern::

    if obj["metadata"].get("deletionTimestamp"):      # being deleted
        if has_finalizer(obj, FINALIZER):
            clean_up(obj)                              # idempotent
            if remove_finalizer(obj, FINALIZER):
                update(obj)                            # lets the deletion finish
        return
    if add_finalizer(obj, FINALIZER):
        update(obj)                                    # before creating anything outside

The API server refuses a *new* finalizer on an object being deleted, which is
why the finalizer goes on before anything is created outside.

These functions change the dict **in place**: never call them on an object
read from a cache (cached objects are shared and read-only); copy it first
(``copy.deepcopy``). ``metadata.finalizers`` keeps its order; an emptied list
stays as ``[]`` (so a merge patch of the metadata clears it). Not thread-safe
for one object: the caller owns the dict.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

__all__ = ["add_finalizer", "has_finalizer", "remove_finalizer"]


def _finalizers(obj: MutableMapping[str, Any]) -> list[str]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, MutableMapping):
        return []
    finalizers = metadata.get("finalizers")
    return finalizers if isinstance(finalizers, list) else []


def has_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Whether ``metadata.finalizers`` holds ``finalizer``. Reads only."""
    return finalizer in _finalizers(obj)


def add_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Append ``finalizer`` to ``metadata.finalizers`` unless it is there
    already (``metadata`` and the list are created when missing). Returns
    whether the object changed."""
    if has_finalizer(obj, finalizer):
        return False
    metadata = obj.get("metadata")
    if not isinstance(metadata, MutableMapping):
        metadata = obj["metadata"] = {}
    finalizers = metadata.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = metadata["finalizers"] = []
    finalizers.append(finalizer)
    return True


def remove_finalizer(obj: MutableMapping[str, Any], finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer`` from ``metadata.finalizers``,
    keeping the others in order. Returns whether the object changed."""
    finalizers = _finalizers(obj)
    if finalizer not in finalizers:
        return False
    finalizers[:] = [f for f in finalizers if f != finalizer]
    return True
