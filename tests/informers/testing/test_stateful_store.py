"""Runs the shipped IndexedStore state machine against the Indexer, against a
naive reference store written here (showing how users plug in their own), and
checks that it catches a store with a classic indexing bug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

import informers.testing
from informers.cache.store import Indexer, ThreadSafeStore
from informers.errors import IndexConflictError, IndexFunctionError, UnknownIndexError
from informers.testing.stateful import IndexedStoreStateMachine, indexed_store_machine
from informers.wire.objects import Indexers, IndexFunc, KeyFunc

ROOT = Path(__file__).resolve().parents[3]


class IndexerMachine(IndexedStoreStateMachine):
    check_identity = True  # the Indexer never copies objects


TestIndexer = IndexerMachine.TestCase


class NaiveStore:
    """Recomputes every index on each read: slow and obviously right."""

    def __init__(self, key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> None:
        self.key_func = key_func
        self.indexers = dict(indexers)
        self.items: dict[str, Any] = {}

    def _check(self, objects: list[Any]) -> None:
        for obj in objects:
            for name, func in self.indexers.items():
                try:
                    func(obj)
                except Exception as err:
                    raise IndexFunctionError(name, self.key_func(obj), str(err)) from err

    def add(self, obj: Any) -> None:
        key = self.key_func(obj)
        self._check([obj])
        self.items[key] = obj

    update = add

    def delete(self, obj: Any) -> None:
        self.items.pop(self.key_func(obj), None)

    def list(self) -> list[Any]:
        return list(self.items.values())

    def list_keys(self) -> list[str]:
        return list(self.items)

    def get(self, obj: Any) -> Any | None:
        return self.items.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Any | None:
        return self.items.get(key)

    def replace(self, objects: Any, resource_version: str) -> None:
        new = {self.key_func(o): o for o in objects}
        self._check(list(new.values()))
        self.items = new

    def resync(self) -> None:
        pass

    def _func(self, name: str) -> IndexFunc:
        if name not in self.indexers:
            raise UnknownIndexError(name)
        return self.indexers[name]

    def index_keys(self, name: str, value: str) -> list[str]:
        func = self._func(name)
        return [k for k, o in self.items.items() if value in func(o)]

    def by_index(self, name: str, value: str) -> list[Any]:
        return [self.items[k] for k in self.index_keys(name, value)]

    def index(self, name: str, obj: Any) -> list[Any]:
        wanted = set(self._func(name)(obj))
        return [o for o in self.items.values() if wanted & set(self.indexers[name](o))]

    def list_index_func_values(self, name: str) -> list[str]:
        func = self._func(name)
        return list({v for o in self.items.values() for v in func(o)})

    def get_indexers(self) -> dict[str, IndexFunc]:
        return dict(self.indexers)

    def add_indexers(self, indexers: Indexers) -> None:
        if set(indexers) & set(self.indexers):
            raise IndexConflictError(sorted(set(indexers) & set(self.indexers)))
        for name, func in indexers.items():
            for key, obj in self.items.items():
                try:
                    func(obj)
                except Exception as err:
                    raise IndexFunctionError(name, key, str(err)) from err
        self.indexers.update(indexers)


TestNaiveStore = indexed_store_machine(NaiveStore, check_len=False).TestCase
# A demonstration of plugging in another store, not a test of this project's
# code: a lighter run keeps the suite fast.
TestNaiveStore.settings = settings(max_examples=50, deadline=None)


class LeakyValuesIndexer(Indexer):
    """A bug the machine must catch: index values whose last key left are kept."""

    def list_index_func_values(self, index_name: str) -> list[str]:
        values = super().list_index_func_values(index_name)
        self._seen = getattr(self, "_seen", {})
        seen = self._seen.setdefault(index_name, {})
        seen.update(dict.fromkeys(values))
        return list(seen)


def test_machine_catches_leaked_index_values() -> None:
    machine = indexed_store_machine(LeakyValuesIndexer)
    # No shrinking: finding the bug is what this test is about.
    quick = settings(max_examples=500, database=None, phases=[Phase.generate], print_blob=False)
    with pytest.raises((AssertionError, Flaky)):
        run_state_machine_as_test(machine, settings=quick)


def test_machine_is_exported_lazily() -> None:
    assert informers.testing.IndexedStoreStateMachine is IndexedStoreStateMachine
    assert informers.testing.indexed_store_machine is indexed_store_machine
    with pytest.raises(AttributeError):
        _ = informers.testing.no_such_name  # type: ignore[attr-defined]


def test_informers_testing_imports_without_hypothesis() -> None:
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import informers, informers.testing\n"
        "try:\n"
        "    informers.testing.IndexedStoreStateMachine\n"
        "except ImportError:\n"
        "    print('lazy')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "lazy"


class TolerantIndexerMachine(IndexedStoreStateMachine):
    """The informer's kind of store: index failures are reported, not raised."""

    check_identity = True
    tolerant_indexing = True


TestTolerantIndexer = TolerantIndexerMachine.TestCase


class KeyedStore:
    """An IndexedStore written against the keyed layer only (the caller
    computes every key), so the machine checks :class:`ThreadSafeStore`'s
    upsert, delete_key, get_many and replace_items."""

    def __init__(self, key_func: KeyFunc, indexers: dict[str, IndexFunc]) -> None:
        self.key_func = key_func
        self.store = ThreadSafeStore(indexers)
        self.replaced: list[Any] = []

    def add(self, obj: Any) -> None:
        key = self.key_func(obj)
        old = self.store.get_by_key(key)
        assert self.store.upsert(key, obj) is old

    update = add

    def delete(self, obj: Any) -> None:
        key = self.key_func(obj)
        old = self.store.get_by_key(key)
        assert self.store.delete_key(key) is old

    def get(self, obj: Any) -> Any | None:
        (got,) = self.store.get_many([self.key_func(obj)])
        return got

    def get_by_key(self, key: str) -> Any | None:
        return self.store.get_by_key(key)

    def replace(self, objects: Any, resource_version: str) -> None:
        items = {self.key_func(obj): obj for obj in objects}
        self.store.replace_items(items, resource_version)

    def resync(self) -> None:
        pass

    def __len__(self) -> int:
        return len(self.store)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)  # the reads and add_indexers


TestThreadSafeStore = indexed_store_machine(KeyedStore, check_identity=True).TestCase  # type: ignore[arg-type]
