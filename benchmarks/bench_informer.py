"""The informer against the official client's ``kubernetes.informer.SharedInformer``
on the same emulator, side by side, with the floor (the same bytes fetched and
parsed with ``json.loads``, no informer):

* time from start to synced (every object delivered to one handler) for N pods;
* watch events per second delivered to a handler.

    python benchmarks/bench_informer.py                 # 10k and 100k pods, 20k events
    BENCH_INFORMER_PODS=10000 BENCH_INFORMER_EVENTS=5000 python benchmarks/bench_informer.py

Run under pytest (``python -m pytest benchmarks/bench_informer.py
--benchmark-enable``) it does one small round as a smoke test.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes.client
import urllib3
import urllib3.connection

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_apiserver import fill, make_pod

from informers import HTTPListerWatcher, ResourceEventHandlerFuncs, SharedIndexInformer
from informers.rest._urllib3 import BufferedHTTPResponse
from informers.testing import ApiServer
from informers.wire import _json
from informers.wire.resources import PODS

try:
    from kubernetes.informer import ADDED, SharedInformer
except ImportError:  # an older kubernetes client without the informer module
    SharedInformer = None
    ADDED = "ADDED"


# The official informer logs a traceback when its watch is cut at shutdown.
logging.getLogger("kubernetes.informer").setLevel(logging.CRITICAL)


def _settle_gc() -> None:
    """Collect now, untimed, so that every contender starts its timed region
    with the same collector state. CPython schedules a full collection when
    the objects that survived since the last one exceed a quarter of those
    it kept: without this, a contender measured after a large sync inherits
    a high threshold and grows its cache with no full collection at all,
    while one measured in a fresh state pays several (40-60% of the delivery
    time of a growing cache) -- results then depend on the order of runs."""
    gc.collect()
    _GC.reset()


class _GcMeter:
    """Seconds spent in the cyclic garbage collector (all generations) since
    the last :meth:`reset`: each contender's timed region is measured alone,
    so this is the collector's share of that contender's time."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def reset(self) -> None:
        self.seconds = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


_GC = _GcMeter()

#: Public name for other benchmarks (``benchmarks/compare.py``).
settle_gc = _settle_gc


class Timing:
    """Elapsed seconds of a timed region and the collector's part of them."""

    def __init__(self, elapsed: float) -> None:
        self.elapsed = elapsed
        self.gc = _GC.seconds

    def __truediv__(self, other: Timing) -> float:
        return self.elapsed / other.elapsed

    def __str__(self) -> str:
        return f"{self.elapsed:.2f} s (GC {self.gc / self.elapsed:.0%})"

    def rate(self, n: int) -> str:
        return f"{n / self.elapsed:,.0f}/s (GC {self.gc / self.elapsed:.0%})"


class Counter:
    def __init__(self, target: int) -> None:
        self.target = target
        self.count = 0
        self.done = threading.Event()
        if target == 0:
            self.done.set()

    def hit(self, *_: Any) -> None:
        self.count += 1
        if self.count >= self.target:
            self.done.set()


# --------------------------------------------------------------------------- sync


def _pause_gc(paused: bool) -> None:
    """The Performance guide's recipe for a large initial sync: no cyclic
    collection while it runs, then everything alive frozen (undone by
    :func:`_resume_gc` after the timed region)."""
    if paused:
        gc.disable()


def _resume_gc(paused: bool) -> None:
    if paused:
        gc.freeze()
        gc.enable()
        gc.unfreeze()  # the benchmark's next contender starts as before


def sync_ours(server: Any, n: int, *, paused_gc: bool = False, store: Any = None) -> Timing:
    client = server.api_client()
    counter = Counter(n)
    inf = SharedIndexInformer(HTTPListerWatcher(client, PODS), name="pods", store=store)
    reg = inf.add_event_handler(ResourceEventHandlerFuncs(add_func=counter.hit))
    _settle_gc()
    _pause_gc(paused_gc)
    started = time.perf_counter()
    inf.start()
    assert reg.wait_synced(600)
    elapsed = Timing(time.perf_counter() - started)
    _resume_gc(paused_gc)
    # (more than n once the official informer's stop woke its watch with a pod)
    assert counter.count >= n, counter.count
    inf.stop()
    client.close()
    return elapsed


def _wake(server: Any, resource: Any) -> None:
    # The official informer's watch has no timeout: one more event lets its
    # stop() return.
    server.wake()


def sync_official(server: Any, n: int, *, paused_gc: bool = False) -> Timing:
    client = server.api_client()
    counter = Counter(n)
    api = kubernetes.client.CoreV1Api(client)
    inf = SharedInformer(api.list_pod_for_all_namespaces)
    inf.add_event_handler(ADDED, counter.hit)
    _settle_gc()
    _pause_gc(paused_gc)
    started = time.perf_counter()
    inf.start()
    assert counter.done.wait(1800)
    elapsed = Timing(time.perf_counter() - started)
    _resume_gc(paused_gc)
    stopper = threading.Thread(target=inf.stop, name="bench-official-stop")
    stopper.start()
    while stopper.is_alive():
        _wake(server, PODS)
        stopper.join(0.2)
    client.close()
    return elapsed


class _FloorConnection(urllib3.connection.HTTPConnection):
    """Reads its responses as the informer's transport does (up to
    ``informers.rest._urllib3.READ_BUFFER_SIZE`` bytes per read of the socket):
    a floor fetches its bytes at least as cheaply as ours."""

    response_class = BufferedHTTPResponse


class _FloorPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _FloorConnection


def floor_http() -> urllib3.PoolManager:
    """A pool manager for the floors (plain HTTP, as the emulator serves)."""
    http = urllib3.PoolManager()
    http.pool_classes_by_scheme = {"http": _FloorPool}
    return http


def sync_floor(server: Any, n: int, loads: Callable[[bytes], Any] = json.loads) -> Timing:
    """The same list fetched (one request, as both informers make it) and
    parsed with ``loads``; nothing kept but the parsed list."""
    http = floor_http()
    _settle_gc()
    started = time.perf_counter()
    response = http.request("GET", f"{server.url}/api/v1/pods?resourceVersion=0&limit=500")
    body = loads(response.data)
    elapsed = Timing(time.perf_counter() - started)
    assert len(body["items"]) >= n
    http.clear()
    return elapsed


# --------------------------------------------------------------------------- events


def _backlog(server: Any, namespace: str, n: int) -> float:
    """Write ``n`` pods in ``namespace`` while every watch is stalled, their
    JSON encoded in advance, then release the watches; returns the release
    time. What follows measures consumption alone (neither the writes nor the
    emulator's encoding are timed).

    Each contender gets a namespace of its own, empty when it starts: every
    client then caches the same number of objects, whatever the order of the
    runs (a larger cache makes every full garbage collection, hence every
    event, dearer)."""
    return float(server.backlog(namespace, n))


def events_ours(server: Any, n: int) -> Timing:
    client = server.api_client()
    counter = Counter(n)
    lw = HTTPListerWatcher(client, PODS, "bench-ours")
    inf = SharedIndexInformer(lw, name="pods")
    inf.add_event_handler(ResourceEventHandlerFuncs(add_func=counter.hit))
    inf.start()
    assert inf.wait_synced(60)
    reflector = inf.reflector
    assert reflector is not None
    assert reflector.wait_for(lambda s: type(s).__name__ == "Watching", 60)
    time.sleep(0.2)  # let the watch request reach the server
    assert inf.wait_idle(60)
    counter.target = counter.count + n
    counter.done.clear()
    _settle_gc()
    started = _backlog(server, "bench-ours", n)
    assert counter.done.wait(600)
    elapsed = Timing(time.perf_counter() - started)
    inf.stop()
    client.close()
    return elapsed


def events_official(server: Any, n: int) -> Timing:
    client = server.api_client()
    api = kubernetes.client.CoreV1Api(client)
    existing = server.count("bench-official")
    counter = Counter(existing + n)
    inf = SharedInformer(api.list_namespaced_pod, namespace="bench-official")
    inf.add_event_handler(ADDED, counter.hit)
    inf.start()
    deadline = time.monotonic() + 60
    while counter.count < existing and time.monotonic() < deadline:
        counter.done.wait(0.01)
    time.sleep(0.5)  # let its watch open (it has no idle point to wait on)
    _settle_gc()
    started = _backlog(server, "bench-official", n)
    assert counter.done.wait(1800)
    elapsed = Timing(time.perf_counter() - started)
    stopper = threading.Thread(target=inf.stop, name="bench-official-stop")
    stopper.start()
    while stopper.is_alive():
        server.wake("bench-official")
        stopper.join(0.2)
    client.close()
    return elapsed


class _ThreeThreads:
    """A reader's side (the caller's thread) and two threads of client-go's
    shape: a cache thread fed by ``_to_cache`` and a handler thread fed by
    ``_to_handler``. Subclasses write the two loops; :meth:`wait` blocks
    until the handler thread has had ``n`` items, :meth:`close` joins both."""

    def __init__(self, n: int, name: str) -> None:
        self._n = n
        self._to_cache: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._to_handler: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._done = threading.Event()
        self.cache: dict[str, Any] = {}
        self._threads = [
            threading.Thread(target=self._cache_loop, name=f"{name}-cache", daemon=True),
            threading.Thread(target=self._handler_loop, name=f"{name}-handler", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _cache_loop(self) -> None:
        raise NotImplementedError

    def _handler_loop(self) -> None:
        raise NotImplementedError

    def wait(self) -> None:
        assert self._done.wait(600), "the handler thread did not get every item"

    def close(self) -> None:
        self._to_cache.put(None)
        for thread in self._threads:
            thread.join()
        self.cache.clear()


class _HandOffs(_ThreeThreads):
    """Two thread hand-offs after the parse, the least a threaded informer
    does (client-go's shape: the reader queues each object; a second thread
    keys it, keeps it in a dict and queues it to a third, the handler's,
    which counts it). :meth:`put` is the reader's side."""

    def __init__(self, n: int) -> None:
        super().__init__(n, "floor")
        self.put = self._to_cache.put

    def _cache_loop(self) -> None:
        get, put, cache = self._to_cache.get, self._to_handler.put, self.cache
        while (obj := get()) is not None:
            meta = obj["metadata"]
            cache[f"{meta['namespace']}/{meta['name']}"] = obj
            put(obj)
        put(None)

    def _handler_loop(self) -> None:
        get, seen = self._to_handler.get, 0
        while get() is not None:
            seen += 1
            if seen == self._n:
                self._done.set()


class ContractFloor(_ThreeThreads):
    """The least the informer *contract* costs per watch event in CPython,
    written as plainly as it can be, on client-go's three threads: the
    reader checks the event, never lets the resource version move back and
    keys the object, then queues it; a cache thread reads the old object and
    writes the new one under a lock (recording the applied resource version),
    and queues the matching add/update/delete notification to a handler
    thread, which dispatches on its type, calls the handler and counts it.

    What it leaves out is what kube-informers adds beyond that contract: the
    delta queue's relist and resync view of pending entries, the
    initial-population accounting behind ``has_synced``, the published
    reflector state and the idle points (``wait_idle``,
    ``wait_for_resource_version``), indexes, and more than one handler.
    :meth:`put_event` is the reader's side."""

    def __init__(self, n: int) -> None:
        self._rv = ""
        self._lock = threading.Lock()
        self.applied_rv = ""
        super().__init__(n, "contract")

    def put_event(self, event: Any) -> None:
        if type(event) is not dict:
            raise ValueError("a watch event is a JSON object")
        etype, obj = event["type"], event["object"]
        meta = obj["metadata"]
        rv = meta["resourceVersion"]
        last = self._rv
        if last and (len(rv) < len(last) or (len(rv) == len(last) and rv <= last)):
            return  # replayed: never move back
        self._rv = rv
        namespace = meta.get("namespace")
        key = f"{namespace}/{meta['name']}" if namespace else meta["name"]
        self._to_cache.put((etype, key, obj, rv))

    def _cache_loop(self) -> None:
        get, put, cache, lock = self._to_cache.get, self._to_handler.put, self.cache, self._lock
        while (item := get()) is not None:
            etype, key, obj, rv = item
            with lock:
                if etype == "DELETED":
                    old = cache.pop(key, None)
                else:
                    old = cache.get(key)
                    cache[key] = obj
                self.applied_rv = rv
            if etype == "DELETED":
                put(("delete", obj))
            elif old is None:
                put(("add", obj))
            else:
                put(("update", old, obj))
        put(None)

    def _handler_loop(self) -> None:
        get = self._to_handler.get
        seen = 0
        while (note := get()) is not None:
            kind = note[0]
            if kind == "add":
                _no_op(note[1])
            elif kind == "update":
                _no_op(note[2])
            else:
                _no_op(note[1])
            seen += 1
            if seen == self._n:
                self._done.set()


def _no_op(obj: Any) -> None:
    """The contract floor's handler."""


def events_floor(
    server: Any,
    n: int,
    namespace: str,
    loads: Callable[[bytes], Any] = json.loads,
    *,
    keep: bool = False,
    handoffs: bool = False,
    contract: bool = False,
) -> Timing:
    """The same events read (as the informer reads them) and parsed with
    ``loads``; with ``keep``, each object is also kept in a dict by key, the
    least any cache does -- and what makes the collector walk a growing heap.
    With ``handoffs`` (and not ``keep``), each object is kept and counted on
    two other threads instead (see :class:`_HandOffs`): the least a threaded
    informer costs. With ``contract`` (and neither of the others), each
    event goes through :class:`ContractFloor`: the least the informer
    contract costs."""
    relay = _HandOffs(n) if handoffs else None
    checked = ContractFloor(n) if contract else None
    cache: dict[str, Any] = {}
    http = floor_http()
    rv = server.resource_version
    response = http.request(
        "GET",
        f"{server.url}/api/v1/namespaces/{namespace}/pods"
        f"?watch=1&resourceVersion={rv}&timeoutSeconds=600",
        preload_content=False,
    )
    time.sleep(0.2)  # let the watch register
    try:
        _settle_gc()
        started = _backlog(server, namespace, n)
        seen, pending = 0, b""
        for chunk in response.stream(65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line:
                    event = loads(line)
                    if keep:
                        cache[event["object"]["metadata"]["name"]] = event["object"]
                    elif relay is not None:
                        relay.put(event["object"])
                    elif checked is not None:
                        checked.put_event(event)
                    seen += 1
            if seen >= n:
                break
        if relay is not None:
            relay.wait()
        if checked is not None:
            checked.wait()
        elapsed = Timing(time.perf_counter() - started)
    finally:
        if relay is not None:
            relay.close()
        if checked is not None:
            checked.close()
        response.release_conn()
        http.clear()
        cache.clear()
    return elapsed


# --------------------------------------------------------------------------- the server process


class RemoteServer:
    """An :class:`ApiServer` in a child process, so that its work (JSON
    encoding, the writes) does not compete for this process's GIL with the
    clients being measured. Driven over stdin/stdout."""

    def __init__(self, watch_buffer_size: int) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(watch_buffer_size)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            # The child imports ``informers`` from this tree, as the parent does.
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        self.url = self._ask("url")

    def _ask(self, *command: Any) -> str:
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(" ".join(str(c) for c in command) + "\n")
        self._proc.stdin.flush()
        return self._proc.stdout.readline().strip()

    def api_client(self) -> Any:
        config = kubernetes.client.Configuration()
        config.host = self.url
        return kubernetes.client.ApiClient(config)

    def fill(self, n: int) -> None:
        self._ask("fill", n)

    @property
    def resource_version(self) -> int:
        return int(self._ask("rv"))

    def count(self, namespace: str) -> int:
        return int(self._ask("count", namespace))

    def wake(self, namespace: str = "default") -> None:
        self._ask("wake", namespace)

    def pace(self, namespace: str, n: int, rate: float) -> None:
        """Start writing ``n`` pods at ``rate`` a second, each stamped with
        its write time in the :data:`STAMP` annotation; returns at once."""
        self._ask("pace", namespace, n, rate)

    def backlog(self, namespace: str, n: int) -> float:
        self._ask("stall", namespace, n)
        started = time.perf_counter()
        self._ask("release")
        return started

    def close(self) -> None:
        self._ask("quit")
        self._proc.wait(60)
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> RemoteServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: The annotation :func:`_pace` stamps each pod with (its write time).
STAMP = "bench.kube-informers/written"


def _pace(server: Any, namespace: str, n: int, rate: float) -> None:
    started = time.perf_counter()
    for i in range(n):
        due = started + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        pod = make_pod(i)
        meta = {
            **pod["metadata"],
            "name": f"{namespace}-{time.monotonic_ns()}-{i}",
            "namespace": namespace,
            "annotations": {STAMP: repr(time.perf_counter())},
        }
        server.create(PODS, {**pod, "metadata": meta})


def serve(watch_buffer_size: int) -> None:
    with ApiServer(watch_buffer_size=watch_buffer_size) as server:
        storage = server._storage  # the benchmark's writes skip the defensive copies
        namespaces = {"default"}
        for line in sys.stdin:
            command, *args = line.split()
            answer = "ok"
            if command == "url":
                answer = server.url
            elif command == "fill":
                fill(server, int(args[0]))
            elif command == "rv":
                answer = str(server.resource_version)
            elif command == "count":
                answer = str(len(server.list_objects(PODS, args[0])))
            elif command == "wake":
                name = f"wake-{time.monotonic_ns()}"
                # A valid pod (containers set): the official client's models
                # refuse a pod without them, and a later list must parse.
                spec = {"containers": [{"name": "main", "image": "busybox"}]}
                server.create(
                    PODS, {"metadata": {"name": name, "namespace": args[0]}, "spec": spec}
                )
            elif command == "stall":
                if args[0] not in namespaces:
                    server.create("namespaces", {"metadata": {"name": args[0]}})
                    namespaces.add(args[0])
                server.stall_watches(3600)
                for i in range(int(args[1])):
                    pod = make_pod(i)
                    name = f"{args[0]}-{time.monotonic_ns()}-{i}"
                    meta = {**pod["metadata"], "name": name, "namespace": args[0]}
                    # Encode the event's JSON now: the emulator would otherwise
                    # serialise the whole backlog after the release, inside the
                    # timed region, before the first byte reaches any client.
                    _ = storage.create(PODS, {**pod, "metadata": meta}).full_json
            elif command == "release":
                server.stall_watches(0)
            elif command == "pace":
                # pace NAMESPACE N RATE: write N pods at RATE a second from a
                # thread, each stamped with its write time (perf_counter, the
                # system-wide monotonic clock, comparable across processes).
                if args[0] not in namespaces:
                    server.create("namespaces", {"metadata": {"name": args[0]}})
                    namespaces.add(args[0])
                threading.Thread(
                    target=_pace,
                    args=(server, args[0], int(args[1]), float(args[2])),
                    name="bench-pace",
                    daemon=True,
                ).start()
            print(answer, flush=True)
            if command == "quit":
                return


# --------------------------------------------------------------------------- main


def run(
    pod_counts: list[int], n_events: int, *, official: bool = True, paused_gc: bool = True
) -> list[str]:
    """Each line: ours, the floors (plain ``json.loads`` as the issue defines
    it, and the parser ours uses when that is another), the official client
    when installed; every figure with its garbage-collection share."""
    fast = _json.loads if _json.BACKEND != "json" else None
    lines = []
    for n in pod_counts:
        with RemoteServer(watch_buffer_size=max(10_000, n_events + 100)) as server:
            server.fill(n)
            sync_floor(server, n)  # warm the server's per-object JSON caches
            floor = sync_floor(server, n)
            ours = sync_ours(server, n)
            line = f"sync {n} pods: ours {ours}; floor json {floor} -> {ours / floor:.2f}x"
            if fast is not None:
                fast_floor = sync_floor(server, n, fast)
                line += f"; floor {_json.BACKEND} {fast_floor} -> {ours / fast_floor:.2f}x"
            if official and SharedInformer is not None:
                theirs = sync_official(server, n)
                line += f"; official {theirs}: ours {theirs / ours:.1f}x faster"
            lines.append(line)
            print(line, flush=True)
            if paused_gc:
                ours = sync_ours(server, n, paused_gc=True)
                line = f"sync {n} pods, collector paused (the guide's recipe): ours {ours}"
                if official and SharedInformer is not None:
                    theirs = sync_official(server, n, paused_gc=True)
                    line += f"; official {theirs}: ours {theirs / ours:.1f}x faster"
                lines.append(line)
                print(line, flush=True)
    with RemoteServer(watch_buffer_size=n_events + 100) as server:
        parse = fast or json.loads
        floor = events_floor(server, n_events, "bench-floor")
        kept = events_floor(server, n_events, "bench-keep", parse, keep=True)
        ours = events_ours(server, n_events)
        line = (
            f"watch {n_events} events: ours {ours.rate(n_events)}; "
            f"floor json {floor.rate(n_events)} -> {ours / floor:.2f}x floor time"
        )
        if fast is not None:
            fast_floor = events_floor(server, n_events, "bench-fast", fast)
            line += (
                f"; floor {_json.BACKEND} {fast_floor.rate(n_events)} -> {ours / fast_floor:.2f}x"
            )
        line += (
            f"; {_json.BACKEND} parse + keep in a dict {kept.rate(n_events)} -> {ours / kept:.2f}x"
        )
        if official and SharedInformer is not None:
            theirs = events_official(server, n_events)
            line += f"; official {theirs.rate(n_events)}: ours {theirs / ours:.1f}x its rate"
        lines.append(line)
        print(line, flush=True)
    return lines


def test_informer_benchmark_smoke() -> None:
    assert len(run([200], 200, official=SharedInformer is not None)) == 3


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]))
        sys.exit(0)
    pods = [int(x) for x in os.environ.get("BENCH_INFORMER_PODS", "10000,100000").split(",")]
    events = int(os.environ.get("BENCH_INFORMER_EVENTS", "20000"))
    run(pods, events)
