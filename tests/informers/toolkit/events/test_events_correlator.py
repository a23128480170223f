"""informers.toolkit.events.correlator on a fake clock: client-go's
aggregation (10 messages in 10 minutes), series counting and the per-object
token bucket (burst 25, one more every 5 minutes), checked on examples and
against models with hypothesis."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing import FakeClock
from informers.toolkit.events import (
    AGGREGATE_MESSAGE_PREFIX,
    Correlation,
    EventCorrelator,
    Occurrence,
    TokenBucket,
)
from informers.toolkit.events.correlator import event_name

WALL = 1_790_000_000.0


def _ref(name: str = "web", namespace: str = "default", uid: str = "") -> dict[str, str]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
    }


def _occ(
    message: str = "m",
    *,
    name: str = "web",
    reason: str = "Synced",
    event_type: str = "Normal",
    time: float = WALL,
    **extra: Any,
) -> Occurrence:
    return Occurrence(
        _ref(name), event_type, reason, message, reason, "ctl", "ctl-host", time, **extra
    )


def _correlate(c: EventCorrelator, occ: Occurrence) -> Correlation:
    result = c.correlate(occ)
    assert result is not None
    return result


def test_a_repeat_is_the_next_of_a_series() -> None:
    c = EventCorrelator(FakeClock())
    first = _correlate(c, _occ(time=WALL))
    second = _correlate(c, _occ(time=WALL + 5))
    assert first.count == 1
    assert (second.count, second.name, second.key) == (2, first.name, first.key)
    assert (second.first_time, second.last_time) == (WALL, WALL + 5)
    other = _correlate(c, _occ("other message", time=WALL + 6))
    assert other.count == 1
    assert other.name != first.name


def test_distinct_series_never_share_a_name_even_at_one_instant() -> None:
    c = EventCorrelator(FakeClock(), spam_burst=100)
    names = {_correlate(c, _occ(reason=f"R{i}")).name for i in range(50)}
    assert len(names) == 50
    assert all(n.startswith("web.") for n in names)


def test_event_name_falls_back_to_a_uuid_for_invalid_names() -> None:
    assert event_name("web", 255) == "web.ff"
    odd = event_name("system:controller:Foo", 1)
    assert len(odd) == 36
    assert odd.count("-") == 4


def test_the_tenth_distinct_message_is_aggregated() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock)
    plain = [_correlate(c, _occ(f"message {i}")) for i in range(9)]
    assert all(not r.aggregated and r.count == 1 for r in plain)
    tenth = _correlate(c, _occ("message 9"))
    assert tenth.aggregated
    assert tenth.occurrence.message == AGGREGATE_MESSAGE_PREFIX + "message 9"
    assert tenth.count == 1
    # every later message of the group is the next of the aggregate series
    clock.advance(30)
    later = _correlate(c, _occ("message 10"))
    assert later.aggregated
    assert (later.key, later.name, later.count) == (tenth.key, tenth.name, 2)
    # another reason is another group
    assert not _correlate(c, _occ("message 11", reason="Other")).aggregated


def test_a_quiet_group_starts_over() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock)
    for i in range(9):
        _correlate(c, _occ(f"message {i}"))
    clock.advance(601)  # past the 600 s interval
    assert not _correlate(c, _occ("message 9")).aggregated


def test_spam_filter_burst_then_one_every_five_minutes() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock)
    results = [c.correlate(_occ(f"m{i % 3}")) for i in range(40)]
    assert sum(r is not None for r in results) == 25
    assert all(r is None for r in results[25:])
    clock.advance(299)
    assert c.correlate(_occ("m0")) is None
    clock.advance(1)
    allowed = c.correlate(_occ("m0"))
    assert allowed is not None
    # the dropped repeats were counted: the written count is the true one
    assert allowed.count == 1 + sum(1 for i in range(40) if i % 3 == 0) + 1
    # another object, or another type, has its own bucket
    assert c.correlate(_occ("m0", name="other")) is not None
    assert c.correlate(_occ("m0", event_type="Warning")) is not None


def test_caches_are_bounded() -> None:
    c = EventCorrelator(FakeClock(), cache_size=8)
    first = _correlate(c, _occ(name="obj-0"))
    for i in range(1, 20):
        _correlate(c, _occ(name=f"obj-{i}"))
    again = _correlate(c, _occ(name="obj-0"))
    assert again.count == 1  # forgotten: a new series
    assert again.name != first.name


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        EventCorrelator(FakeClock(), spam_burst=0)


@given(
    st.integers(1, 30),
    st.floats(0.001, 10.0),
    st.lists(st.floats(0.0, 100.0, allow_nan=False), max_size=80),
)
def test_token_bucket_never_exceeds_burst_plus_refill(
    burst: int, qps: float, gaps: list[float]
) -> None:
    bucket = TokenBucket(burst, qps, 0.0)
    now = 0.0
    accepted = 0
    for gap in gaps:
        now += gap
        accepted += bucket.try_accept(now)
        assert accepted <= burst + math.floor(now * qps + 1e-9)
    # with no time passing, a full bucket gives exactly burst tokens
    fresh = TokenBucket(burst, qps, 0.0)
    assert sum(fresh.try_accept(0.0) for _ in range(burst + 5)) == burst


OBJECTS = st.sampled_from(["a", "b"])
MESSAGES = st.sampled_from(["x", "y", "z"])  # fewer than 10: never aggregated
STEPS = st.lists(st.tuples(OBJECTS, MESSAGES, st.sampled_from([0.0, 1.0, 400.0])), max_size=60)


@given(STEPS)
def test_series_and_spam_match_a_model(steps: list[tuple[str, str, float]]) -> None:
    clock = FakeClock()
    c = EventCorrelator(clock, spam_burst=5, spam_qps=1 / 300)
    counts: dict[tuple[str, str], int] = {}
    names: dict[tuple[str, str], str] = {}
    tokens = {"a": 5.0, "b": 5.0}
    last = {"a": clock.now(), "b": clock.now()}
    for obj, message, gap in steps:
        clock.advance(gap)
        now = clock.now()
        result = c.correlate(_occ(message, name=obj, time=WALL + now))
        counts[obj, message] = counts.get((obj, message), 0) + 1  # counted even if dropped
        tokens[obj] = min(5.0, tokens[obj] + (now - last[obj]) / 300)
        last[obj] = now
        if tokens[obj] >= 1.0:
            tokens[obj] -= 1.0
            assert result is not None
            assert result.count == counts[obj, message]
            assert not result.aggregated
            assert names.setdefault((obj, message), result.name) == result.name
        else:
            assert result is None
    assert len(set(names.values())) == len(names)  # one name per series


@given(st.lists(st.integers(0, 40), min_size=1, max_size=120), st.integers(2, 10))
def test_a_group_never_makes_more_than_max_events_series(messages: list[int], limit: int) -> None:
    clock = FakeClock()
    c = EventCorrelator(clock, spam_burst=1000, aggregate_max_events=limit)
    names = set()
    aggregates = set()
    for m in messages:
        clock.advance(1)
        result = _correlate(c, _occ(f"message {m}"))
        names.add(result.name)
        if result.aggregated:
            aggregates.add(result.name)
            assert result.occurrence.message == f"{AGGREGATE_MESSAGE_PREFIX}message {m}"
    # limit - 1 plain series before the first aggregate, one aggregate after
    assert len(names) <= limit
    assert len(aggregates) <= 1
    assert bool(aggregates) == (len(set(messages)) >= limit)
    first = list(dict.fromkeys(messages))[: limit - 1]  # these keep their own series
    assert len(names) == len(first) + len(aggregates)
