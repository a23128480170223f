"""The event correlator: what an :class:`~informers.toolkit.events.EventRecorder`
makes of each occurrence before anything is written, with client-go's rules
(``tools/record``'s ``EventCorrelator``) and defaults.

For each :class:`Occurrence`, in order:

1. **Aggregation.** Occurrences that differ only in their message are
   *similar* (same object, type, reason, action, related object, reporting
   controller and instance). Once ``max_events`` (10) different messages of
   one similar group were seen, each less than ``max_interval`` (600 s) after
   the one before, any other message is counted as one aggregate event whose
   message is ``"(combined from similar events): "`` and the latest message.
   A group quiet for longer than ``max_interval`` starts over. (client-go
   forgets an arbitrary one of the messages at that point, so a repeat of a
   later message may start yet another series; here the first
   ``max_events - 1`` messages keep their series and every other message
   goes to the aggregate, so a group never makes more than ``max_events``
   series.)
2. **Counting.** An occurrence identical to one seen before (same message
   too, or the same aggregate) is the next of a *series*: it keeps the first
   one's Event name and first time, and its count grows by one. The
   recorder writes it as an update of that Event (``count``/``lastTimestamp``
   on core/v1, ``series`` on events.k8s.io/v1) instead of a new object.
3. **Spam filter.** Each object (and reporting controller, instance and event
   type) has a token bucket of ``burst`` (25) tokens refilled at ``qps`` (one
   every 300 s). An occurrence that finds the bucket empty is dropped
   (:meth:`EventCorrelator.correlate` returns ``None``); it was counted in
   step 2 all the same, so the next one written carries the true count.

The caches (similar groups, series, buckets) are least-recently-used maps of
``cache_size`` (4096) entries each, so memory stays bounded however many
objects there are.

Time: the aggregation interval and the buckets run on the injected
:class:`~informers.util.clock.Clock` (monotonic; tests use
:class:`~informers.testing.fake.FakeClock`); the timestamps written into
Events are the occurrences' wall-clock ``time``.

Not thread-safe: one caller at a time (the recorder calls it under its lock).
Pure otherwise: no I/O, never blocks.
"""

from __future__ import annotations

import re
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from informers.util.clock import REAL_CLOCK, Clock

__all__ = [
    "AGGREGATE_MESSAGE_PREFIX",
    "DEFAULT_AGGREGATE_INTERVAL",
    "DEFAULT_AGGREGATE_MAX_EVENTS",
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_SPAM_BURST",
    "DEFAULT_SPAM_QPS",
    "Correlation",
    "EventCorrelator",
    "Occurrence",
    "TokenBucket",
    "event_name",
]

#: Different messages of one similar group before they are aggregated.
DEFAULT_AGGREGATE_MAX_EVENTS = 10
#: Seconds a similar group is remembered after its last occurrence.
DEFAULT_AGGREGATE_INTERVAL = 600.0
#: Occurrences per object the spam filter lets through at once.
DEFAULT_SPAM_BURST = 25
#: The spam filter's refill rate: one token every five minutes.
DEFAULT_SPAM_QPS = 1.0 / 300.0
#: Entries of each of the correlator's caches.
DEFAULT_CACHE_SIZE = 4096
#: The message prefix of an aggregate event.
AGGREGATE_MESSAGE_PREFIX = "(combined from similar events): "

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

K = TypeVar("K")
V = TypeVar("V")


def event_name(object_name: str, unix_nanos: int) -> str:
    """The name of a new Event about ``object_name``: ``<name>.<nanos in
    hex>`` as client-go makes it, or a random UUID when that is not a valid
    DNS subdomain (the object's own name may not be one)."""
    name = f"{object_name}.{unix_nanos:x}"
    if len(name) <= 253 and _DNS_SUBDOMAIN.fullmatch(name):
        return name
    return str(uuid.uuid4())


@dataclass(slots=True)
class Occurrence:
    """One call of :meth:`EventRecorder.event
    <informers.toolkit.events.EventRecorder.event>`: what happened to which
    object, who reports it, and when (``time``: wall-clock seconds since the
    epoch). ``regarding`` and ``related`` are ``ObjectReference`` dicts
    (:func:`~informers.toolkit.controllerutil.object_reference`). Treat it
    as immutable (it is not frozen only because that costs every call)."""

    regarding: Mapping[str, str]
    type: str
    reason: str
    message: str
    action: str
    reporting_controller: str
    reporting_instance: str
    time: float
    related: Mapping[str, str] | None = None

    @property
    def namespace(self) -> str:
        """The Event's namespace: the object's, or ``default`` for a
        cluster-scoped object."""
        return self.regarding.get("namespace") or "default"

    def describe(self) -> str:
        """``Kind namespace/name reason`` for logs (never the message, which
        may quote anything)."""
        ref = self.regarding
        where = f"{ref['namespace']}/{ref['name']}" if ref.get("namespace") else ref["name"]
        return f"{ref.get('kind', '?')} {where} {self.reason}"


@dataclass(slots=True)
class Correlation:
    """What to write for an occurrence. ``key`` identifies the series (two
    correlations with one key update one Event); ``name`` is the Event's
    name; ``count`` the occurrences of the series so far (1: a new Event);
    ``first_time``/``last_time`` wall-clock seconds of its first and latest
    occurrence; ``occurrence`` the occurrence, its message replaced when
    ``aggregated``."""

    key: tuple[object, ...]
    name: str
    count: int
    first_time: float
    last_time: float
    occurrence: Occurrence
    aggregated: bool = False


class TokenBucket:
    """A passive token bucket (client-go's ``TokenBucketPassiveRateLimiter``):
    full (``burst`` tokens) at first, refilled at ``qps`` tokens a second up
    to ``burst``; :meth:`try_accept` takes a token if there is one. Time is
    passed in. Not thread-safe."""

    __slots__ = ("_burst", "_last", "_qps", "_tokens")

    def __init__(self, burst: int, qps: float, now: float) -> None:
        self._burst = float(burst)
        self._qps = qps
        self._tokens = float(burst)
        self._last = now

    def try_accept(self, now: float) -> bool:
        """Take one token at time ``now``; ``False`` when there is none."""
        elapsed = max(0.0, now - self._last)
        self._last = max(self._last, now)
        self._tokens = min(self._burst, self._tokens + elapsed * self._qps)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class _LRU(Generic[K, V]):
    """A least-recently-used map of at most ``size`` entries. Values are
    mutable records, changed in place: a hit only refreshes the entry."""

    __slots__ = ("_data", "_size")

    def __init__(self, size: int) -> None:
        self._data: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recently used), or ``None``."""
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def add(self, key: K, value: V) -> None:
        """Add an entry ``get`` did not find, evicting the least recently used."""
        data = self._data
        data[key] = value
        if len(data) > self._size:
            data.popitem(last=False)


class _Group:
    """A similar group: the messages that have series of their own, and when
    the group was last seen (the correlator's clock)."""

    __slots__ = ("last_seen", "messages")

    def __init__(self, now: float) -> None:
        self.messages: set[str] = set()
        self.last_seen = now


class _Series:
    """A series: occurrences so far, the first one's wall time, the Event name."""

    __slots__ = ("count", "first_time", "name")

    def __init__(self, first_time: float, name: str) -> None:
        self.count = 1
        self.first_time = first_time
        self.name = name


def _ref_key(ref: Mapping[str, str] | None) -> tuple[str, ...]:
    if ref is None:
        return ()
    return (
        ref.get("apiVersion", ""),
        ref.get("kind", ""),
        ref.get("namespace", ""),
        ref.get("name", ""),
        ref.get("uid", ""),
        ref.get("fieldPath", ""),
    )


class EventCorrelator:
    """Aggregates, counts and spam-filters occurrences (see the module
    documentation). ``clock`` drives the aggregation interval and the spam
    buckets. Not thread-safe; never blocks."""

    def __init__(
        self,
        clock: Clock = REAL_CLOCK,
        *,
        spam_burst: int = DEFAULT_SPAM_BURST,
        spam_qps: float = DEFAULT_SPAM_QPS,
        aggregate_max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = DEFAULT_AGGREGATE_INTERVAL,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        if spam_burst < 1 or aggregate_max_events < 1 or cache_size < 1:
            raise ValueError("spam_burst, aggregate_max_events and cache_size must be >= 1")
        self._clock = clock
        self._burst = spam_burst
        self._qps = spam_qps
        self._max_events = aggregate_max_events
        self._interval = aggregate_interval
        self._groups: _LRU[tuple[object, ...], _Group] = _LRU(cache_size)
        self._series: _LRU[tuple[object, ...], _Series] = _LRU(cache_size)
        self._buckets: _LRU[tuple[object, ...], TokenBucket] = _LRU(cache_size)
        self._last_nanos = 0

    def correlate(self, occurrence: Occurrence) -> Correlation | None:
        """The correlation of ``occurrence``, or ``None`` when the spam filter
        drops it."""
        now = self._clock.now()
        ref = _ref_key(occurrence.regarding)
        source = (occurrence.reporting_controller, occurrence.reporting_instance)
        group_key = (
            source,
            ref,
            _ref_key(occurrence.related),
            occurrence.type,
            occurrence.reason,
            occurrence.action,
        )
        # 1. aggregation
        group = self._groups.get(group_key)
        if group is None:
            group = _Group(now)
            self._groups.add(group_key, group)
        elif now - group.last_seen > self._interval:
            group.messages.clear()
        group.last_seen = now
        message = occurrence.message
        aggregated = message not in group.messages and (len(group.messages) + 1 >= self._max_events)
        if aggregated:
            key: tuple[object, ...] = ("aggregate", group_key)
            occurrence = replace(occurrence, message=AGGREGATE_MESSAGE_PREFIX + message)
        else:
            group.messages.add(message)
            key = ("event", group_key, message)
        # 2. counting
        series = self._series.get(key)
        if series is None:
            series = _Series(occurrence.time, self._new_name(occurrence))
            self._series.add(key, series)
        else:
            series.count += 1
        # 3. spam filter
        spam_key = (source, ref[:5], occurrence.type)
        bucket = self._buckets.get(spam_key)
        if bucket is None:
            bucket = TokenBucket(self._burst, self._qps, now)
            self._buckets.add(spam_key, bucket)
        if not bucket.try_accept(now):
            return None
        return Correlation(
            key,
            series.name,
            series.count,
            series.first_time,
            occurrence.time,
            occurrence,
            aggregated,
        )

    def _new_name(self, occurrence: Occurrence) -> str:
        # Strictly increasing nanoseconds: two Events made in one clock tick
        # (or on a fake clock) never share a name.
        nanos = max(int(occurrence.time * 1e9), self._last_nanos + 1)
        self._last_nanos = nanos
        return event_name(occurrence.regarding.get("name", ""), nanos)
