"""Shard Leases: one ``coordination.k8s.io/v1`` Lease per replica, named
after its shard and labelled with its ring, and what an observer makes of it.

A replica proves it is alive by renewing its own Lease (:class:`ShardLease`,
which drives a :class:`~informers.toolkit.leaderelection.LeaderElector` on it, so the
renew loop, renew deadline and release are leader election's). Other replicas
never trust the timestamps written in a Lease (they come from another
machine's clock): like leader election they note, by their own clock, when
they first saw each record (:func:`~informers.toolkit.leaderelection.observe`) and
judge its age from that. :func:`lease_state` turns that age into a
:class:`ShardState`:

``READY``
    held by its shard (``holderIdentity`` is the Lease's name) and changed
    less than a lease duration ago: the shard is alive and owns its part of
    the ring.
``EXPIRED``
    held, unchanged for one to two lease durations: past its duration; the
    holder has stopped working (its renew deadline is shorter) but may come
    back and renew.
``UNCERTAIN``
    held, unchanged for two to three lease durations: expired, but not yet
    long enough to be sure the replica is gone for good.
``DEAD``
    released (empty holder, or held by anyone but the shard), or held and
    unchanged for three lease durations or more.
``ORPHANED``
    dead for longer than the grace period: the ring's observer
    (:class:`~informers.toolkit.sharding.RingWatcher`) deletes the Lease.

The lease duration judged by is the longer of the observer's and the one the
holder wrote (``leaseDurationSeconds``), as in leader election. Only
``READY`` shards are in the ring.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from informers.errors import InformerStateError, NotFoundError
from informers.rest.transport import Transport, as_transport
from informers.toolkit._logcontext import context_logger
from informers.toolkit.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockState,
    ObservedRecord,
)
from informers.util.clock import REAL_CLOCK, Clock

__all__ = [
    "DEFAULT_ORPHAN_GRACE",
    "RING_LABEL",
    "ShardLease",
    "ShardLeaseLock",
    "ShardState",
    "lease_state",
    "state_changes_at",
]

log = context_logger(logging.getLogger(__name__))

#: The label naming the ring a shard Lease belongs to.
RING_LABEL = "sharding.kube-informers.io/ring"

#: How long a Lease stays dead before the ring's observer deletes it (seconds).
DEFAULT_ORPHAN_GRACE = 60.0


class ShardState(enum.Enum):
    """What an observer makes of a shard Lease (see the module docstring)."""

    READY = "ready"
    EXPIRED = "expired"
    UNCERTAIN = "uncertain"
    DEAD = "dead"
    ORPHANED = "orphaned"


def _duration(observed: ObservedRecord, lease_duration: float) -> float:
    return max(lease_duration, float(observed.record.lease_duration_seconds))


def _dead_since(observed: ObservedRecord, shard: str, lease_duration: float) -> float:
    if observed.record.holder_identity != shard:
        return observed.observed_at
    return observed.observed_at + 3 * _duration(observed, lease_duration)


def lease_state(
    observed: ObservedRecord,
    shard: str,
    now: float,
    lease_duration: float,
    orphan_grace: float = DEFAULT_ORPHAN_GRACE,
) -> ShardState:
    """The state of shard ``shard``'s Lease, observed as ``observed``, at
    local time ``now`` (same clock as ``observed.observed_at``). Pure.

    Boundaries belong to the later state (at exactly one lease duration the
    Lease is ``EXPIRED``)."""
    duration = _duration(observed, lease_duration)
    if observed.record.holder_identity == shard:
        # thresholds computed exactly as state_changes_at computes them
        if now < observed.observed_at + duration:
            return ShardState.READY
        if now < observed.observed_at + 2 * duration:
            return ShardState.EXPIRED
        if now < observed.observed_at + 3 * duration:
            return ShardState.UNCERTAIN
    if now >= _dead_since(observed, shard, lease_duration) + orphan_grace:
        return ShardState.ORPHANED
    return ShardState.DEAD


def state_changes_at(
    observed: ObservedRecord,
    shard: str,
    now: float,
    lease_duration: float,
    orphan_grace: float = DEFAULT_ORPHAN_GRACE,
) -> float | None:
    """The local time after ``now`` at which :func:`lease_state` next
    changes if the record stays as it is, or ``None`` (orphaned is final)."""
    duration = _duration(observed, lease_duration)
    candidates = []
    if observed.record.holder_identity == shard:
        candidates = [observed.observed_at + k * duration for k in (1, 2, 3)]
    candidates.append(_dead_since(observed, shard, lease_duration) + orphan_grace)
    later = [t for t in candidates if t > now]
    return min(later) if later else None


class ShardLeaseLock:
    """A :class:`~informers.toolkit.leaderelection.ResourceLock` on the shard Lease
    ``namespace/name`` that carries the :data:`RING_LABEL` of ``ring``
    (set on create and kept on every update). Raw JSON through a
    :class:`~informers.rest.transport.Transport` (or a ``kubernetes`` API client).

    It also remembers when (on ``clock``) the last write that made the
    shard its Lease's holder was *sent* (:meth:`renewed_at`): the holder
    cannot have renewed later than that, and any observer saw the record
    only after it was written, so ``renewed_at() + renew_deadline`` is a
    moment before any observer can count the Lease as expired.

    Thread-safe: one lock guards the remembered object and time; requests
    run outside it.
    """

    def __init__(
        self,
        client: Any,
        namespace: str,
        name: str,
        ring: str,
        *,
        read_timeout: float = 10.0,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        if not namespace or not name or not ring:
            raise ValueError("a shard lease needs a namespace, a name and a ring")
        self._transport: Transport = as_transport(client)
        self._namespace, self._name, self._ring = namespace, name, ring
        self._read_timeout = float(read_timeout)
        self._collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._lock = threading.Lock()
        self._clock = clock
        #: The last object read or written (None before the first or after a
        #: 404); guarded by _lock; never mutated, only replaced.
        self._last: Mapping[str, Any] | None = None
        #: When the last successful write naming this shard the holder was
        #: sent (local clock), None before one; guarded by _lock; only grows.
        self._renewed_at: float | None = None

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def renewed_at(self) -> float | None:
        """The local time the last successful create or update that named
        this shard the holder was sent, or ``None`` before one."""
        with self._lock:
            return self._renewed_at

    def _wrote(self, record: LeaderElectionRecord, sent: float, obj: Any) -> LockState:
        state = self._remember(obj)
        if record.holder_identity == self._name:
            with self._lock:
                if self._renewed_at is None or sent > self._renewed_at:
                    self._renewed_at = sent
        return state

    def _timeout(self, timeout: float | None) -> float:
        return (
            self._read_timeout if timeout is None else max(0.001, min(timeout, self._read_timeout))
        )

    def _remember(self, obj: Any) -> LockState:
        record = LeaderElectionRecord.from_spec(obj.get("spec"))
        with self._lock:
            self._last = obj
        return LockState(record, obj)

    def get(self, *, timeout: float | None = None) -> LockState | None:
        try:
            obj = self._transport.request(
                "GET", f"{self._collection}/{self._name}", read_timeout=self._timeout(timeout)
            ).json()
        except NotFoundError:
            with self._lock:
                self._last = None
            return None
        return self._remember(obj)

    def create(self, record: LeaderElectionRecord, *, timeout: float | None = None) -> LockState:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self._name,
                "namespace": self._namespace,
                "labels": {RING_LABEL: self._ring},
            },
            "spec": record.to_spec(),
        }
        sent = self._clock.now()
        obj = self._transport.request(
            "POST", self._collection, body=body, read_timeout=self._timeout(timeout)
        ).json()
        return self._wrote(record, sent, obj)

    def update(
        self, record: LeaderElectionRecord, resource_version: str, *, timeout: float | None = None
    ) -> LockState:
        if not resource_version:
            raise ValueError("update needs the resourceVersion last read (never unconditional)")
        with self._lock:
            last = self._last
        base: dict[str, Any] = dict(last) if last is not None else {}
        meta = base.get("metadata")
        metadata: dict[str, Any] = dict(meta) if isinstance(meta, Mapping) else {}
        labels = metadata.get("labels")
        metadata["labels"] = {
            **(labels if isinstance(labels, Mapping) else {}),
            RING_LABEL: self._ring,
        }
        metadata.update(
            name=self._name, namespace=self._namespace, resourceVersion=resource_version
        )
        old_spec = base.get("spec")
        spec = dict(old_spec) if isinstance(old_spec, Mapping) else {}
        spec.update(record.to_spec())
        base.update(apiVersion="coordination.k8s.io/v1", kind="Lease", metadata=metadata, spec=spec)
        sent = self._clock.now()
        obj = self._transport.request(
            "PUT",
            f"{self._collection}/{self._name}",
            body=base,
            read_timeout=self._timeout(timeout),
        ).json()
        return self._wrote(record, sent, obj)


class ShardLease:
    """Replica ``shard``'s own Lease in ``namespace``, in ring ``ring``:
    acquired, renewed every ``retry_period`` and released on :meth:`stop`,
    by a :class:`~informers.toolkit.leaderelection.LeaderElector` (same durations
    and rules: ``lease_duration > renew_deadline > 1.2 * retry_period``).
    When a renewal does not succeed within ``renew_deadline`` the lease
    counts as lost (:meth:`is_ready` turns false, ``on_lost`` is called)
    and the replica tries to acquire it again.

    :meth:`is_ready` is judged by the clock, not only by the elector's
    threads: it is false from ``renew_deadline`` after the last successful
    renewal was sent (:meth:`ready_until`) even when the thread that would
    notice is starved of CPU. Observers drop the shard only a full lease
    duration after they saw that renewal (:func:`lease_state`), so a
    replica that acts only while :meth:`is_ready` stops owning its keys at
    least ``lease_duration - renew_deadline`` before another shard can take
    them, on clocks that run at the same rate.

    ``on_ready()`` / ``on_lost()``, and the callbacks added with
    :meth:`add_ready_callback`, are called on the lease's threads, outside
    any lock; exceptions are logged.

    :meth:`start` runs a thread named ``shard-lease-<ring>-<shard>``;
    :meth:`stop` ends it, releases the Lease (so observers see it dead at
    once) and joins every thread. Thread-safe.
    """

    def __init__(
        self,
        client: Any,
        namespace: str,
        ring: str,
        shard: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_ready: Callable[[], None] | None = None,
        on_lost: Callable[[], None] | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._shard, self._ring = shard, ring
        self._logger = context_logger(log.logger, ring=ring, shard=shard)
        self._lock_obj = ShardLeaseLock(client, namespace, shard, ring, clock=clock)
        self._config = LeaderElectionConfig(
            lock=self._lock_obj,
            identity=shard,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            release_on_cancel=True,
            name=f"{ring}/{shard}",
        )
        self._on_ready, self._on_lost = on_ready, on_lost
        self._clock = clock
        self._elector = LeaderElector(self._config, on_started_leading=self._held, clock=clock)
        self._ready = threading.Event()  # set while the lease is held
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None  # guarded by _lock
        self._stop = threading.Event()  # guarded by _lock (replaced by start)
        #: Called on every acquisition; guarded by _lock (copied before calling).
        self._ready_callbacks: list[Callable[[], None]] = []

    @property
    def shard(self) -> str:
        return self._shard

    @property
    def ring(self) -> str:
        return self._ring

    @property
    def config(self) -> LeaderElectionConfig:
        """The election settings the lease is renewed with."""
        return self._config

    def ready_until(self) -> float | None:
        """The local time until which this replica may act on its keys (the
        last successful renewal's send time plus ``renew_deadline``), or
        ``None`` while the Lease is not held."""
        renewed = self._lock_obj.renewed_at()
        if not self._ready.is_set() or renewed is None:
            return None
        return renewed + self._config.renew_deadline

    def is_ready(self) -> bool:
        """True while this replica holds its Lease and is within the renew
        deadline of its last successful renewal (by the clock)."""
        until = self.ready_until()
        return until is not None and self._clock.now() < until

    def add_ready_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` each time the Lease is (re)acquired, after
        ``on_ready`` (on the lease's thread; exceptions are logged)."""
        with self._lock:
            self._ready_callbacks.append(callback)

    def remove_ready_callback(self, callback: Callable[[], None]) -> None:
        """Stop calling ``callback`` (no error when it was not added)."""
        with self._lock:
            if callback in self._ready_callbacks:
                self._ready_callbacks.remove(callback)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until the Lease is held (True) or ``timeout`` passed."""
        return self._ready.wait(timeout)

    def _call(self, callback: Callable[[], None] | None, what: str) -> None:
        if callback is None:
            return
        try:
            callback()
        except Exception:
            self._logger.exception("shard %s/%s: %s callback failed", self._ring, self._shard, what)

    def _held(self, stop: threading.Event) -> None:
        self._ready.set()
        self._logger.info("shard %s/%s holds its lease", self._ring, self._shard)
        self._call(self._on_ready, "on_ready")
        with self._lock:
            callbacks = list(self._ready_callbacks)
        for callback in callbacks:
            self._call(callback, "ready callback")
        stop.wait()
        self._ready.clear()
        self._logger.info("shard %s/%s no longer holds its lease", self._ring, self._shard)
        self._call(self._on_lost, "on_lost")

    def _main(self, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                self._elector.run(stop)
        except Exception:
            self._logger.exception("shard lease %s/%s failed", self._ring, self._shard)

    def start(self) -> None:
        """Start acquiring and renewing (does not block; see :meth:`wait_ready`)."""
        with self._lock:
            if self._thread is not None:
                raise InformerStateError(
                    f"shard lease {self._ring}/{self._shard} was started already"
                )
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=self._main,
                args=(self._stop,),
                name=f"shard-lease-{self._ring}-{self._shard}",
                daemon=True,
            )
            thread = self._thread
        thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop renewing, release the Lease and join the threads (up to
        ``timeout`` seconds); True when they ended. Idempotent."""
        with self._lock:
            thread, stop = self._thread, self._stop
        if thread is None:
            return True
        stop.set()
        thread.join(timeout)
        return not thread.is_alive()
