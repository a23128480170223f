"""Queue: dedup, one worker per item, re-add during processing, shutdown."""

from __future__ import annotations

import threading

import pytest

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import Queue

WAIT = 10.0


def test_fifo_order_and_dedup() -> None:
    q: Queue[str] = Queue()
    for key in ["a", "b", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [q.get()[0] for _ in range(3)] == ["a", "b", "c"]
    assert len(q) == 0


def test_item_is_not_handed_out_twice_while_processing() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert q.get() == ("a", False)
    q.add("a")  # dirty again, but being processed: not queued
    assert len(q) == 0
    assert q.get(timeout=0) == (None, False)
    q.done("a")
    assert len(q) == 1
    assert q.get() == ("a", False)
    q.done("a")
    assert len(q) == 0


def test_many_adds_while_processing_are_one_redelivery() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    assert q.get() == (1, False)
    for _ in range(5):
        q.add(1)
    q.done(1)
    assert len(q) == 1
    assert q.get() == (1, False)
    q.done(1)
    assert q.get(timeout=0) == (None, False)


def test_done_of_unknown_item_is_ignored() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.done("a")  # queued, not processing: must not queue it twice
    q.done("zzz")
    assert len(q) == 1


def test_unhashable_item_is_a_type_error_and_changes_nothing() -> None:
    q: Queue[object] = Queue()
    with pytest.raises(TypeError):
        q.add([1, 2])  # type: ignore[arg-type]
    assert len(q) == 0


def test_adds_after_shutdown_are_dropped_and_queued_items_drain() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.shutdown()
    assert q.shutting_down()
    q.add("c")
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.get(timeout=1) == (None, True)
    q.shutdown()  # idempotent


def test_readd_during_processing_survives_shutdown() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    q.add("a")  # before shutdown: kept
    q.shutdown()
    assert q.get() == (None, True)
    q.done("a")
    assert q.get() == ("a", False)


def test_get_blocks_until_add() -> None:
    q: Queue[str] = Queue()
    got: list[tuple[str | None, bool]] = []
    worker = threading.Thread(target=lambda: got.append(q.get()), name="test-getter")
    worker.start()
    q.add("x")
    worker.join(WAIT)
    assert got == [("x", False)]


def test_shutdown_wakes_blocked_getters() -> None:
    q: Queue[str] = Queue()
    results: list[tuple[str | None, bool]] = []
    started = threading.Barrier(4)

    def worker() -> None:
        started.wait()
        results.append(q.get())

    threads = [threading.Thread(target=worker, name=f"test-getter-{i}") for i in range(3)]
    for t in threads:
        t.start()
    started.wait()
    assert q.wait_for_waiters(3)
    q.shutdown()
    for t in threads:
        t.join(WAIT)
    assert results == [(None, True)] * 3


def test_get_timeout_real_clock() -> None:
    q: Queue[str] = Queue()
    assert q.get(timeout=0.01) == (None, False)
    assert q.get(timeout=0) == (None, False)
    assert q.get(timeout=-1) == (None, False)


def test_get_timeout_on_fake_clock() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    results: list[tuple[str | None, bool]] = []
    worker = threading.Thread(target=lambda: results.append(q.get(timeout=5)), name="test-get")
    worker.start()
    assert q.wait_for_waiters(1)  # the get waits, its timer armed on the fake clock
    assert clock.pending_timers() == 1
    clock.advance(4.5)
    assert results == []
    clock.advance(0.5)
    worker.join(WAIT)
    assert results == [(None, False)]
    assert clock.pending_timers() == 0


def test_get_timeout_on_fake_clock_answered_by_add() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    q.add("a")
    assert q.get(timeout=5) == ("a", False)
    assert clock.pending_timers() == 0
    assert q.get(timeout=0) == (None, False)
    q.shutdown()
    assert q.get(timeout=5) == (None, True)
    assert clock.pending_timers() == 0


def test_shutdown_with_drain_waits_for_processing_and_queued() -> None:
    q: Queue[str] = Queue()
    for key in "abc":
        q.add(key)
    first, _ = q.get()
    result: list[bool] = []
    drainer = threading.Thread(
        target=lambda: result.append(q.shutdown_with_drain(WAIT)), name="test-drainer"
    )
    drainer.start()
    seen = [first]
    q.done(first)
    while True:
        item, shutdown = q.get()
        if shutdown:
            break
        seen.append(item)
        q.add("late")  # dropped: shutting down
        q.done(item)
    drainer.join(WAIT)
    assert result == [True]
    assert seen == ["a", "b", "c"]


def test_shutdown_with_drain_returns_at_once_when_idle() -> None:
    q: Queue[str] = Queue()
    assert q.shutdown_with_drain() is True
    assert q.shutdown_with_drain(0) is True


def test_shutdown_with_drain_timeout() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    assert q.shutdown_with_drain(0) is False
    assert q.shutdown_with_drain(0.01) is False
    q.done("a")
    assert q.shutdown_with_drain(0) is True


def test_shutdown_cancels_drain_wait() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.get()
    result: list[bool] = []
    drainer = threading.Thread(
        target=lambda: result.append(q.shutdown_with_drain()), name="test-drainer"
    )
    drainer.start()
    assert q.wait_for_waiters(1)
    q.shutdown()
    drainer.join(WAIT)
    assert result == [False]


def test_shutdown_with_drain_on_fake_clock_times_out() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    q.add("a")
    q.get()
    result: list[bool] = []
    drainer = threading.Thread(
        target=lambda: result.append(q.shutdown_with_drain(3)), name="test-drainer"
    )
    drainer.start()
    assert q.wait_for_waiters(1)
    clock.advance(2.5)
    assert result == []
    clock.advance(0.5)
    drainer.join(WAIT)
    assert result == [False]
    assert clock.pending_timers() == 0
