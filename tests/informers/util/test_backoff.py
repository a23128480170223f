"""informers.util.backoff: the exponential policy, its jitter and its reset, on a
fake clock (exact values), plus properties over any parameters."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.cache.reflector import BackoffManager
from informers.testing import FakeClock
from informers.util.backoff import ExponentialBackoff, exponential_delay, jittered


def test_doubles_to_the_cap_without_jitter() -> None:
    clock = FakeClock()
    b = ExponentialBackoff(0.8, 30.0, jitter=0.0, clock=clock)
    delays = [b.next_delay() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]


def test_resets_after_a_quiet_period() -> None:
    clock = FakeClock()
    b = ExponentialBackoff(1.0, 60.0, jitter=0.0, reset_after=120.0, clock=clock)
    assert [b.next_delay(), b.next_delay(), b.next_delay()] == [1.0, 2.0, 4.0]
    clock.advance(120.0)  # not more than reset_after: keeps growing
    assert b.next_delay() == 8.0
    clock.advance(120.5)
    assert b.next_delay() == 1.0


def test_reset_starts_over() -> None:
    b = ExponentialBackoff(0.5, 10.0, jitter=0.0, clock=FakeClock())
    b.next_delay()
    b.next_delay()
    b.reset()
    assert b.next_delay() == 0.5


def test_jitter_is_bounded_by_the_factor() -> None:
    b = ExponentialBackoff(1.0, 1.0, jitter=1.0, clock=FakeClock(), rng=random.Random(7))
    delays = [b.next_delay() for _ in range(200)]
    assert all(1.0 <= d < 2.0 for d in delays)
    assert len(set(delays)) > 100  # really random


def test_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="negative"):
        ExponentialBackoff(-1.0)
    with pytest.raises(ValueError, match="factor"):
        ExponentialBackoff(factor=0.5)


def test_reflector_alias_is_the_same_policy() -> None:
    assert BackoffManager is ExponentialBackoff


@given(
    initial=st.floats(0.001, 10.0),
    cap=st.floats(0.001, 1000.0),
    factor=st.floats(1.0, 4.0),
    jitter=st.floats(0.0, 2.0),
    calls=st.integers(1, 60),
    seed=st.integers(0, 2**32),
)
def test_delays_stay_within_bounds_and_never_shrink(  # noqa: PLR0917
    initial: float, cap: float, factor: float, jitter: float, calls: int, seed: int
) -> None:
    b = ExponentialBackoff(
        initial, cap, factor=factor, jitter=jitter, clock=FakeClock(), rng=random.Random(seed)
    )
    for _ in range(calls):
        d = b.next_delay()
        assert min(initial, cap) - 1e-12 <= d <= cap * (1 + jitter) + 1e-9
    # without jitter the sequence is monotone
    plain = ExponentialBackoff(initial, cap, factor=factor, jitter=0.0, clock=FakeClock())
    seq = [plain.next_delay() for _ in range(calls)]
    assert seq == sorted(seq)


@given(
    base=st.floats(1e-6, 10.0),
    cap=st.floats(1e-6, 1e6),
    failures=st.integers(-5, 10**12),
    factor=st.floats(1.0, 10.0),
)
def test_exponential_delay_is_capped_and_overflow_safe(
    base: float, cap: float, failures: int, factor: float
) -> None:
    d = exponential_delay(base, failures, cap, factor=factor)
    assert 0.0 < d <= max(cap, 0.0) or d == min(base, cap)
    assert d <= cap


def test_exponential_delay_exact_values() -> None:
    assert exponential_delay(0.005, 0, 1000.0) == 0.005
    assert exponential_delay(0.005, 1, 1000.0) == 0.01
    assert exponential_delay(0.005, 10, 1000.0) == pytest.approx(5.12)
    assert exponential_delay(0.005, 10**9, 1000.0) == 1000.0
    assert exponential_delay(0.0, 5, 10.0) == 0.0


@given(duration=st.floats(0.0, 1e6), factor=st.floats(-1.0, 3.0), seed=st.integers(0, 99))
def test_jittered_bounds(duration: float, factor: float, seed: int) -> None:
    d = jittered(duration, factor, random.Random(seed))
    if factor <= 0:
        assert d == duration
    else:
        assert duration <= d <= duration * (1 + factor)
