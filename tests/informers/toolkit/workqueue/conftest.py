"""Fixtures for the workqueue tests: an in-memory metrics provider."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest


@dataclass
class Series:
    """The metrics of one queue name, recorded in memory (thread-safe)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    adds: int = 0
    retries: int = 0
    latencies: list[float] = field(default_factory=list)
    work_durations: list[float] = field(default_factory=list)
    gauges: dict[str, Callable[[], float]] = field(default_factory=dict)

    @property
    def latency_count(self) -> int:
        return len(self.latencies)

    @property
    def work_count(self) -> int:
        return len(self.work_durations)

    def depth(self) -> float:
        return self.gauges["depth"]()

    def unfinished(self) -> float:
        return self.gauges["unfinished"]()

    def longest(self) -> float:
        return self.gauges["longest"]()


class _Counter:
    def __init__(self, series: Series, attr: str) -> None:
        self.series, self.attr = series, attr

    def inc(self) -> None:
        with self.series.lock:
            setattr(self.series, self.attr, getattr(self.series, self.attr) + 1)


class _Histogram:
    def __init__(self, series: Series, values: list[float]) -> None:
        self.series, self.values = series, values

    def observe(self, value: float, /) -> None:
        with self.series.lock:
            self.values.append(value)


class _Gauge:
    def __init__(self, series: Series, name: str) -> None:
        self.series, self.name = series, name

    def set_function(self, function: Callable[[], float], /) -> None:
        self.series.gauges[self.name] = function


class RecordingProvider:
    """A MetricsProvider keeping every value in memory, by queue name."""

    def __init__(self) -> None:
        self.series: dict[str, Series] = {}

    def _series(self, name: str) -> Series:
        return self.series.setdefault(name, Series())

    def new_depth_metric(self, name: str) -> _Gauge:
        return _Gauge(self._series(name), "depth")

    def new_adds_metric(self, name: str) -> _Counter:
        return _Counter(self._series(name), "adds")

    def new_latency_metric(self, name: str) -> _Histogram:
        return _Histogram(self._series(name), self._series(name).latencies)

    def new_work_duration_metric(self, name: str) -> _Histogram:
        return _Histogram(self._series(name), self._series(name).work_durations)

    def new_unfinished_work_seconds_metric(self, name: str) -> _Gauge:
        return _Gauge(self._series(name), "unfinished")

    def new_longest_running_processor_seconds_metric(self, name: str) -> _Gauge:
        return _Gauge(self._series(name), "longest")

    def new_retries_metric(self, name: str) -> _Counter:
        return _Counter(self._series(name), "retries")


@pytest.fixture
def recording_provider() -> RecordingProvider:
    return RecordingProvider()
