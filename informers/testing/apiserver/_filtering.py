"""Server-side filtering: the label, field and shard selectors of a list or
watch as one object predicate, and how a watch filtered by one sees an event.

A predicate is the emulator's own code (never user code), so storage applies
it under its lock. Parse errors and unknown fields are 400 BadRequest, as the
real server answers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers.errors import SelectorParseError
from informers.testing.apiserver import _status
from informers.testing.apiserver._fields import object_fields, supported_fields
from informers.testing.apiserver._stored import ADDED, DELETED, MODIFIED, Event, Stored
from informers.wire.resources import BUILTIN_RESOURCES, Resource
from informers.wire.selectors import FieldSelector, LabelSelector
from informers.wire.selectors.shard import ShardSelector

__all__ = ["Predicate", "as_seen", "build_predicate", "shard_predicate", "with_shard"]

Predicate = Callable[[dict[str, Any]], bool]


def _selector_plural(resource: Resource) -> str:
    """The plural naming the kind's selectable fields (custom resources: none
    beyond metadata)."""
    return resource.plural if resource in BUILTIN_RESOURCES else ""


def build_predicate(
    resource: Resource, label_text: str | None, field_text: str | None
) -> Predicate | None:
    """The object filter for label and field selectors (400 on parse errors and
    unknown fields); None when neither selects anything."""
    if not label_text and not field_text:
        return None
    try:
        labels = LabelSelector.parse(label_text) if label_text else None
        fields = FieldSelector.parse(field_text) if field_text else None
    except SelectorParseError as exc:
        raise _status.bad_request(str(exc)) from None
    plural = _selector_plural(resource)
    if fields is not None:
        allowed = supported_fields(plural)
        for requirement in fields.requirements:
            if requirement.field not in allowed:
                raise _status.bad_request(f"field label not supported: {requirement.field}")
        if fields.empty:
            fields = None
    if labels is not None and labels.empty:
        labels = None
    if labels is None and fields is None:
        return None

    def predicate(obj: dict[str, Any]) -> bool:
        if labels is not None:
            obj_labels = (obj.get("metadata") or {}).get("labels") or {}
            if not labels.matches(obj_labels):
                return False
        return fields is None or fields.matches(object_fields(obj, plural))

    return predicate


def shard_predicate(text: str | None, enabled: bool) -> ShardSelector | None:
    """The parsed ``shardSelector`` of a list or watch: None when absent or
    when the feature is off (a server without the ShardedListAndWatch gate
    ignores the parameter); 400 BadRequest when malformed, as the real
    server answers a ListOptions it cannot convert."""
    if not enabled or not text:
        return None
    try:
        return ShardSelector.parse(text)
    except SelectorParseError as exc:
        raise _status.bad_request(str(exc)) from None


def with_shard(predicate: Predicate | None, selector: ShardSelector | None) -> Predicate | None:
    """``predicate`` narrowed to the objects ``selector`` matches."""
    if selector is None:
        return predicate
    matches = selector.matches
    if predicate is None:
        return matches
    inner = predicate
    return lambda obj: matches(obj) and inner(obj)


def as_seen(
    event: Event, namespace: str | None, predicate: Predicate | None
) -> tuple[str, Stored] | None:
    """``event`` as a watch of ``namespace`` (None: every namespace) filtered
    by ``predicate`` sees it, or None when it sees nothing. A change that
    moves an object into the selection is ADDED, one that moves it out is
    DELETED (with the last matching state at the event's RV)."""
    if namespace is not None and not event.obj.key.startswith(namespace + "/"):
        return None
    if predicate is None:
        return (event.type, event.obj)
    if event.type == ADDED:
        return (ADDED, event.obj) if predicate(event.obj.obj) else None
    if event.type == DELETED:
        before = event.prev if event.prev is not None else event.obj
        return (DELETED, event.obj) if predicate(before.obj) else None
    now_ok = predicate(event.obj.obj)
    was_ok = event.prev is not None and predicate(event.prev.obj)
    if now_ok and was_ok:
        return (MODIFIED, event.obj)
    if now_ok:
        return (ADDED, event.obj)
    if was_ok and event.prev is not None:
        return (DELETED, event.prev.with_rv(event.rv))
    return None
