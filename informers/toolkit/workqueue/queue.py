"""The work queues: :class:`Queue`, :class:`DelayingQueue`, :class:`RateLimitingQueue`.

A port of client-go's ``util/workqueue`` queues to threads. Controllers put
*keys* (``"namespace/name"`` strings, or any hashable item) in and run worker
threads that take them out::

    while True:
        key, shutdown = queue.get()
        if shutdown:
            return
        try:
            reconcile(key)
            queue.forget(key)              # RateLimitingQueue: success resets its backoff
        except Exception:
            queue.add_rate_limited(key)    # try again later
        finally:
            queue.done(key)

What the queue guarantees (``Queue``):

* **Fair order, deduplicated.** Items are handed out first in, first out. An
  item waiting to be handed out is queued once however often it is added
  (the *dirty* set).
* **One worker per item.** An item handed out by :meth:`Queue.get` is not
  handed out again until :meth:`Queue.done` is called for it (the
  *processing* set), however many workers there are.
* **Nothing added is lost.** An item added while it is being processed is
  remembered and queued again when ``done`` is called.
* **Shutdown.** After :meth:`Queue.shutdown` adds are dropped; ``get`` still
  hands out what is queued (and what ``done`` re-queues), then answers
  ``(None, True)``. :meth:`Queue.shutdown_with_drain` also waits until every
  queued item was handed out and every handed-out item is done.

``DelayingQueue`` adds :meth:`~DelayingQueue.add_after` (a heap of ready times
with at most one clock timer for the earliest); ``RateLimitingQueue`` adds
:meth:`~RateLimitingQueue.add_rate_limited`, ``forget`` and
``num_requeues`` over a :class:`~informers.toolkit.workqueue.RateLimiter`.

Thread-safety: every method may be called from any thread. Each queue has one
lock (with one condition on it); it is never held while calling the clock,
a timer, the rate limiter or a metric. ``get`` and ``shutdown_with_drain``
block; nothing else does (``shutdown`` may wait briefly for a running timer
callback to finish).
"""

from __future__ import annotations

import functools
import heapq
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from informers.toolkit._logcontext import context_logger
from informers.toolkit.workqueue.metrics import MetricsProvider, NoopMetricsProvider, QueueMetrics
from informers.toolkit.workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter
from informers.util.clock import REAL_CLOCK, Clock, RealClock, TimerHandle

__all__ = ["DelayingQueue", "HandOutOrder", "Queue", "RateLimitingQueue"]

logger = context_logger(logging.getLogger(__name__))

T = TypeVar("T", bound=Hashable)

_monotonic = time.monotonic


class HandOutOrder(Protocol[T]):
    """The order a :class:`Queue` hands its waiting items out in (a
    :class:`collections.deque` for first in, first out). The queue calls it
    with its lock held only: ``append`` an item that became waiting,
    ``popleft`` the next one (only when ``len`` is not 0)."""

    def append(self, item: T, /) -> None: ...

    def popleft(self) -> T: ...

    def __len__(self) -> int: ...


class Queue(Generic[T]):
    """A deduplicating FIFO work queue that hands each item to one worker at a
    time (client-go's ``workqueue.Type``).

    ``name`` labels the metrics (and names timer threads); ``clock`` times the
    metrics and the timeouts of :meth:`get` and :meth:`shutdown_with_drain`;
    ``metrics`` is a :class:`~informers.toolkit.workqueue.MetricsProvider` (metrics are
    reported for named queues only). Items must be hashable; ``None`` is not
    a useful item (a timed-out :meth:`get` answers ``None``).
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics: MetricsProvider | None = None,
    ) -> None:
        self._name = name
        self._logger = context_logger(logger.logger, queue=name or None)
        self._clock = clock
        # Timeouts of the real clock are waited on the condition directly; any
        # other clock wakes the waiter through a timer of its own.
        self._real_time = isinstance(clock, RealClock)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # Invariants (under _lock): every item of _queue is in _dirty and not in
        # _processing, and is in _queue once; an item in _dirty is in _queue or
        # in _processing (dirty while processing: queued again at done()).
        self._queue: HandOutOrder[T] = deque()  # guarded by _lock; the hand-out order
        self._dirty: set[T] = set()  # guarded by _lock; items that need processing
        self._processing: set[T] = set()  # guarded by _lock; handed out, not done yet
        self._getters = 0  # guarded by _lock; threads waiting in get()
        self._drainers = 0  # guarded by _lock; threads waiting in shutdown_with_drain()
        self._watchers = 0  # guarded by _lock; threads in wait_for_waiters()
        self._watch_cond = threading.Condition(self._lock)  # wakes wait_for_waiters()
        self._shutting_down = False  # guarded by _lock; adds are dropped once set
        self._draining = False  # guarded by _lock; a shutdown_with_drain() waits
        # Metrics state, kept only when metrics are on (both guarded by _lock):
        self._add_times: dict[T, float] = {}  # item -> when it became dirty
        self._start_times: dict[T, float] = {}  # item -> when get() handed it out
        self._metrics: QueueMetrics | None = None  # immutable after __init__
        if metrics is not None and not isinstance(metrics, NoopMetricsProvider):
            if name:
                self._metrics = QueueMetrics.create(metrics, name)
                self._register_gauges(self._metrics)
            else:
                self._logger.warning(
                    "workqueue: metrics are reported for named queues only; ignored"
                )

    # ------------------------------------------------------------------ info

    @property
    def name(self) -> str:
        """The queue's name (``""`` if unnamed)."""
        return self._name

    @property
    def clock(self) -> Clock:
        """The clock the queue's timing comes from."""
        return self._clock

    def __len__(self) -> int:
        """Items queued now, waiting to be handed out (not those in progress,
        nor delayed ones). For information only: it may change at once."""
        with self._lock:
            return len(self._queue)

    def waiters(self) -> int:
        """Threads blocked in :meth:`get` or :meth:`shutdown_with_drain` now."""
        with self._lock:
            return self._getters + self._drainers

    def wait_for_waiters(self, count: int = 1, timeout: float | None = 5.0) -> bool:
        """Block until at least ``count`` threads are blocked in :meth:`get` or
        :meth:`shutdown_with_drain` (a deterministic idle point for tests: the
        workers are waiting for work). ``timeout`` is in real seconds, as
        :meth:`~informers.testing.fake.FakeClock.wait_for_waiters`'. Returns
        whether they are."""
        with self._lock:
            self._watchers += 1
            try:
                return self._watch_cond.wait_for(
                    lambda: self._getters + self._drainers >= count, timeout
                )
            finally:
                self._watchers -= 1

    def _waiting_locked(self) -> None:
        """A thread is about to block in get() or a drain: tell the watchers."""
        if self._watchers:
            self._watch_cond.notify_all()

    def shutting_down(self) -> bool:
        """Whether :meth:`shutdown` (or :meth:`shutdown_with_drain`) was called."""
        with self._lock:
            return self._shutting_down

    # ------------------------------------------------------------------ add / get / done

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing. Does nothing if it is queued
        already or the queue is shutting down; if ``item`` is being processed,
        it is queued when :meth:`done` is called for it. Never blocks."""
        metrics = self._metrics
        if metrics is None:
            with self._lock:
                if self._shutting_down or item in self._dirty:
                    return
                self._dirty.add(item)
                if item in self._processing:
                    return
                self._queue.append(item)
                if self._getters:
                    self._cond.notify()
            return
        now = self._clock.now()
        with self._lock:
            added = self._add_locked(item, now)
        if added:
            metrics.adds.inc()

    def _add_locked(self, item: T, now: float | None) -> bool:
        """``add`` with the lock held; ``now`` is given when metrics are on.
        Returns whether ``item`` became dirty (was not already)."""
        if self._shutting_down or item in self._dirty:
            return False
        self._dirty.add(item)
        if now is not None and item not in self._add_times:
            self._add_times[item] = now
        if item in self._processing:
            return True
        self._queue.append(item)
        if self._getters:
            self._cond.notify()
        return True

    def get(self, timeout: float | None = None) -> tuple[T | None, bool]:
        """Take the next item: ``(item, False)``. Blocks until one is queued.

        Once the queue is shutting down and nothing is queued, answers
        ``(None, True)``: the worker should return. With a ``timeout``
        (seconds of the queue's clock) and nothing queued by then, answers
        ``(None, False)``. The caller must call :meth:`done` with the item
        when it has finished with it.
        """
        if timeout is not None and not self._real_time:
            return self._get_on_clock(timeout)
        with self._lock:
            if not self._queue:
                if self._shutting_down:
                    return None, True
                if timeout is None:
                    self._getters += 1
                    self._waiting_locked()
                    try:
                        while not self._queue and not self._shutting_down:
                            self._cond.wait()
                    finally:
                        self._getters -= 1
                elif timeout > 0.0:
                    deadline = _monotonic() + timeout
                    self._getters += 1
                    self._waiting_locked()
                    try:
                        while not self._queue and not self._shutting_down:
                            remaining = deadline - _monotonic()
                            if remaining <= 0.0:
                                break
                            self._cond.wait(remaining)
                    finally:
                        self._getters -= 1
                if not self._queue:
                    return None, self._shutting_down
            item = self._queue.popleft()
            self._processing.add(item)
            self._dirty.discard(item)
            if self._metrics is None:
                return item, False
            added_at = self._add_times.pop(item, None)
        self._record_get(item, added_at)
        return item, False

    def _get_on_clock(self, timeout: float) -> tuple[T | None, bool]:
        """``get`` with a timeout measured by a clock that is not the real one:
        a timer of that clock wakes the waiter (made and cancelled outside the
        lock)."""
        expired = [timeout <= 0.0]
        handle = None
        if not expired[0]:
            with self._lock:
                if self._queue or self._shutting_down:
                    expired[0] = True  # no need to wait: answer at once below
            if not expired[0]:
                handle = self._clock.call_later(
                    timeout, functools.partial(self._expire, expired), self._timer_name("get")
                )
        try:
            with self._lock:
                if not self._queue and not self._shutting_down and not expired[0]:
                    self._getters += 1
                    self._waiting_locked()
                    try:
                        while not self._queue and not self._shutting_down and not expired[0]:
                            self._cond.wait()
                    finally:
                        self._getters -= 1
                if not self._queue:
                    return None, self._shutting_down
                item = self._queue.popleft()
                self._processing.add(item)
                self._dirty.discard(item)
                added_at = None if self._metrics is None else self._add_times.pop(item, None)
        finally:
            if handle is not None:
                handle.cancel()
        if self._metrics is not None:
            self._record_get(item, added_at)
        return item, False

    def _expire(self, flag: list[bool]) -> None:
        """Timer callback: a clock-timed wait is over."""
        with self._lock:
            flag[0] = True
            self._cond.notify_all()

    def _record_get(self, item: T, added_at: float | None) -> None:
        """Metrics of a ``get`` (metrics on), outside the lock: the time the
        item waited, and when its processing started."""
        metrics = self._metrics
        assert metrics is not None
        now = self._clock.now()
        if added_at is not None:
            metrics.latency.observe(max(0.0, now - added_at))
        with self._lock:
            if item in self._processing:
                self._start_times[item] = now

    def done(self, item: T) -> None:
        """Mark ``item`` as processed. If it was added again meanwhile it is
        queued again now. An item that is not being processed is ignored.
        Never blocks."""
        metrics = self._metrics
        now = None if metrics is None else self._clock.now()
        with self._lock:
            try:
                self._processing.remove(item)
            except KeyError:
                return
            if item in self._dirty:
                self._queue.append(item)
                if self._getters:
                    self._cond.notify()
            elif self._draining and not self._processing and not self._queue:
                self._cond.notify_all()
            if metrics is None:
                return
            started = self._start_times.pop(item, None)
        if started is not None and now is not None:
            metrics.work_duration.observe(max(0.0, now - started))

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop taking items: adds are dropped from now on, and ``get`` answers
        ``(None, True)`` once nothing is queued. Cancels a waiting
        :meth:`shutdown_with_drain`. Idempotent."""
        self._begin_shutdown(drain=False)

    def shutdown_with_drain(self, timeout: float | None = None) -> bool:
        """Shut down (as :meth:`shutdown`) and wait until the queue is drained:
        nothing queued and nothing being processed (workers must keep calling
        ``get`` and ``done``). Blocks up to ``timeout`` seconds of the queue's
        clock (``None``: no limit). A :meth:`shutdown` from another thread ends
        the wait early. Returns ``True`` if the queue is drained.

        Stricter than client-go's ``ShutDownWithDrain``, which waits for the
        items in progress only: here items still queued are waited for too.
        """
        self._begin_shutdown(drain=True)
        drained = self._drained_or_cancelled
        if timeout is None:
            with self._lock:
                self._drainers += 1
                self._waiting_locked()
                try:
                    while not drained():
                        self._cond.wait()
                finally:
                    self._drainers -= 1
                return not self._queue and not self._processing
        if not self._real_time:
            expired = [timeout <= 0.0]
            handle = None
            if not expired[0]:
                handle = self._clock.call_later(
                    timeout, functools.partial(self._expire, expired), self._timer_name("drain")
                )
            try:
                with self._lock:
                    self._drainers += 1
                    self._waiting_locked()
                    try:
                        while not drained() and not expired[0]:
                            self._cond.wait()
                    finally:
                        self._drainers -= 1
                    return not self._queue and not self._processing
            finally:
                if handle is not None:
                    handle.cancel()
        deadline = _monotonic() + timeout
        with self._lock:
            self._drainers += 1
            self._waiting_locked()
            try:
                while not drained():
                    remaining = deadline - _monotonic()
                    if remaining <= 0.0:
                        break
                    self._cond.wait(remaining)
            finally:
                self._drainers -= 1
            return not self._queue and not self._processing

    def _drained_or_cancelled(self) -> bool:
        """With the lock held: a drain wait can end."""
        return not self._draining or (not self._queue and not self._processing)

    def _begin_shutdown(self, *, drain: bool) -> None:
        with self._lock:
            first = not self._shutting_down
            self._shutting_down = True
            self._draining = drain
            self._cond.notify_all()
            handle = self._stop_timers_locked()
        if handle is not None:
            handle.cancel()
        if first:
            self._logger.info(
                "workqueue %s: shutting down%s", self._name or "-", " (drain)" * drain
            )

    def _stop_timers_locked(self) -> TimerHandle | None:
        """With the lock held, at shutdown: forget delayed work; answers the
        timer to cancel (outside the lock)."""
        return None

    # ------------------------------------------------------------------ helpers

    def _timer_name(self, what: str) -> str:
        return f"workqueue-{self._name}-{what}" if self._name else f"workqueue-{what}"

    def _register_gauges(self, metrics: QueueMetrics) -> None:
        ref = weakref.ref(self)

        def depth() -> float:
            queue = ref()
            return 0.0 if queue is None else queue._depth()

        def unfinished() -> float:
            queue = ref()
            return 0.0 if queue is None else queue._unfinished_work()[0]

        def longest() -> float:
            queue = ref()
            return 0.0 if queue is None else queue._unfinished_work()[1]

        metrics.depth.set_function(depth)
        metrics.unfinished_work_seconds.set_function(unfinished)
        metrics.longest_running_processor_seconds.set_function(longest)

    def _depth(self) -> float:
        """Items waiting to be handed out, including those that will be queued
        again at ``done`` (client-go's depth gauge counts exactly the dirty set)."""
        with self._lock:
            return float(len(self._dirty))

    def _unfinished_work(self) -> tuple[float, float]:
        """(total, oldest) seconds of the processing in progress."""
        now = self._clock.now()
        with self._lock:
            ages = [now - started for started in self._start_times.values()]
        if not ages:
            return 0.0, 0.0
        return max(0.0, sum(ages)), max(0.0, *ages)


class DelayingQueue(Queue[T]):
    """A :class:`Queue` that can also add an item later (client-go's
    ``DelayingInterface``).

    Delayed items wait in a heap keyed by their ready time; **one** clock
    timer at most is pending, for the earliest ready time, and re-armed when
    an earlier item arrives or when it fires. An item delayed twice keeps the
    earlier ready time. Delayed items are not counted by ``len()`` (see
    :meth:`num_delayed`) and are dropped at shutdown, when nothing more is
    added.
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics=metrics)
        # Invariant (under _lock): _waiting maps each delayed item to its one
        # live heap entry; other heap entries are stale (superseded by an earlier
        # ready time) and counted in _stale. A live entry's item is added when
        # the clock reaches its ready time.
        self._heap: list[tuple[float, int, T]] = []  # guarded by _lock; (ready, seq, item)
        self._waiting: dict[T, tuple[float, int, T]] = {}  # guarded by _lock; item -> entry
        self._stale = 0  # guarded by _lock
        self._seq = 0  # guarded by _lock; tie-breaker: equal ready times keep add order
        # The one timer: _timer_at is when the armed timer fires (None: none
        # armed); _timer_gen grows at every arm, fire and shutdown, so a callback
        # or an arming that is no longer current knows it (guarded by _lock).
        self._timer: TimerHandle | None = None
        self._timer_at: float | None = None
        self._timer_gen = 0

    def num_delayed(self) -> int:
        """Items waiting for their delay to pass."""
        with self._lock:
            return len(self._waiting)

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds of the queue's clock have passed
        (``delay <= 0``: a plain :meth:`add`). If ``item`` is delayed already,
        the earlier ready time wins. Dropped when shutting down. Counts a retry
        in the metrics when ``delay > 0``. Never blocks."""
        self._add_after(item, delay, count_retry=delay > 0.0)

    def _add_after(self, item: T, delay: float, *, count_retry: bool) -> None:
        metrics = self._metrics
        now = self._clock.now()
        arm: tuple[int, TimerHandle | None, float] | None = None
        with self._lock:
            if self._shutting_down:
                return
            if delay <= 0.0:
                added = self._add_locked(item, None if metrics is None else now)
            else:
                added = False
                ready = now + delay
                if self._push_locked(item, ready):
                    arm = self._plan_timer_locked(ready)
        if arm is not None:
            self._arm(*arm, now)
        if metrics is not None:
            if count_retry:
                metrics.retries.inc()
            if added:
                metrics.adds.inc()

    def _push_locked(self, item: T, ready: float) -> bool:
        """Delay ``item`` until ``ready``, unless it is delayed until no later
        already. Returns whether the heap changed."""
        current = self._waiting.get(item)
        if current is not None:
            if current[0] <= ready:
                return False
            self._stale += 1
        self._seq += 1
        entry = (ready, self._seq, item)
        self._waiting[item] = entry
        heapq.heappush(self._heap, entry)
        if self._stale > 64 and self._stale * 2 > len(self._heap):
            self._heap = list(self._waiting.values())
            heapq.heapify(self._heap)
            self._stale = 0
        return True

    def _plan_timer_locked(self, ready: float) -> tuple[int, TimerHandle | None, float] | None:
        """The timer must fire by ``ready``: answers ``(generation, timer to
        cancel, ready)`` when it must be (re)armed, ``None`` when the armed one
        fires early enough. The arming itself happens outside the lock
        (:meth:`_arm`)."""
        if self._timer_at is not None and self._timer_at <= ready:
            return None
        self._timer_gen += 1
        self._timer_at = ready
        old, self._timer = self._timer, None
        return self._timer_gen, old, ready

    def _arm(self, generation: int, old: TimerHandle | None, ready: float, now: float) -> None:
        """Outside the lock: cancel the superseded timer, start the new one and
        keep it, unless it was superseded meanwhile (then cancel it too)."""
        if old is not None:
            old.cancel()
        handle = self._clock.call_later(
            max(0.0, ready - now),
            functools.partial(self._fire, generation),
            self._timer_name("delay"),
        )
        with self._lock:
            if generation == self._timer_gen:
                self._timer = handle
                return
        handle.cancel()

    def _fire(self, generation: int) -> None:
        """Timer callback: add every item whose time has come, and arm the
        timer for the next one."""
        metrics = self._metrics
        now = self._clock.now()
        added = 0
        arm = None
        with self._lock:
            if generation != self._timer_gen or self._shutting_down:
                return  # superseded, or shut down meanwhile
            self._timer_gen += 1
            self._timer = None
            self._timer_at = None
            heap, waiting = self._heap, self._waiting
            stamp = None if metrics is None else now
            while heap:
                entry = heap[0]
                if waiting.get(entry[2]) is not entry:
                    heapq.heappop(heap)
                    self._stale -= 1
                    continue
                if entry[0] > now:
                    break
                heapq.heappop(heap)
                del waiting[entry[2]]
                if self._add_locked(entry[2], stamp):
                    added += 1
            if heap:
                arm = self._plan_timer_locked(heap[0][0])
        if arm is not None:  # first: the next items must come whatever a metric does
            self._arm(*arm, now)
        if metrics is not None:
            for _ in range(added):
                metrics.adds.inc()

    def _stop_timers_locked(self) -> TimerHandle | None:
        self._heap.clear()
        self._waiting.clear()
        self._stale = 0
        self._timer_gen += 1
        self._timer_at = None
        handle, self._timer = self._timer, None
        return handle


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`DelayingQueue` that re-adds failed items after the delay a
    :class:`~informers.toolkit.workqueue.RateLimiter` decides (client-go's
    ``RateLimitingInterface``). The default limiter is
    :func:`~informers.toolkit.workqueue.default_controller_rate_limiter` on the
    queue's clock."""

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics=metrics)
        self._rate_limiter: RateLimiter[T] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=clock)
        )

    @property
    def rate_limiter(self) -> RateLimiter[T]:
        """The limiter deciding the delays."""
        return self._rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter answers (which counts
        one more failure of it). Dropped when shutting down (the limiter is not
        asked then). Counts a retry in the metrics, whatever the delay."""
        if self.shutting_down():
            return
        self._add_after(item, self._rate_limiter.when(item), count_retry=True)

    def forget(self, item: T) -> None:
        """The item succeeded (or is given up): the rate limiter stops tracking
        it, so its next failure starts from the shortest delay. Does not remove
        it from the queue."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many times ``item`` was rate-limited since it was last forgotten."""
        return self._rate_limiter.num_requeues(item)
