"""The Controller's loop on a FakeClock: results, errors, backoff, metrics,
validation, lifecycle, stop with work in flight and one worker per key."""

from __future__ import annotations

import logging
import threading
from collections import Counter as Tally
from typing import Any

import pytest
from runtime_helpers import ListSource, Reconciler, RecordingMetrics

from informers.errors import InformerStateError
from informers.testing import FakeClock
from informers.toolkit.runtime import Controller, PeriodicSource, Request, Result, TerminalError
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter

R = Request
WEB = R("default", "web")


def make(
    reconcile: Any,
    requests: list[Request] | None = None,
    *,
    clock: FakeClock | None = None,
    metrics: RecordingMetrics | None = None,
    workers: int = 1,
    base: float = 1.0,
    name: str = "test",
) -> Controller:
    return Controller(
        name,
        reconcile,
        [ListSource("list", [WEB] if requests is None else requests)],
        workers=workers,
        rate_limiter=ItemExponentialFailureRateLimiter(base, 1000.0),
        clock=clock or FakeClock(),
        metrics=metrics,
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


# --------------------------------------------------------------------------- results


def test_success_forgets_and_counts(clock: FakeClock) -> None:
    metrics = RecordingMetrics()
    rec = Reconciler(clock)
    controller = make(rec, clock=clock, metrics=metrics)
    controller.start()
    try:
        assert controller.wait_idle(5)
        assert rec.times(WEB) == [1000.0]
        assert metrics.results("test") == {
            "success": 1,
            "error": 0,
            "requeue": 0,
            "requeue_after": 0,
        }
        assert metrics.time["test"].values == [0.0]  # the fake clock did not move
        assert metrics.max_concurrent["test"].read() == 1.0
    finally:
        controller.stop()


def test_error_requeues_with_exponential_backoff(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = RecordingMetrics()
    secret = {"metadata": {"name": "web"}, "data": {"password": "hunter2"}}
    rec = Reconciler(clock, {WEB: [RuntimeError(f"failed {id(secret)}")] * 3})
    controller = make(rec, clock=clock, metrics=metrics)
    with caplog.at_level(logging.WARNING, "informers.toolkit.runtime.controller"):
        controller.start()
        try:
            assert controller.wait_idle(5)
            assert controller.queue.num_requeues(WEB) == 1
            for step in (1, 1, 1, 4):  # delays 1, 2, 4 after the 1st, 2nd, 3rd failure
                clock.advance(step)
                assert controller.wait_idle(5)
            assert rec.times(WEB) == [1000.0, 1001.0, 1003.0, 1007.0]
            assert controller.queue.num_requeues(WEB) == 0  # forgotten on success
            assert metrics.results("test")["error"] == 3
            assert metrics.results("test")["success"] == 1
            assert metrics.errors["test"].value == 3
            assert metrics.terminal["test"].value == 0
        finally:
            controller.stop()
    failures = [r for r in caplog.records if "failed" in r.getMessage()]
    assert len(failures) == 3
    assert all("default/web" in r.getMessage() for r in failures)
    assert "hunter2" not in caplog.text


def test_requeue_after_is_exact_and_resets_the_backoff(clock: FakeClock) -> None:
    metrics = RecordingMetrics()
    rec = Reconciler(clock, {WEB: [RuntimeError("once"), Result(requeue_after=30)]})
    controller = make(rec, clock=clock, metrics=metrics)
    controller.start()
    try:
        assert controller.wait_idle(5)
        clock.advance(1)  # the error's backoff
        assert controller.wait_idle(5)
        assert rec.times(WEB) == [1000.0, 1001.0]
        assert controller.queue.num_requeues(WEB) == 0  # requeue_after forgets
        clock.advance(29.5)
        assert controller.wait_idle(5)
        assert rec.count(WEB) == 2  # not due yet
        clock.advance(0.5)
        assert controller.wait_idle(5)
        assert rec.times(WEB) == [1000.0, 1001.0, 1031.0]
        assert metrics.results("test")["requeue_after"] == 1
    finally:
        controller.stop()


def test_requeue_true_uses_the_rate_limiter(clock: FakeClock) -> None:
    metrics = RecordingMetrics()
    rec = Reconciler(clock, {WEB: [Result(requeue=True), Result(requeue=True)]})
    controller = make(rec, clock=clock, metrics=metrics)
    controller.start()
    try:
        assert controller.wait_idle(5)
        clock.advance(1)
        assert controller.wait_idle(5)
        assert controller.queue.num_requeues(WEB) == 2
        clock.advance(2)
        assert controller.wait_idle(5)
        assert rec.times(WEB) == [1000.0, 1001.0, 1003.0]
        assert metrics.results("test")["requeue"] == 2
        assert metrics.errors["test"].value == 0
    finally:
        controller.stop()


def test_terminal_errors_are_not_retried(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = RecordingMetrics()
    cause = ValueError("spec.replicas is negative")
    rec = Reconciler(clock, {WEB: [RuntimeError("transient"), TerminalError(cause)]})
    controller = make(rec, clock=clock, metrics=metrics)
    with caplog.at_level(logging.ERROR, "informers.toolkit.runtime.controller"):
        controller.start()
        try:
            assert controller.wait_idle(5)
            clock.advance(1)
            assert controller.wait_idle(5)
            clock.advance(10_000)
            assert controller.wait_idle(5)
            assert rec.count(WEB) == 2
            assert controller.queue.num_requeues(WEB) == 0  # forgotten
            assert controller.queue.num_delayed() == 0
            assert metrics.terminal["test"].value == 1
            assert metrics.errors["test"].value == 2
            assert metrics.results("test")["error"] == 2
        finally:
            controller.stop()
    terminal = [r for r in caplog.records if "terminal" in r.getMessage()]
    assert len(terminal) == 1
    assert terminal[0].levelno == logging.ERROR
    assert "default/web" in terminal[0].getMessage()


def test_an_error_raised_from_a_terminal_error_is_terminal(clock: FakeClock) -> None:
    def reconcile(request: Request) -> None:
        try:
            raise TerminalError("bad spec")
        except TerminalError as error:
            raise RuntimeError("wrapped") from error

    controller = make(reconcile, clock=clock)
    controller.start()
    try:
        assert controller.wait_idle(5)
        assert controller.queue.num_delayed() == 0
        assert controller.queue.num_requeues(WEB) == 0
    finally:
        controller.stop()


def test_a_result_of_the_wrong_type_is_an_error(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Reconciler(clock, {WEB: [True]})
    controller = make(rec, clock=clock)
    with caplog.at_level(logging.WARNING, "informers.toolkit.runtime.controller"):
        controller.start()
        try:
            assert controller.wait_idle(5)
            assert controller.queue.num_requeues(WEB) == 1
            clock.advance(1)
            assert controller.wait_idle(5)
            assert rec.count(WEB) == 2
        finally:
            controller.stop()
    assert "not a Result or None" in caplog.text


def test_queue_items_that_are_not_requests(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    rec = Reconciler(clock)
    controller = make(rec, [], clock=clock)
    with caplog.at_level(logging.ERROR, "informers.toolkit.runtime.controller"):
        controller.start()
        try:
            controller.queue.add("ns/as-a-key")  # type: ignore[arg-type]
            controller.queue.add(42)  # type: ignore[arg-type]
            assert controller.wait_idle(5)
        finally:
            controller.stop()
    assert [r for r, _ in rec.calls] == [R("ns", "as-a-key")]
    assert "not a request" in caplog.text


def test_a_request_added_while_it_is_reconciled_runs_again_afterwards(clock: FakeClock) -> None:
    controller: Controller

    def reconcile(request: Request) -> None:
        if rec.count(request) == 1:
            controller.queue.add(request)

    rec = Reconciler(clock)
    wrapped = lambda r: (rec(r), reconcile(r))[1]  # noqa: E731
    controller = make(wrapped, clock=clock)
    controller.start()
    try:
        assert controller.wait_idle(5)
        assert rec.count(WEB) == 2
    finally:
        controller.stop()


# --------------------------------------------------------------------------- workers


def test_never_two_workers_on_one_key() -> None:
    keys = [R("ns", f"k{n}") for n in range(6)]
    lock = threading.Lock()
    active: set[Request] = set()
    overlaps: list[Request] = []
    counts: Tally[Request] = Tally()
    peak = [0]
    controller: Controller

    def reconcile(request: Request) -> None:
        with lock:
            if request in active:
                overlaps.append(request)
            active.add(request)
            peak[0] = max(peak[0], len(active))
            counts[request] += 1
            again = counts[request] < 25
        if again:  # re-added while it is being reconciled: must wait its turn
            controller.queue.add(request)
            controller.queue.add(keys[(keys.index(request) + 1) % len(keys)])
        with lock:
            active.discard(request)

    controller = Controller("many", reconcile, [ListSource("list", keys)], workers=4)
    controller.start()
    try:
        assert controller.wait_idle(20)
    finally:
        controller.stop()
    assert overlaps == []
    assert all(counts[k] >= 25 for k in keys)
    assert 1 <= peak[0] <= 4


def test_a_raising_reconcile_never_kills_a_worker(clock: FakeClock) -> None:
    keys = [R("ns", f"k{n}") for n in range(10)]

    def reconcile(request: Request) -> None:
        raise TerminalError("always")

    controller = make(reconcile, keys, clock=clock, workers=2)
    controller.start()
    try:
        assert controller.wait_idle(5)
        controller.queue.add(R("ns", "later"))
        assert controller.wait_idle(5)
        alive = [t for t in threading.enumerate() if t.name.startswith("reconcile-test-")]
        assert len(alive) == 2
    finally:
        controller.stop()


# --------------------------------------------------------------------------- lifecycle


def test_stop_waits_for_the_reconcile_in_flight_and_drops_the_queued() -> None:
    entered, release = threading.Event(), threading.Event()
    order: list[str] = []
    done: list[Request] = []

    def reconcile(request: Request) -> None:
        if request == WEB:
            entered.set()
            assert release.wait(10)
        done.append(request)

    source = ListSource("list", [WEB, R("default", "queued")], order)
    controller = Controller("stopper", reconcile, [source])
    controller.start()
    assert entered.wait(5)
    stopper = threading.Thread(target=controller.stop, name="test-stopper")
    stopper.start()
    assert source.stopped.wait(5)  # stop() got as far as the sources ...
    assert stopper.is_alive()  # ... and waits for the reconcile in flight
    assert controller.queue.shutting_down() or stopper.is_alive()
    release.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert done == [WEB]  # the queued request was not reconciled
    assert order == ["start list", "stop list"]
    assert not [t for t in threading.enumerate() if t.name.startswith("reconcile-stopper")]
    assert not controller.is_running()
    controller.stop()  # idempotent


def test_stop_timeout_leaves_a_stuck_reconcile_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entered, release = threading.Event(), threading.Event()

    def reconcile(request: Request) -> None:
        entered.set()
        assert release.wait(10)

    controller = Controller("stuck", reconcile, [ListSource("list", [WEB])])
    controller.start()
    assert entered.wait(5)
    with caplog.at_level(logging.WARNING, "informers.toolkit.runtime.controller"):
        controller.stop(timeout=0.2)
    assert "reconcile-stuck-0" in caplog.text
    release.set()
    worker = next(t for t in threading.enumerate() if t.name == "reconcile-stuck-0")
    worker.join(5)
    assert not worker.is_alive()


def test_stop_from_inside_a_reconcile() -> None:
    controller: Controller
    stopped = threading.Event()

    def reconcile(request: Request) -> None:
        controller.stop()
        stopped.set()

    controller = Controller("self-stop", reconcile, [ListSource("list", [WEB])], workers=2)
    controller.start()
    assert stopped.wait(5)
    for thread in [t for t in threading.enumerate() if t.name.startswith("reconcile-self-stop")]:
        thread.join(5)
        assert not thread.is_alive()
    assert not controller.is_running()


def test_lifecycle_errors_and_stop_before_start() -> None:
    controller = Controller("life", lambda r: None, [ListSource("list", [])])
    controller.stop()  # never started: just stops
    with pytest.raises(InformerStateError, match="stopped"):
        controller.start()
    other = Controller("life2", lambda r: None, [ListSource("list", [])])
    other.start()
    with pytest.raises(InformerStateError, match="running"):
        other.start()
    other.stop()
    other.stop()


def test_run_blocks_until_the_stop_event(clock: FakeClock) -> None:
    rec = Reconciler(clock)
    controller = make(rec, clock=clock)
    stop = threading.Event()
    runner = threading.Thread(target=controller.run, args=(stop,), name="test-runner")
    runner.start()
    assert rec.wait_for(lambda calls: len(calls) == 1)
    assert controller.is_running()
    stop.set()
    runner.join(10)
    assert not runner.is_alive()
    assert not controller.is_running()


def test_wait_idle_is_false_while_requests_wait_for_workers() -> None:
    controller = Controller("idle", lambda r: None, [ListSource("list", [])])
    assert controller.wait_idle(0.5)  # nothing queued
    controller.queue.add(WEB)
    assert not controller.wait_idle(0.05)  # queued, and no worker to take it
    controller.start()
    assert controller.wait_idle(5)
    controller.stop()
    assert controller.wait_idle(1)


def test_wait_idle_counts_a_periodic_source_and_its_requests(clock: FakeClock) -> None:
    rec = Reconciler(clock)
    source = PeriodicSource(lambda: [WEB], every=60, clock=clock, name="tick")
    controller = Controller("periodic", rec, [source], clock=clock)
    controller.start()
    try:
        assert controller.wait_idle(5)
        assert rec.times(WEB) == [1000.0]
        assert clock.wait_for_waiters(1)
        clock.advance(59)
        assert controller.wait_idle(5)
        assert rec.count(WEB) == 1  # the next call is not due
        clock.advance(1)
        assert controller.wait_idle(5)  # the due call, its push and its reconcile
        assert rec.times(WEB) == [1000.0, 1060.0]
    finally:
        controller.stop()


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("name", "reconcile", "sources", "kwargs", "message"),
    [
        ("", lambda r: None, "ok", {}, "must not be empty"),
        ("has space", lambda r: None, "ok", {}, "whitespace"),
        ("tab\t", lambda r: None, "ok", {}, "whitespace"),
        (3, lambda r: None, "ok", {}, "must be a string"),
        ("x", None, "ok", {}, "no reconcile"),
        ("x", "not callable", "ok", {}, "must be callable"),
        ("x", lambda r: None, [], {}, "at least one source"),
        ("x", lambda r: None, None, {}, "sequence of sources"),
        ("x", lambda r: None, "ok", {"workers": 0}, "at least 1"),
        ("x", lambda r: None, "ok", {"sync_timeout": -1}, "sync_timeout"),
        ("x", lambda r: None, "dup", {}, "twice"),
    ],
)
def test_validation(
    name: Any, reconcile: Any, sources: Any, kwargs: dict[str, Any], message: str
) -> None:
    if sources == "ok":
        sources = [ListSource("list", [])]
    elif sources == "dup":
        one = ListSource("list", [])
        sources = [one, one]
    with pytest.raises(ValueError, match=message):
        Controller(name, reconcile, sources, **kwargs)


def test_validation_type_errors() -> None:
    with pytest.raises(TypeError, match="not a source"):
        Controller("x", lambda r: None, [object()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="workers"):
        Controller("x", lambda r: None, [ListSource("l", [])], workers="2")  # type: ignore[arg-type]


class NeverSyncs(ListSource):
    """A source whose initial state never arrives, until it is stopped."""

    def __init__(self) -> None:
        super().__init__("never", [])
        self.waiting = threading.Event()

    def start(self, sink: Any) -> None:
        pass

    def wait_synced(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        self.stopped.wait(timeout)
        return False


def test_stop_while_start_waits_for_a_source() -> None:
    never, after = NeverSyncs(), ListSource("after", [WEB])
    controller = Controller("interrupted", lambda r: None, [never, after], sync_timeout=None)
    errors: list[BaseException] = []

    def start() -> None:
        try:
            controller.start()
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            errors.append(error)

    starter = threading.Thread(target=start, name="test-starter")
    starter.start()
    assert never.waiting.wait(5)
    controller.stop()
    starter.join(5)
    assert not starter.is_alive()
    assert errors == []
    assert not after.synced.is_set()  # the next source was never started
    assert not controller.is_running()
    assert not [t for t in threading.enumerate() if t.name.startswith("reconcile-interrupted")]
