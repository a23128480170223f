"""The ControllerManager: the built-in controllers of the emulator, started
and stopped together.

It talks to the server over HTTP like any other client: one
``kubernetes.client.ApiClient`` (``server.api_client()`` unless given), a
:class:`~informers.cache.factory.SharedInformerFactory` for the reads, a
:class:`~informers.testing.controllers.api.JsonApi` for the writes.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.errors import InformerStateError
from informers.testing.controllers.api import JsonApi
from informers.testing.controllers.deployment import deployment_controller
from informers.testing.controllers.garbagecollector import (
    DEPENDENT_KINDS,
    OWNER_UID_INDEX,
    garbage_collector,
    owner_uid_index,
)
from informers.testing.controllers.job import job_controller
from informers.testing.controllers.namespace import namespace_controller
from informers.testing.controllers.pods import pod_lifecycle_controller
from informers.testing.controllers.replicaset import replicaset_controller
from informers.toolkit.runtime import Controller
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.resources import (
    CUSTOMRESOURCEDEFINITIONS,
    DEPLOYMENTS,
    JOBS,
    NAMESPACES,
    NODES,
    PODS,
    REPLICASETS,
    Resource,
)

__all__ = ["CONTROLLER_NAMES", "ControllerManager", "start_controllers"]

log = logging.getLogger(__name__)

#: The controllers a manager runs, in start order.
CONTROLLER_NAMES = (
    "garbage-collector",
    "namespace",
    "replicaset",
    "deployment",
    "job",
    "pod-lifecycle",
)


class ControllerManager:
    """Runs the built-in controllers against ``server`` (an
    :class:`~informers.testing.ApiServer`, or anything with ``api_client()``).

    :param server: the emulator; while the manager runs its
        ``deletion_lifecycle`` is on (propagation policies and namespace
        finalization are honoured), and off again after :meth:`stop`.
    :param api_client: the client to use (the caller closes it); default: a
        new ``server.api_client()``, closed by :meth:`stop`.
    :param ready_delay: seconds before a new pod is Running and Ready.
    :param completion_delay: seconds a Job's pod runs before it succeeds.
    :param termination_delay: seconds a Terminating pod stays before the
        simulated kubelet ends it (at most its grace period); default the
        server's ``pod_termination_delay`` (else 0.1).
    :param controllers: the names (of :data:`CONTROLLER_NAMES`) to run; default all.
    :param sync_timeout: how long :meth:`start` waits for the caches.
    :param clock: times the pod lifecycle's delays (the informers run on real time).

    :meth:`start` blocks until the caches have synced and every controller
    runs; :meth:`stop` stops the controllers, then the informers, joining
    every thread (``reconcile-<controller>-<n>`` and the informers'). A
    manager runs once. Thread-safe (one lock guards the state).
    Use as a context manager.
    """

    def __init__(
        self,
        server: Any,
        *,
        api_client: Any = None,
        ready_delay: float = 0.5,
        completion_delay: float = 1.0,
        termination_delay: float | None = None,
        controllers: tuple[str, ...] | list[str] | None = None,
        sync_timeout: float = 30.0,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        names = tuple(CONTROLLER_NAMES if controllers is None else controllers)
        unknown = sorted(set(names) - set(CONTROLLER_NAMES))
        if unknown:
            raise ValueError(f"unknown controllers {unknown}; known: {list(CONTROLLER_NAMES)}")
        if ready_delay < 0 or completion_delay < 0:
            raise ValueError("ready_delay and completion_delay must be >= 0")
        self._server = server
        self._own_client = api_client is None
        self._client_arg = api_client
        self._ready_delay = ready_delay
        self._completion_delay = completion_delay
        if termination_delay is None:
            termination_delay = float(getattr(server, "pod_termination_delay", 0.1))
        if termination_delay < 0:
            raise ValueError("termination_delay must be >= 0")
        self._termination_delay = termination_delay
        self._names = names
        self._sync_timeout = sync_timeout
        self._clock = clock
        self._lock = threading.Lock()
        # guarded by _lock: "new" -> "running" -> "stopped"; what start made
        self._state = "new"
        self._client: Any = None
        self._factory: SharedInformerFactory | None = None
        self._controllers: list[Controller] = []

    @property
    def controllers(self) -> list[Controller]:
        """The running controllers, in start order."""
        with self._lock:
            return list(self._controllers)

    def start(self) -> ControllerManager:
        """Start the informers, wait for their caches, start the controllers;
        returns ``self``. Raises
        :class:`~informers.errors.CacheSyncTimeoutError` (having stopped
        what it started) when the caches do not sync within ``sync_timeout``."""
        with self._lock:
            if self._state != "new":
                raise InformerStateError(f"a controller manager runs once (it is {self._state})")
            self._state = "running"
        client = _new_client(self._server) if self._own_client else self._client_arg
        factory = SharedInformerFactory(client)
        with self._lock:
            self._client, self._factory = client, factory
        if hasattr(self._server, "deletion_lifecycle"):
            self._server.deletion_lifecycle = True
        try:
            self._start_locked_free(client, factory)
        except BaseException:
            self.stop()
            raise
        log.info("controller manager: %s running", ", ".join(self._names))
        return self

    def _start_locked_free(self, client: Any, factory: SharedInformerFactory) -> None:
        api = JsonApi(client)
        gc = "garbage-collector" in self._names
        watched: tuple[Resource, ...] = (PODS, REPLICASETS, DEPLOYMENTS, JOBS, NAMESPACES, NODES)
        if gc:
            watched = (*DEPENDENT_KINDS, NAMESPACES, NODES, CUSTOMRESOURCEDEFINITIONS)
        inf = {r: factory.for_resource(r) for r in watched}
        if gc:
            for resource in DEPENDENT_KINDS:
                inf[resource].add_indexers({OWNER_UID_INDEX: owner_uid_index})
        factory.start()
        factory.wait_for_cache_sync(self._sync_timeout)  # raises CacheSyncTimeoutError
        makers = {
            "garbage-collector": lambda: garbage_collector(
                api, {r: inf[r] for r in DEPENDENT_KINDS}, crds=inf[CUSTOMRESOURCEDEFINITIONS]
            ),
            "namespace": lambda: namespace_controller(api, inf[NAMESPACES]),
            "replicaset": lambda: replicaset_controller(api, inf[REPLICASETS], inf[PODS]),
            "deployment": lambda: deployment_controller(api, inf[DEPLOYMENTS], inf[REPLICASETS]),
            "job": lambda: job_controller(api, inf[JOBS], inf[PODS]),
            "pod-lifecycle": lambda: pod_lifecycle_controller(
                api,
                inf[PODS],
                inf[NODES],
                ready_delay=self._ready_delay,
                completion_delay=self._completion_delay,
                termination_delay=self._termination_delay,
                clock=self._clock,
            ),
        }
        for name in CONTROLLER_NAMES:
            if name not in self._names:
                continue
            controller = makers[name]()
            with self._lock:
                self._controllers.append(controller)
            controller.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the controllers (in reverse order), then the informers, and
        close the client if the manager made it. Idempotent."""
        with self._lock:
            if self._state == "stopped":
                return
            self._state = "stopped"
            controllers, self._controllers = self._controllers, []
            factory, client = self._factory, self._client
        for controller in reversed(controllers):
            controller.stop(timeout)
        if factory is not None:
            factory.shutdown()
        if hasattr(self._server, "deletion_lifecycle"):
            self._server.deletion_lifecycle = False
        if client is not None and self._own_client:
            client.close()
        log.info("controller manager stopped")

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether every controller became idle (each within ``timeout``)."""
        return all(c.wait_idle(timeout) for c in self.controllers)

    def __enter__(self) -> ControllerManager:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _new_client(server: Any) -> Any:
    """``server.api_client()``, with a connection pool big enough for every
    worker and informer at once (urllib3's default of 10 is not)."""
    configuration = getattr(server, "configuration", None)
    if configuration is None:
        return server.api_client()
    from kubernetes import client  # noqa: PLC0415 - optional heavy import

    config = configuration()
    config.connection_pool_maxsize = 32
    return client.ApiClient(config)


def start_controllers(server: Any, **options: Any) -> ControllerManager:
    """Start a :class:`ControllerManager` on ``server`` (options as its
    constructor's) and return it; the caller stops it. What ``kube-informers
    serve`` and the demo call."""
    return ControllerManager(server, **options).start()
