"""Several threads hammering one queue: the invariants hold under contention.

Checked for every key at the end:

* no two workers ever held it at once;
* its last processing started after its last accepted add was called (an
  add while it was processed, or while queued, is never lost);
* ``shutdown_with_drain`` returned ``True`` and every worker saw shutdown.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable
from typing import Any

import pytest

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter, Queue, RateLimitingQueue

WAIT = 30.0
WORKERS = 4
KEYS = [f"ns/key-{i}" for i in range(30)]


class Ledger:
    """What the test threads saw, under one lock, with a global tick."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ticks = itertools.count()
        self.in_flight: set[str] = set()
        self.violations: list[str] = []
        self.last_add: dict[str, int] = {}
        self.last_start: dict[str, int] = {}
        self.processed = 0

    def tick(self) -> int:
        with self.lock:
            return next(self.ticks)

    def added(self, key: str, tick: int) -> None:
        with self.lock:
            self.last_add[key] = max(tick, self.last_add.get(key, -1))

    def start(self, key: str) -> None:
        with self.lock:
            if key in self.in_flight:
                self.violations.append(f"{key} handed to two workers")
            self.in_flight.add(key)
            self.last_start[key] = next(self.ticks)
            self.processed += 1

    def finish(self, key: str) -> None:
        with self.lock:
            self.in_flight.discard(key)

    def check(self) -> None:
        assert self.violations == []
        assert self.in_flight == set()
        lost = [k for k, t in self.last_add.items() if self.last_start.get(k, -1) <= t]
        assert lost == [], "adds never followed by a processing start"


def run_workers(q: Queue[str], ledger: Ledger, readd_budget: int) -> list[threading.Thread]:
    budget = [readd_budget]
    budget_lock = threading.Lock()
    exits: list[bool] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        while True:
            key, shutdown = q.get()
            if shutdown:
                exits.append(True)
                return
            assert key is not None
            ledger.start(key)
            with budget_lock:
                readd = budget[0] > 0 and rng.random() < 0.1
                budget[0] -= readd
            if readd:  # added while being processed: must come back after done
                tick = ledger.tick()
                q.add(key)
                if not q.shutting_down():  # certainly accepted
                    ledger.added(key, tick)
            ledger.finish(key)
            if isinstance(q, RateLimitingQueue):
                q.forget(key)
            q.done(key)

    threads = [
        threading.Thread(target=work, args=(n,), name=f"test-worker-{n}") for n in range(WORKERS)
    ]
    for t in threads:
        t.start()
    return threads


def run_producers(count: int, produce: Callable[[random.Random], None]) -> None:
    threads = [
        threading.Thread(target=produce, args=(random.Random(n),), name=f"test-producer-{n}")
        for n in range(count)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive()


def finish(q: Queue[str], workers: list[threading.Thread], ledger: Ledger) -> None:
    assert q.shutdown_with_drain(WAIT) is True
    for t in workers:
        t.join(WAIT)
        assert not t.is_alive()
    assert len(q) == 0
    ledger.check()


def test_queue_under_contention() -> None:
    q: Queue[str] = Queue()
    ledger = Ledger()
    workers = run_workers(q, ledger, readd_budget=500)
    try:

        def produce(rng: random.Random) -> None:
            for _ in range(10_000):
                key = rng.choice(KEYS)
                tick = ledger.tick()
                q.add(key)
                ledger.added(key, tick)

        run_producers(2, produce)
        finish(q, workers, ledger)
    finally:
        q.shutdown()
    assert ledger.processed > len(KEYS)


@pytest.mark.parametrize("metrics", [False, True])
def test_rate_limiting_queue_under_contention_with_a_ticking_fake_clock(
    metrics: bool, recording_provider: Any
) -> None:
    clock = FakeClock()
    provider = recording_provider if metrics else None
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.25, 2.0),
        name="contended" if metrics else "",
        clock=clock,
        metrics=provider,
    )
    ledger = Ledger()
    workers = run_workers(q, ledger, readd_budget=300)
    stop_ticking = threading.Event()

    def tick() -> None:
        while not stop_ticking.is_set():
            clock.advance(0.25)

    ticker = threading.Thread(target=tick, name="test-ticker")
    ticker.start()
    try:

        def produce(rng: random.Random) -> None:
            for _ in range(5_000):
                key = rng.choice(KEYS)
                tick = ledger.tick()
                how = rng.randrange(3)
                if how == 0:
                    q.add(key)
                elif how == 1:
                    q.add_after(key, rng.choice([0.25, 0.5, 1.0, 3.0]))
                else:
                    q.add_rate_limited(key)
                ledger.added(key, tick)

        run_producers(2, produce)
    finally:
        stop_ticking.set()
        ticker.join(WAIT)
    clock.advance(100.0)  # everything delayed is due
    assert q.num_delayed() == 0
    assert clock.pending_timers() == 0
    try:
        finish(q, workers, ledger)
    finally:
        q.shutdown()
    if provider is not None:
        series = provider.series["contended"]
        assert series.depth() == 0.0
        assert series.unfinished() == 0.0
        assert series.adds == series.latency_count == series.work_count == ledger.processed
