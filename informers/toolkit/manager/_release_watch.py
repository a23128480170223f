"""Wake a standby the moment the leader releases the Lease.

A candidate that does not lead tries to acquire the Lease once per retry
period (2 s by default, jittered up to 4.4 s). A leader that stops
gracefully releases the Lease (an empty holder); a watch on that one Lease
sees the release within milliseconds, and :class:`ReleaseWatch` then makes
the elector try at once (:meth:`~informers.toolkit.leaderelection.LeaderElector.retry_now`),
so a warm standby takes over in about one request instead of one retry
period. The watch needs ``list`` and ``watch`` on ``leases`` in the Lease's
namespace; without them the elector simply keeps its retry period (the
informer logs the 403 once and retries with backoff).
"""

from __future__ import annotations

import logging
from typing import Any

from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.rest.listwatch import HTTPListerWatcher
from informers.toolkit.leaderelection import LeaderElector, LeaseLock
from informers.wire.resources import LEASES

__all__ = ["ReleaseWatch"]

log = logging.getLogger(__name__)


def _released(obj: Any) -> bool:
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return not (isinstance(spec, dict) and spec.get("holderIdentity"))


class ReleaseWatch:
    """Watches the Lease of ``lock`` and nudges ``elector`` when it is
    released or deleted while the elector is not leading. :meth:`start`
    starts its informer (not waited for: the election does not depend on
    it); :meth:`stop` stops and joins it. Thread-safe."""

    def __init__(self, api_client: Any, lock: LeaseLock, elector: LeaderElector) -> None:
        self._elector = elector
        lister_watcher = HTTPListerWatcher(
            api_client, LEASES, lock.namespace, field_selector=f"metadata.name={lock.name}"
        )
        self.informer = SharedIndexInformer(
            lister_watcher, name=f"lease {lock.namespace}/{lock.name}"
        )
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._seen,
                update_func=lambda old, new: self._seen(new),
                delete_func=lambda obj: self._nudge("deleted"),
            )
        )

    def _seen(self, obj: Any) -> None:
        if _released(obj):
            self._nudge("released")

    def _nudge(self, what: str) -> None:
        if not self._elector.is_leader():
            log.debug("lease %s %s: trying to acquire it now", self._elector.name, what)
            self._elector.retry_now()

    def start(self) -> None:
        self.informer.start()

    def stop(self) -> None:
        self.informer.stop()
