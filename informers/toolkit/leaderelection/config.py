"""The settings of one election: :class:`LeaderElectionConfig`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from informers.toolkit.leaderelection.errors import LeaderElectionConfigError
from informers.toolkit.leaderelection.lock import ResourceLock

__all__ = ["JITTER_FACTOR", "LeaderElectionConfig"]

#: Candidates wait between ``retry_period`` and ``(1 + JITTER_FACTOR) *
#: retry_period`` between acquisition attempts (client-go's ``JitterFactor``).
JITTER_FACTOR = 1.2


@dataclass(frozen=True)
class LeaderElectionConfig:
    """How to elect on ``lock`` as ``identity`` (client-go's
    ``LeaderElectionConfig``). Immutable; validated when made.

    ``lease_duration``
        how long a candidate waits, by its own clock, without seeing the
        record change before it takes the Lease over (default 15 s).
    ``renew_deadline``
        how long the leader keeps trying to renew before it gives up
        leadership (default 10 s). The leader's work must stop within
        ``lease_duration - renew_deadline`` after that: that margin is all
        that separates it from the next leader.
    ``retry_period``
        the pause between attempts (default 2 s; acquisition attempts are
        jittered by :data:`JITTER_FACTOR`).
    ``release_on_cancel``
        clear the holder when the elector stops, so that another candidate
        takes over at once instead of after a lease duration. Only safe if
        the work guarded by the lease has really finished (the elector waits
        for ``on_started_leading`` to return first).
    ``name``
        the election's name in logs, thread names and metrics (default: the
        lock's ``namespace/name``).

    Raises :class:`~informers.toolkit.leaderelection.LeaderElectionConfigError` (a
    :class:`ValueError`) unless ``lease_duration > renew_deadline >
    JITTER_FACTOR * retry_period > 0`` and ``identity`` is not empty.
    """

    lock: ResourceLock
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.identity, str) or not self.identity:
            raise LeaderElectionConfigError("identity must be a non-empty string")
        durations = {
            "lease_duration": self.lease_duration,
            "renew_deadline": self.renew_deadline,
            "retry_period": self.retry_period,
        }
        for field, value in durations.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise LeaderElectionConfigError(f"{field} must be a number, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise LeaderElectionConfigError(f"{field} must be positive and finite, not {value}")
        if self.lease_duration <= self.renew_deadline:
            raise LeaderElectionConfigError(
                f"lease_duration ({self.lease_duration}) must be greater than "
                f"renew_deadline ({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise LeaderElectionConfigError(
                f"renew_deadline ({self.renew_deadline}) must be greater than "
                f"{JITTER_FACTOR} * retry_period ({self.retry_period})"
            )

    @property
    def election_name(self) -> str:
        """:attr:`name`, or the lock's ``namespace/name`` when that is empty."""
        return self.name or self.lock.describe()

    @property
    def stop_margin(self) -> float:
        """``lease_duration - renew_deadline``: how long a leader that lost
        its lease has to stop its work before another may start."""
        return self.lease_duration - self.renew_deadline
