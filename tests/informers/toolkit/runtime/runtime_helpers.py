"""Helpers shared by the runtime tests (imported by name: the test
directories are not packages)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from informers.toolkit.runtime import Request


class RecordingSink:
    """A sink that records what sources push; ``wait_for`` blocks on a condition."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: list[Request] = []

    def add(self, item: Request) -> None:
        with self.cond:
            self.items.append(item)
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[list[Request]], bool], timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.items), timeout)

    def snapshot(self) -> list[Request]:
        with self.cond:
            return list(self.items)


class ListSource:
    """A user-written source (the protocol, nothing more): pushes a fixed
    list of requests on start, synchronously. Records when it was started."""

    def __init__(self, name: str, requests: list[Request], log: list[str] | None = None) -> None:
        self._name = name
        self._requests = requests
        self._log = log
        self.synced = threading.Event()
        self.stopped = threading.Event()

    @property
    def name(self) -> str:
        return self._name

    def start(self, sink: Any) -> None:
        if self._log is not None:
            self._log.append(f"start {self._name}")
        for request in self._requests:
            sink.add(request)
        self.synced.set()

    def has_synced(self) -> bool:
        return self.synced.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True

    def stop(self, timeout: float | None = None) -> None:
        if self._log is not None:
            self._log.append(f"stop {self._name}")
        self.stopped.set()


class Counter:
    def __init__(self) -> None:
        self.value = 0
        self.lock = threading.Lock()

    def inc(self) -> None:
        with self.lock:
            self.value += 1


class Histogram:
    def __init__(self) -> None:
        self.values: list[float] = []
        self.lock = threading.Lock()

    def observe(self, value: float, /) -> None:
        with self.lock:
            self.values.append(value)


class Gauge:
    def __init__(self) -> None:
        self.function: Callable[[], float] = lambda: 0.0

    def set_function(self, function: Callable[[], float], /) -> None:
        self.function = function

    def read(self) -> float:
        return self.function()


class RecordingMetrics:
    """A ControllerMetricsProvider keeping plain values, for assertions."""

    def __init__(self) -> None:
        self.total: dict[tuple[str, str], Counter] = {}
        self.errors: dict[str, Counter] = {}
        self.terminal: dict[str, Counter] = {}
        self.time: dict[str, Histogram] = {}
        self.max_concurrent: dict[str, Gauge] = {}
        self.active: dict[str, Gauge] = {}

    def new_reconcile_total_metric(self, controller: str, result: str) -> Counter:
        return self.total.setdefault((controller, result), Counter())

    def new_reconcile_errors_metric(self, controller: str) -> Counter:
        return self.errors.setdefault(controller, Counter())

    def new_terminal_reconcile_errors_metric(self, controller: str) -> Counter:
        return self.terminal.setdefault(controller, Counter())

    def new_reconcile_time_metric(self, controller: str) -> Histogram:
        return self.time.setdefault(controller, Histogram())

    def new_max_concurrent_reconciles_metric(self, controller: str) -> Gauge:
        return self.max_concurrent.setdefault(controller, Gauge())

    def new_active_workers_metric(self, controller: str) -> Gauge:
        return self.active.setdefault(controller, Gauge())

    def results(self, controller: str) -> dict[str, int]:
        return {r: c.value for (name, r), c in self.total.items() if name == controller}


class Reconciler:
    """A scripted reconcile: per request, a list of outcomes consumed one per
    call (then success). Records (request, clock time) of every call."""

    def __init__(self, clock: Any, script: dict[Request, list[Any]] | None = None) -> None:
        self.clock = clock
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.cond = threading.Condition()
        self.calls: list[tuple[Request, float]] = []

    def __call__(self, request: Request) -> Any:
        with self.cond:
            self.calls.append((request, self.clock.now()))
            self.cond.notify_all()
            steps = self.script.get(request)
            outcome = steps.pop(0) if steps else None
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def count(self, request: Request) -> int:
        with self.cond:
            return sum(1 for r, _ in self.calls if r == request)

    def times(self, request: Request) -> list[float]:
        with self.cond:
            return [t for r, t in self.calls if r == request]

    def wait_for(self, predicate: Callable[[list[tuple[Request, float]]], bool]) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.calls), 10)
