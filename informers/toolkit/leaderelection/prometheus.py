"""Leader election metrics in ``prometheus_client`` (the ``metrics`` extra:
``pip install 'kube-informers[metrics]'``).

``prometheus_client`` is imported when a :class:`PrometheusLeaderMetrics` is
made, never before, so importing :mod:`informers.toolkit.leaderelection` does not need
it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PrometheusLeaderMetrics"]


class PrometheusLeaderMetrics:
    """A :class:`~informers.toolkit.leaderelection.LeaderMetrics` with client-go's
    two metrics, labelled by election ``name``:

    ``leader_election_master_status`` (gauge)
        1 while this process leads, 0 otherwise.
    ``leader_election_slowpath_total`` (counter)
        slow-path renewals, as defined in :mod:`informers.toolkit.leaderelection.metrics`.

    Both are registered in ``registry`` (default: ``prometheus_client``'s
    global registry) when this object is made; make one per registry (a
    second would register the same names again, which ``prometheus_client``
    refuses). Thread-safe; nothing blocks. Raises :class:`ImportError` naming
    the extra when ``prometheus_client`` is not installed.
    """

    def __init__(self, registry: Any = None) -> None:
        try:
            import prometheus_client  # noqa: PLC0415 - an optional extra, imported on use
        except ImportError as exc:
            raise ImportError(
                "PrometheusLeaderMetrics needs prometheus_client: "
                "pip install 'kube-informers[metrics]'"
            ) from exc
        target = prometheus_client.REGISTRY if registry is None else registry
        self._status = prometheus_client.Gauge(
            "leader_election_master_status",
            "1 if this process leads the named election, 0 if it is a candidate.",
            ["name"],
            registry=target,
        )
        self._slowpath = prometheus_client.Counter(
            "leader_election_slowpath_total",
            "Renewals that had to re-read the Lease (the optimistic update failed "
            "or the leader's own record had expired).",
            ["name"],
            registry=target,
        )

    def leader_on(self, name: str) -> None:
        self._status.labels(name=name).set(1)

    def leader_off(self, name: str) -> None:
        self._status.labels(name=name).set(0)

    def slowpath_exercised(self, name: str) -> None:
        self._slowpath.labels(name=name).inc()
