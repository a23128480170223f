"""Wiring informers to the index synchronization tracker.

A :class:`SyncEventPublisher` listens to the ``synced`` signal of some
informers (:mod:`informers.signals`) and publishes a
:class:`~tracker.index_sync.ResourceSyncCompleteEvent` on a bus for each of
them, once, when it has synced. With an
:class:`~tracker.index_sync.IndexSynchronizationTracker` expecting the same
names, a controller can write::

    publisher = SyncEventPublisher(bus, factory.informers().values())
    index = IndexSynchronizationTracker(bus, None, publisher.resource_names)
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

from informers import signals
from informers.informer import SharedIndexInformer
from tracker.bus import EventBus
from tracker.index_sync import ResourceSyncCompleteEvent

__all__ = ["SyncEventPublisher"]

_logger = logging.getLogger(__name__)


class SyncEventPublisher:
    """Publishes one :class:`~tracker.index_sync.ResourceSyncCompleteEvent`
    per informer when that informer has synced.

    ``informers`` is an iterable of informers (each named by its ``name``, for
    a factory's informers the resource, like ``"pods"`` or
    ``"deployments.apps"``) or a mapping from the name to use to the informer.
    Two informers with one name, or one informer under two names, are a
    :class:`ValueError`.
    ``initial_count`` is the number of objects in the informer's cache when its
    ``synced`` signal fired. An informer that synced before the publisher was
    made is published at construction. Each informer is published at most once.

    The event is published from the informer's signal listener thread (or the
    constructing thread). Listens until :meth:`close` (also a context
    manager). Thread-safe.
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
        # _lock guards _published and _closed.
        self._lock = threading.Lock()
        self._published: set[int] = set()
        self._closed = False
        signals.synced.connect(self._on_synced, weak=False)
        for informer in self._informers:
            if informer.has_synced():
                self._publish(informer)

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
        """Stop listening; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        signals.synced.disconnect(self._on_synced)

    def __enter__(self) -> SyncEventPublisher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _on_synced(self, sender: Any, **kwargs: Any) -> None:
        if id(sender) in self._names and isinstance(sender, SharedIndexInformer):
            self._publish(sender)

    def _publish(self, informer: SharedIndexInformer) -> None:
        with self._lock:
            if self._closed or id(informer) in self._published:
                return
            self._published.add(id(informer))
            name = self._names[id(informer)]
        count = len(informer.get_indexer())
        _logger.info("%s synced with %d objects; publishing its sync event", name, count)
        self._bus.publish(ResourceSyncCompleteEvent(name, count))
