"""Warm failover against a cold start, through the Manager and the emulator.

Two replicas under leader election (the Manager's warm standby): both sync
``N`` pods (``bench_apiserver``'s, about 1.5 KB each); the leader
reconciles. The figure is the time from the leader being told to stop
(``manager.stop()``: its controller stops, its informers stop, it releases
the Lease) to the standby's first reconcile --
the standby's election attempt plus its controller's workers starting on a
queue its warmed-up sources filled from caches it already has, **without a
new list**.

Measured side by side in the same run: a cold start, a fresh manager on a
free Lease from ``start()`` to its first reconcile -- the initial list of
``N`` objects, the sync, the election (won at the first attempt) and the
controller start. The target is warm <= 0.1x cold at 10k objects.

Run:

    PYTHONPATH=. python benchmarks/bench_manager.py [--n 10000] [--rounds 3] [--retry 2]
    python -m pytest benchmarks/bench_manager.py --benchmark-enable   # a small smoke run
    PYTHONPATH=. python benchmarks/bench_manager.py --sync-vs-lightkube 100000 --rounds 1

The last compares a 100k-pod sync through the Manager (its collector
policy: the collector paused during the sync, the heap frozen after) with
ours plain and with lightkube (``benchmarks/compare.py`` has the same row
among all its peers).

The durations are client-go's (lease 15 s, renew 10 s, retry 2 s; scaled by
``--retry``). A standby alone would notice the released Lease only at its
next attempt, ``retry`` to ``2.2 * retry`` later; the manager's release watch
(:mod:`informers.toolkit.manager._release_watch`) makes it try the moment the
release arrives, so the retry period drops out of the figure; and the
standby's controllers are warmed up (``Controller.warm_up``: their sources
queued every cached object while standing by), so leading only starts the
workers. What is left is the leader's stop, the release, one election
request and the first worker's start.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_apiserver import fill

from informers.testing.apiserver import ApiServer
from informers.toolkit.leaderelection import LeaderElectionConfig, LeaseLock
from informers.toolkit.manager import Manager
from informers.toolkit.runtime import InformerSource, Request

TARGET = 0.1


class Acquired(logging.Handler):
    """Notes the monotonic time an identity's elector logs that it started
    leading (the moment the Lease was acquired)."""

    def __init__(self, identity: str) -> None:
        super().__init__(logging.INFO)
        self._prefix = f"{identity} started leading"
        self.at = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self._prefix):
            self.at = time.monotonic()


class FirstReconcile:
    """Records the monotonic time of the first reconcile."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.at = 0.0

    def __call__(self, request: Request) -> None:
        if not self.done.is_set():
            self.at = time.monotonic()
            self.done.set()


def _manager(server: ApiServer, lease: str, identity: str, retry: float) -> tuple[Manager, Any]:
    client = server.api_client()
    config = LeaderElectionConfig(
        lock=LeaseLock(client, "default", lease),
        identity=identity,
        lease_duration=7.5 * retry,  # client-go's proportions: 15 s, 10 s, 2 s
        renew_deadline=5 * retry,
        retry_period=retry,
        release_on_cancel=True,
    )
    manager = Manager(client, leader_election=config, graceful_shutdown_timeout=30)
    first = FirstReconcile()
    manager.controller("bench", first, [InformerSource(manager.factory.pods())])
    return manager, first


def cold_start(server: ApiServer, lease: str, retry: float) -> float:
    """Seconds from ``start()`` of a fresh manager to its first reconcile."""
    manager, first = _manager(server, lease, "cold", retry)
    try:
        began = time.monotonic()
        manager.start()
        if not first.done.wait(300):
            raise RuntimeError("the cold manager never reconciled")
        return float(first.at - began)
    finally:
        manager.stop()
        manager.api_client.close()


def warm_failover(server: ApiServer, lease: str, retry: float) -> tuple[float, float, float]:
    """Seconds from the leader's ``stop()`` to the warm standby's first
    reconcile, from the end of that stop (the Lease released), and from the
    standby's acquisition of the Lease; checks that the standby's reflector
    did not fail (a failure means a relist: not warm)."""
    leader, leader_first = _manager(server, lease, "leader", retry)
    standby, standby_first = _manager(server, lease, "standby", retry)
    acquired = Acquired("standby")
    elector_log = logging.getLogger("informers.toolkit.leaderelection.elector")
    level, propagate = elector_log.level, elector_log.propagate
    elector_log.addHandler(acquired)
    elector_log.setLevel(logging.INFO)
    elector_log.propagate = False  # only the handler hears it
    try:
        leader.start()
        if not leader_first.done.wait(300):
            raise RuntimeError("the leader never reconciled")
        standby.start()  # returns once its caches synced: a warm standby
        reflector = standby.factory.pods().reflector
        assert reflector is not None
        began = time.monotonic()
        leader.stop()
        released = time.monotonic()
        if not standby_first.done.wait(300):
            raise RuntimeError("the standby never reconciled")
        errors = reflector.errors()
        if errors:  # a relist follows an error: the failover would not be warm
            raise RuntimeError(f"the standby's reflector failed meanwhile: {errors[-1]}")
        return (
            standby_first.at - began,
            standby_first.at - released,
            standby_first.at - acquired.at,
        )
    finally:
        elector_log.removeHandler(acquired)
        elector_log.setLevel(level)
        elector_log.propagate = propagate
        leader.stop()
        standby.stop()
        leader.api_client.close()
        standby.api_client.close()


def run(n: int, rounds: int, retry: float) -> dict[str, float]:
    with ApiServer() as server:
        fill(server, n)
        cold, warm, after_release, after_acquire = [], [], [], []
        for r in range(rounds):  # interleaved, so drift hits both alike
            cold.append(cold_start(server, f"cold-{r}", retry))
            total, since_release, since_acquire = warm_failover(server, f"warm-{r}", retry)
            warm.append(total)
            after_release.append(since_release)
            after_acquire.append(since_acquire)
    result = {
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
        "after_release": statistics.median(after_release),
        "after_acquire": statistics.median(after_acquire),
    }
    result["ratio"] = result["warm"] / result["cold"]
    return result


def test_warm_failover_smoke() -> None:
    """A small run: both paths work end to end (no timing asserted)."""
    figures = run(n=200, rounds=1, retry=0.05)
    assert figures["cold"] > 0
    assert figures["warm"] > 0


def sync_vs_lightkube(n: int, rounds: int) -> dict[str, float]:
    """Seconds to a synced cache of ``n`` pods (medians, interleaved):
    ours plain, ours through the Manager (its collector policy) and
    lightkube, with ``benchmarks.compare``'s contenders and its emulator in
    a child process."""
    import tempfile

    from benchmarks import compare
    from benchmarks.bench_informer import RemoteServer, sync_floor, sync_ours

    figures: dict[str, list[float]] = {"ours": [], "manager": [], "lightkube": []}
    with tempfile.TemporaryDirectory() as tmp, RemoteServer(watch_buffer_size=1000) as server:
        server.fill(n)
        sync_floor(server, n)  # warm the emulator's per-object JSON
        kubeconfig = compare.write_kubeconfig(server.url, Path(tmp))
        for _ in range(rounds):
            figures["ours"].append(sync_ours(server, n).elapsed)
            figures["manager"].append(compare.sync_manager(server, n))
            figures["lightkube"].append(
                compare._timed(lambda cache: compare._fill_lightkube(kubeconfig, cache), n)
            )
    return {name: statistics.median(values) for name, values in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="pods (default 10000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, medians (default 3)")
    parser.add_argument("--retry", type=float, default=2.0, help="retry period, s (default 2)")
    parser.add_argument(
        "--sync-vs-lightkube",
        type=int,
        metavar="N",
        help="instead: sync N pods plain, through the Manager, and with lightkube",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.sync_vs_lightkube:
        synced = sync_vs_lightkube(args.sync_vs_lightkube, args.rounds)
        print(f"pods: {args.sync_vs_lightkube}, rounds: {args.rounds} (medians)")
        for name, seconds in synced.items():
            print(f"{name:10s} {seconds:.2f} s  ({seconds / synced['lightkube']:.2f}x lightkube)")
        return
    figures = run(args.n, args.rounds, args.retry)
    print(f"objects: {args.n}, rounds: {args.rounds}, retry period: {args.retry} s")
    print(f"cold start (list + sync + election + first reconcile): {figures['cold']:.3f} s")
    print(f"warm failover (leader stop -> standby's first reconcile): {figures['warm']:.3f} s")
    print(f"  of which after the Lease was released: {figures['after_release']:.3f} s")
    print(f"  of which after the standby acquired it: {figures['after_acquire']:.3f} s")
    verdict = "meets" if figures["ratio"] <= TARGET else "misses"
    print(f"warm / cold: {figures['ratio']:.3f}x ({verdict} the {TARGET}x target)")
    controller = figures["after_acquire"] / figures["cold"]
    print(f"controller start on warm caches / cold start: {controller:.3f}x")


if __name__ == "__main__":
    main()
