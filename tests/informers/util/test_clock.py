"""informers.util.clock: the real clock's one timer thread over a heap.

Timers here use real (short) delays; tests wait on events set by the
callbacks, never sleep."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from informers.util.clock import RealClock, TimerThread, on_timer_thread

TIMER_THREAD = "kube-informers-timer"


def timer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == TIMER_THREAD]


def join_timer_threads() -> None:
    for t in timer_threads():
        t.join(5.0)
        assert not t.is_alive()


@contextlib.contextmanager
def held(call_later: Callable[[float, Callable[[], None], str], object]) -> Iterator[None]:
    """Keep the timer loop inside a callback for the duration of the block."""
    inside, release = threading.Event(), threading.Event()

    def gate() -> None:
        inside.set()
        release.wait(10.0)

    call_later(0.0, gate, "gate")
    assert inside.wait(5.0)
    try:
        yield
    finally:
        release.set()


def test_callbacks_run_in_due_order_on_one_thread() -> None:
    clock = RealClock()
    done = threading.Event()
    order: list[int] = []
    threads: set[str] = set()

    def record(i: int) -> None:
        order.append(i)
        threads.add(threading.current_thread().name)
        if len(order) == 5:
            done.set()

    # scheduled out of order while the loop is held busy, so that none can run
    # before all are scheduled: they must run by due time
    with held(clock.call_later):
        for i in (3, 0, 4, 1, 2):
            clock.call_later(0.01 * i, lambda i=i: record(i), f"t{i}")
    assert done.wait(5.0)
    assert order == [0, 1, 2, 3, 4]
    assert threads == {TIMER_THREAD}
    join_timer_threads()


def test_ten_thousand_pending_timers_cost_one_thread() -> None:
    clock = RealClock()
    before = threading.active_count()
    handles = [clock.call_later(60.0 + i * 1e-4, lambda: None, "many") for i in range(10_000)]
    assert clock.pending_timers() == 10_000
    assert len(timer_threads()) == 1
    assert threading.active_count() == before + 1
    for h in handles:
        h.cancel()
    assert clock.pending_timers() == 0
    join_timer_threads()  # with nothing pending the thread ends at once, not in 60 s


def test_cancelled_timer_never_runs_and_cancel_is_idempotent() -> None:
    clock = RealClock()
    ran: list[str] = []
    later = threading.Event()
    with held(clock.call_later):  # already due, but the loop is busy: cancel wins
        h = clock.call_later(0.0, lambda: ran.append("cancelled"), "x")
        h.cancel()
        h.cancel()
        clock.call_later(0.0, later.set, "after")
    assert later.wait(5.0)
    assert ran == []
    join_timer_threads()


def test_cancel_after_a_long_delay_timer_cancels_cleanly() -> None:
    clock = RealClock()
    ran = threading.Event()
    h = clock.call_later(3600.0, ran.set, "hour")
    h.cancel()
    join_timer_threads()
    assert not ran.is_set()


def test_cancel_waits_for_a_running_callback() -> None:
    clock = RealClock()
    entered, release = threading.Event(), threading.Event()
    finished = threading.Event()

    def slow() -> None:
        entered.set()
        release.wait(5.0)
        finished.set()

    h = clock.call_later(0.0, slow, "slow")
    assert entered.wait(5.0)
    canceller = threading.Thread(target=h.cancel, name="canceller")
    canceller.start()
    canceller.join(0.1)
    assert canceller.is_alive()  # blocked while the callback runs
    release.set()
    canceller.join(5.0)
    assert not canceller.is_alive()
    assert finished.is_set()
    join_timer_threads()


def test_a_callback_may_schedule_and_cancel_timers() -> None:
    clock = RealClock()
    second = threading.Event()
    handles: list[object] = []

    def first() -> None:
        handles.append(clock.call_later(0.0, second.set, "second"))
        # cancelling itself from inside must not deadlock
        own.cancel()

    own = clock.call_later(0.0, first, "first")
    assert second.wait(5.0)
    join_timer_threads()


def test_a_failing_callback_is_logged_and_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = RealClock()
    ok = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="informers.util.clock"):
        clock.call_later(0.0, boom, "boom-timer")
        clock.call_later(0.01, ok.set, "ok")
        assert ok.wait(5.0)
    join_timer_threads()
    assert any("boom-timer" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("raised", [SystemExit(0), KeyboardInterrupt(), GeneratorExit()])
def test_a_callback_raising_a_base_exception_does_not_kill_the_timer_thread(
    raised: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    # One thread runs every timer of a clock: a callback that calls
    # sys.exit() used to end it while it stayed recorded, so no later timer
    # of that clock (for REAL_CLOCK: the whole process) ever fired.
    clock = RealClock()
    ran = threading.Event()

    def bad() -> None:
        ran.set()
        raise raised

    with caplog.at_level(logging.ERROR, logger="informers.util.clock"):
        clock.call_later(0.0, bad, "bad-timer")
        assert ran.wait(5.0)
        later = threading.Event()
        clock.call_later(0.01, later.set, "later")
        assert later.wait(5.0)
    join_timer_threads()
    assert any("bad-timer" in r.getMessage() for r in caplog.records)
    assert clock.pending_timers() == 0


def test_on_timer_thread_is_true_in_callbacks_only() -> None:
    clock = RealClock()
    seen: list[bool] = []
    done = threading.Event()

    def probe() -> None:
        seen.append(on_timer_thread())
        done.set()

    clock.call_later(0.0, probe, "probe")
    assert done.wait(5.0)
    join_timer_threads()
    assert seen == [True]
    assert not on_timer_thread()


def test_an_earlier_timer_wakes_the_loop() -> None:
    clock = RealClock()
    early = threading.Event()
    late = clock.call_later(3600.0, lambda: None, "late")
    clock.call_later(0.01, early.set, "early")  # must not wait behind the hour
    assert early.wait(5.0)
    late.cancel()
    join_timer_threads()


@settings(max_examples=25, deadline=None)
@given(
    plan=st.lists(st.tuples(st.integers(0, 20), st.booleans()), min_size=1, max_size=30),
)
def test_exactly_the_uncancelled_timers_run(plan: list[tuple[int, bool]]) -> None:
    timers = TimerThread()
    lock = threading.Lock()
    ran: list[int] = []
    expected = [i for i, (_, cancel) in enumerate(plan) if not cancel]
    all_done = threading.Event()
    if not expected:
        all_done.set()

    def run(i: int) -> None:
        with lock:
            ran.append(i)
            if len(ran) == len(expected):
                all_done.set()

    now = time.monotonic()
    with held(lambda _d, cb, name: timers.schedule(now, cb, name)):
        handles = [
            timers.schedule(now + ms / 1000, lambda i=i: run(i), f"p{i}")
            for i, (ms, _) in enumerate(plan)
        ]
        for h, (_, cancel) in zip(handles, plan, strict=True):
            if cancel:
                h.cancel()
    assert all_done.wait(5.0)
    join_timer_threads()
    assert sorted(ran) == expected
    due = {i: plan[i][0] for i in expected}
    assert [due[i] for i in ran] == sorted(due[i] for i in ran)  # by due time
    assert timers.pending() == 0
