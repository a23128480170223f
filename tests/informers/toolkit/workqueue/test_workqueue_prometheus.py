"""The Prometheus provider: controller-runtime's names, label ``name``, own registry."""

from __future__ import annotations

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client import CollectorRegistry, generate_latest

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import MetricsProvider, RateLimitingQueue
from informers.toolkit.workqueue.prometheus import BUCKETS, PrometheusMetricsProvider

NAMES = {
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "workqueue_retries_total",
}


def value(registry: CollectorRegistry, metric: str, queue: str = "pods") -> float | None:
    return registry.get_sample_value(metric, {"name": queue})


def test_metrics_named_and_labelled_as_controller_runtime() -> None:
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    assert isinstance(provider, MetricsProvider)
    assert provider.registry is registry
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(name="pods", clock=clock, metrics=provider)
    q.add("default/a")
    q.add("default/b")
    clock.advance(0.5)
    assert q.get() == ("default/a", False)
    clock.advance(2.0)

    assert value(registry, "workqueue_depth") == 1.0
    assert value(registry, "workqueue_adds_total") == 2.0
    assert value(registry, "workqueue_queue_duration_seconds_count") == 1.0
    assert value(registry, "workqueue_queue_duration_seconds_sum") == 0.5
    assert value(registry, "workqueue_unfinished_work_seconds") == 2.0
    assert value(registry, "workqueue_longest_running_processor_seconds") == 2.0

    q.add_rate_limited("default/a")
    q.done("default/a")
    assert value(registry, "workqueue_retries_total") == 1.0
    assert value(registry, "workqueue_work_duration_seconds_count") == 1.0
    assert value(registry, "workqueue_work_duration_seconds_sum") == 2.0
    assert value(registry, "workqueue_unfinished_work_seconds") == 0.0
    assert value(registry, "workqueue_longest_running_processor_seconds") == 0.0

    exposed = generate_latest(registry).decode()
    for name in NAMES:
        assert f'{name}{{name="pods"}}' in exposed or f"{name}_bucket{{" in exposed, name
    names = {family.name for family in registry.collect()}
    assert names == {
        "workqueue_depth",
        "workqueue_adds",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries",
    }
    q.shutdown()


def test_buckets_are_ten_nanoseconds_to_a_thousand_seconds() -> None:
    assert len(BUCKETS) == 12
    assert BUCKETS[0] == pytest.approx(1e-8)
    assert BUCKETS[-1] == pytest.approx(1e3)
    registry = CollectorRegistry()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        name="x", clock=FakeClock(), metrics=PrometheusMetricsProvider(registry)
    )
    q.add("a")
    q.get()
    upper = registry.get_sample_value(
        "workqueue_queue_duration_seconds_bucket", {"name": "x", "le": "1000.0"}
    )
    assert upper == 1.0


def test_providers_share_the_families_of_one_registry_and_queues_are_apart() -> None:
    registry = CollectorRegistry()
    first: RateLimitingQueue[str] = RateLimitingQueue(
        name="one", metrics=PrometheusMetricsProvider(registry)
    )
    second: RateLimitingQueue[str] = RateLimitingQueue(
        name="two", metrics=PrometheusMetricsProvider(registry)
    )
    first.add("a")
    second.add("a")
    second.add("b")
    assert value(registry, "workqueue_depth", "one") == 1.0
    assert value(registry, "workqueue_depth", "two") == 2.0
    other = CollectorRegistry()
    PrometheusMetricsProvider(other)
    assert value(other, "workqueue_depth", "one") is None


def test_default_registry_is_the_global_one() -> None:
    from prometheus_client import REGISTRY

    assert PrometheusMetricsProvider().registry is REGISTRY
