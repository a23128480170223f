from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    IndexConflictError,
    IndexedStore,
    Indexer,
    IndexFunctionError,
    InformersError,
    ObjectKeyError,
    Store,
    UnknownIndexError,
    deletion_handling_meta_namespace_key,
    get_labels,
    namespace_index,
)


def pod(name: str, namespace: str = "default", rv: str = "1", **labels: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "resourceVersion": rv,
            "labels": dict(labels),
        },
    }


def app_index(obj: Any) -> list[str]:
    app = get_labels(obj).get("app")
    return [app] if app else []


def tags_index(obj: Any) -> list[str]:
    return [v for k, v in sorted(get_labels(obj).items()) if k.startswith("tag")]


def make_store() -> Indexer:
    return Indexer(indexers={NAMESPACE_INDEX: namespace_index, "app": app_index})


def keys_of(objects: list[Any]) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects)


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Make the interpreter switch threads far more often, so threads really
    interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


# ------------------------------------------------------------------ basics


def test_add_get_update_delete() -> None:
    store = make_store()
    a1 = pod("a")
    store.add(a1)
    assert store.get_by_key("default/a") is a1
    assert store.get(pod("a", rv="other")) is a1
    a2 = pod("a", rv="2")
    store.update(a2)
    assert store.get_by_key("default/a") is a2
    assert len(store) == 1
    store.delete(pod("a"))
    assert store.get_by_key("default/a") is None
    assert store.get(a1) is None
    assert len(store) == 0


def test_add_and_update_are_the_same_upsert() -> None:
    store = make_store()
    store.update(pod("a", rv="1"))
    store.add(pod("a", rv="2"))
    assert [o["metadata"]["resourceVersion"] for o in store.list()] == ["2"]


def test_delete_of_unknown_key_is_a_no_op() -> None:
    store = make_store()
    store.add(pod("a", app="web"))
    store.delete(pod("zzz"))
    assert store.list_keys() == ["default/a"]
    assert store.list_index_func_values("app") == ["web"]


def test_delete_with_tombstone_key_func() -> None:
    store = Indexer(deletion_handling_meta_namespace_key, {"app": app_index})
    store.add(pod("a", app="web"))
    store.delete(DeletedFinalStateUnknown("default/a", pod("a", app="web")))
    assert store.list() == []
    assert store.list_index_func_values("app") == []


def test_readers_get_lists_they_own() -> None:
    store = make_store()
    store.add(pod("a", app="web"))
    for read in (
        store.list,
        store.list_keys,
        lambda: store.by_index("app", "web"),
        lambda: store.index_keys("app", "web"),
        lambda: store.list_index_func_values("app"),
        lambda: store.index("app", pod("x", app="web")),
    ):
        first = read()
        assert first
        first.clear()
        assert read(), "clearing a returned list changed the store"


def test_get_indexers_returns_a_copy() -> None:
    store = make_store()
    indexers = store.get_indexers()
    assert set(indexers) == {NAMESPACE_INDEX, "app"}
    indexers["other"] = app_index
    assert set(store.get_indexers()) == {NAMESPACE_INDEX, "app"}


def test_is_a_store_and_an_indexed_store() -> None:
    store = Indexer()
    assert isinstance(store, Store)
    assert isinstance(store, IndexedStore)
    assert store.get_indexers() == {}


def test_repr_names_count_and_indexes() -> None:
    store = make_store()
    store.add(pod("a"))
    assert repr(store) == "<Indexer: 1 objects, indexes ['app', 'namespace']>"


def test_resync_changes_nothing() -> None:
    store = make_store()
    store.add(pod("a"))
    store.resync()
    assert store.list_keys() == ["default/a"]


# ----------------------------------------------------------------- indexes


def test_by_index_and_index_keys() -> None:
    store = make_store()
    for name, ns, app in [("a", "n1", "web"), ("b", "n1", "db"), ("c", "n2", "web")]:
        store.add(pod(name, ns, app=app))
    store.add(pod("d", "n2"))  # in no "app" value
    assert keys_of(store.by_index("app", "web")) == ["n1/a", "n2/c"]
    assert sorted(store.index_keys(NAMESPACE_INDEX, "n2")) == ["n2/c", "n2/d"]
    assert sorted(store.list_index_func_values("app")) == ["db", "web"]
    assert store.by_index("app", "nothing") == []
    assert store.index_keys("app", "nothing") == []


def test_by_index_keeps_insertion_order() -> None:
    store = make_store()
    names = [f"p{i}" for i in (5, 3, 9, 1, 7)]
    for name in names:
        store.add(pod(name, app="web"))
    assert [o["metadata"]["name"] for o in store.by_index("app", "web")] == names


@pytest.mark.parametrize(
    "read",
    [
        lambda s: s.by_index("nope", "x"),
        lambda s: s.index_keys("nope", "x"),
        lambda s: s.index("nope", pod("a")),
        lambda s: s.list_index_func_values("nope"),
    ],
)
def test_unknown_index_name_is_named(read: Any) -> None:
    with pytest.raises(UnknownIndexError, match="'nope'") as info:
        read(make_store())
    assert info.value.index_name == "nope"
    assert isinstance(info.value, LookupError)


def test_multi_value_index_function() -> None:
    store = Indexer(indexers={"tags": tags_index})
    store.add(pod("a", tag1="red", tag2="blue"))
    store.add(pod("b", tag1="blue"))
    store.add(pod("c", tag1="green", tag2="green"))  # a value repeated
    store.add(pod("d"))  # no values at all
    assert keys_of(store.by_index("tags", "blue")) == ["default/a", "default/b"]
    assert store.index_keys("tags", "green") == ["default/c"]
    assert sorted(store.list_index_func_values("tags")) == ["blue", "green", "red"]
    # index(): every object sharing any value with the probe, each once.
    probe = pod("probe", tag1="red", tag2="blue", tag3="green")
    assert keys_of(store.index("tags", probe)) == ["default/a", "default/b", "default/c"]
    assert keys_of(store.index("tags", pod("p", tag1="blue"))) == ["default/a", "default/b"]
    assert store.index("tags", pod("p")) == []


def test_update_reindexes_and_empty_values_disappear() -> None:
    store = Indexer(indexers={"tags": tags_index})
    store.add(pod("a", tag1="red", tag2="blue"))
    store.update(pod("a", tag1="blue", tag2="green"))
    assert sorted(store.list_index_func_values("tags")) == ["blue", "green"]
    assert store.by_index("tags", "red") == []
    store.update(pod("a"))
    assert store.list_index_func_values("tags") == []
    store.delete(pod("a"))
    assert store.list() == []


def test_update_computes_only_the_new_object() -> None:
    seen: list[str] = []

    def counting(obj: Any) -> list[str]:
        seen.append(obj["metadata"]["resourceVersion"])
        return app_index(obj)

    store = Indexer(indexers={"app": counting})
    store.add(pod("a", rv="1", app="web"))
    store.update(pod("a", rv="2", app="db"))
    store.delete(pod("a", rv="3"))
    assert seen == ["1", "2"], "the old object must not be re-indexed, delete indexes nothing"


def test_update_leaves_unchanged_values_untouched() -> None:
    store = Indexer(indexers={"tags": tags_index})
    store.add(pod("a", tag1="red", tag2="blue"))
    store.add(pod("b", tag1="red"))
    before = store.index_keys("tags", "red")
    store.update(pod("a", tag1="red", tag2="green"))
    # "a" keeps its place under "red": the value was not removed and re-added.
    assert store.index_keys("tags", "red") == before == ["default/a", "default/b"]


def test_no_growth_under_churn() -> None:
    store = Indexer(indexers={"rv": lambda o: [o["metadata"]["resourceVersion"]]})
    for i in range(1000):
        store.update(pod("a", rv=str(i)))
    assert store.list_index_func_values("rv") == ["999"]
    assert sum(len(store.list_index_func_values(name)) for name in store.get_indexers()) == 1


# -------------------------------------------------------------- add_indexers


def test_add_indexers_indexes_existing_objects() -> None:
    store = Indexer()
    store.add(pod("a", app="web"))
    store.add(pod("b", "other", app="db"))
    store.add_indexers({"app": app_index, NAMESPACE_INDEX: namespace_index})
    assert keys_of(store.by_index("app", "web")) == ["default/a"]
    assert keys_of(store.by_index(NAMESPACE_INDEX, "other")) == ["other/b"]
    store.add(pod("c", app="web"))
    assert keys_of(store.by_index("app", "web")) == ["default/a", "default/c"]


def test_add_existing_index_name_is_a_conflict_and_changes_nothing() -> None:
    store = make_store()
    store.add(pod("a", app="web"))
    with pytest.raises(IndexConflictError, match="'app'") as info:
        store.add_indexers({"tags": tags_index, "app": app_index})
    assert info.value.index_names == ("app",)
    assert set(store.get_indexers()) == {NAMESPACE_INDEX, "app"}
    with pytest.raises(UnknownIndexError):
        store.by_index("tags", "x")


def test_add_indexers_rejects_bad_arguments() -> None:
    store = make_store()
    with pytest.raises(TypeError):
        store.add_indexers({"x": "not callable"})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        store.add_indexers({1: app_index})  # type: ignore[dict-item]
    store.add_indexers({})
    assert set(store.get_indexers()) == {NAMESPACE_INDEX, "app"}


def test_add_indexers_failing_function_registers_nothing() -> None:
    store = make_store()
    store.add(pod("a"))
    store.add(pod("b", app="web"))

    def fragile(obj: Any) -> list[str]:
        return [get_labels(obj)["app"]]

    with pytest.raises(IndexFunctionError, match=r"'fragile'.*'default/a'") as info:
        store.add_indexers({"fine": app_index, "fragile": fragile})
    assert isinstance(info.value.__cause__, KeyError)
    assert set(store.get_indexers()) == {NAMESPACE_INDEX, "app"}


def test_add_indexers_reindexes_objects_written_meanwhile() -> None:
    store = make_store()
    store.add(pod("a", tag1="old"))
    store.add(pod("b", tag1="old"))
    written = False

    def writing_tags(obj: Any) -> list[str]:
        # Index functions run outside the lock, so the store can change
        # while add_indexers is busy indexing: simulate a concurrent writer.
        nonlocal written
        if not written:
            written = True
            store.update(pod("a", tag1="new"))
            store.delete(pod("b"))
            store.add(pod("c", tag1="old"))
        return tags_index(obj)

    store.add_indexers({"tags": writing_tags})
    assert store.index_keys("tags", "new") == ["default/a"]
    assert store.index_keys("tags", "old") == ["default/c"]
    assert sorted(store.list_index_func_values("tags")) == ["new", "old"]


def test_write_racing_add_indexers_is_indexed_by_the_new_index() -> None:
    store = Indexer()
    calls = 0

    def adds_an_index(obj: Any) -> list[str]:
        nonlocal calls
        calls += 1
        if calls == 1:  # while add() is computing, another thread adds an index
            store.add_indexers({"app": app_index})
        return ["x"]

    store.add_indexers({"first": adds_an_index})
    store.add(pod("a", app="web"))
    assert store.index_keys("app", "web") == ["default/a"]
    assert store.index_keys("first", "x") == ["default/a"]


def test_unindexed_write_racing_add_indexers_is_indexed_by_the_new_index() -> None:
    # A store without indexes writes without computing any; an index added
    # between its look at the (empty) indexes and its lock must still see
    # the object.
    store = Indexer()
    store.add(pod("before", app="web"))

    class RacingIndexers(dict[str, Any]):
        raced = False

        def __len__(self) -> int:
            if not RacingIndexers.raced:  # the write has looked; now the race
                RacingIndexers.raced = True
                store.add_indexers({"app": app_index})
            return super().__len__()

    store._index.indexers = RacingIndexers()
    assert store.upsert("default/a", pod("a", app="web")) is None
    assert RacingIndexers.raced
    assert sorted(store.index_keys("app", "web")) == ["default/a", "default/before"]
    replaced = store.upsert("default/a", pod("a", app="db"))
    assert replaced is not None
    assert replaced["metadata"]["labels"] == {"app": "web"}
    assert store.index_keys("app", "db") == ["default/a"]


def test_add_indexers_last_resort_round_indexes_under_the_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("informers.cache.index._ADD_INDEXERS_ROUNDS", 1)
    store = make_store()
    store.add(pod("a", tag1="old"))
    written = False

    def writing_tags(obj: Any) -> list[str]:
        nonlocal written
        if not written:
            written = True
            store.update(pod("a", tag1="new"))
        return tags_index(obj)

    store.add_indexers({"tags": writing_tags})
    assert store.list_index_func_values("tags") == ["new"]


@pytest.mark.usefixtures("fast_thread_switching")
def test_add_indexers_while_a_writer_churns() -> None:
    size = 2000
    store = make_store()
    store.replace([pod(f"p{i}", tag1=str(i % 3)) for i in range(size)], "1")
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            i = n % size
            if n % 7 == 0:
                store.delete(pod(f"p{i}"))
            else:
                store.update(pod(f"p{i}", rv=str(n), tag1=str(n % 5), tier=str(n % 2)))

    writer = threading.Thread(target=churn, name="churn-writer")
    writer.start()
    try:
        store.add_indexers({"tags": tags_index})
        store.add_indexers({"tier": lambda o: [get_labels(o).get("tier", "none")]})
    finally:
        stop.set()
        writer.join(10)
    for name in ("tags", "tier", "app"):
        func = store.get_indexers()[name]
        expected: dict[str, set[str]] = {}
        for obj in store.list():
            for value in func(obj):
                expected.setdefault(value, set()).add(keys_of([obj])[0])
        assert {v: set(store.index_keys(name, v)) for v in expected} == expected
        assert sorted(store.list_index_func_values(name)) == sorted(expected)


# -------------------------------------------------------------------- errors


def test_failing_index_function_names_index_and_key_and_changes_nothing() -> None:
    def picky(obj: Any) -> list[str]:
        if get_labels(obj).get("bad"):
            raise RuntimeError("boom")
        return ["ok"]

    store = Indexer(indexers={"app": app_index, "picky": picky})
    good = pod("a", app="web")
    store.add(good)
    with pytest.raises(IndexFunctionError, match=r"'picky'.*'default/a'.*boom") as info:
        store.update(pod("a", app="db", bad="yes"))
    err = info.value
    assert (err.index_name, err.key) == ("picky", "default/a")
    assert isinstance(err.__cause__, RuntimeError)
    assert isinstance(err, InformersError)
    assert store.get_by_key("default/a") is good
    assert store.list_index_func_values("app") == ["web"]
    with pytest.raises(IndexFunctionError):
        store.add(pod("b", bad="yes"))
    assert store.list_keys() == ["default/a"]


@pytest.mark.parametrize(
    ("result", "message"),
    [("web", "returned a str"), ([1], "returned a int value"), (None, "returned a NoneType")],
)
def test_index_function_must_return_a_list_of_str(result: Any, message: str) -> None:
    store = Indexer(indexers={"bad": lambda obj: result})
    with pytest.raises(IndexFunctionError, match=message):
        store.add(pod("a"))
    assert store.list() == []


def test_tuple_results_and_duplicates_are_accepted() -> None:
    # outside IndexFunc's declared list[str], accepted at run time
    store = Indexer(indexers={"t": lambda obj: ("x", "x", "y")})  # type: ignore[dict-item,return-value]
    store.add(pod("a"))
    assert store.index_keys("t", "x") == ["default/a"]
    assert store.list_index_func_values("t") == ["x", "y"]


def test_index_with_failing_function_names_the_probe() -> None:
    store = Indexer(indexers={"boom": lambda obj: 1 / 0})  # type: ignore[dict-item,return-value]
    with pytest.raises(IndexFunctionError, match="'default/p'") as info:
        store.index("boom", pod("p"))
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    with pytest.raises(IndexFunctionError, match="<no key>"):
        store.index("boom", {"metadata": {}})


def test_key_function_failure_is_an_object_key_error_and_changes_nothing() -> None:
    store = make_store()
    store.add(pod("a"))
    with pytest.raises(ObjectKeyError, match=r"no metadata\.name"):
        store.add({"metadata": {"namespace": "x"}})

    def broken(obj: Any) -> str:
        return str(obj["id"])

    custom = Indexer(broken)
    with pytest.raises(ObjectKeyError, match="KeyError") as info:
        custom.add({"no": "id"})
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(ObjectKeyError, match="returned a int"):
        Indexer(lambda obj: 5).add({})  # type: ignore[arg-type,return-value]
    assert store.list_keys() == ["default/a"]
    assert custom.list() == []


# ------------------------------------------------------------------- replace


def test_replace_swaps_everything() -> None:
    store = make_store()
    store.add(pod("old", app="web"))
    store.replace([pod("a", app="db"), pod("b", "n2")], "10")
    assert sorted(store.list_keys()) == ["default/a", "n2/b"]
    assert store.list_index_func_values("app") == ["db"]
    assert sorted(store.list_index_func_values(NAMESPACE_INDEX)) == ["default", "n2"]
    store.replace([], "11")
    assert store.list() == []
    assert store.list_index_func_values(NAMESPACE_INDEX) == []


def test_replace_takes_any_iterable_and_later_duplicates_win() -> None:
    store = make_store()

    def objects() -> Iterator[dict[str, Any]]:
        yield pod("a", rv="1", app="web")
        yield pod("a", rv="2", app="db")

    store.replace(objects(), "5")
    assert [o["metadata"]["resourceVersion"] for o in store.list()] == ["2"]
    assert store.list_index_func_values("app") == ["db"]


def test_replace_is_all_or_nothing() -> None:
    store = Indexer(indexers={"strict": lambda obj: [get_labels(obj)["app"]]})
    store.add(pod("keep", app="web"))
    with pytest.raises(IndexFunctionError, match="'default/bad'"):
        store.replace([pod("a", app="x"), pod("bad"), pod("c", app="y")], "9")
    with pytest.raises(ObjectKeyError):
        store.replace([pod("a", app="x"), {"metadata": {}}], "9")
    assert store.list_keys() == ["default/keep"]
    assert store.list_index_func_values("strict") == ["web"]


# --------------------------------------------------------------- concurrency


@pytest.mark.usefixtures("fast_thread_switching")
def test_concurrent_readers_see_consistent_snapshots() -> None:
    """A writer replaces the whole content (every object carrying the same
    epoch) and then moves objects between groups; readers must only ever see
    one epoch at a time, the full object count, and index results that agree
    with the objects they return."""
    size, groups, epochs, moves = 40, 4, 40, 60

    def obj(i: int, epoch: int, group: int) -> dict[str, Any]:
        return pod(f"p{i}", "ns", rv=str(epoch), group=str(group), epoch=str(epoch))

    store = Indexer(
        indexers={
            "group": lambda o: [get_labels(o)["group"]],
            "epoch": lambda o: [get_labels(o)["epoch"]],
        }
    )
    store.replace([obj(i, 0, i % groups) for i in range(size)], "0")
    done = threading.Event()
    errors: list[BaseException] = []
    reads = [0]

    def check_one_epoch(objects: list[Any]) -> None:
        epochs_seen = {get_labels(o)["epoch"] for o in objects}
        assert len(epochs_seen) <= 1, f"mixed epochs {epochs_seen}"

    def reader() -> None:
        try:
            while not done.is_set():
                everything = store.list()
                assert len(everything) == size
                check_one_epoch(everything)
                for g in range(groups):
                    members = store.by_index("group", str(g))
                    assert all(get_labels(o)["group"] == str(g) for o in members)
                    check_one_epoch(members)
                    keys = store.index_keys("group", str(g))
                    assert len(keys) == len(set(keys))
                    members.clear()  # ours to mutate
                epoch = get_labels(everything[0])["epoch"]
                in_epoch = store.by_index("epoch", epoch)
                assert len(in_epoch) in (0, size)  # a replace is never half-visible
                reads[0] += 1
        except BaseException as err:  # noqa: BLE001 (handed to the test thread)
            errors.append(err)
            done.set()

    threads = [threading.Thread(target=reader, name=f"reader-{n}") for n in range(3)]
    for thread in threads:
        thread.start()
    try:
        for epoch in range(1, epochs + 1):
            store.replace([obj(i, epoch, (i + epoch) % groups) for i in range(size)], str(epoch))
            for m in range(moves):
                i = (m * 7 + epoch) % size
                store.update(obj(i, epoch, (m + i) % groups))
            if done.is_set():
                break
    finally:
        done.set()
        for thread in threads:
            thread.join(10)
    assert not errors, errors[0]
    assert reads[0] > 0
    assert len(store) == size


# --------------------------------------------------------------- on_index_error


def _app_index(obj: Any) -> list[str]:
    return [obj["metadata"]["labels"]["app"]]  # KeyError for an object without the label


def test_on_index_error_stores_the_object_outside_the_failing_index() -> None:
    failures: list[IndexFunctionError] = []
    store = Indexer(indexers={"app": _app_index}, on_index_error=failures.append)
    good = {"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web"}}}
    bad = {"metadata": {"name": "b", "namespace": "ns"}}
    store.replace([good, bad], "1")
    assert store.list_keys() == ["ns/a", "ns/b"]
    assert store.by_index("app", "web") == [good]
    assert [(f.index_name, f.key) for f in failures] == [("app", "ns/b")]
    assert isinstance(failures[0].__cause__, KeyError)
    # An update that fixes the object indexes it; one that breaks it again
    # takes it out of the index (never left under a stale value).
    fixed = {"metadata": {"name": "b", "namespace": "ns", "labels": {"app": "db"}}}
    store.update(fixed)
    assert store.by_index("app", "db") == [fixed]
    store.add(bad)
    assert store.by_index("app", "db") == []
    assert store.get_by_key("ns/b") is bad
    assert len(failures) == 2


def test_without_on_index_error_a_failing_write_changes_nothing() -> None:
    store = Indexer(indexers={"app": _app_index})
    good = {"metadata": {"name": "a", "labels": {"app": "web"}}}
    store.add(good)
    with pytest.raises(IndexFunctionError, match=r"'app'.*'b'"):
        store.replace([good, {"metadata": {"name": "b"}}], "2")
    with pytest.raises(IndexFunctionError):
        store.add({"metadata": {"name": "a"}})
    assert store.list() == [good]
    assert store.by_index("app", "web") == [good]


def test_add_indexers_still_raises_with_on_index_error() -> None:
    failures: list[IndexFunctionError] = []
    store = Indexer(on_index_error=failures.append)
    store.add({"metadata": {"name": "b"}})
    with pytest.raises(IndexFunctionError):
        store.add_indexers({"app": _app_index})
    assert store.get_indexers() == {}
    assert failures == []


# ------------------------------------------------------ the keyed layer


def test_thread_safe_store_upsert_returns_what_it_replaced() -> None:
    from informers import ThreadSafeStore

    store = ThreadSafeStore({"app": app_index})
    first, second = pod("a", rv="1", app="web"), pod("a", rv="2", app="db")
    assert store.upsert("default/a", first) is None
    assert store.upsert("default/a", second) is first
    assert store.get_by_key("default/a") is second
    assert store.index_keys("app", "db") == ["default/a"]
    assert store.index_keys("app", "web") == []
    assert len(store) == 1
    assert repr(store) == "<ThreadSafeStore: 1 objects, indexes ['app']>"


def test_thread_safe_store_delete_key_returns_the_removed_object() -> None:
    from informers import ThreadSafeStore

    store = ThreadSafeStore({"app": app_index})
    obj = pod("a", app="web")
    store.upsert("k", obj)
    assert store.delete_key("nope") is None
    assert store.delete_key("k") is obj
    assert store.delete_key("k") is None
    assert store.list_index_func_values("app") == []
    assert store.list() == []


def test_thread_safe_store_get_many_reads_one_snapshot() -> None:
    from informers import ThreadSafeStore

    store = ThreadSafeStore()
    a, b = pod("a"), pod("b")
    store.replace_items({"a": a, "b": b}, "5")
    assert store.get_many(["b", "missing", "a", "b"]) == [b, None, a, b]
    assert store.get_many(iter([])) == []


def test_thread_safe_store_replace_items_swaps_items_and_indexes() -> None:
    from informers import ThreadSafeStore

    def app_or_fail(obj: Any) -> list[str]:
        if "fail" in get_labels(obj):
            raise ValueError("cannot index")
        return app_index(obj)

    store = ThreadSafeStore({"app": app_or_fail})
    store.upsert("old", pod("old", app="web"))
    new = pod("new", app="db")
    store.replace_items({"new": new})
    assert store.list_keys() == ["new"]
    assert store.by_index("app", "db") == [new]
    assert store.list_index_func_values("app") == ["db"]
    with pytest.raises(IndexFunctionError, match="'bad'"):
        store.replace_items({"ok": pod("ok"), "bad": pod("bad", fail="yes")})
    assert store.list_keys() == ["new"]  # all or nothing


def test_indexer_is_the_keyed_store_with_a_key_function() -> None:
    from informers import ThreadSafeStore

    store = make_store()
    assert isinstance(store, ThreadSafeStore)
    obj = pod("a", "ns", app="web")
    key = store.key_of(obj)
    assert key == "ns/a"
    assert store.upsert(key, obj) is None
    assert store.get(obj) is obj
    assert store.by_index("app", "web") == [obj]
    store.delete(obj)
    assert store.get_many([key]) == [None]


def test_key_of_wraps_what_the_key_function_raises() -> None:
    def broken(obj: Any) -> str:
        raise RuntimeError("no key here")

    with pytest.raises(ObjectKeyError, match="RuntimeError: no key here") as info:
        Indexer(key_func=broken).key_of(pod("a"))
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(ObjectKeyError, match="returned a int"):
        Indexer(key_func=lambda obj: 7).key_of(pod("a"))  # type: ignore[arg-type,return-value]
    with pytest.raises(ObjectKeyError, match=r"metadata\.name"):
        Indexer().key_of({"metadata": {}})


def test_default_key_of_wraps_what_meta_namespace_key_raises() -> None:
    # What the default key function raises besides ObjectKeyError (here an
    # object whose metadata cannot be read) is wrapped and chained.
    class Haunted:
        @property
        def metadata(self) -> Any:
            raise RuntimeError("no metadata here")

    with pytest.raises(ObjectKeyError, match="RuntimeError: no metadata here") as info:
        Indexer().key_of(Haunted())
    assert isinstance(info.value.__cause__, RuntimeError)
    assert Indexer().key_of(pod("a", namespace="ns")) == "ns/a"
