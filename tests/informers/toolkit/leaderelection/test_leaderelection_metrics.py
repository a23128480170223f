"""Leader election metrics: the no-op default, the provider protocol, and the
prometheus_client implementation, fed by an election against the emulator."""

from __future__ import annotations

import threading

import prometheus_client
import pytest
from leaderelection_helpers import Replica, Timeline

from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    NOOP_LEADER_METRICS,
    LeaderMetrics,
    NoopLeaderMetrics,
    PrometheusLeaderMetrics,
)

WAIT = 15.0


class Signalling(PrometheusLeaderMetrics):
    """Prometheus metrics that also signal each call (to wait on, not poll)."""

    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        super().__init__(registry)
        self.on = threading.Event()
        self.off = threading.Event()
        self.slowpath = threading.Event()

    def leader_on(self, name: str) -> None:
        super().leader_on(name)
        self.on.set()

    def leader_off(self, name: str) -> None:
        super().leader_off(name)
        self.off.set()

    def slowpath_exercised(self, name: str) -> None:
        super().slowpath_exercised(name)
        self.slowpath.set()


def test_the_default_records_nothing() -> None:
    assert isinstance(NOOP_LEADER_METRICS, NoopLeaderMetrics)
    assert isinstance(NOOP_LEADER_METRICS, LeaderMetrics)
    NOOP_LEADER_METRICS.leader_on("x")
    NOOP_LEADER_METRICS.leader_off("x")
    NOOP_LEADER_METRICS.slowpath_exercised("x")


def test_prometheus_metrics_names_and_labels() -> None:
    registry = prometheus_client.CollectorRegistry()
    metrics = PrometheusLeaderMetrics(registry)
    assert isinstance(metrics, LeaderMetrics)
    metrics.leader_on("a")
    metrics.leader_off("b")
    metrics.slowpath_exercised("a")
    metrics.slowpath_exercised("a")
    value = registry.get_sample_value
    assert value("leader_election_master_status", {"name": "a"}) == 1
    assert value("leader_election_master_status", {"name": "b"}) == 0
    assert value("leader_election_slowpath_total", {"name": "a"}) == 2
    with pytest.raises(ValueError, match="Duplicated"):
        PrometheusLeaderMetrics(registry)  # one per registry


def test_the_gauge_follows_leadership_and_foreign_writes_take_the_slow_path(
    api_server: ApiServer,
) -> None:
    registry = prometheus_client.CollectorRegistry()
    metrics = Signalling(registry)
    timeline = Timeline()
    replica = Replica(api_server, "a", timeline, metrics=metrics)
    value = registry.get_sample_value
    labels = {"name": "default/election"}
    assert value("leader_election_master_status", labels) == 0  # set off when made
    try:
        replica.elector.start()
        assert replica.leading.wait(WAIT)
        assert metrics.on.wait(WAIT)
        assert value("leader_election_master_status", labels) == 1
        assert value("leader_election_slowpath_total", labels) is None
        # someone else writes the Lease (a label): the leader's cached
        # resourceVersion is stale, its optimistic renewal is a 409
        lease = api_server.get("leases", "election", "default")
        lease["metadata"]["labels"] = {"touched": "yes"}
        api_server.update("leases", lease)
        assert metrics.slowpath.wait(WAIT)
        assert value("leader_election_slowpath_total", labels) == 1
        assert replica.elector.is_leader()  # it renewed from the re-read record
        metrics.off.clear()
        assert replica.elector.stop(WAIT)
        assert metrics.off.is_set()
        assert value("leader_election_master_status", labels) == 0
        stored = api_server.get("leases", "election", "default")
        assert stored["metadata"]["labels"] == {"touched": "yes"}  # kept by the renewals
    finally:
        replica.close()
