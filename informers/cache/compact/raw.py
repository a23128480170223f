"""Decode on demand: a store that keeps each object as the JSON bytes it
arrived in, reads only its metadata (in C, with :mod:`msgspec`), and decodes
the whole object when someone reads it.

* :class:`~informers.wire.raw.RawObject` (:mod:`informers.wire.raw`): an
  object as it came off the wire, its JSON bytes beside a metadata record
  decoded in C; the key and metadata helpers read it without a decode.
* :class:`RawStore`: a :class:`~informers.cache.compact.store.CompactStore`
  keeping plain JSON bytes. A :class:`~informers.wire.raw.RawObject` written to it is kept as its
  very bytes (no encode, no decode, not made hot); a dict is encoded to JSON
  as :class:`~informers.cache.compact.codecs.JSONCodec` does. Reads (``get``,
  ``list``, ``by_index``, listers) return dicts decoded by the exact parser
  (:mod:`informers.wire._json`) through the compact store's hot LRU, so every
  read answers what the default store would.

Index functions: one declared with :func:`metadata_index` (and
:func:`~informers.namespace_index`) reads only ``metadata`` and runs on the
metadata record of a :class:`~informers.wire.raw.RawObject` -- no decode. Any other index
function (one reading ``spec.nodeName``, say) gets the object fully decoded
at ingest, once per write whatever the number of such functions: the cost of
the default store's parse, paid only by stores that register one. A key
function other than :func:`~informers.meta_namespace_key` (and the default
key functions) likewise keys the decoded object.

Hostile input: :class:`~informers.wire.raw.RawObject` reads what the exact
parser reads and refuses what it refuses (see :mod:`informers.wire.raw`);
every object a read returns is the exact parser's decode of the stored bytes.

Costs beside the default store: a write of a dict encodes it to JSON; a read
of an object that is not hot decodes it (one exact parse, about 15-30 us for
a realistic pod); an undeclared index function decodes each raw write once;
``list()`` and resyncs decode every object that is not hot.

Thread-safety: :class:`RawStore` is as thread-safe as
:class:`~informers.cache.compact.store.CompactStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from informers.cache.compact.codecs import _json_dumps
from informers.cache.compact.lists import EncodedList
from informers.cache.compact.store import DEFAULT_HOT_OBJECTS, CompactStore
from informers.cache.keys import checked_key, object_keys
from informers.errors import IndexFunctionError
from informers.wire import _json
from informers.wire.objects import Indexers, IndexFunc, KeyFunc, meta_namespace_key, namespace_index
from informers.wire.raw import RawObject

if TYPE_CHECKING:
    from informers.cache.protocols import InformerStore, PreparedListStore

__all__ = ["RawCodec", "RawStore", "metadata_index"]


#: Objects a relist indexes at a time (see :meth:`RawStore.replace`).
_PAGE = 500


class RawCodec:
    """The codec of a :class:`RawStore`: a :class:`~informers.wire.raw.RawObject` encodes to its own
    bytes, anything else to compact JSON (orjson when installed, as
    :class:`~informers.cache.compact.codecs.JSONCodec`); decoding is the exact
    parser's (:mod:`informers.wire._json`). Thread-safe."""

    name = "raw"

    def encode(self, obj: Any) -> bytes:
        """The JSON bytes of ``obj`` (a :class:`~informers.wire.raw.RawObject`'s own, uncopied)."""
        if type(obj) is RawObject:
            return obj.data
        return _json_dumps(obj)

    def decode(self, data: bytes) -> Any:
        """The object parsed from ``data``."""
        return _json.loads(data)

    def __repr__(self) -> str:
        return "RawCodec()"


#: Index functions known to read only ``metadata`` (see :func:`metadata_index`).
_METADATA_ONLY: set[Callable[..., Any]] = {namespace_index}


def metadata_index(func: IndexFunc) -> IndexFunc:
    """Declare that ``func`` reads only an object's ``metadata`` (name,
    namespace, resourceVersion, uid, labels, annotations, ownerReferences),
    through the helpers of :mod:`informers.wire.objects` or attribute access
    (``obj.metadata.labels``), so that a :class:`RawStore` runs it on a
    :class:`~informers.wire.raw.RawObject`'s metadata record without decoding the object.
    Returns ``func``. A declared function that reads anything else sees it
    missing: declare only what is true."""
    _METADATA_ONLY.add(func)
    return func


class _OnDecoded:
    """An undeclared index function as a :class:`RawStore` runs it: a
    :class:`~informers.wire.raw.RawObject` is decoded (once) first."""

    __slots__ = ("func",)

    def __init__(self, func: IndexFunc) -> None:
        self.func = func

    def __call__(self, obj: Any) -> list[str]:
        if type(obj) is RawObject:
            obj = obj.decoded()
        return self.func(obj)


class RawStore(CompactStore):
    """A :class:`~informers.cache.compact.store.CompactStore` that keeps objects
    as plain JSON bytes and takes :class:`~informers.wire.raw.RawObject` writes without decoding
    them (see :mod:`informers.cache.compact.raw`).

    :param key_func: the key of an object (default
        :func:`~informers.meta_namespace_key`, which keys a :class:`~informers.wire.raw.RawObject`
        from its metadata record; another one keys its decode).
    :param indexers: initial indexes (see :func:`metadata_index` for which run
        without a decode).
    :param on_index_error: as for :class:`~informers.cache.store.Indexer`.
    :param hot_objects: the hot LRU's bound, as for
        :class:`~informers.cache.compact.store.CompactStore`.

    Contract: :class:`~informers.cache.compact.store.CompactStore`'s, with one
    addition: a :class:`~informers.wire.raw.RawObject` write is not made hot (it was never
    decoded); the first read decodes it. Reads return dicts, never a
    :class:`~informers.wire.raw.RawObject`. ``upsert`` and ``delete_key`` return the replaced
    object decoded.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key,
        indexers: Indexers | None = None,
        *,
        on_index_error: Callable[[IndexFunctionError], None] | None = None,
        hot_objects: int = DEFAULT_HOT_OBJECTS,
    ) -> None:
        super().__init__(
            key_func, on_index_error=on_index_error, codec=RawCodec(), hot_objects=hot_objects
        )
        if indexers:
            self.add_indexers(indexers)

    def __repr__(self) -> str:
        return "<Raw" + super().__repr__()[len("<Compact") :]

    def key_of(self, obj: Any) -> str:
        """The key of ``obj`` (a :class:`~informers.wire.raw.RawObject` is keyed from its metadata
        record by the default key functions, else from its decode)."""
        if type(obj) is RawObject and not self._plain_dicts:
            obj = obj.decoded()
        return checked_key(self._key_func, obj)

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
            return self._blobs.get(key)

    def metadata_by_key(self, key: str) -> Any | None:
        """The metadata record of the object under ``key`` (a :class:`~informers.wire.raw.RawMeta`,
        or the decoded metadata for input msgspec refuses), decoded in C
        without building the object; ``None`` for an unknown key."""
        data = self.raw_by_key(key)
        return None if data is None else RawObject(data).metadata

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Make ``objects`` the whole content, atomically, as
        :meth:`CompactStore.replace
        <informers.cache.compact.store.CompactStore.replace>` does (nothing
        changes if a key, index or codec call fails). Objects are taken in
        pages through this store's list buffer, and each
        :class:`~informers.wire.raw.RawObject`'s metadata record is dropped
        once its page is indexed, so a list's records never all live at
        once (they would fragment the heap the cache stays in)."""
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
                    obj.forget_metadata()
        self.replace_prepared(buffer.finish(), resource_version)

    def _make_hot_locked(self, key: str, obj: Any) -> None:
        if type(obj) is RawObject:
            self._drop_hot_locked(key)  # the stored bytes are new: nothing decoded is current
            return
        super()._make_hot_locked(key, obj)

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more indexes (see :meth:`CompactStore.add_indexers
        <informers.cache.compact.store.CompactStore.add_indexers>`); a
        function not declared with :func:`metadata_index` decodes each
        :class:`~informers.wire.raw.RawObject` it is given."""
        super().add_indexers(
            {
                name: func if func in _METADATA_ONLY else _OnDecoded(func)
                for name, func in indexers.items()
            }
        )

    def get_indexers(self) -> dict[str, IndexFunc]:
        """The registered index functions by name, as they were given."""
        return {
            name: func.func if isinstance(func, _OnDecoded) else func
            for name, func in super().get_indexers().items()
        }


if TYPE_CHECKING:
    _protocol_check: InformerStore = RawStore()
    _capability_check: PreparedListStore = RawStore()
