"""DelayingQueue and RateLimitingQueue on a FakeClock: exact delays, one timer."""

from __future__ import annotations

import threading

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import (
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)
from informers.util.clock import REAL_CLOCK

WAIT = 10.0


def drain_now(q: DelayingQueue[str]) -> list[str]:
    out = []
    while True:
        item, _ = q.get(timeout=0)
        if item is None:
            return out
        out.append(item)
        q.done(item)


def test_add_after_waits_exactly_the_delay() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    assert len(q) == 0
    assert q.num_delayed() == 1
    clock.advance(0.75)
    assert len(q) == 0
    clock.advance(0.25)
    assert len(q) == 1
    assert q.num_delayed() == 0
    assert drain_now(q) == ["a"]
    assert clock.pending_timers() == 0


def test_zero_or_negative_delay_is_a_plain_add() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 0)
    q.add_after("b", -3)
    assert drain_now(q) == ["a", "b"]
    assert clock.pending_timers() == 0


def test_items_come_out_in_ready_order_and_ties_in_add_order() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("late", 3.0)
    q.add_after("early", 1.0)
    q.add_after("tie-1", 2.0)
    q.add_after("tie-2", 2.0)
    assert clock.pending_timers() == 1
    clock.advance(1.0)
    assert drain_now(q) == ["early"]
    clock.advance(1.0)
    assert drain_now(q) == ["tie-1", "tie-2"]
    clock.advance(1.0)
    assert drain_now(q) == ["late"]
    assert clock.pending_timers() == 0


def test_one_advance_past_several_ready_times_adds_them_all_in_order() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    for i, delay in enumerate([5.0, 1.0, 3.0]):
        q.add_after(f"k{i}", delay)
    clock.advance(10.0)
    assert drain_now(q) == ["k1", "k2", "k0"]


def test_readd_keeps_the_earliest_ready_time() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 2.0)
    q.add_after("a", 5.0)  # later: ignored
    clock.advance(2.0)
    assert drain_now(q) == ["a"]
    q.add_after("b", 5.0)
    q.add_after("b", 1.0)  # earlier: wins
    assert q.num_delayed() == 1
    clock.advance(1.0)
    assert drain_now(q) == ["b"]
    clock.advance(10.0)
    assert drain_now(q) == []  # the superseded entry adds nothing
    assert clock.pending_timers() == 0


def test_delayed_add_of_a_queued_item_is_deduplicated() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add("a")
    q.add_after("a", 1.0)
    clock.advance(1.0)
    assert drain_now(q) == ["a"]


def test_delayed_add_while_processing_is_delivered_after_done() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add("a")
    assert q.get() == ("a", False)
    q.add_after("a", 1.0)
    clock.advance(1.0)
    assert len(q) == 0  # dirty, waiting for done
    q.done("a")
    assert drain_now(q) == ["a"]


def test_ten_thousand_pending_adds_use_one_timer() -> None:
    clock = FakeClock()
    q: DelayingQueue[int] = DelayingQueue(clock=clock)
    for i in range(10_000):
        q.add_after(i, 1.0 + (i % 100))
    assert clock.pending_timers() == 1
    assert q.num_delayed() == 10_000
    clock.advance(1.0)
    assert len(q) == 100
    assert clock.pending_timers() == 1
    clock.advance(100.0)
    assert len(q) == 10_000
    assert clock.pending_timers() == 0


def test_ten_thousand_pending_adds_on_the_real_clock_start_at_most_one_thread() -> None:
    before = threading.active_count()
    q: DelayingQueue[int] = DelayingQueue(clock=REAL_CLOCK)
    for i in range(10_000):
        q.add_after(i, 3600.0 + i)
    assert threading.active_count() <= before + 1
    q.shutdown()  # cancels (and joins) the one timer
    assert q.num_delayed() == 0


def test_shutdown_drops_delayed_items_and_cancels_the_timer() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1.0)
    q.add("b")
    q.shutdown()
    assert clock.pending_timers() == 0
    q.add_after("c", 1.0)
    assert clock.pending_timers() == 0
    clock.advance(5.0)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)


def test_real_clock_delay_delivers() -> None:
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("a", 0.01)
    assert q.get(timeout=WAIT) == ("a", False)
    q.shutdown()


def test_rate_limited_adds_back_off_exponentially_and_forget_resets() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.25, 10.0), clock=clock
    )
    for expected in [0.25, 0.5, 1.0, 2.0]:
        q.add_rate_limited("a")
        clock.advance(expected - 0.125)
        assert len(q) == 0
        clock.advance(0.125)
        assert drain_now(q) == ["a"]
    assert q.num_requeues("a") == 4
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.add_rate_limited("a")
    clock.advance(0.25)
    assert drain_now(q) == ["a"]


def test_rate_limiting_queue_default_limiter_uses_the_queue_clock() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    q.add_rate_limited("a")  # 5 ms (the bucket has tokens)
    clock.advance(0.005)
    assert drain_now(q) == ["a"]
    assert q.num_requeues("a") == 1


def test_add_rate_limited_after_shutdown_is_dropped_and_not_counted() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(default_controller_rate_limiter())
    q.shutdown()
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 0
    assert q.get() == (None, True)


def test_real_clock_rearms_for_an_earlier_item() -> None:
    q: DelayingQueue[str] = DelayingQueue()
    q.add_after("late", 0.2)
    q.add_after("early", 0.01)  # earlier than the armed timer: re-armed
    assert q.get(timeout=WAIT) == ("early", False)
    q.done("early")
    assert q.get(timeout=WAIT) == ("late", False)
    q.done("late")
    q.shutdown()
