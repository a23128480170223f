from __future__ import annotations

import contextlib
import dataclasses
import queue
import random
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.cache import fifo as fifo_module
from informers.cache.fifo import Delta, DeltaType, RealFIFO, Relist
from informers.errors import FIFOClosedError, ObjectKeyError
from informers.wire.objects import DeletedFinalStateUnknown

WAIT = 10.0


def pod(name: str, version: int = 1, namespace: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": str(version)},
        "v": version,
    }


class DictCache:
    """A consumer cache that is also the FIFO's ``known_objects``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: dict[str, Any] = {}

    def list_keys(self) -> list[str]:
        with self.lock:
            return list(self.items)

    def get_by_key(self, key: str) -> Any | None:
        with self.lock:
            return self.items.get(key)

    def apply(self, deltas: list[Delta], _initial: bool = False) -> None:
        with self.lock:
            for delta in deltas:
                obj = delta.object
                if delta.type is DeltaType.BOOKMARK:
                    continue
                if delta.type is DeltaType.DELETED:
                    key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else _key(obj)
                    self.items.pop(key, None)
                else:
                    self.items[_key(obj)] = obj


def _key(obj: Any) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


def pop_now(fifo: RealFIFO, process: Any = None) -> list[Delta]:
    assert len(fifo) > 0, "pop_now would block"
    return fifo.pop(process or (lambda _d, _i: None))


def types(deltas: list[Delta]) -> list[DeltaType]:
    return [d.type for d in deltas]


def test_deltas_come_out_in_order_one_per_entry() -> None:
    fifo = RealFIFO()
    a1, a2, b1 = pod("a", 1), pod("a", 2), pod("b", 1)
    fifo.add(a1)
    fifo.update(a2)
    fifo.add(b1)
    fifo.delete(a2)
    assert len(fifo) == 4
    out = [pop_now(fifo) for _ in range(4)]
    assert out == [
        [Delta(DeltaType.ADDED, a1)],
        [Delta(DeltaType.UPDATED, a2)],
        [Delta(DeltaType.ADDED, b1)],
        [Delta(DeltaType.DELETED, a2)],
    ]
    assert len(fifo) == 0


def test_delta_type_values_match_client_go() -> None:
    assert [t.value for t in DeltaType] == [
        "Added",
        "Updated",
        "Deleted",
        "Replaced",
        "Sync",
        "Bookmark",
    ]


def test_replace_is_one_entry_with_tombstones_for_cached_keys() -> None:
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    old_a, old_gone = pod("a", 1), pod("gone", 1)
    cache.items = {"ns/a": old_a, "ns/gone": old_gone}
    new_a, new_c = pod("a", 5), pod("c", 5)
    fifo.replace([new_a, new_c], "10")
    assert len(fifo) == 1
    deltas = pop_now(fifo, cache.apply)
    assert deltas == [
        Delta(DeltaType.REPLACED, new_a),
        Delta(DeltaType.REPLACED, new_c),
        Delta(DeltaType.DELETED, DeletedFinalStateUnknown("ns/gone", old_gone)),
        Delta(DeltaType.BOOKMARK, "10"),
    ]
    assert cache.items == {"ns/a": new_a, "ns/c": new_c}
    assert fifo.last_resource_version() == "10"


def test_replace_tombstones_keys_only_pending_in_the_queue() -> None:
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    x1, y1, z1 = pod("x", 1), pod("y", 1), pod("z", 1)
    fifo.add(x1)  # pending only: never reached the cache
    fifo.add(y1)
    fifo.delete(y1)  # pending, but its last delta is a deletion: no tombstone
    fifo.add(z1)  # pending and listed again: no tombstone
    z2 = pod("z", 2)
    fifo.replace([z2], "7")
    for _ in range(4):
        pop_now(fifo, cache.apply)
    relist = pop_now(fifo, cache.apply)
    assert relist == [
        Delta(DeltaType.REPLACED, z2),
        Delta(DeltaType.DELETED, DeletedFinalStateUnknown("ns/x", x1)),
        Delta(DeltaType.BOOKMARK, "7"),
    ]
    assert cache.items == {"ns/z": z2}


def test_replace_tombstone_carries_object_of_last_pending_delta() -> None:
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    cache.items = {"ns/a": pod("a", 1)}
    fifo.update(pod("a", 2))
    fifo.replace([], "3")
    pop_now(fifo, cache.apply)
    assert pop_now(fifo, cache.apply) == [
        Delta(DeltaType.DELETED, DeletedFinalStateUnknown("ns/a", pod("a", 2))),
        Delta(DeltaType.BOOKMARK, "3"),
    ]
    assert cache.items == {}


def test_replace_counts_an_entry_being_processed_as_pending() -> None:
    """A relist queued while the consumer is still inside ``process`` for an
    add (not yet in the cache) must still tombstone that key."""
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    fifo.add(pod("a", 1))
    inside, release = threading.Event(), threading.Event()

    def slow_apply(deltas: list[Delta], initial: bool) -> None:
        inside.set()
        assert release.wait(WAIT)
        cache.apply(deltas, initial)

    consumer = threading.Thread(target=fifo.pop, args=(slow_apply,), name="test-consumer")
    consumer.start()
    try:
        assert inside.wait(WAIT)
        fifo.replace([], "2")
    finally:
        release.set()
        consumer.join(WAIT)
    assert pop_now(fifo, cache.apply) == [
        Delta(DeltaType.DELETED, DeletedFinalStateUnknown("ns/a", pod("a", 1))),
        Delta(DeltaType.BOOKMARK, "2"),
    ]
    assert cache.items == {}


def test_replace_reads_the_cache_once_and_orders_a_racing_add_after_it() -> None:
    """An add handed in while replace reads ``known_objects`` is concurrent
    with the replace: it is queued after the relist (so it survives it), and
    the relist is computed once, from one snapshot, however many such adds
    there are (it used to start over after each: no bound under churn)."""
    fifo: RealFIFO

    class RacingCache(DictCache):
        reads = 0

        def list_keys(self) -> list[str]:
            self.reads += 1
            if self.reads < 50:  # bounded, so the old code ends (and fails)
                fifo.add(pod(f"late{self.reads}", 1))
            return super().list_keys()

    cache = RacingCache()
    fifo = RealFIFO(known_objects=cache)
    fifo.replace([pod("a")], "5")
    assert cache.reads == 1
    assert pop_now(fifo, cache.apply) == [
        Delta(DeltaType.REPLACED, pod("a")),
        Delta(DeltaType.BOOKMARK, "5"),
    ]
    assert types(pop_now(fifo, cache.apply)) == [DeltaType.ADDED]
    assert cache.items == {"ns/a": pod("a"), "ns/late1": pod("late1", 1)}


def test_replace_with_key_error_queues_nothing() -> None:
    fifo = RealFIFO()
    with pytest.raises(ObjectKeyError):
        fifo.replace([pod("a"), {"metadata": {}}], "1")
    assert len(fifo) == 0
    assert not fifo.has_synced()


def test_replace_without_known_objects_uses_queue_only() -> None:
    fifo = RealFIFO()
    fifo.add(pod("a"))
    fifo.replace([pod("b")], "1")
    pop_now(fifo)
    assert types(pop_now(fifo)) == [DeltaType.REPLACED, DeltaType.DELETED, DeltaType.BOOKMARK]


def test_empty_relist_is_a_lone_bookmark() -> None:
    fifo = RealFIFO(known_objects=DictCache())
    fifo.replace([], "4")
    assert pop_now(fifo) == [Delta(DeltaType.BOOKMARK, "4")]
    assert fifo.has_synced()
    assert fifo.last_resource_version() == "4"


def test_has_synced_after_first_replace_is_processed() -> None:
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    fifo.bookmark("1")  # bookmarks do not populate
    assert not fifo.has_synced()
    fifo.replace([pod("a")], "2")
    fifo.add(pod("b"))
    assert not fifo.has_synced()
    seen: list[bool] = []

    def record(deltas: list[Delta], initial: bool) -> None:
        seen.append(initial)
        cache.apply(deltas)

    pop_now(fifo, record)  # bookmark: queued before the first relist -> initial
    assert not fifo.has_synced()
    pop_now(fifo, record)  # the relist
    assert fifo.has_synced()
    pop_now(fifo, record)
    assert seen == [True, True, False]
    fifo.replace([], "3")  # later relists do not reset it
    assert fifo.has_synced()


def test_has_synced_is_immediate_when_add_comes_first() -> None:
    fifo = RealFIFO()
    fifo.add(pod("a"))
    assert fifo.has_synced()
    initial: list[bool] = []
    fifo.pop(lambda _d, i: initial.append(i))
    assert initial == [False]


def test_has_synced_waits_for_process_to_return() -> None:
    fifo = RealFIFO(known_objects=DictCache())
    fifo.replace([pod("a")], "1")
    observed: list[bool] = []
    fifo.pop(lambda _d, _i: observed.append(fifo.has_synced()))
    assert observed == [False]
    assert fifo.has_synced()


def test_process_error_propagates_and_entry_is_not_requeued() -> None:
    fifo = RealFIFO(known_objects=DictCache())
    fifo.replace([pod("a")], "5")
    fifo.add(pod("b"))

    def boom(_deltas: list[Delta], _initial: bool) -> None:
        raise ValueError("handler failed")

    with pytest.raises(ValueError, match="handler failed") as info:
        fifo.pop(boom)
    assert any("not requeued" in note for note in info.value.__notes__)
    assert len(fifo) == 1  # the relist is gone, the add is next
    assert fifo.has_synced()  # the failed entry still counts as consumed
    assert fifo.last_resource_version() == ""  # ...but not as applied
    assert types(pop_now(fifo)) == [DeltaType.ADDED]


def test_close_wakes_a_blocked_pop_in_another_thread() -> None:
    fifo = RealFIFO()
    errors: list[BaseException] = []
    waiting = threading.Event()

    def consumer() -> None:
        waiting.set()
        try:
            fifo.pop(lambda _d, _i: None)
        except FIFOClosedError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=consumer, name=f"test-pop-{i}") for i in range(3)]
    for t in threads:
        t.start()
    assert waiting.wait(WAIT)
    fifo.close()
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive()
    assert len(errors) == 3
    assert fifo.is_closed()


def test_closed_queue_drains_before_raising() -> None:
    fifo = RealFIFO()
    fifo.add(pod("a"))
    fifo.close()
    assert types(fifo.pop(lambda _d, _i: None)) == [DeltaType.ADDED]
    with pytest.raises(FIFOClosedError):
        fifo.pop(lambda _d, _i: None)


def test_pop_blocks_until_an_item_arrives() -> None:
    fifo = RealFIFO()
    got: list[list[Delta]] = []
    consumer = threading.Thread(
        target=lambda: got.append(fifo.pop(lambda _d, _i: None)), name="test-pop"
    )
    consumer.start()
    fifo.add(pod("a"))
    consumer.join(WAIT)
    assert not consumer.is_alive()
    assert types(got[0]) == [DeltaType.ADDED]


def test_a_burst_of_adds_wakes_every_blocked_consumer() -> None:
    # Producers notify only while a consumer waits: a burst must still wake
    # each of several blocked consumers (no lost wake-up).
    fifo = RealFIFO()
    got: list[str] = []
    got_lock = threading.Lock()

    def consume() -> None:
        deltas = fifo.pop(lambda _d, _i: None)
        with got_lock:
            got.append(deltas[0].object["metadata"]["name"])

    threads = [threading.Thread(target=consume, name=f"test-pop-{i}") for i in range(4)]
    for t in threads:
        t.start()
    for name in "abcd":
        fifo.add(pod(name))
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive()
    assert sorted(got) == ["a", "b", "c", "d"]
    assert len(fifo) == 0


def test_pop_batch_processes_in_order_and_stops_when_empty() -> None:
    fifo = RealFIFO()
    for name in "abc":
        fifo.add(pod(name))
    seen: list[str] = []
    process = lambda deltas, _i: seen.append(deltas[0].object["metadata"]["name"])  # noqa: E731
    assert fifo.pop_batch(process, 2) == 2
    assert seen == ["a", "b"]
    assert len(fifo) == 1
    assert fifo.pop_batch(process, 64) == 1
    assert seen == ["a", "b", "c"]
    fifo.close()
    with pytest.raises(FIFOClosedError):
        fifo.pop_batch(process)


def test_pop_batch_rejects_a_non_positive_maximum() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        RealFIFO().pop_batch(lambda _d, _i: None, 0)


def test_resync_skips_keys_with_pending_entries() -> None:
    cache = DictCache()
    a, b = pod("a", 1), pod("b", 1)
    cache.items = {"ns/a": a, "ns/b": b}
    fifo = RealFIFO(known_objects=cache)
    fifo.update(pod("a", 2))
    fifo.resync()
    assert len(fifo) == 2
    pop_now(fifo, cache.apply)
    assert pop_now(fifo, cache.apply) == [Delta(DeltaType.SYNC, b)]


def test_resync_is_one_pass_however_many_events_arrive_during_it() -> None:
    """Events handed in while resync reads the cache do not make it start
    over: it reads the cache once, under the queue's lock (it used to
    rescan after every event that arrived meanwhile, without bound: a
    resync never finished under steady churn)."""
    fifo: RealFIFO

    class ChurningCache(DictCache):
        reads = 0

        def list_keys(self) -> list[str]:
            self.reads += 1
            if self.reads < 50:  # bounded, so the old code ends (and fails)
                fifo.update(pod("a", 100 + self.reads))
            return super().list_keys()

    cache = ChurningCache()
    cache.items = {"ns/a": pod("a", 1), "ns/b": pod("b", 1)}
    fifo = RealFIFO(known_objects=cache)
    fifo.resync()
    assert cache.reads == 1
    # The update handed in during the pass is concurrent with it: queued
    # after the syncs, so a's sync (its cached state) is never replayed stale
    # after it.
    assert [pop_now(fifo, cache.apply)[0].type for _ in range(len(fifo))] == [
        DeltaType.SYNC,
        DeltaType.SYNC,
        DeltaType.UPDATED,
    ]
    assert cache.items["ns/a"] == pod("a", 101)


def test_resync_without_known_objects_is_a_no_op() -> None:
    fifo = RealFIFO()
    fifo.resync()
    assert len(fifo) == 0


def test_transform_runs_once_at_ingest_and_never_on_tombstones() -> None:
    calls: list[str] = []

    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        calls.append(obj["metadata"]["name"])
        return {**obj, "stripped": True}

    cache = DictCache()
    cache.items = {"ns/old": {**pod("old"), "stripped": True}}
    fifo = RealFIFO(known_objects=cache, transform=strip)
    fifo.add(pod("a"))
    fifo.delete(DeletedFinalStateUnknown("ns/z", pod("z")))
    fifo.replace([pod("b")], "1")
    fifo.resync()
    assert calls == ["a", "b"]
    out = [pop_now(fifo, cache.apply) for _ in range(len(fifo))]
    assert out[0][0].object["stripped"]
    assert out[1][0].object == DeletedFinalStateUnknown("ns/z", pod("z"))
    assert out[2][0].object["stripped"]
    assert calls == ["a", "b"]


def test_transform_error_propagates_and_queues_nothing() -> None:
    def bad(_obj: Any) -> Any:
        raise RuntimeError("nope")

    fifo = RealFIFO(transform=bad)
    with pytest.raises(RuntimeError, match="nope"):
        fifo.replace([pod("a")], "1")
    assert len(fifo) == 0


def test_bookmark_advances_last_resource_version_when_popped() -> None:
    fifo = RealFIFO()
    fifo.bookmark("42")
    assert fifo.last_resource_version() == ""
    assert pop_now(fifo) == [Delta(DeltaType.BOOKMARK, "42")]
    assert fifo.last_resource_version() == "42"


def test_concurrent_producer_and_consumer_end_in_the_producers_view() -> None:
    """A producer churning adds, deletes and relists against a consumer that
    applies entries as they come: once drained, the cache equals the truth."""
    rng = random.Random(7)
    cache = DictCache()
    fifo = RealFIFO(known_objects=cache)
    truth: dict[str, Any] = {}
    failures: list[BaseException] = []

    def consume() -> None:
        while True:
            try:
                fifo.pop(cache.apply)
            except FIFOClosedError:
                return
            except AssertionError as exc:  # pragma: no cover - reported below
                failures.append(exc)
                return

    consumer = threading.Thread(target=consume, name="test-consumer")
    consumer.start()
    try:
        for step in range(2000):
            name = f"p{rng.randrange(20)}"
            roll = rng.random()
            if roll < 0.5:
                obj = pod(name, step)
                (fifo.update if f"ns/{name}" in truth else fifo.add)(obj)
                truth[f"ns/{name}"] = obj
            elif roll < 0.8:
                if f"ns/{name}" in truth:
                    fifo.delete(truth.pop(f"ns/{name}"))
            elif roll < 0.95:
                listed = {k: v for k, v in truth.items() if rng.random() < 0.7}
                truth = listed
                fifo.replace(list(listed.values()), str(step))
            else:
                fifo.resync()
    finally:
        fifo.close()
        consumer.join(WAIT)
    assert not consumer.is_alive()
    assert not failures
    assert cache.items == truth


def test_works_with_the_indexer_as_known_objects() -> None:
    """The informer's pattern: singles applied one by one, a relist applied
    with one atomic ``Indexer.replace``."""
    from informers.cache.store import Indexer
    from informers.wire.objects import deletion_handling_meta_namespace_key

    indexer = Indexer(key_func=deletion_handling_meta_namespace_key)
    fifo = RealFIFO(known_objects=indexer)

    def apply(deltas: list[Delta], _initial: bool) -> None:
        if len(deltas) > 1 or deltas[0].type is DeltaType.REPLACED:
            listed = [d.object for d in deltas if d.type is DeltaType.REPLACED]
            indexer.replace(listed, deltas[-1].object)
            return
        delta = deltas[0]
        if delta.type is DeltaType.DELETED:
            indexer.delete(delta.object)
        elif delta.type is not DeltaType.BOOKMARK:
            indexer.update(delta.object)

    fifo.replace([pod("a"), pod("b")], "1")
    fifo.delete(pod("a"))
    fifo.add(pod("c"))
    while len(fifo):
        fifo.pop(apply)
    assert sorted(indexer.list_keys()) == ["ns/b", "ns/c"]
    fifo.replace([pod("c", 2)], "9")
    fifo.pop(apply)
    assert indexer.list_keys() == ["ns/c"]
    assert indexer.get_by_key("ns/c") == pod("c", 2)
    assert fifo.last_resource_version() == "9"


def test_relist_deltas_carry_their_queue_keys() -> None:
    # The typed relist entry: the informer keys a relist only once.
    known: dict[str, Any] = {}

    class Known:
        def list_keys(self) -> list[str]:
            return list(known)

        def get_by_key(self, key: str) -> Any | None:
            return known.get(key)

    known["ns/gone"] = {"metadata": {"name": "gone", "namespace": "ns"}}
    fifo = RealFIFO(known_objects=Known())
    a = {"metadata": {"name": "a", "namespace": "ns"}}
    b = {"metadata": {"name": "b"}}
    fifo.replace([a, b], "7")
    seen: list[list[Delta]] = []
    fifo.pop_batch(lambda deltas, _initial: seen.append(deltas))
    (deltas,) = seen
    assert isinstance(deltas, Relist)
    assert (*deltas.keys, *(t.key for t in deltas.deleted), "") == ("ns/a", "b", "ns/gone", "")
    assert [d.type for d in deltas] == [
        DeltaType.REPLACED,
        DeltaType.REPLACED,
        DeltaType.DELETED,
        DeltaType.BOOKMARK,
    ]


# --- the typed relist entry -----------------------------------------------------


def test_a_relist_entry_is_typed_and_single_entries_are_not() -> None:
    cache = DictCache()
    old_gone = pod("gone", 1)
    cache.items = {"ns/gone": old_gone}
    fifo = RealFIFO(known_objects=cache)
    fifo.add(pod("x", 1))
    fifo.replace([pod("a", 2), pod("b", 2)], "9")
    single = pop_now(fifo, cache.apply)
    assert type(single) is list
    assert not isinstance(single, Relist)
    relist = pop_now(fifo, cache.apply)
    assert isinstance(relist, Relist)
    assert relist.objects == (pod("a", 2), pod("b", 2))
    assert relist.keys == ("ns/a", "ns/b")
    assert relist.deleted == (
        DeletedFinalStateUnknown("ns/x", pod("x", 1)),
        DeletedFinalStateUnknown("ns/gone", old_gone),
    )
    assert relist.resource_version == "9"
    assert relist.delta_types() == [DeltaType.REPLACED, DeltaType.DELETED, DeltaType.BOOKMARK]


def test_relist_reads_as_its_deltas() -> None:
    tomb = DeletedFinalStateUnknown("ns/z", pod("z"))
    relist = Relist((pod("a"), pod("b")), ("ns/a", "ns/b"), (tomb,), "3")
    deltas = [
        Delta(DeltaType.REPLACED, pod("a")),
        Delta(DeltaType.REPLACED, pod("b")),
        Delta(DeltaType.DELETED, tomb),
        Delta(DeltaType.BOOKMARK, "3"),
    ]
    assert len(relist) == 4
    assert list(relist) == deltas
    assert [relist[i] for i in range(4)] == deltas
    assert relist[-1] == Delta(DeltaType.BOOKMARK, "3")
    assert relist[-4] == deltas[0]
    assert relist[1:3] == deltas[1:3]
    with pytest.raises(IndexError):
        relist[4]
    with pytest.raises(IndexError):
        relist[-5]
    assert relist == deltas
    assert deltas == relist
    assert relist == tuple(deltas)
    assert relist != deltas[:3]
    assert relist == Relist((pod("a"), pod("b")), ("ns/a", "ns/b"), (tomb,), "3")
    assert relist != Relist((pod("a"), pod("b")), ("ns/a", "ns/b"), (), "3")
    assert relist != "not a relist"
    assert Relist((), (), (), "4") == [Delta(DeltaType.BOOKMARK, "4")]
    assert Relist((), (), (), "4").delta_types() == [DeltaType.BOOKMARK]


def test_relist_repr_never_shows_objects() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "hunter2"}}
    relist = Relist((secret,), ("s",), (DeletedFinalStateUnknown("t", secret),), "5")
    assert "hunter2" not in repr(relist)
    assert repr(relist) == "<Relist at resourceVersion '5': 1 listed, 1 deleted>"


def test_relist_needs_a_key_per_object() -> None:
    with pytest.raises(ValueError, match="one key per object"):
        Relist((pod("a"),), (), (), "1")


def test_relist_with_a_transform_keeps_the_transformed_objects() -> None:
    fifo = RealFIFO(transform=lambda o: {**o, "t": True})
    fifo.replace([pod("a")], "2")
    relist = pop_now(fifo)
    assert isinstance(relist, Relist)
    assert relist.objects == ({**pod("a"), "t": True},)
    assert relist.keys == ("ns/a",)


def test_relist_with_a_custom_key_function() -> None:
    fifo = RealFIFO(key_func=lambda o: o["metadata"]["name"].upper())
    fifo.replace([pod("a"), pod("b")], "2")
    relist = pop_now(fifo)
    assert isinstance(relist, Relist)
    assert relist.keys == ("A", "B")


def test_a_failing_relist_process_is_noted_with_its_first_key() -> None:
    fifo = RealFIFO()
    fifo.replace([pod("a")], "1")

    def boom(_entry: Any, _initial: bool) -> None:
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope") as info:
        fifo.pop(boom)
    (note,) = info.value.__notes__
    assert "2 delta(s) [Bookmark,Replaced], first key 'ns/a'" in note


# --- wake-ups and pending -----------------------------------------------------------


def test_wake_makes_a_blocked_pop_batch_return_zero() -> None:
    fifo = RealFIFO()
    results: list[int] = []
    waiting = threading.Event()

    def consume() -> None:
        waiting.set()
        results.append(fifo.pop_batch(lambda _d, _i: None))

    consumer = threading.Thread(target=consume, name="test-pop-batch")
    consumer.start()
    assert waiting.wait(WAIT)
    fifo.wake()
    consumer.join(WAIT)
    assert not consumer.is_alive()
    assert results == [0]
    assert len(fifo) == 0


class _SignallingBell(queue.SimpleQueue[None]):
    """A consumer's bell that releases ``entered`` as a consumer starts to
    wait on it (the test then knows it sleeps, or is about to)."""

    def __init__(self, entered: threading.Semaphore) -> None:
        super().__init__()
        self.entered = entered

    def get(self, block: bool = True, timeout: float | None = None) -> None:
        self.entered.release()
        return super().get(block, timeout)


@pytest.mark.parametrize("round_", range(5))
def test_wake_reaches_a_pop_batch_while_a_pop_sleeps_too(round_: int) -> None:
    # A pop (which ignores wake-ups) and a pop_batch sleep on one queue: the
    # pop must not take the wake-up meant for the pop_batch.
    fifo = RealFIFO()
    returned: list[int] = []
    batch_returned = threading.Event()

    def popper() -> None:
        with contextlib.suppress(FIFOClosedError):
            fifo.pop(lambda _d, _i: None)

    def batcher() -> None:
        returned.append(fifo.pop_batch(lambda _d, _i: None))
        batch_returned.set()

    entered = threading.Semaphore(0)
    fifo._bell = _SignallingBell(entered)
    fifo._pop_bell = _SignallingBell(entered)
    threads = [threading.Thread(target=popper), threading.Thread(target=batcher)]
    for thread in threads:
        thread.start()
    try:
        assert entered.acquire(timeout=WAIT)  # both asleep
        assert entered.acquire(timeout=WAIT)
        fifo.wake()
        assert batch_returned.wait(WAIT), "the wake-up was lost"
        assert returned == [0]
        fifo.add(pod("a"))  # and the pop still gets data
        threads[0].join(WAIT)
        assert not threads[0].is_alive()
        assert len(fifo) == 0
    finally:
        fifo.close()
        for thread in threads:
            thread.join(WAIT)


def test_a_wake_before_the_wait_is_not_lost_and_is_consumed_once() -> None:
    fifo = RealFIFO()
    fifo.wake()
    fifo.wake()  # collapses with the first
    assert fifo.pop_batch(lambda _d, _i: None) == 0
    fifo.add(pod("a"))
    assert fifo.pop_batch(lambda _d, _i: None) == 1  # an entry: processed as usual
    fifo.close()
    with pytest.raises(FIFOClosedError):
        fifo.pop_batch(lambda _d, _i: None)  # the wake-up was consumed


def test_a_wake_up_comes_before_queued_entries_and_skips_none() -> None:
    fifo = RealFIFO()
    fifo.add(pod("a"))
    fifo.wake()
    seen: list[list[Delta]] = []
    assert fifo.pop_batch(lambda d, _i: seen.append(d)) == 0  # back to the caller first
    assert len(fifo) == 1
    assert fifo.pop_batch(lambda d, _i: seen.append(d)) == 1  # then the entry
    assert types(seen[0]) == [DeltaType.ADDED]


def test_a_wake_up_during_a_batch_ends_it_after_the_entry_in_progress() -> None:
    fifo = RealFIFO()
    for name in "abcd":
        fifo.add(pod(name))
    seen: list[str] = []

    def process(deltas: list[Delta], _initial: bool) -> None:
        seen.append(deltas[0].object["metadata"]["name"])
        if len(seen) == 2:
            fifo.wake()

    assert fifo.pop_batch(process) == 2
    assert seen == ["a", "b"]
    assert fifo.pop_batch(process) == 2  # the wake-up was consumed
    assert seen == ["a", "b", "c", "d"]


def test_pop_batch_failure_consumes_that_entry_and_leaves_the_rest() -> None:
    fifo = RealFIFO()
    for name in ("a", "b", "c"):
        fifo.add(pod(name))
    seen: list[str] = []

    def fails_on_b(deltas: Any, _initial: bool) -> None:
        name = deltas[0].object["metadata"]["name"]
        if name == "b":
            raise ValueError("b is bad")
        seen.append(name)

    with pytest.raises(ValueError, match="b is bad") as info:
        fifo.pop_batch(fails_on_b)
    (note,) = info.value.__notes__
    assert "1 delta(s) [Added], first key 'ns/b'" in note
    assert "not requeued" in note
    assert seen == ["a"]
    assert fifo.pending() == 1  # b is consumed (not in flight), c still queued
    assert fifo.pop_batch(fails_on_b) == 1
    assert seen == ["a", "c"]


def test_pop_ignores_wake_ups() -> None:
    fifo = RealFIFO()
    got: list[list[Delta]] = []
    waiting = threading.Event()

    def consume() -> None:
        waiting.set()
        got.append(fifo.pop(lambda _d, _i: None))

    consumer = threading.Thread(target=consume, name="test-pop")
    consumer.start()
    assert waiting.wait(WAIT)
    fifo.wake()
    fifo.add(pod("a"))
    consumer.join(WAIT)
    assert not consumer.is_alive()
    assert types(got[0]) == [DeltaType.ADDED]


def test_pending_counts_queued_and_in_flight_entries() -> None:
    fifo = RealFIFO()
    fifo.add(pod("a"))
    fifo.add(pod("b"))
    assert fifo.pending() == 2
    observed: list[tuple[int, int]] = []
    fifo.pop(lambda _d, _i: observed.append((len(fifo), fifo.pending())))
    assert observed == [(1, 2)]  # the entry being processed is pending, not queued
    assert fifo.pending() == 1
    pop_now(fifo)
    assert fifo.pending() == 0


def test_add_update_and_delete_never_wait_for_the_queue_lock() -> None:
    """The producer's hot path takes no lock (a consumer holding it, or
    descheduled while holding it, never stalls the reflector); what it hands
    in is seen, in order, by everything that reads the queue."""
    fifo = RealFIFO()
    done = threading.Event()

    def produce() -> None:
        fifo.add(pod("a", 1))
        fifo.update(pod("a", 2))
        fifo.delete(pod("a", 2))
        done.set()

    producer = threading.Thread(target=produce, name="test-producer")
    with fifo._lock:  # what a consumer in the middle of a pop holds
        producer.start()
        assert done.wait(WAIT)
    producer.join(WAIT)
    assert len(fifo) == 3
    assert fifo.pending() == 3
    assert fifo.has_synced()  # an add before any relist populates the queue
    fifo.bookmark("9")  # queued after the three, though they took no lock
    seen = [pop_now(fifo, lambda _d, _i: None) for _ in range(4)]
    assert [types(entry) for entry in seen] == [
        [DeltaType.ADDED],
        [DeltaType.UPDATED],
        [DeltaType.DELETED],
        [DeltaType.BOOKMARK],
    ]


def test_entries_added_before_the_first_relist_count_in_its_initial_population() -> None:
    fifo = RealFIFO()
    fifo.add(pod("early"))  # never moved out of the intake before the relist
    fifo.replace([pod("a")], "3")
    flags: list[bool] = []
    for _ in range(2):
        pop_now(fifo, lambda _d, initial: flags.append(initial))
    # The add came first: the queue was populated by it, so nothing is
    # initial and has_synced did not wait for the relist.
    assert flags == [False, False]
    assert fifo.has_synced()


def test_a_consumer_asleep_on_an_empty_queue_is_woken_by_each_producer_call() -> None:
    fifo = RealFIFO()
    got: list[list[DeltaType]] = []
    arrived = threading.Semaphore(0)

    def consume() -> None:
        while True:
            try:
                fifo.pop(lambda entry, _i: got.append(types(entry)))
            except FIFOClosedError:
                return
            arrived.release()

    consumer = threading.Thread(target=consume, name="test-consumer")
    consumer.start()
    try:
        for call in (
            lambda: fifo.add(pod("a")),
            lambda: fifo.bookmark("2"),
            lambda: fifo.replace([], "3"),
            lambda: fifo.delete(pod("a")),
        ):
            call()  # each one while the consumer sleeps, or is about to
            assert arrived.acquire(timeout=WAIT)
    finally:
        fifo.close()
        consumer.join(WAIT)
    assert not consumer.is_alive()
    assert got[0] == [DeltaType.ADDED]
    assert got[1] == [DeltaType.BOOKMARK]
    assert got[3] == [DeltaType.DELETED]


@given(st.sampled_from(list(DeltaType)), st.dictionaries(st.text(max_size=3), st.integers()))
def test_the_fast_delta_builder_makes_the_constructors_delta(
    delta_type: DeltaType, obj: dict[str, int]
) -> None:
    fast = fifo_module._new_delta(delta_type, obj)
    assert type(fast) is Delta
    assert fast == Delta(delta_type, obj)
    assert fast.type is delta_type
    assert fast.object is obj
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.type = DeltaType.ADDED  # type: ignore[misc]
