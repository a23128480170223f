"""The election record kept in a Lease, and the pure decisions made on it.

A :class:`LeaderElectionRecord` is what a Lease's ``spec`` says: who holds it,
for how long, since when, last renewed when, and how many times it changed
hands. Candidates never trust the timestamps in it (they come from another
machine's clock); they only notice that the record *changed*. Each candidate
keeps an :class:`ObservedRecord`: the record, its ``resourceVersion`` and the
local :class:`~informers.util.clock.Clock` time at which this candidate first saw
that record. A holder is gone once its record has stayed unchanged for a lease
duration *by the observer's clock* (:func:`is_expired`). That makes the
protocol immune to clock offsets between machines (though not to clocks that
run at different rates: see the guide).

Everything here is pure (no I/O, no clock reads, no locks): the functions are
what :class:`~informers.toolkit.leaderelection.Candidate` decides with, and what the
property tests check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from informers.toolkit.leaderelection.errors import InvalidLeaseRecordError

__all__ = [
    "MICRO_TIME_FORMAT",
    "LeaderElectionRecord",
    "ObservedRecord",
    "expires_at",
    "format_micro_time",
    "is_expired",
    "lease_duration_seconds",
    "may_acquire",
    "next_renew_time",
    "observe",
    "parse_micro_time",
]

#: The ``strftime`` pattern of Kubernetes' ``MicroTime`` (RFC 3339, always six
#: fractional digits, UTC): Go's ``2006-01-02T15:04:05.000000Z07:00`` in UTC.
MICRO_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_micro_time(when: datetime) -> str:
    """``when`` as a ``MicroTime`` string, e.g. ``2024-05-01T12:00:00.000123Z``.
    A naive datetime is taken to be UTC."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    utc = when.astimezone(UTC)
    # by hand rather than strftime: "%Y" is not zero-padded below year 1000 on glibc
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def parse_micro_time(text: str) -> datetime:
    """An RFC 3339 timestamp (``MicroTime`` or plain ``Time``, ``Z`` or an
    offset, any number of fractional digits beyond six truncated) as an aware
    UTC datetime. Raises :class:`ValueError` for anything else."""
    if not isinstance(text, str) or "T" not in text.upper():
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}")
    value = text.upper()  # RFC 3339 allows a lower-case "t" and "z"
    head, sep, tail = value.partition(".")
    if sep:  # Go writes up to nine fractional digits; datetime takes six
        digits = len(tail) - len(tail.lstrip("0123456789"))
        tail = tail[: min(digits, 6)] + tail[digits:]
        value = f"{head}.{tail}" if digits else head + tail
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an RFC 3339 timestamp: {text!r}") from None
    if parsed.tzinfo is None:
        raise ValueError(f"RFC 3339 timestamp without a time zone: {text!r}")
    return parsed.astimezone(UTC)


def lease_duration_seconds(lease_duration: float) -> int:
    """The ``leaseDurationSeconds`` a holder with this lease duration writes:
    rounded *up* to whole seconds (never below 1), so that no reader waits
    less than the holder meant. (client-go truncates.)"""
    return max(1, math.ceil(lease_duration))


def next_renew_time(previous: datetime | None, now: datetime) -> datetime:
    """``now`` (at microsecond precision), or one microsecond after
    ``previous`` when the clock has not moved past it: two renewals by one
    holder never write the same record, so every observer sees each one as
    a change."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if previous is not None and now <= previous:
        return previous + timedelta(microseconds=1)
    return now


def _optional_int(spec: Mapping[str, Any], field: str) -> int:
    value = spec.get(field)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidLeaseRecordError(f"spec.{field} must be an integer, not {value!r}")
    return value


def _optional_time(spec: Mapping[str, Any], field: str) -> datetime | None:
    value = spec.get(field)
    if value is None:
        return None
    try:
        return parse_micro_time(value)
    except ValueError as exc:
        raise InvalidLeaseRecordError(f"spec.{field}: {exc}") from exc


@dataclass(frozen=True)
class LeaderElectionRecord:
    """The election state in a Lease ``spec`` (client-go's
    ``LeaderElectionRecord``). Immutable; equality compares every field, and
    is what "the record changed" means.

    ``holder_identity`` is empty when nobody holds the Lease (never held, or
    released). Timestamps are aware UTC datetimes, informational only: no
    decision reads them.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    leader_transitions: int = 0

    def to_spec(self) -> dict[str, Any]:
        """The Lease ``spec`` fields of this record (camelCase, timestamps in
        ``MicroTime`` format; an unset timestamp is left out)."""
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = format_micro_time(self.renew_time)
        return spec

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any] | None) -> LeaderElectionRecord:
        """The record in a Lease ``spec`` (missing fields are zero values, as
        in client-go). Raises :class:`InvalidLeaseRecordError` for a field of
        the wrong type or a timestamp that does not parse."""
        if spec is None:
            return cls()
        if not isinstance(spec, Mapping):
            raise InvalidLeaseRecordError(f"spec must be an object, not {type(spec).__name__}")
        holder = spec.get("holderIdentity")
        if holder is not None and not isinstance(holder, str):
            raise InvalidLeaseRecordError(f"spec.holderIdentity must be a string, not {holder!r}")
        return cls(
            holder_identity=holder or "",
            lease_duration_seconds=_optional_int(spec, "leaseDurationSeconds"),
            acquire_time=_optional_time(spec, "acquireTime"),
            renew_time=_optional_time(spec, "renewTime"),
            leader_transitions=_optional_int(spec, "leaseTransitions"),
        )


@dataclass(frozen=True)
class ObservedRecord:
    """A record as one candidate saw it: the record, the Lease's
    ``resourceVersion`` it came with, and ``observed_at``, the candidate's
    own clock (:meth:`Clock.now <informers.util.clock.Clock.now>`) when it first
    saw this record. Immutable."""

    record: LeaderElectionRecord
    resource_version: str
    observed_at: float


def observe(
    previous: ObservedRecord | None,
    record: LeaderElectionRecord,
    resource_version: str,
    now: float,
) -> ObservedRecord:
    """The observation after reading (or writing) ``record`` at local time
    ``now``: a record equal to the one observed before keeps its
    ``observed_at`` (nobody renewed it), any other record is observed from
    ``now``. The resource version is always the new one."""
    if previous is not None and previous.record == record:
        return ObservedRecord(record, resource_version, previous.observed_at)
    return ObservedRecord(record, resource_version, now)


def expires_at(observed: ObservedRecord, lease_duration: float) -> float:
    """The local time from which the observed holder counts as gone: a lease
    duration after the record was first seen, where the lease duration is
    the longer of the observer's own and the one the holder wrote
    (``leaseDurationSeconds``), so a holder is never cut short of what it
    announced. (client-go uses the holder's value only.)"""
    return observed.observed_at + max(lease_duration, float(observed.record.lease_duration_seconds))


def is_expired(observed: ObservedRecord, lease_duration: float, now: float) -> bool:
    """Whether the observed record has gone unchanged for a whole lease
    duration at local time ``now`` (see :func:`expires_at`; the boundary
    itself counts as expired)."""
    return now >= expires_at(observed, lease_duration)


def may_acquire(
    observed: ObservedRecord | None, identity: str, lease_duration: float, now: float
) -> bool:
    """Whether candidate ``identity`` may write itself into the Lease at
    local time ``now``: there is no Lease yet (``observed`` is ``None``),
    nobody holds it, it holds it already, or the holder's record expired
    (:func:`is_expired`). Writing still needs the observed resource version
    to be current (the API server's optimistic concurrency decides races)."""
    if observed is None:
        return True
    holder = observed.record.holder_identity
    return not holder or holder == identity or is_expired(observed, lease_duration, now)
