"""Kubernetes Events from controllers: :class:`EventRecorder` (asynchronous,
bounded, never blocking the caller), its correlator (client-go's
aggregation, series and spam filter) and the wire forms of both Event APIs.

* :mod:`~informers.toolkit.events.recorder`: :class:`EventRecorder`,
  :class:`EventRecorderStats`, :class:`DropReason`;
* :mod:`~informers.toolkit.events.correlator`: :class:`EventCorrelator`,
  :class:`Occurrence`, :class:`Correlation`, :class:`TokenBucket`;
* :mod:`~informers.toolkit.events.sink`: the bodies and patches for
  ``events.k8s.io/v1`` (:data:`EVENTS_V1`) and core ``v1`` (:data:`CORE_V1`),
  and :func:`discover_events_api`.
"""

from __future__ import annotations

from informers.toolkit.events.correlator import (
    AGGREGATE_MESSAGE_PREFIX,
    Correlation,
    EventCorrelator,
    Occurrence,
    TokenBucket,
)
from informers.toolkit.events.recorder import (
    EVENT_TYPES,
    DropReason,
    EventRecorder,
    EventRecorderStats,
)
from informers.toolkit.events.sink import CORE_V1, EVENTS_V1, discover_events_api

__all__ = [
    "AGGREGATE_MESSAGE_PREFIX",
    "CORE_V1",
    "EVENTS_V1",
    "EVENT_TYPES",
    "Correlation",
    "DropReason",
    "EventCorrelator",
    "EventRecorder",
    "EventRecorderStats",
    "Occurrence",
    "TokenBucket",
    "discover_events_api",
]
