"""The index bookkeeping both stores share (client-go keeps it apart as
``storeIndex``): which keys each index value holds, which values each key is
indexed under, and how index and key functions are run and checked.

:class:`StoreIndex` holds the indexes of one store;
:class:`~informers.cache.store.ThreadSafeStore` (and so
:class:`~informers.cache.store.Indexer`) and
:class:`~informers.cache.compact.store.CompactStore` each own one and differ only
in how they keep the items. :func:`add_indexers` registers indexes in a
store that holds objects already; :func:`compute_index_values` and
:func:`checked_index_values` run index functions and turn their failures
into :class:`~informers.IndexFunctionError`. (How stores key objects is
:mod:`informers.cache.keys`.)

Thread-safety: a :class:`StoreIndex` is not thread-safe; its owner guards it
with its own lock, and every method expects that lock held unless its
documentation says otherwise. The functions here run user code (index
functions) in the caller's thread and take no lock, except
:func:`add_indexers`, which takes the owner's lock it is given for short
sections and runs index functions outside it.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from informers.errors import IndexConflictError, IndexFunctionError, UnknownIndexError
from informers.wire.objects import Indexers, IndexFunc

__all__ = [
    "NO_VALUES",
    "IndexValues",
    "StoreIndex",
    "add_indexers",
    "checked_index_values",
    "compute_index_values",
]

logger = logging.getLogger(__name__)

#: The values one object is indexed under in one index: distinct strings.
IndexValues: TypeAlias = tuple[str, ...]
#: value -> keys indexed under it. A dict used as an insertion-ordered set:
#: iterating it is as fast as iterating a set, and results come in a stable order.
_Index: TypeAlias = dict[str, dict[str, None]]

#: The values of an object indexed under none.
NO_VALUES: IndexValues = ()
_MISSING: Any = object()

#: add_indexers indexes existing objects outside the lock, then re-indexes the
#: objects that changed meanwhile; after this many rounds the last stragglers
#: are indexed while holding the lock (only ever reached under extreme churn).
_ADD_INDEXERS_ROUNDS = 5

# ------------------------------------------------------------------ user functions


class _IndexFuncFailedError(Exception):
    """Internal: an index function raised or returned a bad value; the caller
    turns it into an IndexFunctionError naming the index and the key."""


def _index_values(index_func: IndexFunc, obj: Any) -> IndexValues:
    """Run one index function and check its result: a list (or tuple) of
    strings, returned as a tuple without duplicates."""
    try:
        raw: Any = index_func(obj)
    except Exception as err:
        raise _IndexFuncFailedError(f"{type(err).__name__}: {err}") from err
    if type(raw) is list or type(raw) is tuple:
        if len(raw) == 1 and type(raw[0]) is str:
            return (raw[0],)
        if not raw:
            return NO_VALUES
        for value in raw:
            if type(value) is not str:
                raise _IndexFuncFailedError(
                    f"index function returned a {type(value).__name__} value; values must be str"
                )
        return tuple(dict.fromkeys(raw))
    raise _IndexFuncFailedError(
        f"index function returned a {type(raw).__name__}; it must return a list of str"
    )


def compute_index_values(
    indexers: Mapping[str, IndexFunc],
    key: str,
    obj: Any,
    on_error: Callable[[IndexFunctionError], None] | None = None,
) -> dict[str, IndexValues]:
    """The values of ``obj`` (stored under ``key``) in every index of
    ``indexers``, each a tuple of strings without duplicates. A failing index
    function (it raised, or returned something other than a list of str)
    raises :class:`~informers.IndexFunctionError`, or, given ``on_error``, is
    reported to it and the object gets no values in that index. Pure; runs
    the index functions in the caller's thread."""
    computed: dict[str, IndexValues] = {}
    for name, func in indexers.items():
        try:
            computed[name] = _index_values(func, obj)
        except _IndexFuncFailedError as err:
            error = IndexFunctionError(name, key, str(err))
            if on_error is None:
                raise error from err.__cause__
            error.__cause__ = err.__cause__
            on_error(error)
            computed[name] = NO_VALUES
    return computed


def checked_index_values(
    index_name: str, func: IndexFunc, obj: Any, describe: Callable[[Any], str]
) -> IndexValues:
    """``func(obj)``, checked as :func:`compute_index_values` checks it; a
    failure raises :class:`~informers.IndexFunctionError` naming
    ``index_name`` and ``describe(obj)`` (called only then)."""
    try:
        return _index_values(func, obj)
    except _IndexFuncFailedError as err:
        raise IndexFunctionError(index_name, describe(obj), str(err)) from err.__cause__


# ------------------------------------------------------------------ the indexes


class _Indices(dict[str, _Index]):
    """Index name -> its index; looking up a name that is not registered
    raises :class:`~informers.UnknownIndexError` (in C, no call on a hit)."""

    __slots__ = ()

    def __missing__(self, index_name: str) -> _Index:
        raise UnknownIndexError(index_name)


class StoreIndex:
    """The indexes of one store: for every index, value -> keys (what
    ``by_index`` reads) and key -> values (so an update diffs old against new
    without running the index function on the old object).

    Not thread-safe: the owning store guards it with its lock. Invariants:
    never an empty key set; ``key in indices[n][v]`` exactly when ``v in
    values[n][key]``; a key indexed under no value in an index is absent
    from ``values[n]``.

    With ``intern``, objects indexed under one value alone share one tuple
    per distinct value (``singles``), not one per object: less memory for a
    store whose objects are small (the compact store's blobs), for a few
    dict operations per write that changes values.
    """

    __slots__ = ("indexers", "indices", "intern", "singles", "values")

    def __init__(
        self, indexers: dict[str, IndexFunc] | None = None, *, intern: bool = False
    ) -> None:
        #: Whether single values are shared (never changes).
        self.intern = intern
        #: Index name -> function. Replaced (never mutated) when indexes are
        #: added (:meth:`merge`), so a reference read without the lock is a
        #: consistent snapshot; names are never removed, so a function once
        #: looked up stays valid. A store compares it by identity to tell
        #: whether indexes were added while it computed values.
        self.indexers: dict[str, IndexFunc] = {} if indexers is None else indexers
        #: Index name -> value -> keys (``indices[name]`` raises
        #: :class:`~informers.UnknownIndexError` for an unknown name).
        self.indices: dict[str, _Index] = _Indices({name: {} for name in self.indexers})
        #: Index name -> key -> the values the key is indexed under.
        self.values: dict[str, dict[str, IndexValues]] = {name: {} for name in self.indexers}
        #: With ``intern``: index name -> value -> the one-value tuple every
        #: key indexed under that value alone shares. Holds the values of
        #: ``indices[n]`` that some key holds alone (and possibly values no
        #: key holds alone any more, until the value leaves the index).
        self.singles: dict[str, dict[str, IndexValues]] = {name: {} for name in self.indexers}

    @classmethod
    def build(
        cls,
        indexers: dict[str, IndexFunc],
        keys: Sequence[str],
        columns: Mapping[str, Sequence[IndexValues]],
        *,
        intern: bool = False,
    ) -> StoreIndex:
        """A new index over distinct ``keys``: ``columns[name][i]`` is the
        values of ``keys[i]`` in index ``name`` (one column per index of
        ``indexers``, which the new index keeps as its ``indexers``)."""
        built = cls(indexers, intern=intern)
        for name in indexers:
            index = built.indices[name]
            by_key = built.values[name]
            shared = built.singles[name]
            for key, computed in zip(keys, columns[name], strict=True):
                if not computed:
                    continue
                vals = computed
                if len(vals) == 1:
                    value = vals[0]
                    if intern:
                        vals = shared.setdefault(value, vals)
                    present = index.get(value)
                    if present is None:
                        index[value] = {key: None}
                    else:
                        present[key] = None
                else:
                    for value in vals:
                        present = index.get(value)
                        if present is None:
                            index[value] = {key: None}
                        else:
                            present[key] = None
                by_key[key] = vals
        return built

    @classmethod
    def of_objects(
        cls,
        indexers: dict[str, IndexFunc],
        items: Mapping[str, Any],
        on_error: Callable[[IndexFunctionError], None] | None,
        *,
        intern: bool = False,
    ) -> StoreIndex:
        """A new index of ``items`` (key -> object), running every index
        function on every object (see :func:`compute_index_values` for
        ``on_error``). Needs no lock: it touches no store."""
        if not indexers:
            return cls(indexers, intern=intern)
        keys = builtins.list(items)
        computed = [compute_index_values(indexers, key, items[key], on_error) for key in keys]
        columns = {name: [c[name] for c in computed] for name in indexers}
        return cls.build(indexers, keys, columns, intern=intern)

    # ------------------------------------------------------------------ writes

    def update(self, key: str, computed: Mapping[str, IndexValues]) -> None:
        """Index ``key`` under ``computed`` (index name -> its values),
        touching only the values that changed; indexes not named keep it
        as they had it."""
        intern = self.intern
        for name, new in computed.items():
            values = self.values[name]
            old = values.get(key, NO_VALUES)
            if old == new:
                continue
            if not new:
                del values[key]
            elif intern and len(new) == 1:
                singles = self.singles[name]
                shared = singles.get(new[0])
                if shared is None:
                    singles[new[0]] = shared = new
                values[key] = shared
            else:
                values[key] = new
            self._reindex(name, key, old, new)

    def remove(self, key: str) -> None:
        """Drop ``key`` from every index (an unindexed key: nothing happens)."""
        for name, values in self.values.items():
            gone = values.pop(key, NO_VALUES)
            if gone:
                self._reindex(name, key, gone, NO_VALUES)

    def _reindex(self, name: str, key: str, old: IndexValues, new: IndexValues) -> None:
        """Move ``key`` from the values ``old`` to the values ``new`` in index
        ``name``, touching only the values that differ; a value left without
        keys is removed."""
        index = self.indices[name]
        if len(old) > 1 or len(new) > 1:
            old_set, new_set = frozenset(old), frozenset(new)
            old = tuple(v for v in old if v not in new_set)
            new = tuple(v for v in new if v not in old_set)
        for value in old:
            keys = index[value]
            del keys[key]
            if not keys:
                del index[value]
                if self.intern:
                    self.singles[name].pop(value, None)
        for value in new:
            present = index.get(value)
            if present is None:
                index[value] = {key: None}
            else:
                present[key] = None

    def check_conflict(self, new: Mapping[str, IndexFunc]) -> None:
        """Raise :class:`~informers.IndexConflictError` naming every name of
        ``new`` that is registered already."""
        conflicts = sorted(name for name in new if name in self.indexers)
        if conflicts:
            raise IndexConflictError(conflicts)

    def merge(self, other: StoreIndex) -> None:
        """Take in the indexes of ``other`` (built apart over this store's
        keys, with names this index does not have)."""
        self.indexers = {**self.indexers, **other.indexers}
        self.indices.update(other.indices)
        self.values.update(other.values)
        self.singles.update(other.singles)

    # ------------------------------------------------------------------- reads

    def keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """The keys indexed under ``indexed_value``, in a new list, in the
        order they entered it."""
        return builtins.list(self.indices[index_name].get(indexed_value, ()))

    def indexed_values(self, index_name: str) -> builtins.list[str]:
        """Every value at least one key is indexed under in ``index_name``."""
        return builtins.list(self.indices[index_name])

    def wanted(self, index_name: str, obj: Any, describe: Callable[[Any], str]) -> IndexValues:
        """The values of ``obj`` (stored or not) in ``index_name``, from its
        index function (see :func:`checked_index_values`). Reads only
        :attr:`indexers`, so it needs no lock: call it without, since it
        runs user code."""
        func = self.indexers.get(index_name)
        if func is None:
            raise UnknownIndexError(index_name)
        return checked_index_values(index_name, func, obj, describe)

    def matching(self, index_name: str, wanted: IndexValues) -> Iterable[str]:
        """The keys indexed under any of ``wanted`` in ``index_name`` (a
        registered index), each once, in the order of ``wanted`` and then of
        entry."""
        index = self.indices[index_name]
        if len(wanted) == 1:
            return index.get(wanted[0], ())
        keys: dict[str, None] = {}
        for value in wanted:
            keys.update(index.get(value, {}))
        return keys


def add_indexers(
    lock: threading.Lock,
    indexers: Indexers,
    current: Callable[[], tuple[StoreIndex, Mapping[str, Any]]],
    load: Callable[[Any], Any] | None = None,
) -> None:
    """Register ``indexers`` in a store and index the objects it holds.

    ``lock`` is the store's lock; ``current()``, called with it held, returns
    the store's index and its items (key -> the item as the store keeps it);
    ``load`` turns a kept item into the object the index functions take
    (default: the item itself). The objects are indexed outside the lock;
    items replaced meanwhile (by another object: compared by identity) are
    indexed again before the new indexes become visible, and after a few such
    rounds under constant writes the last stragglers are indexed holding the
    lock, so writers wait for them (the one place user code runs under a
    store's lock: index functions must never touch the store).

    Raises :class:`TypeError` for a name that is not a string or a function
    that is not callable, :class:`~informers.IndexConflictError` (naming
    them) if any of the names is registered already, and
    :class:`~informers.IndexFunctionError` if an index function fails on a
    stored object; in every case nothing is registered.
    """
    new = dict(indexers)
    for name, func in new.items():
        if not isinstance(name, str):
            raise TypeError(f"index names must be str, not {type(name).__name__}")
        if not callable(func):
            raise TypeError(f"index function for {name!r} is not callable")
    if not new:
        return
    with lock:
        index, items = current()
        index.check_conflict(new)
        pending = dict(items)
    building = StoreIndex(new, intern=index.intern)
    done: dict[str, Any] = {}

    def index_items(kept: Mapping[str, Any]) -> None:
        for key, item in kept.items():
            obj = item if load is None else load(item)
            building.update(key, compute_index_values(new, key, obj))
            done[key] = item

    rounds = 0
    while True:
        index_items(pending)
        rounds += 1
        with lock:
            index, items = current()
            index.check_conflict(new)
            for key in [k for k in done if k not in items]:
                building.remove(key)
                del done[key]
            pending = {k: item for k, item in items.items() if done.get(k, _MISSING) is not item}
            if pending and rounds >= _ADD_INDEXERS_ROUNDS:
                # Last resort against endless churn: index the few
                # stragglers while holding the lock.
                logger.debug("add_indexers: indexing %d objects under the lock", len(pending))
                index_items(pending)
                pending = {}
            if not pending:
                index.merge(building)
                return
