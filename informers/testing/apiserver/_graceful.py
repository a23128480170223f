"""Graceful pod deletion, as the API server's pod strategy does it: a DELETE
of a running pod does not remove it but sets ``deletionTimestamp`` (now plus
the grace period) and ``deletionGracePeriodSeconds``; the kubelet (the
emulator's pod-lifecycle controller) stops the containers and ends it with a
DELETE of grace period 0. The grace period is the DeleteOptions'
``gracePeriodSeconds`` (body or query), else the pod's
``spec.terminationGracePeriodSeconds``, else 30. A pod no node runs (no
``spec.nodeName``) or that already finished (``Succeeded``/``Failed``) goes at
once, as does a grace period of 0 (``kubectl delete --force --grace-period=0``).

Pure functions; thread-safe.
"""

from __future__ import annotations

import time
from typing import Any

from informers.testing.apiserver import _status

__all__ = ["DEFAULT_GRACE_SECONDS", "grace_period", "requested_grace", "terminating"]

#: A pod's grace period when neither the request nor the pod names one.
DEFAULT_GRACE_SECONDS = 30


def requested_grace(options: dict[str, Any], query: str | None) -> int | None:
    """The ``gracePeriodSeconds`` a DELETE asks for (None: not given);
    400 when it is not an integer."""
    value: Any = options.get("gracePeriodSeconds")
    if value is None and query:
        value = query
    if value is None:
        return None
    try:
        grace = int(value)
    except (TypeError, ValueError):
        raise _status.bad_request(f"invalid gracePeriodSeconds: {value!r}") from None
    return max(grace, 0)


def grace_period(pod: dict[str, Any], requested: int | None) -> int:
    """The grace period a DELETE of ``pod`` gets (0: delete at once)."""
    found_spec, found_status = pod.get("spec"), pod.get("status")
    spec: dict[str, Any] = found_spec if isinstance(found_spec, dict) else {}
    status: dict[str, Any] = found_status if isinstance(found_status, dict) else {}
    if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
        return 0
    if requested is not None:
        return requested
    own = spec.get("terminationGracePeriodSeconds")
    if isinstance(own, int) and not isinstance(own, bool):
        return max(own, 0)
    return DEFAULT_GRACE_SECONDS


def terminating(pod: dict[str, Any], grace: int, rv: int) -> dict[str, Any] | None:
    """``pod`` marked for deletion in ``grace`` seconds at ``rv``, or None
    when it is already terminating with a grace period no longer than that
    (a later DELETE may only shorten it)."""
    meta = pod["metadata"]
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") and isinstance(current, int) and current <= grace:
        return None
    new = dict(pod)
    new["metadata"] = {
        **meta,
        "deletionTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + grace)),
        "deletionGracePeriodSeconds": grace,
        "resourceVersion": str(rv),
    }
    return new
