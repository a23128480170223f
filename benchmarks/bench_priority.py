"""Priority queue benchmarks: a fresh event's wait while an initial list
drains, and throughput, each against the plain rate-limiting queue measured
in the same run.

Both run a real :class:`~informers.toolkit.runtime.Controller` (``workers`` threads)
fed by a source that pushes ``N`` requests the way an informer source pushes
its initial list: with :data:`~informers.toolkit.workqueue.PRIORITY_LOW` into a
priority queue (``priority_queue=True``), plain adds into the default queue.

``event latency``
    Each reconcile stands for an API call (``time.sleep(cost)``, which lets
    other threads run). Once the workers start, a thread adds a fresh request
    every ``--every`` seconds (``controller.queue.add``, what an informer
    source does for an event) until the initial list is drained. The figure
    is the time from that add to the start of the request's reconcile: p50,
    p99 and max over every fresh request, and how long the drain took. On
    the plain queue an event waits behind the rest of the list (up to the
    whole drain); the target is a p99 of at most 1 s on the priority queue.
``throughput``
    The same with a reconcile that does nothing and no events: from
    ``start()`` to the last of ``N`` reconciles, adds included. Target: the
    priority queue within 1.5x of the plain queue's time. ``queue 1 thread``
    is the queue alone (add, get and done of ``N`` keys in one thread), where
    the heap's ``O(log n)`` shows most.

Run either way:

    python -m pytest benchmarks/bench_priority.py --benchmark-enable
    PYTHONPATH=. python benchmarks/bench_priority.py [--n 100000] [--rounds 3]

The pytest run times the throughput cases (and runs the latency case once,
on a short list, as a smoke test); the script prints every figure, the two
queues interleaved over ``--rounds`` rounds (medians).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from informers.toolkit.runtime import Controller, Request
from informers.toolkit.workqueue import PRIORITY_LOW, PriorityQueue, RateLimitingQueue

N = 100_000
WORKERS = 4
COST = 50e-6  # seconds one reconcile sleeps in the latency case
EVERY = 0.01  # seconds between fresh events in the latency case
LATENCY_TARGET = 1.0  # seconds, p99 on the priority queue
THROUGHPUT_TARGET = 1.5


class InitialList:
    """A source that pushes a fixed list as an informer pushes its initial
    list: low priority into a priority queue, plain adds otherwise."""

    def __init__(self, requests: list[Request]) -> None:
        self._requests = requests
        self._synced = threading.Event()

    @property
    def name(self) -> str:
        return "initial-list"

    def start(self, sink: Any) -> None:
        if isinstance(sink, PriorityQueue):
            add = sink.add
            for request in self._requests:
                add(request, PRIORITY_LOW)
        else:
            for request in self._requests:
                sink.add(request)
        self._synced.set()

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        return True

    def stop(self, timeout: float | None = None) -> None:
        pass


def initial_requests(n: int) -> list[Request]:
    return [Request(f"namespace-{i % 100}", f"object-{i}") for i in range(n)]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# ------------------------------------------------------------------ the cases


def event_latency(
    priority: bool, n: int, *, cost: float = COST, every: float = EVERY
) -> dict[str, float]:
    """Drain ``n`` initial requests while fresh ones arrive; answers the
    fresh requests' waits (p50, p99, max), how many there were, and the
    drain's length, in seconds."""
    requests = initial_requests(n)
    added: dict[Request, float] = {}
    waits: list[float] = []
    lock = threading.Lock()
    drained = threading.Event()
    remaining = [n]
    clock = time.perf_counter
    sleep = time.sleep

    def reconcile(request: Request) -> None:
        started = clock()
        if request.namespace == "events":
            with lock:
                waits.append(started - added[request])
        else:
            with lock:
                remaining[0] -= 1
                if remaining[0] == 0:
                    drained.set()
        sleep(cost)

    controller = Controller(
        "bench", reconcile, [InitialList(requests)], workers=WORKERS, priority_queue=priority
    )

    def events() -> None:
        queue = controller.queue
        count = 0
        while not drained.wait(every):
            request = Request("events", f"event-{count}")
            count += 1
            with lock:
                added[request] = clock()
            queue.add(request)

    producer = threading.Thread(target=events, name="bench-events")
    controller.start()
    begin = clock()
    producer.start()
    try:
        drained.wait()
        drain = clock() - begin
        producer.join()
        controller.wait_idle(60)
    finally:
        controller.stop()
    with lock:
        assert len(waits) == len(added), "a fresh request was not reconciled"
        return {
            "p50": percentile(waits, 0.50),
            "p99": percentile(waits, 0.99),
            "max": max(waits, default=0.0),
            "events": float(len(waits)),
            "drain": drain,
        }


def controller_throughput(priority: bool, requests: list[Request]) -> None:
    """``start()`` to the last of the initial requests reconciled (no-op)."""
    drained = threading.Event()
    remaining = [len(requests)]
    lock = threading.Lock()

    def reconcile(request: Request) -> None:
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0:
                drained.set()

    controller = Controller(
        "bench", reconcile, [InitialList(requests)], workers=WORKERS, priority_queue=priority
    )
    controller.start()
    try:
        drained.wait()
    finally:
        controller.stop()


def queue_one_thread(priority: bool, requests: list[Request]) -> None:
    """add, then get and done, of every key in one thread (low priority on
    the priority queue, the initial list's)."""
    if priority:
        pq: PriorityQueue[Request] = PriorityQueue()
        add_low = pq.add
        for request in requests:
            add_low(request, PRIORITY_LOW)
        q: RateLimitingQueue[Request] = pq
    else:
        q = RateLimitingQueue()
        add = q.add
        for request in requests:
            add(request)
    get, done = q.get, q.done
    for _ in range(len(requests)):
        item, _ = get()
        done(item)  # type: ignore[arg-type]
    q.shutdown()


THROUGHPUT: dict[str, Callable[[bool, list[Request]], None]] = {
    "controller drain": controller_throughput,
    "queue 1 thread": queue_one_thread,
}


# ------------------------------------------------------------------ pytest-benchmark


@pytest.mark.parametrize("role", ["impl", "floor"])
@pytest.mark.parametrize("case", list(THROUGHPUT))
def test_priority_throughput(benchmark: Any, ratios: Any, case: str, role: str) -> None:
    run = THROUGHPUT[case]
    requests = initial_requests(N)
    benchmark.group = f"priority {case} n={N}"
    benchmark.pedantic(run, args=(role == "impl", requests), rounds=3, iterations=1)
    ratios.record(f"priority queue {case}", role, benchmark, target=THROUGHPUT_TARGET)


def test_priority_event_latency_smoke() -> None:
    """The latency case once on a short list (the script measures it)."""
    result = event_latency(True, 2_000, every=0.002)
    assert result["events"] >= 0


# ------------------------------------------------------------------ script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=N, help="initial list size")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cost", type=float, default=COST, help="seconds per reconcile")
    parser.add_argument("--every", type=float, default=EVERY, help="seconds between events")
    args = parser.parse_args()
    n, rounds = args.n, args.rounds
    print(
        f"priority queue: {n:,} initial requests, {WORKERS} workers, "
        f"median of {rounds} interleaved rounds"
    )
    print(
        f"event latency (reconcile sleeps {args.cost * 1e6:.0f} us, an event every {args.every}s)"
    )
    latency: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(rounds):
        for priority in (False, True):
            latency[priority].append(event_latency(priority, n, cost=args.cost, every=args.every))
    for priority in (False, True):
        runs = latency[priority]

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(r[key] for r in runs)

        label = "priority" if priority else "plain"
        print(
            f"  {label:<9} p50 {med('p50') * 1e3:9.1f} ms  p99 {med('p99') * 1e3:9.1f} ms  "
            f"max {med('max') * 1e3:9.1f} ms  drain {med('drain'):6.2f} s  "
            f"({med('events'):.0f} events)"
        )
    p99 = statistics.median(r["p99"] for r in latency[True])
    plain_p99 = statistics.median(r["p99"] for r in latency[False])
    verdict = "met" if p99 <= LATENCY_TARGET else "MISSED"
    print(
        f"  p99 priority/plain {p99 / plain_p99:.2e}x;  target p99 <= {LATENCY_TARGET} s: {verdict}"
    )
    requests = initial_requests(n)
    print(f"throughput (no-op reconcile); target priority <= {THROUGHPUT_TARGET}x plain")
    for case, run in THROUGHPUT.items():
        times: dict[bool, list[float]] = {False: [], True: []}
        run(False, requests[: n // 10])  # warm up
        run(True, requests[: n // 10])
        for _ in range(rounds):
            for priority in (False, True):
                start = time.perf_counter()
                run(priority, requests)
                times[priority].append(time.perf_counter() - start)
        plain, prio = statistics.median(times[False]), statistics.median(times[True])
        ratio = prio / plain
        verdict = "met" if ratio <= THROUGHPUT_TARGET else "MISSED"
        print(
            f"  {case:<17} plain {n / plain:>9,.0f}/s   priority {n / prio:>9,.0f}/s"
            f"   ratio {ratio:4.2f}x  {verdict}"
        )


if __name__ == "__main__":
    main()
