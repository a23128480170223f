"""Rate limiters: how long a failed item waits before it is handed out again.

A :class:`RateLimiter` answers :meth:`~RateLimiter.when` (the delay for one
more failure of an item, which it counts), :meth:`~RateLimiter.forget` (the
item succeeded: stop tracking it) and :meth:`~RateLimiter.num_requeues` (the
failures counted since the last ``forget``). These are client-go's
``workqueue`` rate limiters:

:class:`ItemExponentialFailureRateLimiter`
    per item, ``base * 2**failures`` capped at ``cap`` (5 ms to 1000 s by default).
:class:`BucketRateLimiter`
    one token bucket for all items (``qps`` tokens a second, ``burst`` at most),
    with the reservation semantics of ``golang.org/x/time/rate``: every call
    takes a token, borrowing from the future when the bucket is empty, and
    answers how long to wait for it.
:class:`ItemFastSlowRateLimiter`
    per item, ``fast_delay`` for the first ``max_fast_attempts`` failures, then
    ``slow_delay``.
:class:`MaxOfRateLimiter`
    the longest delay of several limiters (each of them counts the failure).
:func:`default_controller_rate_limiter`
    client-go's default: the max of an exponential limiter (5 ms to 1000 s) and
    a bucket (10 qps, burst 100).

Every limiter here is thread-safe (one lock each, never held while calling
another limiter or the clock) and never blocks: the caller waits the delay
(a :class:`~informers.toolkit.workqueue.RateLimitingQueue` through its delaying heap).
Items are used as dict keys, so they must be hashable.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from informers.util.backoff import exponential_delay
from informers.util.clock import REAL_CLOCK, Clock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]

T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)
K = TypeVar("K", bound=Hashable)


@runtime_checkable
class RateLimiter(Protocol[T_contra]):
    """Decides how long an item waits before its next attempt."""

    def when(self, item: T_contra) -> float:
        """Seconds ``item`` should wait now (``>= 0``); counts one failure."""
        ...

    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded, or was given up on)."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """Failures of ``item`` counted since it was last forgotten."""
        ...


class ItemExponentialFailureRateLimiter(Generic[K]):
    """``base * 2**n`` seconds for an item's ``n``-th failure (counting from
    0), never more than ``cap``; overflow-safe for any failure count.

    Per-item failure counts live in a dict until :meth:`forget`: forget every
    item that is done with, or the dict grows. Thread-safe.
    """

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if not (base >= 0.0 and cap >= 0.0):  # also rejects NaN
            raise ValueError(f"delays must not be negative, got base={base}, cap={cap}")
        self._base = base
        self._cap = cap
        self._lock = threading.Lock()
        self._failures: dict[K, int] = {}  # guarded by _lock; item -> failures counted

    @property
    def base(self) -> float:
        """The delay after the first failure."""
        return self._base

    @property
    def cap(self) -> float:
        """The longest delay."""
        return self._cap

    def when(self, item: K) -> float:
        with self._lock:
            exponent = self._failures.get(item, 0)
            self._failures[item] = exponent + 1
        return exponential_delay(self._base, exponent, self._cap)

    def forget(self, item: K) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: K) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[K]):
    """``fast_delay`` for each of an item's first ``max_fast_attempts``
    failures, ``slow_delay`` after that. Thread-safe; forget items when done."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        if not (fast_delay >= 0.0 and slow_delay >= 0.0):
            raise ValueError("delays must not be negative")
        if max_fast_attempts < 0:
            raise ValueError(f"max_fast_attempts must not be negative, got {max_fast_attempts}")
        self._fast = fast_delay
        self._slow = slow_delay
        self._max_fast = max_fast_attempts
        self._lock = threading.Lock()
        self._failures: dict[K, int] = {}  # guarded by _lock; item -> failures counted

    def when(self, item: K) -> float:
        with self._lock:
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
        return self._fast if failures <= self._max_fast else self._slow

    def forget(self, item: K) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: K) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter:
    """One token bucket for all items: ``burst`` calls go at once, then one
    every ``1 / qps`` seconds.

    Each :meth:`when` reserves a token as ``golang.org/x/time/rate``'s
    ``Reserve()`` does: the bucket refills at ``qps`` tokens a second up to
    ``burst``; taking a token from an empty bucket borrows it (the count goes
    below zero) and the answer is the time until the bucket is back at zero.
    A delay answered is never taken back, so callers must wait it.
    ``qps=math.inf`` never delays. Items are ignored: :meth:`forget` does
    nothing and :meth:`num_requeues` is 0.

    Thread-safe: one lock guards the token count and the time of the last
    reservation; the clock is read outside it.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock = REAL_CLOCK) -> None:
        if not qps > 0.0:
            raise ValueError(f"qps must be positive, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self._qps = qps
        self._burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)  # guarded by _lock; may be negative (borrowed)
        self._last = clock.now()  # guarded by _lock; when _tokens was last brought up to date

    @property
    def qps(self) -> float:
        return self._qps

    @property
    def burst(self) -> int:
        return self._burst

    def when(self, item: object = None) -> float:
        if math.isinf(self._qps):
            return 0.0
        now = self._clock.now()
        with self._lock:
            last = min(self._last, now)  # a clock that went back refills nothing
            tokens = min(float(self._burst), self._tokens + (now - last) * self._qps)
            tokens -= 1.0
            self._tokens = tokens
            self._last = now
        return -tokens / self._qps if tokens < 0.0 else 0.0

    def forget(self, item: object = None) -> None:
        pass

    def num_requeues(self, item: object = None) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """The longest delay any of ``limiters`` answers; every one of them is
    asked (so each counts the failure). :meth:`num_requeues` is the largest
    count, :meth:`forget` forgets in all. With a bucket among them, the bucket's
    burst can appear exceeded when items were held back longer by another
    limiter (as in client-go). Thread-safe when the limiters are."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        self._limiters: tuple[RateLimiter[K], ...] = limiters

    @property
    def limiters(self) -> tuple[RateLimiter[K], ...]:
        return self._limiters

    def when(self, item: K) -> float:
        delay = 0.0
        for limiter in self._limiters:
            delay = max(delay, limiter.when(item))
        return delay

    def forget(self, item: K) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: K) -> int:
        return max((limiter.num_requeues(item) for limiter in self._limiters), default=0)


def default_controller_rate_limiter(*, clock: Clock = REAL_CLOCK) -> RateLimiter[Any]:
    """client-go's ``DefaultControllerRateLimiter``: per item 5 ms doubling to
    1000 s, and overall at most 10 re-adds a second after a burst of 100 (the
    bucket's time from ``clock``)."""
    return MaxOfRateLimiter[Any](
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )
