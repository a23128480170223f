"""Clock-driven exponential backoff with jitter and reset.

One policy serves every retry loop in kube-informers: the reflector's
list/watch retries, the workqueue's rate limiters and leader election's
retry period. It is client-go's ``wait.Backoff`` / ``BackoffManager`` in
Python, with time taken from an injectable :class:`~informers.util.clock.Clock`
so that tests drive it without sleeping.

:class:`ExponentialBackoff`
    stateful: each :meth:`~ExponentialBackoff.next_delay` grows the base
    delay by ``factor`` up to ``cap`` and adds jitter; a quiet period of
    ``reset_after`` seconds (or :meth:`~ExponentialBackoff.reset`) starts over.
:func:`exponential_delay`
    stateless: the un-jittered delay after ``failures`` failures, overflow
    safe for any count (what a per-item rate limiter needs).
:func:`jittered`
    client-go's ``wait.Jitter``: ``duration`` plus up to ``max_factor`` times
    it at random.
"""

from __future__ import annotations

import math
import random
import threading

from informers.util.clock import REAL_CLOCK, Clock

__all__ = ["ExponentialBackoff", "exponential_delay", "jittered"]


def jittered(duration: float, max_factor: float, rng: random.Random | None = None) -> float:
    """``duration`` plus a random amount in ``[0, max_factor * duration)``.

    A ``max_factor`` of zero or less returns ``duration`` unchanged (client-go
    treats it as 1.0; here no jitter is what was asked for). Thread-safe when
    ``rng`` is (the module-level :mod:`random` functions are).
    """
    if max_factor <= 0.0:
        return duration
    draw = (rng or random).random()
    return duration + draw * max_factor * duration


def exponential_delay(base: float, failures: int, cap: float, *, factor: float = 2.0) -> float:
    """``base * factor ** failures``, never above ``cap``.

    Safe for any ``failures`` (no overflow: a count whose power would exceed
    ``cap`` answers ``cap`` directly). ``failures`` below zero counts as zero.
    Pure and thread-safe.
    """
    if base <= 0.0:
        return 0.0
    failures = max(0, failures)
    if cap <= base or factor <= 1.0:
        return min(base, cap)
    # base * factor**failures >= cap exactly when failures >= log(cap/base) / log(factor):
    # compare exponents rather than compute a power that may overflow.
    if failures >= math.log(cap / base) / math.log(factor):
        return cap
    return min(base * factor**failures, cap)


class ExponentialBackoff:
    """Exponential backoff with jitter that resets after a healthy period.

    Each :meth:`next_delay` doubles (``factor``) the base delay, from
    ``initial`` up to ``cap`` (an ``initial`` above ``cap`` is ``cap``), and
    adds up to ``jitter`` times it at random;
    if more than ``reset_after`` seconds of ``clock`` passed since the
    previous call, the base restarts at ``initial``. The defaults are
    client-go's reflector backoff: 0.8 s doubling to 30 s, jitter 1.0, reset
    after 2 minutes.

    Thread-safe: one lock guards the base delay and the time of the last
    call; the clock is read outside it. Nothing blocks: the caller waits
    the returned delay itself (``clock.wait(stop, delay)``).
    """

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        *,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        clock: Clock = REAL_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        if initial < 0 or cap < 0:
            raise ValueError("backoff delays must not be negative")
        if factor < 1.0:
            raise ValueError(f"backoff factor must be at least 1, got {factor}")
        self._initial = initial
        self._cap = cap
        self._factor = factor
        self._jitter = jitter
        self._reset_after = reset_after
        self._clock = clock
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._base = 0.0  # guarded by _lock; 0 = not backed off since the last reset
        self._last = 0.0  # guarded by _lock; clock time of the last next_delay()

    @property
    def initial(self) -> float:
        """The first delay, before jitter."""
        return self._initial

    @property
    def cap(self) -> float:
        """The largest base delay, before jitter."""
        return self._cap

    def next_delay(self) -> float:
        """The delay to wait now (seconds), and one step more backed off."""
        now = self._clock.now()  # outside our lock: the clock may have its own
        with self._lock:
            if self._base == 0.0 or now - self._last > self._reset_after:
                self._base = min(self._initial, self._cap)
            else:
                self._base = min(self._base * self._factor, self._cap)
            self._last = now
            base = self._base
            draw = self._rng.random()
        return base + draw * self._jitter * base

    def reset(self) -> None:
        """Start over: the next delay is ``initial`` (plus jitter)."""
        with self._lock:
            self._base = 0.0
