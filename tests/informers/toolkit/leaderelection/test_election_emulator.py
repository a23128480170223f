"""Three candidates in one process elect against the emulator over real HTTP.

Every candidate records its leading intervals (from when on_started_leading
begins until it sees its stop event) on one shared timeline; the intervals
never overlap. Faults target one candidate through the ``X-Candidate`` header
its ApiClient sends. Durations are short (lease 1 s, renew 0.7 s, retry 0.2 s);
waits are on events and conditions, never sleeps."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from leaderelection_helpers import (
    HEADER,
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    Replica,
    Timeline,
    by_identity,
)

from informers.errors import ApiError, InformerStateError
from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    JITTER_FACTOR,
    LeaderElectionRecord,
    LeaseLock,
    LockState,
)

#: Slack for HTTP and thread scheduling on a loaded machine.
SLACK = 0.5
#: A candidate notices a stopped leader's last renewal up to one jittered
#: retry period late, and then waits a lease duration by its own clock.
FAILOVER_BOUND = LEASE_DURATION + (1 + JITTER_FACTOR) * RETRY_PERIOD + SLACK
WAIT = 15.0


@pytest.fixture
def timeline() -> Timeline:
    return Timeline()


@pytest.fixture
def make_replicas(
    api_server: ApiServer, timeline: Timeline
) -> Iterator[Callable[..., list[Replica]]]:
    made: list[Replica] = []

    def make(count: int = 3, **options: Any) -> list[Replica]:
        replicas = [Replica(api_server, f"c{i}", timeline, **options) for i in range(count)]
        made.extend(replicas)
        return replicas

    yield make
    api_server.clear_faults()
    for replica in made:
        replica.close()


def start_all(replicas: list[Replica]) -> None:
    for replica in replicas:
        replica.elector.start()


def test_three_candidates_elect_one_leader_and_fail_over_when_it_stops(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline, api_server: ApiServer
) -> None:
    replicas = make_replicas()
    start_all(replicas)
    first = timeline.wait_for_starts(1)[0]
    leader = by_identity(replicas, first.who)
    assert leader.elector.is_leader()
    assert [r.identity for r in replicas if r.elector.is_leader()] == [leader.identity]
    for replica in replicas:
        assert replica.elector.get_leader() in ("", leader.identity)

    stopped_at = time.monotonic()
    assert leader.elector.stop(WAIT)  # no release: the others wait for expiry
    assert leader.events == ["started", "leader-stop", "stopped"]
    second = timeline.wait_for_starts(2, WAIT)[1]
    failover = second.start - stopped_at
    assert second.who != leader.identity
    assert LEASE_DURATION - RETRY_PERIOD - 0.3 <= failover <= FAILOVER_BOUND, failover

    lease = api_server.get("leases", "election", "default")["spec"]
    assert lease["holderIdentity"] == second.who
    assert lease["leaseTransitions"] == 1
    assert lease["leaseDurationSeconds"] == 1
    for replica in replicas:
        replica.elector.stop(WAIT)
    timeline.assert_no_overlap()
    for replica in replicas:
        # the leader reports itself; never-leaders never get on_stopped_leading
        assert replica.new_leaders[-1] in (leader.identity, second.who)
        assert replica.stopped_leading.is_set() == (replica.identity in (first.who, second.who))
    newcomer = by_identity(replicas, second.who)
    assert newcomer.new_leaders == [leader.identity, second.who]


def test_fail_over_when_the_leaders_renewals_fail(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline, api_server: ApiServer
) -> None:
    replicas = make_replicas()
    start_all(replicas)
    leader = by_identity(replicas, timeline.wait_for_starts(1)[0].who)
    failed_at = time.monotonic()
    api_server.fail_next(10**6, 500, header=(HEADER, leader.identity))

    assert leader.lost.wait(WAIT)
    lost_after = timeline.intervals()[0].end
    assert lost_after is not None
    # its last success began before the fault: it gives up within a renew deadline
    assert RENEW_DEADLINE - RETRY_PERIOD - 0.2 <= lost_after - failed_at <= RENEW_DEADLINE + SLACK
    second = timeline.wait_for_starts(2, WAIT)[1]
    assert second.who != leader.identity
    assert second.start - failed_at <= FAILOVER_BOUND
    assert leader.stopped_leading.wait(WAIT)
    assert leader.elector.join(WAIT)  # one term: its run ended
    timeline.assert_no_overlap()


def test_fail_over_when_the_leaders_requests_hang(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline, api_server: ApiServer
) -> None:
    """Slow answers: the leader's renewals time out (and urllib3 retries
    them), while the server still applies them late, conditional on a
    resourceVersion that is stale by then."""
    replicas = make_replicas()
    start_all(replicas)
    leader = by_identity(replicas, timeline.wait_for_starts(1)[0].who)
    delayed_at = time.monotonic()
    api_server.delay_next(10**6, 1.5, header=(HEADER, leader.identity))

    assert leader.lost.wait(WAIT)
    lost_after = timeline.intervals()[0].end
    assert lost_after is not None
    # the watchdog ends the term at the deadline although a request is in flight
    assert lost_after - delayed_at <= RENEW_DEADLINE + SLACK
    second = timeline.wait_for_starts(2, WAIT)[1]
    assert second.who != leader.identity
    assert leader.stopped_leading.wait(WAIT)
    # the late writes never took the lease back
    api_server.clear_faults()
    lease = api_server.get("leases", "election", "default")["spec"]
    assert lease["holderIdentity"] != leader.identity
    timeline.assert_no_overlap()


class RacingLock:
    """A LeaseLock whose first update waits until the other candidate's
    first update is ready too: both PUT the resourceVersion they read."""

    def __init__(self, lock: LeaseLock, barrier: threading.Barrier) -> None:
        self._lock = lock
        self._barrier = barrier
        self._raced = False
        self.conflicts = 0
        self.conflicted = threading.Event()

    def get(self, *, timeout: float | None = None) -> LockState | None:
        return self._lock.get(timeout=timeout)

    def create(self, record: LeaderElectionRecord, *, timeout: float | None = None) -> LockState:
        return self._lock.create(record, timeout=timeout)

    def update(
        self, record: LeaderElectionRecord, resource_version: str, *, timeout: float | None = None
    ) -> LockState:
        if not self._raced:
            self._raced = True
            self._barrier.wait()
        try:
            return self._lock.update(record, resource_version, timeout=timeout)
        except ApiError as err:
            if err.status == 409:
                self.conflicts += 1
                self.conflicted.set()
            raise

    def describe(self) -> str:
        return self._lock.describe()


def test_a_409_race_on_the_same_resource_version_yields_one_leader(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline, api_server: ApiServer
) -> None:
    api_server.create(
        "leases", {"metadata": {"name": "election"}, "spec": {"holderIdentity": ""}}, "default"
    )
    barrier = threading.Barrier(2, timeout=WAIT)

    def racing(lock: LeaseLock) -> RacingLock:
        return RacingLock(lock, barrier)

    replicas = make_replicas(2, wrap_lock=racing)
    start_all(replicas)
    winner = by_identity(replicas, timeline.wait_for_starts(1)[0].who)
    loser = next(r for r in replicas if r is not winner)
    assert isinstance(loser.lock, RacingLock)
    assert isinstance(winner.lock, RacingLock)
    assert loser.lock.conflicted.wait(WAIT)  # its PUT of the same version was a 409
    assert (winner.lock.conflicts, loser.lock.conflicts) == (0, 1)
    assert not loser.leading.is_set()
    assert loser.elector.get_leader() == winner.identity or loser.elector.get_leader() == ""
    # the loser is alive and takes over once the winner is gone
    winner.elector.stop(WAIT)
    assert timeline.wait_for_starts(2, WAIT)[1].who == loser.identity
    loser.elector.stop(WAIT)
    timeline.assert_no_overlap()
    assert api_server.get("leases", "election", "default")["spec"]["leaseTransitions"] == 2


def test_release_on_cancel_hands_over_at_once(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline, api_server: ApiServer
) -> None:
    lease_duration = 3.0
    replicas = make_replicas(
        lease_duration=lease_duration, renew_deadline=2.0, release_on_cancel=True
    )
    start_all(replicas)
    leader = by_identity(replicas, timeline.wait_for_starts(1)[0].who)
    stopped_at = time.monotonic()
    assert leader.elector.stop(WAIT)
    second = timeline.wait_for_starts(2, WAIT)[1]
    handover = second.start - stopped_at
    assert handover <= (1 + JITTER_FACTOR) * RETRY_PERIOD + SLACK < lease_duration
    lease = api_server.get("leases", "election", "default")["spec"]
    assert lease["holderIdentity"] == second.who
    assert lease["leaseTransitions"] == 1
    for replica in replicas:
        replica.elector.stop(WAIT)
    timeline.assert_no_overlap()


def test_the_release_waits_for_on_started_leading_to_return(
    api_server: ApiServer, timeline: Timeline
) -> None:
    saw_stop, may_return = threading.Event(), threading.Event()
    order: list[str] = []

    def slow_leader(stop: threading.Event) -> None:
        timeline.start("a")
        stop.wait()
        saw_stop.set()
        may_return.wait(WAIT)
        order.append("returned")
        timeline.end("a")

    a = Replica(api_server, "a", timeline, release_on_cancel=True, on_started_leading=slow_leader)
    b = Replica(api_server, "b", timeline)
    try:
        a.elector.start()
        timeline.wait_for_starts(1)
        b.elector.start()
        a.elector.stop(timeout=0)  # ask, do not wait
        assert saw_stop.wait(WAIT)
        lease = api_server.get("leases", "election", "default")["spec"]
        assert lease["holderIdentity"] == "a"  # not released while the work runs
        assert not b.leading.is_set()
        may_return.set()
        assert a.elector.join(WAIT)
        assert api_server.get("leases", "election", "default")["spec"]["holderIdentity"] in (
            "",
            "b",
        )
        assert order == ["returned"]
        assert timeline.wait_for_starts(2, WAIT)[1].who == "b"
        assert a.stopped_leading.is_set()
    finally:
        may_return.set()
        a.close()
        b.close()
    timeline.assert_no_overlap()


def test_threads_are_named_and_runs_do_not_overlap(
    make_replicas: Callable[..., list[Replica]], timeline: Timeline
) -> None:
    (replica,) = make_replicas(1)
    replica.elector.start()
    with pytest.raises(InformerStateError, match="already started"):
        replica.elector.start()
    with pytest.raises(InformerStateError, match="running already"):
        replica.elector.run(threading.Event())
    timeline.wait_for_starts(1)
    names = {t.name for t in threading.enumerate() if "leader-elector-" in t.name}
    prefix = "leader-elector-default/election[c0]"
    assert {prefix, f"{prefix}-watchdog", f"{prefix}-leading", f"{prefix}-notify"} <= names
    assert replica.elector.stop(WAIT)
    replica.elector.start()  # a new run after the previous one ended
    timeline.wait_for_starts(2, WAIT)
