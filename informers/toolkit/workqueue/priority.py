"""A rate-limiting work queue that hands out urgent work first, with aging.

:class:`PriorityQueue` keeps the whole contract of
:class:`~informers.toolkit.workqueue.RateLimitingQueue` (an item waiting is queued
once, an item handed out is not handed out again before ``done``, an item
added while it is processed is queued again at ``done``, ``add_after``,
``add_rate_limited``, ``forget``, ``shutdown``, ``shutdown_with_drain`` and
the ``workqueue_*`` metrics) and adds a **priority** to every add: an
``int``, higher first. Two levels are named:

:data:`PRIORITY_HIGH` (``0``, the default of :meth:`PriorityQueue.add`)
    work caused by an event: something changed and should be looked at soon.
:data:`PRIORITY_LOW` (``-100``)
    work that only confirms a state already seen: the objects of an
    informer's initial list, resyncs.

A controller built with ``priority_queue=True`` uses one, and its informer
sources add the requests of initial-list objects and of resyncs (an update
whose resource version did not move) with :data:`PRIORITY_LOW`, every other
event with :data:`PRIORITY_HIGH`; so a fresh event is reconciled promptly
while a large initial list drains.

**Order and aging.** Each waiting item carries the time it started waiting
(``since``, on the queue's clock) and its priority ``p``; items are handed
out in order of their *deadline* ``since - p * max_wait / 100``, ties in the
order they started waiting. Among items of one priority that is first in, first
out. One priority level is worth ``max_wait / 100`` seconds of waiting, so
the deadline of a :data:`PRIORITY_LOW` item is ``max_wait`` seconds after
it was added, that of a :data:`PRIORITY_HIGH` item the moment it was added:

* an item of :data:`PRIORITY_LOW` or above that has waited ``max_wait``
  seconds is handed out before every item of :data:`PRIORITY_HIGH` or below
  added after that moment. What waits ahead of it then can only shrink, so
  low-priority work is never starved, however steady the stream of urgent
  work (controller-runtime's priority queue starves it, its issue #3496);
* once every low-priority item still waiting is that old, fresh events wait
  behind them: ``max_wait`` trades how stale a low-priority item may get
  against how long urgent work may be held up by a backlog. The default,
  :data:`DEFAULT_MAX_WAIT` (300 s), lets a controller drain a large initial
  list while still answering events at once.

**Priorities only rise.** Adding an item that is waiting already (queued, or
to be queued again at ``done``) with a higher priority raises its priority
and keeps its ``since``, so it moves forward; a lower or equal priority
changes nothing. When an item is handed out its priority is remembered until
``done``: :meth:`~PriorityQueue.add_after` and
:meth:`~PriorityQueue.add_rate_limited` without a ``priority`` requeue it
with that priority (a failed initial-list item stays low), any other item
with :data:`PRIORITY_HIGH`. A delayed item is queued, when its delay has
passed, with the highest priority it was delayed with, ``since`` its ready
time.

Thread-safety: every method may be called from any thread; one lock, never
held while calling the clock, a timer, the rate limiter or a metric. ``get``
and ``shutdown_with_drain`` block, nothing else does. Adds and gets of
items that arrive in order within their priority (the common case) cost
``O(1)``, others ``O(log n)`` (a heap).
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from informers.toolkit.workqueue.metrics import MetricsProvider
from informers.toolkit.workqueue.queue import RateLimitingQueue
from informers.toolkit.workqueue.rate_limiters import RateLimiter
from informers.util.clock import REAL_CLOCK, Clock, RealClock, TimerHandle

__all__ = ["DEFAULT_MAX_WAIT", "PRIORITY_HIGH", "PRIORITY_LOW", "PriorityQueue"]

T = TypeVar("T", bound=Hashable)

#: The priority of work caused by an event (the default of ``add``).
PRIORITY_HIGH = 0
#: The priority of an informer's initial list and of resyncs.
PRIORITY_LOW = -100
#: How long (seconds) a :data:`PRIORITY_LOW` item waits at most before no
#: newer :data:`PRIORITY_HIGH` item is handed out ahead of it.
DEFAULT_MAX_WAIT = 300.0

_LEVELS = PRIORITY_HIGH - PRIORITY_LOW


class _DeadlineOrder(Generic[T]):
    """The waiting items of a :class:`PriorityQueue` in hand-out order.

    Entries are ``(deadline, seq, item)``. Items of one priority mostly
    arrive in deadline order (their wait begins when they are added), so
    each priority has a *run*, a deque kept in deadline order, appended to
    in O(1); an entry that would break its run's order (an item raised, or
    queued again at ``done`` with an older ``since``, or delayed) goes to
    one ``overflow`` heap instead. The next item is the least head of the
    runs and the heap (a handful of priorities in use: a handful of heads).
    A raised item's old entry stays behind, stale, and is skipped when it
    comes up (everything is rebuilt when stale entries pile up).

    ``wanted`` holds every dirty item (queued, or to be queued again at
    ``done``) as ``(priority, since, seq, entry)``: ``seq`` orders equal
    deadlines by when the wait began, ``entry`` is the item's live entry
    (``None`` while it is not queued). ``handed`` holds every item handed
    out and not done, with the priority it was handed out with.

    Not thread-safe: the queue's lock guards every call and every attribute
    (the queue's ``add`` works on them directly, on its fast path). It is
    the queue's :class:`~informers.toolkit.workqueue.queue.HandOutOrder`: ``append``
    queues an item already in ``wanted``, ``popleft`` hands one out.
    """

    __slots__ = ("entries", "handed", "overflow", "runs", "seq", "stale", "step", "wanted")

    def __init__(self, step: float) -> None:
        self.step = step  # seconds of waiting one priority level is worth
        self.runs: dict[int, deque[tuple[float, int, T]]] = {}
        self.overflow: list[tuple[float, int, T]] = []
        self.wanted: dict[T, tuple[int, float, int, tuple[float, int, T] | None]] = {}
        self.handed: dict[T, int] = {}
        self.seq = 0
        self.entries = 0  # in the runs and the heap, stale ones included
        self.stale = 0  # entries that are no item's live entry

    def __len__(self) -> int:
        return self.entries - self.stale

    def want(self, item: T, priority: int, since: float) -> None:
        """Record that ``item`` waits with ``priority`` since ``since``; an
        item waiting already keeps its ``since`` and its place among equal
        deadlines, and only ever gains priority (moving forward if it is
        queued)."""
        current = self.wanted.get(item)
        if current is None:
            self.seq += 1
            self.wanted[item] = (priority, since, self.seq, None)
        elif priority > current[0]:
            self.wanted[item] = (priority, current[1], current[2], None)
            if current[3] is not None:  # queued: queue it again with its new deadline
                self.stale += 1
                self.append(item)
                if self.stale > 64 and self.stale * 2 > self.entries:
                    self._rebuild()

    def append(self, item: T, /) -> None:
        priority, since, seq, _ = self.wanted[item]
        entry = (since - priority * self.step, seq, item)
        self.wanted[item] = (priority, since, seq, entry)
        self.entries += 1
        run = self.runs.get(priority)
        if run is None:
            self.runs[priority] = deque((entry,))
        elif run[-1] < entry:
            run.append(entry)
        else:
            heapq.heappush(self.overflow, entry)

    def popleft(self) -> T:
        wanted, overflow = self.wanted, self.overflow
        while True:
            best: tuple[float, int, T] | None = None
            source: deque[tuple[float, int, T]] | None = None
            key = 0
            for priority, run in self.runs.items():
                if best is None or run[0] < best:
                    best, source, key = run[0], run, priority
            if overflow and (best is None or overflow[0] < best):
                entry = heapq.heappop(overflow)
            else:
                assert source is not None  # popleft is called only when len() > 0
                entry = source.popleft()
                if not source:
                    del self.runs[key]  # runs are never empty
            self.entries -= 1
            item = entry[2]
            record = wanted.pop(item, None)
            if record is not None:
                if record[3] is entry:
                    self.handed[item] = record[0]
                    return item
                wanted[item] = record  # a newer entry of a raised item is live
            self.stale -= 1

    def _rebuild(self) -> None:
        """Drop the stale entries: every live entry, in order, into its run."""
        live = sorted(r[3] for r in self.wanted.values() if r[3] is not None)
        self.runs = {}
        self.overflow = []
        for entry in live:
            priority = self.wanted[entry[2]][0]
            run = self.runs.get(priority)
            if run is None:
                self.runs[priority] = deque((entry,))
            else:
                run.append(entry)
        self.entries = len(live)
        self.stale = 0


def _check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"priority must be an int, not {type(priority).__name__}")
    return priority


class PriorityQueue(RateLimitingQueue[T]):
    """A :class:`~informers.toolkit.workqueue.RateLimitingQueue` that hands out higher
    priorities first, aging waiting items so that none is starved (see the
    module docs for the order and its guarantees).

    :param rate_limiter: decides ``add_rate_limited``'s delays (default
        :func:`~informers.toolkit.workqueue.default_controller_rate_limiter` on ``clock``).
    :param name: labels the metrics and names timer threads.
    :param clock: times the aging, delays and metrics (tests inject a
        :class:`~informers.testing.fake.FakeClock`).
    :param metrics: a :class:`~informers.toolkit.workqueue.MetricsProvider`.
    :param max_wait: seconds after which a :data:`PRIORITY_LOW` item is
        overtaken by no newer :data:`PRIORITY_HIGH` item (finite, > 0).

    Raises :class:`ValueError` for a ``max_wait`` that is not finite and
    positive, and :class:`TypeError` for a priority that is not an ``int``.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics: MetricsProvider | None = None,
        max_wait: float = DEFAULT_MAX_WAIT,
    ) -> None:
        if isinstance(max_wait, bool) or not isinstance(max_wait, int | float):
            raise TypeError(f"max_wait must be a number of seconds, not {type(max_wait).__name__}")
        if not math.isfinite(max_wait) or max_wait <= 0:
            raise ValueError(f"max_wait must be finite and > 0, not {max_wait!r}")
        super().__init__(rate_limiter, name=name, clock=clock, metrics=metrics)
        self._max_wait = float(max_wait)
        self._order: _DeadlineOrder[T] = _DeadlineOrder(self._max_wait / _LEVELS)
        # Guarded by _lock: the base class hands out from it. Its ``wanted``
        # takes the place of the base class's dirty set, which stays empty.
        self._queue = self._order
        self._now = time.monotonic if isinstance(clock, RealClock) else clock.now
        # Delayed items (guarded by _lock): item -> (highest priority it was
        # delayed with, earliest ready time); queued with those when it fires.
        self._delayed: dict[T, tuple[int, float]] = {}

    @property
    def max_wait(self) -> float:
        """Seconds a :data:`PRIORITY_LOW` item waits at most before newer
        :data:`PRIORITY_HIGH` items stop overtaking it."""
        return self._max_wait

    def priority(self, item: T) -> int | None:
        """The priority ``item`` waits with (queued, or to be queued again at
        ``done``); ``None`` when it is not waiting (delayed items are not
        waiting yet)."""
        with self._lock:
            wanted = self._order.wanted.get(item)
        return None if wanted is None else wanted[0]

    # ------------------------------------------------------------------ adds

    def add(self, item: T, priority: int = PRIORITY_HIGH) -> None:
        """Mark ``item`` as needing processing with ``priority``. If it is
        waiting already its priority is raised to ``priority`` when that is
        higher (never lowered); if it is being processed it is queued at
        :meth:`done`. Dropped when shutting down. Never blocks."""
        if type(priority) is not int:
            _check_priority(priority)
        now = self._now()
        metrics = self._metrics
        if metrics is not None:
            with self._lock:
                added = self._add_with_priority_locked(item, priority, now, now)
            if added:
                metrics.adds.inc()
            return
        # The same as _add_with_priority_locked, inlined: the hot path of a
        # source pushing an initial list.
        with self._lock:
            if self._shutting_down:
                return
            order = self._order
            current = order.wanted.get(item)
            if current is not None:
                if priority > current[0]:
                    order.want(item, priority, now)
                return
            seq = order.seq = order.seq + 1
            if item in self._processing:
                order.wanted[item] = (priority, now, seq, None)
                return
            entry = (now - priority * order.step, seq, item)
            order.wanted[item] = (priority, now, seq, entry)
            order.entries += 1
            run = order.runs.get(priority)
            if run is None:
                order.runs[priority] = deque((entry,))
            elif run[-1] < entry:
                run.append(entry)
            else:
                heapq.heappush(order.overflow, entry)
            if self._getters:
                self._cond.notify()

    def add_after(self, item: T, delay: float, priority: int | None = None) -> None:
        """Add ``item`` with ``priority`` once ``delay`` seconds have passed
        (``delay <= 0``: at once). ``None``: the priority it was handed out
        with if it is being processed, else :data:`PRIORITY_HIGH`. An item
        delayed twice keeps the earlier ready time and the higher priority.
        Dropped when shutting down; counts a retry when ``delay > 0``."""
        if priority is not None:
            _check_priority(priority)
        self._add_after(item, delay, count_retry=delay > 0.0, priority=priority)

    def add_rate_limited(self, item: T, priority: int | None = None) -> None:
        """Add ``item`` after the rate limiter's delay, with ``priority``
        (``None`` as for :meth:`add_after`). Dropped when shutting down;
        counts a retry."""
        if priority is not None:
            _check_priority(priority)
        if self.shutting_down():
            return
        self._add_after(item, self._rate_limiter.when(item), count_retry=True, priority=priority)

    def _add_with_priority_locked(
        self, item: T, priority: int, since: float, stamp: float | None
    ) -> bool:
        """The add, with the lock held; ``stamp`` is given when metrics are
        on. Returns whether ``item`` became dirty (was not already)."""
        if self._shutting_down:
            return False
        order = self._order
        if item in order.wanted:
            order.want(item, priority, since)
            return False
        order.want(item, priority, since)
        if stamp is not None and item not in self._add_times:
            self._add_times[item] = stamp
        if item in self._processing:
            return True
        order.append(item)
        if self._getters:
            self._cond.notify()
        return True

    def _add_locked(self, item: T, now: float | None) -> bool:
        # Only the delay timer adds through here (the other adds are
        # overridden): the item comes with what it was delayed with.
        priority, ready = self._delayed.pop(item, (PRIORITY_HIGH, now or 0.0))
        return self._add_with_priority_locked(item, priority, ready, now)

    def _add_after(
        self, item: T, delay: float, *, count_retry: bool, priority: int | None = None
    ) -> None:
        metrics = self._metrics
        now = self._now()
        arm: tuple[int, TimerHandle | None, float] | None = None
        added = False
        with self._lock:
            if self._shutting_down:
                return
            if priority is None:
                priority = self._order.handed.get(item, PRIORITY_HIGH)
            if delay <= 0.0:
                added = self._add_with_priority_locked(
                    item, priority, now, None if metrics is None else now
                )
            else:
                ready = now + delay
                held = self._delayed.get(item)
                if held is not None:
                    self._delayed[item] = (max(priority, held[0]), min(ready, held[1]))
                else:
                    self._delayed[item] = (priority, ready)
                if self._push_locked(item, ready):
                    arm = self._plan_timer_locked(ready)
        if arm is not None:
            self._arm(*arm, now)
        if metrics is not None:
            if count_retry:
                metrics.retries.inc()
            if added:
                metrics.adds.inc()

    # ------------------------------------------------------------------ done / shutdown

    def done(self, item: T) -> None:
        """Mark ``item`` as processed (as :meth:`Queue.done
        <informers.toolkit.workqueue.Queue.done>`): if it was added meanwhile it is
        queued now, with the priority and ``since`` of those adds."""
        metrics = self._metrics
        now = None if metrics is None else self._clock.now()
        with self._lock:
            try:
                self._processing.remove(item)
            except KeyError:
                return
            del self._order.handed[item]
            if item in self._order.wanted:
                self._order.append(item)
                if self._getters:
                    self._cond.notify()
            elif self._draining and not self._processing and not self._order:
                self._cond.notify_all()
            if metrics is None:
                return
            started = self._start_times.pop(item, None)
        if started is not None and now is not None:
            metrics.work_duration.observe(max(0.0, now - started))

    def _depth(self) -> float:
        # The dirty items are the wanted ones (the base class's dirty set
        # stays empty: the order's ``wanted`` holds them).
        with self._lock:
            return float(len(self._order.wanted))

    def _stop_timers_locked(self) -> TimerHandle | None:
        self._delayed.clear()
        return super()._stop_timers_locked()
