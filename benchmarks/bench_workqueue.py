"""Workqueue benchmarks: add + get + done per second, against the floor.

The floor is what a user would write without this library: a
``queue.Queue`` for the order plus a ``set`` (under a lock) to deduplicate
keys that are waiting. It promises less (nothing stops two workers from
holding one key; a re-add while a key is processed is not held back), so it
is the least a deduplicating queue can cost.

Cases (100k distinct keys each):

* ``1 thread``: add every key, then get and done each, in one thread;
* ``4 workers``: one producer thread adds every key while four worker threads
  get and done them; timed until all are processed;
* ``delaying 100k``: ``add_after`` of every key with a distinct delay (one
  clock timer for all of them), the clock jumps past them all, and one
  thread gets and dones each; the floor pushes ``(ready, seq, key)`` on a
  ``heapq`` under a lock, pops them all, and runs the ``1 thread`` floor.

Run either way:

    python -m pytest benchmarks/bench_workqueue.py --benchmark-enable
    PYTHONPATH=. python benchmarks/bench_workqueue.py [N]

The target is the Queue within 2x of the floor.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from informers.testing.fake import FakeClock
from informers.toolkit.workqueue import DelayingQueue, Queue

N = 100_000
WORKERS = 4
TARGET = 2.0


class WorkQueue(Protocol):
    def add(self, item: str) -> None: ...
    def get(self) -> tuple[str | None, bool]: ...
    def done(self, item: str) -> None: ...
    def shutdown(self) -> None: ...


class SetQueueFloor:
    """queue.Queue plus a set: dedupe waiting keys, nothing more."""

    _STOP = object()

    def __init__(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._pending: set[str] = set()
        self._lock = threading.Lock()

    def add(self, item: str) -> None:
        with self._lock:
            if item in self._pending:
                return
            self._pending.add(item)
        self._queue.put(item)

    def get(self) -> tuple[str | None, bool]:
        item = self._queue.get()
        if item is self._STOP:
            self._queue.put(item)  # for the next worker
            return None, True
        with self._lock:
            self._pending.discard(item)
        return item, False

    def done(self, item: str) -> None:
        pass

    def shutdown(self) -> None:
        self._queue.put(self._STOP)


def keys(n: int) -> list[str]:
    return [f"namespace-{i % 100}/object-{i}" for i in range(n)]


# ------------------------------------------------------------------ the cases


def one_thread(q: WorkQueue, items: list[str]) -> None:
    add, get, done = q.add, q.get, q.done
    for item in items:
        add(item)
    for _ in range(len(items)):
        item, _ = get()
        done(item)  # type: ignore[arg-type]


def four_workers(q: WorkQueue, items: list[str]) -> None:
    remaining = [len(items)]
    lock = threading.Lock()
    finished = threading.Event()

    def work() -> None:
        get, done = q.get, q.done
        while True:
            item, shutdown = get()
            if shutdown:
                return
            done(item)  # type: ignore[arg-type]
            with lock:
                remaining[0] -= 1
                if remaining[0] == 0:
                    finished.set()

    workers = [threading.Thread(target=work, name=f"bench-worker-{n}") for n in range(WORKERS)]
    for t in workers:
        t.start()
    add = q.add
    for item in items:
        add(item)
    finished.wait()
    q.shutdown()
    for t in workers:
        t.join()


def delaying_ours(items: list[str]) -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    add_after = q.add_after
    for n, item in enumerate(items):
        add_after(item, 1.0 + n * 1e-3)
    assert clock.pending_timers() == 1
    clock.advance(len(items))
    get, done = q.get, q.done
    for _ in range(len(items)):
        item, _ = get()
        done(item)  # type: ignore[arg-type]


def delaying_floor(items: list[str]) -> None:
    heap: list[tuple[float, int, str]] = []
    lock = threading.Lock()
    seq = itertools.count()
    now = 1000.0
    for n, item in enumerate(items):
        with lock:
            heapq.heappush(heap, (now + 1.0 + n * 1e-3, next(seq), item))
    q = SetQueueFloor()
    with lock:
        while heap:
            q.add(heapq.heappop(heap)[2])
    for _ in range(len(items)):
        item, _ = q.get()
        q.done(item)  # type: ignore[arg-type]


def cases(n: int) -> dict[str, dict[str, Callable[[list[str]], None]]]:
    return {
        "1 thread": {
            "impl": lambda items: one_thread(Queue(), items),
            "floor": lambda items: one_thread(SetQueueFloor(), items),
        },
        f"{WORKERS} workers": {
            "impl": lambda items: four_workers(Queue(), items),
            "floor": lambda items: four_workers(SetQueueFloor(), items),
        },
        f"delaying {n // 1000}k": {"impl": delaying_ours, "floor": delaying_floor},
    }


# ------------------------------------------------------------------ pytest-benchmark


@pytest.mark.parametrize("role", ["impl", "floor"])
@pytest.mark.parametrize("case", list(cases(N)))
def test_workqueue(benchmark: Any, ratios: Any, case: str, role: str) -> None:
    run = cases(N)[case][role]
    items = keys(N)
    benchmark.group = f"workqueue {case} n={N}"
    benchmark.pedantic(run, args=(items,), rounds=5, iterations=1, warmup_rounds=1)
    ratios.record(f"workqueue {case}", role, benchmark, target=TARGET)


# ------------------------------------------------------------------ script


def _median_seconds(run: Callable[[list[str]], None], items: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run(items)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else N
    items = keys(n)
    print(f"workqueue: add + get + done of {n:,} keys (median of 5 runs); target <= {TARGET}x")
    for case, roles in cases(n).items():
        roles["impl"](items)  # warm up
        roles["floor"](items)
        ours = _median_seconds(roles["impl"], items, 5)
        floor = _median_seconds(roles["floor"], items, 5)
        ratio = ours / floor
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"  {case:<14} ours {n / ours:>10,.0f} keys/s   floor {n / floor:>10,.0f} keys/s"
            f"   ratio {ratio:4.2f}x  {verdict}"
        )


if __name__ == "__main__":
    main()
