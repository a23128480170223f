"""Test doubles for code built on kube-informers: a :class:`FakeClock` to drive
time by hand and a scriptable :class:`FakeListerWatcher` (with
:class:`FakeWatch` streams) to feed a reflector or an informer without a
server. Both are thread-safe.

Typical use::

    lw = FakeListerWatcher()
    lw.set_objects([pod], resource_version="10")   # what the next lists return
    informer = SharedIndexInformer(lw, ...)
    ...
    watch = lw.wait_for_watch()                     # the informer's open watch
    watch.modify(updated_pod)                       # deliver an event
"""

from __future__ import annotations

import builtins
import heapq
import itertools
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from informers.rest.listwatch import ListOptions

__all__ = ["FakeClock", "FakeListerWatcher", "FakeWatch"]


class _FakeTimer:
    def __init__(self, clock: FakeClock, seq: int) -> None:
        self._clock = clock
        self._seq = seq

    def cancel(self) -> None:
        self._clock._cancel(self._seq)


class FakeClock:
    """A clock that only moves when :meth:`advance` is called.

    ``wait(event, timeout)`` blocks until the event is set or the clock was
    advanced past the deadline. Callbacks of :meth:`call_later` run on the
    thread calling :meth:`advance`, in due order. :meth:`wait_for_waiters`
    lets a test block until a component is waiting on the clock (its idle
    point) before advancing it.

    Note: waiters re-check their event every few milliseconds, since a
    ``threading.Event`` cannot wake another condition.
    """

    POLL = 0.005

    def __init__(self, start: float = 1000.0) -> None:
        self._cond = threading.Condition()
        self._now = start  # guarded by _cond
        self._waiters = 0  # guarded by _cond
        self._timers: list[tuple[float, int, Callable[[], None]]] = []  # heap, guarded
        self._cancelled: set[int] = set()  # guarded by _cond
        self._seq = itertools.count()

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward, waking waiters and running due callbacks."""
        with self._cond:
            self._now += seconds
            now = self._now
            due: list[Callable[[], None]] = []
            while self._timers and self._timers[0][0] <= now:
                _, seq, callback = heapq.heappop(self._timers)
                if seq in self._cancelled:
                    self._cancelled.discard(seq)
                else:
                    due.append(callback)
            self._cond.notify_all()
        for callback in due:
            callback()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        with self._cond:
            deadline = None if timeout is None else self._now + timeout
            self._waiters += 1
            self._cond.notify_all()
        try:
            while not event.is_set():
                with self._cond:
                    if deadline is not None and self._now >= deadline:
                        break
                    self._cond.wait(self.POLL)
            return event.is_set()
        finally:
            with self._cond:
                self._waiters -= 1
                self._cond.notify_all()

    def call_later(self, delay: float, callback: Callable[[], None], name: str) -> _FakeTimer:
        with self._cond:
            seq = next(self._seq)
            heapq.heappush(self._timers, (self._now + delay, seq, callback))
            self._cond.notify_all()
        return _FakeTimer(self, seq)

    def _cancel(self, seq: int) -> None:
        with self._cond:
            if any(s == seq for _, s, _ in self._timers):
                self._cancelled.add(seq)

    @property
    def waiters(self) -> int:
        """How many threads are blocked in :meth:`wait` right now."""
        with self._cond:
            return self._waiters

    def pending_timers(self) -> int:
        """How many :meth:`call_later` callbacks are scheduled and not cancelled."""
        with self._cond:
            return sum(1 for _, s, _ in self._timers if s not in self._cancelled)

    def wait_for_timers(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block (real time, at most ``timeout``) until at least ``count``
        :meth:`call_later` callbacks are pending: a component's timer is armed
        before the test advances the clock past it."""
        with self._cond:
            return self._cond.wait_for(
                lambda: sum(1 for _, s, _ in self._timers if s not in self._cancelled) >= count,
                timeout,
            )

    def wait_for_waiters(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Block until at least ``count`` threads wait on this clock."""
        with self._cond:
            return self._cond.wait_for(lambda: self._waiters >= count, timeout)


_END = object()


class FakeWatch:
    """One scripted watch stream. The test side pushes events
    (:meth:`add`, :meth:`modify`, :meth:`delete`, :meth:`bookmark`,
    :meth:`error`, :meth:`send`), ends it (:meth:`close`) or breaks it
    (:meth:`fail`); the consumer iterates it and may :meth:`stop` it."""

    def __init__(self, options: ListOptions | None = None) -> None:
        self.options = options or ListOptions()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._stopped = threading.Event()

    # producer side
    def send(self, event: Mapping[str, Any]) -> None:
        """Deliver a raw event (any dict, even a malformed one)."""
        self._queue.put(dict(event))

    def add(self, obj: Mapping[str, Any]) -> None:
        self.send({"type": "ADDED", "object": obj})

    def modify(self, obj: Mapping[str, Any]) -> None:
        self.send({"type": "MODIFIED", "object": obj})

    def delete(self, obj: Mapping[str, Any]) -> None:
        self.send({"type": "DELETED", "object": obj})

    def bookmark(self, resource_version: str, *, initial_events_end: bool = False) -> None:
        meta: dict[str, Any] = {"resourceVersion": resource_version}
        if initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        self.send({"type": "BOOKMARK", "object": {"metadata": meta}})

    def error(self, code: int, reason: str = "", message: str = "") -> None:
        status = {"kind": "Status", "status": "Failure", "code": code, "reason": reason}
        self.send({"type": "ERROR", "object": {**status, "message": message}})

    def close(self) -> None:
        """End the stream cleanly (as a server timeout does)."""
        self._queue.put(_END)

    def fail(self, exc: BaseException) -> None:
        """Make the consumer's iteration raise ``exc`` (a broken connection)."""
        self._queue.put(exc)

    # consumer side
    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def stop(self) -> None:
        self._stopped.set()
        self._queue.put(_END)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while not self._stopped.is_set():
            item = self._queue.get()
            if item is _END or self._stopped.is_set():
                return
            if isinstance(item, BaseException):
                raise item
            yield item


class FakeListerWatcher:
    """A scriptable :class:`~informers.rest.listwatch.ListerWatcher`.

    Lists answer, in order, the results queued with :meth:`script_list`
    (a list dict or an exception to raise), then the current objects set with
    :meth:`set_objects`. Watches answer the results queued with
    :meth:`script_watch` (a :class:`FakeWatch` or an exception), then a new
    empty :class:`FakeWatch`. Every call is recorded (``list_calls``,
    ``watch_calls``, ``watches``); :meth:`wait_for_watch` and
    :meth:`wait_for_lists` block until the consumer got that far.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._objects: list[dict[str, Any]] = []  # guarded by _cond
        self._rv = "1"  # guarded by _cond
        self._list_script: list[Any] = []  # guarded by _cond
        self._watch_script: list[Any] = []  # guarded by _cond
        self.list_calls: list[ListOptions] = []  # guarded by _cond
        self.watch_calls: list[ListOptions] = []  # guarded by _cond
        self.watches: list[FakeWatch] = []  # guarded by _cond

    def set_objects(self, objects: Iterable[Mapping[str, Any]], resource_version: str) -> None:
        """What the next unscripted lists return."""
        with self._cond:
            self._objects = [dict(o) for o in objects]
            self._rv = resource_version

    def script_list(self, *results: Mapping[str, Any] | BaseException) -> None:
        with self._cond:
            self._list_script.extend(results)

    def script_watch(self, *results: FakeWatch | BaseException) -> None:
        with self._cond:
            self._watch_script.extend(results)

    def list(self, options: ListOptions) -> dict[str, Any]:
        with self._cond:
            self.list_calls.append(options)
            self._cond.notify_all()
            result: Any = self._list_script.pop(0) if self._list_script else None
            if result is None:
                result = {
                    "kind": "List",
                    "metadata": {"resourceVersion": self._rv},
                    "items": list(self._objects),
                }
        if isinstance(result, BaseException):
            raise result
        return dict(result)

    def watch(self, options: ListOptions) -> FakeWatch:
        with self._cond:
            self.watch_calls.append(options)
            result: Any = self._watch_script.pop(0) if self._watch_script else FakeWatch(options)
            if isinstance(result, FakeWatch):
                result.options = options
                self.watches.append(result)
            self._cond.notify_all()
        if isinstance(result, BaseException):
            raise result
        watch: FakeWatch = result
        return watch

    def wait_for_watch(self, count: int = 1, timeout: float = 5.0) -> FakeWatch:
        """The ``count``-th watch opened (1-based), once it is open."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.watches) >= count, timeout):
                raise TimeoutError(f"watch #{count} was not opened within {timeout} s")
            return self.watches[count - 1]

    def wait_for_lists(self, count: int = 1, timeout: float = 5.0) -> builtins.list[ListOptions]:
        """Block until at least ``count`` lists were requested; their options."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.list_calls) >= count, timeout):
                raise TimeoutError(f"list #{count} was not requested within {timeout} s")
            return list(self.list_calls)
