"""Time, injectable: every timed wait in kube-informers goes through a
:class:`Clock`, so tests can drive time with
:class:`informers.testing.fake.FakeClock` instead of sleeping.

:data:`REAL_CLOCK` (a :class:`RealClock`) is the default everywhere. Its
timers all run on one :class:`TimerThread` over a heap, started on demand and
gone when nothing is scheduled: a thousand pending timers cost one thread.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["REAL_CLOCK", "Clock", "RealClock", "TimerHandle", "TimerThread", "on_timer_thread"]

log = logging.getLogger(__name__)

#: ``running`` is set on a :class:`TimerThread`'s loop thread (see
#: :func:`on_timer_thread`).
_where = threading.local()


def on_timer_thread() -> bool:
    """Whether the calling thread is the loop thread of a
    :class:`TimerThread` (any clock's), that is, whether the caller is a
    timer callback. Code the library may call from a callback (``stop()``
    of an informer, a registration's ``remove()``) asks it to avoid
    blocking that thread, which every timer of the clock shares."""
    return bool(getattr(_where, "running", False))


@runtime_checkable
class TimerHandle(Protocol):
    """A scheduled callback; ``cancel()`` is idempotent and, once it
    returns, the callback will not start (it may have run already)."""

    def cancel(self) -> None:
        """Cancel the callback; idempotent (see the class docstring)."""
        ...


@runtime_checkable
class Clock(Protocol):
    """A monotonic clock with the two waits the library needs.

    All methods are thread-safe.
    """

    def now(self) -> float:
        """Monotonic seconds (only differences are meaningful)."""
        ...

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Block until ``event`` is set or ``timeout`` seconds of this clock
        passed (``None``: no timeout). Returns ``event.is_set()``."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None], name: str) -> TimerHandle:
        """Run ``callback`` (on some thread) once ``delay`` seconds passed,
        unless cancelled first. ``name`` names the timer (in logs, or its
        thread). Callbacks may share one thread: keep them short, never
        blocking."""
        ...


class _Entry:
    """One scheduled callback of a :class:`TimerThread`.

    ``state`` moves ``PENDING -> RUNNING -> DONE`` or ``PENDING -> CANCELLED``
    and is guarded by the owning timer thread's condition.
    """

    __slots__ = ("callback", "due", "name", "owner", "seq", "state")

    PENDING, RUNNING, DONE, CANCELLED = range(4)

    def __init__(
        self, owner: TimerThread, due: float, seq: int, callback: Callable[[], None], name: str
    ) -> None:
        self.owner = owner
        self.due = due
        self.seq = seq
        self.callback = callback
        self.name = name
        self.state = _Entry.PENDING

    def __lt__(self, other: _Entry) -> bool:
        return (self.due, self.seq) < (other.due, other.seq)

    def cancel(self) -> None:
        self.owner.cancel(self)


class TimerThread:
    """Every :meth:`RealClock.call_later` of one clock on ONE thread, over a heap.

    The thread (named ``name``) starts when a timer is scheduled and nothing
    runs it, and ends as soon as no timer is pending, so an idle process (or
    a test that cancelled its timers) has no timer thread at all. Thousands
    of pending timers (a delaying queue's ``add_after``) cost one thread and
    ``O(log n)`` per schedule or cancel.

    Callbacks run one after another on that thread: they must be short and
    must not block (hand longer work to a thread of your own). A callback
    that raises is logged and the others still run -- whatever it raises: a
    :class:`BaseException` too (``SystemExit`` from ``sys.exit()``,
    ``KeyboardInterrupt``, ``GeneratorExit``) is logged as an error and ends
    only that callback, never the thread every timer of the clock shares.
    (On a thread other than the main one, Python itself ends only that
    thread for ``SystemExit`` and never delivers a signal's
    ``KeyboardInterrupt``; one raised by a callback is a bug to report, not
    a request to stop the process.)

    Thread-safe. One condition guards the heap, the live count, every
    entry's ``state`` and the thread handle; callbacks run without it.
    """

    def __init__(self, name: str = "kube-informers-timer") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[_Entry] = []  # guarded by _cond; may hold cancelled entries
        self._live = 0  # guarded by _cond: entries in _heap still PENDING
        self._seq = itertools.count()  # guarded by _cond
        self._thread: threading.Thread | None = None  # guarded by _cond: the running loop
        os.register_at_fork(after_in_child=self._after_fork)

    def schedule(self, due: float, callback: Callable[[], None], name: str) -> TimerHandle:
        """Run ``callback`` once :func:`time.monotonic` reaches ``due``."""
        with self._cond:
            entry = _Entry(self, due, next(self._seq), callback, name)
            heapq.heappush(self._heap, entry)
            self._live += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:
                self._cond.notify()  # an earlier deadline than the loop waits for
        return entry

    def cancel(self, entry: _Entry) -> None:
        """Cancel ``entry``; idempotent. Once this returns the callback will
        not start, and is not running (unless called from the callback)."""
        with self._cond:
            if entry.state == _Entry.PENDING:
                entry.state = _Entry.CANCELLED
                self._live -= 1
                if self._live == 0:
                    self._cond.notify()  # let the loop end now instead of at the deadline
                return
            if threading.current_thread() is self._thread:
                return  # cancelled by a callback (its own or another's)
            while entry.state == _Entry.RUNNING:
                self._cond.wait()

    def pending(self) -> int:
        """How many timers are scheduled and neither run nor cancelled."""
        with self._cond:
            return self._live

    def _run(self) -> None:
        _where.running = True
        try:
            self._loop()
        finally:
            with self._cond:
                # Normally cleared by _loop as it ends; this only matters if
                # the loop itself failed: never leave a dead thread recorded
                # (schedule() would start no other).
                if self._thread is threading.current_thread():
                    self._thread = None

    def _loop(self) -> None:
        while True:
            with self._cond:
                entry = self._next_due_locked()
                if entry is None:
                    self._heap.clear()  # only cancelled entries are left
                    self._thread = None
                    return
                entry.state = _Entry.RUNNING
                self._live -= 1
            try:
                entry.callback()
            except Exception:
                log.exception("timer %s: callback failed", entry.name)
            except BaseException:  # see the class docstring
                log.exception(
                    "timer %s: callback raised a BaseException; it ends that callback only, "
                    "the timer thread goes on",
                    entry.name,
                )
            finally:
                with self._cond:
                    entry.state = _Entry.DONE
                    self._cond.notify_all()

    def _next_due_locked(self) -> _Entry | None:
        """Wait until the earliest pending entry is due and pop it; None when
        nothing is pending."""
        while True:
            while self._heap and self._heap[0].state != _Entry.PENDING:
                heapq.heappop(self._heap)
            if not self._heap:
                return None
            delay = self._heap[0].due - time.monotonic()
            if delay <= 0:
                return heapq.heappop(self._heap)
            self._cond.wait(delay)

    def _after_fork(self) -> None:
        # The child has no loop thread: start over with nothing scheduled.
        self._cond = threading.Condition()
        self._heap = []
        self._live = 0
        self._thread = None


class RealClock:
    """The wall of :func:`time.monotonic`; waits are ``Event.wait``; every
    :meth:`call_later` shares one :class:`TimerThread` (per clock)."""

    def __init__(self) -> None:
        self._timers = TimerThread()

    def now(self) -> float:
        """:func:`time.monotonic`."""
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """``event.wait(timeout)``: real seconds."""
        return event.wait(timeout)

    def call_later(self, delay: float, callback: Callable[[], None], name: str) -> TimerHandle:
        """Schedule ``callback`` on the clock's timer thread. ``name`` names
        the timer in logs. The callback must be short and must not block."""
        return self._timers.schedule(time.monotonic() + max(0.0, delay), callback, name)

    def pending_timers(self) -> int:
        """How many timers are scheduled and neither run nor cancelled."""
        return self._timers.pending()


#: The process-wide real clock.
REAL_CLOCK: Clock = RealClock()
