"""The reconcile context: the current call's request, stop event and
deadline; an overrun is logged and counted, not stopped."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from runtime_helpers import ListSource

from informers.testing import FakeClock
from informers.toolkit.runtime import (
    Controller,
    NoopControllerMetricsProvider,
    ReconcileContext,
    Request,
    current_context,
)

R = Request
WEB = R("default", "web")


class TimeoutCounter(NoopControllerMetricsProvider):
    """No metrics but the reconcile timeouts counter."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def inc(self) -> None:
        with self.lock:
            self.count += 1

    def new_reconcile_timeouts_metric(self, controller: str) -> Any:
        return self


def controller(reconcile: Any, clock: FakeClock, **kwargs: Any) -> Controller:
    return Controller("ctx", reconcile, [ListSource("list", [WEB])], clock=clock, **kwargs)


def test_a_reconcile_sees_its_context_and_no_deadline_by_default() -> None:
    seen: list[ReconcileContext | None] = []

    def reconcile(request: Request) -> None:
        seen.append(current_context())

    c = controller(reconcile, FakeClock())
    c.start()
    try:
        assert c.wait_idle(10)
    finally:
        c.stop()
    context = seen[0]
    assert context is not None
    assert context.request == WEB
    assert context.requests == (WEB,)
    assert context.deadline is None
    assert context.remaining() is None
    assert not context.expired()
    assert context.stop is c.stop_event
    assert context.cancelled()  # stopped since
    assert current_context() is None  # not in a reconcile


def test_an_overrun_is_logged_and_counted_once_and_the_call_runs_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    counter = TimeoutCounter()
    entered, release = threading.Event(), threading.Event()
    contexts: list[ReconcileContext] = []
    finished = threading.Event()

    def reconcile(request: Request) -> None:
        context = current_context()
        assert context is not None
        contexts.append(context)
        entered.set()
        assert release.wait(10)
        finished.set()

    c = controller(reconcile, clock, reconcile_timeout=5.0, metrics=counter)
    c.start()
    try:
        assert entered.wait(10)
        context = contexts[0]
        assert context.deadline == clock.now() + 5.0
        assert context.remaining() == 5.0
        clock.advance(4.0)
        assert counter.count == 0
        assert not context.cancelled()
        with caplog.at_level(logging.WARNING, logger="informers.toolkit.runtime.controller"):
            clock.advance(1.0)
        assert counter.count == 1
        assert context.expired()
        assert context.cancelled()
        assert context.remaining() == 0.0
        assert not finished.is_set()  # not stopped: it runs on
        assert "still running after its 5.0 s timeout" in caplog.text
        assert "default/web" in caplog.text
        release.set()
        assert c.wait_idle(10)
        clock.advance(10.0)
        assert counter.count == 1
    finally:
        release.set()
        c.stop()


def test_a_quick_reconcile_leaves_no_timer_and_counts_nothing() -> None:
    clock = FakeClock()
    counter = TimeoutCounter()
    c = controller(lambda request: None, clock, reconcile_timeout=1.0, metrics=counter)
    c.start()
    try:
        assert c.wait_idle(10)
        assert clock.pending_timers() == 0
        clock.advance(5.0)
        assert counter.count == 0
    finally:
        c.stop()


def test_stop_sets_the_stop_event_a_waiting_reconcile_returns() -> None:
    entered = threading.Event()
    answers: list[bool] = []

    def reconcile(request: Request) -> None:
        context = current_context()
        assert context is not None
        entered.set()
        answers.append(context.wait(None))  # until stopped

    c = controller(reconcile, FakeClock())
    c.start()
    assert entered.wait(10)
    assert not c.stop_event.is_set()
    c.stop(10.0)
    assert c.stop_event.is_set()
    assert answers == [True]
    assert not any(
        t.name.startswith("reconcile-ctx") and t.is_alive() for t in threading.enumerate()
    )


def test_context_wait_ends_at_the_deadline() -> None:
    clock = FakeClock()
    context = ReconcileContext([WEB], threading.Event(), clock.now() + 2.0, clock)
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(context.wait(60.0)), name="ctx-wait")
    waiter.start()
    assert clock.wait_for_waiters(1)
    clock.advance(2.0)
    waiter.join(10)
    assert result == [True]
    assert context.wait(1.0) is True  # past the deadline: at once


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), True, "5"])
def test_bad_reconcile_timeout(bad: Any) -> None:
    with pytest.raises(ValueError, match="reconcile_timeout"):
        controller(lambda request: None, FakeClock(), reconcile_timeout=bad)
