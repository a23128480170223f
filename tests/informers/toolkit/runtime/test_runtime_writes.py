"""The write ledger and the barrier of read-your-writes, on fake informers
whose applied resourceVersion the test sets: what is waited for, what a
timeout keeps, and that a held reconcile is counted."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import CacheSyncTimeoutError
from informers.toolkit.runtime import ReconcileContext, Request
from informers.toolkit.runtime.writes import CatchesUp, WriteBarrier, WriteLedger
from informers.util.clock import REAL_CLOCK


class FakeInformer:
    """Applied up to ``applied``; waits answer at once (no time passes)."""

    def __init__(self, applied: int = 0) -> None:
        self.applied = applied
        self.asked: list[tuple[str, float]] = []

    def wait_for_resource_version(self, target: str, timeout: float = 10.0) -> bool:
        self.asked.append((target, timeout))
        return self.applied >= int(target)


@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(1, 50)), max_size=12),
    st.lists(st.integers(0, 60), min_size=3, max_size=3),
)
def test_a_ledger_waits_for_the_highest_write_of_each_informer(
    writes: list[tuple[int, int]], applied: list[int]
) -> None:
    informers = [FakeInformer(a) for a in applied]
    ledger = WriteLedger()
    for which, version in writes:
        ledger.record(informers[which], str(version), timeout=1.0)
    highest: dict[int, int] = {}
    for which, version in writes:
        highest[which] = max(highest.get(which, 0), version)
    assert len(ledger) == len(highest)
    assert ledger.wait() == all(applied[w] >= v for w, v in highest.items())


def test_versions_that_are_not_numbers_are_not_recorded() -> None:
    ledger = WriteLedger()
    ledger.record(FakeInformer(), "abc")
    ledger.record(FakeInformer(), "")
    assert not ledger
    assert isinstance(FakeInformer(), CatchesUp)


def _context(request: Request) -> ReconcileContext:
    return ReconcileContext([request], threading.Event(), None, REAL_CLOCK)


def test_the_barrier_holds_the_next_reconcile_of_the_same_request_only() -> None:
    barrier = WriteBarrier()
    informer = FakeInformer(applied=5)
    first, other = Request("ns", "a"), Request("ns", "b")
    context = _context(first)
    context.writes.record(informer, "7", timeout=0.0)
    barrier.keep(context)
    barrier.keep(_context(other))  # wrote nothing: nothing kept
    assert barrier.pending() == 1
    barrier.hold([other])  # not held
    with pytest.raises(CacheSyncTimeoutError, match="ns/a"):
        barrier.hold([first])
    assert barrier.pending() == 1  # kept: the retry waits again
    informer.applied = 7
    barrier.hold([first])
    assert barrier.pending() == 0
    assert barrier.waiting() == 0
    assert [t for t, _ in informer.asked] == ["7", "7"]


def test_ledgers_of_two_calls_merge() -> None:
    barrier = WriteBarrier()
    one, two = FakeInformer(), FakeInformer()
    request = Request("ns", "a")
    for informer, version in ((one, "3"), (two, "4"), (one, "2")):
        context = _context(request)
        context.writes.record(informer, version)
        barrier.keep(context)
    one.applied, two.applied = 3, 4
    barrier.hold([request])
    assert one.asked[-1][0] == "3"
    assert two.asked[-1][0] == "4"


def test_a_stopped_informer_is_not_waited_for() -> None:
    class Stopped(FakeInformer):
        def is_stopped(self) -> bool:
            return True

    stopped = Stopped(applied=0)
    ledger = WriteLedger()
    ledger.record(stopped, "9")
    assert ledger.wait()
    assert stopped.asked == []


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["keep", "hold"]),
            st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_the_barrier_holds_exactly_the_requests_with_writes_kept(
    steps: list[tuple[str, list[str], bool]],
) -> None:
    """Against a model (the set of requests with writes kept and not held
    yet), through every change between an empty barrier (held without a
    lock) and a non-empty one: a hold waits for the writes kept for its
    requests, never for others', and only once."""
    barrier = WriteBarrier()
    informer = FakeInformer(applied=100)
    kept: set[str] = set()
    for step, names, wrote in steps:
        requests = [Request("ns", name) for name in names]
        if step == "keep":
            context = ReconcileContext(requests, threading.Event(), None, REAL_CLOCK)
            if wrote:
                context.writes.record(informer, "7", timeout=0.0)
                kept.update(names)
            barrier.keep(context)
        else:
            asked = len(informer.asked)
            barrier.hold(requests)
            held = kept & set(names)
            kept -= held
            assert (len(informer.asked) > asked) == bool(held)
        assert barrier.pending() == len(kept)
    assert barrier.waiting() == 0
