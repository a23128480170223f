"""The chaos soak: many informers, trackers, a workqueue controller and the SQL
mirror against the emulator while a fault schedule fires, checking all along
that nothing is lost and every handler's deliveries keep the contract.

    python -m benchmarks.soak --minutes 30            # the long run
    python -m benchmarks.soak --seconds 60 --json r.json

Each round writes a burst of churn, injects one fault (compaction and a
relist, dropped and stalled streams, a watch that goes silent, a server
restart, 429/500/504 bursts, slow lists with expiring continue tokens, a
streaming list without its end bookmark), writes another burst while the fault
is in force, then stops writing and measures the time until every cache, every
handler's model, the tracker, the controller and the database equal the
server again. It reports:

* convergence time after each fault (p50 and max, per fault);
* objects lost: keys whose state differs from the server's once the round's
  deadline passed (must be 0);
* deliveries that break the contract, per handler: an add for a key already
  present, an update or a delete for a key never added, a resourceVersion
  going backwards (must be 0);
* thread count and RSS after each round (flat after warm-up).

Exit status 0 only when nothing was lost, the contract held and the thread
count stayed flat.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from informers import DeletedFinalStateUnknown, SharedInformerFactory
from informers.cache.reflector import ReflectorConfig
from informers.testing import ApiServer
from informers.toolkit.runtime import Controller, InformerSource, Request
from informers.wire.objects import meta_namespace_key
from informers.wire.resources import CONFIGMAPS, NAMESPACES, NODES, PODS, Resource
from tracker import ResourceTracker
from tracker.mirror import MirrorDatabase, mirror_controller

log = logging.getLogger("soak")

NAMESPACE_NAMES = ("ns-0", "ns-1", "ns-2")
CONFIG = ReflectorConfig(
    min_watch_timeout=30,
    watch_list_deadline=2.0,
    watch_progress_timeout=3.0,
    page_size=40,
)


def _rv(obj: Any) -> int:
    raw = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
    try:
        return int(raw["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return -1


class ContractChecker:
    """An event handler that replays deliveries into a model and records
    every delivery that breaks the informer's contract."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()  # guards model, violations, deliveries
        self.model: dict[str, int] = {}
        self.violations: list[str] = []
        self.deliveries = 0

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        key, rv = meta_namespace_key(obj), _rv(obj)
        with self._lock:
            self.deliveries += 1
            if key in self.model:
                self.violations.append(f"{self.name}: add for {key}, already present")
            self.model[key] = rv

    def on_update(self, old: Any, new: Any) -> None:
        key, rv = meta_namespace_key(new), _rv(new)
        with self._lock:
            self.deliveries += 1
            if key not in self.model:
                self.violations.append(f"{self.name}: update for {key}, never added")
            elif rv < self.model[key]:
                self.violations.append(f"{self.name}: {key} went back from {self.model[key]}")
            self.model[key] = rv

    def on_delete(self, obj: Any) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key(obj)
        with self._lock:
            self.deliveries += 1
            if self.model.pop(key, None) is None:
                self.violations.append(f"{self.name}: delete of {key}, never added")

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.model)


@dataclass
class Watched:
    """One informer under test: what it should hold and who checks it."""

    name: str
    resource: Resource
    namespace: str | None
    informer: Any
    checker: ContractChecker
    registration: Any


@dataclass
class Report:
    rounds: int = 0
    convergence: dict[str, list[float]] = field(default_factory=dict)
    lost: int = 0
    lost_detail: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    deliveries: int = 0
    reconciles: int = 0
    threads: list[int] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    writes: int = 0

    def summary(self) -> dict[str, Any]:
        faults = {
            name: {
                "count": len(times),
                "p50_s": round(statistics.median(times), 3),
                "max_s": round(max(times), 3),
            }
            for name, times in sorted(self.convergence.items())
        }
        warm = max(1, len(self.threads) // 4)
        return {
            "rounds": self.rounds,
            "writes": self.writes,
            "deliveries": self.deliveries,
            "reconciles": self.reconciles,
            "faults": faults,
            "lost": self.lost,
            "lost_detail": self.lost_detail[:20],
            "contract_violations": len(self.violations),
            "violation_detail": self.violations[:20],
            "threads_after_warmup": self.threads[warm - 1 : warm] + self.threads[-1:],
            "rss_mb_after_warmup": self.rss_mb[warm - 1 : warm] + self.rss_mb[-1:],
        }


def _rss_mb() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * 4096 / 2**20


class Churn:
    """Writes to the server: creates, updates and deletes across kinds,
    keeping the object count about steady."""

    def __init__(self, server: ApiServer, rng: random.Random) -> None:
        self.server = server
        self.rng = rng
        self.live: dict[tuple[Resource, str], dict[str, Any]] = {}
        self.serial = 0
        self.writes = 0

    def seed(self, per_kind: int) -> None:
        for _ in range(per_kind):
            for resource in (PODS, CONFIGMAPS, NODES):
                self.create(resource)

    def create(self, resource: Resource) -> None:
        self.serial += 1
        namespace = self.rng.choice(NAMESPACE_NAMES) if resource.namespaced else None
        meta: dict[str, Any] = {"name": f"{resource.plural[:4]}-{self.serial}"}
        if namespace:
            meta["namespace"] = namespace
        body: dict[str, Any] = {"metadata": meta}
        if resource is PODS:
            body["spec"] = {
                "nodeName": f"node-{self.rng.randrange(5)}",
                "containers": [{"name": "main", "image": "busybox"}],
            }
        elif resource is CONFIGMAPS:
            body["data"] = {"n": str(self.serial)}
        created = self.server.create(resource, body)
        self.live[(resource, meta_namespace_key(created))] = created
        self.writes += 1

    def step(self) -> None:
        resource = self.rng.choice((PODS, CONFIGMAPS, NODES))
        mine = [k for k in self.live if k[0] is resource]
        roll = self.rng.random()
        if roll < 0.34 or not mine:
            self.create(resource)
            return
        key = self.rng.choice(mine)
        obj = self.live[key]
        namespace, _, name = key[1].rpartition("/")
        if roll < 0.67:
            changed = {**obj, "metadata": {**obj["metadata"]}}
            labels = dict(changed["metadata"].get("labels") or {})
            labels["rev"] = str(self.rng.randrange(10_000))
            changed["metadata"]["labels"] = labels
            self.live[key] = self.server.update(resource, changed)
        else:
            self.server.delete(resource, name, namespace or None)
            del self.live[key]
        self.writes += 1

    def burst(self, count: int) -> None:
        for _ in range(count):
            self.step()


def _faults(server: ApiServer) -> dict[str, Callable[[], Callable[[], None]]]:
    """Each fault: inject it now, return how to lift it (after convergence)."""

    def nothing() -> None:
        return None

    def compact_and_drop() -> Callable[[], None]:
        server.compact()
        server.drop_watches()
        return nothing

    def drop_mid_line() -> Callable[[], None]:
        server.drop_watches(mid_line=True)
        return nothing

    def stall() -> Callable[[], None]:
        server.stall_watches(1.5)
        return nothing

    def silence() -> Callable[[], None]:
        server.silence_watches()
        return nothing

    def restart() -> Callable[[], None]:
        server.restart()
        return nothing

    def burst(status: int, count: int, retry_after: int | None = None) -> Callable[[], Any]:
        def inject() -> Callable[[], None]:
            server.fail_next(count, status, retry_after=retry_after)
            server.drop_watches()
            return server.clear_faults

        return inject

    def slow_lists_expiring_continue() -> Callable[[], None]:
        server.list_latency = 0.15
        server.compact()
        server.drop_watches()
        timer = threading.Timer(0.4, server.compact)  # while pages are in flight
        timer.start()

        def lift() -> None:
            timer.join()
            server.list_latency = 0.0

        return lift

    def no_end_bookmark() -> Callable[[], None]:
        server.watch_list_mode = "no-end-bookmark"
        server.compact()
        server.drop_watches()

        def lift() -> None:
            server.watch_list_mode = "on"

        return lift

    return {
        "compaction (410 relist)": compact_and_drop,
        "dropped stream mid-line": drop_mid_line,
        "stalled streams": stall,
        "silent watch": silence,
        "server restart": restart,
        "429 burst": burst(429, 6, 1),
        "500 burst": burst(500, 6),
        "504 burst": burst(504, 4),
        "slow lists, expired continue": slow_lists_expiring_continue,
        "streaming list without end bookmark": no_end_bookmark,
    }


class Soak:
    def __init__(self, server: ApiServer, rng: random.Random, db_path: Path) -> None:
        self.server = server
        self.rng = rng
        self.report = Report()
        self.churn = Churn(server, rng)
        self.client = server.api_client()
        self.factories = [
            SharedInformerFactory(self.client, reflector_config=CONFIG),
            SharedInformerFactory(self.client, namespace="ns-0", reflector_config=CONFIG),
            SharedInformerFactory(
                self.client, reflector_config=replace(CONFIG, use_watch_list=True)
            ),
        ]
        self.watched: list[Watched] = []
        plan = [
            (0, PODS, None),
            (0, CONFIGMAPS, None),
            (0, NODES, None),
            (1, PODS, "ns-0"),
            (1, CONFIGMAPS, "ns-0"),
            (2, PODS, None),
            (2, NODES, None),
        ]
        for index, resource, namespace in plan:
            informer = self.factories[index].for_resource(resource)
            name = f"{resource.plural}@{namespace or 'all'}#{index}"
            checker = ContractChecker(name)
            registration = informer.add_event_handler(checker)
            self.watched.append(Watched(name, resource, namespace, informer, checker, registration))
        pods = self.factories[0].pods()
        self.tracker: ResourceTracker[dict[str, Any]] = ResourceTracker(pods)
        self.reconciled: dict[str, int] = {}
        self._reconcile_lock = threading.Lock()
        self.controller = Controller(
            "soak-pods", self._reconcile, [InformerSource(pods)], workers=2
        )
        self.db = MirrorDatabase(f"sqlite:///{db_path}")
        self.mirror_factory = SharedInformerFactory(self.client, reflector_config=CONFIG)
        self.table = self.db.store(CONFIGMAPS)
        self.mirror = mirror_controller(
            self.table, self.client, self.mirror_factory, diff_every=5.0
        )

    def _reconcile(self, request: Request) -> None:
        with self._reconcile_lock:
            self.reconciled[str(request)] = self.reconciled.get(str(request), 0) + 1

    def start(self) -> None:
        for namespace in NAMESPACE_NAMES:
            self.server.create(NAMESPACES, {"metadata": {"name": namespace}})
        self.server.bookmark_interval = 0.5
        self.churn.seed(30)
        for factory in self.factories:
            factory.start()
        for factory in self.factories:
            factory.wait_for_cache_sync(timeout=60)  # raises CacheSyncTimeoutError
        self.controller.start()
        self.mirror.start()

    def stop(self) -> None:
        self.mirror.stop()
        self.controller.stop()
        self.tracker.close()
        for factory in (*self.factories, self.mirror_factory):
            factory.shutdown()
        self.db.close()
        self.client.close()

    def server_state(self, resource: Resource, namespace: str | None) -> dict[str, int]:
        return {
            meta_namespace_key(o): int(o["metadata"]["resourceVersion"])
            for o in self.server.list_objects(resource)
            if namespace is None or o["metadata"].get("namespace") == namespace
        }

    def differences(self) -> list[str]:
        """What still differs from the server (empty: converged)."""
        out: list[str] = []
        for w in self.watched:
            want = self.server_state(w.resource, w.namespace)
            cache = {meta_namespace_key(o): _rv(o) for o in w.informer.get_store().list()}
            if cache != want:
                out.append(
                    f"{w.name}: cache differs in {len(set(cache.items()) ^ set(want.items()))} keys"
                )
            elif w.checker.snapshot() != want:
                out.append(f"{w.name}: handler model differs")
        pods = self.server_state(PODS, None)
        if len(self.tracker.known_resources()) != len(pods):
            out.append("tracker: known_resources differs")
        rows = {str(k) for k in self.table.objects()}
        if rows != set(self.server_state(CONFIGMAPS, None)):
            out.append(
                f"mirror: {len(rows ^ set(self.server_state(CONFIGMAPS, None)))} rows differ"
            )
        return out

    def converge(self, deadline: float) -> list[str]:
        """Wait (on the components' own idle points) until nothing differs."""
        target = self.server.resource_version
        while True:
            for w in self.watched:
                reflector = w.informer.reflector
                remaining = max(0.05, deadline - time.monotonic())
                if reflector is not None:
                    reflector.wait_for(
                        lambda s: (
                            s.mem.last_sync_rv.isdigit() and int(s.mem.last_sync_rv) >= target
                        ),
                        min(remaining, 2.0),
                    )
                w.informer.wait_idle(min(remaining, 2.0))
                w.registration.wait_idle(min(remaining, 2.0))
            self.controller.wait_idle(1.0)
            self.mirror.wait_idle(1.0)
            left = self.differences()
            if not left or time.monotonic() >= deadline:
                return left

    def round(self, fault_name: str, inject: Callable[[], Callable[[], None]]) -> None:
        self.churn.burst(self.rng.randrange(20, 60))
        began = time.monotonic()
        lift = inject()
        self.churn.burst(self.rng.randrange(10, 40))
        left = self.converge(began + 60.0)
        took = time.monotonic() - began
        lift()
        self.server.clear_faults()
        if left:
            self.report.lost += len(left)
            self.report.lost_detail.extend(f"{fault_name}: {d}" for d in left)
            self.converge(time.monotonic() + 30.0)  # start the next round clean
        self.report.convergence.setdefault(fault_name, []).append(took)
        self.report.rounds += 1
        self.report.threads.append(threading.active_count())
        self.report.rss_mb.append(round(_rss_mb(), 1))
        log.info("round %d: %s converged in %.2f s", self.report.rounds, fault_name, took)

    def finish(self) -> Report:
        self.report.writes = self.churn.writes
        for w in self.watched:
            self.report.violations.extend(w.checker.violations)
            self.report.deliveries += w.checker.deliveries
        self.report.reconciles = sum(self.reconciled.values())
        return self.report


def run(seconds: float, seed: int = 0) -> Report:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp, ApiServer() as server:
        soak = Soak(server, rng, Path(tmp) / "mirror.db")
        soak.start()
        try:
            faults = list(_faults(server).items())
            end = time.monotonic() + seconds
            index = 0
            while time.monotonic() < end:
                name, inject = faults[index % len(faults)]
                soak.round(name, inject)
                index += 1
            return soak.finish()
        finally:
            soak.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0]
    )
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--minutes", type=float, help="how long to run")
    length.add_argument("--seconds", type=float, help="how long to run (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    seconds = args.minutes * 60 if args.minutes else (args.seconds or 60.0)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    if not args.verbose:
        logging.getLogger("informers").setLevel(logging.CRITICAL)
        logging.getLogger("tracker").setLevel(logging.CRITICAL)
    started = time.monotonic()
    threads_before = threading.active_count()
    report = run(seconds, args.seed)
    summary = report.summary()
    summary["seconds"] = round(time.monotonic() - started, 1)
    summary["threads_before_and_after"] = [threads_before, threading.active_count()]
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    threads = report.threads
    warm = max(1, len(threads) // 4)
    flat = not threads or threads[-1] <= threads[warm - 1] + 2
    ok = report.lost == 0 and not report.violations and flat
    print(
        f"soak: {'OK' if ok else 'FAILED'}: lost {report.lost}, contract violations "
        f"{len(report.violations)}, threads {'flat' if flat else 'growing'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
