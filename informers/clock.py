"""Time, injectable: every timed wait in kube-informers goes through a
:class:`Clock`, so tests can drive time with
:class:`informers.testing.fake.FakeClock` instead of sleeping.

:data:`REAL_CLOCK` (a :class:`RealClock`) is the default everywhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["REAL_CLOCK", "Clock", "RealClock", "TimerHandle"]


@runtime_checkable
class TimerHandle(Protocol):
    """A scheduled callback; ``cancel()`` is idempotent and, once it
    returns, the callback will not start (it may have run already)."""

    def cancel(self) -> None: ...


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
        unless cancelled first. ``name`` names the timer thread, if any."""
        ...


class _ThreadTimer:
    def __init__(self, delay: float, callback: Callable[[], None], name: str) -> None:
        self._timer = threading.Timer(delay, callback)
        self._timer.name = name
        self._timer.daemon = True
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()
        if self._timer is not threading.current_thread():
            self._timer.join()


class RealClock:
    """The wall of :func:`time.monotonic`; waits are ``Event.wait``."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)

    def call_later(self, delay: float, callback: Callable[[], None], name: str) -> TimerHandle:
        return _ThreadTimer(delay, callback, name)


#: The process-wide real clock.
REAL_CLOCK: Clock = RealClock()
