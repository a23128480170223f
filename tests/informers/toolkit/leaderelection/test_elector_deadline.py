"""The elector's renew deadline on a FakeClock with an in-memory Lease: a
leader whose renewals fail loses leadership exactly ``renew_deadline`` after
the start of its last successful renewal, even while a request hangs."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
from leaderelection_helpers import MemoryLock, MemoryStore

from informers.testing import FakeClock
from informers.toolkit.leaderelection import LeaderElectionConfig, LeaderElector, LockState

LD, RD, RP = 1.0, 0.75, 0.25  # binary fractions: the fake clock's sums are exact
EPS = 2**-10
WAIT = 5.0  # real seconds a test waits for a thread to react


class Recorder:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.leader_stop: threading.Event | None = None
        self.stopped = threading.Event()

    def on_started(self, stop: threading.Event) -> None:
        self.leader_stop = stop
        self.started.set()
        stop.wait()

    def on_stopped(self) -> None:
        self.stopped.set()


class SignallingLock(MemoryLock):
    """Sets ``wrote`` after every successful write; ``hang`` blocks writes
    until released (a request stuck in flight)."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        self.wrote = threading.Semaphore(0)
        self.hang = threading.Event()
        self.hanging = threading.Event()
        self.release_hang = threading.Event()

    def update(self, record, resource_version, *, timeout=None) -> LockState:  # type: ignore[no-untyped-def]
        if self.hang.is_set():
            self.hanging.set()
            self.release_hang.wait(WAIT)
        state = super().update(record, resource_version, timeout=timeout)
        self.wrote.release()
        return state

    def create(self, record, *, timeout=None) -> LockState:  # type: ignore[no-untyped-def]
        state = super().create(record, timeout=timeout)
        self.wrote.release()
        return state


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=1000.0)


@pytest.fixture
def setup(clock: FakeClock) -> Iterator[tuple[LeaderElector, SignallingLock, Recorder]]:
    lock = SignallingLock(MemoryStore())
    config = LeaderElectionConfig(
        lock=lock, identity="a", lease_duration=LD, renew_deadline=RD, retry_period=RP
    )
    recorder = Recorder()
    elector = LeaderElector(
        config,
        on_started_leading=recorder.on_started,
        on_stopped_leading=recorder.on_stopped,
        clock=clock,
        rng=random.Random(1),
    )
    elector.start()
    yield elector, lock, recorder
    lock.release_hang.set()
    assert elector.stop(WAIT)


def test_leadership_is_lost_exactly_at_the_renew_deadline(
    clock: FakeClock, setup: tuple[LeaderElector, SignallingLock, Recorder]
) -> None:
    elector, lock, recorder = setup
    assert lock.wrote.acquire(timeout=WAIT)  # acquired at 1000.0
    assert recorder.started.wait(WAIT)
    assert elector.is_leader()
    assert clock.wait_for_waiters(2, WAIT)  # the renew loop and the watchdog
    clock.advance(RP)
    assert lock.wrote.acquire(timeout=WAIT)  # renewed, the attempt began at 1000.25
    lock.failing = True  # from now on every renewal fails
    clock.advance(RD - EPS)
    assert recorder.leader_stop is not None
    assert not recorder.leader_stop.wait(0.05)
    assert elector.is_leader()
    clock.advance(EPS)  # 1001.0 = 1000.25 + RD
    assert recorder.leader_stop.wait(WAIT)
    assert not elector.is_leader()
    assert recorder.stopped.wait(WAIT)
    assert elector.join(WAIT)  # one term: run() returned


def test_the_watchdog_ends_the_term_while_a_renewal_hangs(
    clock: FakeClock, setup: tuple[LeaderElector, SignallingLock, Recorder]
) -> None:
    elector, lock, recorder = setup
    assert lock.wrote.acquire(timeout=WAIT)  # acquired at 1000.0
    assert recorder.started.wait(WAIT)
    assert clock.wait_for_waiters(2, WAIT)
    lock.hang.set()
    clock.advance(RP)  # the renewal at 1000.25 blocks in its request
    assert lock.hanging.wait(WAIT)
    clock.advance(RD - RP - EPS)
    assert recorder.leader_stop is not None
    assert not recorder.leader_stop.wait(0.05)
    clock.advance(EPS)  # 1000.75: the deadline of the acquisition at 1000.0
    assert recorder.leader_stop.wait(WAIT)  # set while the request still hangs
    assert not elector.is_leader()
    assert not recorder.stopped.is_set()  # on_stopped_leading waits for the run thread
    lock.release_hang.set()  # the late renewal succeeds, but the term is over
    assert recorder.stopped.wait(WAIT)
    assert elector.join(WAIT)
    assert not elector.is_leader()
