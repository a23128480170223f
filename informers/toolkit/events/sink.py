"""Event objects on the wire: the bodies and patches an
:class:`~informers.toolkit.events.EventRecorder` sends for a
:class:`~informers.toolkit.events.correlator.Correlation`, in either API,
and the discovery of which API the server has.

``events.k8s.io/v1`` (:data:`EVENTS_V1`), the current API: a new Event
carries ``eventTime``, ``reportingController``, ``reportingInstance``,
``action``, ``reason``, ``regarding``, ``note`` (at most 1 KiB: longer notes
are cut) and ``type``; a repeated one gets ``series: {count,
lastObservedTime}``. Every other field is immutable there, so an aggregate
series keeps the note it was created with.

``v1`` (:data:`CORE_V1`), for servers without it: ``involvedObject``,
``message``, ``source``, ``count``, ``firstTimestamp`` and ``lastTimestamp``;
a repeat updates ``count``, ``lastTimestamp`` and ``message``. ``kubectl
events`` and ``kubectl describe`` read these (a real server serves one
storage through both APIs).

Updates are JSON merge patches (``application/merge-patch+json``). Pure
functions, except :func:`discover_events_api`, which blocks on one GET.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from informers.errors import NotFoundError
from informers.rest.transport import RequestAborter, Transport
from informers.toolkit.controllerutil import format_time
from informers.toolkit.events.correlator import Correlation
from informers.toolkit.leaderelection.record import format_micro_time

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "MAX_NOTE_BYTES",
    "MERGE_PATCH",
    "discover_events_api",
    "event_body",
    "event_path",
    "series_patch",
]

#: The events.k8s.io API.
EVENTS_V1 = "events.k8s.io/v1"
#: The core API's Events.
CORE_V1 = "v1"
#: The longest ``note`` events.k8s.io accepts.
MAX_NOTE_BYTES = 1024
#: The content type of the updates.
MERGE_PATCH = "application/merge-patch+json"


def _time(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def _note(message: str) -> str:
    data = message.encode()
    if len(data) <= MAX_NOTE_BYTES:
        return message
    return data[:MAX_NOTE_BYTES].decode(errors="ignore")


def event_path(api_version: str, namespace: str, name: str | None = None) -> str:
    """The URL path of the Events of ``namespace`` in ``api_version``
    (:data:`EVENTS_V1` or :data:`CORE_V1`), or of the Event ``name``."""
    prefix = "/apis/events.k8s.io/v1" if api_version == EVENTS_V1 else "/api/v1"
    path = f"{prefix}/namespaces/{namespace}/events"
    return f"{path}/{name}" if name else path


def event_body(correlation: Correlation, api_version: str, *, host: str = "") -> dict[str, Any]:
    """The whole Event for ``correlation`` in ``api_version``: what a create
    sends (with the series so far when ``count`` > 1). ``host`` is the core
    API's ``source.host``."""
    occ = correlation.occurrence
    metadata = {"name": correlation.name, "namespace": occ.namespace}
    if api_version == EVENTS_V1:
        body: dict[str, Any] = {
            "apiVersion": EVENTS_V1,
            "kind": "Event",
            "metadata": metadata,
            "eventTime": format_micro_time(_time(correlation.first_time)),
            "reportingController": occ.reporting_controller,
            "reportingInstance": occ.reporting_instance,
            "action": occ.action,
            "reason": occ.reason,
            "regarding": dict(occ.regarding),
            "note": _note(occ.message),
            "type": occ.type,
        }
        if occ.related is not None:
            body["related"] = dict(occ.related)
        if correlation.count > 1:
            body.update(series_patch(correlation, api_version))
        return body
    source = {"component": occ.reporting_controller}
    if host:
        source["host"] = host
    body = {
        "apiVersion": CORE_V1,
        "kind": "Event",
        "metadata": metadata,
        "involvedObject": dict(occ.regarding),
        "reason": occ.reason,
        "message": occ.message,
        "type": occ.type,
        "action": occ.action,
        "source": source,
        "reportingComponent": occ.reporting_controller,
        "reportingInstance": occ.reporting_instance,
        "count": correlation.count,
        "firstTimestamp": format_time(_time(correlation.first_time)),
        "lastTimestamp": format_time(_time(correlation.last_time)),
    }
    if occ.related is not None:
        body["related"] = dict(occ.related)
    return body


def series_patch(correlation: Correlation, api_version: str) -> dict[str, Any]:
    """The merge patch that brings an existing Event up to ``correlation``:
    the series on :data:`EVENTS_V1`; count, last time and message on
    :data:`CORE_V1`."""
    if api_version == EVENTS_V1:
        return {
            "series": {
                "count": correlation.count,
                "lastObservedTime": format_micro_time(_time(correlation.last_time)),
            }
        }
    return {
        "count": correlation.count,
        "lastTimestamp": format_time(_time(correlation.last_time)),
        "message": correlation.occurrence.message,
    }


def discover_events_api(
    transport: Transport, timeout: float, aborter: RequestAborter | None = None
) -> str:
    """:data:`EVENTS_V1` when the server serves ``events`` in events.k8s.io/v1,
    else :data:`CORE_V1`. One GET of the group version's discovery document,
    waiting at most ``timeout`` seconds for data; a failure other than 404
    (the server is down, 5xx) propagates, so the caller can ask again.
    ``aborter`` can abort the request from another thread."""
    try:
        document = transport.request(
            "GET", "/apis/events.k8s.io/v1", read_timeout=timeout, aborter=aborter
        ).json()
    except NotFoundError:
        return CORE_V1
    resources = document.get("resources") if isinstance(document, dict) else None
    served = any(isinstance(r, dict) and r.get("name") == "events" for r in resources or ())
    return EVENTS_V1 if served else CORE_V1
