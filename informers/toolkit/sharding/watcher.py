"""The ring as every replica sees it: :class:`RingWatcher`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from informers.cache.informer import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import InformerStateError, NotFoundError
from informers.rest.listwatch import HTTPListerWatcher
from informers.rest.transport import as_transport
from informers.toolkit._logcontext import context_logger
from informers.toolkit.leaderelection import (
    InvalidLeaseRecordError,
    LeaderElectionRecord,
    ObservedRecord,
    observe,
)
from informers.toolkit.sharding.lease import (
    DEFAULT_ORPHAN_GRACE,
    RING_LABEL,
    ShardState,
    lease_state,
    state_changes_at,
)
from informers.toolkit.sharding.metrics import NOOP_SHARDING_METRICS, ShardingMetrics
from informers.toolkit.sharding.ring import DEFAULT_VIRTUAL_NODES, HashRing
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.objects import DeletedFinalStateUnknown
from informers.wire.resources import LEASES

__all__ = ["RingCallback", "RingWatcher"]

log = context_logger(logging.getLogger(__name__))

#: ``callback(old_ring, new_ring)``, called on the watcher's thread, in order.
RingCallback = Callable[[HashRing, HashRing], None]


class RingWatcher:
    """An informer on the shard Leases of ring ``ring`` in ``namespace``
    (label :data:`~informers.toolkit.sharding.RING_LABEL`), the state of each
    (:func:`~informers.toolkit.sharding.lease_state`, judged by this watcher's
    ``clock`` from when it first saw each record) and the
    :class:`~informers.toolkit.sharding.HashRing` of the ``READY`` ones.

    :meth:`ring` is the current ring (immutable; any thread). Callbacks
    added with :meth:`add_callback` get ``(old, new)`` on the watcher's
    thread (``ring-watcher-<ring>``) each time the ring changes, one at a
    time and in order, never under a lock. The thread also wakes when a
    Lease's state is due to change without any event (expiry by age), and
    deletes Leases that are ``ORPHANED`` (dead for ``orphan_grace``).

    A shard leaves the ring by age alone (its Lease held but unchanged for
    a lease duration) only after a fresh read of its Lease confirms it was
    not renewed: the watch may lag behind the server (a busy process, a
    stalled stream), and a lagging watch would otherwise make a live shard
    look expired and hand its keys to this replica while it still works on
    them. Leader election reads the Lease before taking over for the same
    reason. When the read fails the shard stays in the ring and the read is
    retried (``confirm_retry`` seconds later): this replica cannot reach
    the server then, and cannot renew its own Lease either.

    :meth:`start` starts the informer and the thread and returns at once;
    :meth:`wait_synced` waits until the first ring was computed from the
    initial list; :meth:`stop` stops and joins both.
    """

    def __init__(
        self,
        client: Any,
        namespace: str,
        ring: str,
        *,
        lease_duration: float = 15.0,
        orphan_grace: float = DEFAULT_ORPHAN_GRACE,
        virtual_nodes: int = DEFAULT_VIRTUAL_NODES,
        clock: Clock = REAL_CLOCK,
        metrics: ShardingMetrics = NOOP_SHARDING_METRICS,
        confirm_retry: float = 1.0,
    ) -> None:
        self._name = ring
        self._logger = context_logger(log.logger, ring=ring)
        self._confirm_retry = float(confirm_retry)
        self._namespace = namespace
        self._lease_duration = float(lease_duration)
        self._orphan_grace = float(orphan_grace)
        self._virtual_nodes = virtual_nodes
        self._clock = clock
        self._metrics = metrics
        self._transport = as_transport(client)
        self._informer = SharedIndexInformer(
            HTTPListerWatcher(client, LEASES, namespace, label_selector=f"{RING_LABEL}={ring}"),
            name=f"ring-{ring}-leases",
        )
        self._informer.add_event_handler(
            ResourceEventHandlerFuncs(self._saw, lambda _old, new: self._saw(new), self._gone)
        )
        self._lock = threading.Lock()
        #: Lease name -> observation; guarded by _lock.
        self._observed: dict[str, ObservedRecord] = {}
        #: The ring last published to callbacks; guarded by _lock.
        self._ring = HashRing(virtual_nodes=virtual_nodes)
        #: Callbacks; guarded by _lock (copied before calling).
        self._callbacks: list[RingCallback] = []
        self._wake = threading.Event()
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None  # guarded by _lock

    @property
    def name(self) -> str:
        """The ring's name."""
        return self._name

    @property
    def informer(self) -> SharedIndexInformer:
        """The informer on the ring's Leases."""
        return self._informer

    def ring(self) -> HashRing:
        """The ring of ``READY`` shards as last computed."""
        with self._lock:
            return self._ring

    def states(self) -> dict[str, ShardState]:
        """Every known shard Lease and its state now."""
        now = self._clock.now()
        with self._lock:
            observed = dict(self._observed)
        return {
            name: lease_state(o, name, now, self._lease_duration, self._orphan_grace)
            for name, o in observed.items()
        }

    def add_callback(self, callback: RingCallback) -> None:
        """Call ``callback(old, new)`` on every later ring change."""
        with self._lock:
            self._callbacks.append(callback)

    def remove_callback(self, callback: RingCallback) -> None:
        """Stop calling ``callback`` (no error when it was not added)."""
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    # ------------------------------------------------------------- events

    def _saw(self, obj: Any) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        try:
            record = LeaderElectionRecord.from_spec(obj.get("spec"))
        except InvalidLeaseRecordError as exc:
            self._logger.warning(
                "ring %s: lease %s is not a shard lease: %s", self._name, name, exc
            )
            return
        now = self._clock.now()
        with self._lock:
            self._observed[name] = observe(
                self._observed.get(name), record, str(meta.get("resourceVersion") or ""), now
            )
        self._wake.set()

    def _gone(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        name = str((obj.get("metadata") or {}).get("name") or "")
        with self._lock:
            self._observed.pop(name, None)
        self._wake.set()

    # -------------------------------------------------------------- thread

    def _compute(self) -> tuple[HashRing, list[str], float | None]:
        """The ready ring, the orphans and the next time a state changes."""
        now = self._clock.now()
        with self._lock:
            observed = dict(self._observed)
        ready, orphans, due = [], [], None
        for name, o in observed.items():
            state = lease_state(o, name, now, self._lease_duration, self._orphan_grace)
            if state is ShardState.READY:
                ready.append(name)
            elif state is ShardState.ORPHANED:
                orphans.append(name)
            at = state_changes_at(o, name, now, self._lease_duration, self._orphan_grace)
            if at is not None and (due is None or at < due):
                due = at
        return HashRing(ready, virtual_nodes=self._virtual_nodes), orphans, due

    def _path(self, name: str) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self._namespace}/leases/{name}"

    def _expiring(self, old: HashRing, new: HashRing) -> list[str]:
        """The shards of ``old`` missing from ``new`` only by age: their
        observed Lease is still held by them (not released, not deleted)."""
        with self._lock:
            observed = dict(self._observed)
        return [
            name
            for name in old.shards
            if name not in new
            and name in observed
            and observed[name].record.holder_identity == name
        ]

    def _confirm(self, names: list[str]) -> list[str]:
        """Read each Lease in ``names`` fresh and observe it (a renewal the
        watch has not delivered yet makes it ready again); the names whose
        read failed."""
        failed = []
        for name in names:
            try:
                obj = self._transport.request("GET", self._path(name), read_timeout=10.0).json()
            except NotFoundError:
                with self._lock:
                    self._observed.pop(name, None)
                continue
            except Exception as exc:  # noqa: BLE001 - logged; the shard stays, retried
                self._logger.warning(
                    "ring %s: cannot confirm that shard %s expired (%s); kept in the ring",
                    self._name,
                    name,
                    exc,
                )
                failed.append(name)
                continue
            self._saw(obj)
        return failed

    def _delete_orphan(self, name: str) -> None:
        try:
            self._transport.request("DELETE", self._path(name), read_timeout=10.0)
            self._logger.info("ring %s: deleted orphaned shard lease %s", self._name, name)
        except NotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001 - logged; retried on the next wake
            self._logger.warning(
                "ring %s: deleting orphaned lease %s failed: %s", self._name, name, exc
            )

    def _main(self) -> None:
        try:
            self._loop()
        except Exception:
            self._logger.exception("ring watcher %s failed", self._name)

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self._synced.is_set() and not self._informer.has_synced():
                self._clock.wait(self._wake, 0.05)
                self._wake.clear()
                continue
            self._wake.clear()
            ring, orphans, due = self._compute()
            expiring = self._expiring(self.ring(), ring)
            if expiring:
                kept = self._confirm(expiring)
                ring, orphans, due = self._compute()
                for name in kept:
                    ring = ring.with_shard(name)
                if kept:
                    retry = self._clock.now() + self._confirm_retry
                    due = retry if due is None else min(due, retry)
            for name in orphans:
                self._delete_orphan(name)
            with self._lock:
                old, self._ring = self._ring, ring
                callbacks = list(self._callbacks) if old != ring else []
            if old != ring:
                self._logger.info("ring %s: shards %s", self._name, list(ring.shards))
                self._metrics.ring_changed(self._name, len(ring))
            for callback in callbacks:
                try:
                    callback(old, ring)
                except Exception:
                    self._logger.exception("ring %s: a ring callback failed", self._name)
            self._synced.set()
            timeout = None if due is None else max(0.0, due - self._clock.now()) + 0.001
            self._clock.wait(self._wake, timeout if timeout is not None else 3600.0)
            if self._stop.is_set():
                break

    def start(self) -> None:
        """Start the informer and the watcher thread (does not block)."""
        with self._lock:
            if self._thread is not None:
                raise InformerStateError(f"ring watcher {self._name} was started already")
            self._thread = threading.Thread(
                target=self._main, name=f"ring-watcher-{self._name}", daemon=True
            )
            thread = self._thread
        self._informer.start()
        thread.start()

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until the first ring was computed (True) or ``timeout``."""
        return self._synced.wait(timeout)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread and the informer and join them."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self._informer.stop(timeout)
