"""Leader election on ``coordination.k8s.io/v1`` Leases, a port of
client-go's ``tools/leaderelection``.

Several replicas of a controller run a :class:`LeaderElector` each on the same
Lease; at most one of them leads at a time (as long as their clocks run at the
same rate), and when it stops or stops renewing, another takes over. Use
:func:`run_with_leader_election` to run a controller only while leading::

    lock = LeaseLock(api_client, "kube-system", "my-controller")
    config = LeaderElectionConfig(lock=lock, identity=socket.gethostname())
    run_with_leader_election(controller, config, stop=stop_event)

Parts:

:class:`LeaderElectionConfig`
    durations (lease 15 s, renew deadline 10 s, retry 2 s), identity, lock.
:class:`LeaseLock` (a :class:`ResourceLock`)
    reads and writes the Lease through the ``kubernetes`` client, raw JSON,
    conditional on ``resourceVersion``.
:class:`LeaderElectionRecord`, :class:`ObservedRecord` and the pure decisions
    (:func:`observe`, :func:`is_expired`, :func:`may_acquire`).
:class:`Candidate`
    one attempt to acquire or renew, and release.
:class:`LeaderElector`
    the loops, the renew-deadline watchdog and the callbacks.
:class:`LeaderMetrics`
    the leader gauge and slow-path counter; :data:`NOOP_LEADER_METRICS` by
    default, :class:`PrometheusLeaderMetrics` with the ``metrics`` extra.
"""

from __future__ import annotations

from informers.toolkit.leaderelection.candidate import Candidate
from informers.toolkit.leaderelection.config import JITTER_FACTOR, LeaderElectionConfig
from informers.toolkit.leaderelection.elector import (
    LeaderElector,
    Runnable,
    run_with_leader_election,
)
from informers.toolkit.leaderelection.errors import (
    InvalidLeaseRecordError,
    LeaderElectionConfigError,
    LeaderElectionError,
    LeaseLockError,
)
from informers.toolkit.leaderelection.lock import LeaseLock, LockState, ResourceLock
from informers.toolkit.leaderelection.metrics import (
    NOOP_LEADER_METRICS,
    LeaderMetrics,
    NoopLeaderMetrics,
)
from informers.toolkit.leaderelection.prometheus import PrometheusLeaderMetrics
from informers.toolkit.leaderelection.record import (
    MICRO_TIME_FORMAT,
    LeaderElectionRecord,
    ObservedRecord,
    expires_at,
    format_micro_time,
    is_expired,
    lease_duration_seconds,
    may_acquire,
    next_renew_time,
    observe,
    parse_micro_time,
)

__all__ = [
    # configuration and the elector
    "JITTER_FACTOR",
    "LeaderElectionConfig",
    "LeaderElector",
    "Runnable",
    "run_with_leader_election",
    # one candidate's attempts
    "Candidate",
    # the lock
    "LeaseLock",
    "LockState",
    "ResourceLock",
    # the record and the pure decisions
    "MICRO_TIME_FORMAT",
    "LeaderElectionRecord",
    "ObservedRecord",
    "expires_at",
    "format_micro_time",
    "is_expired",
    "lease_duration_seconds",
    "may_acquire",
    "next_renew_time",
    "observe",
    "parse_micro_time",
    # metrics
    "NOOP_LEADER_METRICS",
    "LeaderMetrics",
    "NoopLeaderMetrics",
    "PrometheusLeaderMetrics",
    # errors
    "InvalidLeaseRecordError",
    "LeaderElectionConfigError",
    "LeaderElectionError",
    "LeaseLockError",
]
