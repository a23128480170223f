"""The metric protocols every metrics provider of the project hands out, and
the no-op metric.

Providers (the workqueue's :class:`~informers.toolkit.workqueue.MetricsProvider`,
the controller's, the informer's
:class:`~informers.cache.metrics.InformerMetricsProvider`) return objects of
these three shapes; ``prometheus_client``'s labelled children have them
already (a ``Counter`` child has ``inc()``, a ``Histogram`` child
``observe()``, a ``Gauge`` child ``set_function()``). Metrics must be
thread-safe, quick and must not raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["NOOP_METRIC", "CallbackGaugeMetric", "CounterMetric", "HistogramMetric", "NoopMetric"]


@runtime_checkable
class CounterMetric(Protocol):
    """A number that only goes up. ``inc()`` must be thread-safe."""

    def inc(self) -> None: ...


@runtime_checkable
class HistogramMetric(Protocol):
    """Observations of a duration in seconds. ``observe`` must be thread-safe."""

    def observe(self, value: float, /) -> None: ...


@runtime_checkable
class CallbackGaugeMetric(Protocol):
    """A gauge whose value is computed by ``function`` when it is read.

    ``function`` is thread-safe, returns quickly, takes its owner's lock
    briefly and never calls back into the metrics; it returns ``0.0`` once
    its owner is gone (it holds the owner only weakly). A later
    ``set_function`` replaces the earlier one (two owners of one name share
    their gauges: the newer one's values are reported).
    """

    def set_function(self, function: Callable[[], float], /) -> None: ...


class NoopMetric:
    """Every metric kind at once, doing nothing (what the no-op providers
    hand out; shared, stateless, thread-safe)."""

    __slots__ = ()

    def inc(self) -> None:
        pass

    def observe(self, value: float, /) -> None:
        pass

    def set_function(self, function: Callable[[], float], /) -> None:
        pass


#: The one no-op metric (a counter, histogram and callback gauge in one).
NOOP_METRIC = NoopMetric()
