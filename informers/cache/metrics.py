"""Informer metrics: the provider protocol, the no-op default, and the
process-wide default provider informers use when given none.

An :class:`InformerMetricsProvider` makes, for one informer (its ``resource``
label is the informer's name: ``pods``, ``deployments.apps``), the metrics
below; :mod:`informers.cache.prometheus` implements it with
``prometheus_client`` (names in ``docs/guide/metrics.rst``):

=============================  ===================  ==============================================
metric                         kind                 meaning
=============================  ===================  ==============================================
objects                        gauge (on scrape)    objects in the cache (the store's length)
list requests                  counter by result    list requests sent: ``success``, ``expired``
                                                    (410 Gone / too large a resourceVersion),
                                                    ``error``; continuation pages included
watch requests                 counter by result    watch requests sent, by the same results (the
                                                    HTTP outcome: a 410 ERROR event on an open
                                                    watch is a ``success``, then an ``expired``
                                                    relist)
relists                        counter by cause     lists begun (their first page): ``initial``
                                                    (no list succeeded yet), ``expired`` (410 Gone
                                                    or too large a resourceVersion), ``watchdog``
                                                    (after the watchdog gave up on a watch),
                                                    ``watch_error`` (any other failure that ended
                                                    in a list)
watchdog firings               counter              watches the progress watchdog gave up on
last event age                 gauge (on scrape)    seconds since the last list, event or
                                                    bookmark arrived (since start before any)
handler backlog                gauge (on scrape)    notifications waiting for one handler
handler lag                    gauge (on scrape)    age of the oldest sampled notification the
                                                    handler has not reached (0 when idle)
handler latency                histogram            seconds from the informer handing an event to
                                                    the handlers to one handler's call for it
=============================  ===================  ==============================================

A watchdog firing is counted as such; it usually costs no list: the
reflector re-watches from its last resource version. Only when the machine
decides to list next -- the stalled watch was "very short" (a bound under a
second, as tests use) or it ended otherwise in a way that needs a list --
is a relist counted with the cause ``watchdog``.

Cost: with no provider (the default) the hot path of an event pays one
``is None`` test in the reflector and one in the hand-off to the handlers.
With one, each event read from a watch also reads the clock once; the
latency is *sampled*: one event in :data:`SAMPLE_EVERY` (and the first after
each scrape that found a handler busy) carries a probe through each
handler's buffer. Gauges are computed when they are read (no thread
updates them); counters move as requests are made, on the reflector's
thread. Metrics must be thread-safe, quick and must not raise.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from informers.util.metrics import NOOP_METRIC, CallbackGaugeMetric, CounterMetric, HistogramMetric

__all__ = [
    "LIST_RESULTS",
    "RELIST_CAUSES",
    "SAMPLE_EVERY",
    "InformerMetricsProvider",
    "NoopInformerMetricsProvider",
    "ReflectorMetrics",
    "default_informer_metrics",
    "set_default_informer_metrics",
]

#: The ``result`` label values of list and watch requests.
LIST_RESULTS: tuple[str, ...] = ("success", "expired", "error")
#: The ``cause`` label values of relists.
RELIST_CAUSES: tuple[str, ...] = ("initial", "expired", "watch_error", "watchdog")
#: One watch event in this many carries a latency probe to the handlers.
SAMPLE_EVERY = 64


@runtime_checkable
class InformerMetricsProvider(Protocol):
    """Makes the metrics of the informer of ``resource`` (see the module
    documentation). Called when an informer starts (and when a handler is
    added, for the handler's three); must return the same metric for the
    same labels when called again (a second informer of one resource), or a
    new one. Thread-safe."""

    def new_objects_metric(self, resource: str) -> CallbackGaugeMetric: ...

    def new_list_requests_metric(self, resource: str, result: str) -> CounterMetric: ...

    def new_watch_requests_metric(self, resource: str, result: str) -> CounterMetric: ...

    def new_relists_metric(self, resource: str, cause: str) -> CounterMetric: ...

    def new_watchdog_firings_metric(self, resource: str) -> CounterMetric: ...

    def new_last_event_age_metric(self, resource: str) -> CallbackGaugeMetric: ...

    def new_handler_backlog_metric(self, resource: str, handler: str) -> CallbackGaugeMetric: ...

    def new_handler_lag_metric(self, resource: str, handler: str) -> CallbackGaugeMetric: ...

    def new_handler_latency_metric(self, resource: str, handler: str) -> HistogramMetric: ...


class NoopInformerMetricsProvider:
    """A provider that reports nothing (every metric is
    :data:`~informers.util.metrics.NOOP_METRIC`). An informer given no
    provider at all skips the metrics steps altogether; this one is for
    callers that need a provider object."""

    def new_objects_metric(self, resource: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_list_requests_metric(self, resource: str, result: str) -> CounterMetric:
        return NOOP_METRIC

    def new_watch_requests_metric(self, resource: str, result: str) -> CounterMetric:
        return NOOP_METRIC

    def new_relists_metric(self, resource: str, cause: str) -> CounterMetric:
        return NOOP_METRIC

    def new_watchdog_firings_metric(self, resource: str) -> CounterMetric:
        return NOOP_METRIC

    def new_last_event_age_metric(self, resource: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_handler_backlog_metric(self, resource: str, handler: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_handler_lag_metric(self, resource: str, handler: str) -> CallbackGaugeMetric:
        return NOOP_METRIC

    def new_handler_latency_metric(self, resource: str, handler: str) -> HistogramMetric:
        return NOOP_METRIC


class ReflectorMetrics:
    """The counters one reflector moves, made by a provider for one
    resource (every label value up front, so each appears from the start
    with 0). Immutable after construction; the counters are thread-safe."""

    __slots__ = ("list_requests", "relists", "watch_requests", "watchdog_firings")

    def __init__(self, provider: InformerMetricsProvider, resource: str) -> None:
        self.list_requests: dict[str, CounterMetric] = {
            result: provider.new_list_requests_metric(resource, result) for result in LIST_RESULTS
        }
        self.watch_requests: dict[str, CounterMetric] = {
            result: provider.new_watch_requests_metric(resource, result) for result in LIST_RESULTS
        }
        self.relists: dict[str, CounterMetric] = {
            cause: provider.new_relists_metric(resource, cause) for cause in RELIST_CAUSES
        }
        self.watchdog_firings: CounterMetric = provider.new_watchdog_firings_metric(resource)


_default_lock = threading.Lock()
_default: InformerMetricsProvider | None = None  # guarded by _default_lock


def default_informer_metrics() -> InformerMetricsProvider | None:
    """The provider an informer started without one of its own reports to
    (``None``: no metrics, the default)."""
    with _default_lock:
        return _default


def set_default_informer_metrics(
    provider: InformerMetricsProvider | None,
) -> InformerMetricsProvider | None:
    """Make ``provider`` the process-wide default (``None``: none) for
    informers started from now on; informers running keep theirs. Returns
    the previous default. Thread-safe."""
    global _default
    with _default_lock:
        previous, _default = _default, provider
    return previous
