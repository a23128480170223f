"""Core ``v1`` Events and ``events.k8s.io/v1`` Events are one storage seen
through two versions, as on a real server: an Event written through either
API is read, listed and watched through both, with the same name, uid and
resourceVersion.

The emulator keeps a log per group, so :func:`mirror` copies every change
of one log into the other, converted field by field as the API server's
conversion does (``involvedObject``/``regarding``, ``message``/``note``,
``source``/``deprecatedSource``, ``count``/``deprecatedCount``,
``firstTimestamp``/``deprecatedFirstTimestamp``, ``lastTimestamp``/
``deprecatedLastTimestamp``, ``reportingComponent``/``reportingController``;
``series`` holds ``count`` and ``lastObservedTime`` in both), under the same
resourceVersion. Not thread-safe: called by the writes under the storage
lock.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._defaults import apply_defaults
from informers.testing.apiserver._history import History, KindLog
from informers.testing.apiserver._stored import DELETED, Event, Stored
from informers.testing.apiserver._watch import WatchHub
from informers.wire.resources import EVENTS

__all__ = ["mirror", "to_core", "to_events_v1"]

_EVENTS_V1 = ("events.k8s.io", "events")
_CORE = ("", "events")

#: core v1 field -> events.k8s.io/v1 field, where the names differ.
_RENAMED = {
    "involvedObject": "regarding",
    "message": "note",
    "source": "deprecatedSource",
    "count": "deprecatedCount",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "reportingComponent": "reportingController",
}
_SHARED = ("eventTime", "series", "action", "reason", "related", "type", "reportingInstance")
_BACK = {new: old for old, new in _RENAMED.items()}
_EMPTY: tuple[Any, ...] = (None, "", {}, 0)


def to_events_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """A core v1 Event as events.k8s.io/v1 returns it."""
    out: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }
    for key, value in obj.items():
        name = _RENAMED.get(key, key if key in _SHARED else None)
        if name is not None and value not in _EMPTY:
            out[name] = value
    out.setdefault("eventTime", None)
    return out


def to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as core v1 returns it (with its defaults)."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": "v1"}
    out["metadata"] = obj.get("metadata") or {}
    for key, value in obj.items():
        name = _BACK.get(key, key if key in _SHARED else None)
        if name is not None and value is not None:
            out[name] = value
    return apply_defaults(EVENTS, out, creating=False)


def mirror(history: History, watches: WatchHub, kind: KindLog, event: Event) -> None:
    """Copy ``event`` (just logged in ``kind``) into the other Event log,
    if ``kind`` is one of the two and the other is served."""
    key = (kind.resource.group, kind.resource.plural)
    if key == _CORE:
        twin_key, convert = _EVENTS_V1, to_events_v1
    elif key == _EVENTS_V1:
        twin_key, convert = _CORE, to_core
    else:
        return
    twin = next(
        (k for k in history.kinds() if (k.resource.group, k.resource.plural) == twin_key), None
    )
    if twin is None:
        return
    stored = Stored(convert(event.obj.obj), event.obj.key, event.rv, twin.builtin)
    prev = twin.objects.get(event.obj.key)
    if event.type == DELETED:
        if prev is None:
            return
        twin.remove(event.obj.key)
    else:
        twin.put(stored)
    copied = Event(event.rv, event.type, stored, prev)
    history.append(twin, copied)
    watches.publish(twin, copied)
