"""Sharding metrics: the no-op provider and the Prometheus one."""

from __future__ import annotations

import pytest

from informers.toolkit.sharding import NOOP_SHARDING_METRICS, NoopShardingMetrics

prometheus_client = pytest.importorskip("prometheus_client")


def test_noop_records_nothing() -> None:
    assert isinstance(NOOP_SHARDING_METRICS, NoopShardingMetrics)
    NOOP_SHARDING_METRICS.ring_changed("web", 3)
    NOOP_SHARDING_METRICS.objects_assigned("web", "shard-0", 10)
    NOOP_SHARDING_METRICS.drained("web", 0.5)


def test_prometheus_exports_shards_rebalances_objects_and_drain_time() -> None:
    from informers.toolkit.sharding.prometheus import PrometheusShardingMetrics

    registry = prometheus_client.CollectorRegistry()
    metrics = PrometheusShardingMetrics(registry)
    metrics.ring_changed("web", 3)
    metrics.ring_changed("web", 4)
    metrics.objects_assigned("web", "shard-0", 10)
    metrics.drained("web", 0.25)
    value = registry.get_sample_value
    assert value("sharding_ring_shards", {"ring": "web"}) == 4
    assert value("sharding_rebalances_total", {"ring": "web"}) == 2
    assert value("sharding_objects", {"ring": "web", "shard": "shard-0"}) == 10
    assert value("sharding_drain_seconds_count", {"ring": "web"}) == 1
    assert value("sharding_drain_seconds_sum", {"ring": "web"}) == 0.25
