"""What a reconcile is asked to do (:class:`Request`) and what it answers
(:class:`Result`).

A :class:`Request` names one object by namespace and name, nothing more: the
reconcile reads the object's current state from a cache (a lister) itself, so
a burst of events for one object collapses into one request in the queue.
Its ``str()`` is the object's store key (``"namespace/name"`` or ``"name"``),
the same key :func:`informers.wire.objects.meta_namespace_key` makes.

Both classes are frozen, hashable and thread-safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from informers.errors import ObjectKeyError
from informers.wire.objects import (
    deletion_handling_meta_namespace_key,
    split_meta_namespace_key,
)

__all__ = ["Request", "Result"]


@dataclass(frozen=True, order=True, slots=True)
class Request:
    """The object a reconcile is about: ``namespace`` (``""`` for a
    cluster-scoped object) and ``name``.

    Raises :class:`~informers.errors.ObjectKeyError` (a :class:`ValueError`)
    for an empty name, a part that is not a string, or a ``/`` in either part.
    Requests sort by namespace, then name.
    """

    namespace: str
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.namespace, str) or not isinstance(self.name, str):
            raise ObjectKeyError(
                "request namespace and name must be strings, not "
                f"{type(self.namespace).__name__} and {type(self.name).__name__}"
            )
        if not self.name:
            raise ObjectKeyError("request name is empty")
        if "/" in self.namespace or "/" in self.name:
            raise ObjectKeyError(
                f"request parts may not contain '/': {self.namespace!r}, {self.name!r}"
            )

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def key(self) -> str:
        """The store key: ``"namespace/name"``, or ``"name"`` when cluster-scoped."""
        return str(self)

    @classmethod
    def from_key(cls, key: str) -> Request:
        """The request for a store key; raises
        :class:`~informers.errors.ObjectKeyError` for a malformed key."""
        namespace, name = split_meta_namespace_key(key)
        return cls(namespace, name)

    @classmethod
    def for_object(cls, obj: Any) -> Request:
        """The request for an object (a raw dict, an attribute-style model or
        a :class:`~informers.wire.objects.DeletedFinalStateUnknown`, keyed by the
        key it carries); raises :class:`~informers.errors.ObjectKeyError` when
        the object has no usable key."""
        return cls.from_key(deletion_handling_meta_namespace_key(obj))


@dataclass(frozen=True, slots=True)
class Result:
    """What a reconcile asks for next, besides "done".

    ``requeue_after``: reconcile this request again after that many seconds
    (the rate limiter's failure count is reset first). ``None`` or ``0`` means
    no timed requeue.

    ``requeue``: reconcile again after the rate limiter's delay, as for an
    error (the failure count grows), but counted as a requeue, not an error.
    Ignored when ``requeue_after`` is set.

    A reconcile returning ``None`` or ``Result()`` is done with the request.
    Raises :class:`ValueError` for a negative, infinite or NaN
    ``requeue_after`` and :class:`TypeError` for a non-number.
    """

    requeue_after: float | None = None
    requeue: bool = False

    def __post_init__(self) -> None:
        after = self.requeue_after
        if after is not None:
            if isinstance(after, bool) or not isinstance(after, int | float):
                raise TypeError(
                    f"requeue_after must be a number of seconds, not {type(after).__name__}"
                )
            if math.isnan(after) or math.isinf(after) or after < 0:
                raise ValueError(f"requeue_after must be finite and >= 0, not {after!r}")
        if not isinstance(self.requeue, bool):
            raise TypeError(f"requeue must be a bool, not {type(self.requeue).__name__}")

    def is_zero(self) -> bool:
        """Whether this result asks for nothing (the same as returning ``None``)."""
        return not self.requeue_after and not self.requeue
