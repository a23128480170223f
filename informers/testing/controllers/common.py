"""Helpers the built-in controllers share: owner references, pod states,
label selectors, timestamps and create/delete expectations.

Everything here is pure except :class:`Expectations` (thread-safe, one lock).
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from informers.objects import DeletedFinalStateUnknown
from informers.wire.selectors import LabelSelector

__all__ = [
    "Expectations",
    "condition",
    "controller_of",
    "is_active_pod",
    "is_pod_ready",
    "label_selector",
    "now",
    "observing_owner",
    "owner_reference",
    "owned_by",
    "set_condition",
]

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def observing_owner(expectations: Expectations, owner_kind: str, inner: Any) -> Any:
    """A map function: ``inner``'s requests, after telling ``expectations``
    that the object's controller (of ``owner_kind``) has seen it."""

    def mapping(obj: Any) -> Any:
        target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_of(target) if isinstance(target, Mapping) else None
        if ref is not None and ref.get("kind") == owner_kind:
            meta = target.get("metadata") or {}
            namespace = meta.get("namespace") or ""
            owner = f"{namespace}/{ref.get('name')}" if namespace else str(ref.get("name"))
            expectations.seen(owner, str(meta.get("name", "")))
        return inner(obj)

    return mapping


def now() -> str:
    """The current time as the API server writes it (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def owner_reference(owner: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A controller reference to ``owner`` (``controller`` and
    ``blockOwnerDeletion`` true), as a controller sets it on what it creates."""
    meta = owner["metadata"]
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true``, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    """Whether ``obj``'s controller reference names the owner ``uid``."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == uid


def label_selector(obj: Mapping[str, Any]) -> LabelSelector:
    """The parsed ``spec.selector`` (``matchLabels``/``matchExpressions``);
    an absent selector selects nothing (an empty set of requirements would
    select everything, which no controller wants)."""
    selector = (obj.get("spec") or {}).get("selector")
    if not isinstance(selector, Mapping) or not selector:
        return LabelSelector.parse("controller-selector-missing=true")
    return LabelSelector.from_dict(selector)


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's ``Ready`` condition is ``True``."""
    return condition(pod, "Ready").get("status") == "True"


def is_active_pod(pod: Mapping[str, Any]) -> bool:
    """Not terminal (Succeeded/Failed) and not being deleted."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES


def condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    """The ``status.conditions`` entry of ``type`` ``kind`` (``{}`` if none)."""
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == kind:
            return cond
    return {}


def set_condition(
    conditions: Iterable[Mapping[str, Any]],
    kind: str,
    status: str,
    reason: str,
    message: str,
    *,
    stamp: str,
    probe_time: bool = False,
) -> list[dict[str, Any]]:
    """``conditions`` with the ``kind`` entry set. ``lastTransitionTime``
    moves only when ``status`` changes, ``lastUpdateTime`` when anything
    does; an unchanged condition is kept as it is."""
    out: list[dict[str, Any]] = []
    found = False
    for cond in conditions:
        if cond.get("type") != kind:
            out.append(dict(cond))
            continue
        found = True
        new = dict(cond)
        if (cond.get("status"), cond.get("reason"), cond.get("message")) != (
            status,
            reason,
            message,
        ):
            if cond.get("status") != status:
                new["lastTransitionTime"] = stamp
            new.update(status=status, reason=reason, message=message)
            if "lastUpdateTime" in cond or not probe_time:
                new["lastUpdateTime"] = stamp
        out.append(new)
    if not found:
        new = {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": stamp,
        }
        if not probe_time:
            new["lastUpdateTime"] = stamp
        out.append(new)
    return out


class Expectations:
    """What a controller created or deleted and its cache has not shown yet
    (client-go's ``ControllerExpectations``, by name): without it a
    reconcile that runs before the cache catches up would create or delete
    the same pods twice.

    Per owner key: names created but not yet seen in the cache, names deleted
    but still there. :meth:`observe` settles them against what the cache
    shows now, :meth:`seen` as the events of the owned objects arrive (a pod
    created and deleted between two reconciles is never in the cache when
    one looks). Thread-safe (one lock, no callbacks).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: guarded by _lock: owner key -> (created names, deleted names)
        self._pending: dict[str, tuple[set[str], set[str]]] = {}

    def created(self, key: str, name: str) -> None:
        """``name`` was created for ``key``."""
        with self._lock:
            self._pending.setdefault(key, (set(), set()))[0].add(name)

    def deleted(self, key: str, name: str) -> None:
        """``name`` was deleted for ``key``."""
        with self._lock:
            self._pending.setdefault(key, (set(), set()))[1].add(name)

    def seen(self, key: str, name: str) -> None:
        """An event of ``name`` arrived: its creation is observed (even when
        it is deleted again before a reconcile looks at the cache)."""
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                pending[0].discard(name)

    def observe(self, key: str, cached: Iterable[str]) -> tuple[set[str], set[str]]:
        """Settle against the cache's names of ``key``'s objects; returns the
        (created, deleted) names the cache does not reflect yet."""
        names = set(cached)
        with self._lock:
            created, deleted = self._pending.get(key, (set(), set()))
            created -= names
            deleted &= names
            if not created and not deleted:
                self._pending.pop(key, None)
            return set(created), set(deleted)

    def forget(self, key: str) -> None:
        """Drop what is pending for ``key`` (its owner is gone)."""
        with self._lock:
            self._pending.pop(key, None)
