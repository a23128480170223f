"""Ready transforms for :meth:`SharedIndexInformer.set_transform
<informers.cache.informer.SharedIndexInformer.set_transform>` (and the factory's
``transform=``): trim what a cache does not need before it is stored.

A transform runs once per incoming object, at ingest, before the object is
cached and handed to any handler; never on tombstones. These helpers edit
the freshly parsed object in place (nothing else holds it yet) and return it,
and are idempotent, as a transform must be.

``managedFields`` (server-side apply's bookkeeping) is typically a third to a
half of a real object's JSON; the ``last-applied-configuration`` annotation
that ``kubectl apply`` writes repeats the whole object once more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "LAST_APPLIED_ANNOTATION",
    "chain",
    "strip_last_applied",
    "strip_managed_fields",
]

#: The annotation ``kubectl apply`` keeps the applied manifest in.
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

Transform = Callable[[Any], Any]


def strip_managed_fields(obj: Any) -> Any:
    """Drop ``metadata.managedFields``; returns ``obj`` (edited in place).

    Objects that are not dicts, or carry no metadata, pass unchanged.
    """
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def strip_last_applied(obj: Any) -> Any:
    """Drop the ``kubectl.kubernetes.io/last-applied-configuration``
    annotation (and an ``annotations`` map it leaves empty); returns ``obj``."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return obj
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED_ANNOTATION in annotations:
        del annotations[LAST_APPLIED_ANNOTATION]
        if not annotations:
            del meta["annotations"]
    return obj


def chain(*transforms: Transform) -> Transform:
    """One transform applying ``transforms`` in order (each to the result of
    the previous one)."""

    def chained(obj: Any) -> Any:
        for transform in transforms:
            obj = transform(obj)
        return obj

    return chained
