"""Helpers of the leader election tests: an in-memory Lease store (the lock
stand-in of the pure-decision tests and the state machine), a shared timeline
of leading intervals, and replicas electing against the emulator."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from informers.errors import ApiError
from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    LeaseLockError,
    LockState,
    ResourceLock,
)

# ------------------------------------------------------------------ in memory


class MemoryStore:
    """One Lease in memory with the API server's optimistic concurrency:
    every write bumps the resource version, a stale one is a 409."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._obj: dict[str, Any] | None = None  # guarded by _lock
        self._rv = itertools.count(1)
        self.before_write: Callable[[], None] | None = None  # one-shot hook (races)
        self.gets = 0  # guarded by _lock
        self.writes = 0  # guarded by _lock

    def _stamp_locked(self, record: LeaderElectionRecord) -> LockState:
        obj = {"metadata": {"name": "lease", "resourceVersion": str(next(self._rv))}}
        obj["spec"] = record.to_spec()
        self._obj = obj
        self.writes += 1
        return LockState(LeaderElectionRecord.from_spec(obj["spec"]), obj)

    def _hook(self) -> None:
        hook, self.before_write = self.before_write, None
        if hook is not None:
            hook()

    def get(self) -> LockState | None:
        with self._lock:
            self.gets += 1
            if self._obj is None:
                return None
            return LockState(LeaderElectionRecord.from_spec(self._obj["spec"]), self._obj)

    def create(self, record: LeaderElectionRecord) -> LockState:
        self._hook()
        with self._lock:
            if self._obj is not None:
                raise ApiError(409, "AlreadyExists", "lease exists")
            return self._stamp_locked(record)

    def update(self, record: LeaderElectionRecord, resource_version: str) -> LockState:
        assert resource_version, "never unconditional"
        self._hook()
        with self._lock:
            if self._obj is None:
                raise ApiError(404, "NotFound", "no lease")
            if self._obj["metadata"]["resourceVersion"] != resource_version:
                raise ApiError(409, "Conflict", "the object has been modified")
            return self._stamp_locked(record)

    def record(self) -> LeaderElectionRecord | None:
        state = self.get()
        return state.record if state is not None else None


class MemoryLock:
    """One candidate's view of a :class:`MemoryStore` (a ResourceLock);
    ``failing`` makes every request fail as a broken connection would."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.failing = False

    def _check(self) -> None:
        if self.failing:
            raise LeaseLockError("injected: connection refused")

    def get(self, *, timeout: float | None = None) -> LockState | None:
        self._check()
        return self.store.get()

    def create(self, record: LeaderElectionRecord, *, timeout: float | None = None) -> LockState:
        self._check()
        return self.store.create(record)

    def update(
        self, record: LeaderElectionRecord, resource_version: str, *, timeout: float | None = None
    ) -> LockState:
        self._check()
        return self.store.update(record, resource_version)

    def describe(self) -> str:
        return "default/lease"


# ------------------------------------------------------------------ timeline


@dataclass
class Interval:
    who: str
    start: float
    end: float | None = None


class Timeline:
    """Leading intervals of every candidate on one clock (time.monotonic),
    recorded under one lock; waiters block on its condition."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._intervals: list[Interval] = []  # guarded by _cond

    def start(self, who: str) -> None:
        with self._cond:
            self._intervals.append(Interval(who, time.monotonic()))
            self._cond.notify_all()

    def end(self, who: str) -> None:
        with self._cond:
            for interval in reversed(self._intervals):
                if interval.who == who and interval.end is None:
                    interval.end = time.monotonic()
                    break
            else:
                raise AssertionError(f"{who} ended a term it never started")
            self._cond.notify_all()

    def intervals(self) -> list[Interval]:
        with self._cond:
            return [Interval(i.who, i.start, i.end) for i in self._intervals]

    def wait_for_starts(self, count: int, timeout: float = 10.0) -> list[Interval]:
        """Block until ``count`` terms started; the intervals then."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self._intervals) >= count, timeout)
        assert ok, f"only {len(self.intervals())} of {count} terms started within {timeout}s"
        return self.intervals()

    def assert_no_overlap(self) -> None:
        """At most one leader at any instant: each term ends before the next starts."""
        terms = sorted(self.intervals(), key=lambda i: i.start)
        for before, after in itertools.pairwise(terms):
            assert before.end is not None, f"{before.who} still leads while {after.who} started"
            assert before.end <= after.start, (
                f"{before.who} led until {before.end:.4f}, {after.who} started at {after.start:.4f}"
            )


# ------------------------------------------------------------------ replicas

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 1.0, 0.7, 0.2
HEADER = "X-Candidate"


class Replica:
    """One candidate against the emulator, with its own ApiClient (its
    requests carry ``X-Candidate: <identity>`` so faults can target it)."""

    def __init__(
        self,
        server: ApiServer,
        identity: str,
        timeline: Timeline,
        *,
        lease: str = "election",
        lease_duration: float = LEASE_DURATION,
        renew_deadline: float = RENEW_DEADLINE,
        retry_period: float = RETRY_PERIOD,
        release_on_cancel: bool = False,
        read_timeout: float = 2.0,
        wrap_lock: Callable[[LeaseLock], ResourceLock] | None = None,
        on_started_leading: Callable[[threading.Event], None] | None = None,
        **elector_options: Any,
    ) -> None:
        self.identity = identity
        self.timeline = timeline
        self.api = server.api_client()
        self.api.set_default_header(HEADER, identity)
        self.lease_lock = LeaseLock(self.api, "default", lease, read_timeout=read_timeout)
        self.lock = wrap_lock(self.lease_lock) if wrap_lock is not None else self.lease_lock
        self.config = LeaderElectionConfig(
            lock=self.lock,
            identity=identity,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            release_on_cancel=release_on_cancel,
        )
        self.leading = threading.Event()  # set when on_started_leading began
        self.lost = threading.Event()  # set when its stop event was seen
        self.stopped_leading = threading.Event()  # on_stopped_leading was called
        self.new_leaders: list[str] = []
        self.events: list[str] = []  # callbacks in order
        self.elector = LeaderElector(
            self.config,
            on_started_leading=on_started_leading or self._lead,
            on_stopped_leading=self._stopped,
            on_new_leader=self._new_leader,
            **elector_options,
        )

    def _lead(self, stop: threading.Event) -> None:
        self.timeline.start(self.identity)
        self.events.append("started")
        self.leading.set()
        stop.wait()
        self.timeline.end(self.identity)
        self.events.append("leader-stop")
        self.lost.set()

    def _stopped(self) -> None:
        self.events.append("stopped")
        self.stopped_leading.set()

    def _new_leader(self, identity: str) -> None:
        self.new_leaders.append(identity)

    def close(self) -> None:
        assert self.elector.stop(10.0), f"{self.identity} did not stop"
        self.api.close()


def by_identity(replicas: list[Replica], identity: str) -> Replica:
    return next(r for r in replicas if r.identity == identity)
