"""Sources on their own (no controller): what they push into a sink, their
sync and idle points, and their threads."""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from runtime_helpers import RecordingSink

from informers.cache.informer import SharedIndexInformer
from informers.errors import InformerStateError
from informers.testing import ApiServer, FakeClock, FakeListerWatcher
from informers.toolkit.runtime import (
    ChannelSource,
    InformerSource,
    PeriodicSource,
    Request,
    generation_changed,
    label_changed,
)
from informers.toolkit.workqueue import (
    PRIORITY_HIGH,
    PRIORITY_LOW,
    PriorityQueue,
    RateLimitingQueue,
)
from informers.util.backoff import ExponentialBackoff, jittered
from informers.util.channels import Channel
from informers.wire.objects import DeletedFinalStateUnknown
from informers.wire.resources import PODS
from tests.helpers import new_pod

R = Request


# --------------------------------------------------------------------------- informer


def test_informer_source_pushes_the_initial_list_before_it_counts_as_synced(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer], sink: RecordingSink
) -> None:
    for n in range(20):
        api_server.create(PODS, new_pod(f"p{n:02d}"))
    informer = make_informer()
    source = InformerSource(informer)
    assert source.name == "informer pods"
    source.start(sink)
    assert not source.has_synced()  # the informer is not running yet
    informer.start()
    assert source.wait_synced(10)
    assert sorted(sink.snapshot()) == [R("default", f"p{n:02d}") for n in range(20)]
    source.stop()
    source.stop()  # idempotent
    assert informer.registrations() == []


def test_informer_source_events_and_predicates(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer], sink: RecordingSink
) -> None:
    informer = make_informer()
    informer.start()
    assert informer.wait_synced(10)
    source = InformerSource(informer, predicates=[generation_changed()])
    source.start(sink)
    assert source.wait_synced(10)
    created = api_server.create(PODS, new_pod("web"))
    assert sink.wait_for(lambda items: items == [R("default", "web")])
    # a metadata-only change keeps the generation: dropped by the predicate ...
    created["metadata"]["labels"] = {"tier": "front"}
    labelled = api_server.update(PODS, created)
    # ... a spec change (the image: a pod's spec allows little else) passes
    labelled["spec"]["containers"][0]["image"] = "nginx"
    api_server.update(PODS, labelled)
    api_server.delete(PODS, "web", "default")
    assert sink.wait_for(lambda items: len(items) == 3)
    assert source.wait_idle(5)
    assert sink.snapshot() == [R("default", "web")] * 3  # add, spec update, delete
    source.stop()


def test_informer_source_filters_with_plain_callables_and_maps(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer], sink: RecordingSink
) -> None:
    informer = make_informer()
    source = InformerSource(
        informer,
        predicates=lambda o: o["metadata"].get("labels", {}).get("app") == "web",
        map_func=lambda o: [R("apps", o["metadata"]["labels"]["app"]), "apps/all"],
    )
    source.start(sink)
    informer.start()
    assert source.wait_synced(10)
    api_server.create(PODS, new_pod("a", app="web"))
    api_server.create(PODS, new_pod("b", app="db"))
    api_server.create(PODS, new_pod("c", app="web"))
    assert sink.wait_for(lambda items: len(items) == 4)
    assert informer.wait_idle(10)
    assert sink.snapshot() == [R("apps", "web"), R("apps", "all")] * 2
    source.stop()


def test_informer_source_update_maps_old_and_new(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer], sink: RecordingSink
) -> None:
    informer = make_informer()
    source = InformerSource(
        informer,
        predicates=[label_changed()],
        map_func=lambda o: [R("teams", o["metadata"].get("labels", {}).get("team", "none"))],
    )
    source.start(sink)
    informer.start()
    assert source.wait_synced(10)
    created = api_server.create(PODS, new_pod("web", team="a"))
    created["metadata"]["labels"] = {"team": "b"}
    api_server.update(PODS, created)
    assert sink.wait_for(lambda items: len(items) == 3)
    assert sink.snapshot() == [R("teams", "a"), R("teams", "a"), R("teams", "b")]
    source.stop()


def test_informer_source_keys_a_missed_delete_by_its_tombstone(sink: RecordingSink) -> None:
    lw = FakeListerWatcher()
    lw.set_objects([{"metadata": {"name": "gone", "namespace": "ns", "resourceVersion": "5"}}], "5")
    informer = SharedIndexInformer(
        lw, name="fake", backoff=ExponentialBackoff(initial=0.01, cap=0.05)
    )
    seen: list[Any] = []
    source = InformerSource(informer, predicates=[lambda o: seen.append(o) or True])
    source.start(sink)
    informer.start()
    try:
        assert source.wait_synced(10)
        lw.set_objects([], "7")  # the object vanished while the watch was broken
        lw.wait_for_watch().fail(ConnectionError("dropped"))
        assert sink.wait_for(lambda items: len(items) == 2)
        assert sink.snapshot() == [R("ns", "gone"), R("ns", "gone")]
        # the predicate saw the last known state, not the tombstone
        assert not any(isinstance(o, DeletedFinalStateUnknown) for o in seen)
    finally:
        source.stop()
        informer.stop()


def test_informer_source_lifecycle_errors(sink: RecordingSink) -> None:
    informer = SharedIndexInformer(FakeListerWatcher(), name="fake")
    source = InformerSource(informer)
    source.start(sink)
    with pytest.raises(InformerStateError, match="already started"):
        source.start(sink)
    source.stop()
    with pytest.raises(InformerStateError, match="stopped"):
        source.start(sink)
    assert not source.wait_synced(0)
    with pytest.raises(TypeError, match="add_event_handler"):
        InformerSource(object())
    with pytest.raises(TypeError, match="map_func"):
        InformerSource(informer, map_func=3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- periodic


class Calls:
    """Records the clock time of each call of a periodic function."""

    def __init__(self, clock: FakeClock, results: list[Any] | None = None) -> None:
        self.clock = clock
        self.cond = threading.Condition()
        self.times: list[float] = []
        self.results = results or []
        self.block: dict[int, threading.Event] = {}  # call number -> released by
        self.running = threading.Event()

    def __call__(self) -> list[Any]:
        with self.cond:
            number = len(self.times)
            self.times.append(self.clock.now())
            self.cond.notify_all()
        release = self.block.get(number)
        if release is not None:
            self.running.set()
            assert release.wait(10)
        return list(self.results)

    def wait_for(self, count: int) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.times) >= count, 10)


def test_periodic_source_runs_at_once_then_every_period(sink: RecordingSink) -> None:
    clock = FakeClock()
    calls = Calls(clock, [R("ns", "a"), "ns/b"])
    source = PeriodicSource(calls, every=10, clock=clock, name="resync")
    source.start(sink)
    assert source.wait_synced(5)
    assert sink.snapshot() == [R("ns", "a"), R("ns", "b")]
    assert [t.name for t in threading.enumerate() if t.name == "periodic-resync"]
    for n in range(2, 5):
        assert clock.wait_for_waiters(1)
        clock.advance(10)
        assert calls.wait_for(n)
    assert calls.times == [1000.0, 1010.0, 1020.0, 1030.0]
    source.stop()
    assert not [t for t in threading.enumerate() if t.name == "periodic-resync"]


def test_periodic_source_waits_after_the_call_ended(sink: RecordingSink) -> None:
    """sliding=True: the period starts when the previous call returned."""
    clock = FakeClock()
    calls = Calls(clock)
    release = threading.Event()
    calls.block[1] = release
    source = PeriodicSource(calls, every=10, clock=clock)
    source.start(sink)
    assert clock.wait_for_waiters(1)
    clock.advance(10)  # second call starts at 1010 and blocks
    assert calls.running.wait(5)
    assert not source.wait_idle(0)
    clock.advance(100)  # the call takes 100 s of the clock
    release.set()
    assert source.wait_idle(5)
    assert clock.wait_for_waiters(1)  # now waiting from 1110
    clock.advance(10)
    assert calls.wait_for(3)
    assert calls.times == [1000.0, 1010.0, 1120.0]
    source.stop()


def test_periodic_source_jitter(sink: RecordingSink) -> None:
    clock = FakeClock()
    calls = Calls(clock)
    source = PeriodicSource(calls, every=10, jitter=0.5, clock=clock, rng=random.Random(7))
    expected = random.Random(7)
    source.start(sink)
    at = 1000.0
    for n in range(2, 5):
        delay = jittered(10, 0.5, expected)
        assert 10 <= delay < 15
        assert clock.wait_for_waiters(1)
        clock.advance(delay)
        at += delay
        assert calls.wait_for(n)
        assert calls.times[-1] == pytest.approx(at)
    source.stop()


def test_periodic_source_survives_errors_and_bad_items(
    sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    state = {"n": 0}

    def func() -> list[Any]:
        state["n"] += 1
        if state["n"] == 1:
            raise RuntimeError("boom")
        return [42, "a/b/c", "ns/ok"]

    source = PeriodicSource(func, every=1, clock=clock)
    with caplog.at_level(logging.ERROR, "informers.toolkit.runtime.sources"):
        source.start(sink)
        assert source.wait_synced(5)  # the first call raised: still synced
        assert clock.wait_for_waiters(1)
        clock.advance(1)
        assert sink.wait_for(lambda items: items == [R("ns", "ok")])
        source.stop()
    assert "periodic function raised" in caplog.text
    assert "not a request" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"every": 0}, ValueError),
        ({"every": -1}, ValueError),
        ({"every": float("inf")}, ValueError),
        ({"every": 1, "jitter": -0.1}, ValueError),
        ({"every": "1"}, TypeError),
    ],
)
def test_periodic_source_validation(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        PeriodicSource(lambda: [], **kwargs)
    with pytest.raises(TypeError, match="callable"):
        PeriodicSource(3, every=1)  # type: ignore[arg-type]


def test_stop_before_start_and_double_start(sink: RecordingSink) -> None:
    source = PeriodicSource(lambda: [], every=1, clock=FakeClock())
    source.stop()
    assert not source.wait_synced(0)
    with pytest.raises(InformerStateError):
        source.start(sink)
    other = PeriodicSource(lambda: [], every=1, clock=FakeClock())
    other.start(sink)
    with pytest.raises(InformerStateError):
        other.start(sink)
    other.stop()


# --------------------------------------------------------------------------- channel


def test_channel_source_initial_state_then_live_items(sink: RecordingSink) -> None:
    channel: Channel[Any] = Channel()
    channel.put(R("ns", "a"))
    channel.put("ns/b")
    channel.put({"metadata": {"name": "c", "namespace": "ns"}})
    source = ChannelSource(channel, name="events")
    source.start(sink)
    assert source.wait_synced(5)
    assert sink.snapshot() == [R("ns", "a"), R("ns", "b"), R("ns", "c")]
    channel.put("cluster-thing")
    assert sink.wait_for(lambda items: len(items) == 4)
    assert sink.snapshot()[-1] == R("", "cluster-thing")
    source.stop()
    assert not [t for t in threading.enumerate() if t.name == "channel-events"]


def test_channel_source_objects_through_predicates_and_map(sink: RecordingSink) -> None:
    channel: Channel[Any] = Channel()
    source = ChannelSource(
        channel,
        predicates=[lambda o: o.get("keep", False)],
        map_func=lambda o: [R("owners", o["owner"])],
    )
    source.start(sink)
    assert source.wait_synced(5)  # nothing was queued: synced at once
    channel.put({"keep": False, "owner": "x"})
    channel.put({"keep": True, "owner": "y"})
    channel.put(R("direct", "z"))  # requests bypass predicates and map
    assert sink.wait_for(lambda items: len(items) == 2)
    assert sink.snapshot() == [R("owners", "y"), R("direct", "z")]
    source.stop()


def test_channel_source_ends_when_the_channel_closes(
    sink: RecordingSink, caplog: pytest.LogCaptureFixture
) -> None:
    channel: Channel[Any] = Channel()
    for item in ("ns/a", 42, "ns/b"):
        channel.put(item)
    channel.close()
    source = ChannelSource(channel, name="closing")
    with caplog.at_level(logging.INFO, "informers.toolkit.runtime.sources"):
        source.start(sink)
        assert source.wait_synced(5)
        assert source.wait_idle(5)
        for thread in threading.enumerate():  # the source's thread ends by itself
            if thread.name == "channel-closing":
                thread.join(5)
                assert not thread.is_alive()
    assert sink.snapshot() == [R("ns", "a"), R("ns", "b")]
    assert "skipping a channel item" in caplog.text
    source.stop()


def test_channel_source_reads_a_stdlib_queue(sink: RecordingSink) -> None:
    feed: queue.Queue[Any] = queue.Queue()
    feed.put("ns/first")
    source = ChannelSource(feed)
    source.start(sink)
    assert source.wait_synced(5)
    feed.put(R("ns", "second"))
    assert sink.wait_for(lambda items: len(items) == 2)
    source.stop()
    with pytest.raises(TypeError, match="get"):
        ChannelSource(object())


class RecordingPriorityQueue(PriorityQueue[Request]):
    """A PriorityQueue that records every add with its priority."""

    def __init__(self) -> None:
        super().__init__()
        self.cond = threading.Condition()
        self.adds: list[tuple[Request, int]] = []

    def add(self, item: Request, priority: int = PRIORITY_HIGH) -> None:
        with self.cond:
            self.adds.append((item, priority))
            self.cond.notify_all()
        super().add(item, priority)

    def wait_for(self, entry: tuple[Request, int]) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: entry in self.adds, 10)


def test_informer_source_adds_initial_list_and_resyncs_low_events_high(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer]
) -> None:
    for name in ["p0", "p1"]:
        api_server.create(PODS, new_pod(name))
    informer = make_informer(resync_period=0.2)
    queue = RecordingPriorityQueue()
    source = InformerSource(informer)
    source.start(queue)
    informer.start()
    try:
        assert source.wait_synced(10)
        with queue.cond:
            assert sorted(queue.adds[:2]) == [(R("default", n), PRIORITY_LOW) for n in ["p0", "p1"]]
        assert queue.priority(R("default", "p0")) == PRIORITY_LOW
        api_server.create(PODS, new_pod("fresh"))
        assert queue.wait_for((R("default", "fresh"), PRIORITY_HIGH))
        p0 = api_server.get(PODS, "p0", "default")
        p0["metadata"]["labels"] = {"touched": "yes"}
        api_server.update(PODS, p0)
        assert queue.wait_for((R("default", "p0"), PRIORITY_HIGH))  # an update: raised
        assert queue.priority(R("default", "p0")) == PRIORITY_HIGH
        api_server.delete(PODS, "p1", "default")
        assert queue.wait_for((R("default", "p1"), PRIORITY_HIGH))
        # a resync repeats an unchanged object: low
        assert queue.wait_for((R("default", "fresh"), PRIORITY_LOW))
    finally:
        source.stop()
        queue.shutdown()


def test_informer_source_into_a_plain_queue_adds_without_priority(
    api_server: ApiServer, make_informer: Callable[..., SharedIndexInformer]
) -> None:
    api_server.create(PODS, new_pod("p0"))
    informer = make_informer()
    queue: RateLimitingQueue[Request] = RateLimitingQueue()
    source = InformerSource(informer)
    source.start(queue)
    informer.start()
    try:
        assert source.wait_synced(10)
        assert queue.get(timeout=0) == (R("default", "p0"), False)
    finally:
        source.stop()
        queue.shutdown()
