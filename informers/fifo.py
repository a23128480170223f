"""The in-order delta queue between the reflector and the informer loop.

:class:`RealFIFO` follows client-go's ``RealFIFO``: every notification the
producer (the reflector) hands in is delivered to the consumer (the informer
loop) exactly once and in order, several per object when several happened,
deletions included. A relist (:meth:`RealFIFO.replace`) is queued as **one**
entry that the consumer applies atomically, so readers of the cache never see
half a relist.

Producer side: :meth:`~RealFIFO.add`, :meth:`~RealFIFO.update`,
:meth:`~RealFIFO.delete`, :meth:`~RealFIFO.replace`, :meth:`~RealFIFO.resync`,
:meth:`~RealFIFO.bookmark`, :meth:`~RealFIFO.close`. Consumer side:
:meth:`~RealFIFO.pop` (one entry) and :meth:`~RealFIFO.pop_batch` (several,
each handled exactly as by ``pop``).

What one popped entry holds (the ``deltas`` given to ``process``):

* ``add`` / ``update`` / ``delete`` / ``resync``: one :class:`Delta`
  (``Added``, ``Updated``, ``Deleted`` or ``Sync``).
* ``bookmark(rv)``: one ``Bookmark`` delta whose object is the resource
  version string.
* ``replace(objects, rv)``: the whole relist, in this order: a ``Replaced``
  delta for every listed object (in list order); then a ``Deleted`` delta
  holding a :class:`~informers.objects.DeletedFinalStateUnknown` tombstone for
  every *known* key missing from the list; last, a ``Bookmark`` delta carrying
  ``rv``. "Known" means, as in client-go, the keys of ``known_objects`` (the
  consumer's cache) **plus** the keys that still have entries pending in the
  queue (or being processed) whose last delta is not a deletion. A pending key's
  tombstone carries the object of its last pending delta; a cached key's
  tombstone carries the cached object.

An entry is a relist exactly when it holds a ``Replaced`` delta or more than
one delta. (An empty relist with nothing to delete is just ``[Bookmark(rv)]``;
applying it as a bookmark has the same effect as applying it as a relist.)

Thread-safety: every method may be called from any thread. One lock and one
condition guard the queue; user code (key function, transform,
``known_objects``, ``process``) is never called with the lock held.
Ordering is guaranteed for one consumer thread; several consumers each get
whole entries, but may apply them out of order.

The ``known_objects`` contract: it must reflect every entry whose ``process``
call has returned (the informer applies each entry to its indexer inside
``process``), and nothing that has not been popped yet.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

from informers.errors import FIFOClosedError
from informers.objects import (
    DeletedFinalStateUnknown,
    KeyFunc,
    deletion_handling_meta_namespace_key,
)

__all__ = [
    "Delta",
    "DeltaType",
    "KeyListerGetter",
    "PopProcessFunc",
    "RealFIFO",
    "TransformFunc",
]

logger = logging.getLogger(__name__)


class DeltaType(enum.StrEnum):
    """What happened to an object."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    #: The object was in a relist (:meth:`RealFIFO.replace`).
    REPLACED = "Replaced"
    #: A periodic resync replayed the cached object; nothing changed.
    SYNC = "Sync"
    #: No object: ``Delta.object`` is a resource version string.
    BOOKMARK = "Bookmark"


@dataclass(frozen=True, slots=True)
class Delta:
    """One change: its :class:`DeltaType` and the object (as the producer gave
    it, after the transform; a :class:`~informers.objects.DeletedFinalStateUnknown`
    for a deletion nobody saw; a resource version string for a bookmark).

    The object is shared, not copied: never mutate it.
    """

    type: DeltaType
    object: Any


class KeyListerGetter(Protocol):
    """What :class:`RealFIFO` needs from the consumer's cache: its keys, and
    the object stored under a key (``None`` when absent)."""

    def list_keys(self) -> list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


#: ``process(deltas, is_in_initial_list)``, called by :meth:`RealFIFO.pop`.
PopProcessFunc: TypeAlias = Callable[[list[Delta], bool], None]

#: Applied to every incoming object once, at ingest (never to tombstones).
TransformFunc: TypeAlias = Callable[[Any], Any]


class _Entry:
    """One queue entry. ``keys`` runs parallel to ``deltas`` (``""`` for a
    bookmark); ``resource_version`` is set for relists and bookmarks."""

    __slots__ = ("deltas", "initial", "keys", "resource_version")

    def __init__(
        self,
        deltas: tuple[Delta, ...],
        keys: tuple[str, ...],
        resource_version: str | None = None,
    ) -> None:
        self.deltas = deltas
        self.keys = keys
        self.resource_version = resource_version
        #: Part of the initial population (queued when the first relist was).
        self.initial = False


class _KeyedDeltas(list[Delta]):
    """Internal: the deltas handed to ``process`` together with their keys
    (``keys[i]`` is the queue's key of ``self[i]``, ``""`` for a bookmark), so
    a consumer that keys objects the same way need not compute them again."""

    __slots__ = ("keys",)

    def __init__(self, entry: _Entry) -> None:
        super().__init__(entry.deltas)
        self.keys = entry.keys


def _handed_out(entry: _Entry) -> list[Delta]:
    """The deltas of ``entry`` as a new list for ``process``; a relist's
    (several deltas) carries its keys (a single-delta entry skips that cost)."""
    if len(entry.deltas) > 1:
        return _KeyedDeltas(entry)
    return list(entry.deltas)


class RealFIFO:
    """In-order delta queue with client-go ``RealFIFO`` semantics (see the
    module documentation for what an entry holds).

    :param key_func: the key of an object; must handle tombstones (the
        default, :func:`~informers.objects.deletion_handling_meta_namespace_key`,
        does).
    :param known_objects: the consumer's cache, consulted by :meth:`replace`
        (deletions nobody saw) and :meth:`resync`. Without it, only keys
        pending in the queue count as known and :meth:`resync` does nothing.
    :param transform: called once per incoming object in :meth:`add`,
        :meth:`update`, :meth:`delete` and :meth:`replace`, before the object
        is queued; never for tombstones, bookmarks or resync (cached objects
        went through it already). It must not mutate its argument in place
        unless it is idempotent.

    Errors from the key function or the transform propagate from the producer
    call that triggered them; nothing is queued by that call (a relist is all
    or nothing).
    """

    def __init__(
        self,
        key_func: KeyFunc = deletion_handling_meta_namespace_key,
        known_objects: KeyListerGetter | None = None,
        transform: TransformFunc | None = None,
    ) -> None:
        self._key_func = key_func
        self._known_objects = known_objects
        self._transform = transform
        self._lock = threading.Lock()
        #: Waits on ``_lock``; ``with self._lock`` (not ``with self._cond``)
        #: everywhere else saves a Python-level call on every operation.
        self._cond = threading.Condition(self._lock)
        # Everything below is guarded by self._lock.
        self._queue: deque[_Entry] = deque()
        #: Popped entries whose ``process`` has not returned yet, by pop token.
        self._in_flight: dict[int, _Entry] = {}
        self._next_token = 0
        #: Number of entries ever appended: lets replace/resync detect a
        #: producer that raced them while they read ``known_objects``.
        self._appended = 0
        #: True once the first relist was queued, or add/update/delete came first.
        self._populated = False
        #: Initial-population entries not yet fully processed.
        self._initial_population_count = 0
        self._closed = False
        self._last_resource_version = ""
        #: Consumers blocked in :meth:`pop`: a producer notifies only when one
        #: waits, so a busy consumer costs the producer no wake-up call.
        self._waiters = 0

    # ------------------------------------------------------------------ producer

    def add(self, obj: Any) -> None:
        """Queue an ``Added`` delta for ``obj``. Never blocks (beyond the lock)."""
        self._add_one(DeltaType.ADDED, obj)

    def update(self, obj: Any) -> None:
        """Queue an ``Updated`` delta for ``obj``."""
        self._add_one(DeltaType.UPDATED, obj)

    def delete(self, obj: Any) -> None:
        """Queue a ``Deleted`` delta for ``obj`` (an object or a tombstone).

        Queued even when the key is not known: the consumer decides."""
        self._add_one(DeltaType.DELETED, obj)

    def bookmark(self, resource_version: str) -> None:
        """Queue a ``Bookmark`` delta carrying ``resource_version``, so the
        consumer learns, in order, that it has seen everything up to it.
        Does not count as populating the queue (see :meth:`has_synced`)."""
        entry = _Entry((Delta(DeltaType.BOOKMARK, resource_version),), ("",), resource_version)
        with self._lock:
            self._append_locked(entry)

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Queue a relist: the complete list of objects at ``resource_version``.

        Queued as one entry (see the module documentation). Every known key
        missing from ``objects`` gets a ``Deleted`` delta with a
        :class:`~informers.objects.DeletedFinalStateUnknown`. The first relist
        (when nothing was added, updated or deleted before) defines the initial
        population that :meth:`has_synced` waits for.

        Reads ``known_objects`` without holding the queue lock; if another
        producer queues something meanwhile, the computation is redone.
        """
        if self._transform is None:
            objs = list(objects)
            listed_order = self._keys_of(objs)
        else:
            ingested = [self._ingest(obj) for obj in objects]
            listed_order = [key for key, _ in ingested]
            objs = [obj for _, obj in ingested]
        listed_keys = set(listed_order)
        replaced = [Delta(DeltaType.REPLACED, obj) for obj in objs]
        while True:
            with self._lock:
                seen = self._appended
                pending = self._pending_locked()
            # A pending key's last delta is never a tombstone unless it is a
            # deletion (skipped), and cached objects are never tombstones.
            tombstones = [
                (key, delta.object)
                for key, delta in pending.items()
                if key not in listed_keys and delta.type is not DeltaType.DELETED
            ]
            tombstones += self._known_items(skip=listed_keys.union(pending))
            deltas = replaced + [
                Delta(DeltaType.DELETED, DeletedFinalStateUnknown(key, obj))
                for key, obj in tombstones
            ]
            deltas.append(Delta(DeltaType.BOOKMARK, resource_version))
            keys = listed_order.copy()
            keys += [key for key, _ in tombstones]
            keys.append("")
            entry = _Entry(tuple(deltas), tuple(keys), resource_version)
            with self._lock:
                if self._appended != seen:
                    continue  # a producer raced us: the pending set is stale
                self._append_locked(entry)
                if not self._populated:
                    self._populated = True
                    for queued in self._queue:
                        queued.initial = True
                    self._initial_population_count = len(self._queue)
                break
        logger.debug(
            "relist queued: %d listed, %d deleted, resourceVersion %s",
            len(objs),
            len(tombstones),
            resource_version,
        )

    def resync(self) -> None:
        """Queue a ``Sync`` delta (one entry each) for every cached object whose
        key has nothing pending in the queue: an object with pending changes
        would be replayed with a stale state. No-op without ``known_objects``.
        """
        if self._known_objects is None:
            return
        while True:
            with self._lock:
                seen = self._appended
                pending = self._pending_locked()
            cached = self._known_items(skip=pending.keys(), missing_ok=True)
            with self._lock:
                if self._appended != seen:
                    continue
                for key, obj in cached:
                    self._append_locked(_Entry((Delta(DeltaType.SYNC, obj),), (key,)))
                break

    def close(self) -> None:
        """Close the queue and wake every blocked :meth:`pop`. Entries already
        queued are still handed out; once they are gone, :meth:`pop` raises
        :class:`~informers.errors.FIFOClosedError`. Idempotent."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()

    # ------------------------------------------------------------------ consumer

    def pop(self, process: PopProcessFunc) -> list[Delta]:
        """Take the oldest entry, call ``process(deltas, is_in_initial_list)``
        with it, and return the deltas.

        Blocks while the queue is empty; raises
        :class:`~informers.errors.FIFOClosedError` once the queue is closed and
        empty. ``is_in_initial_list`` is true while the initial population
        (see :meth:`has_synced`) is not fully processed.

        ``process`` runs without the queue lock held. Until it returns, the
        entry counts as pending for :meth:`replace` and :meth:`resync`, and
        :meth:`has_synced` does not count it as processed.

        If ``process`` raises, the exception propagates out of ``pop``
        unchanged (with a note naming the entry's delta types and first key).
        The entry is **not** requeued (as in client-go): it counts as consumed,
        the caller was handed its deltas and decides what to do (the informer
        logs and carries on; a relist repairs any divergence). Requeuing would
        either reorder deltas or re-apply half-applied ones.
        """
        with self._lock:
            self._wait_locked()
            taken = self._take_locked()
        deltas = _handed_out(taken[0])
        self._process_taken(taken, deltas, process)
        with self._lock:
            self._finish_locked(taken, succeeded=True)
        return deltas

    def pop_batch(self, process: PopProcessFunc, max_entries: int = 64) -> int:
        """Process up to ``max_entries`` entries, oldest first, exactly as that
        many :meth:`pop` calls in a row would (one ``process`` call per entry,
        same arguments, same bookkeeping between calls); returns how many were
        processed.

        Blocks only for the first entry (raising
        :class:`~informers.errors.FIFOClosedError` as :meth:`pop` does), then
        stops early when the queue is empty. Entries are taken one at a time,
        so the ones not yet taken stay queued (counted by ``len``, visible to
        :meth:`replace`). It saves the consumer one lock acquisition per entry:
        finishing an entry and taking the next share one. If ``process``
        raises, that entry is consumed (as with :meth:`pop`), the exception
        propagates and the following entries stay queued.
        """
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        with self._lock:
            self._wait_locked()
            taken = self._take_locked()
        count = 0
        while True:
            self._process_taken(taken, _handed_out(taken[0]), process)
            count += 1
            with self._lock:
                self._finish_locked(taken, succeeded=True)
                if count >= max_entries or not self._queue:
                    return count
                taken = self._take_locked()

    def _process_taken(
        self, taken: tuple[_Entry, int, bool], deltas: list[Delta], process: PopProcessFunc
    ) -> None:
        """Call ``process`` on a taken entry, without the lock. If it raises,
        the entry is finished as failed and the exception propagates, noted."""
        entry, _token, is_in_initial_list = taken
        try:
            process(deltas, is_in_initial_list)
        except BaseException as exc:
            if isinstance(exc, Exception):
                first_key = next((k for k in entry.keys if k), "")
                types = ",".join(sorted({d.type.value for d in entry.deltas}))
                exc.add_note(
                    f"raised while processing a RealFIFO entry of {len(deltas)} delta(s) "
                    f"[{types}], first key {first_key!r}; the entry was consumed, not requeued"
                )
            with self._lock:
                self._finish_locked(taken, succeeded=False)
            raise

    def _wait_locked(self) -> None:
        """Block (releasing the lock) until an entry is queued; raise once
        closed and empty."""
        while not self._queue:
            if self._closed:
                raise FIFOClosedError("the delta queue is closed")
            self._waiters += 1
            try:
                self._cond.wait()
            finally:
                self._waiters -= 1

    def _take_locked(self) -> tuple[_Entry, int, bool]:
        """Move the oldest entry in flight: ``(entry, token, is_in_initial_list)``."""
        is_in_initial_list = not self._has_synced_locked()
        entry = self._queue.popleft()
        token = self._next_token
        self._next_token += 1
        self._in_flight[token] = entry
        return entry, token, is_in_initial_list

    def _finish_locked(self, taken: tuple[_Entry, int, bool], *, succeeded: bool) -> None:
        """Account for a taken entry whose ``process`` returned or raised."""
        entry, token, _ = taken
        del self._in_flight[token]
        if entry.initial:
            self._initial_population_count -= 1
        if succeeded and entry.resource_version is not None:
            self._last_resource_version = entry.resource_version

    # ------------------------------------------------------------------ state

    def has_synced(self) -> bool:
        """True once the initial population has been processed: either
        add/update/delete was called before any relist (then at once), or every
        entry queued up to and including the first relist has been popped and
        its ``process`` returned. Never blocks beyond the lock."""
        with self._lock:
            return self._has_synced_locked()

    def is_closed(self) -> bool:
        """Whether :meth:`close` was called."""
        with self._lock:
            return self._closed

    def last_resource_version(self) -> str:
        """The resource version of the newest relist or bookmark whose
        ``process`` returned without raising: the version the consumer's cache
        has caught up with. ``""`` before any."""
        with self._lock:
            return self._last_resource_version

    def __len__(self) -> int:
        """Number of queued entries (a relist counts as one; entries being
        processed are not counted)."""
        with self._lock:
            return len(self._queue)

    def __repr__(self) -> str:
        with self._lock:
            return (
                f"<RealFIFO queued={len(self._queue)} in_flight={len(self._in_flight)} "
                f"closed={self._closed}>"
            )

    # ------------------------------------------------------------------ internals

    def _has_synced_locked(self) -> bool:
        return self._populated and self._initial_population_count == 0

    def _add_one(self, delta_type: DeltaType, obj: Any) -> None:
        key, obj = self._ingest(obj)
        with self._lock:
            self._populated = True
            self._append_locked(_Entry((Delta(delta_type, obj),), (key,)))

    def _ingest(self, obj: Any) -> tuple[str, Any]:
        """Transform (unless a tombstone) and key an incoming object; no lock held."""
        if self._transform is not None and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self._transform(obj)
        return self._key_func(obj), obj

    def _keys_of(self, objs: list[Any]) -> list[str]:
        """``[key_func(obj) for obj in objs]``; with the default key function,
        the key of a plain-dict object with string name and namespace is made
        inline (exactly what the key function returns for it)."""
        key_func = self._key_func
        if key_func is not deletion_handling_meta_namespace_key:
            return [key_func(obj) for obj in objs]
        keys: list[str] = []
        append = keys.append
        for obj in objs:
            if type(obj) is dict:
                meta = obj.get("metadata")
                if type(meta) is dict:
                    name = meta.get("name")
                    if type(name) is str and name:
                        namespace = meta.get("namespace")
                        if type(namespace) is str and namespace:
                            append(f"{namespace}/{name}")
                            continue
                        if namespace is None or namespace == "":
                            append(name)
                            continue
            append(key_func(obj))
        return keys

    def _append_locked(self, entry: _Entry) -> None:
        self._queue.append(entry)
        self._appended += 1
        if self._waiters:
            self._cond.notify()

    def _pending_locked(self) -> dict[str, Delta]:
        """The last pending delta of every key with entries being processed or
        queued, in first-seen order (bookmarks skipped)."""
        last: dict[str, Delta] = {}
        for entries in (self._in_flight.values(), self._queue):
            for entry in entries:
                for key, delta in zip(entry.keys, entry.deltas, strict=True):
                    if delta.type is not DeltaType.BOOKMARK:
                        last[key] = delta
        return last

    def _known_items(
        self, skip: Iterable[str], *, missing_ok: bool = False
    ) -> list[tuple[str, Any]]:
        """``(key, object)`` for every key of ``known_objects`` not in ``skip``;
        called without the lock. A key that vanished between listing and
        getting yields ``None`` (logged) unless ``missing_ok`` drops it."""
        known = self._known_objects
        if known is None:
            return []
        skip_set = skip if isinstance(skip, set) else set(skip)
        items: list[tuple[str, Any]] = []
        for key in known.list_keys():
            if key in skip_set:
                continue
            obj = known.get_by_key(key)
            if obj is None:
                if missing_ok:
                    logger.debug("key %s vanished from the cache during resync", key)
                    continue
                logger.warning("key %s vanished from the cache; tombstone without object", key)
            items.append((key, obj))
        return items
