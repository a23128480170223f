"""Controller metrics in ``prometheus_client``, named as controller-runtime
names them.

Needs the ``prometheus-client`` package (the ``metrics`` extra); it is
imported when a :class:`PrometheusControllerMetrics` is made, never by
``import informers.toolkit.runtime``. Pass the provider as the controller's
``metrics``::

    from prometheus_client import CollectorRegistry
    from informers.toolkit.runtime.prometheus import PrometheusControllerMetrics

    registry = CollectorRegistry()
    metrics = PrometheusControllerMetrics(registry)
    controller = Controller("pods", reconcile, sources, metrics=metrics)

The collectors are registered once per registry: several providers (and
controllers) on one registry share them, each controller its own
``controller`` label. Thread-safe.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from informers.toolkit.workqueue.metrics import CallbackGaugeMetric, CounterMetric, HistogramMetric

__all__ = ["RECONCILE_TIME_BUCKETS", "PrometheusControllerMetrics"]

#: controller-runtime's buckets of ``controller_runtime_reconcile_time_seconds``.
RECONCILE_TIME_BUCKETS: tuple[float, ...] = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
    *(0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5),
    *(5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60),
)


@dataclass(frozen=True, slots=True)
class _Collectors:
    total: Any
    errors: Any
    terminal: Any
    time: Any
    max_concurrent: Any
    active: Any
    timeouts: Any
    map_errors: Any


# Collectors per registry, so a second provider on one registry reuses them
# (registering a metric name twice raises). Guarded by _LOCK.
_LOCK = threading.Lock()
_BY_REGISTRY: weakref.WeakKeyDictionary[Any, _Collectors] = weakref.WeakKeyDictionary()


class _CallbackGauge:
    """A labelled ``Gauge`` child read through a function."""

    __slots__ = ("_child",)

    def __init__(self, child: Any) -> None:
        self._child = child

    def set_function(self, function: Callable[[], float], /) -> None:
        self._child.set_function(function)


def _make_collectors(registry: Any, buckets: Sequence[float]) -> _Collectors:
    import prometheus_client as prom  # noqa: PLC0415 - the optional extra

    label = ["controller"]
    return _Collectors(
        total=prom.Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            [*label, "result"],
            registry=registry,
        ),
        errors=prom.Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            label,
            registry=registry,
        ),
        terminal=prom.Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            label,
            registry=registry,
        ),
        time=prom.Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            label,
            buckets=tuple(buckets),
            registry=registry,
        ),
        max_concurrent=prom.Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            label,
            registry=registry,
        ),
        active=prom.Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            label,
            registry=registry,
        ),
        timeouts=prom.Counter(
            "controller_runtime_reconcile_timeouts_total",
            "Total number of reconciliations still running past the reconcile timeout",
            label,
            registry=registry,
        ),
        map_errors=prom.Counter(
            "controller_runtime_map_errors_total",
            "Total number of events whose source's map function raised per controller",
            label,
            registry=registry,
        ),
    )


class PrometheusControllerMetrics:
    """A :class:`~informers.toolkit.runtime.ControllerMetricsProvider` over
    ``prometheus_client``.

    :param registry: where the collectors are registered (default: the
        process-wide ``prometheus_client.REGISTRY``).
    :param buckets: of the reconcile time histogram (controller-runtime's by
        default); used only by the first provider of a registry.

    Raises :class:`ImportError` naming the extra when ``prometheus_client``
    is not installed.
    """

    def __init__(
        self, registry: Any = None, *, buckets: Sequence[float] = RECONCILE_TIME_BUCKETS
    ) -> None:
        try:
            import prometheus_client  # noqa: PLC0415 - the optional extra
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError(
                "PrometheusControllerMetrics needs prometheus-client: "
                "pip install 'kube-informers[metrics]'"
            ) from error
        self.registry = prometheus_client.REGISTRY if registry is None else registry
        with _LOCK:
            collectors = _BY_REGISTRY.get(self.registry)
            if collectors is None:
                collectors = _make_collectors(self.registry, buckets)
                _BY_REGISTRY[self.registry] = collectors
        self._c = collectors

    def new_reconcile_total_metric(self, controller: str, result: str) -> CounterMetric:
        counter: CounterMetric = self._c.total.labels(controller=controller, result=result)
        return counter

    def new_reconcile_errors_metric(self, controller: str) -> CounterMetric:
        counter: CounterMetric = self._c.errors.labels(controller=controller)
        return counter

    def new_terminal_reconcile_errors_metric(self, controller: str) -> CounterMetric:
        counter: CounterMetric = self._c.terminal.labels(controller=controller)
        return counter

    def new_reconcile_time_metric(self, controller: str) -> HistogramMetric:
        histogram: HistogramMetric = self._c.time.labels(controller=controller)
        return histogram

    def new_max_concurrent_reconciles_metric(self, controller: str) -> CallbackGaugeMetric:
        return _CallbackGauge(self._c.max_concurrent.labels(controller=controller))

    def new_active_workers_metric(self, controller: str) -> CallbackGaugeMetric:
        return _CallbackGauge(self._c.active.labels(controller=controller))

    def new_reconcile_timeouts_metric(self, controller: str) -> CounterMetric:
        counter: CounterMetric = self._c.timeouts.labels(controller=controller)
        return counter

    def new_map_errors_metric(self, controller: str) -> CounterMetric:
        counter: CounterMetric = self._c.map_errors.labels(controller=controller)
        return counter
