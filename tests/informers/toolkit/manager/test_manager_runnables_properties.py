"""Properties of the runnable protocol: whatever runnables are added (objects
with start/stop, objects with run(stop), functions of a stop event), each
starts once (the synchronous ones in the order added) and stops once, in
reverse order, and every thread the manager started is joined."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from informers import Manager

KINDS = st.lists(st.sampled_from(["object", "runner", "function"]), max_size=6)


class _Log:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple[str, int]] = []
        self.started = threading.Condition(self.lock)

    def add(self, what: str, n: int) -> None:
        with self.lock:
            self.events.append((what, n))
            self.started.notify_all()


def _runnable(kind: str, n: int, log: _Log) -> object:
    if kind == "object":

        class Thing:
            name = f"thing-{n}"

            def start(self) -> None:
                log.add("start", n)

            def stop(self, timeout: float | None = None) -> None:
                log.add("stop", n)

        return Thing()
    if kind == "runner":

        class Runner:
            name = f"runner-{n}"

            def run(self, stop: threading.Event) -> None:
                log.add("start", n)
                stop.wait()
                log.add("stop", n)

        return Runner()

    def function(stop: threading.Event) -> None:
        log.add("start", n)
        stop.wait()
        log.add("stop", n)

    return function


@given(kinds=KINDS)
def test_runnables_start_in_order_and_stop_in_reverse(kinds: list[str]) -> None:
    before = set(threading.enumerate())
    log = _Log()
    manager = Manager(object(), gc_policy=False)  # no informers: no request is made
    for n, kind in enumerate(kinds):
        manager.add(_runnable(kind, n, log), name=f"r{n}")
    manager.start()
    with log.lock:  # threaded runnables report their start on their own thread
        assert log.started.wait_for(lambda: len(log.events) == len(kinds), 10)
    manager.stop()
    starts = [n for what, n in log.events if what == "start"]
    stops = [n for what, n in log.events if what == "stop"]
    # Each started once (threaded ones report from their own thread, so their
    # start lines may interleave); the stops are synchronous: exact reverse.
    assert sorted(starts) == list(range(len(kinds)))
    synchronous = [n for n in starts if kinds[n] == "object"]
    assert synchronous == sorted(synchronous)
    assert stops == list(reversed(range(len(kinds))))
    assert [t for t in threading.enumerate() if t not in before and t.is_alive()] == []
