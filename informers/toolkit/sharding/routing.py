"""Client-side routing: every replica watches every object and keeps the
requests whose ring key falls on its own shard.

* :func:`shard_filter` is an :class:`~informers.toolkit.runtime.InformerSource`
  predicate (a plain callable on objects) that passes an object when the
  current ring of the :class:`~informers.toolkit.sharding.RingWatcher` maps its
  :func:`~informers.toolkit.sharding.ring_key` to this shard (and, given a
  :class:`~informers.toolkit.sharding.ShardLease`, while that lease is held).
* :class:`RingChangeSource` is a :class:`~informers.toolkit.runtime.Source` that,
  each time the ring changes, enqueues the objects of an informer's cache
  that this shard owns now and did not own before: a shard that takes over
  keys reconciles them without waiting for their next event. Given the
  shard's :class:`~informers.toolkit.sharding.ShardLease`, it enqueues nothing while
  the lease is not ready and, each time the lease is (re)acquired, every
  object this shard owns (events the filter dropped while the lease was not
  ready are not lost).

Safety when a replica falls behind: the filter owns nothing once the
replica's own renewal is ``renew_deadline`` old (by its clock, see
:meth:`~informers.toolkit.sharding.ShardLease.is_ready`), while other replicas take
its keys only a full lease duration after they saw that renewal, so a late
replica stops before anyone takes over (pass ``lease=`` to both).

This mode costs every replica the memory of the whole cache; the
label-based mode (:mod:`informers.toolkit.sharding.labels`) does not, and is the one
that never lets two shards work on one object at once (here, when a shard
*joins*, a replica that sees the new ring earlier than another may start on
a key the other is still finishing; keep reconciles idempotent, as always).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.errors import InformerStateError
from informers.toolkit._logcontext import context_logger
from informers.toolkit.runtime import Request, Sink
from informers.toolkit.runtime.mapping import request_for_object
from informers.toolkit.sharding.lease import ShardLease
from informers.toolkit.sharding.ring import HashRing, ring_key
from informers.toolkit.sharding.watcher import RingWatcher

__all__ = ["RingChangeSource", "ShardFilter", "shard_filter"]

log = context_logger(logging.getLogger(__name__))


class ShardFilter:
    """The predicate :func:`shard_filter` returns; also :meth:`owns_key`.
    Stateless apart from its arguments; thread-safe."""

    def __init__(
        self,
        watcher: RingWatcher,
        shard: str,
        group: str,
        kind: str,
        lease: ShardLease | None = None,
    ) -> None:
        self.watcher, self.shard, self.group, self.kind, self.lease = (
            watcher,
            shard,
            group,
            kind,
            lease,
        )

    def owns_key(self, key: str) -> bool:
        """Whether ring key ``key`` is this shard's in the current ring."""
        if self.lease is not None and not self.lease.is_ready():
            return False
        return self.watcher.ring().shard_for(key) == self.shard

    def __call__(self, obj: Any) -> bool:
        """Whether ``obj`` (of ``group``/``kind``) is this shard's now; an
        object without a name is nobody's."""
        try:
            key = ring_key(obj, self.group, self.kind)
        except ValueError:
            return False
        return self.owns_key(key)


def shard_filter(
    ring_watcher: RingWatcher,
    shard_id: str,
    group: str,
    kind: str,
    *,
    lease: ShardLease | None = None,
) -> ShardFilter:
    """A predicate keeping the objects of ``group``/``kind`` whose ring key
    maps to ``shard_id`` in ``ring_watcher``'s current ring (see the module
    docstring). Pass it in an :class:`~informers.toolkit.runtime.InformerSource`'s
    ``predicates``; check it again at the start of a reconcile to drop a
    request that was queued before the ring moved the key away."""
    return ShardFilter(ring_watcher, shard_id, group, kind, lease)


class RingChangeSource:
    """Enqueues, on each ring change, the objects of ``informer``'s cache
    that ``shard`` owns in the new ring but not in the old one (through
    ``map_func``, default the object's own request). With ``shard=None``
    it enqueues every object whose shard changed (what a sharder needs).
    With ``lease`` (this shard's), it enqueues nothing while the lease is
    not ready, and every object the shard owns each time the lease is
    (re)acquired (pushed on the lease's thread).

    No thread of its own: the ring watcher's thread pushes into the sink.
    It counts as synced at once. :meth:`stop` unregisters from the watcher
    and waits for a push in progress. Thread-safe; one lock.
    """

    def __init__(
        self,
        ring_watcher: RingWatcher,
        informer: SharedIndexInformer,
        shard: str | None,
        group: str,
        kind: str,
        *,
        map_func: Callable[[Any], list[Request]] | None = None,
        name: str | None = None,
        lease: ShardLease | None = None,
    ) -> None:
        if lease is not None and shard is None:
            raise ValueError("a lease belongs to one shard: pass shard with lease")
        self._watcher, self._informer, self._shard = ring_watcher, informer, shard
        self._lease = lease
        self._group, self._kind = group, kind
        self._map = map_func or request_for_object
        self._name = name or f"ring-change-{ring_watcher.name}-{shard or 'all'}"
        self._logger = context_logger(
            log.logger, source=self._name, ring=ring_watcher.name, shard=shard
        )
        self._cond = threading.Condition()
        self._sink: Sink | None = None  # guarded by _cond
        self._busy = 0  # guarded by _cond: pushes in progress
        self._started = False  # guarded by _cond
        self._stopped = False  # guarded by _cond

    @property
    def name(self) -> str:
        return self._name

    def start(self, sink: Sink) -> None:
        with self._cond:
            if self._started:
                raise InformerStateError(f"source {self._name} was started already")
            self._started, self._sink = True, sink
        self._watcher.add_callback(self._changed)
        if self._lease is not None:
            self._lease.add_ready_callback(self._acquired)

    def has_synced(self) -> bool:
        with self._cond:
            return self._started

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.has_synced()

    def wait_idle(self, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._busy == 0, timeout)

    def stop(self, timeout: float | None = None) -> None:
        self._watcher.remove_callback(self._changed)
        if self._lease is not None:
            self._lease.remove_ready_callback(self._acquired)
        with self._cond:
            self._stopped = True
            self._cond.wait_for(lambda: self._busy == 0, timeout)

    def _owner(self, ring: HashRing, obj: Any) -> str | None:
        try:
            return ring.shard_for(ring_key(obj, self._group, self._kind))
        except ValueError:
            return None

    def _push(self, old: HashRing | None, new: HashRing, what: str) -> None:
        """Enqueue the cached objects whose owner in ``new`` is this shard
        (any shard when ``shard`` is None) and differs from ``old`` (every
        one it owns when ``old`` is None)."""
        with self._cond:
            if self._stopped or self._sink is None:
                return
            sink = self._sink
            self._busy += 1
        try:
            moved = 0
            for obj in self._informer.get_store().list():
                now = self._owner(new, obj)
                before = None if old is None else self._owner(old, obj)
                if (old is None or now != before) and (self._shard is None or now == self._shard):
                    for request in self._map(obj):
                        sink.add(request)
                    moved += 1
            self._logger.debug("shard %s: %s, %d objects enqueued", self._shard, what, moved)
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    def _changed(self, old: HashRing, new: HashRing) -> None:
        if self._lease is not None and not self._lease.is_ready():
            return  # owns nothing now; the next acquisition enqueues all it owns
        self._push(old, new, "the ring changed")

    def _acquired(self) -> None:
        self._push(None, self._watcher.ring(), "its lease was acquired")
