"""The manager's metrics: the toolkit's Prometheus providers on one registry,
and the exposition served at ``/metrics``.

Needs ``prometheus-client`` (the ``metrics`` extra), imported when a
:class:`ManagerMetrics` is made; without it, :class:`ImportError` naming
the extra. The providers are made once per registry (a second manager on the
same registry shares them: Prometheus refuses a metric name registered
twice), so every family below appears once on the endpoint, with the
user's own collectors registered on that registry beside them.

Families served (see each provider's module):

* ``workqueue_*`` (:mod:`informers.toolkit.workqueue.prometheus`);
* ``controller_runtime_*`` (:mod:`informers.toolkit.runtime.prometheus`);
* ``leader_election_master_status``, ``leader_election_slowpath_total``
  (:mod:`informers.toolkit.leaderelection.prometheus`);
* ``sharding_*`` (:mod:`informers.toolkit.sharding.prometheus`);
* the informer metrics, installed by :func:`install_informer_metrics`.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cache.prometheus import (
    install_informer_metrics as install_prometheus_informer_metrics,
)
from informers.toolkit.manager._http import Response

__all__ = ["SERVED_METRIC_NAMES", "ManagerMetrics", "install_informer_metrics"]

#: Metric families the manager serves once something uses them (the names a
#: scrape shows; counters also carry ``_total``/``_created`` samples).
SERVED_METRIC_NAMES: tuple[str, ...] = (
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "workqueue_retries_total",
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_terminal_reconcile_errors_total",
    "controller_runtime_map_errors_total",
    "controller_runtime_reconcile_time_seconds",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_active_workers",
    "controller_runtime_reconcile_timeouts_total",
    "leader_election_master_status",
    "leader_election_slowpath_total",
    "sharding_ring_shards",
    "sharding_rebalances_total",
    "sharding_objects",
    "sharding_drain_seconds",
)

_MISSING = (
    "the metrics endpoint needs prometheus-client: install the 'metrics' extra "
    "(pip install 'kube-informers[metrics]')"
)


@dataclass(frozen=True, slots=True)
class _Providers:
    queue: Any
    controller: Any
    leader: Any
    sharding: Any


# Providers per registry (guarded by _LOCK): two managers on one registry share them.
_LOCK = threading.Lock()
_BY_REGISTRY: weakref.WeakKeyDictionary[Any, _Providers] = weakref.WeakKeyDictionary()


def _providers(registry: Any) -> _Providers:
    from informers.toolkit.leaderelection.prometheus import PrometheusLeaderMetrics  # noqa: PLC0415
    from informers.toolkit.runtime.prometheus import PrometheusControllerMetrics  # noqa: PLC0415
    from informers.toolkit.sharding.prometheus import PrometheusShardingMetrics  # noqa: PLC0415
    from informers.toolkit.workqueue.prometheus import PrometheusMetricsProvider  # noqa: PLC0415

    with _LOCK:
        found = _BY_REGISTRY.get(registry)
        if found is None:
            found = _Providers(
                queue=PrometheusMetricsProvider(registry),
                controller=PrometheusControllerMetrics(registry),
                leader=PrometheusLeaderMetrics(registry),
                sharding=PrometheusShardingMetrics(registry),
            )
            _BY_REGISTRY[registry] = found
        return found


class ManagerMetrics:
    """The toolkit's providers on ``registry`` (default
    ``prometheus_client.REGISTRY``) and the ``/metrics`` answer.

    :attr:`queue` (workqueue), :attr:`controller` (controller runtime),
    :attr:`leader` (leader election) and :attr:`sharding` are the providers
    to hand to what the manager runs. Raises :class:`ImportError` naming
    the ``metrics`` extra when prometheus-client is missing. Thread-safe.
    """

    def __init__(self, registry: Any = None) -> None:
        try:
            import prometheus_client  # noqa: PLC0415 - the optional extra
        except ImportError as error:
            raise ImportError(_MISSING) from error
        self.registry = prometheus_client.REGISTRY if registry is None else registry
        providers = _providers(self.registry)
        self.queue = providers.queue
        self.controller = providers.controller
        self.leader = providers.leader
        self.sharding = providers.sharding

    def answer(self, path: str, query: dict[str, list[str]]) -> Response:
        """The HTTP answer: the registry's exposition at ``/metrics``."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # noqa: PLC0415

        if path.rstrip("/") != "/metrics":
            return 404, "text/plain; charset=utf-8", b"not found: try /metrics\n"
        return 200, CONTENT_TYPE_LATEST, generate_latest(self.registry)


def install_informer_metrics(factory: SharedInformerFactory, registry: Any) -> None:
    """Install the informer metrics (cache objects, list and watch requests,
    relists by cause, watchdog firings, seconds since the last event,
    registration backlog and lag, event-to-handler latency; see
    :mod:`informers.cache.prometheus`) on ``registry``, as the process-wide
    default provider, so ``factory``'s informers started afterwards report
    there. The manager calls this once, when it starts with metrics enabled,
    before any informer starts."""
    del factory  # its informers take the process-wide default when they start
    install_prometheus_informer_metrics(registry)
