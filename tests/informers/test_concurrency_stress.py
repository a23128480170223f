"""Stress: start, stop, handlers coming and going, and resync, all at once,
with the interpreter switching threads every microsecond.

Each test runs rounds until its time budget is spent: about one second by
default, so the whole module takes a few seconds in the test command. Set
``KUBE_INFORMERS_STRESS_SECONDS`` to run each test longer, e.g.::

    KUBE_INFORMERS_STRESS_SECONDS=120 python -m pytest -p no:randomly \\
        tests/informers/test_concurrency_stress.py

Asserted after every round: no thread of the informer is left, no exception
escapes ``stop()``, every thread waiting for sync is released, and every
handler saw each change once, in order, ending with the cache's content.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from informers.cache.informer import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.errors import InformerStateError
from informers.testing.fake import FakeListerWatcher, FakeWatch
from informers.util.clock import RealClock

SECONDS = float(os.environ.get("KUBE_INFORMERS_STRESS_SECONDS", "1.0"))
WAIT = 10.0


def pod(name: str, rv: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(rv)}}


def threads_of(name: str) -> list[str]:
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.is_alive() and (t.name.endswith(f"-{name}") or f"-{name}-" in t.name)
    )


@pytest.fixture(autouse=True)
def fast_switching() -> Iterator[None]:
    """Switch threads every microsecond (restored afterwards)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def rounds() -> Iterator[int]:
    """Round numbers until the time budget is spent (at least three)."""
    deadline = time.monotonic() + SECONDS
    n = 0
    while n < 3 or time.monotonic() < deadline:
        yield n
        n += 1


def test_start_stop_add_remove_and_waiters_race() -> None:
    for n in rounds():
        race_round(n)


def race_round(n: int) -> None:
    """One informer; start, two stops, an add-and-remove, a remove and a
    sync waiter, released together."""
    name = f"s{n}"
    lw = FakeListerWatcher()
    lw.set_objects([pod(f"p{i}", i + 1) for i in range(5)], "10")
    inf = SharedIndexInformer(lw, name=name, resync_period=0.001, clock=RealClock())
    first = inf.add_event_handler(ResourceEventHandlerFuncs())
    rng = random.Random(n)
    go = threading.Barrier(7, timeout=WAIT)
    escaped: list[BaseException] = []
    released: list[str] = []

    def guarded(
        what: str, call: Callable[[], object], allowed: tuple[type[BaseException], ...]
    ) -> None:
        go.wait()
        if rng.random() < 0.5:
            time.sleep(0)  # a yield, not a synchronisation
        try:
            call()
        except allowed:
            pass
        except BaseException as exc:  # noqa: BLE001 - asserted below
            escaped.append(exc)
        released.append(what)

    def add_then_remove() -> None:
        reg = inf.add_event_handler(ResourceEventHandlerFuncs())
        reg.remove()

    calls: list[tuple[str, Callable[[], object], tuple[type[BaseException], ...]]] = [
        ("start", inf.start, (InformerStateError,)),
        ("stop", inf.stop, ()),
        ("stop again", inf.stop, ()),
        ("add", add_then_remove, (InformerStateError,)),
        ("remove", first.remove, ()),
        ("informer waiter", lambda: inf.wait_synced(None), ()),
    ]
    workers = [
        threading.Thread(target=guarded, args=call, name=f"test-{call[0]}") for call in calls
    ]
    for w in workers:
        w.start()
    go.wait()
    for w in workers:
        w.join(WAIT)
    inf.stop()
    assert not [w.name for w in workers if w.is_alive()], "a call never returned"
    assert escaped == []
    assert sorted(released) == sorted(c[0] for c in calls)
    assert threads_of(name) == []


class Seen:
    """Per key, the resource versions a handler was handed (resyncs apart)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rvs: dict[str, list[int]] = {}
        self.resyncs = 0

    def _saw(self, obj: Any) -> None:
        meta = obj["metadata"]
        with self.lock:
            self.rvs.setdefault(meta["name"], []).append(int(meta["resourceVersion"]))

    def on_add(self, obj: Any, _initial: bool) -> None:
        self._saw(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if old is new:  # a resync: the cached object handed again
            with self.lock:
                self.resyncs += 1
            return
        self._saw(new)

    def on_delete(self, obj: Any) -> None:  # pragma: no cover - none sent
        raise AssertionError("no deletion was sent")

    def view(self) -> dict[str, int]:
        with self.lock:
            return {name: rvs[-1] for name, rvs in self.rvs.items()}


def test_events_reach_every_handler_once_while_handlers_join_and_resync_runs() -> None:
    for n in rounds():
        name = f"e{n}"
        lw = FakeListerWatcher()
        lw.set_objects([pod(f"p{i}", i + 1) for i in range(10)], "10")
        watch = FakeWatch()
        lw.script_watch(watch)
        inf = SharedIndexInformer(lw, name=name, resync_period=0.002, clock=RealClock())
        handlers = [Seen()]
        inf.add_event_handler(handlers[0])
        inf.start()
        try:
            assert inf.wait_synced(WAIT)
            lw.wait_for_watch(1, WAIT)
            rng = random.Random(n)
            joiners: list[threading.Thread] = []
            rv = 10
            for _ in range(200):
                rv += 1
                watch.modify(pod(f"p{rng.randrange(10)}", rv))
                if rng.random() < 0.03:
                    seen = Seen()
                    handlers.append(seen)
                    joiner = threading.Thread(
                        target=inf.add_event_handler, args=(seen,), name="test-joiner"
                    )
                    joiner.start()
                    joiners.append(joiner)
            for joiner in joiners:
                joiner.join(WAIT)
            assert inf.wait_for_resource_version(str(rv), WAIT)
            assert inf.wait_idle(WAIT)
            cache = {
                o["metadata"]["name"]: int(o["metadata"]["resourceVersion"])
                for o in inf.get_store().list()
            }
            for seen in handlers:
                assert seen.view() == cache  # nothing lost
                for rvs in seen.rvs.values():  # nothing twice, nothing reordered
                    assert rvs == sorted(set(rvs))
        finally:
            inf.stop()
        assert threads_of(name) == []
