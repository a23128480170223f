"""Predicates: which informer events become requests.

A :class:`Predicate` answers, per event kind, whether the event is passed on:
``create(obj)``, ``update(old, new)``, ``delete(obj)`` and ``generic(obj)``
(an event from a :class:`~informers.toolkit.runtime.ChannelSource`). A source passes
an event only when every one of its predicates says yes.

For a delete whose final state was missed, predicates see the last known
state (the tombstone's ``obj``), never the
:class:`~informers.wire.objects.DeletedFinalStateUnknown` itself.

Ready-made: :func:`generation_changed` (spec changes only: status updates and
resyncs are dropped), :func:`resource_version_changed` (drops resyncs),
:func:`label_changed`, :func:`annotation_changed`; :class:`Funcs` builds one
from optional functions, :func:`new_predicate_funcs` from one filter applied
to every event, and :func:`and_`, :func:`or_`, :func:`not_` combine them.
Any plain callable ``obj -> bool`` given where a predicate is expected is
taken as ``new_predicate_funcs(callable)``.

Predicates are called on the informer's listener thread (one event at a
time per source); they must be quick, must not block and must not mutate the
objects. The ones here are pure and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from informers.wire.objects import DeletedFinalStateUnknown

__all__ = [
    "Funcs",
    "Predicate",
    "and_",
    "annotation_changed",
    "as_predicate",
    "generation_changed",
    "label_changed",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
]


@runtime_checkable
class Predicate(Protocol):
    """Filters events by kind; each method returns whether the event passes."""

    def create(self, obj: Any) -> bool: ...

    def update(self, old: Any, new: Any) -> bool: ...

    def delete(self, obj: Any) -> bool: ...

    def generic(self, obj: Any) -> bool: ...


@dataclass(frozen=True, slots=True)
class Funcs:
    """A predicate made of optional functions; a missing one passes every
    event of its kind (controller-runtime's ``predicate.Funcs``)."""

    create_func: Callable[[Any], bool] | None = None
    update_func: Callable[[Any, Any], bool] | None = None
    delete_func: Callable[[Any], bool] | None = None
    generic_func: Callable[[Any], bool] | None = None

    def create(self, obj: Any) -> bool:
        return self.create_func is None or bool(self.create_func(obj))

    def update(self, old: Any, new: Any) -> bool:
        return self.update_func is None or bool(self.update_func(old, new))

    def delete(self, obj: Any) -> bool:
        return self.delete_func is None or bool(self.delete_func(obj))

    def generic(self, obj: Any) -> bool:
        return self.generic_func is None or bool(self.generic_func(obj))


def new_predicate_funcs(filter_func: Callable[[Any], bool]) -> Funcs:
    """A predicate that applies ``filter_func`` to the object of every event
    (the new object of an update)."""
    return Funcs(
        create_func=filter_func,
        update_func=lambda _old, new: filter_func(new),
        delete_func=filter_func,
        generic_func=filter_func,
    )


def as_predicate(value: Predicate | Callable[[Any], bool]) -> Predicate:
    """``value`` itself when it is a :class:`Predicate`, else
    ``new_predicate_funcs(value)`` for a callable; :class:`TypeError`
    otherwise."""
    if isinstance(value, Predicate):
        return value
    if callable(value):
        return new_predicate_funcs(value)
    raise TypeError(f"a predicate must be a Predicate or a callable, not {type(value).__name__}")


def _metadata(obj: Any) -> Mapping[str, Any]:
    if isinstance(obj, DeletedFinalStateUnknown):
        obj = obj.obj
    if isinstance(obj, Mapping):
        meta = obj.get("metadata")
        if isinstance(meta, Mapping):
            return meta
    return {}


def _map_field(obj: Any, field: str) -> dict[str, Any]:
    value = _metadata(obj).get(field)
    return dict(value) if isinstance(value, Mapping) else {}


def _changed(field: str) -> Funcs:
    def update(old: Any, new: Any) -> bool:
        return _metadata(old).get(field) != _metadata(new).get(field)

    return Funcs(update_func=update)


def generation_changed() -> Predicate:
    """Pass an update only when ``metadata.generation`` changed (a change of
    the spec; status updates, metadata-only changes and resyncs are
    dropped). Creates and deletes pass. Kinds without a generation (the
    server does not keep one for ConfigMaps, say) never pass an update."""
    return _changed("generation")


def resource_version_changed() -> Predicate:
    """Pass an update only when ``metadata.resourceVersion`` changed, i.e.
    drop the informer's resyncs. Creates and deletes pass."""
    return _changed("resourceVersion")


def label_changed() -> Predicate:
    """Pass an update only when ``metadata.labels`` changed (a missing map
    equals an empty one). Creates and deletes pass."""

    def update(old: Any, new: Any) -> bool:
        return _map_field(old, "labels") != _map_field(new, "labels")

    return Funcs(update_func=update)


def annotation_changed() -> Predicate:
    """Pass an update only when ``metadata.annotations`` changed (a missing
    map equals an empty one). Creates and deletes pass."""

    def update(old: Any, new: Any) -> bool:
        return _map_field(old, "annotations") != _map_field(new, "annotations")

    return Funcs(update_func=update)


@dataclass(frozen=True, slots=True)
class _And:
    predicates: tuple[Predicate, ...]

    def create(self, obj: Any) -> bool:
        return all(p.create(obj) for p in self.predicates)

    def update(self, old: Any, new: Any) -> bool:
        return all(p.update(old, new) for p in self.predicates)

    def delete(self, obj: Any) -> bool:
        return all(p.delete(obj) for p in self.predicates)

    def generic(self, obj: Any) -> bool:
        return all(p.generic(obj) for p in self.predicates)


@dataclass(frozen=True, slots=True)
class _Or:
    predicates: tuple[Predicate, ...]

    def create(self, obj: Any) -> bool:
        return any(p.create(obj) for p in self.predicates)

    def update(self, old: Any, new: Any) -> bool:
        return any(p.update(old, new) for p in self.predicates)

    def delete(self, obj: Any) -> bool:
        return any(p.delete(obj) for p in self.predicates)

    def generic(self, obj: Any) -> bool:
        return any(p.generic(obj) for p in self.predicates)


@dataclass(frozen=True, slots=True)
class _Not:
    predicate: Predicate

    def create(self, obj: Any) -> bool:
        return not self.predicate.create(obj)

    def update(self, old: Any, new: Any) -> bool:
        return not self.predicate.update(old, new)

    def delete(self, obj: Any) -> bool:
        return not self.predicate.delete(obj)

    def generic(self, obj: Any) -> bool:
        return not self.predicate.generic(obj)


def and_(*predicates: Predicate | Callable[[Any], bool]) -> Predicate:
    """Passes an event when every predicate does (no predicates: all pass)."""
    return _And(tuple(as_predicate(p) for p in predicates))


def or_(*predicates: Predicate | Callable[[Any], bool]) -> Predicate:
    """Passes an event when at least one predicate does (none: nothing passes)."""
    return _Or(tuple(as_predicate(p) for p in predicates))


def not_(predicate: Predicate | Callable[[Any], bool]) -> Predicate:
    """Passes exactly the events ``predicate`` drops."""
    return _Not(as_predicate(predicate))
