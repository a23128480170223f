"""Work queues for controllers: a port of client-go's ``util/workqueue``.

:class:`Queue`
    a deduplicating FIFO that hands each item to one worker at a time.
:class:`DelayingQueue`
    a :class:`Queue` with :meth:`~DelayingQueue.add_after`.
:class:`RateLimitingQueue`
    a :class:`DelayingQueue` with :meth:`~RateLimitingQueue.add_rate_limited`,
    ``forget`` and ``num_requeues`` over a :class:`RateLimiter`.
:class:`PriorityQueue`
    a :class:`RateLimitingQueue` that hands out higher priorities first
    (:data:`PRIORITY_HIGH` for events, :data:`PRIORITY_LOW` for initial
    lists and resyncs), aging waiting items so that none is starved.

Rate limiters (:mod:`informers.toolkit.workqueue.rate_limiters`) and the metrics
protocol (:mod:`informers.toolkit.workqueue.metrics`) are re-exported here; the
Prometheus provider lives in :mod:`informers.toolkit.workqueue.prometheus` (the
``metrics`` extra) and is not imported by this package.
"""

from __future__ import annotations

from informers.toolkit.workqueue.metrics import (
    CallbackGaugeMetric,
    CounterMetric,
    HistogramMetric,
    MetricsProvider,
    NoopMetricsProvider,
    QueueMetrics,
)
from informers.toolkit.workqueue.priority import (
    DEFAULT_MAX_WAIT,
    PRIORITY_HIGH,
    PRIORITY_LOW,
    PriorityQueue,
)
from informers.toolkit.workqueue.queue import DelayingQueue, Queue, RateLimitingQueue
from informers.toolkit.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)

__all__ = [
    # queues
    "DelayingQueue",
    "PriorityQueue",
    "Queue",
    "RateLimitingQueue",
    # priorities
    "DEFAULT_MAX_WAIT",
    "PRIORITY_HIGH",
    "PRIORITY_LOW",
    # rate limiters
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
    # metrics
    "CallbackGaugeMetric",
    "CounterMetric",
    "HistogramMetric",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueMetrics",
]
