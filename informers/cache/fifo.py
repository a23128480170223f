"""The in-order delta queue between the reflector and the informer loop.

:class:`RealFIFO` follows client-go's ``RealFIFO``: every notification the
producer (the reflector) hands in is delivered to the consumer (the informer
loop) exactly once and in order, several per object when several happened,
deletions included. A relist (:meth:`RealFIFO.replace`) is queued as **one**
typed entry, a :class:`Relist`, that the consumer applies atomically, so
readers of the cache never see half a relist.

Producer side: :meth:`~RealFIFO.add`, :meth:`~RealFIFO.update`,
:meth:`~RealFIFO.delete`, :meth:`~RealFIFO.replace`, :meth:`~RealFIFO.resync`,
:meth:`~RealFIFO.bookmark`, :meth:`~RealFIFO.close`. Consumer side:
:meth:`~RealFIFO.pop` (one entry), :meth:`~RealFIFO.pop_batch` (several, each
handled exactly as by ``pop``) and :meth:`~RealFIFO.wake` (let a consumer
blocked in ``pop_batch`` return without an entry).

The pop contract
----------------

``process(entry, is_in_initial_list)`` is called once per entry, in queue
order, without the queue lock. The ``entry`` (an :data:`Entry`) is one of:

* ``add`` / ``update`` / ``delete`` / ``resync``: a list holding one
  :class:`Delta` (``Added``, ``Updated``, ``Deleted`` or ``Sync``).
* ``bookmark(rv)``: a list holding one ``Bookmark`` delta whose object is the
  resource version string.
* ``replace(objects, rv)``: a :class:`Relist`, and only then. It carries the
  listed objects (in list order, after the transform) with their keys, a
  :class:`~informers.wire.objects.DeletedFinalStateUnknown` tombstone for every
  *known* key missing from the list, and ``rv``. "Known" means, as in
  client-go, the keys of ``known_objects`` (the consumer's cache) **plus** the
  keys that still have entries pending in the queue (or being processed) whose
  last change is not a deletion. A pending key's tombstone carries the object
  of its last pending change; a cached key's tombstone carries the cached
  object. An empty relist with nothing to delete is still a :class:`Relist`.

Tell the two apart with ``isinstance(entry, Relist)``. Both are sequences of
deltas: a :class:`Relist` reads as a ``Replaced`` delta per listed object,
then a ``Deleted`` delta per tombstone, then a ``Bookmark`` delta carrying
``rv`` (so code that iterates deltas works on every entry), but a consumer
that knows relists reads its fields instead and builds no deltas at all.

``is_in_initial_list`` is true while the initial population (see
:meth:`RealFIFO.has_synced`) is not fully processed. Until ``process``
returns, its entry counts as pending for :meth:`~RealFIFO.replace` and
:meth:`~RealFIFO.resync` (and for :meth:`~RealFIFO.pending`). If it raises,
the entry counts as consumed, not requeued (see :meth:`RealFIFO.pop`).

Thread-safety: every method may be called from any thread. One lock guards
the queue; user code (key function, transform, ``process``) is never called
with the lock held. ``known_objects`` (the consumer's cache, not user code)
is: :meth:`~RealFIFO.replace` and :meth:`~RealFIFO.resync` read it in one
pass under the queue's lock, as client-go does, so that no entry is applied
between reading the pending keys and reading the cache (the one exception
to "never hold two locks": queue, then cache, in that order; the cache must
never call into the queue). ``add``, ``update`` and
``delete`` take no lock at all: they append to an intake that everything
else (each pop, ``replace``, ``len``...) first moves into the queue, in
order, under the lock, so nothing observes the difference. The producer
then never waits for a lock the consumer holds (or the other way round):
under the GIL, such a wait hands the interpreter to the other thread, and
on several cores every hand-off is a wake-up across cores, which had cost
the event path more than the work itself.
Ordering is guaranteed for one consumer thread; several consumers each get
whole entries, but may apply them out of order.

The ``known_objects`` contract: it must reflect every entry whose ``process``
call has returned (the informer applies each entry to its indexer inside
``process``), and nothing that has not been popped yet.

Prepared lists: a queue given ``list_buffer`` (the consumer cache's
``new_list_buffer``, see :mod:`informers.cache.listbuffer`) offers its producer
:meth:`RealFIFO.new_list_buffer`, a buffer that applies the queue's transform
to each item as it is collected. ``replace`` given the buffer's
:class:`~informers.cache.listbuffer.PreparedList` queues it as the relist's
``objects`` as it is (already transformed and keyed: the transform is not
applied again, and its keys are the relist's ``keys``); everything else
about the relist is as above (a pending key's tombstone decodes that one
object from the pending relist).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, overload

from informers.cache.keys import keys_plain_dicts
from informers.cache.listbuffer import ListBuffer, PreparedList
from informers.cache.protocols import KeyListerGetter
from informers.errors import FIFOClosedError
from informers.wire.objects import (
    DeletedFinalStateUnknown,
    KeyFunc,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
    meta_namespace_keys,
)

__all__ = [
    "Delta",
    "DeltaType",
    "Entry",
    "ListBufferFactory",
    "PopDeltaFunc",
    "PopProcessFunc",
    "RealFIFO",
    "Relist",
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
    it, after the transform; a :class:`~informers.wire.objects.DeletedFinalStateUnknown`
    for a deletion nobody saw; a resource version string for a bookmark).

    The object is shared, not copied: never mutate it.
    """

    type: DeltaType
    object: Any


# Every watch event builds one Delta: made without the frozen dataclass's
# __init__ (which sets each field through object.__setattr__), through the
# slot descriptors, in about 60% of the time. The object is the same: equal,
# same type, still frozen (a test compares the two).
_DELTA_TYPE_SLOT = Delta.__dict__["type"].__set__
_DELTA_OBJECT_SLOT = Delta.__dict__["object"].__set__
if Delta.__slots__ != ("type", "object"):  # pragma: no cover - a field was added
    raise TypeError("fifo: Delta changed; update _new_delta")


_BOOKMARK = DeltaType.BOOKMARK


def _new_delta(delta_type: DeltaType, obj: Any) -> Delta:
    """``Delta(delta_type, obj)``, fast."""
    delta: Delta = object.__new__(Delta)
    _DELTA_TYPE_SLOT(delta, delta_type)
    _DELTA_OBJECT_SLOT(delta, obj)
    return delta


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Relist(Sequence[Delta]):
    """One relist, as the consumer pops it: the complete list of objects at a
    resource version, and the deletions it reveals (see the module
    documentation).

    ``objects`` are the listed objects in list order (after the transform):
    a tuple, or the :class:`~informers.cache.listbuffer.PreparedList` the producer
    handed in (its items decoded on each read); ``keys[i]`` is the queue's
    key of ``objects[i]``; ``deleted`` holds a
    :class:`~informers.wire.objects.DeletedFinalStateUnknown` tombstone for every
    known key the list no longer has (its ``key`` is the deleted key);
    ``resource_version`` is the list's.

    A relist is also a read-only sequence of :class:`Delta`: ``Replaced`` for
    each listed object, ``Deleted`` for each tombstone, then one ``Bookmark``
    carrying the resource version. It equals another relist with the same
    fields, and a list or tuple of exactly those deltas. The objects are
    shared: never mutate them. Its ``repr`` shows counts only, never objects.
    """

    objects: Sequence[Any]
    keys: tuple[str, ...]
    deleted: tuple[DeletedFinalStateUnknown, ...]
    resource_version: str

    def __post_init__(self) -> None:
        if len(self.keys) != len(self.objects):
            raise ValueError(
                f"a relist needs one key per object: {len(self.keys)} keys, "
                f"{len(self.objects)} objects"
            )

    def __len__(self) -> int:
        return len(self.objects) + len(self.deleted) + 1

    @overload
    def __getitem__(self, index: int) -> Delta: ...

    @overload
    def __getitem__(self, index: slice) -> list[Delta]: ...

    def __getitem__(self, index: int | slice) -> Delta | list[Delta]:
        if isinstance(index, slice):
            return list(self)[index]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError("relist delta index out of range")
        listed = len(self.objects)
        if position < listed:
            return Delta(DeltaType.REPLACED, self.objects[position])
        if position - listed < len(self.deleted):
            return Delta(DeltaType.DELETED, self.deleted[position - listed])
        return Delta(DeltaType.BOOKMARK, self.resource_version)

    def __iter__(self) -> Iterator[Delta]:
        for obj in self.objects:
            yield Delta(DeltaType.REPLACED, obj)
        for tombstone in self.deleted:
            yield Delta(DeltaType.DELETED, tombstone)
        yield Delta(DeltaType.BOOKMARK, self.resource_version)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Relist):
            return (
                self.resource_version == other.resource_version
                and self.keys == other.keys
                and _same_items(self.objects, other.objects)
                and self.deleted == other.deleted
            )
        if isinstance(other, list | tuple):
            return len(other) == len(self) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Relist at resourceVersion {self.resource_version!r}: "
            f"{len(self.objects)} listed, {len(self.deleted)} deleted>"
        )

    def delta_types(self) -> list[DeltaType]:
        """The types of the deltas it reads as, each once, in delta order."""
        types = [DeltaType.REPLACED] if self.objects else []
        if self.deleted:
            types.append(DeltaType.DELETED)
        types.append(DeltaType.BOOKMARK)
        return types


def _same_items(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if type(a) is tuple and type(b) is tuple:
        return a == b
    return len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))


#: What :meth:`RealFIFO.pop` hands to ``process`` (and returns): a list of one
#: delta, or a :class:`Relist`.
Entry: TypeAlias = list[Delta] | Relist

#: ``process(entry, is_in_initial_list)``, called by :meth:`RealFIFO.pop`.
PopProcessFunc: TypeAlias = Callable[[Entry, bool], None]

#: What :meth:`RealFIFO.pop_batch` may hand an entry of one delta to instead:
#: ``process_delta(delta, key, is_in_initial_list)``, with the key the queue
#: gave the delta's object.
PopDeltaFunc: TypeAlias = Callable[[Delta, str, bool], None]

#: Applied to every incoming object once, at ingest (never to tombstones).
TransformFunc: TypeAlias = Callable[[Any], Any]

#: The consumer cache's ``new_list_buffer(transform)`` (see
#: :mod:`informers.cache.listbuffer`): a buffer collecting a list in the cache's own
#: form, applying ``transform`` to each item, or ``None`` when it offers none.
ListBufferFactory: TypeAlias = Callable[[TransformFunc | None], ListBuffer | None]

#: Pending-state marker: the key's last pending change is a deletion.
_GONE: Any = object()


class _InRelist:
    """A pending key's last object is in a queued prepared relist: found (and
    decoded) only if a tombstone needs it."""

    __slots__ = ("_positions", "relist")

    def __init__(self, relist: Relist) -> None:
        self.relist = relist
        self._positions: dict[str, int] | None = None

    def get(self, key: str) -> Any:
        positions = self._positions
        if positions is None:  # later duplicates win, as in the pending map
            positions = self._positions = {k: i for i, k in enumerate(self.relist.keys)}
        return self.relist.objects[positions[key]]


class _Item:
    """One queue entry: a single ``delta`` with its ``key`` (``""`` for a
    bookmark), or a ``relist``."""

    __slots__ = ("delta", "initial", "key", "relist")

    def __init__(self, delta: Delta | None, key: str, relist: Relist | None = None) -> None:
        self.delta = delta
        self.key = key
        self.relist = relist
        #: Part of the initial population (queued when the first relist was).
        self.initial = False

    def handed_out(self) -> Entry:
        """What ``process`` gets: the relist, or a new list of the one delta."""
        relist = self.relist
        if relist is not None:
            return relist
        assert self.delta is not None
        return [self.delta]

    def describe(self) -> tuple[int, list[DeltaType], str]:
        """(number of deltas, their types, first key) for error notes."""
        relist = self.relist
        if relist is None:
            assert self.delta is not None
            return 1, [self.delta.type], self.key
        first = relist.keys[0] if relist.keys else ""
        if not first and relist.deleted:
            first = relist.deleted[0].key
        return len(relist), relist.delta_types(), first


class RealFIFO:
    """In-order delta queue with client-go ``RealFIFO`` semantics (see the
    module documentation for what an entry holds and the pop contract).

    :param key_func: the key of an object; must handle tombstones (the
        default, :func:`~informers.wire.objects.deletion_handling_meta_namespace_key`,
        does).
    :param known_objects: the consumer's cache, consulted by :meth:`replace`
        (deletions nobody saw) and :meth:`resync`. Without it, only keys
        pending in the queue count as known and :meth:`resync` does nothing.
    :param transform: called once per incoming object in :meth:`add`,
        :meth:`update`, :meth:`delete` and :meth:`replace`, before the object
        is queued; never for tombstones, bookmarks or resync (cached objects
        went through it already). It must not mutate its argument in place
        unless it is idempotent.
    :param list_buffer: the consumer cache's ``new_list_buffer`` (see
        :meth:`new_list_buffer`); ``None``: lists are handed in decoded.

    Errors from the key function or the transform propagate from the producer
    call that triggered them; nothing is queued by that call (a relist is all
    or nothing).
    """

    def __init__(
        self,
        key_func: KeyFunc = deletion_handling_meta_namespace_key,
        known_objects: KeyListerGetter | None = None,
        transform: TransformFunc | None = None,
        list_buffer: ListBufferFactory | None = None,
    ) -> None:
        self._key_func = key_func  # never changes
        self._known_objects = known_objects  # never changes
        self._transform = transform  # never changes
        self._list_buffer = list_buffer  # never changes
        #: No transform and a key function that keys a plain dict as
        #: meta_namespace_key does: _add_one keys such objects directly.
        self._plain_dicts = transform is None and keys_plain_dicts(key_func)  # never changes
        self._lock = threading.Lock()
        #: add/update/delete items not yet moved into ``_queue``: appended
        #: without the lock (a deque append is atomic), popped only under it
        #: by ``_drain_locked``, which every locked reader of the queue calls
        #: first; everything in ``_queue`` is older than everything here.
        self._intake: deque[_Item] = deque()
        #: How a consumer sleeps: it blocks in ``get()`` on a bell without
        #: the lock, and is woken by a token (SimpleQueue: a wait and a
        #: wake-up in C, as cheap as any). A token may be stale (a sleeper
        #: re-checks). pop_batch sleepers (whom wake() is for) and pop
        #: sleepers (who ignore it) have a bell each: tokens are anonymous,
        #: and a pop that woke and went back to sleep on a shared bell could
        #: take the token wake() rang for a pop_batch, which would then sleep
        #: on. A bell is rung only while a sleeper of its kind is counted.
        self._bell: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._pop_bell: queue.SimpleQueue[None] = queue.SimpleQueue()
        #: Set (under the lock) by a consumer about to sleep, read without it
        #: by producers: the first to see it set clears it and rings. The
        #: consumer sets it, then looks at the intake; a producer appends,
        #: then reads it: under the GIL one of them sees the other's write,
        #: so an entry is never left unseen by a sleeper. (This, and the
        #: unlocked intake, rely on the GIL: a free-threaded build would
        #: need the lock around the append and the ring.)
        self._armed = False
        # --- guarded by _lock -------------------------------------------------
        self._queue: deque[_Item] = deque()
        #: Popped entries whose ``process`` has not returned yet, by pop token.
        self._in_flight: dict[int, _Item] = {}
        self._next_token = 0
        #: True once the first relist was queued, or add/update/delete came first.
        self._populated = False
        #: Initial-population entries not yet fully processed. Invariant: equals
        #: the number of queued or in-flight items with ``initial`` set.
        self._initial_population_count = 0
        self._closed = False
        self._last_resource_version = ""
        #: Consumers blocked (or about to be) in :meth:`pop_batch` (on
        #: _bell) and in :meth:`pop` (on _pop_bell): :meth:`close` and
        #: :meth:`wake` ring once for each. Read without the lock by _ring (a
        #: sleeper is counted before it arms and until it is awake again).
        self._batch_sleepers = 0
        self._pop_sleepers = 0
        #: Set by :meth:`wake`, cleared by the pop_batch that returns for it.
        self._woken = False
        # ----------------------------------------------------------------------

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
        item = _Item(Delta(DeltaType.BOOKMARK, resource_version), "")
        with self._lock:
            self._drain_locked()
            self._append_locked(item)

    def new_list_buffer(self) -> ListBuffer | None:
        """A buffer to collect the next list in, in the consumer cache's own
        form, with this queue's transform applied to each item as it is put
        (``None`` when the queue was given no ``list_buffer``, or the cache
        offers none). Hand its :meth:`~informers.cache.listbuffer.ListBuffer.finish`
        result to :meth:`replace`. Takes no lock."""
        if self._list_buffer is None:
            return None
        return self._list_buffer(self._transform)

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Queue a relist: the complete list of objects at ``resource_version``.

        Queued as one :class:`Relist` entry (see the module documentation).
        Every known key missing from ``objects`` gets a
        :class:`~informers.wire.objects.DeletedFinalStateUnknown` tombstone. The
        first relist (when nothing was added, updated or deleted before)
        defines the initial population that :meth:`has_synced` waits for.

        The pending keys and ``known_objects`` are read in one pass under
        the queue's lock (as :meth:`resync` does; the cache is asked only
        for its keys and for the objects of the keys the list no longer
        has), so nothing is ever computed twice.
        """
        key_func = self._key_func
        objs: Sequence[Any]
        if isinstance(objects, PreparedList):
            # Transformed and keyed as it was collected (new_list_buffer).
            objs = objects
            keys: Sequence[str] = objects.keys
        elif self._transform is not None:
            ingested = [self._ingest(obj) for obj in objects]
            keys = [key for key, _ in ingested]
            objs = tuple(obj for _, obj in ingested)
        elif keys_plain_dicts(key_func):
            objs = tuple(objects)
            keys = meta_namespace_keys(objs, key_func)
        else:
            objs = tuple(objects)
            keys = [key_func(obj) for obj in objs]
        listed = set(keys)
        listed_keys = tuple(keys)
        with self._lock:
            pending = self._pending_locked()  # drains the intake first
            # Cached objects are never tombstones, and neither is the last
            # pending object of a key unless that change is a deletion.
            tombstones = [
                DeletedFinalStateUnknown(key, obj.get(key) if type(obj) is _InRelist else obj)
                for key, obj in pending.items()
                if obj is not _GONE and key not in listed
            ]
            tombstones += [
                DeletedFinalStateUnknown(key, obj)
                for key, obj in self._known_items(skip=listed.union(pending))
            ]
            relist = Relist(objs, listed_keys, tuple(tombstones), resource_version)
            self._append_locked(_Item(None, "", relist))
            if not self._populated:
                self._populated = True
                for queued in self._queue:
                    queued.initial = True
                self._initial_population_count = len(self._queue)
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

        One pass, under the queue's lock, as client-go does it: the keys
        pending and the cache are read together, so no entry can be taken
        (and applied to the cache) between the two. Producers' ``add``,
        ``update`` and ``delete`` take no lock and are not held up; ``pop``,
        ``replace`` and ``bookmark`` wait for the pass (time linear in the
        cache). It is the one place that holds two locks: the queue's, then
        the cache's (``known_objects``), always in that order (the cache
        never calls into the queue). Call it on the thread that owns the
        resync, never on a clock's shared timer thread (the informer hands
        it to its loop, which replays its cache itself).
        """
        known = self._known_objects
        if known is None:
            return
        sync = DeltaType.SYNC
        with self._lock:
            pending = self._pending_locked()  # drains the intake first
            queued = self._queue
            before = len(queued)
            for key in known.list_keys():
                if key in pending:
                    continue
                obj = known.get_by_key(key)
                if obj is None:  # only a writer bypassing the queue removes one now
                    continue
                queued.append(_Item(_new_delta(sync, obj), key))
            if len(queued) > before and self._armed:
                self._armed = False
                self._ring()

    def close(self) -> None:
        """Close the queue and wake every blocked :meth:`pop`. Entries already
        queued are still handed out; once they are gone, :meth:`pop` raises
        :class:`~informers.errors.FIFOClosedError`. Idempotent."""
        with self._lock:
            self._closed = True
            self._ring_all_locked()

    # ------------------------------------------------------------------ consumer

    def pop(self, process: PopProcessFunc) -> Entry:
        """Take the oldest entry, call ``process(entry, is_in_initial_list)``
        with it, and return the entry (see the pop contract in the module
        documentation).

        Blocks while the queue is empty (:meth:`wake` does not end that wait);
        raises :class:`~informers.errors.FIFOClosedError` once the queue is
        closed and empty.

        ``process`` runs without the queue lock held. Until it returns, the
        entry counts as pending for :meth:`replace` and :meth:`resync`, and
        :meth:`has_synced` does not count it as processed.

        If ``process`` raises, the exception propagates out of ``pop``
        unchanged (with a note naming the entry's delta types and first key).
        The entry is **not** requeued (as in client-go): it counts as consumed,
        the caller was handed it and decides what to do (the informer logs and
        carries on; a relist repairs any divergence). Requeuing would either
        reorder deltas or re-apply half-applied ones.
        """
        with self._lock:
            self._wait_locked(wakeable=False)
            taken = self._take_locked()
        entry = taken[0].handed_out()
        self._process_taken(taken, entry, process)
        with self._lock:
            self._finish_locked(taken, succeeded=True)
        return entry

    def pop_batch(
        self,
        process: PopProcessFunc,
        max_entries: int = 64,
        *,
        process_delta: PopDeltaFunc | None = None,
    ) -> int:
        """Process up to ``max_entries`` entries, oldest first, exactly as that
        many :meth:`pop` calls in a row would (one ``process`` call per entry,
        same arguments, same bookkeeping between calls); returns how many were
        processed.

        With ``process_delta``, an entry of one delta is handed to
        ``process_delta(delta, key, is_in_initial_list)`` instead, with the
        key this queue's key function gave its object (after the transform;
        for a bookmark, ``""``): a consumer that keys objects as the queue
        does need not key them again. A relist still goes to ``process``.

        Blocks only for the first entry (raising
        :class:`~informers.errors.FIFOClosedError` as :meth:`pop` does), then
        stops early when the queue is empty. A :meth:`wake` makes it return
        before it takes its next entry, consuming the wake-up: at once (0) if
        it is waiting or has not started, else once the entry in progress is
        done (the informer admits a new handler there, between two entries).
        Entries are taken one at a time, so the ones not yet taken stay queued
        (counted by ``len``, visible to :meth:`replace`). It saves the
        consumer one lock acquisition per entry: finishing an entry and taking
        the next share one. If ``process`` raises, that entry is consumed (as
        with :meth:`pop`), the exception propagates and the following entries
        stay queued.
        """
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        with self._lock:
            if not self._wait_locked(wakeable=True):
                return 0
            taken = self._take_locked()
        count = 0
        in_flight, queued = self._in_flight, self._queue
        while True:
            # _process_taken inlined: one frame less per entry on the event path.
            item, token, initial = taken
            delta = item.delta  # None for a relist
            try:
                if process_delta is not None and delta is not None:
                    process_delta(delta, item.key, initial)
                else:
                    process(item.handed_out(), initial)
            except BaseException as exc:
                self._failed(taken, exc)
                raise
            count += 1
            with self._lock:
                if delta is None or item.initial or delta.type is _BOOKMARK:
                    self._finish_locked(taken, succeeded=True)
                else:  # _finish_locked of a change: nothing to do but drop its token
                    del in_flight[token]
                if self._woken:
                    self._woken = False
                    return count
                if self._intake:
                    self._drain_locked()
                if count >= max_entries or not queued:
                    return count
                if self._initial_population_count or not self._populated:
                    taken = self._take_locked()
                else:  # _take_locked once synced (is_in_initial_list is False), inlined
                    item = queued.popleft()
                    token = self._next_token
                    self._next_token = token + 1
                    in_flight[token] = item
                    taken = (item, token, False)

    def wake(self) -> None:
        """Make :meth:`pop_batch` return to its caller before it takes another
        entry: a call waiting on an empty queue returns 0 at once, a call
        processing an entry returns when that entry is done, and otherwise the
        next call returns 0 at once.

        One pop_batch return consumes the wake-up (calls before that collapse
        into one); it is never lost, and it never skips an entry (they stay
        queued, in order). :meth:`pop` ignores wake-ups. Never blocks beyond
        the lock.
        """
        with self._lock:
            self._woken = True
            self._ring_all_locked()

    def _process_taken(
        self, taken: tuple[_Item, int, bool], entry: Entry, process: PopProcessFunc
    ) -> None:
        """Call ``process`` on a taken entry, without the lock. If it raises,
        the entry is finished as failed and the exception propagates, noted."""
        try:
            process(entry, taken[2])
        except BaseException as exc:
            self._failed(taken, exc)
            raise

    def _failed(self, taken: tuple[_Item, int, bool], exc: BaseException) -> None:
        """Finish a taken entry whose ``process`` raised ``exc`` (noted with
        the entry's description; the caller re-raises it)."""
        if isinstance(exc, Exception):
            count, types, first_key = taken[0].describe()
            exc.add_note(
                f"raised while processing a RealFIFO entry of {count} delta(s) "
                f"[{','.join(sorted(t.value for t in types))}], first key {first_key!r}; "
                "the entry was consumed, not requeued"
            )
        with self._lock:
            self._finish_locked(taken, succeeded=False)

    def _wait_locked(self, *, wakeable: bool) -> bool:
        """Block (releasing the lock) until an entry is queued: True. False,
        at once or on waking up, when ``wakeable`` and :meth:`wake` was called
        (consuming it; it wins over queued entries). Raises once closed and
        empty."""
        lock = self._lock
        while True:
            if self._intake:
                self._drain_locked()
            if wakeable and self._woken:
                self._woken = False
                return False
            if self._queue:
                if (self._batch_sleepers or self._pop_sleepers) and len(self._queue) > 1:
                    # More than this caller takes, while others sleep: pass
                    # the wake-up on (a burst rings only once).
                    self._ring()
                return True
            if self._closed:
                raise FIFOClosedError("the delta queue is closed")
            if wakeable:
                self._batch_sleepers += 1
                bell = self._bell
            else:
                self._pop_sleepers += 1
                bell = self._pop_bell
            self._armed = True
            lock.release()
            try:
                if not self._intake:  # after arming: see _armed
                    bell.get()
            finally:
                lock.acquire()
                if wakeable:
                    self._batch_sleepers -= 1
                else:
                    self._pop_sleepers -= 1
                # the others still sleep
                self._armed = self._batch_sleepers + self._pop_sleepers > 0

    def _ring_all_locked(self) -> None:
        """Wake every sleeping consumer (each re-checks why it woke)."""
        self._armed = False
        for _ in range(self._batch_sleepers):
            self._bell.put(None)
        for _ in range(self._pop_sleepers):
            self._pop_bell.put(None)

    def _ring(self) -> None:
        """Wake one sleeper of each kind (with or without the lock; the one
        that finds nothing sleeps again): whoever can take the new entry."""
        if self._batch_sleepers:
            self._bell.put(None)
        if self._pop_sleepers:
            self._pop_bell.put(None)

    def _drain_locked(self) -> None:
        """Move the intake into the queue, in order (see ``_intake``)."""
        intake, queued = self._intake, self._queue
        if intake:
            while intake:
                queued.append(intake.popleft())
            self._populated = True

    def _take_locked(self) -> tuple[_Item, int, bool]:
        """Move the oldest entry in flight: ``(item, token, is_in_initial_list)``."""
        is_in_initial_list = not self._has_synced_locked()
        item = self._queue.popleft()
        token = self._next_token
        self._next_token += 1
        self._in_flight[token] = item
        return item, token, is_in_initial_list

    def _finish_locked(self, taken: tuple[_Item, int, bool], *, succeeded: bool) -> None:
        """Account for a taken entry whose ``process`` returned or raised."""
        item, token, _ = taken
        del self._in_flight[token]
        if item.initial:
            self._initial_population_count -= 1
        if succeeded:
            relist = item.relist
            if relist is not None:
                self._last_resource_version = relist.resource_version
            elif item.delta is not None and item.delta.type is DeltaType.BOOKMARK:
                self._last_resource_version = item.delta.object

    # ------------------------------------------------------------------ state

    def has_synced(self) -> bool:
        """True once the initial population has been processed: either
        add/update/delete was called before any relist (then at once), or every
        entry queued up to and including the first relist has been popped and
        its ``process`` returned. Never blocks beyond the lock."""
        with self._lock:
            self._drain_locked()
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

    def pending(self) -> int:
        """Entries queued or being processed (popped, ``process`` not yet
        returned): 0 means every entry handed in so far has been processed."""
        with self._lock:
            self._drain_locked()
            return len(self._queue) + len(self._in_flight)

    def __len__(self) -> int:
        """Number of queued entries (a relist counts as one; entries being
        processed are not counted: see :meth:`pending`)."""
        with self._lock:
            self._drain_locked()
            return len(self._queue)

    def __repr__(self) -> str:
        with self._lock:
            self._drain_locked()
            return (
                f"<RealFIFO queued={len(self._queue)} in_flight={len(self._in_flight)} "
                f"closed={self._closed}>"
            )

    # ------------------------------------------------------------------ internals

    def _has_synced_locked(self) -> bool:
        return self._populated and self._initial_population_count == 0

    def _add_one(self, delta_type: DeltaType, obj: Any) -> None:
        if self._plain_dicts and type(obj) is dict:
            key = meta_namespace_key(obj)  # what _ingest gives, one call shorter
        else:
            key, obj = self._ingest(obj)
        # No lock (see _intake): only a ring when a consumer sleeps.
        self._intake.append(_Item(_new_delta(delta_type, obj), key))
        if self._armed:
            self._armed = False
            self._ring()

    def _ingest(self, obj: Any) -> tuple[str, Any]:
        """Transform (unless a tombstone) and key an incoming object; no lock held."""
        if self._transform is not None and not isinstance(obj, DeletedFinalStateUnknown):
            obj = self._transform(obj)
        return self._key_func(obj), obj

    def _append_locked(self, item: _Item) -> None:
        """Queue ``item`` after the queue, not after the intake: callers
        drain first where entries their own thread handed in must precede
        it; one another thread hands in meanwhile is concurrent with the
        call, and comes after it."""
        self._queue.append(item)
        if self._armed:
            self._armed = False
            self._ring()

    def _pending_locked(self) -> dict[str, Any]:
        """The last pending object of every key with entries being processed
        or queued, in first-seen order (bookmarks skipped); ``_GONE`` for a
        key whose last pending change is a deletion."""
        self._drain_locked()
        last: dict[str, Any] = {}
        for items in (self._in_flight.values(), self._queue):
            for item in items:
                relist = item.relist
                if relist is not None:
                    if isinstance(relist.objects, PreparedList):
                        # Decoded only for a tombstone (see replace).
                        last.update(dict.fromkeys(relist.keys, _InRelist(relist)))
                    else:
                        last.update(zip(relist.keys, relist.objects, strict=True))
                    for tombstone in relist.deleted:
                        last[tombstone.key] = _GONE
                    continue
                delta = item.delta
                assert delta is not None
                if delta.type is DeltaType.BOOKMARK:
                    continue
                last[item.key] = _GONE if delta.type is DeltaType.DELETED else delta.object
        return last

    def _known_items(self, skip: Iterable[str]) -> list[tuple[str, Any]]:
        """``(key, object)`` for every key of ``known_objects`` not in ``skip``;
        called with the lock held (see :meth:`resync`). A key that vanished
        between listing and getting (only a writer bypassing the queue can
        remove one) yields ``None``, logged."""
        known = self._known_objects
        if known is None:
            return []
        skip_set = skip if isinstance(skip, set) else set(skip)
        items: list[tuple[str, Any]] = []
        # A store keeping objects as bytes hands a tombstone's object over
        # undecoded (RawStore.notification_by_key).
        get = getattr(known, "notification_by_key", known.get_by_key)
        for key in known.list_keys():
            if key in skip_set:
                continue
            obj = get(key)
            if obj is None:
                logger.warning("key %s vanished from the cache; tombstone without object", key)
            items.append((key, obj))
        return items
