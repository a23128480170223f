"""Workqueue metrics: the provider protocol and the no-op default.

A :class:`MetricsProvider` is a factory, called once per queue name, for the
seven metrics client-go's workqueue reports (controller-runtime exports them
as ``workqueue_*``; :mod:`informers.toolkit.workqueue.prometheus` does the same with
``prometheus_client``):

==============================  =========================  =====================================
metric                          kind                       meaning
==============================  =========================  =====================================
depth                           gauge (read on scrape)     items waiting to be handed out
adds                            counter                    items that became waiting (not dedup'd)
latency                         histogram (seconds)        time from add to ``get``
work duration                   histogram (seconds)        time from ``get`` to ``done``
unfinished work                 gauge (read on scrape)     seconds of work in progress, summed
longest running processor       gauge (read on scrape)     age of the oldest item in progress
retries                         counter                    delayed and rate-limited re-adds
==============================  =========================  =====================================

Gauges are *callback* gauges (:class:`CallbackGaugeMetric`): the queue hands
the metric a function that computes the value from the queue's state when the
metric is collected, so no thread updates them periodically (client-go runs a
ticker goroutine for the two unfinished-work gauges; here nothing runs between
scrapes). Counters and histograms are updated by the queue as things happen,
outside the queue's lock, on the thread of the queue call (or of the clock's
timer, for delayed items falling due). Metrics must be thread-safe, quick and
must not raise: an exception from one propagates out of the queue call that
recorded it (after the queue's state changed).

Metrics are reported only for a **named** queue (as in client-go): the name
is the metrics' label. An unnamed queue given a provider logs a warning and
reports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from informers.util.metrics import (
    NOOP_METRIC,
    CallbackGaugeMetric,
    CounterMetric,
    HistogramMetric,
    NoopMetric,
)

__all__ = [
    "CallbackGaugeMetric",
    "CounterMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NOOP_METRIC",
    "NoopMetric",
    "NoopMetricsProvider",
    "QueueMetrics",
]


@runtime_checkable
class MetricsProvider(Protocol):
    """Makes the metrics of the queue called ``name`` (client-go's
    ``workqueue.MetricsProvider``). Each method is called once when a named
    queue is created; providers must return the same metric for the same name
    when called again (a second queue of that name), or a new one."""

    def new_depth_metric(self, name: str) -> CallbackGaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str) -> CallbackGaugeMetric: ...

    def new_longest_running_processor_seconds_metric(self, name: str) -> CallbackGaugeMetric: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


class NoopMetricsProvider:
    """The default: no metrics at all. A queue given this provider (or none)
    skips every metrics step, including reading the clock."""

    def new_depth_metric(self, name: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_adds_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_unfinished_work_seconds_metric(self, name: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_longest_running_processor_seconds_metric(self, name: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_retries_metric(self, name: str) -> CounterMetric:
        return NOOP_METRIC


@dataclass(frozen=True, slots=True)
class QueueMetrics:
    """The metrics of one named queue, made by a provider (immutable)."""

    depth: CallbackGaugeMetric
    adds: CounterMetric
    latency: HistogramMetric
    work_duration: HistogramMetric
    unfinished_work_seconds: CallbackGaugeMetric
    longest_running_processor_seconds: CallbackGaugeMetric
    retries: CounterMetric

    @classmethod
    def create(cls, provider: MetricsProvider, name: str) -> QueueMetrics:
        """Ask ``provider`` for every metric of the queue called ``name``."""
        return cls(
            depth=provider.new_depth_metric(name),
            adds=provider.new_adds_metric(name),
            latency=provider.new_latency_metric(name),
            work_duration=provider.new_work_duration_metric(name),
            unfinished_work_seconds=provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor_seconds=(
                provider.new_longest_running_processor_seconds_metric(name)
            ),
            retries=provider.new_retries_metric(name),
        )
