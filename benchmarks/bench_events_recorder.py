"""EventRecorder.event() latency while the API server is down.

A reconcile that records an Event must not wait for the API server: the
recorder correlates the occurrence and buffers it, and one worker thread
writes. This measures what ``event()`` costs the caller when nothing can be
written: the emulator is started (so the objects are real), then stopped,
and every call is timed on its own (``time.perf_counter_ns`` around the
call). The worker keeps failing to connect and retrying meanwhile (every
50 ms here, not the default 10 s, so that its attempts compete with the
caller for the interpreter during the measurement), so the buffer fills
and, past ``max_pending``, new Events are dropped: the latencies cover
both sides.

The mix: ``--objects`` pods, each with a few reasons and, now and then, a
new message (the correlator's aggregation), in a shuffled order; repeats of
one Event coalesce in the buffer.

The floor, timed the same way in the same run: a bare ``deque.append`` of
a tuple, the least any asynchronous hand-off costs.

Robust on a shared machine: the calls run in ``--rounds`` slices, each
followed by the floor over the same slice (so the recorder's worker competes
with both), and each slice of ``event()`` once more timed with the calling
thread's CPU clock (``time.thread_time_ns``). The figure held to the target
is the median over the rounds of each round's p99 (wall clock), so a burst
of load from other processes spoils a round, not the figure; the p99 of all
calls pooled is printed beside it. The CPU-time p99 is what ``event()``
costs the caller itself, without the time the OS gave other processes (nor
the time the caller waited for the interpreter lock; the clock costs about
a microsecond per reading on its own).

Target: p99 <= 50 us (absolute), printed beside the floor's.

Run:

    PYTHONPATH=. python benchmarks/bench_events_recorder.py [--calls N] [--objects N] [--rounds N]
    python -m pytest benchmarks/bench_events_recorder.py --benchmark-enable -s
"""

from __future__ import annotations

import argparse
import collections
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from informers.testing import ApiServer
from informers.toolkit.events import EventRecorder
from informers.wire.resources import PODS

#: The smallest pod spec the API server accepts.
POD_SPEC = {"containers": [{"name": "web", "image": "nginx:1.25"}]}

TARGET_P99_US = 50.0
REASONS = ("Synced", "Scaled", "BackOff", "Pulled")


def _percentiles(samples_ns: list[int]) -> dict[str, float]:
    ordered = sorted(samples_ns)
    n = len(ordered)

    def at(q: float) -> float:
        return ordered[min(n - 1, int(q * n))] / 1000.0

    return {"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ordered[-1] / 1000.0}


def _time_calls(
    call: Callable[[Any], None],
    args: Sequence[Any],
    clock: Callable[[], int] = time.perf_counter_ns,
) -> list[int]:
    samples: list[int] = []
    append = samples.append
    for arg in args:
        start = clock()
        call(arg)
        append(clock() - start)
    return samples


def _summary(rounds: list[list[int]]) -> dict[str, float]:
    """The pooled percentiles of every round's samples, and the median over
    the rounds of each round's p99 (``p99 rounds``)."""
    pooled = _percentiles([sample for samples in rounds for sample in samples])
    pooled["p99 rounds"] = statistics.median(_percentiles(r)["p99"] for r in rounds)
    return pooled


def run(calls: int, objects: int, seed: int = 1, rounds: int = 10) -> dict[str, dict[str, float]]:
    """Time ``calls`` event() calls with the server down, in ``rounds``
    slices, each followed by the floor over the same slice; and each slice
    of event() again on the thread's CPU clock."""
    rng = random.Random(seed)
    with ApiServer() as server:
        pods = [
            server.create(
                PODS, {"metadata": {"name": f"web-{i}", "namespace": "default"}, "spec": POD_SPEC}
            )
            for i in range(objects)
        ]
        api = server.api_client()
    # the server is stopped now: every connection is refused
    work = [
        (
            rng.choice(pods),
            "Warning" if rng.random() < 0.2 else "Normal",
            rng.choice(REASONS),
            f"message {rng.randrange(3) if rng.random() < 0.95 else rng.randrange(10**6)}",
        )
        for _ in range(calls)
    ]
    rounds = max(1, min(rounds, calls // 100))
    size = -(-calls // rounds)
    slices = [work[start : start + size] for start in range(0, calls, size)]
    floor_queue: collections.deque[tuple[Any, ...]] = collections.deque()
    floor_append = floor_queue.append

    def floor(args: tuple[Any, str, str, str]) -> None:
        floor_append((args, 0.0))

    ours: list[list[int]] = []
    ours_cpu: list[list[int]] = []
    floors: list[list[int]] = []
    recorder = EventRecorder(api, "bench-controller", retry_delay=0.05)
    try:
        event = recorder.event

        def one(args: tuple[Any, str, str, str]) -> None:
            event(*args)

        # warm up (the correlator's caches, the buffer) before timing
        for args in work[: min(1000, calls)]:
            one(args)
        gc.collect()
        for part in slices:
            ours.append(_time_calls(one, part))
            floors.append(_time_calls(floor, part))
            floor_queue.clear()
            ours_cpu.append(_time_calls(one, part, time.thread_time_ns))
        stats = recorder.stats()
    finally:
        recorder.stop()
        api.close()
    result = {
        "event()": _summary(ours),
        "event() CPU time": _summary(ours_cpu),
        "floor: deque.append": _summary(floors),
    }
    result["event()"]["dropped"] = float(sum(stats.dropped.values()))
    result["event()"]["pending"] = float(stats.pending)
    result["event()"]["rounds"] = float(len(slices))
    return result


def report(result: dict[str, dict[str, float]]) -> bool:
    """Print the table; return whether the target was met (the median of
    the rounds' p99s, wall clock)."""
    ours, floor = result["event()"], result["floor: deque.append"]
    print(
        f"{'case':<22}{'p50 us':>10}{'p90 us':>10}{'p99 us':>10}{'max us':>10}{'p99 of rounds':>15}"
    )
    for name, row in result.items():
        print(
            f"{name:<22}{row['p50']:>10.2f}{row['p90']:>10.2f}{row['p99']:>10.2f}"
            f"{row['max']:>10.1f}{row['p99 rounds']:>15.2f}"
        )
    figure = ours["p99 rounds"]
    met = figure <= TARGET_P99_US
    print(
        f"event() p99 (median of {ours['rounds']:.0f} rounds) / floor's: "
        f"{figure / max(floor['p99 rounds'], 1e-3):.1f}x; "
        f"target p99 <= {TARGET_P99_US:.0f} us: {'met' if met else 'MISSED'} "
        f"(buffer {ours['pending']:.0f} pending, {ours['dropped']:.0f} dropped)"
    )
    return met


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50_000)
    parser.add_argument("--objects", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    report(run(args.calls, args.objects, rounds=args.rounds))
    return 0


def test_event_p99_while_the_server_is_down() -> None:
    """Collected under ``pytest benchmarks``: prints the table (no timing
    is asserted: benchmarks report, they do not fail)."""
    result = run(20_000, 1_000)
    report(result)
    # bounded whatever the timing: the buffer, and one write in flight
    assert result["event()"]["pending"] <= 1000 + 1


if __name__ == "__main__":
    sys.exit(main())
