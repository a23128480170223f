"""One candidate's attempts on an in-memory Lease, on a FakeClock: the exact
expiry decision (observed staleness by the local clock), renewals,
transitions, the fast and slow paths and release."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from leaderelection_helpers import MemoryLock, MemoryStore

from informers.testing import FakeClock
from informers.toolkit.leaderelection import (
    Candidate,
    LeaderElectionConfig,
    LeaderElectionRecord,
)

LD, RD, RP = 1.0, 0.7, 0.2
WALL = datetime(2024, 5, 1, tzinfo=UTC)


class CountingMetrics:
    def __init__(self) -> None:
        self.slowpath = 0
        self.states: list[tuple[str, bool]] = []

    def leader_on(self, name: str) -> None:
        self.states.append((name, True))

    def leader_off(self, name: str) -> None:
        self.states.append((name, False))

    def slowpath_exercised(self, name: str) -> None:
        self.slowpath += 1


def candidate(
    store: MemoryStore,
    identity: str,
    clock: FakeClock,
    *,
    lease_duration: float = LD,
    metrics: CountingMetrics | None = None,
) -> Candidate:
    config = LeaderElectionConfig(
        lock=MemoryLock(store),
        identity=identity,
        lease_duration=lease_duration,
        renew_deadline=RD,
        retry_period=RP,
    )
    return Candidate(config, clock=clock, metrics=metrics or CountingMetrics())


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


def held_by(store: MemoryStore, holder: str, lease_seconds: int = 1) -> None:
    store.create(LeaderElectionRecord(holder, lease_seconds, WALL, WALL, 0))


def test_the_first_candidate_creates_the_lease(store: MemoryStore, clock: FakeClock) -> None:
    a = candidate(store, "a", clock)
    assert a.try_acquire_or_renew()
    record = store.record()
    assert record is not None
    assert record.holder_identity == "a"
    assert record.lease_duration_seconds == 1
    assert record.leader_transitions == 0
    assert record.acquire_time == record.renew_time
    assert a.holds_lease()
    assert a.leader() == "a"


def test_acquires_exactly_after_a_lease_duration_of_observed_staleness(
    store: MemoryStore, clock: FakeClock
) -> None:
    held_by(store, "old")
    b = candidate(store, "b", clock)
    assert not b.try_acquire_or_renew()  # observed now, at 1000
    observed = b.observed()
    assert observed is not None
    assert observed.observed_at == 1000.0
    assert b.expires_at() == 1001.0
    clock.advance(LD - 1e-6)
    assert not b.try_acquire_or_renew()
    clock.advance(1e-6)
    assert b.try_acquire_or_renew()  # at 1001.0 exactly
    record = store.record()
    assert record is not None
    assert (record.holder_identity, record.leader_transitions) == ("b", 1)


def test_the_remote_timestamps_are_never_used(store: MemoryStore, clock: FakeClock) -> None:
    """A record whose renewTime is decades old is still fresh when first seen."""
    store.create(LeaderElectionRecord("old", 1, datetime(1999, 1, 1, tzinfo=UTC), None, 0))
    b = candidate(store, "b", clock)
    assert not b.try_acquire_or_renew()
    clock.advance(0.5)
    assert not b.try_acquire_or_renew()


def test_a_renewal_rearms_the_expiry_from_when_it_was_seen(
    store: MemoryStore, clock: FakeClock
) -> None:
    a, b = candidate(store, "a", clock), candidate(store, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # b observes at 1000
    clock.advance(0.6)
    assert a.try_acquire_or_renew()  # renewed at 1000.6
    clock.advance(0.3)
    assert not b.try_acquire_or_renew()  # b sees the change at 1000.9
    clock.advance(0.95)
    assert not b.try_acquire_or_renew()  # 1001.85 < 1001.9
    clock.advance(0.05)
    assert b.try_acquire_or_renew()  # 1001.9: a lease duration after b saw it


def test_a_longer_lease_duration_of_the_holder_is_honoured(
    store: MemoryStore, clock: FakeClock
) -> None:
    held_by(store, "old", lease_seconds=5)
    b = candidate(store, "b", clock)
    assert not b.try_acquire_or_renew()
    clock.advance(4.99)
    assert not b.try_acquire_or_renew()
    clock.advance(0.01)
    assert b.try_acquire_or_renew()


def test_a_free_lease_is_taken_at_once_and_counts_a_transition(
    store: MemoryStore, clock: FakeClock
) -> None:
    store.create(LeaderElectionRecord("", 1, WALL, WALL, 4))
    b = candidate(store, "b", clock)
    assert b.try_acquire_or_renew()
    record = store.record()
    assert record is not None
    assert (record.holder_identity, record.leader_transitions) == ("b", 5)


def test_its_own_record_is_taken_back_at_once(store: MemoryStore, clock: FakeClock) -> None:
    held_by(store, "a")
    metrics = CountingMetrics()
    a = candidate(store, "a", clock, metrics=metrics)  # e.g. a restarted process
    assert a.try_acquire_or_renew()
    record = store.record()
    assert record is not None
    assert record.leader_transitions == 0  # same holder: no transition
    assert record.acquire_time == WALL  # its term goes on
    assert metrics.slowpath == 0  # it did not know it held the lease


def test_renewals_take_the_fast_path(store: MemoryStore, clock: FakeClock) -> None:
    metrics = CountingMetrics()
    a = candidate(store, "a", clock, metrics=metrics)
    assert a.try_acquire_or_renew()
    first = store.record()
    gets = store.gets
    for _ in range(3):
        clock.advance(RP)
        assert a.try_acquire_or_renew()
    assert store.gets == gets  # no reads: optimistic updates on the cached version
    record = store.record()
    assert record is not None
    assert first is not None
    assert record.acquire_time == first.acquire_time
    assert record.renew_time is not None
    assert first.renew_time is not None
    assert record.renew_time > first.renew_time
    assert record.leader_transitions == 0
    assert metrics.slowpath == 0


def test_a_conflicting_renewal_rereads_and_counts_the_slow_path(
    store: MemoryStore, clock: FakeClock
) -> None:
    metrics = CountingMetrics()
    a = candidate(store, "a", clock, metrics=metrics)
    assert a.try_acquire_or_renew()
    # someone else writes the same record (a new resourceVersion): a's cached one is stale
    state = store.get()
    assert state is not None
    store.update(state.record, state.resource_version)
    clock.advance(RP)
    gets = store.gets
    assert a.try_acquire_or_renew()  # 409, re-read, still the holder, renewed
    assert store.gets == gets + 1
    assert metrics.slowpath == 1


def test_a_takeover_seen_on_the_slow_path_is_not_overwritten(
    store: MemoryStore, clock: FakeClock
) -> None:
    metrics = CountingMetrics()
    a = candidate(store, "a", clock, metrics=metrics)
    assert a.try_acquire_or_renew()
    state = store.get()
    assert state is not None
    store.update(LeaderElectionRecord("b", 1, WALL, WALL, 1), state.resource_version)
    clock.advance(RP)
    assert not a.try_acquire_or_renew()
    record = store.record()
    assert record is not None
    assert record.holder_identity == "b"
    assert a.leader() == "b"
    assert not a.holds_lease()
    assert metrics.slowpath == 0


def test_a_race_on_the_same_resource_version_has_one_winner(
    store: MemoryStore, clock: FakeClock
) -> None:
    store.create(LeaderElectionRecord("", 1, WALL, WALL, 0))
    a, b = candidate(store, "a", clock), candidate(store, "b", clock)
    results: list[bool] = []
    # b reads and decides while a is between its read and its write
    store.before_write = lambda: results.append(b.try_acquire_or_renew())
    results.append(a.try_acquire_or_renew())
    assert results == [True, False]  # b wrote first; a's write was a 409
    record = store.record()
    assert record is not None
    assert (record.holder_identity, record.leader_transitions) == ("b", 1)
    assert not a.try_acquire_or_renew()  # a re-reads: b holds it


def test_a_create_race_fails_and_the_next_attempt_reads(
    store: MemoryStore, clock: FakeClock
) -> None:
    a, b = candidate(store, "a", clock), candidate(store, "b", clock)
    results: list[bool] = []
    store.before_write = lambda: results.append(b.try_acquire_or_renew())
    results.append(a.try_acquire_or_renew())
    assert results == [True, False]
    assert not a.try_acquire_or_renew()
    assert a.leader() == "b"


def test_failed_requests_fail_the_attempt(store: MemoryStore, clock: FakeClock) -> None:
    a = candidate(store, "a", clock)
    assert a.try_acquire_or_renew()
    lock = a.config.lock
    assert isinstance(lock, MemoryLock)
    lock.failing = True
    clock.advance(RP)
    assert not a.try_acquire_or_renew()
    lock.failing = False
    assert a.try_acquire_or_renew()


def test_an_exhausted_timeout_sends_nothing_more(store: MemoryStore, clock: FakeClock) -> None:
    held_by(store, "old")
    b = candidate(store, "b", clock)
    writes = store.writes
    assert not b.try_acquire_or_renew(timeout=0.0)
    assert store.writes == writes


def test_release_clears_the_holder(store: MemoryStore, clock: FakeClock) -> None:
    a = candidate(store, "a", clock)
    assert a.release()  # nothing to release
    assert a.try_acquire_or_renew()
    assert a.release()
    record = store.record()
    assert record is not None
    assert record.holder_identity == ""
    assert record.lease_duration_seconds == 1
    assert record.leader_transitions == 0
    b = candidate(store, "b", clock)
    assert b.try_acquire_or_renew()  # at once: nobody holds it


def test_a_release_after_a_takeover_changes_nothing(store: MemoryStore, clock: FakeClock) -> None:
    a = candidate(store, "a", clock)
    assert a.try_acquire_or_renew()
    state = store.get()
    assert state is not None
    store.update(LeaderElectionRecord("b", 1, WALL, WALL, 1), state.resource_version)
    assert not a.release()  # 409: b's record stays
    record = store.record()
    assert record is not None
    assert record.holder_identity == "b"
