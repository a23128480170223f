"""The election record, its MicroTime format, and the pure expiry decisions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.toolkit.leaderelection import (
    MICRO_TIME_FORMAT,
    InvalidLeaseRecordError,
    LeaderElectionRecord,
    ObservedRecord,
    expires_at,
    format_micro_time,
    is_expired,
    lease_duration_seconds,
    may_acquire,
    next_renew_time,
    observe,
    parse_micro_time,
)

T0 = datetime(2024, 5, 1, 12, 0, 0, 123, tzinfo=UTC)

# ------------------------------------------------------------------ MicroTime


def test_format_is_go_micro_time() -> None:
    assert format_micro_time(T0) == "2024-05-01T12:00:00.000123Z"
    assert format_micro_time(T0.replace(microsecond=0)) == "2024-05-01T12:00:00.000000Z"


def test_format_converts_to_utc_and_takes_naive_as_utc() -> None:
    plus2 = timezone(timedelta(hours=2))
    assert format_micro_time(datetime(2024, 5, 1, 14, 0, tzinfo=plus2)) == (
        "2024-05-01T12:00:00.000000Z"
    )
    assert format_micro_time(datetime(2024, 5, 1, 12, 0)) == "2024-05-01T12:00:00.000000Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T12:00:00.000123Z", T0),
        ("2024-05-01T12:00:00.000123456Z", T0),  # Go's nanoseconds, truncated
        ("2024-05-01T12:00:00Z", T0.replace(microsecond=0)),
        ("2024-05-01T14:00:00.000123+02:00", T0),
        ("2024-05-01t12:00:00.000123z", T0),
        ("2024-05-01T12:00:00.1Z", T0.replace(microsecond=100000)),
    ],
)
def test_parse_accepts_rfc3339(text: str, expected: datetime) -> None:
    parsed = parse_micro_time(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2024-05-01", "2024-05-01T12:00:00", "12:00Z"])
def test_parse_rejects_non_rfc3339(text: str) -> None:
    with pytest.raises(ValueError, match="RFC 3339"):
        parse_micro_time(text)


@given(st.datetimes(timezones=st.just(UTC)))
def test_micro_time_round_trips(when: datetime) -> None:
    text = format_micro_time(when)
    assert len(text) == len("2006-01-02T15:04:05.000000Z")
    assert datetime.strptime(text, MICRO_TIME_FORMAT).replace(tzinfo=UTC) == when
    assert parse_micro_time(text) == when


# --------------------------------------------------------------------- record

records = st.builds(
    LeaderElectionRecord,
    holder_identity=st.text(max_size=20),
    lease_duration_seconds=st.integers(0, 10**6),
    acquire_time=st.none() | st.datetimes(timezones=st.just(UTC)),
    renew_time=st.none() | st.datetimes(timezones=st.just(UTC)),
    leader_transitions=st.integers(0, 2**31 - 1),
)


@given(records)
def test_record_round_trips_through_a_spec(record: LeaderElectionRecord) -> None:
    assert LeaderElectionRecord.from_spec(record.to_spec()) == record


def test_to_spec_is_the_lease_spec() -> None:
    record = LeaderElectionRecord("a", 15, T0, T0 + timedelta(seconds=1), 3)
    assert record.to_spec() == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-05-01T12:00:00.000123Z",
        "renewTime": "2024-05-01T12:00:01.000123Z",
        "leaseTransitions": 3,
    }


def test_missing_fields_are_zero_values() -> None:
    assert LeaderElectionRecord.from_spec({}) == LeaderElectionRecord()
    assert LeaderElectionRecord.from_spec(None) == LeaderElectionRecord()
    assert LeaderElectionRecord.from_spec({"holderIdentity": None}) == LeaderElectionRecord()


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"holderIdentity": 7}, "holderIdentity"),
        ({"leaseDurationSeconds": "15"}, "leaseDurationSeconds"),
        ({"leaseDurationSeconds": True}, "leaseDurationSeconds"),
        ({"leaseTransitions": 1.5}, "leaseTransitions"),
        ({"renewTime": "soon"}, "renewTime"),
        ({"acquireTime": 12}, "acquireTime"),
    ],
)
def test_invalid_spec_fields_are_named(spec: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidLeaseRecordError, match=field):
        LeaderElectionRecord.from_spec(spec)


def test_a_spec_that_is_not_an_object() -> None:
    with pytest.raises(InvalidLeaseRecordError, match="spec must be an object"):
        LeaderElectionRecord.from_spec(["a"])  # type: ignore[arg-type]


def test_lease_duration_seconds_rounds_up() -> None:
    assert lease_duration_seconds(15.0) == 15
    assert lease_duration_seconds(1.5) == 2
    assert lease_duration_seconds(0.2) == 1


def test_next_renew_time_strictly_increases() -> None:
    assert next_renew_time(None, T0) == T0
    assert next_renew_time(T0 - timedelta(seconds=1), T0) == T0
    assert next_renew_time(T0, T0) == T0 + timedelta(microseconds=1)
    assert next_renew_time(T0 + timedelta(seconds=5), T0) == T0 + timedelta(
        seconds=5, microseconds=1
    )


# ------------------------------------------------------------------ decisions

HELD = LeaderElectionRecord("other", 1, T0, T0, 0)


def test_a_new_record_is_observed_from_now() -> None:
    first = observe(None, HELD, "1", 100.0)
    assert first == ObservedRecord(HELD, "1", 100.0)
    renewed = LeaderElectionRecord("other", 1, T0, T0 + timedelta(seconds=1), 0)
    assert observe(first, renewed, "2", 105.0) == ObservedRecord(renewed, "2", 105.0)


def test_an_unchanged_record_keeps_its_observation_time() -> None:
    first = observe(None, HELD, "1", 100.0)
    # a metadata-only write (new resourceVersion, same record) is not a renewal
    assert observe(first, HELD, "2", 105.0) == ObservedRecord(HELD, "2", 100.0)


def test_expiry_is_exactly_a_lease_duration_after_observation() -> None:
    observed = ObservedRecord(HELD, "1", 100.0)
    assert expires_at(observed, 1.0) == 101.0
    assert not is_expired(observed, 1.0, 100.999999)
    assert is_expired(observed, 1.0, 101.0)


def test_the_holders_longer_lease_duration_is_honoured() -> None:
    observed = ObservedRecord(LeaderElectionRecord("other", 60, T0, T0, 0), "1", 100.0)
    assert expires_at(observed, 15.0) == 160.0
    short = ObservedRecord(LeaderElectionRecord("other", 1, T0, T0, 0), "1", 100.0)
    assert expires_at(short, 15.0) == 115.0  # and our own, when longer


def test_may_acquire() -> None:
    observed = ObservedRecord(HELD, "1", 100.0)
    assert may_acquire(None, "me", 1.0, 100.0)  # no Lease yet
    assert not may_acquire(observed, "me", 1.0, 100.5)
    assert may_acquire(observed, "me", 1.0, 101.0)
    assert may_acquire(observed, "other", 1.0, 100.5)  # its own
    free = ObservedRecord(LeaderElectionRecord("", 1, T0, T0, 2), "1", 100.0)
    assert may_acquire(free, "me", 1.0, 100.0)  # released


@given(
    st.lists(st.tuples(st.booleans(), st.floats(0, 5, allow_nan=False)), max_size=30),
    st.floats(0.1, 10, allow_nan=False),
)
def test_observation_never_predates_the_last_change(
    steps: list[tuple[bool, float]], lease_duration: float
) -> None:
    """Reading a changed record re-arms the expiry from the time of the read;
    reading an unchanged one never moves it."""
    now, renewals = 0.0, 0
    observed: ObservedRecord | None = None
    last_change = 0.0
    for changed, dt in steps:
        now += dt
        if changed or observed is None:
            renewals += 1
            last_change = now
        record = LeaderElectionRecord("h", 1, T0, T0 + timedelta(microseconds=renewals), 0)
        observed = observe(observed, record, str(renewals), now)
        assert observed.observed_at == last_change
        # The same sum as expires_at (a difference can round the other way).
        assert is_expired(observed, lease_duration, now) == (
            now >= last_change + max(lease_duration, 1)
        )
