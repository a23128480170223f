"""Event handlers: what an informer delivers its changes to.

A handler is any object with the three methods of
:class:`ResourceEventHandler`; the informer calls them on the handler's own
listener thread (see :mod:`informers.cache.registration`), one at a time, in event
order. ``obj`` may be a :class:`~informers.wire.objects.DeletedFinalStateUnknown`
in ``on_delete`` when the deletion was missed. Handlers must not mutate the
objects they receive: they are shared with the cache and every other handler.

Optional hooks
--------------

A handler may also define any of these; one without them works unchanged
(the informer looks them up once, when the handler is added):

``on_relist_begin(resource_version)`` / ``on_relist_end(resource_version)``
    Called around the notifications of one relist, on the handler's listener
    thread: ``begin``, then the relist's ``on_add`` / ``on_update`` /
    ``on_delete`` calls, then ``end``, with nothing else in between. This is a
    transaction boundary (a database mirror commits once per relist), not a
    full listing: objects the relist left unchanged are only delivered (as
    updates) to a handler whose resync is due. The initial list is a relist;
    so is the replay of the cache to a handler added after start (its
    resource version is the one the cache had last caught up with, a lower
    bound). A relist with no changes still brings one ``begin``/``end`` pair.
``on_synced()``
    Called once, on the listener thread, when the handler's registration
    becomes synced: the informer has synced and this handler has returned from
    every call of its initial list (see
    :meth:`~informers.cache.registration.ResourceEventHandlerRegistration.has_synced`).

``on_removed()``
    Called once when the informer was removed from its factory
    (:meth:`SharedInformerFactory.remove
    <informers.cache.factory.SharedInformerFactory.remove>`), after the
    handler returned from its last event; nothing follows it.

An exception raised by any of these is logged (kind, key, resource version;
never the object) and delivery goes on.

Building blocks
---------------

:class:`ResourceEventHandlerFuncs` makes a handler of optional functions;
:class:`FilteringResourceEventHandler` passes on only the objects a filter
accepts, turning an update that crosses the filter into an add or a delete
(:func:`filter_transition` states that rule, for views that filter in their
own way, such as :class:`tracker.ResourceTracker`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from informers.wire.objects import DeletedFinalStateUnknown

__all__ = [
    "FilterTransition",
    "FilteringResourceEventHandler",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "filter_transition",
]


@runtime_checkable
class ResourceEventHandler(Protocol):
    """What an informer calls, on the handler's own listener thread, in order
    (see the module documentation for the optional hooks).

    Handlers must not mutate the objects they receive.
    """

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


class ResourceEventHandlerFuncs:
    """A handler made of optional functions; missing ones ignore the event.

    ``add_func`` may take ``(obj)`` or ``(obj, is_in_initial_list)``; pass
    ``add_func_with_initial=True`` for the latter."""

    def __init__(
        self,
        add_func: Callable[..., None] | None = None,
        update_func: Callable[[Any, Any], None] | None = None,
        delete_func: Callable[[Any], None] | None = None,
        *,
        add_func_with_initial: bool = False,
    ) -> None:
        self.add_func = add_func
        self.update_func = update_func
        self.delete_func = delete_func
        self._with_initial = add_func_with_initial

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            if self._with_initial:
                self.add_func(obj, is_in_initial_list)
            else:
                self.add_func(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


class FilterTransition(enum.Enum):
    """What an update means to a consumer that shows only the objects passing
    a filter (see :func:`filter_transition`)."""

    #: Both states pass: an update.
    UPDATED = "updated"
    #: Only the new state passes: the object enters the view, an add.
    ENTERED = "entered"
    #: Only the old state passed: the object leaves the view, a delete.
    LEFT = "left"
    #: Neither passes: nothing to tell.
    OUTSIDE = "outside"


def filter_transition(old_passes: bool, new_passes: bool) -> FilterTransition:
    """The rule of every filtered view: an update whose old and new states
    both pass is an update; one that starts passing is an add
    (:attr:`~FilterTransition.ENTERED`); one that stops passing is a delete
    (:attr:`~FilterTransition.LEFT`); otherwise nothing happened."""
    if old_passes:
        return FilterTransition.UPDATED if new_passes else FilterTransition.LEFT
    return FilterTransition.ENTERED if new_passes else FilterTransition.OUTSIDE


class FilteringResourceEventHandler:
    """Passes to ``handler`` only objects for which ``filter_func`` is true.

    An update whose old object passed and new one does not is delivered as a
    delete of the old object; one that starts passing, as an add (see
    :func:`filter_transition`). A tombstone is judged by its last known state.
    The optional hooks (relist begin/end, synced) are passed on to ``handler``
    when it has them. ``filter_func`` runs on the listener thread; what it
    raises is logged like a handler's error.
    """

    def __init__(self, filter_func: Callable[[Any], bool], handler: ResourceEventHandler) -> None:
        self.filter_func = filter_func
        self.handler = handler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.filter_func(obj):
            self.handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        transition = filter_transition(self.filter_func(old), self.filter_func(new))
        if transition is FilterTransition.UPDATED:
            self.handler.on_update(old, new)
        elif transition is FilterTransition.ENTERED:
            self.handler.on_add(new, False)
        elif transition is FilterTransition.LEFT:
            self.handler.on_delete(old)

    def on_delete(self, obj: Any) -> None:
        target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if self.filter_func(target):
            self.handler.on_delete(obj)

    def on_relist_begin(self, resource_version: str) -> None:
        hook = getattr(self.handler, "on_relist_begin", None)
        if hook is not None:
            hook(resource_version)

    def on_relist_end(self, resource_version: str) -> None:
        hook = getattr(self.handler, "on_relist_end", None)
        if hook is not None:
            hook(resource_version)

    def on_synced(self) -> None:
        hook = getattr(self.handler, "on_synced", None)
        if hook is not None:
            hook()
