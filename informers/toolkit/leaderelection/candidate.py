"""One candidate's attempts on one Lease: :class:`Candidate`.

This is client-go's ``tryAcquireOrRenew`` and ``release`` with the
candidate's observation of the record; the loops, threads and callbacks
around it are :class:`~informers.toolkit.leaderelection.LeaderElector`'s. A custom
loop (a shard manager holding several Leases, a test) can drive a
:class:`Candidate` directly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from informers.errors import ApiError
from informers.toolkit._logcontext import context_logger
from informers.toolkit.leaderelection.config import LeaderElectionConfig
from informers.toolkit.leaderelection.errors import LeaderElectionError
from informers.toolkit.leaderelection.lock import LockState
from informers.toolkit.leaderelection.metrics import NOOP_LEADER_METRICS, LeaderMetrics
from informers.toolkit.leaderelection.record import (
    LeaderElectionRecord,
    ObservedRecord,
    expires_at,
    is_expired,
    lease_duration_seconds,
    may_acquire,
    next_renew_time,
    observe,
)
from informers.util.clock import REAL_CLOCK, Clock

__all__ = ["Candidate"]

log = context_logger(logging.getLogger(__name__))

#: What a lock raises for a request that failed (anything else is a bug).
_LOCK_ERRORS = (ApiError, LeaderElectionError)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _conflict(exc: BaseException) -> bool:
    return isinstance(exc, ApiError) and exc.status == 409


class Candidate:
    """A participant in the election of ``config``: it observes the record
    and tries to write itself into it.

    :meth:`try_acquire_or_renew` is one attempt (client-go's
    ``tryAcquireOrRenew``):

    1. *Fast path*: when the last observed record names this candidate and
       has not expired by its clock, update it with the cached
       ``resourceVersion``; done if that succeeds.
    2. Otherwise read the Lease (create it when there is none; a 409 means
       another candidate created it first: the attempt fails).
    3. Observe what was read: a record different from the one observed
       before is observed from now (:func:`~informers.toolkit.leaderelection.observe`).
    4. Give up unless the Lease may be taken
       (:func:`~informers.toolkit.leaderelection.may_acquire`: no holder, this
       candidate, or unchanged for a lease duration by the local clock).
    5. Update it with the ``resourceVersion`` just read: renewing keeps the
       acquire time and transition count, taking over sets a new acquire
       time and increments ``leaseTransitions``. A 409 (someone wrote in
       between) fails the attempt; the next one reads again. Nothing is ever
       written unconditionally.

    ``clock`` is the local clock every decision is made on; ``wall_clock``
    (default: the system's UTC time) only stamps the ``acquireTime`` and
    ``renewTime`` written.

    Thread-safety: the queries (:meth:`observed`, :meth:`leader`,
    :meth:`holds_lease`, :meth:`expires_at`) may be called from any thread;
    :meth:`try_acquire_or_renew` and :meth:`release` block for up to two
    requests and must not run concurrently with each other (the elector
    calls them from its one thread). One lock guards the observation; no
    request is made while holding it.
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        *,
        clock: Clock = REAL_CLOCK,
        metrics: LeaderMetrics = NOOP_LEADER_METRICS,
        wall_clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._config = config
        #: The wall clock of the timestamps written into the Lease (informational
        #: only; never read back for a decision). Tests may pin it.
        self._wall_clock = wall_clock or _utc_now
        self._clock = clock
        self._metrics = metrics
        self._name = config.election_name
        self._logger = context_logger(log.logger, election=self._name, identity=config.identity)
        self._lock = threading.Lock()
        #: The last record read or written and when it was first seen; None
        #: before the first successful read, or after a read found no Lease.
        #: Guarded by _lock. Invariant: ``observed_at`` never exceeds the
        #: clock's now, and only moves forward when the record changes.
        self._observed: ObservedRecord | None = None

    @property
    def config(self) -> LeaderElectionConfig:
        return self._config

    @property
    def identity(self) -> str:
        return self._config.identity

    # ------------------------------------------------------------- queries

    def observed(self) -> ObservedRecord | None:
        """The current observation (immutable), or ``None``."""
        with self._lock:
            return self._observed

    def leader(self) -> str:
        """The holder in the last observed record (empty when none)."""
        with self._lock:
            observed = self._observed
        return observed.record.holder_identity if observed is not None else ""

    def holds_lease(self) -> bool:
        """Whether the last observed record names this candidate (client-go's
        ``IsLeader``; this says nothing about renew deadlines)."""
        return self.leader() == self._config.identity

    def expires_at(self) -> float | None:
        """Local clock time from which the observed holder, another
        candidate, counts as gone; ``None`` when nobody else holds the
        observed record (or nothing was observed)."""
        with self._lock:
            observed = self._observed
        if observed is None:
            return None
        holder = observed.record.holder_identity
        if not holder or holder == self._config.identity:
            return None
        return expires_at(observed, self._config.lease_duration)

    # ------------------------------------------------------------ attempts

    def try_acquire_or_renew(self, timeout: float | None = None) -> bool:
        """One attempt to acquire or renew the Lease (see the class
        docstring). ``timeout`` bounds the whole attempt (each request gets
        what is left; ``None``: the lock's own timeout per request). True
        when this candidate wrote itself into the Lease. Never raises for a
        failed request (it is logged); blocks for up to two requests."""
        start = self._clock.now()
        limit = None if timeout is None else start + timeout
        config, identity = self._config, self._config.identity
        with self._lock:
            before = self._observed
        believed_holder = before is not None and before.record.holder_identity == identity

        # 1. the fast path: renew what we wrote last, optimistically
        if (
            before is not None
            and believed_holder
            and not is_expired(before, config.lease_duration, start)
        ):
            renewal = self._record(before.record, renewing=True)
            try:
                written = config.lock.update(
                    renewal, before.resource_version, timeout=self._left(limit)
                )
            except _LOCK_ERRORS as exc:
                self._logger.warning(
                    "lease %s: optimistic renewal by %s failed (%s), re-reading",
                    config.lock.describe(),
                    identity,
                    exc,
                )
            else:
                self._wrote(written)
                self._logger.debug("lease %s renewed by %s", config.lock.describe(), identity)
                return True

        # 2. read, or create
        left = self._left(limit)
        if left is not None and left <= 0:
            return False
        try:
            current = config.lock.get(timeout=left)
        except _LOCK_ERRORS as exc:
            self._logger.warning(
                "lease %s: read by %s failed: %s", config.lock.describe(), identity, exc
            )
            return False
        if current is None:
            with self._lock:
                self._observed = None  # nothing to observe: whoever creates it leads
            return self._create(limit)

        # 3. observe
        now = self._clock.now()
        with self._lock:
            observed = observe(self._observed, current.record, current.resource_version, now)
            self._observed = observed

        # 4. may we?
        holder = observed.record.holder_identity
        if not may_acquire(observed, identity, config.lease_duration, now):
            self._logger.debug(
                "lease %s is held by %s and has not expired", config.lock.describe(), holder
            )
            return False

        # 5. write ourselves in, conditional on what we just read
        renewing = holder == identity
        if renewing and believed_holder:
            self._metrics.slowpath_exercised(self._name)
        desired = self._record(observed.record, renewing=renewing)
        left = self._left(limit)
        if left is not None and left <= 0:
            return False
        try:
            written = config.lock.update(desired, observed.resource_version, timeout=left)
        except _LOCK_ERRORS as exc:
            if _conflict(exc):
                self._logger.info(
                    "lease %s was written by someone else before %s could; re-reading next time",
                    config.lock.describe(),
                    identity,
                )
            else:
                self._logger.warning(
                    "lease %s: update by %s failed: %s", config.lock.describe(), identity, exc
                )
            return False
        self._wrote(written)
        if not renewing:
            self._logger.info(
                "lease %s acquired by %s (transition %d)",
                config.lock.describe(),
                identity,
                desired.leader_transitions,
            )
        return True

    def release(self, timeout: float | None = None) -> bool:
        """Give the Lease up if the last observed record names this
        candidate: write an empty holder, ``leaseDurationSeconds`` 1 and the
        current time, conditional on the observed ``resourceVersion`` (a 409
        means someone took over already). True when released or when there
        was nothing to release. Never raises for a failed request; blocks for
        one request."""
        config = self._config
        with self._lock:
            observed = self._observed
        if observed is None or observed.record.holder_identity != config.identity:
            return True
        now = next_renew_time(observed.record.renew_time, self._wall_clock())
        released = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            leader_transitions=observed.record.leader_transitions,
        )
        try:
            written = config.lock.update(released, observed.resource_version, timeout=timeout)
        except _LOCK_ERRORS as exc:
            self._logger.warning(
                "lease %s: release by %s failed: %s", config.lock.describe(), config.identity, exc
            )
            return False
        self._wrote(written)
        self._logger.info("lease %s released by %s", config.lock.describe(), config.identity)
        return True

    # ------------------------------------------------------------- helpers

    def _left(self, limit: float | None) -> float | None:
        return None if limit is None else limit - self._clock.now()

    def _record(self, current: LeaderElectionRecord, *, renewing: bool) -> LeaderElectionRecord:
        """The record to write over ``current``: renewing keeps its acquire
        time and transitions, taking over starts a new term."""
        now = next_renew_time(current.renew_time, self._wall_clock())
        return LeaderElectionRecord(
            holder_identity=self._config.identity,
            lease_duration_seconds=lease_duration_seconds(self._config.lease_duration),
            acquire_time=(current.acquire_time or now) if renewing else now,
            renew_time=now,
            leader_transitions=(
                current.leader_transitions if renewing else current.leader_transitions + 1
            ),
        )

    def _create(self, limit: float | None) -> bool:
        config = self._config
        now = self._wall_clock()
        record = LeaderElectionRecord(
            holder_identity=config.identity,
            lease_duration_seconds=lease_duration_seconds(config.lease_duration),
            acquire_time=now,
            renew_time=now,
            leader_transitions=0,
        )
        left = self._left(limit)
        if left is not None and left <= 0:
            return False
        try:
            created = config.lock.create(record, timeout=left)
        except _LOCK_ERRORS as exc:
            if _conflict(exc):
                self._logger.info(
                    "lease %s was created by someone else first; re-reading next time",
                    config.lock.describe(),
                )
            else:
                self._logger.warning(
                    "lease %s: create by %s failed: %s",
                    config.lock.describe(),
                    config.identity,
                    exc,
                )
            return False
        self._wrote(created)
        self._logger.info(
            "lease %s created and acquired by %s", config.lock.describe(), config.identity
        )
        return True

    def _wrote(self, state: LockState) -> None:
        """Observe what the server answered to our own write."""
        now = self._clock.now()
        with self._lock:
            self._observed = observe(self._observed, state.record, state.resource_version, now)
