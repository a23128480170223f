"""Property tests of the election protocol on in-memory Leases, with
candidates that have their own configs and clock offsets (clocks that agree in
rate).

A candidate *believes it leads* from the start of a successful attempt for
``renew_deadline`` of its clock (what the elector's watchdog enforces).

``ElectionMachine`` (a hypothesis state machine) interleaves single attempts,
rounds of attempts, races of two candidates on one resource version (one
attempts between the other's read and write), partitions (a candidate's
requests fail), releases, foreign writes and clock advances. After every step:

* at most one candidate believes it leads;
* while one does, the Lease names it as the holder;
* ``leaseTransitions`` counts exactly the changes of holder.

``test_polling_candidates_never_overlap`` simulates the electors' loops
themselves (jittered retries, the wake at the observed expiry, outages) and
checks the first property at every attempt.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from leaderelection_helpers import MemoryLock, MemoryStore

from informers.testing import FakeClock
from informers.toolkit.leaderelection import JITTER_FACTOR, Candidate, LeaderElectionConfig

IDENTITIES = ["a", "b", "c"]
WALL = datetime(2024, 5, 1, tzinfo=UTC)


@st.composite
def durations(draw: st.DrawFn) -> tuple[float, float, float]:
    """A valid (lease_duration, renew_deadline, retry_period)."""
    retry = draw(st.sampled_from([0.5, 1.0, 2.0]))
    renew = draw(st.sampled_from([1.25, 2.0, 4.0])) * JITTER_FACTOR * retry
    lease = renew * draw(st.sampled_from([1.05, 1.2, 1.5, 2.0]))
    return lease, renew, retry


class ElectionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = MemoryStore()
        self.now = 0.0  # global time
        self.candidates: list[Candidate] = []
        self.clocks: list[FakeClock] = []
        self.believed_until: list[float] = []  # global time each belief ends
        self.holder = ""  # the holder after the last write, for the transition model
        self.transitions = 0
        self.created = False  # the Lease exists

    @initialize(
        configs=st.lists(durations(), min_size=len(IDENTITIES), max_size=len(IDENTITIES)),
        offsets=st.lists(
            st.floats(-1e6, 1e6, allow_nan=False),
            min_size=len(IDENTITIES),
            max_size=len(IDENTITIES),
        ),
    )
    def make_candidates(
        self, configs: list[tuple[float, float, float]], offsets: list[float]
    ) -> None:
        for identity, (lease, renew, retry), offset in zip(
            IDENTITIES, configs, offsets, strict=True
        ):
            clock = FakeClock(start=1e7 + offset)
            config = LeaderElectionConfig(
                lock=MemoryLock(self.store),
                identity=identity,
                lease_duration=lease,
                renew_deadline=renew,
                retry_period=retry,
            )
            self.clocks.append(clock)
            self.candidates.append(Candidate(config, clock=clock, wall_clock=self.wall_clock))
            self.believed_until.append(-math.inf)

    def wall_clock(self) -> datetime:
        """Deterministic timestamps (replays of an example write the same records)."""
        return WALL + timedelta(seconds=self.now)

    # ---------------------------------------------------------------- steps

    def _after_success(self, index: int) -> None:
        """Candidate ``index`` wrote itself in: it believes it leads."""
        self.believed_until[index] = self.now + self.candidates[index].config.renew_deadline
        identity = IDENTITIES[index]
        if identity != self.holder:
            if self.created:  # the creating write starts at 0
                self.transitions += 1
            self.holder = identity
        self.created = True

    @rule(index=st.integers(0, len(IDENTITIES) - 1))
    def attempt(self, index: int) -> None:
        writes = self.store.writes
        if self.candidates[index].try_acquire_or_renew():
            self._after_success(index)
            assert self.store.writes == writes + 1  # one write, never more

    @rule(order=st.permutations(range(len(IDENTITIES))))
    def everyone_attempts(self, order: list[int]) -> None:
        """A round of the electors' loops: each candidate attempts once."""
        for index in order:
            self.attempt(index)

    @rule(index=st.integers(0, len(IDENTITIES) - 1), cut=st.booleans())
    def partition(self, index: int, cut: bool) -> None:
        """Cut one candidate off the API server (its requests fail), or heal it."""
        lock = self.candidates[index].config.lock
        assert isinstance(lock, MemoryLock)
        lock.failing = cut

    @precondition(lambda self: any(b > self.now for b in self.believed_until))
    @rule()
    def partition_the_leader(self) -> None:
        """The current leader's renewals start failing (its belief runs on
        until its renew deadline)."""
        index = next(i for i, b in enumerate(self.believed_until) if b > self.now)
        self.partition(index, cut=True)

    @rule(first=st.integers(0, len(IDENTITIES) - 1), second=st.integers(0, len(IDENTITIES) - 1))
    def race(self, first: int, second: int) -> None:
        """``second`` makes a whole attempt while ``first`` is between its
        read and its write (both read the same resource version)."""
        if first == second:
            return

        def interleave() -> None:
            if self.candidates[second].try_acquire_or_renew():
                self._after_success(second)

        self.store.before_write = interleave
        if self.candidates[first].try_acquire_or_renew():
            self._after_success(first)
        self.store.before_write = None

    @rule(
        index=st.integers(0, len(IDENTITIES) - 1),
        fraction=st.sampled_from([0.05, 0.3, 0.5, 0.65, 0.8, 0.95, 1.0, 1.2, 2.0]),
    )
    def advance(self, index: int, fraction: float) -> None:
        """Time passes: a fraction of one candidate's renew deadline (so the
        steps land near the boundaries that matter)."""
        dt = fraction * self.candidates[index].config.renew_deadline
        self.now += dt
        for clock in self.clocks:
            clock.advance(dt)

    @precondition(lambda self: any(b > self.now for b in self.believed_until))
    @rule()
    def leader_releases(self) -> None:
        index = next(i for i, b in enumerate(self.believed_until) if b > self.now)
        self.believed_until[index] = self.now  # its work stopped before the release
        if self.candidates[index].release():
            self.holder = ""

    @rule()
    def foreign_write(self) -> None:
        """Someone else writes the Lease without changing the record (a
        label): every cached resource version is stale."""
        state = self.store.get()
        if state is not None:
            self.store.update(state.record, state.resource_version)

    # ----------------------------------------------------------- invariants

    @invariant()
    def at_most_one_leader(self) -> None:
        leading = [IDENTITIES[i] for i, b in enumerate(self.believed_until) if b > self.now]
        assert len(leading) <= 1, f"{leading} all believe they lead at {self.now}"
        if leading:
            record = self.store.record()
            assert record is not None
            assert record.holder_identity == leading[0]

    @invariant()
    def transitions_count_holder_changes(self) -> None:
        record = self.store.record()
        if record is not None:
            assert record.leader_transitions == self.transitions
            assert record.holder_identity == self.holder


ElectionMachine.TestCase.settings = settings(stateful_step_count=30, deadline=None)
TestElectionMachine = ElectionMachine.TestCase


@settings(deadline=None)
@given(
    configs=st.lists(durations(), min_size=3, max_size=3),
    offsets=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=3),
    outages=st.lists(st.tuples(st.integers(0, 2), st.floats(0, 15), st.floats(0, 8)), max_size=4),
    jitter=st.randoms(use_true_random=False),
)
def test_polling_candidates_never_overlap(
    configs: list[tuple[float, float, float]],
    offsets: list[float],
    outages: list[tuple[int, float, float]],
    jitter: random.Random,
) -> None:
    """The electors' loops, simulated: every candidate attempts when its
    (jittered) retry period is up -- or, as the elector does, exactly when the
    observed record expires -- while some candidates are cut off from the
    server for a while. Two candidates never believe they lead at once."""
    store = MemoryStore()
    clocks = [FakeClock(start=1e7 + offset) for offset in offsets]
    locks = [MemoryLock(store) for _ in IDENTITIES]
    candidates = [
        Candidate(
            LeaderElectionConfig(
                lock=locks[i],
                identity=identity,
                lease_duration=ld,
                renew_deadline=rd,
                retry_period=rp,
            ),
            clock=clocks[i],
            wall_clock=lambda: WALL,
        )
        for i, (identity, (ld, rd, rp)) in enumerate(zip(IDENTITIES, configs, strict=True))
    ]
    believed_until = [-math.inf] * len(IDENTITIES)
    next_at = [jitter.uniform(0, 1) for _ in IDENTITIES]
    now = 0.0
    while now < 20.0:
        index = min(range(len(IDENTITIES)), key=next_at.__getitem__)
        dt, now = next_at[index] - now, next_at[index]
        for clock in clocks:
            clock.advance(dt)
        locks[index].failing = any(
            who == index and start <= now < start + length for who, start, length in outages
        )
        candidate, retry = candidates[index], candidates[index].config.retry_period
        if candidate.try_acquire_or_renew():
            believed_until[index] = now + candidate.config.renew_deadline
            next_at[index] = now + retry
        else:
            delay = retry * (1 + JITTER_FACTOR * jitter.random())
            expiry, local = candidate.expires_at(), clocks[index].now()
            if expiry is not None and local < expiry < local + delay:
                delay = expiry - local
            next_at[index] = now + delay
        leading = [IDENTITIES[i] for i, until in enumerate(believed_until) if until > now]
        assert len(leading) <= 1, f"{leading} all believe they lead at {now}"
