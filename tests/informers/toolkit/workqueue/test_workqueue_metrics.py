"""Queue metrics through a recording provider, timed with a FakeClock."""

from __future__ import annotations

import gc
import logging
from typing import Any

import pytest

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import (
    CallbackGaugeMetric,
    CounterMetric,
    DelayingQueue,
    HistogramMetric,
    ItemFastSlowRateLimiter,
    MetricsProvider,
    NoopMetricsProvider,
    Queue,
    QueueMetrics,
    RateLimitingQueue,
)


def test_adds_depth_latency_and_work_duration(recording_provider: Any) -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(name="jobs", clock=clock, metrics=recording_provider)
    series = recording_provider.series["jobs"]
    q.add("a")
    q.add("a")  # deduplicated: not an add
    q.add("b")
    assert series.adds == 2
    assert series.depth() == 2.0
    clock.advance(1.5)
    assert q.get() == ("a", False)
    assert series.latencies == [1.5]
    assert series.depth() == 1.0
    q.add("a")  # dirty while processing: counts, and is in the depth
    assert series.adds == 3
    assert series.depth() == 2.0
    clock.advance(2.0)
    assert series.unfinished() == 2.0
    assert series.longest() == 2.0
    assert q.get() == ("b", False)
    clock.advance(1.0)
    assert series.unfinished() == 3.0 + 1.0
    assert series.longest() == 3.0
    q.done("a")
    assert series.work_durations == [3.0]
    assert series.unfinished() == 1.0
    q.done("b")
    assert series.work_durations == [3.0, 1.0]
    assert (series.unfinished(), series.longest()) == (0.0, 0.0)
    assert q.get() == ("a", False)  # re-queued at done: waited since its add
    assert series.latencies == [1.5, 3.5, 3.0]
    assert series.depth() == 0.0


def test_get_with_timeout_on_the_fake_clock_records_metrics(recording_provider: Any) -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(name="jobs", clock=clock, metrics=recording_provider)
    q.add("a")
    clock.advance(0.5)
    assert q.get(timeout=1) == ("a", False)
    clock.advance(0.25)
    q.done("a")
    series = recording_provider.series["jobs"]
    assert (series.latencies, series.work_durations) == ([0.5], [0.25])


def test_retries_count_delayed_and_rate_limited_re_adds(recording_provider: Any) -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemFastSlowRateLimiter(0.0, 1.0, 1), name="rl", clock=clock, metrics=recording_provider
    )
    series = recording_provider.series["rl"]
    q.add_after("a", 0)  # a plain add: no retry
    assert (series.retries, series.adds) == (0, 1)
    q.add_after("b", 1.0)
    assert (series.retries, series.adds) == (1, 1)  # b is not added until it is due
    clock.advance(1.0)
    assert series.adds == 2
    q.add_rate_limited("c")  # fast: zero delay, still a retry
    q.add_rate_limited("c")  # slow: 1 s (and deduplicated when due: c is queued)
    assert (series.retries, series.adds) == (3, 3)
    clock.advance(1.0)
    assert series.adds == 3
    q.shutdown()
    q.add_after("d", 1.0)
    q.add_rate_limited("d")
    assert series.retries == 3  # dropped at shutdown: not counted


def test_delaying_queue_latency_counts_from_when_the_item_is_due(
    recording_provider: Any,
) -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(name="d", clock=clock, metrics=recording_provider)
    q.add_after("a", 2.0)
    clock.advance(2.0)
    clock.advance(0.5)
    assert q.get() == ("a", False)
    assert recording_provider.series["d"].latencies == [0.5]


def test_unnamed_queue_reports_no_metrics(
    recording_provider: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="informers.toolkit.workqueue.queue"):
        q: Queue[str] = Queue(metrics=recording_provider)
    assert "named queues only" in caplog.text
    q.add("a")
    assert recording_provider.series == {}


def test_gauges_read_zero_once_the_queue_is_gone(recording_provider: Any) -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(name="gone", clock=clock, metrics=recording_provider)
    q.add("a")
    q.get()
    clock.advance(1.0)
    series = recording_provider.series["gone"]
    assert series.unfinished() == 1.0
    del q
    gc.collect()
    assert (series.depth(), series.unfinished(), series.longest()) == (0.0, 0.0, 0.0)


def test_noop_provider_is_a_provider_and_costs_nothing() -> None:
    provider = NoopMetricsProvider()
    assert isinstance(provider, MetricsProvider)
    metrics = QueueMetrics.create(provider, "x")
    assert isinstance(metrics.depth, CallbackGaugeMetric)
    assert isinstance(metrics.adds, CounterMetric)
    assert isinstance(metrics.latency, HistogramMetric)
    metrics.adds.inc()
    metrics.latency.observe(1.0)
    metrics.depth.set_function(lambda: 1.0)
    q: Queue[str] = Queue(name="x", metrics=provider)
    q.add("a")
    assert q.get() == ("a", False)
    q.done("a")


def test_recording_provider_speaks_the_protocol(recording_provider: Any) -> None:
    assert isinstance(recording_provider, MetricsProvider)
