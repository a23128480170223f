"""The :class:`~informers.cache.compact.store.CompactStore`: an indexed store
that keeps its objects encoded, with an LRU of decoded hot objects (see
:mod:`informers.cache.compact` for when to choose it, and what it costs)."""

from __future__ import annotations

import builtins
import copy
import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from cachetools import LRUCache

from informers.cache.compact.codecs import Codec, ZlibCodec
from informers.cache.compact.lists import EncodedList, _CompactListBuffer, _Unencodable
from informers.cache.index import IndexValues, StoreIndex, add_indexers, compute_index_values
from informers.cache.keys import checked_key, describe, keyed_items, keys_plain_dicts
from informers.cache.listbuffer import Deferred
from informers.errors import IndexFunctionError, ObjectEncodeError
from informers.wire.objects import Indexers, IndexFunc, KeyFunc, meta_namespace_key

if TYPE_CHECKING:
    from informers.cache.protocols import InformerStore, PreparedListStore

__all__ = ["DEFAULT_HOT_OBJECTS", "CompactStore"]

logger = logging.getLogger(__name__)

_MISSING: Any = object()

#: How many decoded objects a :class:`CompactStore` keeps by default (about
#: 100 MB of 2 KB pods).
DEFAULT_HOT_OBJECTS = 10_000


class _HotObjects(LRUCache[str, Any]):
    """The LRU of decoded objects; every eviction also leaves ``mirror``
    (a plain dict with the same keys and values, read without the LRU's
    per-call overhead). Not thread-safe: used under the store's lock only."""

    def __init__(self, maxsize: int, mirror: dict[str, Any]) -> None:
        super().__init__(maxsize)
        self.mirror = mirror

    def popitem(self) -> tuple[str, Any]:
        key, value = super().popitem()
        del self.mirror[key]
        return key, value


class CompactStore:
    """An :class:`~informers.cache.protocols.IndexedStore` that keeps objects encoded,
    with an LRU of decoded hot objects and indexes computed at ingest.

    :param key_func: the key of an object (default
        :func:`~informers.meta_namespace_key`).
    :param indexers: initial indexes (name -> index function).
    :param on_index_error: as for :class:`~informers.cache.store.Indexer`: an
        object an index function fails on is stored anyway, in no value of
        that index, and the error is reported (outside the lock).
    :param codec: how objects are encoded (default
        :class:`~informers.cache.compact.codecs.ZlibCodec`).
    :param hot_objects: how many decoded objects the LRU keeps (default
        :data:`~informers.cache.compact.store.DEFAULT_HOT_OBJECTS`; 0 keeps none and
        decodes every read).

    Contract: everything :class:`~informers.cache.store.Indexer` promises (atomic
    writes and relists, lists the caller owns, read-only objects, key and
    index functions outside the lock, errors leaving the store unchanged,
    :class:`~informers.UnknownIndexError` and
    :class:`~informers.IndexConflictError`), except object identity: reads
    return the hot object or a freshly decoded equal one. An object the codec
    cannot encode raises :class:`~informers.ObjectEncodeError` (for
    :meth:`replace`: before anything changes).

    The hot set: a write (:meth:`add`, :meth:`update`, :meth:`upsert`) makes
    its object hot; a read of one object or of an index value
    (:meth:`get`, :meth:`get_by_key`, :meth:`by_index`, :meth:`index`)
    makes the objects it returns hot, decoding those that were not;
    :meth:`list`, :meth:`get_many` and :meth:`add_indexers` decode without
    caching; a relist (:meth:`replace`, :meth:`replace_items`) empties it.
    The LRU is a :class:`cachetools.LRUCache`; reads find hot objects in a
    plain dict mirror of it and record the keys they used, which the LRU is
    told about (in order, so it evicts exactly the least recently used)
    before its next insertion. Within one read, the objects that were hot
    count as used before those it decoded are inserted.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key,
        indexers: Indexers | None = None,
        *,
        on_index_error: Callable[[IndexFunctionError], None] | None = None,
        codec: Codec | None = None,
        hot_objects: int = DEFAULT_HOT_OBJECTS,
    ) -> None:
        if hot_objects < 0:
            raise ValueError(f"hot_objects must be >= 0, not {hot_objects}")
        # Never change after construction:
        self._key_func = key_func
        self._plain_dicts = keys_plain_dicts(key_func)
        self._on_index_error = on_index_error
        self._codec: Codec = codec if codec is not None else ZlibCodec()
        self._encode = self._codec.encode
        self._decode = self._codec.decode
        self._hot_size = hot_objects
        #: reads recorded before the LRU is told (bounds the list).
        self._touch_limit = max(1024, hot_objects)
        self._lock = threading.Lock()
        # --- guarded by _lock ----------------------------------------------
        # key -> encoded object.
        self._blobs: dict[str, bytes] = {}
        # key -> decoded object, for the hot keys: always exactly the keys
        # and values of _lru (a subset of _blobs' keys, each decoding to the
        # blob stored now).
        self._hot: dict[str, Any] = {}
        self._lru = _HotObjects(hot_objects, self._hot) if hot_objects else None
        # The reads of hot objects since the LRU was last told, in order: a
        # key, or (index name, value) for a by_index that found every object
        # hot (one entry per call, whatever the number of matches). Replayed
        # into the LRU before anything changes the keys or the indexes, and
        # so before any insertion (eviction order is exact LRU: an index
        # value resolves to the keys it had when it was read), and when it
        # reaches _touch_limit.
        self._touched: list[str | tuple[str, str]] = []
        # The indexes (see StoreIndex for their invariants): replaced whole,
        # with the blobs, by a relist. Its ``indexers`` may be read without
        # the lock (replaced, never mutated).
        self._index = StoreIndex(intern=True)
        # --------------------------------------------------------------------
        if indexers:
            self.add_indexers(indexers)

    @property
    def codec(self) -> Codec:
        """The codec objects are kept in."""
        return self._codec

    @property
    def hot_objects(self) -> int:
        """The LRU's bound (decoded objects kept at most)."""
        return self._hot_size

    def __repr__(self) -> str:
        with self._lock:
            count, hot, names = len(self._blobs), len(self._hot), sorted(self._index.indexers)
        return f"<CompactStore ({self._codec.name}): {count} objects, {hot} hot, indexes {names}>"

    def __len__(self) -> int:
        with self._lock:
            return len(self._blobs)

    def stats(self) -> dict[str, int]:
        """``objects``, ``hot`` (decoded objects held) and ``encoded_bytes``
        (the sum of the encoded objects' lengths), read under one lock."""
        with self._lock:
            return {
                "objects": len(self._blobs),
                "hot": len(self._hot),
                "encoded_bytes": sum(map(len, self._blobs.values())),
            }

    def hot_keys(self) -> builtins.list[str]:
        """The keys of the hot objects, least recently used first (for
        inspection and tests: the LRU is brought up to date first)."""
        with self._lock:
            self._tell_lru_locked()
            if self._lru is None:
                return []
            # Evicting from a copy tells the order without touching the LRU.
            order = copy.copy(self._lru)
            order.mirror = {}  # the copy's evictions must not touch _hot
            keys: builtins.list[str] = []
            while order:
                key, _ = LRUCache.popitem(order)
                keys.append(key)
            return keys

    # ------------------------------------------------------------------ keys

    @property
    def key_func(self) -> KeyFunc:
        """The key function this store keys objects with (never changes)."""
        return self._key_func

    def key_of(self, obj: Any) -> str:
        """The key of ``obj`` under this store's key function; raises
        :class:`~informers.ObjectKeyError` as :meth:`Indexer.key_of
        <informers.cache.store.Indexer.key_of>` does. Takes no lock."""
        return checked_key(self._key_func, obj)

    def _notify(self, blob: bytes) -> Any:
        """A stored object as notifications (relists, resyncs) carry it,
        made on first use: decoded (RawStore hands over raw objects)."""
        return self._decode(blob)

    def _encode_one(self, key: str, obj: Any) -> bytes:
        try:
            return self._encode(obj)
        except (TypeError, ValueError) as err:
            raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err

    # ------------------------------------------------------------ hot set (locked)

    def _tell_lru_locked(self) -> None:
        """Replay the recorded reads into the LRU, each entry once, in order
        of its last use (so the order is what per-read updates would give)."""
        touched = self._touched
        lru = self._lru
        if not touched or lru is None:
            touched.clear()
            return
        indices = self._index.indices
        for entry in reversed(dict.fromkeys(reversed(touched))):
            if isinstance(entry, str):
                if entry in lru:
                    lru[entry]  # reading moves the key to most recently used
                continue
            name, value = entry
            for key in indices[name].get(value, ()):
                if key in lru:
                    lru[key]
        touched.clear()

    def _make_hot_locked(self, key: str, obj: Any) -> None:
        lru = self._lru
        if lru is None:
            return
        if self._touched:
            self._tell_lru_locked()
        lru[key] = obj  # may evict (and drop from the mirror) the LRU key
        self._hot[key] = obj

    def _drop_hot_locked(self, key: str) -> None:
        if key in self._hot:
            assert self._lru is not None
            del self._lru[key]
            del self._hot[key]

    def _touch_locked(self, keys: Iterable[str]) -> None:
        touched = self._touched
        touched.extend(keys)
        if len(touched) >= self._touch_limit:
            self._tell_lru_locked()

    # ------------------------------------------------------------------ writes

    def upsert(self, key: str, obj: Any) -> Any | None:
        """Store ``obj`` under ``key`` (and make it hot); return the object it
        replaced (``None`` for a new key), read in the same lock acquisition
        as the write (decoded after it, outside the lock, if it was not hot).

        Encoding and the index functions run first, outside the lock.
        """
        old_hot, old_blob = self._write(key, obj, keep_old=True)
        if old_hot is not _MISSING:
            return old_hot
        return None if old_blob is None else self._decode(old_blob)

    def delete_key(self, key: str) -> Any | None:
        """Remove the object under ``key`` and return it (``None``, and nothing
        changes, for an unknown key). Runs no user code under the lock."""
        found = self._remove(key)
        if found is None:
            return None
        hot, blob = found
        return hot if hot is not _MISSING else self._decode(blob)

    def _remove(self, key: str) -> tuple[Any, bytes] | None:
        with self._lock:
            blob = self._blobs.pop(key, None)
            if blob is None:
                return None
            hot = self._hot.get(key, _MISSING)
            self._drop_hot_locked(key)
            self._index.remove(key)
            return hot, blob

    def replace_items(self, items: dict[str, Any], resource_version: str = "") -> None:
        """Make ``items`` (key -> object) the whole content, atomically; the
        hot set starts empty. Encoding and indexing run outside the lock; if
        a codec or (without ``on_index_error``) an index function fails,
        nothing changes. ``resource_version`` only goes into a debug log."""
        encode = self._encode
        blobs: dict[str, bytes] = {}
        for key, obj in items.items():
            try:
                blobs[key] = encode(obj)
            except (TypeError, ValueError) as err:
                raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err
        while True:
            indexers = self._index.indexers
            index = StoreIndex.of_objects(indexers, items, self._on_index_error, intern=True)
            with self._lock:
                if self._index.indexers is indexers:
                    self._adopt_locked(blobs, index)
                    break
        logger.debug(
            "compact store replaced: %d objects at resourceVersion %s",
            len(blobs),
            resource_version,
        )

    def new_list_buffer(
        self, transform: Callable[[Any], Any] | None = None
    ) -> _CompactListBuffer | None:
        """A :class:`~informers.cache.listbuffer.ListBuffer` that keeps a list the
        way this store keeps objects: each item, as it is put, goes through
        ``transform``, is keyed, encoded and indexed, and only its blob,
        index values and resource version are kept, so a list being
        collected never exists decoded in full. Its
        :meth:`~informers.cache.listbuffer.ListBuffer.finish` gives an
        :class:`~informers.cache.compact.lists.EncodedList` for
        :meth:`replace_prepared`. The informer collects its lists in these (see
        :mod:`informers.cache.listbuffer`). The buffer is used by one thread; making it
        takes no lock."""
        return _CompactListBuffer(self, transform, self._index.indexers, self._plain_dicts)

    def replace_prepared(
        self, prepared: EncodedList, resource_version: str = ""
    ) -> Callable[[str], Deferred | None]:
        """Make the objects of ``prepared`` (a list collected by one of this
        store's list buffers) the whole content, atomically, adopting its
        blobs and index values as they are (later duplicates win, as in
        :meth:`replace_items`; the hot set starts empty).

        Returns ``previous(key)``: what was stored under ``key`` before, as a
        :class:`~informers.cache.listbuffer.Deferred` (decoded on first use, from
        the replaced blob) or ``None`` -- what the relist's notifications are
        made of. Nothing is decoded here unless indexes were added after
        the list began (their functions then run on each object, decoded
        once, outside the lock). An item the codec could not encode raises
        :class:`~informers.ObjectEncodeError`, and an index function failure
        (without ``on_index_error``) :class:`~informers.IndexFunctionError`,
        changing nothing; with ``on_index_error``, the failures met while
        the list was collected are reported to it here, on the caller's
        thread."""
        if prepared.store is not self:
            raise ValueError("replace_prepared takes a list prepared by this store's buffer")
        keys, blobs = prepared.keys, prepared.blobs
        for key, blob in zip(keys, blobs, strict=True):
            if type(blob) is _Unencodable:
                err = blob.error
                raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err
        on_error = self._on_index_error
        if prepared.errors:
            if on_error is None:
                raise prepared.errors[0]
            for error in prepared.errors:
                on_error(error)
        new_blobs: dict[str, bytes] = dict(zip(keys, blobs, strict=True))  # type: ignore[arg-type]
        # Each key once, at its first position, with its last item's values.
        if len(new_blobs) == len(keys):
            order: Iterable[tuple[str, int]] = zip(keys, range(len(keys)), strict=True)
        else:
            order = {key: i for i, key in enumerate(keys)}.items()
        rows = builtins.list(order)
        while True:
            indexers = self._index.indexers
            index = self._build_index(prepared, rows, indexers)
            with self._lock:
                if self._index.indexers is indexers:
                    old_blobs, old_hot = self._blobs, self._hot
                    self._adopt_locked(new_blobs, index)
                    break
        logger.debug(
            "compact store replaced from a prepared list: %d objects at resourceVersion %s",
            len(new_blobs),
            resource_version,
        )
        decode = self._notify

        def previous(key: str) -> Deferred | None:
            hot = old_hot.get(key, _MISSING)
            if hot is not _MISSING:
                return Deferred.ready(hot)
            blob = old_blobs.get(key)
            return None if blob is None else Deferred(decode, blob)

        return previous

    def _adopt_locked(self, blobs: dict[str, bytes], index: StoreIndex) -> None:
        """Make ``blobs`` and ``index`` the whole content (a relist); the hot
        set starts empty."""
        self._blobs = blobs
        self._hot = {}
        self._touched.clear()
        if self._lru is not None:
            self._lru = _HotObjects(self._hot_size, self._hot)
        self._index = index

    def _build_index(
        self,
        prepared: EncodedList,
        rows: builtins.list[tuple[str, int]],
        indexers: dict[str, IndexFunc],
    ) -> StoreIndex:
        """A new index of the keys of ``rows`` (key, position in
        ``prepared``), built without the lock from the values computed at
        collection; indexes the list was not indexed for are computed here,
        decoding each object once."""
        columns: dict[str, builtins.list[IndexValues]] = {}
        position = {name: j for j, name in enumerate(prepared.names)}
        values_of = prepared.values
        for name in indexers:
            j = position.get(name)
            if j is not None:
                columns[name] = [values_of[i][j] for _, i in rows]
        extra = {name: func for name, func in indexers.items() if name not in position}
        if extra:
            computed = [
                compute_index_values(extra, key, prepared.decode(i), self._on_index_error)
                for key, i in rows
            ]
            for name in extra:
                columns[name] = [c[name] for c in computed]
        return StoreIndex.build(indexers, [key for key, _ in rows], columns, intern=True)

    def add(self, obj: Any) -> None:
        """Store ``obj`` under its key, replacing any object with that key."""
        self._write(self.key_of(obj), obj, keep_old=False)

    def update(self, obj: Any) -> None:
        """Store ``obj`` under its key (identical to :meth:`add`)."""
        self._write(self.key_of(obj), obj, keep_old=False)

    def _write(self, key: str, obj: Any, *, keep_old: bool) -> tuple[Any, bytes | None]:
        """Store ``obj`` under ``key`` and make it hot; with ``keep_old``, the
        replaced hot object (or ``_MISSING``) and blob (or ``None``), read in
        the same lock acquisition. Encoding and the index functions run
        first, outside the lock (again if indexes are added meanwhile)."""
        blob = self._encode_one(key, obj)
        old_hot, old_blob = _MISSING, None
        while True:
            indexers = self._index.indexers
            computed = compute_index_values(indexers, key, obj, self._on_index_error)
            with self._lock:
                index = self._index
                if index.indexers is indexers:
                    blobs = self._blobs
                    if keep_old:
                        old_hot = self._hot.get(key, _MISSING)
                        old_blob = blobs.get(key)
                    blobs[key] = blob
                    if self._touched:  # before the indexes change
                        self._tell_lru_locked()
                    index.update(key, computed)
                    self._make_hot_locked(key, obj)
                    return old_hot, old_blob

    def delete(self, obj: Any) -> None:
        """Remove the object with the key of ``obj``; an unknown key is a no-op."""
        self._remove(self.key_of(obj))

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Make ``objects`` the whole content, atomically (later duplicates
        win); if a key, index or codec call fails nothing changes. A list
        prepared by this store's buffer (what a
        :class:`~informers.cache.reflector.Reflector` writing to this store hands
        over) is adopted as :meth:`replace_prepared` does."""
        if isinstance(objects, EncodedList) and objects.store is self:
            self.replace_prepared(objects, resource_version)
            return
        self.replace_items(keyed_items(objects, self.key_of, self._plain_dicts), resource_version)

    def resync(self) -> None:
        """Does nothing: this store keeps no state that needs resyncing."""

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more indexes and index the stored objects (each decoded
        once, outside the lock; objects written meanwhile are indexed again,
        and after a few such rounds under constant writes the last ones are
        indexed holding the lock, as the default store does). Raises
        :class:`~informers.IndexConflictError` or
        :class:`~informers.IndexFunctionError` registering nothing."""
        add_indexers(self._lock, indexers, self._contents_locked, self._decode)

    def _contents_locked(self) -> tuple[StoreIndex, dict[str, bytes]]:
        return self._index, self._blobs

    # ------------------------------------------------------------------ reads

    def _snapshot_locked(
        self, keys: Iterable[str], *, cache: bool
    ) -> builtins.list[tuple[str, Any, bytes | None]]:
        """``(key, hot object or _MISSING, blob or None)`` for each key, read
        under the lock the caller holds; with ``cache``, the hot keys count as
        used."""
        hot, blobs = self._hot, self._blobs
        snapshot = [(key, hot.get(key, _MISSING), blobs.get(key)) for key in keys]
        if cache and self._lru is not None:
            self._touch_locked([key for key, obj, _ in snapshot if obj is not _MISSING])
        return snapshot

    def _materialise(
        self, snapshot: builtins.list[tuple[str, Any, bytes | None]], *, cache: bool
    ) -> builtins.list[Any]:
        """The snapshot's objects (``None`` for a key that had no blob): hot
        ones as they are, the rest decoded here, outside the lock, and made
        hot with ``cache`` if unchanged since."""
        decode = self._decode
        out = [
            obj if obj is not _MISSING else (None if blob is None else decode(blob))
            for _, obj, blob in snapshot
        ]
        if cache and self._lru is not None:
            decoded = [
                (key, blob, got)
                for (key, obj, blob), got in zip(snapshot, out, strict=True)
                if obj is _MISSING and blob is not None
            ]
            if decoded:
                with self._lock:
                    blobs, hot = self._blobs, self._hot
                    for key, blob, got in decoded:
                        if blobs.get(key) is blob and key not in hot:
                            self._make_hot_locked(key, got)
        return out

    def get_by_key(self, key: str) -> Any | None:
        """The object stored under ``key`` (made hot), or ``None``."""
        lock = self._lock
        lock.acquire()
        try:
            # (A stored None is never found here: it is decoded below.)
            obj = self._hot.get(key)
            if obj is not None:
                touched = self._touched
                touched.append(key)
                if len(touched) >= self._touch_limit:
                    self._tell_lru_locked()
                return obj
            blob = self._blobs.get(key)
        finally:
            lock.release()
        if blob is None:
            return None
        obj = self._decode(blob)
        if self._lru is not None:
            with self._lock:
                if self._blobs.get(key) is blob and key not in self._hot:
                    self._make_hot_locked(key, obj)
        return obj

    def get(self, obj: Any) -> Any | None:
        """The stored object with the key of ``obj``, or ``None``."""
        return self.get_by_key(self.key_of(obj))

    def get_many(self, keys: Iterable[str]) -> builtins.list[Any | None]:
        """``[get_by_key(k) for k in keys]`` from one snapshot (``None`` for
        each unknown key); decodes without making the objects hot."""
        with self._lock:
            snapshot = self._snapshot_locked(keys, cache=False)
        return self._materialise(snapshot, cache=False)

    def list(self) -> builtins.list[Any]:
        """All objects, in a new list (no guaranteed order); objects that are
        not hot are decoded, not made hot (a scan keeps the hot set)."""
        with self._lock:
            hot = self._hot
            snapshot = [(hot.get(key, _MISSING), blob) for key, blob in self._blobs.items()]
        decode = self._decode
        return [decode(blob) if obj is _MISSING else obj for obj, blob in snapshot]

    def list_keys(self) -> builtins.list[str]:
        """All keys, in a new list (no guaranteed order)."""
        with self._lock:
            return builtins.list(self._blobs)

    def resync_items(self) -> builtins.list[Deferred]:
        """Every object, as a :class:`~informers.cache.listbuffer.Deferred`
        decoded on first use outside the lock (a hot one is ready), from one
        snapshot: what an informer's resync hands its handlers. Decodes
        nothing and leaves the hot set as it is."""
        with self._lock:
            hot = self._hot
            snapshot = [(hot.get(key, _MISSING), blob) for key, blob in self._blobs.items()]
        decode = self._notify
        return [
            Deferred(decode, blob) if obj is _MISSING else Deferred.ready(obj)
            for obj, blob in snapshot
        ]

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """The objects indexed under ``indexed_value`` in ``index_name`` (made
        hot), in a new list, in the order their keys entered that value."""
        lock = self._lock
        lock.acquire()
        try:
            hot = self._hot
            touched = self._touched
            keys = self._index.indices[index_name].get(indexed_value)
            if keys is None:
                return []
            if len(keys) == 1:
                for key in keys:
                    obj = hot.get(key, _MISSING)
                    if obj is not _MISSING:
                        touched.append(key)
                        if len(touched) >= self._touch_limit:
                            self._tell_lru_locked()
                        return [obj]
            try:
                out = [hot[key] for key in keys]
            except KeyError:
                # Some are not hot: the whole result from this snapshot,
                # decoded after the lock is released.
                snapshot = self._snapshot_locked(keys, cache=True)
            else:
                touched.append((index_name, indexed_value))
                if len(touched) >= self._touch_limit:
                    self._tell_lru_locked()
                return out
        finally:
            lock.release()
        return self._materialise(snapshot, cache=True)

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """The keys of the objects indexed under ``indexed_value``, in a new list."""
        with self._lock:
            return self._index.keys(index_name, indexed_value)

    def _describe(self, obj: Any) -> str:
        """How an error message names ``obj``: its key, or ``<no key>``."""
        return describe(self.key_of, obj)

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """The stored objects sharing at least one value with ``obj`` in
        ``index_name`` (each once); the index function runs on ``obj``
        outside the lock."""
        wanted = self._index.wanted(index_name, obj, self._describe)
        with self._lock:
            keys = self._index.matching(index_name, wanted)
            snapshot = self._snapshot_locked(keys, cache=True)
        return self._materialise(snapshot, cache=True)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value at least one object is indexed under in ``index_name``."""
        with self._lock:
            return self._index.indexed_values(index_name)

    def get_indexers(self) -> dict[str, IndexFunc]:
        """The registered index functions by name, in a new dict."""
        return dict(self._index.indexers)


if TYPE_CHECKING:
    _protocol_check: InformerStore = CompactStore()
    _capability_check: PreparedListStore = CompactStore()
