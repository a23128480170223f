"""The Manager: one process's informers, controllers, leader election,
probes and metrics, started and stopped in order (controller-runtime's
``Manager``, on threads).

::

    manager = Manager(api_client, health_probe_bind_address=":8081")
    pods = manager.factory.pods()
    manager.controller("pod-labeller", reconcile, [InformerSource(pods)])
    manager.run()          # until SIGTERM / SIGINT; then a graceful stop

**Start order** (:meth:`Manager.start`): the probe and metrics endpoints;
the shard Lease, if any; the informers of :attr:`Manager.factory`, waiting
for their caches to sync (with the collector paused, then the heap frozen:
see ``gc_policy``); the runnables that do not need leadership; then the
others -- at once without leader election, else once this replica wins the
election. A replica that is not leading keeps its informers synced and its
controllers warmed up (warm standby: their sources have queued every cached
object; only the workers wait): when it wins, its workers start on a full
queue, without a new list.

**Stop order** (:meth:`Manager.stop`), all bounded by
``graceful_shutdown_timeout``: the leader runnables, in reverse (a
controller stops its sources, drains its queue and lets the reconciles in
progress finish; one still running at the bound is logged and left behind,
as a thread cannot be killed), then the other runnables, then the informers,
then the leader election Lease is released (with ``release_on_cancel``) and
the shard Lease last; the endpoints close after that.

**Leadership lost** (the renew deadline passed): the leader runnables are
stopped at once (a controller's reconcile contexts see their stop event
set), within the election's stop margin, and a stop is requested:
:meth:`Manager.run` stops everything and returns, with
:attr:`Manager.leadership_lost` true (after :meth:`Manager.start`, call
:meth:`Manager.stop` yourself when it turns true). A
replica that lost must not lead again in the same process (client-go's
advice): restart it.

**Signals** (:meth:`Manager.run` in the main thread): the first SIGTERM or
SIGINT starts the graceful stop, and ``run`` returns once it is done; a
second one exits the process at once (status 1). The previous handlers are
restored when ``run`` returns.

Threads: ``leader-elector-*`` (the election), ``manager-runnable-<name>``
(function runnables), ``manager-healthz-http`` / ``manager-metrics-http``
and their request threads, plus what the informers and controllers run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cache.informer import SharedIndexInformer
from informers.cache.multinamespace import MultiNamespaceInformer
from informers.cache.reflector import ReflectorConfig
from informers.cache.wait import wait_for_cache_sync
from informers.errors import InformerStateError
from informers.toolkit.leaderelection import (
    NOOP_LEADER_METRICS,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    Runnable,
)
from informers.toolkit.manager._http import EndpointServer, Response, parse_bind_address
from informers.toolkit.manager._release_watch import ReleaseWatch
from informers.toolkit.manager.health import (
    DEFAULT_BACKOFF_BOUND,
    Check,
    HealthChecks,
    InformerLiveness,
    InformersSynced,
)
from informers.toolkit.manager.metrics import ManagerMetrics, install_informer_metrics
from informers.toolkit.runtime import Controller, ReconcileFunc, Source
from informers.toolkit.sharding import ShardLease
from informers.util.gcpolicy import collector_paused

__all__ = ["FunctionRunnable", "Manager"]

log = logging.getLogger(__name__)

_NEW, _STARTING, _RUNNING, _STOPPING, _STOPPED = "new", "starting", "running", "stopping", "stopped"


class FunctionRunnable:
    """A ``fn(stop_event)`` run as a :class:`~informers.toolkit.leaderelection.Runnable`:
    :meth:`start` calls it on a thread named ``manager-runnable-<name>``;
    :meth:`stop` sets the event and joins the thread up to ``timeout``
    seconds (a function still running then is logged and left behind). An
    exception the function raises is logged. Thread-safe; runs once."""

    def __init__(self, fn: Callable[[threading.Event], object], name: str) -> None:
        self.name = name
        self._fn = fn
        self._stop = threading.Event()
        # A daemon, like a controller's workers: one left behind at the stop's
        # bound does not keep the process from exiting.
        self._thread = threading.Thread(
            target=self._main, name=f"manager-runnable-{name}", daemon=True
        )

    def _main(self) -> None:
        try:
            self._fn(self._stop)
        except Exception:
            log.exception("runnable %s raised", self.name)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        self._stop.set()
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("runnable %s still running after %s s; left behind", self.name, timeout)
            return False
        return True


@dataclasses.dataclass(slots=True)
class _Entry:
    runnable: Runnable
    name: str
    needs_leader: bool


def _name_of(runnable: object) -> str:
    name = getattr(runnable, "name", None)
    return name if isinstance(name, str) and name else type(runnable).__name__


def _default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _new_api_client(kubeconfig: str | None) -> Any:
    """An ApiClient from ``kubeconfig``, the in-cluster service account, or
    the default kubeconfig (in that order)."""
    from kubernetes import client, config  # noqa: PLC0415 - heavy import, only when used
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415

    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        with contextlib.suppress(ConfigException):
            configuration = client.Configuration()
            load: Any = config.load_incluster_config
            load(client_configuration=configuration)
            return client.ApiClient(configuration)
    new_client: Any = config.new_client_from_config
    return new_client(config_file=kubeconfig)


class Manager:
    """Owns an API client, a :class:`~informers.cache.factory.SharedInformerFactory`
    (:attr:`factory`), the runnables added with :meth:`add` (controllers
    among them) and, optionally, leader election or a shard Lease; runs them
    in order (see the module docs).

    :param api_client: a ``kubernetes.client.ApiClient``; ``None``: one is
        made from ``kubeconfig`` (or in-cluster config, or the default
        kubeconfig) and closed when the manager stops.
    :param namespace: the factory watches this namespace only (``None``: all).
    :param leader_election: ``True`` elects on the Lease
        ``leader_election_namespace/leader_election_id`` with the default
        durations and ``release_on_cancel``; a
        :class:`~informers.toolkit.leaderelection.LeaderElectionConfig` is used as
        given (its ``release_on_cancel`` decides the release, which the
        manager does last). ``False`` (default): runnables start at once.
    :param leader_election_identity: this replica's identity (default:
        ``<hostname>_<uuid>``).
    :param shard_lease: a :class:`~informers.toolkit.sharding.ShardLease` to hold
        while running: started first, the runnables wait until it is held,
        stopped (released) last.
    :param health_probe_bind_address: ``host:port`` of ``/healthz`` and
        ``/readyz`` (``None``/``"0"``: off, the default).
    :param metrics_bind_address: ``host:port`` of ``/metrics`` (off by
        default); needs the ``metrics`` extra.
    :param metrics_registry: the registry the toolkit providers are put on
        and ``/metrics`` serves (default ``prometheus_client.REGISTRY``).
        Given without a bind address, the providers are still installed.
    :param graceful_shutdown_timeout: seconds :meth:`stop` takes at most
        (plus one request timeout for the Lease release).
    :param cache_sync_timeout: seconds :meth:`start` waits for the caches
        (``None``: as long as it takes); past it
        :class:`~informers.errors.CacheSyncTimeoutError`.
    :param gc_policy: pause the cyclic collector during the initial sync and
        freeze the heap after it (:func:`~informers.util.gcpolicy.collector_paused`);
        ``False`` leaves the collector alone. Either way the INFO log says so.
    :param backoff_bound: seconds an informer may fail without progress
        before the liveness check turns red.
    :param reflector_config: the factory's reflector settings (e.g. the
        watchdog bound, ``watch_progress_timeout``).
    :param warm_standby: with leader election, a replica that does not
        lead warms its leader runnables up: a controller's sources start and
        fill its queue (:meth:`~informers.toolkit.runtime.Controller.warm_up`),
        and only its workers wait for leadership, so the first reconcile
        follows the election at once.
    :param watch_lease: with leader election on a
        :class:`~informers.toolkit.leaderelection.LeaseLock`, watch the Lease and
        try to acquire it the moment the leader releases it, rather than at
        the next retry period (needs ``list``/``watch`` on ``leases``;
        :mod:`informers.toolkit.manager._release_watch`).

    :class:`ValueError` for a malformed bind address, a leader election
    without ``leader_election_id``/``leader_election_namespace``, or a
    negative timeout; :class:`ImportError` when metrics are asked for
    without prometheus-client. Every method is thread-safe.
    """

    def __init__(
        self,
        api_client: Any = None,
        *,
        kubeconfig: str | None = None,
        namespace: str | None = None,
        leader_election: bool | LeaderElectionConfig = False,
        leader_election_id: str | None = None,
        leader_election_namespace: str | None = None,
        leader_election_identity: str | None = None,
        shard_lease: ShardLease | None = None,
        health_probe_bind_address: str | None = None,
        metrics_bind_address: str | None = None,
        metrics_registry: Any = None,
        graceful_shutdown_timeout: float = 30.0,
        cache_sync_timeout: float | None = 120.0,
        gc_policy: bool = True,
        backoff_bound: float = DEFAULT_BACKOFF_BOUND,
        reflector_config: ReflectorConfig | None = None,
        watch_lease: bool = True,
        warm_standby: bool = True,
    ) -> None:
        if not (math.isfinite(graceful_shutdown_timeout) and graceful_shutdown_timeout >= 0):
            raise ValueError(
                f"graceful_shutdown_timeout must be >= 0, not {graceful_shutdown_timeout!r}"
            )
        if cache_sync_timeout is not None and not cache_sync_timeout >= 0:
            raise ValueError(f"cache_sync_timeout must be None or >= 0, not {cache_sync_timeout!r}")
        health_address = parse_bind_address(health_probe_bind_address)
        metrics_address = parse_bind_address(metrics_bind_address)
        self._owns_client = api_client is None
        self.api_client: Any = api_client if api_client is not None else _new_api_client(kubeconfig)
        #: The informers of everything this manager runs.
        self.factory = SharedInformerFactory(
            self.api_client, namespace, reflector_config=reflector_config
        )
        self._graceful = float(graceful_shutdown_timeout)
        self._warm_standby = warm_standby
        self._sync_timeout = cache_sync_timeout
        self._gc_policy = gc_policy
        self._shard_lease = shard_lease
        self._metrics: ManagerMetrics | None = None
        if metrics_address is not None or metrics_registry is not None:
            self._metrics = ManagerMetrics(metrics_registry)

        self._election: LeaderElectionConfig | None = None
        self._release_lease = False
        if leader_election is True:
            if not leader_election_id or not leader_election_namespace:
                raise ValueError(
                    "leader election needs leader_election_id and leader_election_namespace"
                )
            leader_election = LeaderElectionConfig(
                lock=LeaseLock(self.api_client, leader_election_namespace, leader_election_id),
                identity=leader_election_identity or _default_identity(),
                release_on_cancel=True,
            )
        if isinstance(leader_election, LeaderElectionConfig):
            self._release_lease = leader_election.release_on_cancel
            # The manager releases the Lease itself, after the informers stopped.
            self._election = dataclasses.replace(leader_election, release_on_cancel=False)
        self._elector: LeaderElector | None = None
        self._release_watch: ReleaseWatch | None = None
        if self._election is not None:
            self._elector = LeaderElector(
                self._election,
                on_started_leading=self._lead,
                metrics=self._metrics.leader if self._metrics else NOOP_LEADER_METRICS,
            )
            lock = self._election.lock
            if watch_lease and isinstance(lock, LeaseLock):
                self._release_watch = ReleaseWatch(self.api_client, lock, self._elector)

        self.healthz = HealthChecks("healthz", 500)
        self.readyz = HealthChecks("readyz", 503)
        self.healthz.add("ping", lambda: None)
        self.readyz.add("ping", lambda: None)
        self.liveness = InformerLiveness(self._informers, backoff_bound=backoff_bound)
        self.healthz.add("informers", self.liveness)
        self.readyz.add("informers-synced", InformersSynced(self._informers))

        self._servers: list[EndpointServer] = []
        self._health_server: EndpointServer | None = None
        self._metrics_server: EndpointServer | None = None
        if health_address is not None:
            self._health_server = EndpointServer("manager-healthz", health_address, self._probe)
            self._servers.append(self._health_server)
        if metrics_address is not None and self._metrics is not None:
            self._metrics_server = EndpointServer(
                "manager-metrics", metrics_address, self._metrics.answer
            )
            self._servers.append(self._metrics_server)

        self._lock = threading.Condition()
        # Guarded by _lock:
        self._state = _NEW
        self._entries: list[_Entry] = []
        self._running: list[_Entry] = []  # non-leader runnables started
        self._leading_entries: list[_Entry] = []  # leader runnables started this term
        self._warmed: list[_Entry] = []  # leader runnables warmed up (warm standby)
        self._leadership_lost = False
        self._signal: int | None = None
        #: Set to make run() return (a signal, leadership lost, request_stop()).
        self._stop_requested = threading.Event()
        #: Set once the leader runnables run (for tests and the benchmark).
        self.leading = threading.Event()

    # ----------------------------------------------------------------- queries

    @property
    def metrics(self) -> ManagerMetrics | None:
        """The Prometheus providers (``None`` when metrics are off): pass
        ``metrics.controller`` / ``metrics.queue`` to controllers you build
        yourself (:meth:`controller` does it for you)."""
        return self._metrics

    @property
    def leader_elector(self) -> LeaderElector | None:
        """The elector, with leader election."""
        return self._elector

    @property
    def leadership_lost(self) -> bool:
        """Whether the manager stopped because leadership was lost."""
        with self._lock:
            return self._leadership_lost

    @property
    def stop_signal(self) -> int | None:
        """The signal that stopped :meth:`run`, if one did."""
        with self._lock:
            return self._signal

    def health_probe_address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` of the probes (``None``: off)."""
        return None if self._health_server is None else self._health_server.address

    def metrics_address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` of ``/metrics`` (``None``: off)."""
        return None if self._metrics_server is None else self._metrics_server.address

    def _informers(self) -> list[tuple[str, SharedIndexInformer]]:
        """Every informer of the factory; a multi-namespace informer as its
        per-namespace parts (each has its own reflector)."""
        out: list[tuple[str, SharedIndexInformer]] = []
        for r, informer in self.factory.informers().items():
            if isinstance(informer, MultiNamespaceInformer):
                out.extend((f"{r}[{ns}]", i) for ns, i in informer.informers.items())
            else:
                out.append((str(r), informer))
        return out

    def _probe(self, path: str, query: dict[str, list[str]]) -> Response:
        for checks in (self.healthz, self.readyz):
            prefix = f"/{checks.kind}"
            if path == prefix or path.startswith(prefix + "/"):
                return checks.answer(path, query)
        return 404, "text/plain; charset=utf-8", b"not found: try /healthz or /readyz\n"

    # ----------------------------------------------------------------- building

    def add_healthz_check(self, name: str, check: Check) -> None:
        """Add a liveness check (see :mod:`informers.toolkit.manager.health`)."""
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        """Add a readiness check."""
        self.readyz.add(name, check)

    def add(
        self,
        runnable: Runnable | Callable[[threading.Event], object] | Any,
        *,
        name: str | None = None,
        needs_leader: bool = True,
    ) -> Runnable:
        """Run ``runnable`` with the manager: anything with ``start()`` and
        ``stop(timeout)`` (a :class:`~informers.toolkit.runtime.Controller`), an
        object with a blocking ``run(stop_event)``, or a function
        ``fn(stop_event)`` (either run on its own thread; see
        :class:`FunctionRunnable`). ``needs_leader=False`` runs it on every
        replica, not only the leader. Started in the order added, stopped in
        reverse. Answers the runnable (the wrapper for a function).
        :class:`~informers.errors.InformerStateError` once started;
        :class:`TypeError` for anything else."""
        run = getattr(runnable, "run", None)
        if isinstance(runnable, Runnable):
            entry = _Entry(runnable, name or _name_of(runnable), needs_leader)
        elif callable(run) and not callable(runnable):
            label = name or _name_of(runnable)
            entry = _Entry(FunctionRunnable(run, label), label, needs_leader)
        elif callable(runnable):
            label = name or str(getattr(runnable, "__name__", "function"))
            entry = _Entry(FunctionRunnable(runnable, label), label, needs_leader)
        else:
            raise TypeError(
                f"{type(runnable).__name__} is not runnable: it needs start() and "
                "stop(timeout), or run(stop_event), or to be a function of a stop event"
            )
        with self._lock:
            if self._state != _NEW:
                raise InformerStateError(f"manager is {self._state}: add runnables before start")
            self._entries.append(entry)
        return entry.runnable

    def controller(
        self,
        name: str,
        reconcile: ReconcileFunc,
        sources: Sequence[Source],
        *,
        needs_leader: bool = True,
        **options: Any,
    ) -> Controller:
        """Make a :class:`~informers.toolkit.runtime.Controller` with the
        manager's metrics providers (when metrics are on) and :meth:`add` it.
        ``options`` are the controller's keyword arguments."""
        if self._metrics is not None:
            options.setdefault("metrics", self._metrics.controller)
            options.setdefault("queue_metrics", self._metrics.queue)
        controller = Controller(name, reconcile, sources, **options)
        self.add(controller, name=name, needs_leader=needs_leader)
        return controller

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start everything in order (module docs) and return once the
        runnables run (or, with leader election, the election runs).

        Blocks while the caches sync (up to ``cache_sync_timeout``). Raises
        :class:`~informers.errors.CacheSyncTimeoutError` when they do not,
        :class:`OSError` when an endpoint cannot bind, whatever a runnable's
        ``start`` raises -- in each case after stopping what was started --
        and :class:`~informers.errors.InformerStateError` when not new. A
        :meth:`stop` from another thread during the sync makes it return
        early."""
        with self._lock:
            if self._state != _NEW:
                raise InformerStateError(f"manager is {self._state}")
            self._state = _STARTING
        try:
            self._start()
        except BaseException:
            log.error("manager: start failed; stopping what was started")
            self.stop()
            raise

    def _start(self) -> None:
        for server in self._servers:
            server.start()
        if self._metrics is not None:
            install_informer_metrics(self.factory, self._metrics.registry)
        if self._shard_lease is not None:
            self._shard_lease.start()
        if not self._sync():
            return  # stopped while syncing
        if self._shard_lease is not None:
            while not self._shard_lease.wait_ready(1.0):
                if self._stop_requested.is_set() or self._stopping():
                    return
        with self._lock:
            if self._state != _STARTING:
                return
            others = [e for e in self._entries if not e.needs_leader or self._elector is None]
        self._start_group(others, self._running)
        if self._elector is not None and self._warm_standby:
            self._warm_up([e for e in self._entries if e.needs_leader])
        with self._lock:
            if self._state != _STARTING:
                return
            self._state = _RUNNING
            if self._elector is not None:
                # Under the lock: a concurrent stop() sees it started, and stops it.
                log.info("manager: caches synced; standing for leader election (warm standby)")
                if self._release_watch is not None:
                    self._release_watch.start()
                self._elector.start()
        if self._elector is None:
            self.leading.set()
        log.info("manager: started")

    def _stopping(self) -> bool:
        with self._lock:
            return self._state in (_STOPPING, _STOPPED)

    def _sync(self) -> bool:
        """Start the informers and wait for their caches, under the
        collector policy; False when stopped meanwhile."""
        started = time.monotonic()
        policy = collector_paused() if self._gc_policy else contextlib.nullcontext()
        with policy:
            informers = [i for _, i in self._informers()]
            try:
                self.factory.start()
                synced = wait_for_cache_sync(
                    *informers, timeout=self._sync_timeout, stop=self._stop_requested
                )
            except InformerStateError:
                if self._stopping():  # stop() shut the informers down meanwhile
                    return False
                raise
        took = time.monotonic() - started
        if self._gc_policy:
            log.info(
                "manager: %d cache(s) synced in %.2f s with the garbage collector paused; "
                "heap frozen after the sync (gc_policy=False turns this off)",
                len(informers),
                took,
            )
        else:
            log.info(
                "manager: %d cache(s) synced in %.2f s; garbage collector left alone "
                "(gc_policy=False)",
                len(informers),
                took,
            )
        return synced and not self._stopping()

    def _start_group(self, entries: list[_Entry], into: list[_Entry]) -> None:
        """Start ``entries`` in order, recording each in ``into`` (under the
        lock) before it starts, so a stop stops it."""
        for entry in entries:
            with self._lock:
                if self._state in (_STOPPING, _STOPPED):
                    return
                into.append(entry)
            log.info("manager: starting %s", entry.name)
            entry.runnable.start()

    def _warm_up(self, entries: list[_Entry]) -> None:
        """Warm up the leader runnables that can (a ``warm_up()`` method):
        their sources fill their queues before this replica leads."""
        for entry in entries:
            warm_up = getattr(entry.runnable, "warm_up", None)
            if not callable(warm_up):
                continue
            with self._lock:
                if self._state in (_STOPPING, _STOPPED):
                    return
                self._warmed.append(entry)
            warm_up()
            log.info("manager: %s warmed up (sources started; workers wait to lead)", entry.name)

    def _stop_group(self, entries: list[_Entry], deadline: float) -> None:
        for entry in reversed(entries):
            try:
                entry.runnable.stop(max(0.0, deadline - time.monotonic()))
            except Exception:
                log.exception("manager: stopping %s failed", entry.name)

    def _lead(self, leader_stop: threading.Event) -> None:
        """The elector's ``on_started_leading``: run the leader runnables
        until leadership ends."""
        entries = [e for e in self._entries if e.needs_leader]
        started: list[_Entry] = []
        with self._lock:
            self._leading_entries = started
        log.info("manager: leading; starting %d runnable(s)", len(entries))
        try:
            for entry in entries:
                if leader_stop.is_set():
                    break
                self._start_group([entry], started)
            self.leading.set()
            leader_stop.wait()
        except Exception:
            log.exception("manager: a runnable failed to start; giving up")
            self.request_stop()
        finally:
            stopping = self._stopping()
            assert self._election is not None
            budget = self._graceful if stopping else self._election.stop_margin
            self._stop_group(started, time.monotonic() + budget)
            self.leading.clear()
            if not stopping:
                log.error("manager: leadership lost; runnables stopped, stopping the manager")
                with self._lock:
                    self._leadership_lost = True
                self.request_stop()

    def request_stop(self) -> None:
        """Make :meth:`run` return (after its graceful stop). Never blocks;
        callable from any thread, a signal handler or a reconcile."""
        self._stop_requested.set()

    def stop(self) -> None:
        """Stop everything in reverse order within ``graceful_shutdown_timeout``
        (module docs) and join every thread the manager started. Idempotent:
        a second call waits for the first. Also stops a manager never
        started."""
        with self._lock:
            if self._state in (_STOPPING, _STOPPED):
                self._lock.wait_for(lambda: self._state == _STOPPED, self._graceful + 10.0)
                return
            was = self._state
            self._state = _STOPPING
        self._stop_requested.set()
        deadline = time.monotonic() + self._graceful
        log.info("manager: stopping (graceful shutdown timeout %g s)", self._graceful)
        try:
            if was != _NEW:
                self._shutdown(deadline)
        finally:
            with self._lock:
                self._state = _STOPPED
                self._lock.notify_all()
            log.info("manager: stopped")

    def _shutdown(self, deadline: float) -> None:
        def remaining() -> float:
            return max(0.0, deadline - time.monotonic())

        if self._elector is not None:
            self._elector.stop(remaining() + 1.0)
        if self._release_watch is not None:
            self._release_watch.stop()
        with self._lock:
            running = list(self._running)
            warmed = list(self._warmed)
        self._stop_group(warmed, deadline)  # warmed, never led (idempotent for the others)
        self._stop_group(running, deadline)
        self.factory.shutdown()
        if self._elector is not None and self._release_lease:
            self._elector.candidate.release(timeout=max(1.0, remaining()))
        if self._shard_lease is not None:
            self._shard_lease.stop(max(1.0, remaining()))
        for server in reversed(self._servers):
            server.stop()
        if self._owns_client:
            close = getattr(self.api_client, "close", None)
            if close is not None:
                close()

    def run(self, stop: threading.Event | None = None) -> None:
        """:meth:`start`, block until a stop is asked for, then :meth:`stop`.

        A stop is asked for by SIGTERM or SIGINT (handlers installed only
        when called in the main thread; the previous ones are restored on
        return; a second signal exits the process at once with status 1),
        by ``stop`` being set, by :meth:`request_stop`, or by leadership
        being lost. Raises what :meth:`start` raises."""
        with self._signals():
            try:
                self.start()
                while not self._stop_requested.wait(0.25 if stop is not None else None):
                    if stop is not None and stop.is_set():
                        break
            finally:
                self.stop()

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous: dict[signal.Signals, Any] = {}

        def handle(signum: int, frame: FrameType | None) -> None:
            with self._lock:
                first = self._signal is None
                if first:
                    self._signal = signum
            if not first:
                log.error("manager: second signal (%s); exiting at once", signum)
                os._exit(1)
            log.info("manager: signal %s; stopping gracefully (again to exit at once)", signum)
            self._stop_requested.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, handle)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
