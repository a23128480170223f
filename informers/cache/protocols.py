"""The store protocols of the cache, and the optional capabilities a store
may offer.

What each part of the machinery needs from the store it writes or reads:

* :class:`Store`: a keyed collection of objects (what a
  :class:`~informers.cache.reflector.Reflector` may write to directly);
  :class:`IndexedStore` adds named indexes (what listers and trackers read).
* :class:`InformerStore`: the cache a
  :class:`~informers.SharedIndexInformer` writes, an :class:`IndexedStore`
  with the keyed layer the informer loop writes through;
  :class:`StoreFactory` builds one (:class:`~informers.cache.store.Indexer` and
  :class:`~informers.cache.compact.store.CompactStore` are both).
* :class:`ReflectorStore`: what a reflector writes to (the delta queue,
  :class:`~informers.cache.fifo.RealFIFO`, or any :class:`Store`).
* :class:`KeyListerGetter`: what the delta queue reads from the consumer's
  cache.

Optional capabilities, each a :func:`~typing.runtime_checkable` protocol that
a user of a store checks with :func:`isinstance` once, when it is built (never
per event):

* :class:`KeyFuncStore`: the store tells the key function it keys objects
  with (the informer then reuses the delta queue's keys when they agree);
* :class:`ListBufferSource`: the reflector's store hands out list buffers
  (:mod:`informers.cache.listbuffer`), so lists are collected in the cache's form;
* :class:`PreparedListStore`: the cache collects lists in its own form and
  adopts them as they are (the informer then has its lists collected so);
* :class:`DecodeOnDemandStore`: the cache keeps objects as their bytes
  (:class:`~informers.cache.compact.raw.RawStore`); the informer then lists
  and watches through a :class:`DecodeOnDemandSource`'s
  ``decoding_on_demand()`` view, when its lister-watcher offers one
  (:func:`decode_on_demand_source`).

An :func:`isinstance` check of a runtime-checkable protocol tells that the
members exist, not that their signatures match: the types do that (mypy).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from informers.cache.listbuffer import Deferred, ListBuffer
from informers.errors import IndexFunctionError
from informers.wire.objects import Indexers, IndexFunc, KeyFunc

__all__ = [
    "DecodeOnDemandSource",
    "DecodeOnDemandStore",
    "IndexedStore",
    "InformerStore",
    "KeyFuncStore",
    "KeyListerGetter",
    "ListBufferSource",
    "PreparedListStore",
    "ReflectorStore",
    "Store",
    "StoreFactory",
    "decode_on_demand_source",
]


@runtime_checkable
class Store(Protocol):
    """A keyed collection of objects, as the informer machinery writes and reads it.

    ``add`` and ``update`` store an object under its key (either works whether
    or not the key is present); ``delete`` removes the object with the key of
    the given object (an unknown key is not an error); ``replace`` swaps the
    whole content at once; ``resync`` is a hook for stores that need one.
    ``get`` and ``get_by_key`` return ``None`` for an unknown key.
    """

    def add(self, obj: Any) -> None:
        """Store ``obj`` under its key."""

    def update(self, obj: Any) -> None:
        """Store ``obj`` under its key (same as :meth:`add`)."""

    def delete(self, obj: Any) -> None:
        """Remove the object with the key of ``obj``, if any."""

    def list(self) -> builtins.list[Any]:
        """All objects, in a new list."""

    def list_keys(self) -> builtins.list[str]:
        """All keys, in a new list."""

    def get(self, obj: Any) -> Any | None:
        """The stored object with the key of ``obj``, or ``None``."""

    def get_by_key(self, key: str) -> Any | None:
        """The stored object with ``key``, or ``None``."""

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Make ``objects`` the whole content, atomically."""

    def resync(self) -> None:
        """Hook called on periodic resync; may do nothing."""


@runtime_checkable
class IndexedStore(Store, Protocol):
    """A :class:`Store` with named indexes.

    Every method taking an index name raises
    :class:`~informers.UnknownIndexError` for a name that is not registered.
    """

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """Objects sharing any indexed value with ``obj`` in the index."""

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """Objects indexed under ``indexed_value``, in a new list."""

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """Keys of the objects indexed under ``indexed_value``, in a new list."""

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value that at least one object is indexed under."""

    def get_indexers(self) -> dict[str, IndexFunc]:
        """The registered index functions by name, in a new dict."""

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more indexes; objects already stored get indexed."""


@runtime_checkable
class InformerStore(IndexedStore, Protocol):
    """The cache an informer writes: an :class:`IndexedStore` plus the keyed
    layer the informer loop writes through (one key computation and one lock
    per change), as :class:`~informers.cache.store.Indexer` and
    :class:`~informers.cache.compact.store.CompactStore` provide it. Every method
    is thread-safe; the contracts are
    :class:`~informers.cache.store.ThreadSafeStore`'s.
    """

    def __len__(self) -> int:
        """How many objects are stored."""

    def key_of(self, obj: Any) -> str:
        """The key of ``obj``; raises :class:`~informers.ObjectKeyError`."""

    def upsert(self, key: str, obj: Any) -> Any | None:
        """Store ``obj`` under ``key``; the object it replaced, or ``None``."""

    def delete_key(self, key: str) -> Any | None:
        """Remove and return the object under ``key`` (``None``: none)."""

    def get_many(self, keys: Iterable[str]) -> builtins.list[Any | None]:
        """The objects under ``keys`` (``None`` where absent), one snapshot."""

    def replace_items(self, items: dict[str, Any], resource_version: str = "") -> None:
        """Make ``items`` (key -> object, ownership passes) the whole content."""


class StoreFactory(Protocol):
    """Builds an informer's cache: called once, with keywords only, as
    ``factory(indexers=..., on_index_error=...)``. The
    :class:`~informers.cache.store.Indexer` class itself (the default) and
    :class:`~informers.cache.compact.store.CompactStore` are store factories, and
    so is a :func:`functools.partial` of either with more options."""

    def __call__(
        self, *, indexers: Indexers, on_index_error: Callable[[IndexFunctionError], None]
    ) -> InformerStore: ...


class ReflectorStore(Protocol):
    """What the reflector writes to (a :class:`~informers.cache.fifo.RealFIFO`, or
    any :class:`Store`).

    A store that is also a :class:`ListBufferSource` (as
    :class:`~informers.cache.fifo.RealFIFO` is) is asked for a buffer at the start
    of every list; the reflector collects the list in it (see
    :mod:`informers.cache.listbuffer`) and hands ``replace`` the buffer's
    :class:`~informers.cache.listbuffer.PreparedList` instead of the decoded
    objects. Otherwise (or when it returns ``None``) a list is collected as
    decoded objects in a dict.
    """

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, objects: Iterable[Any], resource_version: str) -> None: ...

    def resync(self) -> None: ...


class KeyListerGetter(Protocol):
    """What :class:`~informers.cache.fifo.RealFIFO` needs from the consumer's
    cache: its keys, and the object stored under a key (``None`` when
    absent)."""

    def list_keys(self) -> builtins.list[str]: ...

    def get_by_key(self, key: str) -> Any | None: ...


# ------------------------------------------------------------------ capabilities


@runtime_checkable
class KeyFuncStore(Protocol):
    """A store that tells the key function it keys objects with
    (:class:`~informers.cache.store.Indexer`,
    :class:`~informers.cache.compact.store.CompactStore`). The informer reuses the
    delta queue's keys for plain-dict objects when that function keys them
    as the queue's does."""

    @property
    def key_func(self) -> KeyFunc:
        """The key function (never changes)."""


@runtime_checkable
class ListBufferSource(Protocol):
    """A :class:`ReflectorStore` that hands out list buffers
    (:meth:`RealFIFO.new_list_buffer <informers.cache.fifo.RealFIFO.new_list_buffer>`):
    the reflector collects each list in a buffer from it."""

    def new_list_buffer(self) -> ListBuffer | None:
        """A buffer for the next list, or ``None`` (collect it decoded)."""


@runtime_checkable
class PreparedListStore(Protocol):
    """A cache that collects lists in its own form
    (:class:`~informers.cache.compact.store.CompactStore`): it makes list buffers
    that apply a transform to each item, and adopts the
    :class:`~informers.cache.listbuffer.PreparedList` they finish as its whole
    content. The informer gives such a store's ``new_list_buffer`` to its
    delta queue and applies prepared relists through ``replace_prepared``
    (see :mod:`informers.cache.listbuffer`)."""

    def new_list_buffer(self, transform: Callable[[Any], Any] | None = None) -> ListBuffer | None:
        """A buffer collecting a list in the store's form (``None``: none
        for this configuration)."""

    def replace_prepared(
        self, prepared: Any, resource_version: str = ""
    ) -> Callable[[str], Deferred | None]:
        """Adopt ``prepared`` (a :class:`~informers.cache.listbuffer.PreparedList`
        finished by one of this store's buffers) as
        the whole content, atomically; returns ``previous(key)``, what was
        stored under ``key`` before (decoded on first use) or ``None``."""


@runtime_checkable
class DecodeOnDemandStore(Protocol):
    """A cache that keeps objects as their JSON bytes and takes
    :class:`~informers.wire.raw.RawObject` writes as they are
    (:class:`~informers.cache.compact.raw.RawStore`)."""

    def raw_by_key(self, key: str) -> bytes | None:
        """The JSON bytes stored under ``key``, or ``None``."""


@runtime_checkable
class DecodeOnDemandSource(Protocol):
    """A lister-watcher that can list and watch without decoding objects
    (:meth:`HTTPListerWatcher.decoding_on_demand
    <informers.rest.listwatch.HTTPListerWatcher.decoding_on_demand>`)."""

    def decoding_on_demand(self) -> Any:
        """A lister-watcher whose objects are
        :class:`~informers.wire.raw.RawObject` (read as mappings)."""


def decode_on_demand_source(lister_watcher: Any, store: Any) -> Any:
    """``lister_watcher.decoding_on_demand()`` when ``store`` is a
    :class:`DecodeOnDemandStore` and ``lister_watcher`` a
    :class:`DecodeOnDemandSource`; otherwise ``lister_watcher`` itself.
    Called once, when an informer is built."""
    if isinstance(store, DecodeOnDemandStore) and isinstance(lister_watcher, DecodeOnDemandSource):
        return lister_watcher.decoding_on_demand()
    return lister_watcher
