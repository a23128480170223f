"""The index synchronization tracker: one event once every watched kind has synced.

A controller usually must not reconcile before each of its caches holds the
full initial list of its kind. Each informer (or the helper wiring it to the
bus) publishes a :class:`ResourceSyncCompleteEvent` when it has synced, with
its initial item count; the :class:`IndexSynchronizationTracker` collects
them and publishes a single :class:`IndexSynchronizedEvent`, carrying every
count, when the last expected kind reports in.

The contract:

* The tracker subscribes to the bus when it is constructed (subscription name
  :attr:`~IndexSynchronizationTracker.COMPONENT_NAME`, buffer
  :attr:`~IndexSynchronizationTracker.EVENT_BUFFER_SIZE`), so sync events
  published before :meth:`~IndexSynchronizationTracker.start` wait in its
  buffer and are handled when it starts.
* The first event for an expected name marks it synced and records its count;
  later events for that name are ignored (the first count is kept). Events
  for names it does not expect are logged as warnings and ignored. Duplicate
  expected names collapse into one.
* When the last expected name is marked, it publishes one
  :class:`IndexSynchronizedEvent` with a copy of the counts: exactly once over
  the tracker's life, whatever arrives later.
* **No expected names.** Every query then reports "all synced", and the
  tracker publishes ``IndexSynchronizedEvent({})`` once, when it starts. The Go
  original never publishes in that case, which leaves a controller that waits
  for the event (the documented way to use it) hanging forever; a controller
  configured to watch nothing is trivially synchronized, so we say so.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import ClassVar

from tracker.bus import Component, DropCallback, Event, EventBus
from tracker.errors import ResourceNotSyncedError, UnknownResourceTypeError

__all__ = ["IndexSynchronizationTracker", "IndexSynchronizedEvent", "ResourceSyncCompleteEvent"]


@dataclasses.dataclass(frozen=True)
class ResourceSyncCompleteEvent:
    """Published when the informer of one resource type has synced."""

    event_type: ClassVar[str] = "resource.sync.complete"

    #: The resource type's name as the tracker was told to expect it
    #: (for example ``"pods"`` or ``"ingresses.networking.k8s.io"``).
    resource_type_name: str
    #: How many objects the informer's cache held when it synced.
    initial_count: int

    def __post_init__(self) -> None:
        if not isinstance(self.resource_type_name, str) or not self.resource_type_name:
            raise ValueError("resource_type_name must be a non-empty string")
        if isinstance(self.initial_count, bool) or not isinstance(self.initial_count, int):
            raise TypeError(f"initial_count must be an int, not {self.initial_count!r}")
        if self.initial_count < 0:
            raise ValueError(f"initial_count must not be negative, not {self.initial_count}")


@dataclasses.dataclass(frozen=True)
class IndexSynchronizedEvent:
    """Published once when every expected resource type has synced.

    ``resource_counts`` maps each expected name to the count of its first sync
    event. It is a read-only copy: neither the tracker nor its receivers can
    change what another receiver sees.
    """

    event_type: ClassVar[str] = "index.synchronized"

    resource_counts: Mapping[str, int]

    def __post_init__(self) -> None:
        frozen = MappingProxyType(dict(self.resource_counts))
        object.__setattr__(self, "resource_counts", frozen)


class IndexSynchronizationTracker(Component):
    """Fires :class:`IndexSynchronizedEvent` once every expected resource type
    has published its :class:`ResourceSyncCompleteEvent` (see the module
    documentation for the whole contract).

    ``logger`` receives the tracker's own messages (``None``: this module's
    logger). ``on_drop(subscription, event)`` is told of each sync event
    dropped because the tracker's buffer was full (they are also counted in
    ``subscription.dropped``); a dropped event for an expected type means the
    tracker will not fire unless that type reports again, so size the number
    of kinds (and start the tracker early) accordingly.

    Queries are safe from any thread and never block beyond a short lock;
    :meth:`handle_event` may also be called directly (it is what the dispatch
    loop calls), from any thread.
    """

    COMPONENT_NAME: ClassVar[str] = "index-tracker"
    EVENT_BUFFER_SIZE: ClassVar[int] = 100

    def __init__(
        self,
        bus: EventBus,
        resource_names: Iterable[str],
        *,
        logger: logging.Logger | None = None,
        on_drop: DropCallback | None = None,
    ) -> None:
        """``IndexSynchronizationTracker(bus, ["pods", "services"], logger=log)``.

        Raises :class:`TypeError` when ``resource_names`` is one string rather
        than a list of names, :class:`ValueError` for a name that is not a
        non-empty string.
        """
        if isinstance(resource_names, str):
            raise TypeError("resource_names is a list of names, not one string")
        log = logger if logger is not None else logging.getLogger(__name__)
        names = tuple(dict.fromkeys(resource_names))  # collapse duplicates, keep order
        for name in names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"resource type names are non-empty strings, not {name!r}")
        super().__init__(
            bus,
            self.COMPONENT_NAME,
            self.EVENT_BUFFER_SIZE,
            ResourceSyncCompleteEvent.event_type,
            on_drop=on_drop,
            logger=log,
        )
        self._expected = frozenset(names)
        self._expected_order = names
        # The component's one lock, self._lock, also guards _counts and _fired.
        # Invariants: keys of _counts are a subset of _expected; _fired only goes
        # False -> True, and is True as soon as _counts covers _expected (or
        # _expected is empty and start() ran).
        self._counts: dict[str, int] = {}
        self._fired = False

    @property
    def resource_names(self) -> tuple[str, ...]:
        """The expected resource type names, duplicates removed, in given order."""
        return self._expected_order

    @property
    def fired(self) -> bool:
        """Whether the :class:`IndexSynchronizedEvent` was published."""
        with self._lock:
            return self._fired

    def start(self, stop: threading.Event | None = None) -> None:
        """Start handling sync events on the ``component-index-tracker`` thread.

        With no expected names, publish ``IndexSynchronizedEvent({})`` now,
        once (see the module documentation).
        """
        super().start(stop)
        if not self._expected:
            self._fire_if_complete()

    def handle_event(self, event: Event) -> None:
        """Record one sync event; publish the synchronized event if it was the last."""
        if not isinstance(event, ResourceSyncCompleteEvent):
            self._logger.debug("%s: ignoring a %r event", self.name, event.event_type)
            return
        name = event.resource_type_name
        if name not in self._expected:
            self._logger.warning(
                "%s: sync event for unexpected resource type %r ignored", self.name, name
            )
            return
        with self._lock:
            first = name not in self._counts
            if first:
                self._counts[name] = event.initial_count
            synced, total = len(self._counts), len(self._expected)
        if not first:
            self._logger.debug("%s: duplicate sync event for %r ignored", self.name, name)
            return
        self._logger.info(
            "%s: %r synced with %d objects (%d/%d)",
            self.name,
            name,
            event.initial_count,
            synced,
            total,
        )
        self._fire_if_complete()

    def _fire_if_complete(self) -> None:
        with self._lock:
            if self._fired or len(self._counts) < len(self._expected):
                return
            self._fired = True
            event = IndexSynchronizedEvent(self._counts)  # copies the counts
        self._logger.info("%s: all %d resource types synced", self.name, len(event.resource_counts))
        self.bus.publish(event)  # outside the lock: publishing runs subscriber code

    def is_resource_synced(self, resource_type_name: str) -> bool:
        """Whether that type has reported its sync (``False`` for unknown names)."""
        with self._lock:
            return resource_type_name in self._counts

    def all_synced(self) -> bool:
        """Whether every expected type has synced (``True`` when none is expected)."""
        with self._lock:
            return len(self._counts) == len(self._expected)

    def get_resource_count(self, resource_type_name: str) -> int:
        """The initial count a type reported with its first sync event.

        Raises :class:`~tracker.errors.UnknownResourceTypeError` for a name the
        tracker does not expect, :class:`~tracker.errors.ResourceNotSyncedError`
        for an expected one that has not synced yet (both are
        :class:`LookupError`).
        """
        if resource_type_name not in self._expected:
            raise UnknownResourceTypeError(resource_type_name)
        with self._lock:
            count = self._counts.get(resource_type_name)
        if count is None:
            raise ResourceNotSyncedError(resource_type_name)
        return count

    def get_all_resource_counts(self) -> dict[str, int]:
        """A copy of the counts of the types synced so far (changing it changes
        nothing in the tracker)."""
        with self._lock:
            return dict(self._counts)
