"""The watch-event path without HTTP or a server: where ours spends its time
per event against the floors, measured in one process with little noise.

    python -m benchmarks.bench_events                  # 20k events, 5 rounds, collector on and off
    python -m benchmarks.bench_events --events 2000 --rounds 9
    python -m benchmarks.bench_events --gc off         # the pipeline alone

Every contender consumes the same pre-encoded watch lines (``make_pod`` pods,
the comparison's, one ``ADDED`` event per line, as a server that flushes each
event sends them), each round in a namespace of its own so every cache starts
empty and grows to the same size:

* ``floor: orjson + keep``: ``orjson.loads`` each line and keep the object in
  a dict by key -- the parse-and-keep loop of ``python -m benchmarks.compare``.
* ``floor: exact parse + keep``: the same with the parser this project ships
  (:mod:`informers.wire._json`: orjson, plus the scan that routes integers beyond
  64 bits to ``json.loads``).
* ``floor: 2 thread hand-offs``: orjson-parse on one thread, queue each
  object to a second that keys and keeps it and queues it to a third that
  counts it: the least a threaded informer (client-go's shape) does.
* ``floor: the informer contract``: the least the informer contract costs,
  written plainly on client-go's three threads (``bench_informer.ContractFloor``:
  the exact parse, the resource version never moving back, the key, a locked
  read-and-write of the cache, a typed notification to a handler thread that
  counts it). Ours' cost over it is what kube-informers adds to the
  contract; its cost over the hand-off floor is what the contract itself
  costs in CPython.
* ``kube-informers``: a :class:`~informers.SharedIndexInformer` with one
  no-op handler, reading the lines through the real watch stream
  (``informers.rest.listwatch._HTTPWatchStream``) from an in-memory response;
  timed from the release of the lines to the handler's last call.
* ``ours + informer metrics``: kube-informers with the informer metrics of
  :mod:`informers.cache.prometheus` on a registry of its own (a clock read
  per event, the sampled latency probes): its ratio to ``kube-informers``
  is what the metrics cost.

Reports microseconds per event (the best of the rounds, and the median),
each contender's cost over the orjson floor (the median over the rounds of
its time over the floor's in the same round), and the process's voluntary
context switches per event in the timed region (median of the rounds: each
is a thread that went to sleep waiting, for a queue, a lock or the GIL). On
Linux the table ends with the CPU steal during its rounds (from
``/proc/stat``: time the hypervisor gave this machine's CPUs to others),
which is what makes figures move most on a shared virtual machine.

Pin the process to one CPU to take the cost of threads waking each other
across cores out (the GIL lets one run at a time anyway):
``taskset -c 1 python -m benchmarks.bench_events``. With ``--gc on`` the cyclic
collector runs as usual (it walks the growing cache: most of the time at 20k
for every contender alike); with ``--gc off`` it is disabled in the timed
region, which leaves the per-event work of each pipeline.
"""

from __future__ import annotations

import argparse
import gc
import queue
import resource
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_apiserver import make_pod
from bench_informer import ContractFloor

from informers import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.rest.listwatch import ListOptions, _HTTPWatchStream
from informers.wire import _json

FLOOR = "floor: orjson + keep"
FLOOR_EXACT = "floor: exact parse + keep"
FLOOR_HANDOFFS = "floor: 2 thread hand-offs"
FLOOR_CONTRACT = "floor: the informer contract"
OURS = "kube-informers"
OURS_METRICS = "ours + informer metrics"
CONTENDERS = (FLOOR, FLOOR_EXACT, FLOOR_HANDOFFS, FLOOR_CONTRACT, OURS, OURS_METRICS)


class Timing(NamedTuple):
    """One contender's timed region: wall seconds, the voluntary context
    switches the whole process made in it, and the collector's full
    collections in it."""

    seconds: float
    switches: int
    full_collections: int = 0


def _switches() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw


def _full_collections() -> int:
    return int(gc.get_stats()[-1]["collections"])


class _Stopwatch:
    """Started when made; :meth:`stop` gives the :class:`Timing` since."""

    def __init__(self) -> None:
        self._switched = _switches()
        self._full = _full_collections()
        self._started = time.perf_counter()

    def stop(self) -> Timing:
        return Timing(
            time.perf_counter() - self._started,
            _switches() - self._switched,
            _full_collections() - self._full,
        )


def _cpu_ticks() -> tuple[int, int] | None:
    """(all, steal) CPU ticks of the machine so far, from /proc/stat; None
    where there is no such file."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(f) for f in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    steal = fields[7] if len(fields) > 7 else 0
    return sum(fields[:8]), steal


def watch_lines(n: int, namespace: str) -> list[bytes]:
    """``n`` ADDED events of distinct pods in ``namespace``, one JSON line each."""
    lines = []
    for i in range(n):
        pod = make_pod(i)
        pod["metadata"]["namespace"] = namespace
        pod["metadata"]["resourceVersion"] = str(1000 + i)
        lines.append(orjson.dumps({"type": "ADDED", "object": pod}) + b"\n")
    return lines


class _Collector:
    """Disables the cyclic collector for a timed region when asked to."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        gc.collect()
        if not self.enabled:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        gc.enable()


def floor(lines: list[bytes], loads: Callable[[bytes], Any], collector: bool) -> Timing:
    cache: dict[str, Any] = {}
    with _Collector(collector):
        watch = _Stopwatch()
        for line in lines:
            obj = loads(line)["object"]
            meta = obj["metadata"]
            cache[f"{meta['namespace']}/{meta['name']}"] = obj
        return watch.stop()


def floor_handoffs(lines: list[bytes], collector: bool) -> Timing:
    to_cache: queue.SimpleQueue[Any] = queue.SimpleQueue()
    to_handler: queue.SimpleQueue[Any] = queue.SimpleQueue()
    done = threading.Event()
    n = len(lines)

    def keep() -> None:
        cache: dict[str, Any] = {}
        while (obj := to_cache.get()) is not None:
            meta = obj["metadata"]
            cache[f"{meta['namespace']}/{meta['name']}"] = obj
            to_handler.put(obj)
        to_handler.put(None)

    def handle() -> None:
        seen = 0
        while to_handler.get() is not None:
            seen += 1
            if seen == n:
                done.set()

    threads = [threading.Thread(target=keep), threading.Thread(target=handle)]
    for thread in threads:
        thread.start()
    try:
        with _Collector(collector):
            watch = _Stopwatch()
            for line in lines:
                to_cache.put(orjson.loads(line)["object"])
            assert done.wait(600)
            return watch.stop()
    finally:
        to_cache.put(None)
        for thread in threads:
            thread.join()


def floor_contract(lines: list[bytes], collector: bool) -> Timing:
    checked = ContractFloor(len(lines))
    loads = _json.loads
    try:
        with _Collector(collector):
            watch = _Stopwatch()
            for line in lines:
                checked.put_event(loads(line))
            checked.wait()
            return watch.stop()
    finally:
        checked.close()


class _Response:
    """An in-memory streamed response: the lines once released, then nothing
    until shut down (as an open watch with no more events)."""

    status = 200
    headers: dict[str, str] = {}

    def __init__(self, lines: list[bytes], release: threading.Event) -> None:
        self._lines = lines
        self._release = release
        self._shut = threading.Event()

    def chunks(self, size: int = 65536) -> Iterator[bytes]:
        self._release.wait()
        yield from self._lines
        self._shut.wait()

    def read(self) -> bytes:
        return b""

    def shutdown(self) -> None:
        self._shut.set()

    def close(self) -> None:
        self._shut.set()


class _ListerWatcher:
    """An empty list, then one watch serving the lines once released (later
    watches, after the informer stops, serve nothing)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.release = threading.Event()
        self._lines: list[bytes] | None = lines

    def list(self, options: ListOptions) -> dict[str, Any]:
        return {"kind": "PodList", "metadata": {"resourceVersion": "1"}, "items": []}

    def watch(self, options: ListOptions) -> _HTTPWatchStream:
        lines, self._lines = self._lines or [], None
        return _HTTPWatchStream(_Response(lines, self.release), "pods")


def ours(lines: list[bytes], collector: bool, metrics: bool = False) -> Timing:
    n = len(lines)
    done = threading.Event()
    seen = [0]

    def hit(obj: Any) -> None:
        seen[0] += 1
        if seen[0] == n:
            done.set()

    lw = _ListerWatcher(lines)
    provider = None
    if metrics:
        from prometheus_client import CollectorRegistry

        from informers.cache.prometheus import PrometheusInformerMetrics

        provider = PrometheusInformerMetrics(CollectorRegistry())
    inf = SharedIndexInformer(lw, name="pods", metrics=provider)
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=hit))
    inf.start()
    try:
        assert inf.wait_synced(30)
        reflector = inf.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: type(s).__name__ == "Watching", 30)
        with _Collector(collector):
            watch = _Stopwatch()
            lw.release.set()
            assert done.wait(600)
            return watch.stop()
    finally:
        inf.stop()


def run(n: int, rounds: int, collector: bool) -> dict[str, list[Timing]]:
    """Every contender's timing, ``rounds`` times, interleaved (per event:
    microseconds and switches)."""
    times: dict[str, list[Timing]] = {name: [] for name in CONTENDERS}
    for r in range(rounds):
        lines = watch_lines(n, f"ns-round-{r}")
        for name in CONTENDERS:
            if name == FLOOR:
                elapsed = floor(lines, orjson.loads, collector)
            elif name == FLOOR_EXACT:
                elapsed = floor(lines, _json.loads, collector)
            elif name == FLOOR_HANDOFFS:
                elapsed = floor_handoffs(lines, collector)
            elif name == FLOOR_CONTRACT:
                elapsed = floor_contract(lines, collector)
            else:
                elapsed = ours(lines, collector, metrics=name == OURS_METRICS)
            times[name].append(
                Timing(elapsed.seconds / n * 1e6, elapsed.switches, elapsed.full_collections)
            )
    return times


def report(
    times: dict[str, list[Timing]],
    collector: bool,
    n: int,
    steal: float | None = None,
) -> None:
    """The table: best and median microseconds per event, the cost over the
    orjson floor as the median of the per-round ratios (each round's
    contenders run back to back, so a ratio within a round cancels most of
    the machine's drift between rounds), the median voluntary context
    switches per event, and the full collections of each round (one more
    full collection of the largest heap is about a tenth of a 20k-event
    run: compare contenders that made as many); then ``steal`` (a fraction
    of the CPU time) if known."""
    floor_times = [t.seconds for t in times[FLOOR]]
    print(f"\n{n:,} events, collector {'on' if collector else 'off'} (us per event)")
    header = ("contender", "best", "median", "cost vs floor (median of rounds)", "switches")
    print(
        f"{header[0]:32s} {header[1]:>8s} {header[2]:>8s}  {header[3]:36s} {header[4]:14s} "
        "full collections"
    )
    for name, timings in times.items():
        values = [t.seconds for t in timings]
        ratios = [v / f for v, f in zip(values, floor_times, strict=True)]
        cost = f"{statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f})"
        switches = statistics.median(t.switches for t in timings) / n
        full = "/".join(str(t.full_collections) for t in timings)
        print(
            f"{name:32s} {min(values):8.1f} {statistics.median(values):8.1f}  "
            f"{cost:36s} {switches:.3f}/event  {full}"
        )
    if steal is not None:
        print(f"CPU steal during these rounds: {steal:.0%} of the machine's CPU time")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_events", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gc", choices=("on", "off", "both"), default="both")
    args = parser.parse_args(argv)
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.gc]
    for collector in modes:
        before = _cpu_ticks()
        times = run(args.events, args.rounds, collector)
        after = _cpu_ticks()
        steal = None
        if before is not None and after is not None and after[0] > before[0]:
            steal = (after[1] - before[1]) / (after[0] - before[0])
        report(times, collector, args.events, steal)
    return 0


if __name__ == "__main__":
    sys.exit(main())
