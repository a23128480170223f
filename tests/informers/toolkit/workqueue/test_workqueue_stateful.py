"""Hypothesis state machines: Queue and DelayingQueue against a simple model.

The model is a list (the hand-out order), a dirty set, a processing set and,
for the delaying queue, a dict of ready times on a FakeClock. Every step
checks the queue's answer against the model's, so these hold throughout:

* an item waiting is queued once (``len`` always equals the model's);
* ``get`` never hands out an item that is being processed;
* an add while processing is delivered after ``done``;
* adds after shutdown are dropped, ``get`` drains what is queued first;
* ``shutdown_with_drain`` reports drained exactly when nothing is queued or
  in progress, and nothing queued before it is lost (the final drain hands
  out exactly what the model still holds);
* a delaying queue has one clock timer pending exactly when something is
  delayed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import DelayingQueue, Queue

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
DELAYS = st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0, 2.5])
ADVANCES = st.sampled_from([0.25, 0.5, 1.0, 3.0])


class QueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.q: Queue[str] = self.make_queue()
        self.order: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.shut = False

    def make_queue(self) -> Queue[str]:
        return Queue()

    # model helpers
    def model_add(self, key: str) -> None:
        if self.shut or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.order.append(key)

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.q.add(key)
        self.model_add(key)

    @rule(block=st.booleans())
    def get(self, block: bool) -> None:
        # a get that will not block (something queued, or shut down) may wait
        # without a timeout: that is the queue's main path
        if block and (self.order or self.shut):
            item, shutdown = self.q.get()
        else:
            item, shutdown = self.q.get(timeout=0)
        if self.order:
            expected = self.order.pop(0)
            assert (item, shutdown) == (expected, False)
            assert expected not in self.processing, "handed to two workers"
            self.processing.add(expected)
            self.dirty.discard(expected)
        else:
            assert (item, shutdown) == (None, self.shut)

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: Any) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.q.done(key)
        self.processing.remove(key)
        if key in self.dirty:
            self.order.append(key)

    @rule(key=KEYS)
    def done_unknown(self, key: str) -> None:
        if key in self.processing:
            return
        self.q.done(key)  # ignored

    # Shutting down ends the interesting part of a run, so it is drawn rarely:
    # most draws of this rule do nothing.
    @rule(how=st.sampled_from(["not now"] * 8 + ["shutdown", "drain"]))
    def shutdown(self, how: str) -> None:
        if how == "not now":
            return
        if how == "shutdown":
            self.q.shutdown()
        else:
            drained = self.q.shutdown_with_drain(timeout=0)
            assert drained == (not self.order and not self.processing)
        self.shut = True
        self.on_shutdown()

    def on_shutdown(self) -> None:
        pass

    @precondition(lambda self: self.shut)
    @rule()
    def drain_everything(self) -> None:
        """Finish all work in progress and hand out the rest: exactly what the
        model holds comes out, then the queue reports shutdown and drained."""
        expected: list[str] = []
        for key in sorted(self.processing):
            self.q.done(key)
            if key in self.dirty:
                self.order.append(key)
        self.processing.clear()
        while self.order:
            key = self.order.pop(0)
            self.dirty.discard(key)
            expected.append(key)
        delivered = []
        while True:
            item, shutdown = self.q.get(timeout=0)
            if shutdown:
                break
            assert item is not None
            delivered.append(item)
            self.q.done(item)
        assert delivered == expected
        assert self.q.shutdown_with_drain(timeout=0) is True

    @invariant()
    def length_matches(self) -> None:
        assert len(self.q) == len(self.order)
        assert self.q.shutting_down() == self.shut

    def teardown(self) -> None:
        self.q.shutdown()


class DelayingQueueMachine(QueueMachine):
    def __init__(self) -> None:
        super().__init__()
        self.seq = 0
        self.waiting: dict[str, tuple[float, int]] = {}

    def make_queue(self) -> Queue[str]:
        return DelayingQueue(clock=self.clock)

    @property
    def dq(self) -> DelayingQueue[str]:
        assert isinstance(self.q, DelayingQueue)
        return self.q

    @rule(key=KEYS, delay=DELAYS)
    def add_after(self, key: str, delay: float) -> None:
        self.dq.add_after(key, delay)
        if self.shut:
            return
        if delay <= 0:
            self.model_add(key)
            return
        ready = self.clock.now() + delay
        current = self.waiting.get(key)
        if current is None or ready < current[0]:
            self.seq += 1
            self.waiting[key] = (ready, self.seq)

    @rule(seconds=ADVANCES)
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        now = self.clock.now()
        due = sorted(
            (ready, seq, key) for key, (ready, seq) in self.waiting.items() if ready <= now
        )
        for _, _, key in due:
            del self.waiting[key]
            self.model_add(key)

    def on_shutdown(self) -> None:
        self.waiting.clear()

    @invariant()
    def one_timer_when_delayed(self) -> None:
        assert self.dq.num_delayed() == len(self.waiting)
        assert self.clock.pending_timers() == (1 if self.waiting else 0)


TestQueueMachine = QueueMachine.TestCase
TestDelayingQueueMachine = DelayingQueueMachine.TestCase
