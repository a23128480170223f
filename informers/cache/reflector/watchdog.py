"""The progress watchdog of an open watch: silent stalls end in a re-watch.

A watch can stay open and deliver nothing: a half-dead TCP connection, a
proxy or load balancer that swallows data, a server stuck behind a lock.
Nothing fails, so without help the cache is silently stale until the
server's own timeout ends the watch (5 to 10 minutes). With bookmarks
requested, as the reflector always does, a healthy API server sends
*something* at least about once a minute (kube-apiserver's watch cache sends
a bookmark every minute), so a watch on which nothing at all arrived for
much longer than that is dead.

:class:`ProgressWatchdog` checks a counter of delivered events every quarter
of its ``limit``; when the counter did not move for ``limit`` seconds of the
clock it stops the stream (which ends the driver's blocking read) and marks
itself :attr:`~ProgressWatchdog.fired`, and the driver re-watches from the
last resource version after reporting a
:class:`~informers.errors.WatchStalledError`.

client-go has no such check in its reflector: it relies on HTTP/2 health
pings of the connection (``ReadIdleTimeout``), which catch a dead TCP
connection but not a live one that carries nothing; this project's transport
is HTTP/1.1 (urllib3), which has no pings, and a data-level check covers
both cases.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from informers.util.clock import Clock, TimerHandle

__all__ = ["DEFAULT_PROGRESS_TIMEOUT", "ProgressWatchdog"]

#: The default limit: two and a half bookmark periods of a real API server.
DEFAULT_PROGRESS_TIMEOUT = 150.0


class ProgressWatchdog:
    """Stops ``stop_stream()`` once ``progress()`` stood still for ``limit``
    seconds of ``clock``.

    ``progress`` is read on the clock's timer thread; it is typically a
    counter the reading thread increments per event (a stale read only
    delays detection by one check). Detection happens between ``limit`` and
    ``1.25 * limit`` after the last event. Thread-safe: one lock guards the
    current timer and whether the watchdog is cancelled; it is never held
    while calling the clock or the stream.
    """

    def __init__(
        self,
        clock: Clock,
        limit: float,
        progress: Callable[[], int],
        stop_stream: Callable[[], None],
        name: str,
    ) -> None:
        if limit <= 0:
            raise ValueError(f"a progress limit is positive, not {limit}")
        self._clock = clock
        self._limit = limit
        self._interval = limit / 4
        self._progress = progress
        self._stop_stream = stop_stream
        self._name = name
        #: Set once the watchdog stopped the stream.
        self.fired = threading.Event()
        # Used on the timer thread only (one check at a time):
        self._seen = progress()
        self._since = clock.now()  # when _seen last changed
        # _lock guards _timer and _off.
        self._lock = threading.Lock()
        self._timer: TimerHandle | None = None
        self._off = False

    @property
    def limit(self) -> float:
        """Seconds without progress after which the stream is stopped."""
        return self._limit

    def start(self) -> None:
        """Schedule the first check."""
        self._schedule()

    def cancel(self) -> None:
        """Stop checking; idempotent. Once it returns no check runs (one
        running on the timer thread is waited for)."""
        with self._lock:
            self._off = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _schedule(self) -> None:
        timer = self._clock.call_later(self._interval, self._check, f"{self._name}-watchdog")
        with self._lock:
            keep = not self._off
            if keep:
                self._timer = timer
        if not keep:
            timer.cancel()

    def _check(self) -> None:
        with self._lock:
            if self._off:
                return
        now = self._clock.now()
        count = self._progress()
        if count != self._seen:
            self._seen, self._since = count, now
        elif now - self._since >= self._limit:
            self.fired.set()
            self._stop_stream()
            return
        self._schedule()
