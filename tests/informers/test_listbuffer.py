"""List buffers (informers.listbuffer): a CompactStore collects lists
encoded, page by page. Through an informer, a relist gives exactly the
notifications and the cache the default store gives; the decoded objects of
a page die before the list ends, and those handed to handlers die as the
handlers consume them."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from informers import IndexFunctionError, ObjectEncodeError, SharedIndexInformer
from informers.cache.compact import CompactStore, EncodedList, JSONCodec
from informers.fifo import RealFIFO, Relist
from informers.listbuffer import Deferred, PreparedList
from informers.objects import DeletedFinalStateUnknown, get_labels, meta_namespace_key
from informers.reflector import BackoffManager, ReflectorConfig
from informers.testing.fake import FakeListerWatcher, FakeWatch

# ---------------------------------------------------------------------------- helpers


def app_index(obj: Any) -> list[str]:
    app = get_labels(obj).get("app")
    return [app] if app else []


def tier_index(obj: Any) -> list[str]:
    return list(get_labels(obj).get("tiers", "").split(",")) if get_labels(obj) else []


INDEXERS = {"app": app_index}


def pod(name: str, ns: str, rv: str, app: str = "a") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "resourceVersion": rv,
            "labels": {"app": app},
        },
        "spec": {"n": name * 3},
    }


def pages(objs: Sequence[dict[str, Any]], rv: str, size: int) -> list[dict[str, Any]]:
    """``objs`` as list pages of ``size`` (continue tokens; the last has the rv)."""
    chunks = [list(objs[i : i + size]) for i in range(0, len(objs), size)] or [[]]
    out = []
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        meta = {"resourceVersion": rv} if last else {"continue": f"page-{i + 1}"}
        out.append({"kind": "List", "metadata": meta, "items": chunk})
    return out


class Recorder:
    """Records every call as a comparable tuple (keys and versions, not objects)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[Any, ...]] = []

    def _add(self, event: tuple[Any, ...]) -> None:
        with self.lock:
            self.events.append(event)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._add(("add", meta_namespace_key(obj), obj, is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        self._add(("update", meta_namespace_key(new), old, new))

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self._add(("delete", obj.key, "tombstone", obj.obj))
        else:
            self._add(("delete", meta_namespace_key(obj), obj))

    def on_relist_begin(self, resource_version: str) -> None:
        self._add(("begin", resource_version))

    def on_relist_end(self, resource_version: str) -> None:
        self._add(("end", resource_version))


def run_relist(
    store: Any,
    initial: list[dict[str, Any]],
    relisted: list[dict[str, Any]],
    page_size: int,
    transform: Any = None,
) -> tuple[list[tuple[Any, ...]], list[tuple[str, Any]], dict[str, list[str]]]:
    """An informer over a fake: the initial list, then (after a 410) the
    relist, both in pages; the recorded events, the cache, the app index."""
    lw = FakeListerWatcher()
    lw.script_list(*pages(initial, "10", page_size))
    informer = SharedIndexInformer(
        lw,
        indexers=dict(INDEXERS),
        name="pods",
        reflector_config=ReflectorConfig(description="pods", page_size=page_size),
        backoff=BackoffManager(initial=0.001, cap=0.002),
        store=store,
    )
    if transform is not None:
        informer.set_transform(transform)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    informer.start()
    try:
        assert informer.wait_synced(10)
        watch = lw.wait_for_watch(1)
        lw.script_list(*pages(relisted, "20", page_size))
        watch.error(410, "Expired", "too old resource version")
        reflector = informer.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: s.mem.last_sync_rv == "20", 10)
        lw.wait_for_watch(2)
        assert informer.wait_idle(10)
        cache = informer.get_indexer()
        contents = sorted((meta_namespace_key(o), o) for o in cache.list())
        index = {v: cache.index_keys("app", v) for v in sorted(cache.list_index_func_values("app"))}
    finally:
        informer.stop()
    with recorder.lock:
        return list(recorder.events), contents, index


objects = st.lists(
    st.builds(
        pod,
        name=st.sampled_from(["p", "q", "r", "s"]),
        ns=st.sampled_from(["x", "y"]),
        rv=st.sampled_from(["1", "2"]),
        app=st.sampled_from(["a", "b", ""]),
    ),
    max_size=8,
)


# ---------------------------------------------------------------------------- the informer


@settings(max_examples=40, deadline=None)
@given(initial=objects, relisted=objects, page_size=st.integers(1, 4))
def test_relist_through_compact_store_matches_the_dict_store(
    initial: list[dict[str, Any]], relisted: list[dict[str, Any]], page_size: int
) -> None:
    """Same notifications (types, order, is_in_initial_list, objects), same
    cache and index, for any initial contents and any new list (duplicates
    included), over paginated lists."""
    want = run_relist(None, initial, relisted, page_size)
    got = run_relist(CompactStore, initial, relisted, page_size)
    assert got == want


def test_relist_with_a_transform_matches_the_dict_store() -> None:
    def label(obj: Any) -> Any:
        return {**obj, "metadata": {**obj["metadata"], "labels": {"app": "t"}}}

    initial = [pod("p", "x", "1"), pod("q", "x", "1")]
    relisted = [pod("q", "x", "2"), pod("r", "y", "1")]
    want = run_relist(None, initial, relisted, 1, label)
    got = run_relist(CompactStore, initial, relisted, 1, label)
    assert got == want
    assert got[2] == {"t": ["x/q", "y/r"]}


def test_the_informer_collects_lists_in_the_compact_stores_buffer() -> None:
    lw = FakeListerWatcher()
    lw.set_objects([pod("p", "x", "1")], "5")
    seen: list[Any] = []
    informer = SharedIndexInformer(lw, name="pods", store=CompactStore)
    fifo_replace = RealFIFO.replace

    def spy(self: RealFIFO, objs: Any, rv: str) -> None:
        seen.append(objs)
        fifo_replace(self, objs, rv)

    RealFIFO.replace = spy  # type: ignore[method-assign]
    try:
        informer.start()
        assert informer.wait_synced(10)
    finally:
        RealFIFO.replace = fifo_replace  # type: ignore[method-assign]
        informer.stop()
    assert len(seen) == 1
    assert isinstance(seen[0], EncodedList)
    assert seen[0].keys == ("x/p",)


def run_streaming(store: Any, events: list[tuple[str, dict[str, Any]]]) -> Any:
    """A streaming list (watch-list): ``events`` then the initial-events-end
    bookmark; the recorded events and the cache."""
    lw = FakeListerWatcher()
    watch = FakeWatch()
    lw.script_watch(watch)
    informer = SharedIndexInformer(
        lw,
        name="pods",
        reflector_config=ReflectorConfig(description="pods", use_watch_list=True),
        store=store,
    )
    recorder = Recorder()
    informer.add_event_handler(recorder)
    for kind, obj in events:
        {"add": watch.add, "modify": watch.modify, "delete": watch.delete}[kind](obj)
    watch.bookmark("30", initial_events_end=True)
    informer.start()
    try:
        assert informer.wait_synced(10)
        assert informer.wait_idle(10)
        contents = sorted((meta_namespace_key(o), o) for o in informer.get_indexer().list())
    finally:
        informer.stop()
    assert not lw.list_calls  # streamed, not listed
    with recorder.lock:
        return list(recorder.events), contents


@settings(max_examples=25, deadline=None)
@given(
    events=st.lists(
        st.tuples(st.sampled_from(["add", "modify", "delete"]), objects.map(lambda o: o[:1])),
        max_size=8,
    ).map(lambda es: [(kind, objs[0]) for kind, objs in es if objs])
)
def test_a_streaming_list_through_compact_store_matches_the_dict_store(
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    """Events of a streaming list are collected one at a time (put, discard)."""
    assert run_streaming(CompactStore, events) == run_streaming(None, events)


# ---------------------------------------------------------------------------- memory


class Alive:
    """Counts the live objects made by :meth:`track` (a dict subclass can be
    weakly referenced, a plain dict cannot)."""

    def __init__(self) -> None:
        self.count = 0
        self.most = 0
        self.made = 0

    def _gone(self) -> None:
        self.count -= 1

    def track(self, obj: dict[str, Any]) -> dict[str, Any]:
        tracked = Tracked(obj)
        weakref.finalize(tracked, self._gone)
        self.count += 1
        self.made += 1
        self.most = max(self.most, self.count)
        return tracked


class Tracked(dict[str, Any]):
    """A dict that can be weakly referenced."""


class TrackingCodec(JSONCodec):
    """JSON, decoded into :class:`Tracked` dicts that are counted."""

    def __init__(self) -> None:
        self.alive = Alive()

    def decode(self, data: bytes) -> Any:
        return self.alive.track(super().decode(data))


def test_a_pages_decoded_objects_die_before_the_list_ends() -> None:
    """The transform makes each listed object a Tracked dict: with the
    compact store, at most about a page of them is ever alive while the list
    is collected; with the dict store, every one stays (the cache holds
    them) -- what the bound would catch if the list were held."""
    size, count = 10, 200

    def run(store: Any) -> int:
        alive = Alive()

        lw = FakeListerWatcher()
        lw.script_list(*pages([pod(f"p{i}", "x", "1") for i in range(count)], "5", size))
        informer = SharedIndexInformer(
            lw,
            name="pods",
            reflector_config=ReflectorConfig(description="pods", page_size=size),
            store=store,
        )
        informer.set_transform(alive.track)
        informer.start()
        try:
            assert informer.wait_synced(10)
            assert len(informer.get_indexer()) == count
        finally:
            informer.stop()
        return alive.most

    assert run(CompactStore) <= 2 * size
    assert run(None) == count


def test_handlers_decode_one_object_at_a_time() -> None:
    """Notifications of a prepared relist carry encoded objects: while a
    handler is at its n-th add, only the objects it is handling (and none
    of the list's others) are decoded."""
    codec = TrackingCodec()
    count = 100
    lw = FakeListerWatcher()
    lw.script_list(*pages([pod(f"p{i}", "x", "1") for i in range(count)], "5", 7))
    informer = SharedIndexInformer(
        lw,
        name="pods",
        store=lambda **kw: CompactStore(codec=codec, hot_objects=0, **kw),
    )
    release = threading.Event()
    live: list[int] = []

    class Slow:
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            assert is_in_initial_list
            release.wait(10)  # the whole list is queued for us before we go on
            live.append(codec.alive.count)

        def on_update(self, old: Any, new: Any) -> None:
            raise AssertionError("no updates here")

        def on_delete(self, obj: Any) -> None:
            raise AssertionError("no deletions here")

    informer.add_event_handler(Slow())
    informer.start()
    try:
        assert informer.wait_synced(10)  # the informer's cache: applied
        release.set()
        assert informer.wait_idle(10)
    finally:
        informer.stop()
    assert len(live) == count
    assert max(live) <= 2


def test_a_relist_of_unchanged_objects_decodes_nothing() -> None:
    """Equal blobs tell that an object did not change: its update is a
    resync (not delivered to a handler whose resync is not due) and neither
    the old nor the new object is decoded."""
    codec = TrackingCodec()
    objs = [pod(f"p{i}", "x", "1") for i in range(50)]
    lw = FakeListerWatcher()
    lw.script_list(*pages(objs, "10", 7))
    informer = SharedIndexInformer(
        lw, name="pods", store=lambda **kw: CompactStore(codec=codec, hot_objects=0, **kw)
    )
    recorder = Recorder()
    informer.add_event_handler(recorder)
    informer.start()
    try:
        assert informer.wait_synced(10)
        assert informer.wait_idle(10)
        made = codec.alive.made
        lw.script_list(*pages([*objs[:49], pod("new", "x", "2")], "20", 7))
        lw.wait_for_watch(1).error(410, "Expired", "too old resource version")
        reflector = informer.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: s.mem.last_sync_rv == "20", 10)
        lw.wait_for_watch(2)
        assert informer.wait_idle(10)
    finally:
        informer.stop()
    with recorder.lock:
        relist = recorder.events[recorder.events.index(("end", "10")) + 1 :]
    assert [e[:2] for e in relist] == [
        ("begin", "20"),
        ("add", "x/new"),
        ("delete", "x/p49"),
        ("end", "20"),
    ]
    # The added object, decoded for the handler; the tombstone's object,
    # read from the cache by the queue: nothing else.
    assert codec.alive.made - made == 2


# ---------------------------------------------------------------------------- the buffer


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("page"), st.lists(st.sampled_from("abcdef"), max_size=4)),
            st.tuples(st.just("put"), st.sampled_from("abcdef")),
            st.tuples(st.just("discard"), st.sampled_from("abcdef")),
        ),
        max_size=12,
    )
)
def test_the_buffer_collects_as_a_dict_by_key_does(ops: list[tuple[str, Any]]) -> None:
    store = CompactStore(indexers=dict(INDEXERS))
    buffer = store.new_list_buffer()
    assert buffer is not None
    model: dict[str, Any] = {}
    version = 0
    for op, arg in ops:
        if op == "discard":
            buffer.discard(arg)
            model.pop(arg, None)
            continue
        names = arg if op == "page" else [arg]
        objs = []
        for name in names:
            version += 1
            objs.append(pod(name, "", str(version)))
        if op == "page":
            buffer.put_many(names, objs)
        else:
            buffer.put(names[0], objs[0])
        model.update(zip(names, objs, strict=True))
        assert len(buffer) == len(model)
    prepared = buffer.finish()
    assert len(buffer) == 0
    assert prepared.keys == tuple(model)
    assert list(prepared) == list(model.values())
    assert [prepared.resource_version(i) for i in range(len(prepared))] == [
        o["metadata"]["resourceVersion"] for o in model.values()
    ]
    assert [prepared.deferred(i).get() for i in range(len(prepared))] == list(model.values())
    assert prepared[-1:] == list(model.values())[-1:]
    store.replace_prepared(prepared, "9")
    reference = CompactStore(indexers=dict(INDEXERS))
    reference.replace(list(model.values()), "9")
    assert sorted(store.list_keys()) == sorted(reference.list_keys())
    for value in reference.list_index_func_values("app"):
        assert store.index_keys("app", value) == reference.index_keys("app", value)


def test_replace_prepared_returns_the_previous_objects() -> None:
    store = CompactStore(indexers=dict(INDEXERS), hot_objects=1)
    store.replace([pod("p", "x", "1"), pod("q", "x", "1")], "1")
    store.get_by_key("x/q")  # q is hot, p is not
    buffer = store.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["x/q", "x/r"], [pod("q", "x", "2"), pod("r", "x", "2", "b")])
    previous = store.replace_prepared(buffer.finish(), "2")
    old_q = previous("x/q")
    assert isinstance(old_q, Deferred)
    assert old_q.get()["metadata"]["resourceVersion"] == "1"
    old_p = previous("x/p")
    assert old_p is not None
    assert old_p.peek() == pod("p", "x", "1")
    assert previous("x/r") is None
    assert sorted(store.list_keys()) == ["x/q", "x/r"]
    assert store.index_keys("app", "b") == ["x/r"]
    assert store.stats()["hot"] == 0


def test_a_prepared_list_only_fits_its_own_store() -> None:
    buffer = CompactStore().new_list_buffer()
    assert buffer is not None
    with pytest.raises(ValueError, match="this store"):
        CompactStore().replace_prepared(buffer.finish())


def test_an_unencodable_item_fails_the_adoption_and_changes_nothing() -> None:
    store = CompactStore()
    store.replace([pod("p", "x", "1")], "1")
    buffer = store.new_list_buffer()
    assert buffer is not None
    bad = {"metadata": {"name": "b", "namespace": "x"}, "v": {1, 2}}  # a set: not JSON
    buffer.put_many(["x/b", "x/q"], [bad, pod("q", "x", "2")])
    prepared = buffer.finish()
    assert prepared[0] is bad  # kept as it was
    assert prepared.deferred(0).get() is bad
    with pytest.raises(ObjectEncodeError):
        store.replace_prepared(prepared)
    assert store.list_keys() == ["x/p"]


def test_index_failures_are_raised_or_reported_when_adopted() -> None:
    def picky(obj: Any) -> list[str]:
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("no")
        return ["ok"]

    strict = CompactStore(indexers={"picky": picky})
    buffer = strict.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["bad", "good"], [pod("bad", "", "1"), pod("good", "", "1")])
    with pytest.raises(IndexFunctionError):
        strict.replace_prepared(buffer.finish())
    assert len(strict) == 0

    failures: list[IndexFunctionError] = []
    tolerant = CompactStore(indexers={"picky": picky}, on_index_error=failures.append)
    buffer = tolerant.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["bad", "good"], [pod("bad", "", "1"), pod("good", "", "1")])
    assert failures == []  # reported on adoption (the informer loop's thread), not before
    tolerant.replace_prepared(buffer.finish())
    assert [f.key for f in failures] == ["bad"]
    assert tolerant.index_keys("picky", "ok") == ["good"]


def test_indexes_added_while_a_list_is_collected_are_built_on_adoption() -> None:
    store = CompactStore(indexers=dict(INDEXERS))
    buffer = store.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["x/p"], [pod("p", "x", "1", "b")])
    store.add_indexers({"ns": lambda o: [o["metadata"]["namespace"]]})
    store.replace_prepared(buffer.finish())
    assert store.index_keys("ns", "x") == ["x/p"]
    assert store.index_keys("app", "b") == ["x/p"]


def test_multi_valued_indexes_are_adopted() -> None:
    store = CompactStore(indexers={"tiers": tier_index})
    buffer = store.new_list_buffer()
    assert buffer is not None
    a = pod("a", "", "1")
    a["metadata"]["labels"] = {"tiers": "web,api"}
    b = pod("b", "", "1")
    b["metadata"]["labels"] = {"tiers": "api"}
    buffer.put_many(["a", "b"], [a, b])
    store.replace_prepared(buffer.finish())
    assert store.index_keys("tiers", "api") == ["a", "b"]
    assert store.index_keys("tiers", "web") == ["a"]
    store.delete_key("a")
    assert store.list_index_func_values("tiers") == ["api"]


# ---------------------------------------------------------------------------- the queue


def test_a_pending_prepared_relist_gives_tombstones_their_object() -> None:
    """A key only in a relist still queued, missing from the next relist:
    its tombstone carries the object decoded from the pending relist."""
    store = CompactStore()
    fifo = RealFIFO(known_objects=store, list_buffer=store.new_list_buffer)
    buffer = fifo.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["x/p", "x/q"], [pod("p", "x", "1"), pod("q", "x", "1")])
    fifo.replace(buffer.finish(), "1")
    again = fifo.new_list_buffer()
    assert again is not None
    again.put_many(["x/p"], [pod("p", "x", "2")])
    fifo.replace(again.finish(), "2")
    first = fifo.pop(lambda entry, initial: None)
    second = fifo.pop(lambda entry, initial: None)
    assert isinstance(first, Relist)
    assert isinstance(second, Relist)
    assert isinstance(second.objects, PreparedList)
    assert second.keys == ("x/p",)
    assert second.deleted == (DeletedFinalStateUnknown("x/q", pod("q", "x", "1")),)
    # A relist of a prepared list reads as its deltas, objects decoded.
    assert [d.object for d in second][:1] == [pod("p", "x", "2")]
    assert second == Relist((pod("p", "x", "2"),), ("x/p",), second.deleted, "2")


def test_a_fifo_without_list_buffers_offers_none() -> None:
    assert RealFIFO().new_list_buffer() is None


def test_the_queue_transform_is_applied_once_by_the_buffer() -> None:
    calls: list[str] = []

    def mark(obj: Any) -> Any:
        calls.append(obj["metadata"]["name"])
        return {**obj, "marked": True}

    store = CompactStore()
    fifo = RealFIFO(known_objects=store, transform=mark, list_buffer=store.new_list_buffer)
    buffer = fifo.new_list_buffer()
    assert buffer is not None
    buffer.put_many(["x/p"], [pod("p", "x", "1")])
    fifo.replace(buffer.finish(), "1")
    entry = fifo.pop(lambda entry, initial: None)
    assert calls == ["p"]
    assert isinstance(entry, Relist)
    assert entry.objects[0]["marked"] is True


def test_an_informer_with_list_buffers_paginates_its_lists() -> None:
    """At rv "0" a server answers in one response: a compact informer lists
    first at "" in pages, unless told otherwise; the default store is as it was."""

    def first_list(store: Any, config: ReflectorConfig | None = None) -> tuple[str, int]:
        lw = FakeListerWatcher()
        informer = SharedIndexInformer(lw, name="pods", store=store, reflector_config=config)
        informer.start()
        try:
            assert informer.wait_synced(10)
            first = lw.wait_for_lists(1)[0]
        finally:
            informer.stop()
        return first.resource_version, first.limit

    assert first_list(CompactStore) == ("", 500)
    assert first_list(None) == ("0", 500)
    told = ReflectorConfig(description="pods", paginate_lists=False)
    assert first_list(CompactStore, told) == ("0", 500)


def test_a_reflector_writing_to_a_compact_store_collects_in_its_buffer() -> None:
    """The store itself offers new_list_buffer: a reflector writing to it
    directly collects the list encoded, and replace adopts it."""
    from informers.reflector import Reflector

    store = CompactStore(indexers=dict(INDEXERS))
    handed: list[Any] = []
    replace = store.replace

    def spy(objs: Any, rv: str) -> None:
        handed.append(objs)
        replace(objs, rv)

    store.replace = spy  # type: ignore[method-assign]
    lw = FakeListerWatcher()
    lw.script_list(*pages([pod("p", "x", "1", "b"), pod("q", "x", "1")], "5", 1))
    reflector = Reflector(lw, store, config=ReflectorConfig(description="pods", page_size=1))
    stop = threading.Event()
    thread = threading.Thread(target=reflector.run, args=(stop,), name="reflector-test")
    thread.start()
    try:
        assert reflector.wait_for(lambda s: s.mem.last_sync_rv == "5", 10)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    assert [type(h) for h in handed] == [EncodedList]
    assert sorted(store.list_keys()) == ["x/p", "x/q"]
    assert store.index_keys("app", "b") == ["x/p"]
