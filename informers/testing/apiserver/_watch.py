"""Watch fan-out: the open watches of every kind, each with its buffer of
events not yet written, and the switches that hold them back (stall,
silence) or end them.

:class:`WatchHub` and :class:`Watcher` are not thread-safe and have no lock:
:class:`Storage` serialises every call under its one lock (and waits on it
for events), so an event reaches every buffer in the same step as it is
logged.
"""

from __future__ import annotations

import collections

from informers.testing.apiserver._filtering import Predicate, as_seen
from informers.testing.apiserver._history import KindLog
from informers.testing.apiserver._stored import Event, Stored
from informers.wire.resources import Resource

__all__ = ["WatchHub", "Watcher"]


class Watcher:
    """One open watch.

    ``buffer`` holds ``(type, Stored)`` pairs not yet written; when it would
    exceed ``capacity`` the watcher ends with reason ``"overflow"``.
    ``end`` is ``None`` while the watch is open, else why it ended:
    ``"overflow"``, ``"drop"``, ``"drop-mid-line"``, ``"restart"``,
    ``"removed"`` (its kind went away), ``"stopped"`` (server shutdown) or
    ``"closed"`` (its stream ended).
    """

    def __init__(
        self,
        kind: KindLog,
        namespace: str | None,
        predicate: Predicate | None,
        capacity: int,
        min_rv: int,
    ) -> None:
        self.kind = kind
        self.namespace = namespace
        self.predicate = predicate
        self.capacity = capacity
        #: Events at or below this RV are not for this watcher.
        self.min_rv = min_rv
        self.buffer: collections.deque[tuple[str, Stored]] = collections.deque()
        self.end: str | None = None
        #: Sends nothing more, ever (a half-dead connection): see ``silence``.
        self.silenced = False

    @property
    def resource(self) -> Resource:
        return self.kind.resource

    def offer(self, event: Event) -> None:
        """Buffer ``event`` as this watcher sees it (see :meth:`filter`)."""
        if self.end is not None or event.rv <= self.min_rv:
            return
        item = self.filter(event)
        if item is None:
            return
        if len(self.buffer) >= self.capacity:
            self.buffer.clear()
            self.end = "overflow"
            return
        self.buffer.append(item)

    def filter(self, event: Event) -> tuple[str, Stored] | None:
        """The event as this watcher sees it (selector transitions), or None."""
        return as_seen(event, self.namespace, self.predicate)


class WatchHub:
    """The open watchers of every kind, and the stall switch. Not
    thread-safe (see the module docstring)."""

    def __init__(self) -> None:
        self._watchers: dict[KindLog, set[Watcher]] = {}
        #: Monotonic time until which no watch sends anything (0: none).
        self.stall_until = 0.0

    def add(self, watcher: Watcher) -> None:
        self._watchers.setdefault(watcher.kind, set()).add(watcher)

    def discard(self, watcher: Watcher) -> None:
        """Forget ``watcher``; one whose end is not yet set ends ``"closed"``."""
        watchers = self._watchers.get(watcher.kind)
        if watchers is not None:
            watchers.discard(watcher)
        if watcher.end is None:
            watcher.end = "closed"

    def publish(self, kind: KindLog, event: Event) -> None:
        """Offer ``event`` of ``kind`` to each of its watchers."""
        for watcher in self._watchers.get(kind, ()):
            watcher.offer(event)

    def remove_kind(self, kind: KindLog) -> None:
        """``kind`` is no longer served: its watchers end ``"removed"``."""
        for watcher in self._watchers.pop(kind, ()):
            watcher.end = "removed"

    def end_all(self, reason: str) -> None:
        """End every open watcher that has not ended yet with ``reason``."""
        for watchers in self._watchers.values():
            for watcher in watchers:
                if watcher.end is None:
                    watcher.end = reason

    def silence(self) -> int:
        """Silence every open watcher for good; returns how many."""
        count = 0
        for watchers in self._watchers.values():
            for watcher in watchers:
                watcher.silenced = True
                count += 1
        return count

    def count(self) -> int:
        """How many watchers are open."""
        return sum(len(watchers) for watchers in self._watchers.values())

    def poll(
        self, watcher: Watcher, now: float, deadline: float, current_rv: int
    ) -> tuple[list[tuple[str, Stored]], int, float | None]:
        """One look at ``watcher`` at ``now``: ``(events, rv, None)`` when
        :meth:`Storage.next_batch` returns them (``rv`` as it documents), or
        ``([], 0, until)`` when it must wait until monotonic time ``until``
        (or a notification) and look again."""
        if watcher.end is not None:
            if watcher.end == "removed" and watcher.buffer:  # its kind's last events
                batch = list(watcher.buffer)
                watcher.buffer.clear()
                return batch, current_rv, None
            return [], current_rv, None
        stall = deadline if watcher.silenced else self.stall_until
        if now < stall:
            if now >= deadline:
                return [], -1, None
            return [], 0, min(stall, deadline)
        if watcher.silenced:
            return [], -1, None
        if watcher.buffer:
            batch = list(watcher.buffer)
            watcher.buffer.clear()
            return batch, current_rv, None
        if now >= deadline:
            return [], max(current_rv, watcher.min_rv), None
        return [], 0, deadline
