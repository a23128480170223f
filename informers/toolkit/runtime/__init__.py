"""A synchronous reconcile runtime: sources → rate-limited workqueue →
reconcile workers, in the style of controller-runtime's controller loop.

::

    informer = factory.pods()
    controller = Controller(
        "pod-labeller",
        reconcile,                                   # Request -> Result | None
        [InformerSource(informer, predicates=[generation_changed()])],
        workers=4,
    )
    factory.start()
    controller.start()      # sources in order, each synced, then workers
    ...
    controller.stop()       # sources, then the queue (in-flight work finishes), then workers

:class:`Controller` (:mod:`informers.toolkit.runtime.controller`)
    the loop: start order, workers, results, errors, the idle point.
:class:`Request`, :class:`Result` (:mod:`informers.toolkit.runtime.request`)
    what a reconcile gets and answers.
:class:`TerminalError` (:mod:`informers.toolkit.runtime.errors`)
    a failure that is not retried.
:func:`current_context` (:mod:`informers.toolkit.runtime.context`)
    a running reconcile's :class:`ReconcileContext`: its stop event,
    deadline and :class:`WriteLedger`.
:class:`WriteLedger` (:mod:`informers.toolkit.runtime.writes`)
    read-your-writes: the writes a reconcile made through a
    :class:`~informers.toolkit.client.Client`, which the controller waits
    for before it reconciles the same request again.
:class:`InformerSource`, :class:`PeriodicSource`, :class:`ChannelSource`
    (:mod:`informers.toolkit.runtime.sources`): where requests come from.
Predicates (:mod:`informers.toolkit.runtime.predicates`) and map functions
    (:mod:`informers.toolkit.runtime.mapping`, e.g. :func:`enqueue_owner`).
Metrics (:mod:`informers.toolkit.runtime.metrics`; the Prometheus provider is
    :mod:`informers.toolkit.runtime.prometheus`, not imported here).
"""

from __future__ import annotations

from informers.toolkit.runtime.context import ReconcileContext, current_context
from informers.toolkit.runtime.controller import Controller, ReconcileFunc
from informers.toolkit.runtime.errors import TerminalError, is_terminal
from informers.toolkit.runtime.mapping import MapFunc, enqueue_owner, request_for_object
from informers.toolkit.runtime.metrics import (
    ControllerMetrics,
    ControllerMetricsProvider,
    NoopControllerMetricsProvider,
)
from informers.toolkit.runtime.predicates import (
    Funcs,
    Predicate,
    and_,
    annotation_changed,
    generation_changed,
    label_changed,
    new_predicate_funcs,
    not_,
    or_,
    resource_version_changed,
)
from informers.toolkit.runtime.request import Request, Result
from informers.toolkit.runtime.sources import (
    ChannelSource,
    HandlerSource,
    InformerSource,
    PeriodicSource,
    Sink,
    Source,
)
from informers.toolkit.runtime.writes import WriteLedger

__all__ = [
    # the loop
    "Controller",
    "ReconcileContext",
    "ReconcileFunc",
    "current_context",
    "WriteLedger",
    # requests and results
    "Request",
    "Result",
    "TerminalError",
    "is_terminal",
    # sources
    "ChannelSource",
    "HandlerSource",
    "InformerSource",
    "PeriodicSource",
    "Sink",
    "Source",
    # predicates
    "Funcs",
    "Predicate",
    "and_",
    "annotation_changed",
    "generation_changed",
    "label_changed",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
    # map functions
    "MapFunc",
    "enqueue_owner",
    "request_for_object",
    # metrics
    "ControllerMetrics",
    "ControllerMetricsProvider",
    "NoopControllerMetricsProvider",
]
