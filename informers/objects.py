"""Key functions and tombstones (minimal placeholder; the ``store`` branch owns
the full module and replaces this file when merged)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from informers.errors import ObjectKeyError

__all__ = [
    "DeletedFinalStateUnknown",
    "KeyFunc",
    "deletion_handling_meta_namespace_key",
    "meta_namespace_key",
]

KeyFunc: TypeAlias = Callable[[Any], str]


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Tombstone: ``key`` is the store key, ``obj`` the last known (maybe stale) state."""

    key: str
    obj: Any = field(repr=False)


def meta_namespace_key(obj: Any) -> str:
    """``"namespace/name"`` or ``"name"``; :class:`ObjectKeyError` without a name."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        raise ObjectKeyError("object has no metadata.name")
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    return f"{namespace}/{name}" if namespace else name


def deletion_handling_meta_namespace_key(obj: Any) -> str:
    """Like :func:`meta_namespace_key`; a tombstone is keyed by its ``key``."""
    if type(obj) is DeletedFinalStateUnknown:
        return obj.key
    return meta_namespace_key(obj)
