"""Sharding: reconciles per second and memory per replica with 1, 2 and 4
replicas of a trivial controller, each replica its own process, against
one emulator started in the parent.

Two routing modes:

``label``
    objects carry their shard's label (the parent labels them as the
    sharder would, from the ring of the N shards, before the replicas
    start, so only the replicas are measured); each replica watches its
    label only. Memory per replica should approach 1/N of one replica's.
``client``
    every replica watches everything and filters by the ring of the shard
    Leases it sees (each replica holds a Lease and waits for the full ring
    before it starts its controller).

Each replica reports how long it took from starting its informer to
having reconciled all its objects, how many it reconciled, and its RSS
(``VmRSS``) before the informer started and at the end; the figures are
printed as ratios against the single replica measured in the same run.

Run: ``PYTHONPATH=. python benchmarks/bench_sharding.py [objects] [mode ...]``
(default 5000 objects, both modes).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from informers.resources import CONFIGMAPS
from informers.testing import ApiServerError

REPLICAS = (1, 2, 4)
RING = "bench"


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ replica


def replica(url: str, shard: str, shards: int, mode: str) -> None:
    """One replica process: prints one JSON line with its figures."""
    from kubernetes import client as k8s

    from informers.informer import SharedIndexInformer
    from informers.listwatch import HTTPListerWatcher
    from informers.runtime import Controller, InformerSource, Request
    from informers.sharding import (
        RingWatcher,
        ShardLease,
        shard_filter,
        shard_selector,
    )

    config = k8s.Configuration()
    config.host = url
    api = k8s.ApiClient(config)
    baseline = rss_kib()
    count_lock = threading.Lock()
    reconciled = [0]

    def reconcile(_request: Request) -> None:
        with count_lock:
            reconciled[0] += 1

    lease = watcher = None
    predicates: list[Any] = []
    if mode == "label":
        selector = shard_selector(RING, shard)
    else:
        selector = ""
        lease = ShardLease(api, "default", RING, shard)
        watcher = RingWatcher(api, "default", RING)
        full = threading.Event()
        watcher.add_callback(lambda _o, new: full.set() if len(new) == shards else None)
        lease.start()
        watcher.start()
        assert lease.wait_ready(30)
        assert watcher.wait_synced(30)
        if len(watcher.ring()) != shards:
            assert full.wait(60)
        predicates = [shard_filter(watcher, shard, "", "ConfigMap")]
    informer = SharedIndexInformer(HTTPListerWatcher(api, CONFIGMAPS, label_selector=selector))
    controller = Controller(
        f"bench-{shard}", reconcile, [InformerSource(informer, predicates=predicates)], workers=2
    )
    started = time.perf_counter()
    informer.start()
    controller.start()  # waits for the informer's initial list
    assert controller.wait_idle(600)
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "shard": shard,
                "seconds": elapsed,
                "reconciled": reconciled[0],
                "cached": len(informer.get_store().list()),
                "rss_kib": rss_kib(),
                "baseline_kib": baseline,
            }
        ),
        flush=True,
    )
    controller.stop()
    informer.stop()
    if watcher is not None and lease is not None:
        watcher.stop()
        lease.stop(10)
    api.close()


# ------------------------------------------------------------------ parent


def label_objects(server: Any, names: list[str], shards: int) -> None:
    from informers.sharding import HashRing, ring_key, shard_label

    ring = HashRing(f"shard-{i}" for i in range(shards))
    for name in names:
        obj = server.get(CONFIGMAPS, name, namespace="default")
        key = ring_key(obj, "", "ConfigMap")
        obj["metadata"]["labels"] = {shard_label(RING): ring.shard_for(key)}
        server.update(CONFIGMAPS, obj)


def run(server: Any, names: list[str], shards: int, mode: str) -> list[dict[str, Any]]:
    if mode == "label":
        label_objects(server, names, shards)
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--replica", server.url, f"shard-{i}", str(shards), mode],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(shards)
    ]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=900)
        results.append(json.loads(out.strip().splitlines()[-1]))
    for i in range(shards):  # the next run starts with no leases of this one
        with contextlib.suppress(ApiServerError):  # label mode makes none
            server.delete("leases", f"shard-{i}", namespace="default")
    return results


def main() -> None:
    from informers.testing import ApiServer

    args = sys.argv[1:]
    count = int(args[0]) if args and args[0].isdigit() else 5000
    modes = [a for a in args if a in ("label", "client")] or ["label", "client"]
    names = [f"cm-{i:05d}" for i in range(count)]
    with ApiServer() as server:
        server.create_many(
            CONFIGMAPS,
            (
                {"metadata": {"name": n, "namespace": "default"}, "data": {"k": "v" * 200}}
                for n in names
            ),
        )
        for mode in modes:
            print(f"sharding, {mode} routing: {count:,} ConfigMaps, a replica per process")
            floor: dict[str, float] = {}
            for shards in REPLICAS:
                results = run(server, names, shards, mode)
                wall = max(r["seconds"] for r in results)
                total = sum(r["reconciled"] for r in results)
                rate = total / wall
                cache = sum(r["rss_kib"] - r["baseline_kib"] for r in results) / shards
                if shards == 1:
                    floor = {"rate": rate, "cache": cache}
                speed, share = rate / floor["rate"], cache / floor["cache"]
                print(
                    f"  {shards} replica(s): {rate:>9,.0f} reconciles/s ({speed:.2f}x of 1)"
                    f"   reconciled {total:,}   RSS growth per replica {cache / 1024:7.1f} MiB"
                    f" ({share:.2f}x of 1; 1/N = {1 / shards:.2f})"
                )
                for r in results:
                    print(f"      {r['shard']}: {r['reconciled']:,} in {r['seconds']:.2f} s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--replica":
        replica(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        main()
