"""Workqueue metrics in Prometheus, with controller-runtime's names.

Needs ``prometheus_client`` (the ``metrics`` extra:
``pip install kube-informers[metrics]``)::

    from informers.toolkit.workqueue import RateLimitingQueue
    from informers.toolkit.workqueue.prometheus import PrometheusMetricsProvider

    queue = RateLimitingQueue(name="pods", metrics=PrometheusMetricsProvider())

Every metric carries the label ``name`` (the queue's name):

* ``workqueue_depth`` (gauge): current depth of the workqueue;
* ``workqueue_adds_total`` (counter): adds handled by the workqueue;
* ``workqueue_queue_duration_seconds`` (histogram): how long an item waits
  before it is requested;
* ``workqueue_work_duration_seconds`` (histogram): how long processing an
  item takes;
* ``workqueue_unfinished_work_seconds`` (gauge): seconds of work in progress
  not yet observed by the work duration (large values: stuck workers);
* ``workqueue_longest_running_processor_seconds`` (gauge): how long the
  longest running processor has been running;
* ``workqueue_retries_total`` (counter): retries handled by the workqueue.

The histograms' buckets are controller-runtime's: 10 ns to 1000 s, one per
power of ten. The three gauges are computed from the queue when the registry
is collected (no thread updates them).

The metric families are registered once per registry (default: the global
``prometheus_client.REGISTRY``); any number of providers on one registry share
them. Pass your own ``CollectorRegistry`` to keep them apart (tests do).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from informers.toolkit.workqueue.metrics import CallbackGaugeMetric, CounterMetric, HistogramMetric

__all__ = ["BUCKETS", "PrometheusMetricsProvider"]

#: Histogram buckets (seconds): 1e-8, 1e-7, ..., 1e3, as controller-runtime's.
BUCKETS: tuple[float, ...] = tuple(10.0**exponent for exponent in range(-8, 4))

_LABELS = ("name",)


@dataclass(frozen=True)
class _Families:
    depth: Gauge
    adds: Counter
    latency: Histogram
    work_duration: Histogram
    unfinished_work: Gauge
    longest_running: Gauge
    retries: Counter


def _register(registry: CollectorRegistry) -> _Families:
    return _Families(
        depth=Gauge("workqueue_depth", "Current depth of workqueue", _LABELS, registry=registry),
        adds=Counter(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            _LABELS,
            registry=registry,
        ),
        latency=Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            _LABELS,
            buckets=BUCKETS,
            registry=registry,
        ),
        work_duration=Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            _LABELS,
            buckets=BUCKETS,
            registry=registry,
        ),
        unfinished_work=Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads. One can deduce "
            "the number of stuck threads by observing the rate at which this increases.",
            _LABELS,
            registry=registry,
        ),
        longest_running=Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            _LABELS,
            registry=registry,
        ),
        retries=Counter(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            _LABELS,
            registry=registry,
        ),
    )


_families_lock = threading.Lock()
# guarded by _families_lock: the families registered on each registry
_families: weakref.WeakKeyDictionary[CollectorRegistry, _Families] = weakref.WeakKeyDictionary()


def _families_for(registry: CollectorRegistry) -> _Families:
    with _families_lock:
        families = _families.get(registry)
        if families is None:
            families = _register(registry)
            _families[registry] = families
        return families


class PrometheusMetricsProvider:
    """A :class:`~informers.toolkit.workqueue.MetricsProvider` over ``prometheus_client``.

    Registers the ``workqueue_*`` families on ``registry`` on first use (once
    per registry, shared by every provider on it); raises ``ValueError`` from
    ``prometheus_client`` if another library registered those names there
    already. Thread-safe.
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._registry = registry
        self._families = _families_for(registry)

    @property
    def registry(self) -> CollectorRegistry:
        """Where the metrics are registered."""
        return self._registry

    def new_depth_metric(self, name: str) -> CallbackGaugeMetric:
        return self._families.depth.labels(name)

    def new_adds_metric(self, name: str) -> CounterMetric:
        return self._families.adds.labels(name)

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return self._families.latency.labels(name)

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return self._families.work_duration.labels(name)

    def new_unfinished_work_seconds_metric(self, name: str) -> CallbackGaugeMetric:
        return self._families.unfinished_work.labels(name)

    def new_longest_running_processor_seconds_metric(self, name: str) -> CallbackGaugeMetric:
        return self._families.longest_running.labels(name)

    def new_retries_metric(self, name: str) -> CounterMetric:
        return self._families.retries.labels(name)
