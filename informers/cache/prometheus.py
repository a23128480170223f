"""Informer metrics in ``prometheus_client`` (the ``metrics`` extra:
``pip install 'kube-informers[metrics]'``).

``prometheus_client`` is imported when a :class:`PrometheusInformerMetrics` is
made, never by ``import informers``. One call installs it for every informer
started afterwards::

    from informers.cache.prometheus import install_informer_metrics

    install_informer_metrics()          # the global prometheus_client.REGISTRY
    factory.start()                     # its informers report from now on

or give it to chosen informers: ``SharedInformerFactory(client,
metrics=PrometheusInformerMetrics(registry))``. The metrics, labelled by
``resource`` (the informer's name) and, for a handler's, ``handler`` (its
registration's name, ``listener-<resource>-<n>``):

* ``informer_cache_objects`` (gauge): objects in the cache;
* ``informer_list_requests_total`` / ``informer_watch_requests_total``
  (counters, ``result``: ``success``, ``expired``, ``error``);
* ``informer_relists_total`` (counter, ``cause``: ``initial``, ``expired``,
  ``watch_error``, ``watchdog``);
* ``informer_watchdog_firings_total`` (counter);
* ``informer_last_event_age_seconds`` (gauge);
* ``informer_handler_backlog`` and ``informer_handler_lag_seconds`` (gauges);
* ``informer_handler_latency_seconds`` (histogram, sampled).

What each means is in :mod:`informers.cache.metrics`; the one table of every
metric of the project is in the guide (``docs/guide/metrics.rst``). Gauges
are computed when the registry is collected. The families are registered
once per registry and shared by every provider on it. Thread-safe.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from informers.cache.metrics import InformerMetricsProvider, set_default_informer_metrics
from informers.util.metrics import CallbackGaugeMetric, CounterMetric, HistogramMetric

__all__ = ["LATENCY_BUCKETS", "PrometheusInformerMetrics", "install_informer_metrics"]

#: Buckets (seconds) of ``informer_handler_latency_seconds``: 100 µs to 1 min.
LATENCY_BUCKETS: tuple[float, ...] = (
    *(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05),
    *(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)


@dataclass(frozen=True, slots=True)
class _Families:
    objects: Any
    lists: Any
    watches: Any
    relists: Any
    watchdog: Any
    age: Any
    backlog: Any
    lag: Any
    latency: Any


def _register(registry: Any) -> _Families:
    import prometheus_client as prom  # noqa: PLC0415 - the optional extra

    res = ["resource"]
    handler = ["resource", "handler"]
    return _Families(
        objects=prom.Gauge(
            "informer_cache_objects", "Objects in the informer's cache.", res, registry=registry
        ),
        lists=prom.Counter(
            "informer_list_requests",
            "List requests sent by the informer's reflector, by result "
            "(success, expired: 410 Gone, error).",
            [*res, "result"],
            registry=registry,
        ),
        watches=prom.Counter(
            "informer_watch_requests",
            "Watch requests sent by the informer's reflector, by result "
            "(success, expired: 410 Gone, error).",
            [*res, "result"],
            registry=registry,
        ),
        relists=prom.Counter(
            "informer_relists",
            "Lists begun by the informer's reflector, by cause "
            "(initial, expired: 410 Gone, watch_error, watchdog).",
            [*res, "cause"],
            registry=registry,
        ),
        watchdog=prom.Counter(
            "informer_watchdog_firings",
            "Watches that delivered nothing past the progress watchdog's bound "
            "and were replaced (re-watched from the last resourceVersion).",
            res,
            registry=registry,
        ),
        age=prom.Gauge(
            "informer_last_event_age_seconds",
            "Seconds since the informer's last list, watch event or bookmark.",
            res,
            registry=registry,
        ),
        backlog=prom.Gauge(
            "informer_handler_backlog",
            "Notifications waiting for the handler.",
            handler,
            registry=registry,
        ),
        lag=prom.Gauge(
            "informer_handler_lag_seconds",
            "Age of the oldest sampled notification the handler has not reached (0 when idle).",
            handler,
            registry=registry,
        ),
        latency=prom.Histogram(
            "informer_handler_latency_seconds",
            "Seconds from the informer handing a watch event to its handlers to this "
            "handler's call for it (sampled).",
            handler,
            buckets=LATENCY_BUCKETS,
            registry=registry,
        ),
    )


# Families per registry, so a second provider on one registry reuses them
# (registering a metric name twice raises). Guarded by _LOCK.
_LOCK = threading.Lock()
_BY_REGISTRY: weakref.WeakKeyDictionary[Any, _Families] = weakref.WeakKeyDictionary()


class PrometheusInformerMetrics:
    """An :class:`~informers.cache.metrics.InformerMetricsProvider` over
    ``prometheus_client``.

    :param registry: where the families are registered (default: the
        process-wide ``prometheus_client.REGISTRY``), once per registry.

    Raises :class:`ImportError` naming the extra when ``prometheus_client``
    is not installed, and ``ValueError`` (``prometheus_client``'s) when
    another library registered these names on the registry already.
    """

    def __init__(self, registry: Any = None) -> None:
        try:
            import prometheus_client  # noqa: PLC0415 - the optional extra
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError(
                "PrometheusInformerMetrics needs prometheus-client: "
                "pip install 'kube-informers[metrics]'"
            ) from error
        self.registry: Any = prometheus_client.REGISTRY if registry is None else registry
        with _LOCK:
            families = _BY_REGISTRY.get(self.registry)
            if families is None:
                families = _register(self.registry)
                _BY_REGISTRY[self.registry] = families
        self._f = families

    def new_objects_metric(self, resource: str) -> CallbackGaugeMetric:
        gauge: CallbackGaugeMetric = self._f.objects.labels(resource=resource)
        return gauge

    def new_list_requests_metric(self, resource: str, result: str) -> CounterMetric:
        counter: CounterMetric = self._f.lists.labels(resource=resource, result=result)
        return counter

    def new_watch_requests_metric(self, resource: str, result: str) -> CounterMetric:
        counter: CounterMetric = self._f.watches.labels(resource=resource, result=result)
        return counter

    def new_relists_metric(self, resource: str, cause: str) -> CounterMetric:
        counter: CounterMetric = self._f.relists.labels(resource=resource, cause=cause)
        return counter

    def new_watchdog_firings_metric(self, resource: str) -> CounterMetric:
        counter: CounterMetric = self._f.watchdog.labels(resource=resource)
        return counter

    def new_last_event_age_metric(self, resource: str) -> CallbackGaugeMetric:
        gauge: CallbackGaugeMetric = self._f.age.labels(resource=resource)
        return gauge

    def new_handler_backlog_metric(self, resource: str, handler: str) -> CallbackGaugeMetric:
        gauge: CallbackGaugeMetric = self._f.backlog.labels(resource=resource, handler=handler)
        return gauge

    def new_handler_lag_metric(self, resource: str, handler: str) -> CallbackGaugeMetric:
        gauge: CallbackGaugeMetric = self._f.lag.labels(resource=resource, handler=handler)
        return gauge

    def new_handler_latency_metric(self, resource: str, handler: str) -> HistogramMetric:
        histogram: HistogramMetric = self._f.latency.labels(resource=resource, handler=handler)
        return histogram


def install_informer_metrics(registry: Any = None) -> PrometheusInformerMetrics:
    """Make a :class:`PrometheusInformerMetrics` on ``registry`` (default:
    the global ``prometheus_client.REGISTRY``) the process-wide default, so
    every informer started from now on without a provider of its own reports
    there (see :func:`~informers.cache.metrics.set_default_informer_metrics`;
    informers running already are not affected). Returns it. Idempotent per
    registry: the families are shared."""
    provider = PrometheusInformerMetrics(registry)
    _installed: InformerMetricsProvider = provider
    set_default_informer_metrics(_installed)
    return provider
