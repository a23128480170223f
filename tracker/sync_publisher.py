"""Wiring informers to the index synchronization tracker.

A :class:`SyncEventPublisher` registers a small event handler on each of some
informers and publishes a
:class:`~tracker.index_sync.ResourceSyncCompleteEvent` on a bus for each of
them, once, when it has synced. With an
:class:`~tracker.index_sync.IndexSynchronizationTracker` expecting the same
names, a controller can write::

    publisher = SyncEventPublisher(bus, factory.informers().values())
    index = IndexSynchronizationTracker(bus, publisher.resource_names)
    ready = bus.subscribe("controller", 1, IndexSynchronizedEvent.event_type)
    bus.start(); index.start(); factory.start()
    ready.get()      # every cache has synced: reconcile
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.cache.registration import ResourceEventHandlerRegistration
from informers.errors import InformerStateError
from tracker.bus import EventBus
from tracker.index_sync import ResourceSyncCompleteEvent

__all__ = ["SyncEventPublisher"]

_logger = logging.getLogger(__name__)


class _SyncWatch:
    """The handler the publisher adds to one informer: it ignores the events
    and publishes from its ``on_synced`` hook."""

    def __init__(self, publisher: SyncEventPublisher, informer: SharedIndexInformer) -> None:
        self._publisher = publisher
        self._informer = informer

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        """Ignored."""

    def on_update(self, old: Any, new: Any) -> None:
        """Ignored."""

    def on_delete(self, obj: Any) -> None:
        """Ignored."""

    def on_synced(self) -> None:
        self._publisher._informer_synced(self._informer)


class SyncEventPublisher:
    """Publishes one :class:`~tracker.index_sync.ResourceSyncCompleteEvent`
    per informer when that informer has synced.

    ``informers`` is an iterable of informers (each named by its ``name``, for
    a factory's informers the resource, like ``"pods"`` or
    ``"deployments.apps"``) or a mapping from the name to use to the informer.
    Two informers with one name, or one informer under two names, are a
    :class:`ValueError`.
    ``initial_count`` is the number of objects in the informer's cache when it
    synced. An informer that synced before the publisher was made is published
    at construction. Each informer is published at most once.

    On every other informer the publisher registers an ordinary event handler
    (its own listener thread, no replay of the cache, no resync) that
    publishes from its ``on_synced`` hook, on that listener thread, and then
    removes itself: the publisher costs an informer nothing once it has
    synced. :meth:`close` (also a context manager) removes the handlers left.
    Thread-safe.
    """

    def __init__(
        self,
        bus: EventBus,
        informers: Iterable[SharedIndexInformer] | Mapping[str, SharedIndexInformer],
    ) -> None:
        if isinstance(informers, Mapping):
            named = dict(informers)
        else:
            named = {}
            for informer in informers:
                if informer.name in named and named[informer.name] is not informer:
                    raise ValueError(
                        f"two informers are named {informer.name!r}; "
                        "give a mapping from distinct names to informers"
                    )
                named[informer.name] = informer
        self._bus = bus
        self._names: dict[int, str] = {id(inf): name for name, inf in named.items()}
        if len(self._names) != len(named):
            raise ValueError("the same informer is given under two names")
        self._informers = tuple(named.values())
        self._resource_names = tuple(named)
        self._lock = threading.Lock()
        # --- guarded by _lock ---------------------------------------------------
        self._published: set[int] = set()  # id() of the informers published
        self._closed = False
        # id(informer) -> the handler still waiting for that informer to sync.
        self._registrations: dict[int, ResourceEventHandlerRegistration] = {}
        # ------------------------------------------------------------------------
        for informer in self._informers:
            if informer.has_synced():
                self._publish(informer)
                continue
            try:
                registration = informer.add_event_handler(
                    _SyncWatch(self, informer), resync_period=0, deliver_existing=False
                )
            except InformerStateError:  # stopped before it synced: it never will
                continue
            with self._lock:
                done = self._closed or id(informer) in self._published
                if not done:
                    self._registrations[id(informer)] = registration
            if done:  # synced (and published) before we could keep it
                registration.remove()

    @property
    def resource_names(self) -> tuple[str, ...]:
        """The names the events carry, in the order given: what the
        :class:`~tracker.index_sync.IndexSynchronizationTracker` should expect."""
        return self._resource_names

    def published(self) -> frozenset[str]:
        """The names published so far."""
        with self._lock:
            return frozenset(self._names[i] for i in self._published)

    def close(self) -> None:
        """Stop listening: remove the handlers still waiting; idempotent."""
        with self._lock:
            self._closed = True
            registrations = list(self._registrations.values())
            self._registrations.clear()
        for registration in registrations:
            registration.remove()

    def __enter__(self) -> SyncEventPublisher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _informer_synced(self, informer: SharedIndexInformer) -> None:
        """On the informer's listener thread for this publisher."""
        self._publish(informer)
        with self._lock:
            registration = self._registrations.pop(id(informer), None)
        if registration is not None:
            registration.remove()  # from its own thread: the informer joins it

    def _publish(self, informer: SharedIndexInformer) -> None:
        with self._lock:
            if self._closed or id(informer) in self._published:
                return
            self._published.add(id(informer))
            name = self._names[id(informer)]
        count = len(informer.get_indexer())
        _logger.info("%s synced with %d objects; publishing its sync event", name, count)
        self._bus.publish(ResourceSyncCompleteEvent(name, count))
