"""PriorityQueue: a Hypothesis model and unit tests.

The model keeps, for every waiting item, its priority and the time it
started waiting (on a FakeClock), the items being processed and the delayed
ones. Every step checks the queue against it, so these hold throughout:

* nothing is lost: ``len`` and every item's priority equal the model's, and
  the final drain hands out exactly the items the model holds;
* never two workers on one key: ``get`` never hands out an item in progress;
* a waiting item's priority only rises;
* ``get`` hands out an item of the smallest deadline
  (``since - priority * max_wait / 100``), and so the aging bound: no item
  of priority ``PRIORITY_HIGH`` or below that started waiting more than
  ``max_wait`` after a waiting item of ``PRIORITY_LOW`` or above is handed
  out before it.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import (
    PRIORITY_HIGH,
    PRIORITY_LOW,
    PriorityQueue,
    RateLimitingQueue,
)

KEYS = st.sampled_from(["a", "b", "c", "d", "e", "f"])
PRIORITIES = st.sampled_from([PRIORITY_LOW, -50, PRIORITY_HIGH, 10])
DELAYS = st.sampled_from([0.0, 0.5, 2.0, 7.0])
ADVANCES = st.sampled_from([0.5, 1.0, 4.0, 11.0])
MAX_WAIT = 10.0
RATE_LIMIT_DELAY = 1.5


class FixedLimiter:
    """A rate limiter that always answers the same delay and counts."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requeues: Counter[str] = Counter()

    def when(self, item: str) -> float:
        self.requeues[item] += 1
        return self.delay

    def forget(self, item: str) -> None:
        self.requeues.pop(item, None)

    def num_requeues(self, item: str) -> int:
        return self.requeues[item]


def deadline(priority: int, since: float) -> float:
    return since - priority * MAX_WAIT / (PRIORITY_HIGH - PRIORITY_LOW)


class PriorityQueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.q: PriorityQueue[str] = PriorityQueue(
            FixedLimiter(RATE_LIMIT_DELAY), clock=self.clock, max_wait=MAX_WAIT
        )
        self.wanted: dict[str, tuple[int, float]] = {}  # dirty: (priority, since)
        self.processing: dict[str, int] = {}  # handed out: its priority
        self.delayed: dict[str, tuple[int, float]] = {}  # (priority, ready)
        self.shut = False
        self.seen: dict[str, int] = {}  # the priority each waiting item was last seen with

    def queued(self) -> list[str]:
        return [k for k in self.wanted if k not in self.processing]

    def model_add(self, key: str, priority: int, since: float) -> None:
        if self.shut:
            return
        current = self.wanted.get(key)
        if current is None:
            self.wanted[key] = (priority, since)
        elif priority > current[0]:
            self.wanted[key] = (priority, current[1])

    @rule(key=KEYS, priority=PRIORITIES)
    def add(self, key: str, priority: int) -> None:
        self.q.add(key, priority)
        self.model_add(key, priority, self.clock.now())

    @rule(key=KEYS)
    def add_default(self, key: str) -> None:
        self.q.add(key)
        self.model_add(key, PRIORITY_HIGH, self.clock.now())

    def model_add_after(self, key: str, delay: float, priority: int | None) -> None:
        if self.shut:
            return
        if priority is None:
            priority = self.processing.get(key, PRIORITY_HIGH)
        if delay <= 0:
            self.model_add(key, priority, self.clock.now())
            return
        ready = self.clock.now() + delay
        held = self.delayed.get(key)
        if held is not None:
            self.delayed[key] = (max(priority, held[0]), min(ready, held[1]))
        else:
            self.delayed[key] = (priority, ready)

    @rule(key=KEYS, delay=DELAYS, priority=st.none() | PRIORITIES)
    def add_after(self, key: str, delay: float, priority: int | None) -> None:
        self.q.add_after(key, delay, priority)
        self.model_add_after(key, delay, priority)

    @rule(key=KEYS, priority=st.none() | PRIORITIES)
    def add_rate_limited(self, key: str, priority: int | None) -> None:
        self.q.add_rate_limited(key, priority)
        self.model_add_after(key, RATE_LIMIT_DELAY, priority)

    @rule(seconds=ADVANCES)
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        now = self.clock.now()
        for key, (priority, ready) in sorted(self.delayed.items(), key=lambda kv: kv[1][1]):
            if ready <= now:
                del self.delayed[key]
                self.model_add(key, priority, ready)

    @rule()
    def get(self) -> None:
        queued = self.queued()
        item, shutdown = self.q.get(timeout=0)
        if not queued:
            assert (item, shutdown) == (None, self.shut)
            return
        assert shutdown is False
        assert item in queued, f"{item!r} handed out but not queued: {queued}"
        assert item not in self.processing, "handed to two workers"
        priority, since = self.wanted[item]
        best = min(deadline(*self.wanted[k]) for k in queued)
        assert deadline(priority, since) == best, "not the earliest deadline"
        if priority <= PRIORITY_HIGH:
            for other in queued:
                other_priority, other_since = self.wanted[other]
                assert not (other_priority >= PRIORITY_LOW and since > other_since + MAX_WAIT), (
                    f"{item} (since {since}) overtook {other} (since {other_since}) "
                    f"after it waited more than max_wait"
                )
        del self.wanted[item]
        self.seen.pop(item, None)
        self.processing[item] = priority

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: Any) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.q.done(key)
        del self.processing[key]

    @rule(key=KEYS)
    def done_unknown(self, key: str) -> None:
        if key not in self.processing:
            self.q.done(key)  # ignored

    @rule(how=st.sampled_from(["not now"] * 8 + ["shutdown", "drain"]))
    def shutdown(self, how: str) -> None:
        if how == "not now":
            return
        if how == "shutdown":
            self.q.shutdown()
        else:
            drained = self.q.shutdown_with_drain(timeout=0)
            assert drained == (not self.wanted and not self.processing)
        self.shut = True
        self.delayed.clear()

    @precondition(lambda self: self.shut)
    @rule()
    def drain_everything(self) -> None:
        """Finish the work in progress and hand out the rest: exactly the
        items the model holds come out, in deadline order."""
        for key in sorted(self.processing):
            self.q.done(key)
        self.processing.clear()
        expected = sorted(self.wanted, key=lambda k: deadline(*self.wanted[k]))
        delivered = []
        while True:
            item, shutdown = self.q.get(timeout=0)
            if shutdown:
                break
            assert item is not None
            delivered.append(item)
            self.q.done(item)
        assert sorted(delivered) == sorted(expected)
        assert [deadline(*self.wanted[k]) for k in delivered] == [
            deadline(*self.wanted[k]) for k in expected
        ]
        self.wanted.clear()
        self.seen.clear()
        assert self.q.shutdown_with_drain(timeout=0) is True

    @invariant()
    def matches_model(self) -> None:
        assert len(self.q) == len(self.queued())
        assert self.q.num_delayed() == len(self.delayed)
        for key in ["a", "b", "c", "d", "e", "f"]:
            expected = self.wanted.get(key)
            assert self.q.priority(key) == (None if expected is None else expected[0])

    @invariant()
    def waiting_priority_only_rises(self) -> None:
        for key in ["a", "b", "c", "d", "e", "f"]:
            priority = self.q.priority(key)
            if priority is None:
                continue
            assert priority >= self.seen.get(key, priority), f"{key}'s priority fell"
            self.seen[key] = priority

    def teardown(self) -> None:
        self.q.shutdown()


TestPriorityQueueMachine = PriorityQueueMachine.TestCase


# --------------------------------------------------------------------------- unit tests


def drain(q: PriorityQueue[str], count: int) -> list[str]:
    out = []
    for _ in range(count):
        item, shutdown = q.get(timeout=0)
        assert item is not None
        assert not shutdown
        out.append(item)
        q.done(item)
    return out


def test_is_a_rate_limiting_queue() -> None:
    q: PriorityQueue[str] = PriorityQueue()
    assert isinstance(q, RateLimitingQueue)
    q.shutdown()


def test_higher_priority_first_then_fifo() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(clock=clock)
    for key in ["l1", "l2", "l3"]:
        q.add(key, PRIORITY_LOW)
    q.add("h1")
    q.add("h2", PRIORITY_HIGH)
    q.add("top", 50)
    assert drain(q, 6) == ["top", "h1", "h2", "l1", "l2", "l3"]


def test_all_one_priority_is_first_in_first_out() -> None:
    q: PriorityQueue[int] = PriorityQueue(clock=FakeClock())
    for n in range(200):
        q.add(n, PRIORITY_LOW)
    assert [q.get(timeout=0)[0] for _ in range(200)] == list(range(200))


def test_raising_a_waiting_item_moves_it_forward_lowering_does_not() -> None:
    q: PriorityQueue[str] = PriorityQueue(clock=FakeClock())
    for key in ["a", "b", "c"]:
        q.add(key, PRIORITY_LOW)
    q.add("h")
    q.add("c", PRIORITY_HIGH)  # raised: waits since before "h", so goes first
    q.add("h", PRIORITY_LOW)  # not lowered
    assert q.priority("c") == PRIORITY_HIGH
    assert q.priority("h") == PRIORITY_HIGH
    assert drain(q, 4) == ["c", "h", "a", "b"]


def test_add_while_processing_is_queued_at_done_with_its_priority() -> None:
    q: PriorityQueue[str] = PriorityQueue(clock=FakeClock())
    q.add("a", PRIORITY_LOW)
    assert q.get(timeout=0) == ("a", False)
    q.add("a", PRIORITY_LOW)
    q.add("a", PRIORITY_HIGH)
    assert len(q) == 0
    assert q.priority("a") == PRIORITY_HIGH
    q.add("b", PRIORITY_LOW)
    q.done("a")
    assert drain(q, 2) == ["a", "b"]


def test_aging_bounds_the_wait_of_a_low_item_under_steady_load() -> None:
    """Two events arrive for every item handed out, so the queue never
    empties and the backlog grows: the low item still comes out, and no
    event that arrived after it had waited max_wait goes before it."""
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(clock=clock, max_wait=30.0)
    q.add("low", PRIORITY_LOW)
    start = clock.now()
    added_at: dict[str, float] = {}
    served_before: list[str] = []
    n = 0
    while True:
        for suffix in "ab":
            key = f"event-{n}{suffix}"
            added_at[key] = clock.now()
            q.add(key)
        item, _ = q.get(timeout=0)
        assert item is not None
        q.done(item)
        if item == "low":
            break
        served_before.append(item)
        clock.advance(1.0)
        n += 1
    assert max(added_at[key] for key in served_before) <= start + 30.0
    assert any(added_at[key] > start + 30.0 for key in added_at)  # events were overtaken
    assert len(q) > 20  # and the queue was far from empty


def test_events_first_while_an_initial_list_drains() -> None:
    clock = FakeClock()
    q: PriorityQueue[int | str] = PriorityQueue(clock=clock, max_wait=300.0)
    for n in range(1000):
        q.add(n, PRIORITY_LOW)
    for n in range(10):
        assert q.get(timeout=0)[0] == n
        q.done(n)
    clock.advance(1.0)
    q.add("event")
    assert q.get(timeout=0)[0] == "event"


def test_requeue_keeps_the_priority_it_was_handed_out_with() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(FixedLimiter(1.0), clock=clock)
    q.add("low", PRIORITY_LOW)
    q.add("high")
    assert drain(q, 2) == ["high", "low"]
    for key in ["high", "low"]:
        q.add(key, PRIORITY_LOW if key == "low" else PRIORITY_HIGH)
    assert q.get(timeout=0)[0] == "high"
    assert q.get(timeout=0)[0] == "low"
    q.add_rate_limited("low")
    q.add_after("high", 1.0)
    q.done("low")
    q.done("high")
    q.add("other", -50)
    clock.advance(1.0)
    assert q.priority("low") == PRIORITY_LOW
    assert q.priority("high") == PRIORITY_HIGH
    q.add_after("x", 0.0)  # not being processed: high
    assert q.priority("x") == PRIORITY_HIGH


def test_delayed_twice_keeps_the_earlier_time_and_higher_priority() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(clock=clock)
    q.add_after("a", 5.0, PRIORITY_HIGH)
    q.add_after("a", 2.0, PRIORITY_LOW)
    clock.advance(2.0)
    assert q.priority("a") == PRIORITY_HIGH
    assert q.num_delayed() == 0


def test_shutdown_drops_delayed_work_and_drain_waits_for_queued() -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(clock=clock)
    q.add_after("later", 1.0, PRIORITY_LOW)
    q.add("a", PRIORITY_LOW)
    assert q.get(timeout=0)[0] == "a"
    assert q.shutdown_with_drain(timeout=0) is False
    q.add("dropped")
    assert q.num_delayed() == 0
    assert clock.pending_timers() == 0
    q.done("a")
    assert q.get(timeout=0) == (None, True)
    assert q.shutdown_with_drain(timeout=0) is True


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="max_wait"):
        PriorityQueue(max_wait=0)
    with pytest.raises(ValueError, match="max_wait"):
        PriorityQueue(max_wait=float("inf"))
    with pytest.raises(TypeError, match="max_wait"):
        PriorityQueue(max_wait="1")  # type: ignore[arg-type]
    q: PriorityQueue[str] = PriorityQueue()
    with pytest.raises(TypeError, match="priority"):
        q.add("a", True)
    with pytest.raises(TypeError, match="priority"):
        q.add_after("a", 1.0, 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="priority"):
        q.add_rate_limited("a", "high")  # type: ignore[arg-type]
    assert len(q) == 0
    q.shutdown()


def test_metrics(recording_provider: Any) -> None:
    clock = FakeClock()
    q: PriorityQueue[str] = PriorityQueue(name="prio", clock=clock, metrics=recording_provider)
    series = recording_provider.series["prio"]
    q.add("a", PRIORITY_LOW)
    q.add("a", PRIORITY_HIGH)  # a raise is not a new add
    q.add("b")
    assert series.adds == 2
    assert series.depth() == 2
    clock.advance(2.0)
    item, _ = q.get(timeout=0)
    assert item == "a"
    clock.advance(1.0)
    q.done("a")
    q.add_rate_limited("b")
    assert series.latencies == [2.0]
    assert series.work_durations == [1.0]
    assert series.retries == 1
    q.shutdown()


def test_workers_never_share_a_key_and_nothing_is_lost() -> None:
    """Four workers and four adders with random priorities: no key is held
    by two workers at once, and every key added is processed after its
    last add."""
    q: PriorityQueue[int] = PriorityQueue()
    keys = range(20)
    guard = threading.Lock()
    holding: set[int] = set()
    processed_after: dict[int, int] = {}
    adds: Counter[int] = Counter()
    overlaps: list[int] = []

    def worker() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            assert item is not None
            with guard:
                if item in holding:
                    overlaps.append(item)
                holding.add(item)
                processed_after[item] = adds[item]
            with guard:
                holding.discard(item)
            q.done(item)

    def adder(seed: int) -> None:
        for n in range(2000):
            key = keys[(n * 7 + seed) % len(keys)]
            with guard:
                adds[key] += 1
            q.add(key, PRIORITY_LOW if (n + seed) % 3 else PRIORITY_HIGH)

    workers = [threading.Thread(target=worker, name=f"prio-worker-{i}") for i in range(4)]
    adders = [threading.Thread(target=adder, args=(i,), name=f"prio-adder-{i}") for i in range(4)]
    for thread in workers + adders:
        thread.start()
    for thread in adders:
        thread.join()
    assert q.shutdown_with_drain(timeout=10.0)
    for thread in workers:
        thread.join()
    assert not overlaps
    assert all(processed_after[key] == adds[key] for key in adds)


def test_many_raises_and_requeues_keep_the_deadline_order() -> None:
    """Hundreds of raised items (stale entries, rebuilt) and items queued
    again at done with an older since: every get is the earliest deadline."""
    clock = FakeClock()
    q: PriorityQueue[int] = PriorityQueue(clock=clock, max_wait=100.0)
    since: dict[int, float] = {}
    priority: dict[int, int] = {}
    for n in range(500):
        q.add(n, PRIORITY_LOW)
        since[n], priority[n] = clock.now(), PRIORITY_LOW
        clock.advance(0.01)
    held = [n for n in (q.get(timeout=0)[0] for _ in range(5)) if n is not None]
    assert held == [0, 1, 2, 3, 4]
    for n in held:
        q.add(n, -50)  # dirty while processing
        since[n], priority[n] = clock.now(), -50
    for n in range(500):
        if n not in held:
            q.add(n, -50)  # raised: keeps its since
            priority[n] = -50
    for n in range(100, 400, 2):
        q.add(n, PRIORITY_HIGH)  # raised again
        priority[n] = PRIORITY_HIGH
    clock.advance(1.0)
    for n in held:
        q.done(n)
    assert len(q) == 500
    out: list[int] = []
    for _ in range(500):
        item, _ = q.get(timeout=0)
        assert item is not None
        out.append(item)
    assert sorted(out) == list(range(500))
    deadlines = [since[n] - priority[n] for n in out]  # max_wait / 100 = 1 s per level
    assert deadlines == sorted(deadlines)
