# Every closure in a loop here is called within its iteration (a measurement):
# ruff: noqa: B023
"""Every peer side by side on the same emulator (real HTTP), in one run.

    python -m benchmarks.compare                       # --size default: 1k and 10k
    python -m benchmarks.compare --size full           # 1k, 10k and 100k
    python -m benchmarks.compare --size smoke --out /tmp/cmp --json
    python -m benchmarks.compare --only sync,memory

Contenders: this project's ``SharedIndexInformer`` over ``HTTPListerWatcher``
(and, in sync and memory, the same metadata-only, ``metadata_only=True``: a
smaller cache than the peers' full objects, shown beside lightkube's full
cache; the full-against-full row stays the reference of every ratio); the
official client's ``kubernetes.informer.SharedInformer``; the official
``kubernetes.watch.Watch`` (list, then watch) feeding a dict, what most users
write today; lightkube's sync ``Client`` (``list`` then ``watch``) feeding a
dict; kr8s's sync API (``kr8s.api().get`` then ``.watch``) feeding a dict;
and the floors: the same bytes fetched and parsed (``json`` and ``orjson``),
and parsed and kept in a dict by key (with orjson; with the exact parser this
project ships, ``informers.wire._json``; and, for events, with two thread
hand-offs after the parse, the least a threaded informer costs, and through
``bench_informer.ContractFloor``, the least the informer contract costs on
client-go's three threads). For events, ours, the floors and lightkube run
interleaved over several rounds (the other peers once).

Sections (``--only``): ``sync`` (start to synced), ``events`` (events/s to one
and three handlers; handler latency at a fixed offered rate), ``lookups``
(``by_index``, ``Lister.list(selector)`` against the scan over a dict a peer's
user writes, and dict-of-sets floors), ``memory`` (bytes per cached object,
tracemalloc and RSS, each contender in a fresh subprocess; ours also with
``store=CompactStore``, the compact storage option, and with
``store=RawStore``, decode on demand; its sync row too). Each figure is
taken at two sizes, the second 10x the first; the table's ``growth`` column is
the per-object cost at 10x over that at 1x (1.00 = linear).

With more than one section selected, each runs in a fresh child process:
what one leaves behind (a peer's event-loop threads, a larger heap for the
collector to walk) would otherwise change the figures measured after it.
The emulator runs in a child process (``bench_informer.RemoteServer``) so its
work does not compete with the contenders for this process's GIL. A peer that
is not installed, or fails against the emulator, is reported so in the table.
Prints ratios; writes one PNG per scaling curve (and ``compare.json`` with
``--json``) into ``--out`` (``benchmarks/out/`` by default).
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
import tracemalloc
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kubernetes.client
import kubernetes.watch
import urllib3

from benchmarks import bench_informer as bi
from benchmarks.bench_informer import (
    STAMP,
    Counter,
    RemoteServer,
    events_floor,
    sync_floor,
    sync_official,
    sync_ours,
)
from informers import (
    NAMESPACE_INDEX,
    HTTPListerWatcher,
    Indexer,
    Lister,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    get_labels,
    namespace_index,
)
from informers.cache.compact import CompactStore
from informers.cache.compact.raw import RawStore
from informers.cache.scope import metadata_store
from informers.cache.transforms import strip_managed_fields
from informers.toolkit.manager import Manager
from informers.wire import _json
from informers.wire.resources import PODS

# Each may be missing (the ``bench`` extra); imported where used, so that a
# memory child loads only its own contender.
try:
    import orjson
except ImportError:
    orjson = None
HAVE_LIGHTKUBE = importlib.util.find_spec("lightkube") is not None
HAVE_KR8S = importlib.util.find_spec("kr8s") is not None

__all__ = ["SIZES", "main", "run"]

#: Per --size: pod counts (the second is 10x the first, for growth; full adds
#: 100k for sync and memory), watch event counts, and store sizes for lookups.
SIZES: dict[str, dict[str, list[int]]] = {
    "smoke": {"pods": [20, 200], "events": [50, 500], "store": [200, 2000], "memory": [200]},
    "default": {
        "pods": [1000, 10000],
        "events": [2000, 20000],
        "store": [1000, 10000],
        "memory": [1000, 10000],
    },
    "full": {
        "pods": [1000, 10000, 100000],
        "events": [2000, 20000],
        "store": [1000, 10000, 100000],
        "memory": [1000, 10000, 100000],
    },
}

#: Per --size: how many interleaved rounds of ours, the events floors and
#: lightkube (each figure is the median of its rounds; the other peers run once).
ROUNDS: dict[str, int] = {"smoke": 1, "default": 3, "full": 3}

SECTIONS = ("sync", "events", "lookups", "memory")
HERE = Path(__file__).resolve().parent

OURS = "kube-informers"
OURS_COMPACT = "kube-informers, compact store"
#: Metadata-only (PartialObjectMetadata): not like for like -- it caches less
#: than the peers' full objects; the full-against-full row (OURS) stays the
#: reference, this one shows what a controller that needs only metadata saves
#: (as ``factory.for_resource(..., metadata_only=True)`` caches: managed fields
#: dropped, compact JSON).
OURS_METADATA = "kube-informers, metadata-only"
OURS_RAW = "kube-informers, raw store (decode on demand)"
#: The same keeping its bytes deflated (RawStore(compress=True)).
OURS_RAW_ZLIB = "kube-informers, raw store, compressed"
OFFICIAL_INFORMER = "official SharedInformer"
OFFICIAL_WATCH = "official list+Watch -> dict"
LIGHTKUBE = "lightkube list+watch -> dict"
KR8S = "kr8s get+watch -> dict"
FLOOR_JSON = "floor: fetch + json.loads"
FLOOR_ORJSON = "floor: fetch + orjson.loads"
FLOOR_KEEP = "floor: parse + keep in dict"
#: The same with the parser kube-informers ships (orjson, checked to answer
#: exactly what json.loads does: informers.wire._json).
FLOOR_KEEP_EXACT = "floor: exact parse + keep in dict"
#: Parse and keep with two thread hand-offs: the least a threaded informer costs.
FLOOR_HANDOFFS = "floor: parse + keep, 2 thread hand-offs"
#: The least the informer contract costs (bench_informer.ContractFloor).
FLOOR_CONTRACT = "floor: the informer contract, 3 threads"
#: Ours through the Manager, whose collector policy pauses the cyclic
#: collector during the initial sync and freezes the heap after it.
OURS_MANAGER = "kube-informers, Manager (collector policy)"


# --------------------------------------------------------------------------- results


@dataclass
class Row:
    """One contender in one section: a figure per size (``None`` where it did
    not run), the unit, and a note (``not installed``, ``failed: ...``)."""

    section: str
    contender: str
    unit: str
    values: dict[int, float | None] = field(default_factory=dict)
    note: str = ""
    #: lower is better (seconds, bytes) or higher (rates)
    lower_is_better: bool = True
    #: the figure divided by this to get per-object cost (for growth)
    per_object: bool = True


class Results:
    def __init__(self) -> None:
        self.rows: list[Row] = []
        #: events count -> the rate (events/s) latency was measured at
        self.offered: dict[int, float] = {}

    def row(self, section: str, contender: str, unit: str, **kw: Any) -> Row:
        row = Row(section, contender, unit, **kw)
        self.rows.append(row)
        return row


#: The environment variable naming the contenders to run (``--contender``),
#: seen by the sections' child processes too.
_CONTENDERS_ENV = "BENCH_COMPARE_CONTENDERS"
_SUFFIXES = (" (tracemalloc)", " (RSS)", " p50", " p99", ", 1 handler", ", 3 handlers")


def _selected(row: Row) -> bool:
    """Whether ``row``'s contender was selected (all are, by default)."""
    wanted = os.environ.get(_CONTENDERS_ENV)
    if not wanted:
        return True
    name = row.contender
    for suffix in _SUFFIXES:
        name = name.removesuffix(suffix)
    return name in wanted.split("|")


def _measure(row: Row, size: int, func: Callable[[], float | None]) -> None:
    """Run one measurement, recording a failure in the row instead of
    aborting the whole comparison."""
    if not _selected(row):
        row.note = row.note or "not selected"
    if row.note:
        row.values[size] = None
        return
    try:
        row.values[size] = func()
    except Exception as exc:  # noqa: BLE001 -- a peer failing against the emulator is a result
        row.values[size] = None
        row.note = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
        print(f"  {row.contender}: {row.note}", flush=True)


def _measure_rounds(
    measurements: list[tuple[Row, Callable[[int], float]]], size: int, rounds: int
) -> None:
    """Run every measurement ``rounds`` times, interleaved (round ``r`` calls
    each with ``r``), and record the median of each; a failure is recorded in
    its row (as :func:`_measure` does) and ends that row's rounds."""
    got: dict[int, list[float]] = {id(row): [] for row, _ in measurements}
    for row, _ in measurements:
        if not _selected(row):
            row.note = row.note or "not selected"
    for r in range(rounds):
        for row, func in measurements:
            if row.note:
                continue
            try:
                got[id(row)].append(func(r))
            except Exception as exc:  # noqa: BLE001 -- a failure is a result
                row.note = f"failed: {type(exc).__name__}: {str(exc)[:80]}"
                print(f"  {row.contender}: {row.note}", flush=True)
    for row, _ in measurements:
        values = got[id(row)]
        row.values[size] = statistics.median(values) if values and not row.note else None


def _installed(name: str) -> str:
    """``""`` when contender ``name``'s package is importable, else the note."""
    missing = {
        LIGHTKUBE: not HAVE_LIGHTKUBE,
        KR8S: not HAVE_KR8S,
        FLOOR_ORJSON: orjson is None,
        OFFICIAL_INFORMER: bi.SharedInformer is None,
    }
    return "not installed" if missing.get(name) else ""


# --------------------------------------------------------------------------- kubeconfig


def write_kubeconfig(url: str, directory: Path) -> Path:
    """A kubeconfig pointing at the emulator (plain http, any token)."""
    # one file per server: kr8s keeps one client per set of arguments
    path = directory / f"kubeconfig-{url.rsplit(':', 1)[-1].strip('/')}"
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: emulator\n  cluster:\n    server: {url}\n"
        "users:\n- name: bench\n  user:\n    token: bench-token\n"
        "contexts:\n- name: emulator\n  context:\n    cluster: emulator\n"
        "    user: bench\n    namespace: default\n"
        "current-context: emulator\n"
    )
    return path


def _lightkube_client(kubeconfig: Path) -> Any:
    import lightkube

    return lightkube.Client(config=lightkube.KubeConfig.from_file(str(kubeconfig)))


def _kr8s_api(kubeconfig: Path) -> Any:
    import kr8s

    return kr8s.api(kubeconfig=str(kubeconfig))


# --------------------------------------------------------------------------- sync


def _fill_official_watch(server: Any, cache: dict[Any, Any]) -> None:
    client = server.api_client()
    api = kubernetes.client.CoreV1Api(client)
    for pod in api.list_pod_for_all_namespaces().items:
        cache[(pod.metadata.namespace, pod.metadata.name)] = pod
    client.close()


def _fill_lightkube(kubeconfig: Path, cache: dict[Any, Any]) -> None:
    from lightkube.resources.core_v1 import Pod

    client = _lightkube_client(kubeconfig)
    for pod in client.list(Pod, namespace="*"):
        cache[(pod.metadata.namespace, pod.metadata.name)] = pod


def _fill_kr8s(kubeconfig: Path, cache: dict[Any, Any]) -> None:
    import kr8s

    api = _kr8s_api(kubeconfig)
    for pod in api.get("pods", namespace=kr8s.ALL):
        cache[(pod.namespace, pod.name)] = pod


def _fill_floor(url: str, cache: dict[Any, Any]) -> None:
    http = bi.floor_http()
    body = (orjson.loads if orjson else json.loads)(http.request("GET", f"{url}/api/v1/pods").data)
    for pod in body["items"]:
        meta = pod["metadata"]
        cache[(meta["namespace"], meta["name"])] = pod
    http.clear()


def sync_manager(server: Any, n: int) -> float:
    """Seconds from ``Manager.start()`` to its return: the pods informer
    started and synced under the manager's collector policy. The heap it
    froze is unfrozen afterwards, so the contenders measured next start from
    the same collector state."""
    client = server.api_client()
    manager = Manager(client)
    informer = manager.factory.pods()
    bi.settle_gc()
    started = time.perf_counter()
    manager.start()
    elapsed = time.perf_counter() - started
    try:
        assert len(informer.get_indexer().list_keys()) >= n
    finally:
        manager.stop()
        client.close()
        gc.unfreeze()
    return elapsed


def _timed(fill: Callable[[dict[Any, Any]], None], n: int) -> float:
    cache: dict[Any, Any] = {}
    bi.settle_gc()
    started = time.perf_counter()
    fill(cache)
    elapsed = time.perf_counter() - started
    assert len(cache) >= n, (len(cache), n)
    return elapsed


def _sync_ours_metadata(server: Any, n: int) -> float:
    """Start to synced of a metadata-only informer of the pods."""
    client = server.api_client()
    inf = SharedIndexInformer(
        HTTPListerWatcher(client, PODS, metadata_only=True), name="pods", store=metadata_store
    )
    inf.set_transform(strip_managed_fields)  # the factory's metadata-only default
    gc.collect()
    started = time.perf_counter()
    inf.start()
    assert inf.wait_synced(600)
    elapsed = time.perf_counter() - started
    assert len(inf.get_indexer()) >= n
    inf.stop()
    client.close()
    return elapsed


def section_sync(results: Results, pods: list[int], kubeconfig_dir: Path) -> dict[int, Any]:
    """Start to synced for each pod count; returns the servers' URLs by
    size for the memory section (the servers stay up until it ran)."""
    names = [
        OURS,
        OURS_MANAGER,
        OURS_RAW,
        OURS_RAW_ZLIB,
        OFFICIAL_INFORMER,
        OFFICIAL_WATCH,
        OURS_METADATA,  # beside lightkube's full cache; OURS stays the reference
        LIGHTKUBE,
        KR8S,
        FLOOR_JSON,
        FLOOR_ORJSON,
        FLOOR_KEEP,
    ]
    rows = {name: results.row("sync", name, "s", note=_installed(name)) for name in names}
    for n in pods:
        print(f"sync: {n} pods", flush=True)
        with RemoteServer(watch_buffer_size=1000) as server:
            server.fill(n)
            sync_floor(server, n)  # warm the emulator's per-object JSON
            kubeconfig = write_kubeconfig(server.url, kubeconfig_dir)
            _measure(rows[FLOOR_JSON], n, lambda: sync_floor(server, n).elapsed)
            if orjson is not None:
                _measure(rows[FLOOR_ORJSON], n, lambda: sync_floor(server, n, orjson.loads).elapsed)
            _measure(rows[FLOOR_KEEP], n, lambda: _timed(lambda c: _fill_floor(server.url, c), n))
            _measure(rows[OURS], n, lambda: sync_ours(server, n).elapsed)
            _measure(rows[OURS_METADATA], n, lambda: _sync_ours_metadata(server, n))
            _measure(rows[OURS_RAW], n, lambda: sync_ours(server, n, store=RawStore).elapsed)
            _measure(rows[OURS_RAW_ZLIB], n, lambda: sync_ours(server, n, store=_raw_zlib).elapsed)
            _measure(rows[OFFICIAL_INFORMER], n, lambda: sync_official(server, n).elapsed)
            _measure(
                rows[OFFICIAL_WATCH],
                n,
                lambda: _timed(lambda c: _fill_official_watch(server, c), n),
            )
            _measure(
                rows[LIGHTKUBE], n, lambda: _timed(lambda c: _fill_lightkube(kubeconfig, c), n)
            )
            _measure(rows[KR8S], n, lambda: _timed(lambda c: _fill_kr8s(kubeconfig, c), n))
            _measure(rows[OURS_MANAGER], n, lambda: sync_manager(server, n))
    return {}


# --------------------------------------------------------------------------- events


def _stamp_of(obj: Any) -> float | None:
    if isinstance(obj, Mapping):  # a dict, or a RawObject (read without a decode)
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
    else:
        metadata = obj.metadata
        annotations = getattr(metadata, "annotations", None) or {}
    value = annotations.get(STAMP)
    return float(value) if value else None


class Recorder(Counter):
    """Counts handler calls; with ``latency``, also the time from the pod's
    write (its stamp) to the call."""

    def __init__(self, target: int) -> None:
        super().__init__(target)
        self.latencies: list[float] = []

    def hit(self, *args: Any) -> None:
        stamp = _stamp_of(args[-1]) if args else None
        if stamp is not None:
            self.latencies.append(time.perf_counter() - stamp)
        super().hit()


class PeerStream:
    """A peer's watch consumed on a thread into a dict, every event counted."""

    def __init__(
        self,
        server: Any,
        namespace: str,
        open_stream: Callable[[str], Iterator[tuple[Any, Any]]],
        recorder: Recorder,
    ) -> None:
        self.server = server
        self.namespace = namespace
        self.cache: dict[Any, Any] = {}
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self._open = open_stream
        self._recorder = recorder
        self._thread = threading.Thread(target=self._run, name="bench-peer-watch", daemon=True)

    def _run(self) -> None:
        try:
            for key, obj in self._open(str(self.server.resource_version)):
                self.cache[key] = obj
                self._recorder.hit(obj)
                if self.stop.is_set():
                    return
        except BaseException as exc:  # noqa: BLE001 -- re-raised by __exit__
            self.error = exc
            self._recorder.done.set()

    def __enter__(self) -> PeerStream:
        self._thread.start()
        time.sleep(0.5)  # let its watch open (no peer has an idle point to wait on)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        deadline = time.monotonic() + 30
        while self._thread.is_alive() and time.monotonic() < deadline:
            self.server.wake(self.namespace)
            self._thread.join(0.2)
        if self.error is not None:
            raise self.error


def _official_watch_stream(server: Any, namespace: str) -> Callable[[str], Iterator[Any]]:
    def open_stream(rv: str) -> Iterator[tuple[Any, Any]]:
        client = server.api_client()
        api = kubernetes.client.CoreV1Api(client)
        watch = kubernetes.watch.Watch()
        for event in watch.stream(api.list_namespaced_pod, namespace, resource_version=rv):
            obj = event["object"]
            yield (obj.metadata.namespace, obj.metadata.name), obj

    return open_stream


def _lightkube_stream(kubeconfig: Path, namespace: str) -> Callable[[str], Iterator[Any]]:
    def open_stream(rv: str) -> Iterator[tuple[Any, Any]]:
        from lightkube.resources.core_v1 import Pod

        client = _lightkube_client(kubeconfig)
        for _, obj in client.watch(Pod, namespace=namespace, resource_version=rv):
            yield (obj.metadata.namespace, obj.metadata.name), obj

    return open_stream


def _kr8s_stream(kubeconfig: Path, namespace: str) -> Callable[[str], Iterator[Any]]:
    def open_stream(rv: str) -> Iterator[tuple[Any, Any]]:
        api = _kr8s_api(kubeconfig)
        for _, obj in api.watch("pods", namespace=namespace, since=rv):
            yield (obj.namespace, obj.name), obj

    return open_stream


def _peer_events(
    server: Any, n: int, namespace: str, stream: Callable[[str], Iterator[Any]]
) -> float:
    recorder = Recorder(n)
    with PeerStream(server, namespace, stream, recorder) as peer:
        bi.settle_gc()
        started = server.backlog(namespace, n)
        assert recorder.done.wait(1800)
        elapsed = time.perf_counter() - started
        if peer.error is not None:
            raise peer.error
    return n / elapsed


class OurInformer:
    """Ours on one namespace, with ``handlers`` no-op handlers counting."""

    def __init__(
        self,
        server: Any,
        namespace: str,
        handlers: int,
        recorder: Recorder,
        store: Any = None,
    ) -> None:
        self.client = server.api_client()
        self.inf = SharedIndexInformer(
            HTTPListerWatcher(self.client, PODS, namespace), name="pods", store=store
        )
        self.inf.add_event_handler(ResourceEventHandlerFuncs(add_func=recorder.hit))
        for _ in range(handlers - 1):
            self.inf.add_event_handler(ResourceEventHandlerFuncs(add_func=lambda obj: None))
        self.recorder = recorder

    def __enter__(self) -> OurInformer:
        self.inf.start()
        assert self.inf.wait_synced(60)
        reflector = self.inf.reflector
        assert reflector is not None
        assert reflector.wait_for(lambda s: type(s).__name__ == "Watching", 60)
        time.sleep(0.2)  # let the watch request reach the server
        assert self.inf.wait_idle(60)
        return self

    def __exit__(self, *exc: object) -> None:
        self.inf.stop()
        self.client.close()


def _our_events(server: Any, n: int, namespace: str, handlers: int, store: Any = None) -> float:
    recorder = Recorder(n)
    with OurInformer(server, namespace, handlers, recorder, store):
        bi.settle_gc()
        started = server.backlog(namespace, n)
        assert recorder.done.wait(600)
        elapsed = time.perf_counter() - started
        # every handler has had every event (the delivery is per handler)
    return n / elapsed


def _official_informer_events(server: Any, n: int, namespace: str) -> float:
    return n / bi.events_official(server, n).elapsed if namespace else 0.0


def _latency(
    server: Any,
    contender: str,
    namespace: str,
    *,
    n: int,
    rate: float,
    kubeconfig: Path,
) -> tuple[float, float]:
    """(p50, p99) seconds from a pod's write to its handler call while the
    server writes ``n`` pods at ``rate`` a second."""
    recorder = Recorder(n)

    def paced() -> None:
        server.pace(namespace, n, rate)
        assert recorder.done.wait(max(60.0, 4 * n / rate))

    if contender in (OURS, OURS_RAW, OURS_RAW_ZLIB):
        store = {OURS: None, OURS_RAW: RawStore, OURS_RAW_ZLIB: _raw_zlib}[contender]
        with OurInformer(server, namespace, 1, recorder, store):
            paced()
    elif contender == OFFICIAL_INFORMER:
        client = server.api_client()
        api = kubernetes.client.CoreV1Api(client)
        inf = bi.SharedInformer(api.list_namespaced_pod, namespace=namespace)
        inf.add_event_handler(bi.ADDED, recorder.hit)
        inf.start()
        time.sleep(0.5)  # let its watch open
        paced()
        stopper = threading.Thread(target=inf.stop, name="bench-official-stop")
        stopper.start()
        while stopper.is_alive():
            server.wake(namespace)
            stopper.join(0.2)
        client.close()
    else:
        stream = {
            OFFICIAL_WATCH: lambda: _official_watch_stream(server, namespace),
            LIGHTKUBE: lambda: _lightkube_stream(kubeconfig, namespace),
            KR8S: lambda: _kr8s_stream(kubeconfig, namespace),
        }[contender]()
        with PeerStream(server, namespace, stream, recorder):
            paced()
    lat = sorted(recorder.latencies)
    assert lat, "no stamped event reached the handler"
    return lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))]


def section_events(
    results: Results, counts: list[int], kubeconfig_dir: Path, rounds: int = 1
) -> None:
    names = [
        f"{OURS}, 1 handler",
        f"{OURS}, 3 handlers",
        f"{OURS_RAW}, 1 handler",
        OFFICIAL_INFORMER,
        OFFICIAL_WATCH,
        LIGHTKUBE,
        KR8S,
        FLOOR_JSON,
        FLOOR_ORJSON,
        FLOOR_KEEP,
        FLOOR_KEEP_EXACT,
        FLOOR_HANDOFFS,
        FLOOR_CONTRACT,
    ]
    rows = {
        name: results.row("events", name, "events/s", note=_installed(name), lower_is_better=False)
        for name in names
    }
    lat_names = [OURS, OURS_RAW, OURS_RAW_ZLIB, OFFICIAL_INFORMER, OFFICIAL_WATCH, LIGHTKUBE, KR8S]
    p50 = {c: results.row("latency", f"{c} p50", "ms", note=_installed(c)) for c in lat_names}
    p99 = {c: results.row("latency", f"{c} p99", "ms", note=_installed(c)) for c in lat_names}
    for row in [*p50.values(), *p99.values()]:
        row.per_object = False
    # the official informer's helper uses one namespace per run: a fresh
    # server per count keeps every contender's cache the same size.
    for n in counts:
        print(f"events: {n}", flush=True)
        with RemoteServer(watch_buffer_size=n + 100) as server:
            kubeconfig = write_kubeconfig(server.url, kubeconfig_dir)
            parse = orjson.loads if orjson else json.loads

            def floor(
                ns: str,
                loads: Callable[[bytes], Any],
                keep: bool = False,
                handoffs: bool = False,
                contract: bool = False,
            ) -> float:
                timing = events_floor(
                    server, n, ns, loads, keep=keep, handoffs=handoffs, contract=contract
                )
                return n / timing.elapsed

            # Ours, the floors and lightkube (the peer nearest to ours),
            # interleaved, ROUNDS[size] times (each run in a namespace of its
            # own): the median of each. A single run of each, one after the
            # other, varies by a third from run to run (mostly whether the
            # collector's last full collection falls inside the run).
            repeated: list[tuple[Row, Callable[[int], float]]] = [
                (rows[FLOOR_JSON], lambda r: floor(f"floor-json-{r}", json.loads)),
                (rows[FLOOR_KEEP], lambda r: floor(f"floor-keep-{r}", parse, keep=True)),
                (
                    rows[FLOOR_KEEP_EXACT],
                    lambda r: floor(f"floor-exact-{r}", _json.loads, keep=True),
                ),
                (
                    rows[FLOOR_HANDOFFS],
                    lambda r: floor(f"floor-handoffs-{r}", parse, handoffs=True),
                ),
                (
                    rows[FLOOR_CONTRACT],
                    lambda r: floor(f"floor-contract-{r}", _json.loads, contract=True),
                ),
                (rows[f"{OURS}, 1 handler"], lambda r: _our_events(server, n, f"ours-1-{r}", 1)),
                (rows[f"{OURS}, 3 handlers"], lambda r: _our_events(server, n, f"ours-3-{r}", 3)),
                (
                    rows[f"{OURS_RAW}, 1 handler"],
                    lambda r: _our_events(server, n, f"ours-raw-{r}", 1, RawStore),
                ),
                (
                    rows[LIGHTKUBE],
                    lambda r: _peer_events(
                        server, n, f"lightkube-{r}", _lightkube_stream(kubeconfig, f"lightkube-{r}")
                    ),
                ),
            ]
            if orjson is not None:
                repeated.insert(
                    1, (rows[FLOOR_ORJSON], lambda r: floor(f"floor-orjson-{r}", orjson.loads))
                )
            else:
                rows[FLOOR_ORJSON].values[n] = None
            _measure_rounds(repeated, n, rounds)
            _measure(rows[OFFICIAL_INFORMER], n, lambda: n / bi.events_official(server, n).elapsed)
            _measure(
                rows[OFFICIAL_WATCH],
                n,
                lambda: _peer_events(
                    server, n, "official-watch", _official_watch_stream(server, "official-watch")
                ),
            )
            _measure(
                rows[KR8S],
                n,
                lambda: _peer_events(server, n, "kr8s", _kr8s_stream(kubeconfig, "kr8s")),
            )
            if n != counts[-1]:
                continue
            # latency at a fixed offered rate, once, on the largest count: half
            # the slowest contender's maximum (capped so the run stays short)
            rates = [
                rows[name].values.get(n)
                for name in (
                    f"{OURS}, 1 handler",
                    OFFICIAL_INFORMER,
                    OFFICIAL_WATCH,
                    LIGHTKUBE,
                    KR8S,
                )
            ]
            measured = [r for r in rates if r]
            rate = min(1000.0, 0.5 * min(measured)) if measured else 100.0
            count = max(50, min(n // 4, int(rate * 3)))
            print(f"latency: {count} pods at {rate:,.0f}/s", flush=True)
            # Each contender ``rounds`` times, interleaved (one run's p99 is
            # at the mercy of one collection or one scheduling hiccup on a
            # shared machine): the median p50 and the median p99.
            p99_runs: dict[str, list[float]] = {c: [] for c in lat_names}
            repeated_latency: list[tuple[Row, Callable[[int], float]]] = []
            for i, contender in enumerate(lat_names):

                def one(r: int, contender: str = contender, i: int = i) -> float:
                    ns = f"latency-{i}-{r}"
                    p50_s, p99_s = _latency(
                        server, contender, ns, n=count, rate=rate, kubeconfig=kubeconfig
                    )
                    p99_runs[contender].append(p99_s * 1e3)
                    return p50_s * 1e3

                repeated_latency.append((p50[contender], one))
            _measure_rounds(repeated_latency, n, rounds)
            for contender in lat_names:
                p99[contender].note = p99[contender].note or p50[contender].note
                runs = p99_runs[contender]
                p99[contender].values[n] = (
                    statistics.median(runs) if runs and not p50[contender].note else None
                )
            results.offered[n] = rate


# --------------------------------------------------------------------------- lookups


def _app_index(obj: Any) -> list[str]:
    app = get_labels(obj).get("app")
    return [app] if app else []


def _per_call(func: Callable[[], Any]) -> float:
    """Seconds per call: the best of five repeats of enough calls for ~20 ms."""
    timer = timeit.Timer(func)
    number, _ = timer.autorange()
    number = max(1, number // 10)
    return min(timer.repeat(5, number)) / number


def section_lookups(results: Results, sizes: list[int]) -> None:
    """by_index on the namespace index (1/50 of the store matches) and on an
    app label index (1/100), ``Lister.list(selector)``; peers: the scan over
    their dict; floors: a dict of key sets, locked and unlocked."""
    ns, app = "ns-7", "app-7"
    cases: dict[str, Callable[[dict[str, Any]], Callable[[], Any]]] = {
        f"{OURS} by_index(namespace)": lambda s: lambda: s["indexer"].by_index(NAMESPACE_INDEX, ns),
        f"{OURS} by_index(app label)": lambda s: lambda: s["indexer"].by_index("app", app),
        f"{OURS} Lister.list('app=app-7')": lambda s: lambda: s["lister"].list(f"app={app}"),
        "peers: scan dict by namespace": lambda s: (
            lambda: [p for p in s["plain"].values() if p["metadata"]["namespace"] == ns]
        ),
        "peers: scan dict by label": lambda s: (
            lambda: [
                p for p in s["plain"].values() if p["metadata"].get("labels", {}).get("app") == app
            ]
        ),
        "floor: dict of sets + Lock (namespace)": lambda s: s["locked"],
        "floor: dict of sets, unlocked (namespace)": lambda s: s["unlocked"],
    }
    rows = {name: results.row("lookups", name, "us") for name in cases}
    for n in sizes:
        print(f"lookups: store of {n}", flush=True)
        pods = [bi.make_pod(i) for i in range(n)]
        indexer = Indexer(indexers={NAMESPACE_INDEX: namespace_index, "app": _app_index})
        for pod in pods:
            indexer.add(pod)
        plain = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        sets: dict[str, set[Any]] = {}
        for key, pod in plain.items():
            sets.setdefault(pod["metadata"]["namespace"], set()).add(key)
        lock = threading.Lock()

        def locked() -> list[Any]:
            with lock:
                return [plain[k] for k in sets.get(ns, ())]

        def unlocked() -> list[Any]:
            return [plain[k] for k in sets.get(ns, ())]

        state = {
            "indexer": indexer,
            "lister": Lister(indexer),
            "plain": plain,
            "locked": locked,
            "unlocked": unlocked,
        }
        for name, make in cases.items():
            _measure(rows[name], n, lambda make=make: _per_call(make(state)) * 1e6)


# --------------------------------------------------------------------------- memory


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


#: The decode-on-demand store keeping its bytes deflated.
_raw_zlib = functools.partial(RawStore, compress=True)


def _mem_fill(contender: str, url: str, kubeconfig: Path, n: int) -> Any:
    """Fill a contender's cache; returns what keeps it alive."""
    cache: dict[Any, Any] = {}
    if contender in (OURS, OURS_COMPACT, OURS_METADATA, OURS_RAW, OURS_RAW_ZLIB):
        config = kubernetes.client.Configuration()
        config.host = url
        client = kubernetes.client.ApiClient(config)
        # The compact storage option (informers.cache.compact): objects kept encoded.
        # The decode-on-demand option (informers.cache.compact.raw): objects kept as bytes.
        # Metadata-only: the factory's default (informers.cache.scope.metadata_store).
        store: dict[str, Any] = {
            OURS_COMPACT: CompactStore,
            OURS_RAW: RawStore,
            OURS_RAW_ZLIB: _raw_zlib,
            OURS_METADATA: metadata_store,
        }
        lw = HTTPListerWatcher(client, PODS, metadata_only=contender == OURS_METADATA)
        inf = SharedIndexInformer(lw, name="pods", store=store.get(contender))
        if contender == OURS_METADATA:
            inf.set_transform(strip_managed_fields)
        inf.start()
        assert inf.wait_synced(600)
        inf.stop()
        client.close()
        return inf
    if contender == OFFICIAL_INFORMER:
        config = kubernetes.client.Configuration()
        config.host = url
        client = kubernetes.client.ApiClient(config)
        api = kubernetes.client.CoreV1Api(client)
        counter = Counter(n)
        inf = bi.SharedInformer(api.list_pod_for_all_namespaces)
        inf.add_event_handler(bi.ADDED, counter.hit)
        inf.start()
        assert counter.done.wait(600)
        return inf  # its threads die with this process
    if contender == OFFICIAL_WATCH:

        class _S:
            def api_client(self) -> Any:
                config = kubernetes.client.Configuration()
                config.host = url
                return kubernetes.client.ApiClient(config)

        _fill_official_watch(_S(), cache)
    elif contender == LIGHTKUBE:
        _fill_lightkube(kubeconfig, cache)
    elif contender == KR8S:
        _fill_kr8s(kubeconfig, cache)
    elif contender == FLOOR_KEEP:
        http = urllib3.PoolManager()
        data = http.request("GET", f"{url}/api/v1/pods").data
        http.clear()
        for pod in json.loads(data)["items"]:
            cache[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = pod
        del data
    else:
        raise ValueError(contender)
    return cache


def memory_child(contender: str, url: str, kubeconfig: str, n: int) -> None:
    """In a fresh process: RSS growth for one contender's cache of ``n`` pods,
    then (the cache dropped) tracemalloc's count of the same; one JSON line."""
    path = Path(kubeconfig)
    _mem_fill(contender, url, path, 1)  # import and warm everything once
    gc.collect()
    before = _rss()
    keep = _mem_fill(contender, url, path, n)
    gc.collect()
    rss = _rss() - before
    del keep
    gc.collect()
    tracemalloc.start()
    keep = _mem_fill(contender, url, path, n)
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0]
    del keep
    tracemalloc.stop()
    print(json.dumps({"rss": rss / n, "traced": traced / n}), flush=True)
    os._exit(0)  # the official informer's threads never stop


def section_memory(results: Results, pods: list[int], kubeconfig_dir: Path) -> None:
    contenders = [OURS, OFFICIAL_INFORMER, OFFICIAL_WATCH, LIGHTKUBE, KR8S, FLOOR_KEEP]
    contenders.insert(1, OURS_COMPACT)  # the compact storage option, beside ours
    contenders.insert(2, OURS_RAW)  # the decode-on-demand option
    contenders.insert(3, OURS_RAW_ZLIB)  # ... keeping its bytes deflated
    # Metadata-only beside lightkube's full cache (ours, full, stays the reference).
    contenders.insert(contenders.index(LIGHTKUBE), OURS_METADATA)
    traced = {
        c: results.row("memory", f"{c} (tracemalloc)", "B/obj", note=_installed(c))
        for c in contenders
    }
    rss = {c: results.row("memory", f"{c} (RSS)", "B/obj", note=_installed(c)) for c in contenders}
    json_size = results.row("memory", "the object's JSON", "B/obj")
    for n in pods:
        print(f"memory: {n} pods", flush=True)
        with RemoteServer(watch_buffer_size=1000) as server:
            server.fill(n)
            kubeconfig = write_kubeconfig(server.url, kubeconfig_dir)
            http = urllib3.PoolManager()
            body = json.loads(http.request("GET", f"{server.url}/api/v1/pods").data)
            http.clear()
            json_size.values[n] = statistics.fmean(
                len(json.dumps(p, separators=(",", ":"))) for p in body["items"]
            )
            del body

            def child(
                contender: str,
                got: dict[str, float],
                n: int = n,
                url: str = server.url,
                kubeconfig: Path = kubeconfig,
            ) -> float:
                out = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.compare",
                        "--memory-child",
                        contender,
                        url,
                        str(kubeconfig),
                        str(n),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=1200,
                    check=True,
                    cwd=HERE.parent,
                    env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                )
                got.update(json.loads(out.stdout.strip().splitlines()[-1]))
                return got["traced"]

            # Two children at a time (memory does not depend on speed); each
            # contender's figures come from its own fresh process.
            gots = {c: {} for c in contenders}
            with ThreadPoolExecutor(max_workers=2) as pool:
                for future in [
                    pool.submit(_measure, traced[c], n, functools.partial(child, c, gots[c]))
                    for c in contenders
                ]:
                    future.result()
            for c in contenders:
                rss[c].note = rss[c].note or traced[c].note
                rss[c].values[n] = gots[c].get("rss")


# --------------------------------------------------------------------------- report


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _reference(rows: list[Row], row: Row) -> Row | None:
    """The row each row's ratio is taken against: ours in the same section
    (the first of ours; the matching tracemalloc/RSS or p50/p99 one)."""
    suffix = ""
    for s in (" (tracemalloc)", " (RSS)", " p50", " p99"):
        if row.contender.endswith(s):
            suffix = s
    for other in rows:
        if (
            other.section == row.section
            and other.contender.startswith(OURS)
            and other.contender.endswith(suffix)
        ):
            return other
    return None


def growth(row: Row) -> list[float]:
    """Per-object cost at each size over that at the size before it (10x
    fewer objects): 1.00 = linear. Per-object cost is the time over the
    objects for sync and lookups (a lookup's result grows with the store),
    1/rate for a rate, and the figure itself for memory and latency."""
    sizes = sorted(row.values)
    out = []
    for lo, hi in itertools.pairwise(sizes):
        a, b = row.values[lo], row.values[hi]
        if not a or not b:
            continue
        if not row.lower_is_better:
            out.append(a / b)
        elif row.section in ("sync", "lookups"):
            out.append((b / hi) / (a / lo))
        else:
            out.append(b / a)
    return out


def table(results: Results) -> list[dict[str, Any]]:
    """The rows as dicts (the JSON), with ratios to ours and growth."""
    out = []
    for row in results.rows:
        ref = _reference(results.rows, row)
        ratios: dict[int, float | None] = {}
        for size, value in row.values.items():
            base = ref.values.get(size) if ref else None
            if value and base:
                # >1 means the contender costs more than ours (slower, bigger)
                ratios[size] = value / base if row.lower_is_better else base / value
            else:
                ratios[size] = None
        out.append(
            {
                "section": row.section,
                "contender": row.contender,
                "unit": row.unit,
                "values": {str(k): v for k, v in row.values.items()},
                "cost_vs_ours": {str(k): v for k, v in ratios.items()},
                "growth_per_10x": growth(row),
                "note": row.note,
            }
        )
    return out


def print_table(rows: list[dict[str, Any]], sizes: dict[str, list[int]]) -> None:
    print()
    print("Comparison (cost vs ours: >1 = costs more than kube-informers; growth: per-object")
    print("cost at 10x the objects over 1x, 1.00 = linear)")
    header = (
        f"{'section':<8} {'contender':<46} {'unit':<8} {'figures by size':<40} "
        f"{'cost vs ours':<22} {'growth':>6}  note"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        figures = "  ".join(f"{k}: {_fmt(v)}" for k, v in r["values"].items())
        ratios = "  ".join(
            f"{v:.2f}x" if v is not None else "-" for v in r["cost_vs_ours"].values()
        )
        g = " ".join(f"{x:.2f}" for x in r["growth_per_10x"]) or "-"
        print(
            f"{r['section']:<8} {r['contender']:<46} {r['unit']:<8} {figures:<40} "
            f"{ratios:<22} {g:>6}  {r['note']}"
        )
    print(flush=True)


def plot(results: Results, out: Path) -> list[Path]:
    """One PNG per section's scaling curve, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    titles = {
        "sync": ("start to synced", "pods", "seconds"),
        "events": ("watch events delivered", "events", "events/s"),
        "latency": ("handler latency at a fixed offered rate", "events in the run", "ms"),
        "lookups": ("lookup vs store size", "objects in the store", "us per call"),
        "memory": ("bytes per cached object", "pods", "bytes/object"),
    }
    for section, (title, xlabel, ylabel) in titles.items():
        rows = [r for r in results.rows if r.section == section and any(r.values.values())]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=80)
        for r in rows:
            points = sorted((k, v) for k, v in r.values.items() if v)
            style = "--" if r.contender.startswith(("floor", "the object")) else "-"
            width = 2.5 if r.contender.startswith(OURS) else 1.2
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                style,
                marker="o",
                linewidth=width,
                label=r.contender,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="best")
        fig.tight_layout()
        path = out / f"{section}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


# --------------------------------------------------------------------------- main


def run_section(section: str, size: str, results: Results, kubeconfig_dir: Path) -> None:
    """Run one section at ``size`` in this process, adding its rows to ``results``."""
    sizes = SIZES[size]
    if section == "sync":
        section_sync(results, sizes["pods"], kubeconfig_dir)
    elif section == "events":
        section_events(results, sizes["events"], kubeconfig_dir, ROUNDS[size])
    elif section == "lookups":
        section_lookups(results, sizes["store"])
    elif section == "memory":
        section_memory(results, sizes["memory"], kubeconfig_dir)
    else:
        raise ValueError(f"unknown section {section!r}")


def _section_child(section: str, size: str, out: Path) -> None:
    """The child side of :func:`_section_in_child`: run the section, write its
    rows and offered rates to ``out`` as JSON."""
    results = Results()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        run_section(section, size, results, Path(tmp))
    rows = [
        {**row.__dict__, "values": [[k, v] for k, v in row.values.items()]} for row in results.rows
    ]
    offered = [[k, v] for k, v in results.offered.items()]
    out.write_text(json.dumps({"rows": rows, "offered": offered}))


def _section_in_child(section: str, size: str, tmp: Path, results: Results) -> None:
    """Run one section in a child process; add the rows it measured."""
    out = tmp / f"{section}.json"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.compare", "--section-child", section, size, str(out)],
        check=True,
        cwd=HERE.parent,
    )
    data = json.loads(out.read_text())
    for raw in data["rows"]:
        values = {int(k): v for k, v in raw.pop("values")}
        results.rows.append(Row(values=values, **raw))
    results.offered.update({int(k): v for k, v in data["offered"]})


def run(size: str, only: list[str], out: Path, write_json: bool) -> list[dict[str, Any]]:
    """Run the selected sections at ``size``, print the table, write the PNGs
    (and ``compare.json``) into ``out``; returns the table rows."""
    out.mkdir(parents=True, exist_ok=True)
    sizes = SIZES[size]
    results = Results()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        for section in SECTIONS:
            if section not in only:
                continue
            print(f"[{time.monotonic() - started:.0f} s] {section}", flush=True)
            if len(only) > 1:
                # Each section in a fresh process: what one leaves behind
                # (a peer's event-loop threads, a larger heap for the
                # collector to walk) would otherwise change every figure
                # measured after it.
                _section_in_child(section, size, Path(tmp), results)
            else:
                run_section(section, size, results, Path(tmp))
    rows = table(results)
    print_table(rows, sizes)
    offered = results.offered
    if offered:
        print(
            "latency offered rates: "
            + ", ".join(f"{k} events: {v:,.0f}/s" for k, v in offered.items())
        )
    print(
        f"load average at the end: {os.getloadavg()[0]:.2f}; "
        f"took {time.monotonic() - started:.0f} s"
    )
    for path in plot(results, out):
        print(f"wrote {path}")
    if write_json:
        path = out / "compare.json"
        path.write_text(json.dumps({"size": size, "rows": rows}, indent=1))
        print(f"wrote {path}")
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--memory-child"]:
        memory_child(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    if argv[:1] == ["--section-child"]:
        _section_child(argv[1], argv[2], Path(argv[3]))
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.compare", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--size", choices=sorted(SIZES), default="default")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="comma-separated: " + ",".join(SECTIONS)
    )
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--json", action="store_true", help="also write the table as compare.json")
    parser.add_argument(
        "--contender",
        action="append",
        default=[],
        help="run only this contender (its full name, as the table prints it without a "
        "section suffix such as ' p99' or ' (RSS)'); repeat for more; default: all",
    )
    args = parser.parse_args(argv)
    if args.contender:
        os.environ[_CONTENDERS_ENV] = "|".join(args.contender)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    run(args.size, only, args.out, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
