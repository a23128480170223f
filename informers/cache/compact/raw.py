"""Decode on demand: a store that keeps each object as the JSON bytes it
arrived in, reads only its metadata (in C, with :mod:`msgspec`), and decodes
the whole object when someone reads it.

* :class:`~informers.wire.raw.RawObject` (:mod:`informers.wire.raw`): an
  object as it came off the wire, its JSON bytes read as a mapping whose
  ``metadata`` fields (name, namespace, resourceVersion, uid, labels,
  annotations, ownerReferences, generation, deletionTimestamp, finalizers)
  come from a record decoded in C, the rest
  from a full decode made on first use.
* :class:`RawStore`: a :class:`~informers.cache.compact.store.CompactStore`
  keeping plain JSON bytes. A :class:`~informers.wire.raw.RawObject` written
  to it is kept as its very bytes (no encode, no decode, not made hot); a
  dict is encoded to JSON as :class:`~informers.cache.compact.codecs.JSONCodec`
  does. Reads (``get``, ``list``, ``by_index``, listers) return dicts decoded
  by the exact parser (:mod:`informers.wire._json`) through the compact
  store's hot LRU, so every read answers what the default store would.

Keys and indexes: the key functions and index functions are given the
:class:`~informers.wire.raw.RawObject` itself. One reading only those
metadata fields (:func:`~informers.meta_namespace_key`,
:func:`~informers.namespace_index`, label and owner indexes through the
helpers of :mod:`informers.wire.objects` or ``obj["metadata"][...]``) runs
without a decode. One declaring the other fields it reads with
:func:`~informers.wire.raw.reads` (``@reads("spec.nodeName")``) gets them
decoded in C by a typed projection (about the metadata record's cost, a
fraction of a full decode). One reading anything else undeclared makes the
object decode, once per write whatever the number of such functions -- the
default store's parse, paid at ingest -- and a relist drops each decode
once its page is indexed. A function testing ``type(obj) is dict`` sees a
mapping that is not a dict.

Relists: atomic, as every store's; an object whose stored bytes equal the
relisted ones is recognised unchanged (a resync, not an update, for a
handler that is not resyncing) by comparing the bytes, without a decode;
a relist's tombstones carry the stored object undecoded
(:meth:`RawStore.notification_by_key`).

Memory: the bytes as sent (``managedFields`` included) plus about 0.5 KB of
key, index and heap overhead per object, and the hot set
(:data:`RAW_HOT_OBJECTS` decoded objects at most). ``compress=True`` keeps
the bytes compressed (about a tenth of a realistic pod's JSON, zstd with the
``fast`` extra, else zlib) for about 5 us more per object written and 3 us
more per decode (zlib: 20 us and 7 us).

Hostile input: :class:`~informers.wire.raw.RawObject` reads what the exact
parser reads and refuses what it refuses (see :mod:`informers.wire.raw`);
every object a read returns is the exact parser's decode of the stored bytes.

Costs beside the default store: a write of a dict encodes it to JSON; a read
of an object that is not hot decodes it (one exact parse: about 10 us for a
realistic pod, more while the hot set grows and the collector walks it);
``list()`` and resyncs decode every object that is not hot. Figures: the
Performance guide, "Decode on demand".

Thread-safety: :class:`RawStore` is as thread-safe as
:class:`~informers.cache.compact.store.CompactStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from informers.cache.compact._compressor import PresetCompressor
from informers.cache.compact.codecs import _json_dumps
from informers.cache.compact.lists import EncodedList
from informers.cache.compact.store import _MISSING, CompactStore
from informers.cache.keys import object_keys
from informers.errors import IndexFunctionError
from informers.wire import _json
from informers.wire.objects import Indexers, KeyFunc, meta_namespace_key
from informers.wire.raw import RawObject

if TYPE_CHECKING:
    from informers.cache.protocols import InformerStore, PreparedListStore

__all__ = ["RAW_HOT_OBJECTS", "RawCodec", "RawStore"]

#: How many decoded objects a :class:`RawStore` keeps by default: fewer than
#: :data:`~informers.cache.compact.store.DEFAULT_HOT_OBJECTS`, since a miss
#: costs one decode (about 10 us for a realistic pod) and every decoded
#: object kept costs about 17 KB and a walk by each full collection of the
#: cyclic collector (which is what made a cold read dearer with a larger
#: hot set: the Performance guide, "Decode on demand").
RAW_HOT_OBJECTS = 1000

#: Objects a relist indexes at a time (see :meth:`RawStore.replace`).
_PAGE = 500


class RawCodec:
    """The codec of a :class:`RawStore`: a
    :class:`~informers.wire.raw.RawObject` encodes to its own bytes, anything
    else to compact JSON (orjson when installed, as
    :class:`~informers.cache.compact.codecs.JSONCodec`); decoding is the exact
    parser's (:mod:`informers.wire._json`).

    :param compress: also compress the bytes, with zstd when the
        ``zstandard`` package (the ``fast`` extra) is installed, else zlib,
        against a preset dictionary made of
        :data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY` and
        the first object this codec encodes (fixed from then on, so equal
        JSON always gives equal stored bytes): about a tenth of a realistic
        pod's JSON, for about 5 us more per write and 3 us more per decode
        with zstd (20 us and 7 us with zlib).

    Thread-safe (see :mod:`informers.cache.compact._compressor`)."""

    def __init__(self, compress: bool = False) -> None:
        self.compress = compress
        self._compressor = PresetCompressor(learn=True) if compress else None
        backend = self._compressor.backend if self._compressor is not None else ""
        self.name = f"raw+{backend}" if compress else "raw"

    def encode(self, obj: Any) -> bytes:
        """The stored bytes of ``obj``: its JSON (a raw object's own,
        uncopied), compressed with ``compress``."""
        data = obj.data if type(obj) is RawObject else _json_dumps(obj)
        return self.pack(data) if self._compressor is not None else data

    def pack(self, data: bytes) -> bytes:
        """``data`` as stored (compressed with ``compress``)."""
        return data if self._compressor is None else self._compressor.pack(data)

    def unpack(self, blob: bytes) -> bytes:
        """The JSON bytes of a stored ``blob`` (decompressed with ``compress``)."""
        return blob if self._compressor is None else self._compressor.unpack(blob)

    def decode(self, data: bytes) -> Any:
        """The object parsed from stored bytes ``data``."""
        return _json.loads(self.unpack(data))

    def __repr__(self) -> str:
        return f"RawCodec(compress={self.compress})"


class RawStore(CompactStore):
    """A :class:`~informers.cache.compact.store.CompactStore` that keeps objects
    as plain JSON bytes and takes :class:`~informers.wire.raw.RawObject`
    writes without decoding them (see :mod:`informers.cache.compact.raw`).

    :param key_func: the key of an object (default
        :func:`~informers.meta_namespace_key`, which keys a raw object from
        its metadata record; a key function reading more decodes it).
    :param indexers: initial indexes (those reading only metadata run without
        a decode).
    :param on_index_error: as for :class:`~informers.cache.store.Indexer`.
    :param hot_objects: the hot LRU's bound, as for
        :class:`~informers.cache.compact.store.CompactStore` (default
        :data:`RAW_HOT_OBJECTS`).
    :param compress: keep the bytes compressed (see :class:`RawCodec`): about
        1 KB per realistic pod instead of 3.8 KB, for about 5 us per object
        written and 3 us per decode with zstd (the ``fast`` extra; 20 us and
        7 us with zlib).

    Contract: :class:`~informers.cache.compact.store.CompactStore`'s, with
    these differences: a :class:`~informers.wire.raw.RawObject` write is not
    made hot (it was never decoded), the first read decodes it; reads
    (``get``, ``list``, ``by_index``, ...) return dicts; what the informer
    hands its handlers -- ``upsert``'s and ``delete_key``'s replaced object,
    a relist's and a resync's objects -- is the hot object or a
    :class:`~informers.wire.raw.RawObject` of the stored bytes, a read-only
    mapping equal to the dict a read returns, decoded by whoever reads past
    its metadata.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key,
        indexers: Indexers | None = None,
        *,
        on_index_error: Callable[[IndexFunctionError], None] | None = None,
        hot_objects: int = RAW_HOT_OBJECTS,
        compress: bool = False,
    ) -> None:
        codec = RawCodec(compress)
        super().__init__(
            key_func, on_index_error=on_index_error, codec=codec, hot_objects=hot_objects
        )
        self._unpack = codec.unpack
        if indexers:
            self.add_indexers(indexers)

    def __repr__(self) -> str:
        return "<Raw" + super().__repr__()[len("<Compact") :]

    def add_raw(self, data: bytes) -> str:
        """Store the object whose JSON is ``data`` without decoding it (beyond
        its metadata); returns its key. :class:`ValueError` for bytes that are
        not JSON, :class:`~informers.ObjectKeyError` for an object without a
        key."""
        obj = RawObject(data)
        key = self.key_of(obj)
        self._write(key, obj, keep_old=False)
        return key

    def raw_by_key(self, key: str) -> bytes | None:
        """The JSON bytes stored under ``key`` (``None``: none), without a
        decode -- what a resync or an equality check compares."""
        with self._lock:
            blob = self._blobs.get(key)
        return None if blob is None else self._unpack(blob)

    def notification_by_key(self, key: str) -> Any | None:
        """The object under ``key`` as notifications carry it (``None``: none):
        the hot object, or a :class:`~informers.wire.raw.RawObject` of the
        stored bytes -- not decoded and not made hot. What a relist's
        tombstones carry (the delta queue asks for it)."""
        with self._lock:
            hot = self._hot.get(key, _MISSING)
            blob = self._blobs.get(key)
        if hot is not _MISSING:
            return hot
        return None if blob is None else self._notify(blob)

    def metadata_by_key(self, key: str) -> Any | None:
        """``metadata`` of the object under ``key``, as
        :attr:`RawObject.metadata <informers.wire.raw.RawObject.metadata>`
        answers it (its fields read in C, without building the object);
        ``None`` for an unknown key or an object without metadata."""
        data = self.raw_by_key(key)
        return None if data is None else RawObject(data).metadata

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Make ``objects`` the whole content, atomically, as
        :meth:`CompactStore.replace
        <informers.cache.compact.store.CompactStore.replace>` does (nothing
        changes if a key, index or codec call fails). Objects are taken in
        pages through this store's list buffer, and what each
        :class:`~informers.wire.raw.RawObject` decoded is dropped once its
        page is indexed (:meth:`~informers.wire.raw.RawObject.forget`), so a
        list's decoded forms never all live at once (they would fragment the
        heap the cache stays in)."""
        if isinstance(objects, EncodedList):
            super().replace(objects, resource_version)
            return
        objs = objects if isinstance(objects, list) else list(objects)
        buffer = self.new_list_buffer()
        assert buffer is not None
        for start in range(0, len(objs), _PAGE):
            page = objs[start : start + _PAGE]
            buffer.put_many(object_keys(page, self.key_of, self._plain_dicts), page)
            for obj in page:
                if type(obj) is RawObject:
                    obj.forget()
        self.replace_prepared(buffer.finish(), resource_version)

    def upsert(self, key: str, obj: Any) -> Any | None:
        """Store ``obj`` under ``key``; return the object it replaced (``None``
        for a new key): the hot object, or a
        :class:`~informers.wire.raw.RawObject` of the replaced bytes (not
        decoded here: on the informer's loop this is the old object of an
        update notification, decoded by the handler that reads it)."""
        old_hot, old_blob = self._write(key, obj, keep_old=True)
        if old_hot is not _MISSING:
            return old_hot
        return None if old_blob is None else self._notify(old_blob)

    def delete_key(self, key: str) -> Any | None:
        """Remove the object under ``key`` and return it (the hot object, or
        a :class:`~informers.wire.raw.RawObject` of its bytes); ``None`` for
        an unknown key."""
        found = self._remove(key)
        if found is None:
            return None
        hot, blob = found
        return hot if hot is not _MISSING else self._notify(blob)

    def _notify(self, blob: bytes) -> Any:
        # Stored bytes as a raw object (they were checked when they arrived).
        return RawObject(self._unpack(blob), checked=True, lazy=True)

    def _make_hot_locked(self, key: str, obj: Any) -> None:
        if type(obj) is RawObject:
            self._drop_hot_locked(key)  # the stored bytes are new: nothing decoded is current
            return
        super()._make_hot_locked(key, obj)


if TYPE_CHECKING:
    _protocol_check: InformerStore = RawStore()
    _capability_check: PreparedListStore = RawStore()
