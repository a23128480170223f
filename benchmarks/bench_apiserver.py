"""API server emulator throughput, side by side with a plain ``json.dumps``.

* list: a full list of N pods (default 100k, ``BENCH_APISERVER_PODS``) through
  the real HTTP path with a raw urllib3 GET, and a paged walk (limit 500),
  against ``json.dumps`` of the same PodList (the floor: what any Python
  server must at least do once);
* watch: events per second a raw urllib3 watch receives while objects are
  written, against ``json.dumps`` of each event.

    python -m pytest benchmarks/bench_apiserver.py --benchmark-enable
    python benchmarks/bench_apiserver.py          # prints MB/s and events/s
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from informers.testing import ApiServer
from informers.wire.resources import CONFIGMAPS, PODS

N_PODS = int(os.environ.get("BENCH_APISERVER_PODS", "100000"))
N_EVENTS = int(os.environ.get("BENCH_APISERVER_EVENTS", "20000"))

_CONTAINERS = [
    {
        "name": "app",
        "image": "registry.example.com/team/app:1.24.3",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--config=/etc/app/config.yaml", "--log-level=info", "--port=8080"],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "env": [{"name": f"SETTING_{n}", "value": f"value-{n}"} for n in range(12)],
        "resources": {
            "limits": {"cpu": "500m", "memory": "512Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"},
        },
        "volumeMounts": [{"mountPath": "/etc/app", "name": "config", "readOnly": True}],
    }
]
_STATUS = {
    "phase": "Running",
    "conditions": [
        {"type": t, "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
    ],
    "hostIP": "10.0.0.1",
    "qosClass": "Burstable",
}


def make_pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pod-{i:06d}",
            "namespace": f"ns-{i % 50}",
            "labels": {"app": f"app-{i % 100}", "tier": "web", "pod-template-hash": "5d9f7c"},
            "annotations": {"example.com/owner": "team-a"},
        },
        "spec": {
            "nodeName": f"node-{i % 200}",
            "containers": _CONTAINERS,
            "volumes": [{"name": "config", "configMap": {"name": "app-config"}}],
        },
        "status": dict(_STATUS, podIP=f"10.1.{i // 250 % 250}.{i % 250}"),
    }


def fill(server: ApiServer, n: int) -> None:
    for ns in range(50):
        server.create("namespaces", {"metadata": {"name": f"ns-{ns}"}})
    server.create_many(PODS, (make_pod(i) for i in range(n)))


def http_list(http: urllib3.PoolManager, url: str) -> int:
    response = http.request("GET", f"{url}/api/v1/pods", preload_content=True)
    assert response.status == 200
    return len(response.data)


def http_paged_list(http: urllib3.PoolManager, url: str, limit: int = 500) -> int:
    total, token = 0, ""
    while True:
        query = f"limit={limit}" + (f"&continue={token}" if token else "")
        response = http.request("GET", f"{url}/api/v1/pods?{query}")
        total += len(response.data)
        # The token is in the list metadata, ahead of the items: no full parse.
        head = response.data[:512]
        start = head.find(b'"continue":"')
        if start < 0:
            return total
        start += len(b'"continue":"')
        token = head[start : head.index(b'"', start)].decode()


def pod_list(server: ApiServer) -> dict[str, Any]:
    """The PodList as dicts, built once (not part of the floor's time)."""
    items = server.list_objects(PODS)
    for item in items:
        item.pop("kind")
        item.pop("apiVersion")
    body: dict[str, Any] = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "1"},
    }
    body["items"] = items
    return body


def dumps_list(body: dict[str, Any]) -> int:
    return len(json.dumps(body, separators=(",", ":")).encode())


def watch_rate(server: ApiServer, n: int) -> float:
    """Seconds from the first write to the n-th event read over HTTP."""
    http = urllib3.PoolManager()
    rv = server.resource_version
    response = http.request(
        "GET",
        f"{server.url}/api/v1/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=120",
        preload_content=False,
    )

    def writer() -> None:
        server.create_many(
            CONFIGMAPS,
            ({"metadata": {"name": f"cm-{rv}-{i}"}, "data": {"k": "v"}} for i in range(n)),
            "default",
        )

    thread = threading.Thread(target=writer, name="bench-writer")
    started = time.perf_counter()
    thread.start()
    seen, pending = 0, b""
    for chunk in response.read_chunked(decode_content=False):
        pending += chunk
        seen += pending.count(b"\n")
        pending = pending[pending.rfind(b"\n") + 1 :]
        if seen >= n:
            break
    elapsed = time.perf_counter() - started
    thread.join()
    response.close()
    response.release_conn()
    http.clear()
    return elapsed


def replay_rate(server: ApiServer, from_rv: int, n: int) -> float:
    """Seconds to receive n events that already happened (watch from an old
    RV): the streaming path alone, without the writes."""
    http = urllib3.PoolManager()
    started = time.perf_counter()
    response = http.request(
        "GET",
        f"{server.url}/api/v1/configmaps?watch=1&resourceVersion={from_rv}&timeoutSeconds=120",
        preload_content=False,
    )
    seen = 0
    for chunk in response.read_chunked(decode_content=False):
        seen += chunk.count(b"\n")
        if seen >= n:
            break
    elapsed = time.perf_counter() - started
    response.close()
    response.release_conn()
    http.clear()
    return elapsed


def dumps_events(n: int) -> float:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}, "data": {"k": "v"}}
    started = time.perf_counter()
    for i in range(n):
        obj["metadata"] = {"name": f"cm-{i}", "resourceVersion": str(i)}
        json.dumps({"type": "ADDED", "object": obj}, separators=(",", ":")).encode()
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def loaded() -> Iterator[tuple[ApiServer, urllib3.PoolManager]]:
    with ApiServer(watch_buffer_size=N_EVENTS + 10) as server:
        fill(server, N_PODS)
        http = urllib3.PoolManager()
        http_list(http, server.url)  # warm the per-object JSON caches
        yield server, http
        http.clear()


def test_list_http(
    benchmark: Any, ratios: Any, loaded: tuple[ApiServer, urllib3.PoolManager]
) -> None:
    server, http = loaded
    benchmark.pedantic(http_list, args=(http, server.url), rounds=5, iterations=1)
    ratios.record(f"list {N_PODS} pods (HTTP)", "impl", benchmark)


def test_list_dumps_floor(
    benchmark: Any, ratios: Any, loaded: tuple[ApiServer, urllib3.PoolManager]
) -> None:
    body = pod_list(loaded[0])
    benchmark.pedantic(dumps_list, args=(body,), rounds=3, iterations=1)
    ratios.record(f"list {N_PODS} pods (HTTP)", "floor", benchmark)
    ratios.record(f"paged list {N_PODS} pods", "floor", benchmark)


def test_paged_list_http(
    benchmark: Any, ratios: Any, loaded: tuple[ApiServer, urllib3.PoolManager]
) -> None:
    server, http = loaded
    benchmark.pedantic(http_paged_list, args=(http, server.url), rounds=3, iterations=1)
    ratios.record(f"paged list {N_PODS} pods", "impl", benchmark)


def main() -> None:
    with ApiServer(watch_buffer_size=N_EVENTS + 10) as server:
        started = time.perf_counter()
        fill(server, N_PODS)
        print(f"filled {N_PODS} pods in {time.perf_counter() - started:.1f}s")
        http = urllib3.PoolManager()
        try:
            started = time.perf_counter()
            size = http_list(http, server.url)
            cold = time.perf_counter() - started
            warm = min(_timed(http_list, http, server.url) for _ in range(3))
            paged = min(_timed(http_paged_list, http, server.url) for _ in range(2))
            body = pod_list(server)
            floor = min(_timed(dumps_list, body) for _ in range(2))
            mb = size / 1e6
            print(f"list body {mb:.1f} MB")
            print(f"  HTTP full list, first       : {cold:6.2f}s  {mb / cold:7.1f} MB/s")
            print(f"  HTTP full list, warm        : {warm:6.2f}s  {mb / warm:7.1f} MB/s")
            print(f"  HTTP paged list (limit 500) : {paged:6.2f}s  {mb / paged:7.1f} MB/s")
            print(f"  json.dumps of the same list : {floor:6.2f}s  {mb / floor:7.1f} MB/s")
            before = server.resource_version
            elapsed = watch_rate(server, N_EVENTS)
            dumped = dumps_events(N_EVENTS)
            rate = N_EVENTS / elapsed
            print(f"watch, written while watched: {rate:9,.0f} events/s (bounded by the writes)")
            replayed = min(_timed(replay_rate, server, before, N_EVENTS) for _ in range(3))
            print(f"watch, replayed from history: {N_EVENTS / replayed:9,.0f} events/s")
            print(f"json.dumps of the same events: {N_EVENTS / dumped:9,.0f} events/s")
        finally:
            http.clear()


def _timed(fn: Any, *args: Any) -> float:
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def test_watch_event_rate(benchmark: Any, ratios: Any) -> None:
    with ApiServer(watch_buffer_size=N_EVENTS + 10) as server:
        benchmark.pedantic(watch_rate, args=(server, N_EVENTS), rounds=3, iterations=1)
    ratios.record(f"watch {N_EVENTS} events", "impl", benchmark)


def test_watch_replay_rate(benchmark: Any, ratios: Any) -> None:
    with ApiServer(watch_buffer_size=N_EVENTS + 10) as server:
        before = server.resource_version
        server.create_many(
            CONFIGMAPS,
            ({"metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}} for i in range(N_EVENTS)),
            "default",
        )
        benchmark.pedantic(replay_rate, args=(server, before, N_EVENTS), rounds=3, iterations=1)
    ratios.record(f"watch replay {N_EVENTS} events", "impl", benchmark)


def test_watch_dumps_floor(benchmark: Any, ratios: Any) -> None:
    benchmark.pedantic(dumps_events, args=(N_EVENTS,), rounds=3, iterations=1)
    ratios.record(f"watch {N_EVENTS} events", "floor", benchmark)
    ratios.record(f"watch replay {N_EVENTS} events", "floor", benchmark)


if __name__ == "__main__":
    main()
