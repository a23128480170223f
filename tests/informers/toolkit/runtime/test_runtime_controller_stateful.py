"""A hypothesis state machine: requests added at random times, each
reconcile answering a scripted outcome (success, error, terminal error,
requeue, requeue after), the clock advanced at random. After every step the
controller's reconciles (request and clock time) must equal a model's: a
per-key failure count (the exponential backoff, 1 s doubling), one pending
delayed requeue per key (the earlier wins, as in the delaying queue) and a
"queued" flag (the queue deduplicates)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from runtime_helpers import ListSource, Reconciler

from informers.testing import FakeClock
from informers.toolkit.runtime import Controller, Request, Result, TerminalError
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter

KEYS = [Request("ns", name) for name in ("a", "b", "c")]

OUTCOMES = st.one_of(
    st.sampled_from(["ok", "error", "terminal", "requeue"]),
    st.integers(1, 6).map(lambda d: ("after", d)),
)


def as_outcome(step: Any) -> Any:
    if step == "ok":
        return None
    if step == "error":
        return RuntimeError("scripted")
    if step == "terminal":
        return TerminalError("scripted")
    if step == "requeue":
        return Result(requeue=True)
    return Result(requeue_after=float(step[1]))


@dataclass
class KeyModel:
    script: list[Any]
    fails: int = 0
    delayed: float | None = None
    queued: bool = False
    calls: list[float] = field(default_factory=list)


class ControllerMachine(RuleBasedStateMachine):
    clock: FakeClock
    controller: Controller
    rec: Reconciler
    model: dict[Request, KeyModel]

    @initialize(
        scripts=st.fixed_dictionaries({k: st.lists(OUTCOMES, max_size=6) for k in KEYS}),
        initial=st.lists(st.sampled_from(KEYS), unique=True),
        workers=st.integers(1, 3),
    )
    def start(
        self, scripts: dict[Request, list[Any]], initial: list[Request], workers: int
    ) -> None:
        self.clock = FakeClock()
        self.model = {k: KeyModel(list(steps)) for k, steps in scripts.items()}
        self.rec = Reconciler(
            self.clock, {k: [as_outcome(s) for s in steps] for k, steps in scripts.items()}
        )
        self.controller = Controller(
            "machine",
            self.rec,
            [ListSource("initial", initial)],
            workers=workers,
            rate_limiter=ItemExponentialFailureRateLimiter(1.0, 1000.0),
            clock=self.clock,
        )
        for key in initial:
            self.model[key].queued = True
        self.controller.start()
        self.process(self.clock.now())

    # ------------------------------------------------------------------ model

    def process(self, now: float) -> None:
        """Every key queued or due at ``now`` is reconciled once, at ``now``."""
        for model in self.model.values():
            due = model.delayed is not None and model.delayed <= now
            if not (model.queued or due):
                continue
            model.queued = False
            if due:
                model.delayed = None
            model.calls.append(now)
            step = model.script.pop(0) if model.script else "ok"
            if step in ("error", "requeue"):
                self.delay(model, now + 2.0**model.fails)
                model.fails += 1
            elif step in ("ok", "terminal"):
                model.fails = 0
            else:
                model.fails = 0
                self.delay(model, now + step[1])

    @staticmethod
    def delay(model: KeyModel, ready: float) -> None:
        if model.delayed is None or ready < model.delayed:
            model.delayed = ready

    def next_due(self) -> float | None:
        dues = [m.delayed for m in self.model.values() if m.delayed is not None]
        return min(dues) if dues else None

    # ------------------------------------------------------------------ rules

    @rule(key=st.sampled_from(KEYS))
    def add(self, key: Request) -> None:
        self.controller.queue.add(key)
        self.model[key].queued = True
        self.process(self.clock.now())

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.0, 20.0]))
    def advance(self, seconds: float) -> None:
        target = self.clock.now() + seconds
        while True:
            due = self.next_due()
            if due is None or due > target:
                break
            self.clock.advance(due - self.clock.now())
            assert self.controller.wait_idle(10)
            self.process(due)
            self.check()
        self.clock.advance(target - self.clock.now())

    # ------------------------------------------------------------------ checks

    @invariant()
    def check(self) -> None:
        assert self.controller.wait_idle(10)
        for key, model in self.model.items():
            assert self.rec.times(key) == model.calls, key
            assert self.controller.queue.num_requeues(key) == model.fails, key

    def teardown(self) -> None:
        if hasattr(self, "controller"):
            self.controller.stop()


TestControllerMachine = ControllerMachine.TestCase
TestControllerMachine.settings = settings(stateful_step_count=25)
