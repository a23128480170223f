"""The prometheus_client provider: controller-runtime's metric names, labels
and values, on an injected registry."""

from __future__ import annotations

import threading

import pytest
from runtime_helpers import ListSource, Reconciler

from informers.testing import FakeClock
from informers.toolkit.runtime import Controller, Request, Result, TerminalError
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter

prometheus_client = pytest.importorskip("prometheus_client")

from informers.toolkit.runtime.prometheus import (  # noqa: E402 - after the importorskip
    RECONCILE_TIME_BUCKETS,
    PrometheusControllerMetrics,
)

R = Request


def value(registry: object, metric: str, **labels: str) -> float | None:
    return registry.get_sample_value(metric, labels)  # type: ignore[attr-defined, no-any-return]


def test_metrics_per_result() -> None:
    registry = prometheus_client.CollectorRegistry()
    clock = FakeClock()
    script = {
        R("ns", "ok"): [None],
        R("ns", "err"): [RuntimeError("x")],
        R("ns", "term"): [TerminalError("x")],
        R("ns", "again"): [Result(requeue=True)],
        R("ns", "later"): [Result(requeue_after=60)],
    }
    rec = Reconciler(clock, script)
    controller = Controller(
        "prom",
        rec,
        [ListSource("list", list(script))],
        workers=3,
        clock=clock,
        rate_limiter=ItemExponentialFailureRateLimiter(100.0, 1000.0),
        metrics=PrometheusControllerMetrics(registry),
    )
    # every series exists from zero as soon as the controller does
    assert (
        value(registry, "controller_runtime_reconcile_total", controller="prom", result="success")
        == 0
    )
    controller.start()
    try:
        assert controller.wait_idle(5)
    finally:
        controller.stop()
    total = "controller_runtime_reconcile_total"
    assert value(registry, total, controller="prom", result="success") == 1
    assert value(registry, total, controller="prom", result="error") == 2
    assert value(registry, total, controller="prom", result="requeue") == 1
    assert value(registry, total, controller="prom", result="requeue_after") == 1
    assert value(registry, "controller_runtime_reconcile_errors_total", controller="prom") == 2
    assert (
        value(registry, "controller_runtime_terminal_reconcile_errors_total", controller="prom")
        == 1
    )
    assert (
        value(registry, "controller_runtime_reconcile_time_seconds_count", controller="prom") == 5
    )
    assert value(registry, "controller_runtime_max_concurrent_reconciles", controller="prom") == 3
    assert value(registry, "controller_runtime_active_workers", controller="prom") == 0


def test_active_workers_while_reconciling() -> None:
    registry = prometheus_client.CollectorRegistry()
    entered, release = threading.Event(), threading.Event()

    def reconcile(request: Request) -> None:
        entered.set()
        assert release.wait(10)

    controller = Controller(
        "busy",
        reconcile,
        [ListSource("list", [R("ns", "x")])],
        metrics=PrometheusControllerMetrics(registry),
    )
    controller.start()
    try:
        assert entered.wait(5)
        assert value(registry, "controller_runtime_active_workers", controller="busy") == 1
    finally:
        release.set()
        controller.stop()


def test_providers_share_one_registry_and_buckets_are_controller_runtimes() -> None:
    registry = prometheus_client.CollectorRegistry()
    one, two = PrometheusControllerMetrics(registry), PrometheusControllerMetrics(registry)
    one.new_reconcile_errors_metric("a").inc()
    two.new_reconcile_errors_metric("b").inc()
    two.new_reconcile_time_metric("b").observe(0.2)
    assert value(registry, "controller_runtime_reconcile_errors_total", controller="a") == 1
    assert value(registry, "controller_runtime_reconcile_errors_total", controller="b") == 1
    assert (
        value(
            registry, "controller_runtime_reconcile_time_seconds_bucket", controller="b", le="0.2"
        )
        == 1
    )
    assert RECONCILE_TIME_BUCKETS[0] == 0.005
    assert RECONCILE_TIME_BUCKETS[-1] == 60
    assert len(RECONCILE_TIME_BUCKETS) == 40


def test_queue_metrics_are_labelled_with_the_controller_name() -> None:
    from informers.toolkit.workqueue.prometheus import PrometheusMetricsProvider

    registry = prometheus_client.CollectorRegistry()
    controller = Controller(
        "queued",
        lambda r: None,
        [ListSource("list", [R("ns", "a"), R("ns", "b")])],
        metrics=PrometheusControllerMetrics(registry),
        queue_metrics=PrometheusMetricsProvider(registry),
    )
    controller.start()
    try:
        assert controller.wait_idle(5)
    finally:
        controller.stop()
    assert value(registry, "workqueue_adds_total", name="queued") == 2
    assert (
        value(registry, "controller_runtime_reconcile_total", controller="queued", result="success")
        == 2
    )
