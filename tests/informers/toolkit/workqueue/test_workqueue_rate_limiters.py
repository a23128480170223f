"""Rate limiters: exact delays, driven by a FakeClock where time matters."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_sequence_cap_and_forget() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.001, 1.0)
    delays = [limiter.when("a") for _ in range(12)]
    assert delays == [0.001 * 2**n for n in range(10)] + [1.0, 1.0]
    assert limiter.num_requeues("a") == 12
    assert limiter.when("b") == 0.001  # per item
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.001
    limiter.forget("never-seen")


def test_exponential_defaults_are_client_gos() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    assert (limiter.base, limiter.cap) == (0.005, 1000.0)
    assert [limiter.when("x") for _ in range(3)] == [0.005, 0.01, 0.02]


def test_exponential_is_overflow_safe_at_huge_failure_counts() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.005, 1000.0
    )
    for _ in range(5000):  # 2**5000 overflows a float
        delay = limiter.when("a")
    assert delay == 1000.0
    assert limiter.num_requeues("a") == 5000


@given(st.integers(min_value=0, max_value=2000), st.sampled_from([0.001, 0.005, 0.3]))
def test_exponential_nth_delay_is_base_times_two_to_n_capped(failures: int, base: float) -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        base, 1000.0
    )
    for _ in range(failures):
        limiter.when("a")
    delay = limiter.when("a")
    expected = 1000.0 if failures >= 64 else min(1000.0, base * 2.0**failures)
    assert delay == expected
    assert limiter.num_requeues("a") == failures + 1


def test_exponential_rejects_negative_delays() -> None:
    with pytest.raises(ValueError, match="negative"):
        ItemExponentialFailureRateLimiter(-1.0, 1.0)
    with pytest.raises(ValueError, match="negative"):
        ItemExponentialFailureRateLimiter(1.0, math.nan)


def test_fast_slow_switch_and_forget() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.1, 5.0, 3)
    assert [limiter.when("a") for _ in range(5)] == [0.1, 0.1, 0.1, 5.0, 5.0]
    assert limiter.num_requeues("a") == 5
    assert limiter.when("b") == 0.1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.1


def test_fast_slow_with_no_fast_attempts_is_always_slow() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.1, 5.0, 0)
    assert limiter.when("a") == 5.0
    with pytest.raises(ValueError, match="max_fast_attempts"):
        ItemFastSlowRateLimiter(0.1, 5.0, -1)


def test_bucket_burst_then_one_per_interval() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=4.0, burst=3, clock=clock)
    assert [limiter.when("x") for _ in range(3)] == [0.0, 0.0, 0.0]
    # empty: each further reservation waits one more 1/qps
    assert [limiter.when("x") for _ in range(3)] == [0.25, 0.5, 0.75]
    assert limiter.num_requeues("x") == 0
    limiter.forget("x")  # no effect on a shared bucket
    # the borrowed tokens are paid back before new ones are free
    clock.advance(0.75)
    assert limiter.when("y") == 0.25
    # a long quiet period refills to burst, never more
    clock.advance(100.0)
    assert [limiter.when("z") for _ in range(4)] == [0.0, 0.0, 0.0, 0.25]


def test_bucket_refills_at_qps() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=2.0, burst=1, clock=clock)
    assert limiter.when(None) == 0.0
    clock.advance(0.5)  # one token back
    assert limiter.when(None) == 0.0
    clock.advance(0.25)  # half a token
    assert limiter.when(None) == 0.25


def test_bucket_defaults_and_bad_input() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(clock=clock)
    assert (limiter.qps, limiter.burst) == (10.0, 100)
    assert all(limiter.when(i) == 0.0 for i in range(100))
    assert limiter.when(100) == pytest.approx(0.1)
    assert limiter.when(101) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="qps"):
        BucketRateLimiter(0.0, 1)
    with pytest.raises(ValueError, match="burst"):
        BucketRateLimiter(1.0, 0)
    unlimited = BucketRateLimiter(math.inf, 1)
    assert [unlimited.when(i) for i in range(5)] == [0.0] * 5


def test_bucket_is_thread_safe() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=8.0, burst=10, clock=clock)
    delays: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = [limiter.when(None) for _ in range(100)]
        with lock:
            delays.extend(mine)

    threads = [threading.Thread(target=worker, name=f"test-bucket-{i}") for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    # every reservation got its own slot: 10 free, then 1/8 s apart
    assert sorted(delays) == [0.0] * 10 + [n / 8 for n in range(1, 391)]


def test_max_of_takes_the_longest_and_every_limiter_counts() -> None:
    clock = FakeClock()
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.25, 100.0
    )
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.5, 3.0, 2)
    bucket = BucketRateLimiter(qps=1.0, burst=1, clock=clock)
    limiter = MaxOfRateLimiter(exponential, fast_slow, bucket)
    assert limiter.limiters == (exponential, fast_slow, bucket)
    # 1: max(0.25, 0.5, 0) ; 2: max(0.5, 0.5, 1) ; 3: max(1, 3, 2) ; 4: max(2, 3, 3)
    assert [limiter.when("a") for _ in range(4)] == [0.5, 1.0, 3.0, 3.0]
    assert exponential.num_requeues("a") == fast_slow.num_requeues("a") == 4
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert exponential.num_requeues("a") == fast_slow.num_requeues("a") == 0
    empty: MaxOfRateLimiter[str] = MaxOfRateLimiter()
    assert (empty.when("a"), empty.num_requeues("a")) == (0.0, 0)


def test_default_controller_rate_limiter_is_max_of_exponential_and_bucket() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    assert isinstance(limiter, RateLimiter)
    assert isinstance(limiter, MaxOfRateLimiter)
    exponential, bucket = limiter.limiters
    assert isinstance(exponential, ItemExponentialFailureRateLimiter)
    assert (exponential.base, exponential.cap) == (0.005, 1000.0)
    assert isinstance(bucket, BucketRateLimiter)
    assert (bucket.qps, bucket.burst) == (10.0, 100)
    # per item: 5 ms doubling
    assert [limiter.when("a") for _ in range(3)] == [0.005, 0.01, 0.02]
    # overall: after the burst of 100 (3 used above), the bucket dominates
    delays = [limiter.when(f"k{i}") for i in range(98)]
    assert delays == [0.005] * 97 + [pytest.approx(0.1)]


def test_every_limiter_speaks_the_protocol() -> None:
    clock = FakeClock()
    for limiter in [
        ItemExponentialFailureRateLimiter(),
        ItemFastSlowRateLimiter(0.1, 1.0, 1),
        BucketRateLimiter(clock=clock),
        MaxOfRateLimiter(),
        default_controller_rate_limiter(),
    ]:
        assert isinstance(limiter, RateLimiter)
