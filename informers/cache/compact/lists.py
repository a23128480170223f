"""The list buffers of a :class:`~informers.cache.compact.store.CompactStore`
(see :mod:`informers.cache.listbuffer`): a list collected page by page in the
store's form (:class:`~informers.cache.compact.lists.EncodedList`), so that it
never exists decoded in full."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from informers.cache.index import IndexValues, compute_index_values
from informers.cache.keys import object_keys
from informers.cache.listbuffer import Deferred, PreparedList
from informers.errors import IndexFunctionError
from informers.wire.objects import IndexFunc, get_resource_version

if TYPE_CHECKING:
    from informers.cache.compact.store import CompactStore

__all__ = ["EncodedList"]


class _Unencodable:
    """A buffered object the codec could not encode: kept as it is, so that
    adopting the list raises :class:`~informers.ObjectEncodeError` as
    :meth:`~informers.cache.compact.store.CompactStore.replace_items` would, changing nothing."""

    __slots__ = ("error", "obj")

    def __init__(self, obj: Any, error: Exception) -> None:
        self.obj = obj
        self.error = error


class EncodedList(PreparedList):
    """A complete list kept as a
    :class:`~informers.cache.compact.store.CompactStore` keeps objects: the blobs
    and the index values computed when each item arrived (see
    :meth:`~informers.cache.compact.store.CompactStore.new_list_buffer`). Made
    only by the store's list buffer; adopted, not re-encoded, by
    :meth:`~informers.cache.compact.store.CompactStore.replace_prepared`. Items
    read from it are decoded on every read. Immutable."""

    __slots__ = ("_blobs", "_decode", "_keys", "_rvs", "errors", "names", "store", "values")

    def __init__(
        self,
        store: CompactStore,
        *,
        keys: tuple[str, ...],
        blobs: builtins.list[bytes | _Unencodable],
        values: builtins.list[tuple[IndexValues, ...]],
        rvs: builtins.list[str],
        names: tuple[str, ...],
        errors: builtins.list[IndexFunctionError],
    ) -> None:
        self.store = store
        self._keys = keys
        self._blobs = blobs
        #: Per item, its values in each index of ``names`` (same order).
        self.values = values
        self._rvs = rvs
        #: The indexes the values were computed for.
        self.names = names
        #: Index function failures met while buffering (reported on adoption).
        self.errors = errors
        self._decode = store._notify

    @property
    def keys(self) -> tuple[str, ...]:
        """The store key of every item, in list order."""
        return self._keys

    @property
    def blobs(self) -> builtins.list[bytes | _Unencodable]:
        """The encoded items (an unencodable one kept as it was)."""
        return self._blobs

    def decode(self, index: int) -> Any:
        """Item ``index``, decoded."""
        blob = self._blobs[index]
        return blob.obj if isinstance(blob, _Unencodable) else self._decode(blob)

    def deferred(self, index: int) -> Deferred:
        """Item ``index``, decoded on first use."""
        blob = self._blobs[index]
        if type(blob) is _Unencodable:
            return Deferred.ready(blob.obj)
        return Deferred(self._decode, blob)

    def resource_version(self, index: int) -> str:
        """Item ``index``'s resource version (kept when it arrived)."""
        return self._rvs[index]


class _CompactListBuffer:
    """A :class:`~informers.cache.listbuffer.ListBuffer` of a
    :class:`~informers.cache.compact.store.CompactStore`: each item is
    transformed, keyed, encoded and indexed as it is put, and only the blob, the
    index values and the resource version are kept. Used by one thread (the
    reflector's)."""

    def __init__(
        self,
        store: CompactStore,
        transform: Callable[[Any], Any] | None,
        indexers: Mapping[str, IndexFunc],
        plain_dicts: bool,
    ) -> None:
        self._store = store
        self._transform = transform
        self._indexers = indexers  # the store's, when the list began
        self._names = tuple(indexers)
        self._plain_dicts = plain_dicts  # see informers.cache.index.keys_plain_dicts
        self._encode = store.codec.encode
        # Parallel lists, in list order; a discarded item leaves None in _keys.
        self._positions: dict[str, int] = {}  # the reflector's key -> position
        self._keys: builtins.list[str | None] = []
        self._blobs: builtins.list[bytes | _Unencodable | None] = []
        self._values: builtins.list[tuple[IndexValues, ...]] = []
        self._rvs: builtins.list[str] = []
        self._discarded = 0
        self._errors: builtins.list[IndexFunctionError] = []
        # One shared tuple per single index value (as the store keeps them).
        self._singles: dict[str, IndexValues] = {}

    def __len__(self) -> int:
        return len(self._positions)

    def put(self, key: str, obj: Any) -> None:
        """Put one object under the reflector's ``key``."""
        self.put_many((key,), (obj,))

    def put_many(self, keys: Sequence[str], objects: Sequence[Any]) -> None:
        """Put ``objects[i]`` under ``keys[i]`` (the reflector's keys)."""
        transform = self._transform
        objs = [transform(obj) for obj in objects] if transform is not None else objects
        store_keys = object_keys(objs, self._store.key_of, self._plain_dicts)
        encode, indexers, names = self._encode, self._indexers, self._names
        singles, errors = self._singles, self._errors.append
        positions = self._positions
        for bkey, store_key, obj in zip(keys, store_keys, objs, strict=True):
            key = bkey if store_key == bkey else store_key  # one string for both
            blob: bytes | _Unencodable
            try:
                blob = encode(obj)
            except (TypeError, ValueError) as err:
                blob = _Unencodable(obj, err)
            computed = compute_index_values(indexers, key, obj, errors)
            values = []
            for name in names:
                value = computed[name]
                if len(value) == 1:
                    value = singles.setdefault(value[0], value)
                values.append(value)
            rv = get_resource_version(obj)
            pos = positions.get(bkey)
            if pos is None:
                positions[bkey] = len(self._keys)
                self._keys.append(key)
                self._blobs.append(blob)
                self._values.append(tuple(values))
                self._rvs.append(rv)
            else:
                self._keys[pos] = key
                self._blobs[pos] = blob
                self._values[pos] = tuple(values)
                self._rvs[pos] = rv

    def discard(self, key: str) -> None:
        """Forget the object under the reflector's ``key``."""
        pos = self._positions.pop(key, None)
        if pos is not None:
            self._keys[pos] = None
            self._blobs[pos] = None
            self._discarded += 1

    def finish(self) -> EncodedList:
        """The collected list; the buffer is empty afterwards."""
        keys, blobs, values, rvs = self._keys, self._blobs, self._values, self._rvs
        if self._discarded:
            kept = [i for i, key in enumerate(keys) if key is not None]
            keys = [keys[i] for i in kept]
            blobs = [blobs[i] for i in kept]
            values = [values[i] for i in kept]
            rvs = [rvs[i] for i in kept]
        prepared = EncodedList(
            self._store,
            keys=tuple(keys),  # type: ignore[arg-type]  # discarded ones (None) are gone
            blobs=blobs,  # type: ignore[arg-type]
            values=values,
            rvs=rvs,
            names=self._names,
            errors=self._errors,
        )
        self._positions, self._keys, self._blobs, self._values, self._rvs = {}, [], [], [], []
        self._discarded, self._errors, self._singles = 0, [], {}
        return prepared
