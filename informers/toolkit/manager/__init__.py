"""Run controllers as a production process: the :class:`Manager`.

One object owns the API client, the informer factory, the controllers and
other runnables, leader election (or a shard Lease), the health and
readiness probes and the metrics endpoint, and starts and stops them in
order (see :mod:`informers.toolkit.manager.manager`)::

    manager = Manager(api_client, health_probe_bind_address=":8081")
    manager.controller("pods", reconcile, [InformerSource(manager.factory.pods())])
    manager.run()      # until SIGTERM; then a graceful stop

Parts:

:class:`Manager` (:mod:`informers.toolkit.manager.manager`)
    the lifecycle, signals, leader election and warm standby.
:class:`HealthChecks`, :class:`InformerLiveness`, :class:`InformersSynced`
    (:mod:`informers.toolkit.manager.health`): ``/healthz`` and ``/readyz``.
:class:`ManagerMetrics` (:mod:`informers.toolkit.manager.metrics`): the
    toolkit's Prometheus providers and ``/metrics``.
"""

from __future__ import annotations

from informers.toolkit.leaderelection import Runnable
from informers.toolkit.manager.health import (
    DEFAULT_BACKOFF_BOUND,
    Check,
    CheckResult,
    HealthChecks,
    InformerLiveness,
    InformersSynced,
    run_check,
)
from informers.toolkit.manager.manager import FunctionRunnable, Manager
from informers.toolkit.manager.metrics import (
    SERVED_METRIC_NAMES,
    ManagerMetrics,
    install_informer_metrics,
)

__all__ = [
    # the manager
    "FunctionRunnable",
    "Manager",
    "Runnable",
    # probes
    "DEFAULT_BACKOFF_BOUND",
    "Check",
    "CheckResult",
    "HealthChecks",
    "InformerLiveness",
    "InformersSynced",
    "run_check",
    # metrics
    "SERVED_METRIC_NAMES",
    "ManagerMetrics",
    "install_informer_metrics",
]
