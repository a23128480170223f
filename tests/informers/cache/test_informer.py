"""SharedIndexInformer, handlers, signals, listers and waiting, over FakeListerWatcher."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from informers.cache import signals
from informers.cache.informer import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.cache.listers import Lister
from informers.cache.store import Indexer
from informers.cache.wait import wait_for_cache_sync
from informers.errors import CacheSyncTimeoutError, InformerStateError
from informers.testing.fake import FakeClock, FakeListerWatcher
from informers.wire.objects import (
    NAMESPACE_INDEX,
    meta_namespace_key,
    namespace_index,
)
from tests.helpers import Recorder, pod, settle


@pytest.fixture
def lw() -> FakeListerWatcher:
    lw = FakeListerWatcher()
    lw.set_objects([pod("a", "2"), pod("b", "3")], "5")
    return lw


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def informer(lw: FakeListerWatcher, clock: FakeClock) -> Iterator[SharedIndexInformer]:
    inf = SharedIndexInformer(
        lw, name="pods", clock=clock, indexers={NAMESPACE_INDEX: namespace_index}
    )
    yield inf
    inf.stop()


def test_initial_sync_then_events_in_order(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    informer.start()
    assert wait_for_cache_sync(informer, reg, timeout=5)
    assert sorted(o["metadata"]["name"] for o in informer.get_store().list()) == ["a", "b"]
    w = lw.wait_for_watch()
    w.add(pod("c", "6"))
    w.modify(pod("a", "7"))
    w.delete(pod("b", "8"))
    w.bookmark("9")
    assert informer.wait_idle()
    reflector = informer.reflector
    assert reflector is not None
    assert reflector.wait_for(lambda s: s.mem.last_sync_rv == "9", 5)
    assert informer.last_sync_resource_version() == "9"
    assert informer.wait_idle()
    assert rec.events == [
        ("add", "a", True),
        ("add", "b", True),
        ("add", "c", False),
        ("update", "a", "2"),
        ("delete", "b", False),
    ]
    assert reg.pending() == 0
    assert informer.get_indexer().by_index(NAMESPACE_INDEX, "ns")


def test_relist_after_410_delivers_tombstones(
    informer: SharedIndexInformer, lw: FakeListerWatcher, clock: FakeClock
) -> None:
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.start()
    assert informer.wait_synced(5)
    w = lw.wait_for_watch()
    lw.set_objects([pod("a", "2"), pod("c", "12")], "12")  # b deleted while away
    w.error(410, "Expired", "too old")
    assert clock.wait_for_waiters()
    clock.advance(2)
    lw.wait_for_watch(2)
    settle(informer, "12")
    assert rec.events[2:] == [("add", "c", False), ("delete", "ns/b", True)]
    assert informer.get_store().get_by_key("ns/b") is None


def test_late_handler_gets_current_contents_first(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    informer.start()
    assert informer.wait_synced(5)
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    assert reg.wait_synced(5)
    lw.wait_for_watch().add(pod("z", "9"))
    settle(informer, "9")
    assert sorted(rec.events[:2]) == [("add", "a", True), ("add", "b", True)]
    assert rec.events[2:] == [("add", "z", False)]


def test_failing_handler_is_logged_and_keeps_receiving(
    informer: SharedIndexInformer, lw: FakeListerWatcher, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    def boom(obj: Any) -> None:
        seen.append(obj["metadata"]["name"])
        raise ValueError("handler bug")

    informer.add_event_handler(ResourceEventHandlerFuncs(add_func=boom))
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.start()
    assert informer.wait_synced(5)
    lw.wait_for_watch().add(pod("c", "6"))
    settle(informer, "6")
    assert seen == ["a", "b", "c"]
    assert len(rec.events) == 3
    assert "ns/c (rv 6)" in caplog.text
    assert "labels" not in caplog.text
    assert {getattr(r, "kind", None) for r in caplog.records if "raised" in r.getMessage()} == {
        "pods"
    }


def test_removed_handler_gets_nothing_more(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    rec = Recorder()
    reg = informer.add_event_handler(rec)
    informer.start()
    assert reg.wait_synced(5)
    reg.remove()
    lw.wait_for_watch().add(pod("c", "6"))
    settle(informer, "6")
    assert [e[1] for e in rec.events] == ["a", "b"]
    assert reg not in informer.registrations()


def test_transform_runs_at_ingest_and_only_before_start(
    informer: SharedIndexInformer,
) -> None:
    def strip(obj: Any) -> Any:
        meta = {k: v for k, v in obj["metadata"].items() if k != "labels"}
        return {**obj, "metadata": meta, "transformed": True}

    informer.set_transform(strip)
    informer.start()
    assert informer.wait_synced(5)
    assert all(o["transformed"] for o in informer.get_store().list())
    with pytest.raises(InformerStateError):
        informer.set_transform(None)


def test_resync_replays_cache_to_due_handlers(lw: FakeListerWatcher, clock: FakeClock) -> None:
    inf = SharedIndexInformer(lw, name="pods", clock=clock, resync_period=10)
    rec, quiet = Recorder(), Recorder()
    inf.add_event_handler(rec)
    inf.add_event_handler(quiet, resync_period=0)
    try:
        inf.start()
        assert inf.wait_synced(5)
        lw.wait_for_watch()
        clock.advance(10)
        assert inf.wait_idle()
        assert sorted(rec.events[2:]) == [("update", "a", "2"), ("update", "b", "3")]
        assert len(quiet.events) == 2
        assert len(lw.list_calls) == 1  # never re-lists
    finally:
        inf.stop()


def test_signals_carry_informer_as_sender(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    got: list[tuple[str, Any]] = []
    synced = threading.Event()

    def on_added(sender: Any, obj: Any, is_in_initial_list: bool) -> None:
        got.append(("added", obj["metadata"]["name"]))

    def on_deleted(sender: Any, obj: Any) -> None:
        got.append(("deleted", obj["metadata"]["name"]))

    def on_synced(sender: Any) -> None:
        synced.set()

    signals.added.connect(on_added, sender=informer)
    signals.deleted.connect(on_deleted, sender=informer)
    signals.synced.connect(on_synced, sender=informer)
    try:
        informer.start()
        assert synced.wait(5)
        lw.wait_for_watch().delete(pod("a", "9"))
        settle(informer, "9")
        assert got == [("added", "a"), ("added", "b"), ("deleted", "a")]
    finally:
        signals.added.disconnect(on_added, sender=informer)
        signals.deleted.disconnect(on_deleted, sender=informer)
        signals.synced.disconnect(on_synced, sender=informer)


def test_wait_for_cache_sync_names_unsynced(clock: FakeClock) -> None:
    lw = FakeListerWatcher()
    lw.script_list(ConnectionResetError("down"))
    inf = SharedIndexInformer(lw, name="pods", clock=clock)
    try:
        inf.start()
        with pytest.raises(CacheSyncTimeoutError) as info:
            wait_for_cache_sync(inf, timeout=0.05)
        assert "pods" in str(info.value)
        stop = threading.Event()
        stop.set()
        assert not wait_for_cache_sync(inf, lambda: False, stop=stop)
    finally:
        inf.stop()


def test_lister_filters_by_label_and_namespace(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    lw.set_objects([pod("a", "1", app="web"), pod("b", "2", app="db")], "5")
    informer.start()
    assert informer.wait_synced(5)
    lister = Lister(informer.get_indexer())
    assert [o["metadata"]["name"] for o in lister.list("app=web")] == ["a"]
    assert len(lister.list()) == 2
    assert lister.namespace("ns").get("b") is not None
    assert [o["metadata"]["name"] for o in lister.namespace("ns").list("app in (db)")] == ["b"]
    assert lister.namespace("other").list() == []
    assert lister.get("a", "ns") is not None


def test_start_twice_and_handler_after_stop_are_refused(informer: SharedIndexInformer) -> None:
    informer.start()
    with pytest.raises(InformerStateError):
        informer.start()
    informer.stop()
    with pytest.raises(InformerStateError):
        informer.add_event_handler(Recorder())


def test_an_index_function_failing_on_one_object_costs_the_cache_nothing(
    lw: FakeListerWatcher, caplog: pytest.LogCaptureFixture
) -> None:
    def by_app(obj: Any) -> list[str]:
        return [obj["metadata"]["labels"]["app"]]  # KeyError without the label

    lw.set_objects([pod("a", "2", app="web"), pod("b", "3")], "5")
    informer = SharedIndexInformer(lw, name="pods", indexers={"app": by_app})
    rec = Recorder()
    informer.add_event_handler(rec)
    try:
        informer.start()
        # The initial list (one relist entry) holds an object the index
        # function fails on: the informer still syncs, with every object.
        assert informer.wait_synced(5)
        w = lw.wait_for_watch()
        w.add(pod("c", "6"))  # fails too: cached, and the events keep flowing
        w.add(pod("d", "7", app="web"))
        settle(informer, "7")
        store = informer.get_indexer()
        assert store.list_keys() == ["ns/a", "ns/b", "ns/c", "ns/d"]
        assert [o["metadata"]["name"] for o in store.by_index("app", "web")] == ["a", "d"]
        assert [e[1] for e in rec.events] == ["a", "b", "c", "d"]
    finally:
        informer.stop()
    failed = [r for r in caplog.records if "not in index 'app'" in r.getMessage()]
    assert [r.levelname for r in failed] == ["ERROR", "ERROR"]
    assert "'ns/b'" in failed[0].getMessage()
    assert "'ns/c'" in failed[1].getMessage()


def test_an_index_failure_is_an_error_once_per_object_then_debug(
    lw: FakeListerWatcher, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="informers.cache.informer")
    lw.set_objects([pod("b", "3")], "5")  # no "app" label: by_app fails on it

    def by_app(obj: Any) -> list[str]:
        return [obj["metadata"]["labels"]["app"]]

    informer = SharedIndexInformer(lw, name="pods", clock=clock, indexers={"app": by_app})
    try:
        informer.start()
        assert informer.wait_synced(5)
        w = lw.wait_for_watch()
        w.modify(pod("b", "6"))  # the same failure again, for the same object
        w.modify(pod("b", "7"))  # (as every resync would repeat it)
        settle(informer, "7")
        assert informer.get_indexer().list_keys() == ["ns/b"]
    finally:
        informer.stop()
    levels = [r.levelname for r in caplog.records if "not in index 'app'" in r.getMessage()]
    assert levels == ["ERROR", "DEBUG", "DEBUG"]


def _name_key(obj: Any) -> str:
    """A store key function of the user's own (the name alone)."""
    return f"by-name:{obj['metadata']['name']}"


@pytest.mark.parametrize("key_func", [None, _name_key], ids=["default", "own"])
def test_the_cache_is_keyed_by_the_store_key_function(
    lw: FakeListerWatcher, clock: FakeClock, key_func: Any
) -> None:
    # The loop reuses the delta queue's keys only for a store that keys as
    # the queue does; a store with a key function of its own keys every
    # object itself, from relists and from watch events alike.
    store = Indexer if key_func is None else functools.partial(Indexer, key_func)
    informer = SharedIndexInformer(lw, name="pods", clock=clock, store=store)
    key = meta_namespace_key if key_func is None else key_func
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.start()
    try:
        assert informer.wait_synced(5)
        w = lw.wait_for_watch()
        w.add(pod("c", "6"))
        w.modify(pod("a", "7"))
        settle(informer, "7")
        store_keys = sorted(informer.get_store().list_keys())
        assert store_keys == sorted(key(pod(n, "0")) for n in "abc")
        assert (
            informer.get_store().get_by_key(key(pod("a", "0")))["metadata"]["resourceVersion"]
            == "7"
        )
        assert rec.events[2:] == [("add", "c", False), ("update", "a", "2")]
        assert informer.applied_resource_version() == "7"
    finally:
        informer.stop()


def test_informer_and_reflector_log_records_carry_the_kind(
    informer: SharedIndexInformer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="informers")
    informer.start()
    assert informer.wait_synced(5)
    informer.stop()
    mine = [r for r in caplog.records if r.name.startswith("informers.cache")]
    assert {r.getMessage().split(":")[0] for r in mine} >= {"pods", "reflector-pods"}
    assert mine
    assert all(getattr(r, "kind", None) == "pods" for r in mine)
