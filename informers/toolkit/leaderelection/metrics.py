"""What leader election reports, behind a provider protocol.

:class:`LeaderMetrics` has three calls, each taking the election's name
(:attr:`LeaderElectionConfig.name <informers.toolkit.leaderelection.LeaderElectionConfig.name>`,
or the Lease's ``namespace/name`` when that is empty):

``leader_on(name)`` / ``leader_off(name)``
    a gauge: 1 from the moment this process acquired the Lease until it
    lost it or stopped, 0 otherwise (also set to 0 when an elector is made).
``slowpath_exercised(name)``
    a counter of *slow-path renewals*: attempts in which a candidate that
    believed itself the holder could not renew optimistically (the update
    with its cached ``resourceVersion`` failed with a 409 or any other error,
    or its own record had already expired by its clock), so it re-read the
    Lease, found itself still the holder, and renewed from the re-read
    record. Counted once per such attempt, when the renewing update is
    sent, whether or not it then succeeds (client-go's
    ``leader_election_slowpath_total``, except that a candidate that merely
    finds its identity in a Lease it did not know it held -- a restart --
    is not counted).

:data:`NOOP_LEADER_METRICS` records nothing (the default);
:class:`~informers.toolkit.leaderelection.PrometheusLeaderMetrics` exports both
through ``prometheus_client`` (the ``metrics`` extra). Implementations must
be thread-safe and must not block.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["NOOP_LEADER_METRICS", "LeaderMetrics", "NoopLeaderMetrics"]


@runtime_checkable
class LeaderMetrics(Protocol):
    """Receives leader election's metrics; see the module docstring."""

    def leader_on(self, name: str) -> None:
        """This process now leads ``name``."""
        ...

    def leader_off(self, name: str) -> None:
        """This process does not lead ``name`` (any more)."""
        ...

    def slowpath_exercised(self, name: str) -> None:
        """A slow-path renewal of ``name`` is being sent."""
        ...


class NoopLeaderMetrics:
    """A :class:`LeaderMetrics` that records nothing."""

    def leader_on(self, name: str) -> None:
        return None

    def leader_off(self, name: str) -> None:
        return None

    def slowpath_exercised(self, name: str) -> None:
        return None


#: The default: no metrics.
NOOP_LEADER_METRICS: LeaderMetrics = NoopLeaderMetrics()
