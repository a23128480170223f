"""Metadata-only informers against full ones: memory per cached object and
time to sync, side by side in one run over the same emulator (real HTTP).

    python -m benchmarks.bench_metadata                 # 20k pods
    python -m benchmarks.bench_metadata --pods 100000   # the issue's size
    python -m benchmarks.bench_metadata --pods 2000 --json

The emulator holds ``--pods`` realistic pods
(:func:`benchmarks.bench_compact.realistic_pod`: managed fields, owner
references, container statuses; about 3.3 KB of JSON) and runs in a child
process, so its JSON encoding does not compete with the informer for this
process's GIL. Memory is measured in a fresh child process per contender
(RSS of one does not leak into another's), sync in one more child that
runs ``SharedIndexInformer`` over ``HTTPListerWatcher(...,
metadata_only=...)`` from start to synced for every contender in turn.

Contenders: the full dict cache (the reference); metadata-only
(``PartialObjectMetadata``, managed fields kept, as the server sends them) in
dicts; stripped of managed fields in a
:class:`~informers.cache.compact.CompactStore` with its default zlib codec;
in a :class:`~informers.cache.compact.raw.RawStore` (objects kept as the JSON
bytes they came in, metadata read in C), as served and stripped; and what
``factory.for_resource(..., metadata_only=True)`` builds by default
(:func:`~informers.cache.scope.metadata_store`: stripped, a CompactStore of
zstd-compressed JSON). The compact and raw stores page their lists (500 a page). The
floor line gives the mean JSON bytes of one pod's ``PartialObjectMetadata``,
as served and without managed fields: what a cache of them holds at least,
before any per-object bookkeeping.
Prints each figure and its ratio to the full cache (``x smaller``,
``x faster``); memory as RSS growth and as tracemalloc's count of Python
allocations (steadier at small sizes); sync as the median of ``--rounds`` runs
after a warm-up, the contenders interleaved, with the collector as it is and
paused (:func:`~informers.util.gcpolicy.collector_paused`). The targets of
issue 29 are <= 1 KB per object and >= 3x faster sync for metadata-only; the
table shows which configuration meets which.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes.client

from benchmarks.bench_compact import PER_NAMESPACE, realistic_pod
from informers.cache.compact import CompactStore
from informers.cache.compact.raw import RawStore
from informers.cache.informer import SharedIndexInformer
from informers.cache.protocols import StoreFactory
from informers.cache.reflector import ReflectorConfig
from informers.cache.scope import metadata_store
from informers.cache.transforms import strip_managed_fields
from informers.rest.listwatch import HTTPListerWatcher
from informers.util.gcpolicy import collector_paused
from informers.wire.partial import as_partial_object_metadata
from informers.wire.resources import PODS

__all__ = ["CONTENDERS", "main"]

HERE = Path(__file__).resolve().parent

FULL = "full objects, dict store"
META = "metadata-only, dict store"
META_ZLIB = "metadata-only, stripped, CompactStore (zlib)"
META_RAW = "metadata-only, RawStore"
META_RAW_STRIPPED = "metadata-only, stripped, RawStore"
META_DEFAULT = "metadata-only, stripped, zstd (the default)"
#: Each contender: (metadata_only, strip managed fields, store: None (dicts)
#: or a store factory). The last is what ``factory.for_resource(...,
#: metadata_only=True)`` builds by default (:func:`~informers.cache.scope.metadata_store`).
CONTENDERS: dict[str, tuple[bool, bool, StoreFactory | None]] = {
    FULL: (False, False, None),
    META: (True, False, None),
    META_ZLIB: (True, True, CompactStore),
    META_RAW: (True, False, RawStore),
    META_RAW_STRIPPED: (True, True, RawStore),
    META_DEFAULT: (True, True, metadata_store),
}


def floor(n: int, sample: int = 2000) -> dict[str, float]:
    """The size of what a metadata-only cache must hold, per object: the
    mean JSON bytes of a pod's ``PartialObjectMetadata``, as served and
    without managed fields (over ``sample`` pods spread across the ``n``)."""
    sizes: dict[str, list[int]] = {"as served": [], "without managedFields": []}
    for i in range(0, n, max(1, n // sample)):
        partial = as_partial_object_metadata(realistic_pod(i))
        sizes["as served"].append(len(json.dumps(partial, separators=(",", ":"))))
        partial["metadata"] = {k: v for k, v in partial["metadata"].items() if k != "managedFields"}
        sizes["without managedFields"].append(len(json.dumps(partial, separators=(",", ":"))))
    return {k: statistics.mean(v) for k, v in sizes.items()}


CHILD = [sys.executable, "-m", "benchmarks.bench_metadata"]


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# --------------------------------------------------------------------------- the server process


def serve(n: int) -> None:
    """In a child: an emulator holding ``n`` realistic pods; prints its URL,
    exits when stdin closes."""
    from informers.testing import ApiServer

    with ApiServer(watch_buffer_size=1000) as server:
        for ns in range((n + PER_NAMESPACE - 1) // PER_NAMESPACE):
            server.create("namespaces", {"metadata": {"name": f"ns-{ns:05d}"}})
        server.create_many(PODS, (realistic_pod(i) for i in range(n)))
        print(server.url, flush=True)
        sys.stdin.read()


# --------------------------------------------------------------------------- one contender


def _informer(url: str, contender: str) -> tuple[SharedIndexInformer, Any]:
    metadata_only, strip, store = CONTENDERS[contender]
    config = kubernetes.client.Configuration()
    config.host = url
    client = kubernetes.client.ApiClient(config)
    informer = SharedIndexInformer(
        HTTPListerWatcher(client, PODS, metadata_only=metadata_only),
        name="pods",
        store=store,
        reflector_config=ReflectorConfig(description="pods"),
    )
    if strip:
        informer.set_transform(strip_managed_fields)
    return informer, client


def _sync(url: str, contender: str) -> tuple[float, SharedIndexInformer]:
    informer, client = _informer(url, contender)
    gc.collect()
    started = time.perf_counter()
    informer.start()
    assert informer.wait_synced(900)
    elapsed = time.perf_counter() - started
    informer.stop()
    client.close()
    return elapsed, informer


def _timed(url: str, contender: str) -> float:
    gc.collect()
    elapsed, informer = _sync(url, contender)
    del informer
    return elapsed


def memory_child(url: str, contender: str, n: int) -> None:
    """In a fresh process: the RSS growth of a first sync (nothing freed
    before it for the cache to reuse), then, the cache dropped, tracemalloc's
    count of the bytes Python allocated for a second one; per cached object,
    one JSON line."""
    before = _rss()
    _, informer = _sync(url, contender)
    gc.collect()
    grown = _rss() - before
    assert len(informer.get_indexer()) == n, (len(informer.get_indexer()), n)
    del informer
    gc.collect()
    tracemalloc.start()
    _, _kept = _sync(url, contender)
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(json.dumps({"rss": grown / n, "traced": traced / n}), flush=True)


def timing_child(url: str, rounds: int) -> None:
    """In one fresh process: every contender's sync, interleaved over
    ``rounds`` rounds after one warm-up round (so a load that comes and goes
    on a shared machine touches them all alike); the median of each, one
    JSON line. Once with the cyclic collector as it is, once inside
    :func:`~informers.util.gcpolicy.collector_paused` (the documented setup
    for large syncs)."""
    out: dict[str, dict[str, float]] = {}
    for paused in (False, True):
        times: dict[str, list[float]] = {c: [] for c in CONTENDERS}
        for round_ in range(rounds + 1):
            for contender in CONTENDERS:
                with collector_paused() if paused else contextlib.nullcontext():
                    elapsed = _timed(url, contender)
                if round_:
                    times[contender].append(elapsed)
        out["paused" if paused else "default"] = {c: statistics.median(t) for c, t in times.items()}
    print(json.dumps(out), flush=True)


# --------------------------------------------------------------------------- the run


@dataclass
class Figure:
    contender: str
    sync: float
    sync_paused: float
    rss: float
    traced: float


def run(n: int, rounds: int = 3) -> list[Figure]:
    """Every contender over one emulator of ``n`` pods: a memory child per
    contender, then one timing child (children one after the other, so they
    do not share the CPUs)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_metadata", "--serve", str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=HERE.parent,
        env=env,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()

        def child(*args: str) -> Any:
            out = subprocess.run(
                [*CHILD, *args],
                capture_output=True,
                text=True,
                timeout=1800,
                check=True,
                cwd=HERE.parent,
                env=env,
            )
            return json.loads(out.stdout.strip().splitlines()[-1])

        memory = {}
        for contender in CONTENDERS:
            memory[contender] = child("--memory", contender, url, str(n))
            print(f"  memory, {contender}: {memory[contender]}", flush=True)
        timing = child("--timing", url, str(rounds))
        print(f"  sync: {timing}", flush=True)
        figures = [
            Figure(
                c,
                timing["default"][c],
                timing["paused"][c],
                memory[c]["rss"],
                memory[c]["traced"],
            )
            for c in CONTENDERS
        ]
        return figures
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(120)
        if server.stdout is not None:
            server.stdout.close()


def report(n: int, figures: list[Figure]) -> str:
    full = figures[0]
    sizes = ", ".join(f"{k} {v:,.0f} B" for k, v in floor(n).items())
    lines = [
        f"{n:,} realistic pods; ratios against the full dict cache measured in the same run",
        f"floor: the JSON of one PartialObjectMetadata, {sizes}",
        f"{'contender':38} {'sync s':>6} {'faster':>6} {'gc off':>6} {'faster':>6}"
        f" {'RSS B/obj':>9} {'smaller':>7} {'traced B/obj':>12} {'smaller':>7}",
    ]
    for f in figures:
        lines.append(
            f"{f.contender:38} {f.sync:6.2f} {full.sync / f.sync:5.2f}x"
            f" {f.sync_paused:6.2f} {full.sync_paused / f.sync_paused:5.2f}x"
            f" {f.rss:9,.0f} {full.rss / f.rss if f.rss > 0 else float('nan'):6.2f}x"
            f" {f.traced:12,.0f} {full.traced / f.traced:6.2f}x"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median)")
    parser.add_argument("--memory", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--timing", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return
    if args.memory:
        contender, url, n = args.memory
        memory_child(url, contender, int(n))
        return
    if args.timing:
        url, rounds = args.timing
        timing_child(url, int(rounds))
        return
    print(f"bench_metadata: {args.pods:,} pods", flush=True)
    figures = run(args.pods, args.rounds)
    print(report(args.pods, figures))
    if args.json:
        print(json.dumps([f.__dict__ for f in figures]))


if __name__ == "__main__":
    main()
