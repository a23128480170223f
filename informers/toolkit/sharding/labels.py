"""Label-based routing: a sharder writes each object's shard into a label,
and each replica watches only the objects labelled with its own shard.

Labels, for ring ``<ring>``:

``shard.kube-informers.io/<ring>: <shard>``
    the shard the object is assigned to (:func:`shard_label`).
``drain.kube-informers.io/<ring>: "true"``
    the sharder wants the object back from its shard (:func:`drain_label`).

The :class:`Sharder` (run it under leader election, e.g.
:func:`~informers.toolkit.leaderelection.run_with_leader_election`: it is a
:class:`~informers.toolkit.leaderelection.Runnable`) reconciles every object of the
kind against the ring of ready shards:

1. no shard label: set it to the object's shard in the ring;
2. labelled with the right shard: nothing to do;
3. labelled with a shard that is no longer ready (its Lease expired, so it
   stopped working: its renew deadline is shorter than the lease duration):
   reassign at once, clearing any drain label;
4. labelled with another ready shard: set the drain label and wait;
5. drain label set: wait for the shard to acknowledge (case 1 follows).

The shard's side (:class:`DrainingReconciler`, which wraps the replica's
reconcile) looks at the drain label before every reconcile: the workqueue
runs one reconcile per key at a time, so when it sees the label nothing of
that object is running on this shard; it acknowledges by removing both its
shard label and the drain label, and stops. Only then does the sharder give
the object to the new shard: no object is ever reconciled by two shards at
once. Every write is a PUT conditional on the ``resourceVersion`` read; a
conflict is retried by the workqueue.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.errors import InformerStateError, NotFoundError
from informers.rest.transport import Transport, as_transport
from informers.toolkit._logcontext import context_logger
from informers.toolkit.runtime import Controller, InformerSource, Request, Result
from informers.toolkit.sharding.lease import ShardLease
from informers.toolkit.sharding.metrics import NOOP_SHARDING_METRICS, ShardingMetrics
from informers.toolkit.sharding.ring import ring_key
from informers.toolkit.sharding.routing import RingChangeSource
from informers.toolkit.sharding.watcher import RingWatcher
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.resources import Resource

__all__ = [
    "DRAIN_LABEL_PREFIX",
    "SHARD_LABEL_PREFIX",
    "DrainingReconciler",
    "Sharder",
    "drain_label",
    "shard_label",
    "shard_label_selector",
]

log = context_logger(logging.getLogger(__name__))

#: The label an object carries its shard in: ``shard.kube-informers.io/<ring>: <shard id>``.
SHARD_LABEL_PREFIX = "shard.kube-informers.io/"
#: The label the sharder sets to ask an object's old shard to let it go.
DRAIN_LABEL_PREFIX = "drain.kube-informers.io/"


def shard_label(ring: str) -> str:
    """The label holding an object's shard in ``ring``."""
    return SHARD_LABEL_PREFIX + ring


def drain_label(ring: str) -> str:
    """The label asking an object's shard in ``ring`` to let it go."""
    return DRAIN_LABEL_PREFIX + ring


def shard_label_selector(ring: str, shard: str) -> str:
    """The label selector ``shard.kube-informers.io/<ring>=<shard>`` a replica
    of ``shard`` watches with. It selects by the label the sharder sets; for a
    KEP-5866 hash range of object fields see
    :mod:`informers.toolkit.sharding.selector`."""
    return f"{shard_label(ring)}={shard}"


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _relabel(
    transport: Transport,
    resource: Resource,
    obj: Mapping[str, Any],
    set_: Mapping[str, str],
    remove: tuple[str, ...],
) -> Any:
    """PUT ``obj`` with labels changed, conditional on its resourceVersion
    (``ConflictError`` when someone wrote first)."""
    meta = dict(obj.get("metadata") or {})
    labels = {k: v for k, v in _labels(obj).items() if k not in remove}
    labels.update(set_)
    meta["labels"] = labels
    body = {**obj, "metadata": meta}
    path = resource.object_path(str(meta["name"]), meta.get("namespace") or None)
    return transport.request("PUT", path, body=body, read_timeout=10.0).json()


class DrainingReconciler:
    """The reconcile of shard ``shard``'s replica in ring ``ring``, wrapped:
    before calling ``reconcile`` it reads the object from ``informer`` (the
    replica's informer, label-selected by :func:`shard_label_selector`) and

    * does nothing when the object is gone, is not labelled with this shard,
      or ``lease`` (if given) is not held;
    * acknowledges a drain (removes the shard and drain labels, one
      conditional PUT through ``client``) instead of reconciling;
    * otherwise calls ``reconcile(request)`` and returns its result.

    Thread-safe (state-free apart from its arguments).
    """

    def __init__(
        self,
        reconcile: Callable[[Request], Result | None],
        client: Any,
        resource: Resource,
        informer: SharedIndexInformer,
        *,
        ring: str,
        shard: str,
        lease: ShardLease | None = None,
    ) -> None:
        self._reconcile, self._resource, self._informer = reconcile, resource, informer
        self._transport = as_transport(client)
        self._ring, self._shard, self._lease = ring, shard, lease
        self._logger = context_logger(log.logger, ring=ring, shard=shard)
        self._shard_label, self._drain_label = shard_label(ring), drain_label(ring)

    def __call__(self, request: Request) -> Result | None:
        obj = self._informer.get_store().get_by_key(str(request))
        if obj is None:
            return None
        labels = _labels(obj)
        if labels.get(self._shard_label) != self._shard:
            return None
        if self._drain_label in labels:
            try:
                _relabel(
                    self._transport, self._resource, obj, {}, (self._shard_label, self._drain_label)
                )
            except NotFoundError:
                return None
            self._logger.debug(
                "shard %s/%s released %s",
                self._ring,
                self._shard,
                request,
                extra={"key": str(request)},
            )
            return None
        if self._lease is not None and not self._lease.is_ready():
            return None
        return self._reconcile(request)


class Sharder:
    """Assigns every object of ``resource`` (``group``/``kind`` for ring
    keys) in ``informer`` (an informer on all of them) to a shard of
    ``ring_watcher``'s ring by label, with the drain handshake of the module
    docstring. A :class:`~informers.toolkit.leaderelection.Runnable`: :meth:`start`
    builds and starts a fresh controller named ``sharder-<ring>`` (sources:
    the informer, and a :class:`~informers.toolkit.sharding.RingChangeSource` that
    enqueues every object whose shard changes in the ring), :meth:`stop`
    stops it. Run exactly one, under leader election.

    ``metrics`` gets drain times (from setting the drain label to seeing the
    acknowledgement) and objects per shard (counted on each ring change).
    """

    def __init__(
        self,
        client: Any,
        resource: Resource,
        informer: SharedIndexInformer,
        ring_watcher: RingWatcher,
        *,
        workers: int = 2,
        clock: Clock = REAL_CLOCK,
        metrics: ShardingMetrics = NOOP_SHARDING_METRICS,
    ) -> None:
        self._transport = as_transport(client)
        self._resource, self._informer, self._watcher = resource, informer, ring_watcher
        self._ring = ring_watcher.name
        self._logger = context_logger(log.logger, ring=self._ring)
        self._shard_label, self._drain_label = shard_label(self._ring), drain_label(self._ring)
        self._workers, self._clock, self._metrics = workers, clock, metrics
        self._lock = threading.Lock()
        self._controller: Controller | None = None  # guarded by _lock
        #: key -> local time its drain label was set; guarded by _lock
        self._draining: dict[str, float] = {}

    def _key(self, obj: Mapping[str, Any]) -> str:
        return ring_key(obj, self._resource.group, self._resource.kind)

    def reconcile(self, request: Request) -> Result | None:
        """One object's step of the handshake (see the module docstring)."""
        obj = self._informer.get_store().get_by_key(str(request))
        if obj is None:
            with self._lock:
                self._draining.pop(str(request), None)
            return None
        ring = self._watcher.ring()
        desired = ring.shard_for(self._key(obj))
        labels = _labels(obj)
        current = labels.get(self._shard_label)
        draining = self._drain_label in labels
        if current is None:
            with self._lock:
                since = self._draining.pop(str(request), None)
            if since is not None:
                self._metrics.drained(self._ring, self._clock.now() - since)
            if desired is not None:
                _relabel(self._transport, self._resource, obj, {self._shard_label: desired}, ())
                self._logger.debug(
                    "sharder %s: %s -> %s",
                    self._ring,
                    request,
                    desired,
                    extra={"key": str(request)},
                )
            return None
        if current not in ring:
            # its shard is gone (lease no longer ready): nothing runs there
            remove = (self._drain_label,)
            if desired is None:
                _relabel(self._transport, self._resource, obj, {}, (self._shard_label, *remove))
            else:
                _relabel(self._transport, self._resource, obj, {self._shard_label: desired}, remove)
            with self._lock:
                self._draining.pop(str(request), None)
            return None
        if current == desired or draining:
            return None  # in place, or waiting for the shard's acknowledgement
        with self._lock:
            self._draining[str(request)] = self._clock.now()
        _relabel(self._transport, self._resource, obj, {self._drain_label: "true"}, ())
        self._logger.debug(
            "sharder %s: draining %s from %s",
            self._ring,
            request,
            current,
            extra={"key": str(request)},
        )
        return None

    def _count(self, _old: Any, _new: Any) -> None:
        counts: dict[str, int] = {}
        for obj in self._informer.get_store().list():
            shard = _labels(obj).get(self._shard_label)
            if shard is not None:
                counts[shard] = counts.get(shard, 0) + 1
        for shard, count in counts.items():
            self._metrics.objects_assigned(self._ring, shard, count)

    def start(self) -> None:
        """Start a new controller (does not block)."""
        controller = Controller(
            f"sharder-{self._ring}",
            self.reconcile,
            [
                InformerSource(self._informer),
                RingChangeSource(
                    self._watcher,
                    self._informer,
                    None,
                    self._resource.group,
                    self._resource.kind,
                ),
            ],
            workers=self._workers,
        )
        with self._lock:
            if self._controller is not None:
                raise InformerStateError(f"sharder {self._ring} is running already")
            self._controller = controller
        self._watcher.add_callback(self._count)
        controller.start()

    def wait_idle(self, timeout: float | None = 10.0) -> bool:
        """Whether the running controller went idle within ``timeout``."""
        with self._lock:
            controller = self._controller
        return True if controller is None else controller.wait_idle(timeout)

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the controller (in-flight steps finish)."""
        with self._lock:
            controller, self._controller = self._controller, None
        self._watcher.remove_callback(self._count)
        if controller is not None:
            controller.stop(timeout)
