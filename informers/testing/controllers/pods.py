"""The pod lifecycle controller: what the scheduler and a kubelet would do.

A new pod gets a node (``spec.nodeName``: the first Node the cache holds, or
``emulator-node`` when there is none) and, ``ready_delay`` seconds after the
controller first saw it, the status of a running pod: ``phase: Running``, a
``podIP`` (``10.244.x.y``) and ``hostIP``, the conditions ``PodScheduled``,
``Initialized``, ``ContainersReady`` and ``Ready`` true, and a ready,
started, running ``containerStatuses`` entry per container.

Pods owned by a Job (``restartPolicy`` not ``Always``) then run for
``completion_delay`` seconds and succeed: ``phase: Succeeded``, each
container terminated with exit code 0, ``Ready`` false (``PodCompleted``).

A pod being deleted gracefully (``deletionTimestamp`` with a
``deletionGracePeriodSeconds`` above 0) is ended ``termination_delay``
seconds (at most its grace period) after the controller first saw it
Terminating: a DELETE with grace period 0, preconditioned on its uid.

Delays are waited by requeueing (``Result(requeue_after=...)``) on the
controller's clock, never by sleeping.
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers.api import ConflictError, JsonApi, NotFoundError
from informers.testing.controllers.common import TERMINAL_PHASES, controller_of, now
from informers.toolkit.runtime import Controller, InformerSource, Request, Result
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.resources import PODS

__all__ = ["DEFAULT_NODE", "PodLifecycleReconciler", "pod_lifecycle_controller"]

log = logging.getLogger(__name__)

#: The node pods are put on when the cluster has no Node.
DEFAULT_NODE = "emulator-node"
_HOST_IP = "192.168.49.2"


def _conditions(status: str, stamp: str, reason: str = "") -> list[dict[str, Any]]:
    out = []
    for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready"):
        value = "True" if kind in ("PodScheduled", "Initialized") else status
        cond: dict[str, Any] = {"type": kind, "status": value, "lastTransitionTime": stamp}
        if value == "False" and reason:
            cond["reason"] = reason
        out.append(cond)
    return out


class PodLifecycleReconciler:
    """``reconcile(request)`` for one pod. Thread-safe: one lock guards the
    first-seen times and the IP counter; no call is made while holding it."""

    def __init__(
        self,
        api: JsonApi,
        pods: SharedIndexInformer,
        nodes: SharedIndexInformer | None,
        *,
        ready_delay: float = 0.5,
        completion_delay: float = 1.0,
        termination_delay: float = 0.1,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.api = api
        self.termination_delay = termination_delay
        self.pods = pods
        self.nodes = nodes
        self.ready_delay = ready_delay
        self.completion_delay = completion_delay
        self.clock = clock
        self._lock = threading.Lock()
        #: guarded by _lock: pod uid -> when this controller first saw it / saw it running
        self._seen: dict[str, float] = {}
        self._running: dict[str, float] = {}
        self._terminating: dict[str, float] = {}
        #: guarded by _lock: the next pod IP
        self._ips = itertools.count(2)

    def _waited(self, table: dict[str, float], uid: str, delay: float) -> float:
        """Seconds left of ``delay`` since ``uid`` was first put in ``table``."""
        at = self.clock.now()
        with self._lock:
            first = table.setdefault(uid, at)
        return max(0.0, delay - (at - first))

    def _node(self) -> str:
        if self.nodes is not None:
            names = sorted(self.nodes.get_indexer().list_keys())
            if names:
                return names[0]
        return DEFAULT_NODE

    def _next_ip(self) -> str:
        with self._lock:
            n = next(self._ips)
        return f"10.244.{(n >> 8) % 256}.{n % 256}"

    def __call__(self, request: Request) -> Result | None:
        try:
            return self._reconcile(request)
        except NotFoundError:
            return None  # deleted meanwhile: its delete event settles the rest
        except ConflictError:
            # Started from a stale cache (the pod moved on meanwhile, maybe
            # to a terminal phase it must never leave): the event of the
            # newer version brings the request back.
            return None

    def _reconcile(self, request: Request) -> Result | None:
        pod = self.pods.get_indexer().get_by_key(request.key)
        if pod is None:
            return None
        meta = pod["metadata"]
        uid = meta["uid"]
        status = pod.get("status") or {}
        if meta.get("deletionTimestamp") or status.get("phase") in TERMINAL_PHASES:
            with self._lock:
                self._seen.pop(uid, None)
                self._running.pop(uid, None)
            if meta.get("deletionTimestamp"):
                return self._terminate(request, pod)
            return None
        if status.get("phase") != "Running":
            left = self._waited(self._seen, uid, self.ready_delay)
            if left > 0:
                return Result(requeue_after=left)
            self._start(request, pod)
            with self._lock:
                self._running.setdefault(uid, self.clock.now())
        if self._completes(pod):
            left = self._waited(self._running, uid, self.completion_delay)
            if left > 0:
                return Result(requeue_after=left)
            self._succeed(request, pod)
        return None

    def _terminate(self, request: Request, pod: dict[str, Any]) -> Result | None:
        """End a pod in graceful deletion once its time has come."""
        meta = pod["metadata"]
        grace = meta.get("deletionGracePeriodSeconds")
        if not isinstance(grace, int) or grace <= 0:
            with self._lock:
                self._terminating.pop(meta["uid"], None)
            return None  # nothing to wait for, or only finalizers hold it
        left = self._waited(self._terminating, meta["uid"], min(self.termination_delay, grace))
        if left > 0:
            return Result(requeue_after=left)
        with self._lock:
            self._terminating.pop(meta["uid"], None)
        try:
            self.api.delete(PODS, request.namespace, request.name, uid=meta["uid"], grace_period=0)
        except ConflictError:
            return None  # another pod holds the name now
        log.debug("pod %s: terminated", request)
        return None

    @staticmethod
    def _completes(pod: dict[str, Any]) -> bool:
        ref = controller_of(pod)
        restart = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        return ref is not None and ref.get("kind") == "Job" and restart != "Always"

    def _start(self, request: Request, pod: dict[str, Any]) -> None:
        spec = pod.get("spec") or {}
        rv = pod["metadata"]["resourceVersion"]  # every write is onto this version
        node = spec.get("nodeName")
        if not node:
            node = self._node()
            bound = self.api.patch(
                PODS,
                request.namespace,
                request.name,
                {"metadata": {"resourceVersion": rv}, "spec": {"nodeName": node}},
            )
            rv = bound["metadata"]["resourceVersion"]
        stamp = now()
        containers = [
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": f"docker.io/library/{c.get('image', '')}@sha256:" + "0" * 64,
                "containerID": f"containerd://{request.name}-{i}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": stamp}},
            }
            for i, c in enumerate(spec.get("containers") or [])
        ]
        ip = self._next_ip()
        status = {
            "phase": "Running",
            "conditions": _conditions("True", stamp),
            "containerStatuses": containers,
            "hostIP": _HOST_IP,
            "hostIPs": [{"ip": _HOST_IP}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": stamp,
            "qosClass": "BestEffort",
        }
        # Onto the version it was computed from: a stale cache must not move
        # a pod that already ran to completion back to Running.
        self.api.patch_status(PODS, request.namespace, request.name, status, resource_version=rv)
        log.debug("pod %s: running on %s", request, node)

    def _succeed(self, request: Request, pod: dict[str, Any]) -> None:
        stamp = now()
        spec = pod.get("spec") or {}
        containers = [
            {
                "name": c.get("name", ""),
                "image": c.get("image", ""),
                "imageID": f"docker.io/library/{c.get('image', '')}@sha256:" + "0" * 64,
                "containerID": f"containerd://{request.name}-{i}",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": (pod.get("status") or {}).get("startTime") or stamp,
                        "finishedAt": stamp,
                    }
                },
            }
            for i, c in enumerate(spec.get("containers") or [])
        ]
        status = {
            "phase": "Succeeded",
            "conditions": _conditions("False", stamp, "PodCompleted"),
            "containerStatuses": containers,
        }
        self.api.patch_status(PODS, request.namespace, request.name, status)
        log.debug("pod %s: succeeded", request)


def pod_lifecycle_controller(
    api: JsonApi,
    pods: SharedIndexInformer,
    nodes: SharedIndexInformer | None = None,
    *,
    ready_delay: float = 0.5,
    completion_delay: float = 1.0,
    termination_delay: float = 0.1,
    workers: int = 2,
    clock: Clock = REAL_CLOCK,
) -> Controller:
    """The ``pod-lifecycle`` controller (pod events)."""
    reconciler = PodLifecycleReconciler(
        api,
        pods,
        nodes,
        ready_delay=ready_delay,
        completion_delay=completion_delay,
        termination_delay=termination_delay,
        clock=clock,
    )
    return Controller(
        "pod-lifecycle", reconciler, [InformerSource(pods)], workers=workers, clock=clock
    )
