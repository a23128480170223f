"""Controller metrics: the provider protocol and the no-op default.

A :class:`ControllerMetricsProvider` is a factory, called once per
controller name when a :class:`~informers.toolkit.runtime.Controller` is made, for
the metrics controller-runtime reports (same names and labels in
:mod:`informers.toolkit.runtime.prometheus`):

* ``controller_runtime_reconcile_total{controller, result}``: counter of
  reconciles by result: ``success``, ``error``, ``requeue``, ``requeue_after``;
* ``controller_runtime_reconcile_errors_total{controller}``: counter of
  reconciles that raised;
* ``controller_runtime_terminal_reconcile_errors_total{controller}``: counter
  of those that raised a terminal error (not retried);
* ``controller_runtime_reconcile_time_seconds{controller}``: histogram of the
  time per reconcile (by the controller's clock);
* ``controller_runtime_max_concurrent_reconciles{controller}``: gauge, the
  controller's workers;
* ``controller_runtime_active_workers{controller}``: gauge, the workers
  reconciling now;
* ``controller_runtime_reconcile_timeouts_total{controller}``: counter of
  reconciles still running past the controller's ``reconcile_timeout`` (not
  a controller-runtime metric). Optional: a provider without
  ``new_reconcile_timeouts_metric`` does not count them;
* ``controller_runtime_map_errors_total{controller}``: counter of events
  whose source's ``map_func`` raised (the event caused no request; not a
  controller-runtime metric). Optional, as the timeouts counter:
  ``new_map_errors_metric``.

As in controller-runtime, a terminal error counts as ``result="error"`` in
the total and in the errors counter, and in the terminal counter besides.
Gauges are callback gauges (their value is read from the controller when
collected), the same protocol as the workqueue's
(:class:`~informers.toolkit.workqueue.CallbackGaugeMetric`). The queue's own metrics
(``workqueue_*``) come from the workqueue's provider, passed to the
controller as ``queue_metrics``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from informers.toolkit.workqueue.metrics import (
    NOOP_METRIC,
    CallbackGaugeMetric,
    CounterMetric,
    HistogramMetric,
)

__all__ = [
    "RESULT_ERROR",
    "RESULT_LABELS",
    "RESULT_REQUEUE",
    "RESULT_REQUEUE_AFTER",
    "RESULT_SUCCESS",
    "ControllerMetrics",
    "ControllerMetricsProvider",
    "NoopControllerMetricsProvider",
]

#: ``result`` label values of ``controller_runtime_reconcile_total`` (controller-runtime's).
RESULT_SUCCESS = "success"
#: ``reconcile_total{result}``: the reconcile raised (terminal errors included).
RESULT_ERROR = "error"
#: ``reconcile_total{result}``: ``Result(requeue=True)``, a rate-limited requeue.
RESULT_REQUEUE = "requeue"
#: ``reconcile_total{result}``: ``Result(requeue_after=s)``, a timed requeue.
RESULT_REQUEUE_AFTER = "requeue_after"
#: Every value of the ``result`` label.
RESULT_LABELS = (RESULT_ERROR, RESULT_REQUEUE_AFTER, RESULT_REQUEUE, RESULT_SUCCESS)


@runtime_checkable
class ControllerMetricsProvider(Protocol):
    """Makes the metrics of the controller called ``controller``. Each method
    is called once per controller; a provider must return the same metric
    for the same labels when asked again (a second controller of that name),
    or a new one. Metrics must be thread-safe."""

    def new_reconcile_total_metric(self, controller: str, result: str) -> CounterMetric: ...

    def new_reconcile_errors_metric(self, controller: str) -> CounterMetric: ...

    def new_terminal_reconcile_errors_metric(self, controller: str) -> CounterMetric: ...

    def new_reconcile_time_metric(self, controller: str) -> HistogramMetric: ...

    def new_max_concurrent_reconciles_metric(self, controller: str) -> CallbackGaugeMetric: ...

    def new_active_workers_metric(self, controller: str) -> CallbackGaugeMetric: ...


class NoopControllerMetricsProvider:
    """The default: no metrics at all."""

    def new_reconcile_total_metric(self, controller: str, result: str) -> CounterMetric:
        return NOOP_METRIC

    def new_reconcile_errors_metric(self, controller: str) -> CounterMetric:
        return NOOP_METRIC

    def new_terminal_reconcile_errors_metric(self, controller: str) -> CounterMetric:
        return NOOP_METRIC

    def new_reconcile_time_metric(self, controller: str) -> HistogramMetric:
        return NOOP_METRIC

    def new_max_concurrent_reconciles_metric(self, controller: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_active_workers_metric(self, controller: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_reconcile_timeouts_metric(self, controller: str) -> CounterMetric:
        return NOOP_METRIC

    def new_map_errors_metric(self, controller: str) -> CounterMetric:
        return NOOP_METRIC


@dataclass(frozen=True, slots=True)
class ControllerMetrics:
    """The metrics of one controller, made by a provider (immutable)."""

    reconcile_total: dict[str, CounterMetric]
    reconcile_errors: CounterMetric
    terminal_reconcile_errors: CounterMetric
    reconcile_time: HistogramMetric
    max_concurrent_reconciles: CallbackGaugeMetric
    active_workers: CallbackGaugeMetric
    reconcile_timeouts: CounterMetric
    map_errors: CounterMetric

    @classmethod
    def create(cls, provider: ControllerMetricsProvider, controller: str) -> ControllerMetrics:
        """Ask ``provider`` for every metric of ``controller`` (each result
        label made at once, so every series exists from zero). The timeouts
        and map errors counters are optional: asked for only when the
        provider has ``new_reconcile_timeouts_metric`` /
        ``new_map_errors_metric``."""
        timeouts = getattr(provider, "new_reconcile_timeouts_metric", None)
        map_errors = getattr(provider, "new_map_errors_metric", None)
        return cls(
            reconcile_total={
                result: provider.new_reconcile_total_metric(controller, result)
                for result in RESULT_LABELS
            },
            reconcile_errors=provider.new_reconcile_errors_metric(controller),
            terminal_reconcile_errors=provider.new_terminal_reconcile_errors_metric(controller),
            reconcile_time=provider.new_reconcile_time_metric(controller),
            max_concurrent_reconciles=provider.new_max_concurrent_reconciles_metric(controller),
            active_workers=provider.new_active_workers_metric(controller),
            reconcile_timeouts=NOOP_METRIC if timeouts is None else timeouts(controller),
            map_errors=NOOP_METRIC if map_errors is None else map_errors(controller),
        )
