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

import sys
from collections.abc import Callable
from typing import Any

from informers.cache.compact.codecs import _json_dumps
from informers.wire.partial import without_managed_fields

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
    """Drop ``metadata.managedFields``; returns ``obj`` (a dict, edited in
    place).

    A :class:`~informers.wire.raw.RawObject` (what a decode-on-demand store's
    informer ingests, :mod:`informers.cache.compact.raw`) is read-only: one
    holding ``managedFields`` gives a new raw object of its JSON text with
    that member cut out (:func:`~informers.wire.partial.without_managed_fields`,
    about 1 us for a pod's metadata; when the text alone cannot tell, decoded
    by the exact parser and encoded as the store encodes a dict); one without
    passes as it is. Other
    objects, or ones carrying no metadata, pass unchanged.
    """
    if type(obj) is not dict:
        raw = sys.modules.get("informers.wire.raw")  # loaded if obj can be a RawObject
        if raw is not None and type(obj) is raw.RawObject:
            return _strip_raw(obj, raw.RawObject)
        return obj
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def _strip_raw(obj: Any, raw_object: Any) -> Any:
    data = obj.data
    cut = without_managed_fields(data)  # the text less the member, when it can tell
    if cut is data:
        return obj
    if cut is not None:
        return raw_object(cut, checked=True, lazy=True)  # still UTF-8: an ASCII-bounded cut
    decoded = obj.decoded()  # shared with obj: copied, never edited
    meta = decoded.get("metadata") if type(decoded) is dict else None
    if type(meta) is not dict or "managedFields" not in meta:
        return obj
    stripped = {k: v for k, v in meta.items() if k != "managedFields"}
    return raw_object(_json_dumps({**decoded, "metadata": stripped}), checked=True, lazy=True)


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
