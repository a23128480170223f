"""A shard Lease seen by one observer over time, against a simple model:
the state depends only on who holds it and how long ago, by the observer's
clock, its record last changed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from informers.toolkit.leaderelection import LeaderElectionRecord, ObservedRecord, observe
from informers.toolkit.sharding import ShardState, lease_state

DURATION = 1.0
GRACE = 2.0
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class ObservedLease(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.rv = 1
        self.record = LeaderElectionRecord("shard-a", 1, EPOCH, EPOCH, 0)
        self.observed: ObservedRecord = observe(None, self.record, "1", self.now)
        # the model: holder and the local time of the last change
        self.holder = "shard-a"
        self.changed_at = 0.0

    def _write(self, record: LeaderElectionRecord) -> None:
        self.rv += 1
        changed = record != self.record
        self.record = record
        self.observed = observe(self.observed, record, str(self.rv), self.now)
        if changed:
            self.changed_at = self.now
        self.holder = record.holder_identity

    @rule(seconds=st.floats(0, 4 * DURATION, allow_nan=False))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds

    @rule()
    def renew(self) -> None:
        renewed = (self.record.renew_time or EPOCH) + timedelta(microseconds=1)
        self._write(LeaderElectionRecord("shard-a", 1, EPOCH, renewed, 0))

    @rule()
    def release(self) -> None:
        self._write(LeaderElectionRecord("", 1, EPOCH, self.record.renew_time, 0))

    @rule()
    def resync_without_change(self) -> None:
        self._write(self.record)  # the same record again: nobody renewed

    def model(self) -> ShardState:
        if self.holder == "shard-a":
            for limit, state in (
                (1, ShardState.READY),
                (2, ShardState.EXPIRED),
                (3, ShardState.UNCERTAIN),
            ):
                if self.now < self.changed_at + limit * DURATION:
                    return state
            dead_since = self.changed_at + 3 * DURATION
        else:
            dead_since = self.changed_at
        return ShardState.ORPHANED if self.now >= dead_since + GRACE else ShardState.DEAD

    @invariant()
    def state_matches_the_model(self) -> None:
        got = lease_state(self.observed, "shard-a", self.now, DURATION, GRACE)
        assert got is self.model()


ObservedLease.TestCase.settings = settings(max_examples=100, stateful_step_count=30)
TestObservedLease = ObservedLease.TestCase
