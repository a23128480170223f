"""A hypothesis state machine for any :class:`~informers.IndexedStore`.

:class:`IndexedStoreStateMachine` drives a store with random adds, updates,
deletes, replaces, index registrations and reads, and checks it against a
model: a plain dict of objects plus indexes recomputed by brute force. After
every step every index of the store must equal the brute-force one. It also
checks the error contract: a key function or index function that fails leaves
the store unchanged, and unknown or duplicate index names are rejected.

It ships with the package (like ``zarr.testing.stateful``) so that any store
implementation can run the same test. Subclass it and override
:meth:`~IndexedStoreStateMachine.make_store`, or let
:func:`indexed_store_machine` do that for a factory::

    from informers.testing.stateful import indexed_store_machine

    TestMyStore = indexed_store_machine(MyStore).TestCase

This module needs hypothesis (the ``testing`` extra).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from informers.cache.protocols import IndexedStore
from informers.cache.store import Indexer
from informers.errors import (
    IndexConflictError,
    IndexFunctionError,
    ObjectKeyError,
    UnknownIndexError,
)
from informers.wire.objects import (
    NAMESPACE_INDEX,
    IndexFunc,
    KeyFunc,
    get_labels,
    meta_namespace_key,
    namespace_index,
)

__all__ = [
    "INDEX_FUNCTIONS",
    "POISON_LABEL",
    "IndexedStoreStateMachine",
    "StoreFactory",
    "indexed_store_machine",
]

#: Builds the store under test from a key function and index functions.
StoreFactory = Callable[[KeyFunc, dict[str, IndexFunc]], IndexedStore]

#: An object carrying this label makes the ``"tags"`` index function raise.
POISON_LABEL = "poison"


def app_index(obj: Any) -> list[str]:
    """Single-valued or empty: the ``app`` label."""
    app = get_labels(obj).get("app")
    return [app] if app else []


def tags_index(obj: Any) -> list[str]:
    """Multi-valued, may repeat a value: every ``tag-*`` label's value.
    Raises for an object labelled :data:`POISON_LABEL`."""
    labels = get_labels(obj)
    if POISON_LABEL in labels:
        raise ValueError("poisoned object")
    return [value for name, value in sorted(labels.items()) if name.startswith("tag-")]


def team_index(obj: Any) -> list[str]:
    """Always exactly one value (``"none"`` when unlabelled)."""
    return [get_labels(obj).get("team", "none")]


#: The index functions the machine registers (some at the start, the rest
#: later through ``add_indexers``).
INDEX_FUNCTIONS: Mapping[str, IndexFunc] = {
    NAMESPACE_INDEX: namespace_index,
    "app": app_index,
    "tags": tags_index,
    "team": team_index,
}

_NAMESPACES = ("", "a", "b")
_NAMES = ("x", "y", "z", "w")
_VALUES = ("red", "blue", "green")


def _label_sets() -> list[dict[str, str]]:
    """Every label combination the machine uses: no/single app, zero to
    three tags (with a repeated value), with and without a team."""
    out = []
    for app in (None, "web", "db"):
        for tags in ((), ("red",), ("red", "blue"), ("green", "green", "blue")):
            for team in (None, "blue"):
                labels = {f"tag-{i}": value for i, value in enumerate(tags)}
                if app:
                    labels["app"] = app
                if team:
                    labels["team"] = team
                out.append(labels)
    return out


# One draw per label set keeps examples cheap; objects share these dicts,
# which is fine because nothing mutates them.
_LABEL_SETS = _label_sets()


def _labels() -> st.SearchStrategy[dict[str, str]]:
    return st.sampled_from(_LABEL_SETS)


_names = st.sampled_from(_NAMES)
_namespaces = st.sampled_from(_NAMESPACES)
_index_names = st.sampled_from([*INDEX_FUNCTIONS, "missing"])
_index_values = st.sampled_from(("", "a", "b", "web", "db", "none", *_VALUES))


_E = TypeVar("_E", bound=BaseException)


def _expect(error: type[_E], call: Callable[..., object], *args: Any) -> _E:
    """Call and return the error it raised; fail if it raised nothing."""
    try:
        call(*args)
    except error as err:
        return err
    raise AssertionError(
        f"{getattr(call, '__name__', call)}{args!r} did not raise {error.__name__}"
    )


class IndexedStoreStateMachine(RuleBasedStateMachine):
    """Checks an :class:`~informers.IndexedStore` against a dict and
    brute-force indexes.

    Override :meth:`make_store` to test another implementation (the default
    builds an :class:`~informers.Indexer`). Class attributes tune the checks:
    ``check_errors`` (the error contract), ``check_identity`` (reads return
    the very objects that were stored, not copies), ``check_len``
    (``len(store)`` equals the number of objects) and ``tolerant_indexing``
    (the store is an :class:`~informers.Indexer` built with
    ``on_index_error``: an object an index function fails on is stored
    anyway, left out of that index, and the failure reported).
    """

    check_errors: ClassVar[bool] = True
    check_identity: ClassVar[bool] = False
    check_len: ClassVar[bool] = True
    tolerant_indexing: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.store: IndexedStore | None = None
        self.model: dict[str, Any] = {}
        self.indexers: dict[str, IndexFunc] = {}
        self.version = 0
        #: (index name, key) of every failure reported to ``on_index_error``.
        self.index_failures: list[tuple[str, str]] = []

    def make_store(self, key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> IndexedStore:
        """Build the store under test; override this."""
        if self.tolerant_indexing:
            return Indexer(key_func, indexers, on_index_error=self._index_failed)
        return Indexer(key_func, indexers)

    def _index_failed(self, error: IndexFunctionError) -> None:
        self.index_failures.append((error.index_name, error.key))

    # ----------------------------------------------------------- helpers

    @property
    def _store(self) -> IndexedStore:
        assert self.store is not None
        return self.store

    def _object(self, namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
        self.version += 1
        metadata: dict[str, Any] = {
            "name": name,
            "resourceVersion": str(self.version),
            "labels": labels,
        }
        if namespace:
            metadata["namespace"] = namespace
        return {"metadata": metadata, "spec": {"generation": self.version}}

    def _poisoned(self, obj: Any) -> bool:
        return POISON_LABEL in get_labels(obj)

    def _fails_indexing(self, objects: Iterable[Any]) -> bool:
        return "tags" in self.indexers and any(self._poisoned(o) for o in objects)

    def _brute_force_index(self, name: str) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        func = self.indexers[name]
        for key, obj in self.model.items():
            if self.tolerant_indexing and name == "tags" and self._poisoned(obj):
                continue  # stored, but in no value of the index that fails on it
            for value in func(obj):
                index.setdefault(value, set()).add(key)
        return index

    def _same_objects(self, got: list[Any], keys: Iterable[str]) -> None:
        expected = sorted(keys)
        got_keys = sorted(meta_namespace_key(o) for o in got)
        assert got_keys == expected, f"got keys {got_keys}, expected {expected}"
        for obj in got:
            model_obj = self.model[meta_namespace_key(obj)]
            if self.check_identity:
                assert obj is model_obj
            else:
                assert obj == model_obj

    # -------------------------------------------------------------- setup

    @initialize(names=st.sets(st.sampled_from(sorted(INDEX_FUNCTIONS))))
    def create_store(self, names: set[str]) -> None:
        self.indexers = {name: INDEX_FUNCTIONS[name] for name in sorted(names)}
        self.store = self.make_store(meta_namespace_key, dict(self.indexers))

    # -------------------------------------------------------------- writes

    @rule(namespace=_namespaces, name=_names, labels=_labels(), use_update=st.booleans())
    def add_or_update(
        self, namespace: str, name: str, labels: dict[str, str], use_update: bool
    ) -> None:
        obj = self._object(namespace, name, labels)
        (self._store.update if use_update else self._store.add)(obj)
        self.model[meta_namespace_key(obj)] = obj

    @precondition(lambda self: self.check_errors)
    @rule(namespace=_namespaces, name=_names, use_update=st.booleans())
    def add_poisoned(self, namespace: str, name: str, use_update: bool) -> None:
        obj = self._object(namespace, name, {POISON_LABEL: "yes", "app": "web"})
        write = self._store.update if use_update else self._store.add
        if self._fails_indexing([obj]) and self.tolerant_indexing:
            reported = len(self.index_failures)
            write(obj)
            self.model[meta_namespace_key(obj)] = obj
            assert self.index_failures[reported:] == [("tags", meta_namespace_key(obj))]
        elif self._fails_indexing([obj]):
            err = _expect(IndexFunctionError, write, obj)
            assert err.index_name == "tags"
            assert err.key == meta_namespace_key(obj)
        else:
            write(obj)
            self.model[meta_namespace_key(obj)] = obj

    @precondition(lambda self: self.check_errors)
    @rule(namespace=_namespaces, op=st.sampled_from(("add", "update", "delete", "get", "replace")))
    def write_nameless(self, namespace: str, op: str) -> None:
        obj: dict[str, Any] = {"metadata": {"namespace": namespace} if namespace else {}}
        store = self._store
        if op == "replace":
            _expect(ObjectKeyError, store.replace, [*self.model.values(), obj], "0")
        else:
            _expect(ObjectKeyError, getattr(store, op), obj)

    @rule(namespace=_namespaces, name=_names)
    def delete(self, namespace: str, name: str) -> None:
        # Deleting needs only the key: a bare object with the same name
        # stands for whatever version is stored (or for nothing at all).
        obj = self._object(namespace, name, {})
        self._store.delete(obj)
        self.model.pop(meta_namespace_key(obj), None)

    @rule(
        entries=st.lists(st.tuples(_namespaces, _names, _labels()), max_size=8),
        poison=st.booleans(),
    )
    def replace(self, entries: list[tuple[str, str, dict[str, str]]], poison: bool) -> None:
        objects = [self._object(ns, name, labels) for ns, name, labels in entries]
        if poison and objects and self.check_errors:
            objects[-1]["metadata"]["labels"] = {POISON_LABEL: "yes"}
        version = str(self.version)
        if self._fails_indexing(objects) and not self.tolerant_indexing:
            _expect(IndexFunctionError, self._store.replace, objects, version)
            return
        if self._fails_indexing(objects):
            reported = len(self.index_failures)
            self._store.replace(objects, version)
            self.model = {meta_namespace_key(o): o for o in objects}
            assert self.index_failures[reported:] == [("tags", meta_namespace_key(objects[-1]))]
            return
        self._store.replace(iter(objects), version)  # any iterable will do
        self.model = {meta_namespace_key(o): o for o in objects}

    @rule(name=st.sampled_from(sorted(INDEX_FUNCTIONS)))
    def add_indexer(self, name: str) -> None:
        new = {name: INDEX_FUNCTIONS[name]}
        if name in self.indexers:
            if self.check_errors:
                _expect(IndexConflictError, self._store.add_indexers, new)
        elif name == "tags" and any(self._poisoned(o) for o in self.model.values()):
            if self.check_errors:
                err = _expect(IndexFunctionError, self._store.add_indexers, new)
                assert err.index_name == "tags"
        else:
            self._store.add_indexers(new)
            self.indexers[name] = INDEX_FUNCTIONS[name]

    @rule()
    def resync(self) -> None:
        self._store.resync()

    # --------------------------------------------------------------- reads

    @rule(namespace=_namespaces, name=_names)
    def get(self, namespace: str, name: str) -> None:
        probe = self._object(namespace, name, {})
        key = meta_namespace_key(probe)
        expected = self.model.get(key)
        for got in (self._store.get(probe), self._store.get_by_key(key)):
            if self.check_identity:
                assert got is expected
            else:
                assert got == expected

    @rule(name=_index_names, value=_index_values)
    def by_index(self, name: str, value: str) -> None:
        store = self._store
        if name not in self.indexers:
            if self.check_errors:
                for read in (store.by_index, store.index_keys):
                    err = _expect(UnknownIndexError, read, name, value)
                    assert name in str(err)
            return
        keys = self._brute_force_index(name).get(value, set())
        self._same_objects(store.by_index(name, value), keys)
        assert sorted(store.index_keys(name, value)) == sorted(keys)

    @rule(name=_index_names, namespace=_namespaces, labels=_labels())
    def index(self, name: str, namespace: str, labels: dict[str, str]) -> None:
        probe = self._object(namespace, "probe", labels)
        store = self._store
        if name not in self.indexers:
            if self.check_errors:
                _expect(UnknownIndexError, store.index, name, probe)
            return
        brute = self._brute_force_index(name)
        keys: set[str] = set()
        for value in self.indexers[name](probe):
            keys |= brute.get(value, set())
        self._same_objects(store.index(name, probe), keys)

    @precondition(lambda self: self.check_errors)
    @rule()
    def list_unknown_index(self) -> None:
        _expect(UnknownIndexError, self._store.list_index_func_values, "missing")

    # ---------------------------------------------------------- invariants

    @invariant()
    def contents_match_model(self) -> None:
        if self.store is None:
            return
        keys = self.store.list_keys()
        assert len(keys) == len(set(keys)), f"duplicate keys {keys}"
        assert set(keys) == set(self.model), f"keys {sorted(keys)} != {sorted(self.model)}"
        self._same_objects(self.store.list(), self.model)
        if self.check_len:
            assert len(self.store) == len(self.model)  # type: ignore[arg-type]

    @invariant()
    def indexes_match_brute_force(self) -> None:
        if self.store is None:
            return
        store = self.store
        assert set(store.get_indexers()) == set(self.indexers)
        for name in self.indexers:
            brute = self._brute_force_index(name)
            values = store.list_index_func_values(name)
            assert len(values) == len(set(values)), f"duplicate values in {name!r}: {values}"
            assert set(values) == set(brute), (
                f"index {name!r} has values {sorted(values)}, expected {sorted(brute)}"
            )
            for value, keys in brute.items():
                got = store.index_keys(name, value)
                assert len(got) == len(set(got)), f"duplicate keys in {name!r}={value!r}"
                assert set(got) == keys, f"{name!r}={value!r}: {sorted(got)} != {sorted(keys)}"
                self._same_objects(store.by_index(name, value), keys)


def indexed_store_machine(factory: StoreFactory, **options: bool) -> type[IndexedStoreStateMachine]:
    """A subclass of :class:`IndexedStoreStateMachine` that tests the stores
    ``factory(key_func, indexers)`` builds. ``options`` override the class
    attributes (``check_errors``, ``check_identity``, ``check_len``). Run it
    with its ``TestCase`` attribute or
    :func:`hypothesis.stateful.run_state_machine_as_test`."""

    def make_store(
        self: IndexedStoreStateMachine, key_func: KeyFunc, indexers: dict[str, IndexFunc]
    ) -> IndexedStore:
        return factory(key_func, indexers)

    namespace: dict[str, Any] = {"make_store": make_store, **options}
    name = f"{getattr(factory, '__name__', 'Store')}StateMachine"
    return type(name, (IndexedStoreStateMachine,), namespace)
