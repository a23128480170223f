"""informers.cache.reflector.driver: the threaded reflector driver, against
FakeListerWatcher and FakeClock."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from informers.cache.reflector.config import ReflectorConfig
from informers.cache.reflector.driver import BackoffManager, Reflector
from informers.cache.reflector.machine import BackingOff, Next, ReflectorState, Watching
from informers.errors import (
    ExpiredError,
    TooManyRequestsError,
    WatchDecodeError,
    WatchStalledError,
)
from informers.rest.listwatch import ListOptions
from informers.testing.fake import FakeClock, FakeListerWatcher, FakeWatch
from tests.helpers import pod


class RecordingStore:
    def __init__(self) -> None:
        self.ops: list[tuple[str, Any]] = []
        self.cond = threading.Condition()

    def _record(self, op: str, value: Any) -> None:
        with self.cond:
            self.ops.append((op, value))
            self.cond.notify_all()

    def add(self, obj: Any) -> None:
        self._record("add", obj["metadata"]["name"])

    def update(self, obj: Any) -> None:
        self._record("update", obj["metadata"]["name"])

    def delete(self, obj: Any) -> None:
        self._record("delete", obj["metadata"]["name"])

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        names = sorted(o["metadata"]["name"] for o in objects)
        self._record("replace", (names, resource_version))

    def resync(self) -> None:
        self._record("resync", None)

    def wait_ops(self, n: int, timeout: float = 5.0) -> list[tuple[str, Any]]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.ops) >= n, timeout), self.ops
            return list(self.ops)


class Running:
    def __init__(self, reflector: Reflector) -> None:
        self.reflector = reflector
        self.stop = threading.Event()
        self.thread = threading.Thread(target=reflector.run, args=(self.stop,), name="test-refl")

    def __enter__(self) -> Running:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()

    def wait_state(self, pred: Callable[[ReflectorState], bool]) -> ReflectorState:
        assert self.reflector.wait_for(pred, 5.0), self.reflector.state
        return self.reflector.state


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lw() -> FakeListerWatcher:
    return FakeListerWatcher()


@pytest.fixture
def store() -> RecordingStore:
    return RecordingStore()


def make(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock, **config: Any
) -> Reflector:
    cfg = ReflectorConfig(description="pods", **config)
    return Reflector(lw, store, config=cfg, clock=clock, rng=random.Random(1))


def test_list_then_watch_applies_events_in_order(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([pod("a", "2"), pod("b", "3")], "5")
    refl = make(lw, store, clock)
    with Running(refl):
        watch = lw.wait_for_watch()
        assert watch.options.resource_version == "5"
        assert watch.options.allow_watch_bookmarks
        assert 300 <= (watch.options.timeout_seconds or 0) <= 600
        watch.add(pod("c", "6"))
        watch.modify(pod("a", "7"))
        watch.delete(pod("b", "8"))
        watch.bookmark("9")
        ops = store.wait_ops(4)
        assert ops == [
            ("replace", (["a", "b"], "5")),
            ("add", "c"),
            ("update", "a"),
            ("delete", "b"),
        ]
        assert refl.wait_for(lambda s: s.mem.last_sync_rv == "9", 5)
        assert refl.last_sync_resource_version() == "9"
    assert lw.list_calls[0] == ListOptions(resource_version="0", limit=500)


def test_clean_end_rewatches_from_last_rv_without_relist(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    with Running(make(lw, store, clock)):
        w1 = lw.wait_for_watch()
        w1.add(pod("a", "6"))
        store.wait_ops(2)
        clock.advance(10)  # the watch lasted long enough
        w1.close()
        w2 = lw.wait_for_watch(2)
        assert w2.options.resource_version == "6"
    assert len(lw.list_calls) == 1


def test_list_failure_backs_off_then_relists(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    errors: list[BaseException] = []
    lw.script_list(ConnectionResetError("boom"))
    lw.set_objects([pod("a", "1")], "4")
    refl = make(lw, store, clock)
    refl.set_watch_error_handler(lambda r, e: errors.append(e))
    with Running(refl) as run:
        run.wait_state(lambda s: isinstance(s, BackingOff))
        assert clock.wait_for_waiters()
        assert len(lw.list_calls) == 1
        clock.advance(1.7)  # 0.8 s base + up to 0.8 s jitter
        lw.wait_for_watch()
        assert store.wait_ops(1) == [("replace", (["a"], "4"))]
    assert len(errors) == 1
    assert isinstance(errors[0], ConnectionResetError)
    assert refl.errors() == errors


def test_watch_429_honours_retry_after_and_rewatches(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    lw.script_watch(TooManyRequestsError(429, "TooManyRequests", retry_after=7.0))
    with Running(make(lw, store, clock)) as run:
        run.wait_state(lambda s: s == BackingOff(s.mem, Next.REWATCH))
        assert clock.wait_for_waiters()
        clock.advance(6.9)
        assert not lw.watches
        clock.advance(0.2)
        w = lw.wait_for_watch()
        assert w.options.resource_version == "5"
    assert len(lw.list_calls) == 1


def test_watch_410_relists_at_last_rv(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([pod("a", "1")], "5")
    with Running(make(lw, store, clock)):
        w = lw.wait_for_watch()
        w.bookmark("8")
        w.error(410, "Expired", "too old resource version")
        assert clock.wait_for_waiters()
        lw.set_objects([pod("b", "9")], "9")
        clock.advance(2)
        lw.wait_for_watch(2)
        assert store.wait_ops(2)[1] == ("replace", (["b"], "9"))
    assert lw.list_calls[1].resource_version == "8"


def test_malformed_line_reports_and_relists(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    errors: list[BaseException] = []
    lw.set_objects([], "5")
    refl = make(lw, store, clock)
    refl.set_watch_error_handler(lambda r, e: errors.append(e))
    with Running(refl) as run:
        w = lw.wait_for_watch()
        w.fail(WatchDecodeError("pods: watch line of 12 bytes is not JSON"))
        run.wait_state(lambda s: isinstance(s, BackingOff))
        assert clock.wait_for_waiters()
        clock.advance(2)
        lw.wait_for_watch(2)
    assert len(lw.list_calls) == 2
    assert isinstance(errors[0], WatchDecodeError)


def test_stop_interrupts_an_open_watch(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    with Running(make(lw, store, clock)):
        w = lw.wait_for_watch()
    assert w.stopped


def test_stop_interrupts_a_backoff(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.script_list(ExpiredError(410, "Expired"), ExpiredError(410, "Expired"))
    with Running(make(lw, store, clock)) as run:
        run.wait_state(lambda s: isinstance(s, BackingOff))
        assert clock.wait_for_waiters()
    assert [c.resource_version for c in lw.list_calls] == ["0", ""]


def test_streaming_list_replaces_on_end_bookmark_and_keeps_watching(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    with Running(make(lw, store, clock, use_watch_list=True)) as run:
        w = lw.wait_for_watch()
        assert w.options.send_initial_events
        assert w.options.resource_version_match == "NotOlderThan"
        w.add(pod("a", "3"))
        w.add(pod("b", "4"))
        w.delete(pod("a", "5"))
        w.bookmark("6", initial_events_end=True)
        assert store.wait_ops(1) == [("replace", (["b"], "6"))]
        w.add(pod("c", "7"))
        assert store.wait_ops(2)[1] == ("add", "c")
        run.wait_state(lambda s: isinstance(s, Watching) and s.rv == "7")
    assert clock.pending_timers() == 0  # the deadline was cancelled
    assert not lw.list_calls


def test_streaming_list_deadline_falls_back_to_list(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([pod("x", "2")], "3")
    refl = make(lw, store, clock, use_watch_list=True, watch_list_deadline=10.0)
    with Running(refl) as run:
        w = lw.wait_for_watch()
        w.add(pod("a", "3"))
        clock.advance(10)
        assert store.wait_ops(1) == [("replace", (["x"], "3"))]
        w2 = lw.wait_for_watch(2)
        assert not w2.options.send_initial_events
        run.wait_state(lambda s: isinstance(s, Watching))
        assert not refl.state.mem.watch_list
    assert w.stopped


def test_resync_calls_store_resync_when_due(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    due = [False, True]
    refl = Reflector(
        lw,
        store,
        config=ReflectorConfig(),
        clock=clock,
        resync_period=30,
        should_resync=lambda: due.pop(0),
    )
    with Running(refl):
        lw.wait_for_watch()
        store.wait_ops(1)
        clock.advance(30)
        clock.advance(30)
        assert store.wait_ops(2)[1] == ("resync", None)
        assert len(store.ops) == 2
    assert clock.pending_timers() == 0


def test_run_twice_concurrently_is_refused(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    refl = make(lw, store, clock)
    with Running(refl):
        lw.wait_for_watch()
        with pytest.raises(RuntimeError):
            refl.run(threading.Event())


def test_backoff_manager_doubles_caps_and_resets() -> None:
    clock = FakeClock()

    class NoJitter(random.Random):
        def random(self) -> float:
            return 0.0

    b = BackoffManager(clock=clock, rng=NoJitter())
    delays = []
    for _ in range(8):
        delays.append(b.next_delay())
        clock.advance(1)
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    clock.advance(121)
    assert b.next_delay() == 0.8


def test_backoff_jitter_is_bounded() -> None:
    b = BackoffManager(rng=random.Random(3))
    d = b.next_delay()
    assert 0.8 <= d <= 1.6


def _events(w: FakeWatch) -> Iterator[dict[str, Any]]:
    return iter(w)


def test_fake_watch_iteration_raises_and_stops() -> None:
    w = FakeWatch()
    w.add(pod("a", "1"))
    w.fail(ValueError("x"))
    it = _events(w)
    assert next(it)["type"] == "ADDED"
    with pytest.raises(ValueError, match="x"):
        next(it)


class _BookmarkRacesDeadline(FakeWatch):
    """A streaming list whose initial-events-end bookmark was already read
    when the deadline fired: the deadline stops the stream, yet the bookmark
    is still handed to the reflector (as bytes in a socket buffer would be)."""

    def __init__(self, clock: FakeClock, deadline: float) -> None:
        super().__init__()
        self._clock = clock
        self._deadline = deadline

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield {"type": "ADDED", "object": pod("a", "3")}
        self._clock.advance(self._deadline)  # the deadline timer runs here: stop()
        end = {"resourceVersion": "6", "annotations": {"k8s.io/initial-events-end": "true"}}
        yield {"type": "BOOKMARK", "object": {"metadata": end}}
        # stopped: the stream ends here


def test_deadline_firing_as_the_end_bookmark_arrives_rewatches(
    lw: FakeListerWatcher,
    store: RecordingStore,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    lw.script_watch(_BookmarkRacesDeadline(clock, 10.0))
    refl = make(lw, store, clock, use_watch_list=True, watch_list_deadline=10.0)
    with Running(refl):
        assert store.wait_ops(1) == [("replace", (["a"], "6"))]
        # The stream ended after the bookmark: a plain re-watch from its RV,
        # not an "unexpected error" followed by a relist after a backoff.
        w2 = lw.wait_for_watch(2, timeout=2.0)
        assert w2.options.resource_version == "6"
        assert not w2.options.send_initial_events
    assert not lw.list_calls
    assert refl.errors() == []
    assert "unexpected error" not in caplog.text


class _RecordingClock(FakeClock):
    """A FakeClock that records the timeout of every wait."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float | None] = []
        self.recorded = threading.Condition()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        with self.recorded:
            self.timeouts.append(timeout)
            self.recorded.notify_all()
        return super().wait(event, timeout)


@pytest.mark.parametrize("retry_after", [0.0, -3.0])
def test_429_with_a_zero_retry_after_still_backs_off(
    lw: FakeListerWatcher, store: RecordingStore, retry_after: float
) -> None:
    # "Retry-After: 0" (or a negative value, clamped to 0) gives no delay: the
    # reflector must fall back to its backoff instead of re-watching in a
    # tight loop against a server that is throttling it.
    clock = _RecordingClock()
    lw.set_objects([], "5")
    lw.script_watch(TooManyRequestsError(429, "TooManyRequests", retry_after=retry_after))
    with Running(make(lw, store, clock)):
        with clock.recorded:
            assert clock.recorded.wait_for(lambda: clock.timeouts, 5.0)
        first = clock.timeouts[0]
        assert first is not None
        assert first >= 0.8
        assert not lw.watches  # still waiting: the refused watch is not retried yet
        clock.advance(first)
        assert lw.wait_for_watch().options.resource_version == "5"
    assert len(lw.list_calls) == 1


class _LingeringTimer:
    """A timer thread that, like a real one, is still alive for a moment after
    its callback returned: here until it is cancelled (or released)."""

    def __init__(self, callback: Callable[[], None], name: str) -> None:
        self.fire = threading.Event()
        self.fired = threading.Event()
        self.cancelled = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(callback,), name=name)
        self.thread.start()

    def _run(self, callback: Callable[[], None]) -> None:
        while not self.cancelled.is_set():
            if self.fire.wait(0.01):
                callback()
                self.fired.set()
                break
        self.cancelled.wait()

    def cancel(self) -> None:
        self.cancelled.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


class _LingeringClock(FakeClock):
    def __init__(self) -> None:
        super().__init__()
        self.timers: list[_LingeringTimer] = []
        self.made = threading.Condition()

    def call_later(self, delay: float, callback: Callable[[], None], name: str) -> Any:
        timer = _LingeringTimer(callback, name)
        with self.made:
            self.timers.append(timer)
            self.made.notify_all()
        return timer


def test_stop_joins_the_resync_timer_that_armed_the_next_one(
    lw: FakeListerWatcher, store: RecordingStore
) -> None:
    clock = _LingeringClock()
    lw.set_objects([], "5")
    # Only the resync timers are counted here: no progress watchdog.
    refl = Reflector(
        lw,
        store,
        config=ReflectorConfig(watch_progress_timeout=None),
        clock=clock,
        resync_period=30,
        should_resync=lambda: True,
    )
    try:
        with Running(refl):
            lw.wait_for_watch()
            with clock.made:
                assert clock.made.wait_for(lambda: len(clock.timers) == 1, 5.0)
            first = clock.timers[0]
            first.fire.set()  # its callback resyncs and arms the next timer
            assert first.fired.wait(5.0)
            assert len(clock.timers) == 2
        # run() returned: every timer thread it made has been joined.
        assert [t.thread.name for t in clock.timers if t.thread.is_alive()] == []
    finally:
        for timer in clock.timers:
            timer.cancel()
    assert ("resync", None) in store.ops


def test_wait_for_calls_the_predicate_without_holding_the_reflector_lock(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    # The predicate is user code: under the lock, one that blocks (or takes
    # another lock) would stall the reflector thread in its next transition.
    lw.set_objects([], "5")
    refl = make(lw, store, clock)
    lock_free: list[bool] = []

    def other_thread_can_lock() -> bool:
        got: list[bool] = []

        def probe() -> None:
            acquired = refl._cond.acquire(blocking=False)
            if acquired:
                refl._cond.release()
            got.append(acquired)

        t = threading.Thread(target=probe, name="test-lock-probe")
        t.start()
        t.join()
        return got[0]

    def predicate(state: ReflectorState) -> bool:
        lock_free.append(other_thread_can_lock())
        return isinstance(state, Watching)

    with Running(refl):
        assert refl.wait_for(predicate, 5.0)
        lw.wait_for_watch()
    assert lock_free
    assert all(lock_free)


def test_a_transition_is_published_only_after_its_store_call(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    # A reader that sees an RV in the state also sees its event in the store:
    # while the store call of an event is running, the state is the one before.
    entered, release = threading.Event(), threading.Event()
    record = store.add

    def slow_add(obj: Any) -> None:
        if obj["metadata"]["name"] == "a":
            entered.set()
            assert release.wait(10)
        record(obj)

    store.add = slow_add  # type: ignore[method-assign]
    lw.set_objects([], "5")
    refl = make(lw, store, clock)
    with Running(refl) as run:
        w = lw.wait_for_watch()
        run.wait_state(lambda s: isinstance(s, Watching))
        w.add(pod("a", "6"))
        assert entered.wait(5)
        assert refl.last_sync_resource_version() == "5"
        assert refl.state.mem.last_sync_rv == "5"
        release.set()
        run.wait_state(lambda s: s.mem.last_sync_rv == "6")
        assert store.wait_ops(2)[1] == ("add", "a")


def _woken_by(refl: Reflector, watch: FakeWatch, rv: str) -> bool:
    """Start a thread waiting for ``rv``; once it has checked the state (and
    is about to sleep, or sleeping), send the event at ``rv``; whether the
    waiter returned true within 10 s (its own timeout is 60 s)."""
    checked, done = threading.Event(), threading.Event()
    seen: list[bool] = []

    def reached(state: ReflectorState) -> bool:
        checked.set()
        return state.mem.last_sync_rv == rv

    def wait() -> None:
        seen.append(refl.wait_for(reached, 60))
        done.set()

    waiter = threading.Thread(target=wait, name="test-waiter")
    waiter.start()
    assert checked.wait(5)
    watch.add(pod(f"p{rv}", rv))
    finished = done.wait(10)
    waiter.join(70)
    return finished and seen == [True]


def test_a_waiter_is_woken_by_every_publish(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    # The driver publishes without the lock when nobody waits; a thread that
    # starts waiting just as an event is applied must still be woken by it
    # (a lost wake-up would leave it waiting for its whole 60 s timeout,
    # since no further event comes).
    lw.set_objects([], "5")
    refl = make(lw, store, clock)
    with Running(refl) as run:
        w = lw.wait_for_watch()
        run.wait_state(lambda s: isinstance(s, Watching))
        for rv in range(6, 46):
            assert _woken_by(refl, w, str(rv)), f"the waiter for rv {rv} was not woken"


def test_backoff_manager_reads_the_clock_outside_its_lock() -> None:
    # The clock has a lock of its own (FakeClock does): holding ours while
    # asking it would hold two locks at once.
    held: list[bool] = []

    class Probe(FakeClock):
        manager: BackoffManager | None = None

        def now(self) -> float:
            if self.manager is not None:
                held.append(self.manager._lock.locked())
            return super().now()

    clock = Probe()
    clock.manager = BackoffManager(clock=clock, rng=random.Random(1))
    clock.manager.next_delay()
    clock.manager.next_delay()
    assert held == [False, False]


def test_a_silent_watch_is_rewatched_from_the_last_rv(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([pod("a", "2")], "5")
    errors: list[BaseException] = []
    refl = make(lw, store, clock, watch_progress_timeout=100.0)
    refl.set_watch_error_handler(lambda _r, e: errors.append(e))
    with Running(refl):
        w1 = lw.wait_for_watch()
        w1.add(pod("b", "6"))
        store.wait_ops(2)
        assert clock.wait_for_timers(1)  # the watchdog is armed
        # Checks every 25 s; the event is first seen by the check at 25 s, so
        # the watch is given up between 100 and 125 s after it.
        for _ in range(4):
            clock.advance(25)
            assert clock.wait_for_timers(1)
        assert not w1.stopped
        clock.advance(25)  # 100 s of silence since the check that saw the event
        w2 = lw.wait_for_watch(2)
        assert w1.stopped
        assert w2.options.resource_version == "6"  # re-watched, no relist
        assert len(lw.list_calls) == 1
    assert [type(e) for e in errors] == [WatchStalledError]
    assert "delivered nothing for 100 s" in str(errors[0])
    assert clock.pending_timers() == 0


def test_events_keep_the_watchdog_quiet(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    refl = make(lw, store, clock, watch_progress_timeout=100.0)
    with Running(refl):
        w = lw.wait_for_watch()
        store.wait_ops(1)
        for rv in range(6, 16):  # something every 50 s, for 500 s
            assert clock.wait_for_timers(1)
            w.bookmark(str(rv))
            assert refl.wait_for(lambda s, rv=rv: s.mem.last_sync_rv == str(rv), 5)
            clock.advance(25)
            assert clock.wait_for_timers(1)
            clock.advance(25)
        assert not w.stopped
        assert len(lw.watch_calls) == 1
    assert clock.pending_timers() == 0


def test_the_watchdog_can_be_turned_off(
    lw: FakeListerWatcher, store: RecordingStore, clock: FakeClock
) -> None:
    lw.set_objects([], "5")
    with Running(make(lw, store, clock, watch_progress_timeout=None)):
        w = lw.wait_for_watch()
        store.wait_ops(1)
        assert clock.pending_timers() == 0
        clock.advance(10_000)
        assert not w.stopped
