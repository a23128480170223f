# Every closure in a loop here is called within its iteration (a measurement):
# ruff: noqa: B023
"""The compact storage option (:class:`informers.cache.compact.store.CompactStore`) at a
million pods, side by side with the default dict cache (:class:`Indexer`).

    python -m benchmarks.bench_compact                    # codecs, 100k both stores, 1M compact
    python -m benchmarks.bench_compact --sizes 10000 --million 0       # quick
    python -m benchmarks.bench_compact --only e2e --e2e 100000         # emulator + informer
    python -m benchmarks.bench_compact --json out.json

Parts (``--only``):

* ``codecs``: bytes per object, encode and decode microseconds per object, for
  every codec here (zlib with the built-in Kubernetes dictionary -- the
  default --, zlib without it, plain JSON, msgpack when installed), over
  realistic pods (:func:`realistic_pod`: about 3.3 KB of JSON as a server sends
  it, 2.4 KB once ``managedFields`` is stripped).
* ``stores``: each store filled with N pods in a fresh subprocess, from
  encoded bytes as the informer receives them: a generator of watch-event
  JSON lines (made ahead, in batches, outside the timed region), each parsed by
  the parser the reflector uses (``informers.wire._json.loads``), its object
  trimmed by :func:`~informers.cache.transforms.strip_managed_fields` and written with
  ``upsert(key_of(obj), obj)`` as the informer loop writes. The store is fed
  directly, not through the emulator, because the emulator holding a million
  pods would itself need about 10 GB. Reported: RSS growth (and per object),
  the time to ingest, ``by_index`` for hot keys (1, 10 and 100 matches, all
  hot) and cold ones (100 matches, none hot), ``get_by_key`` hot and cold; the
  compact store's figures as ratios to the dict store's at the same size.
  The dict store is never run at a million (about 10 GB): its figure there is
  its 100k per-object RSS times a million, labelled as extrapolated.
* ``e2e``: N pods (with ``managedFields``) in the real emulator (a child
  process), synced over HTTP by a :class:`SharedIndexInformer` with
  ``store=CompactStore`` and ``transform=strip_managed_fields``, and by one
  with the default store (each in its own process): sync time, RSS, and a
  digest of the cached keys and resource versions (equal for both).

Prints a table; ``--json`` also writes every figure to a file. Timings move
with the machine's load (2 shared cores); the ratios and the bytes much less.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from informers.cache.compact import CompactStore, JSONCodec, ZlibCodec, available_codecs
from informers.cache.store import Indexer
from informers.cache.transforms import strip_managed_fields
from informers.wire import _json
from informers.wire.objects import NAMESPACE_INDEX, get_labels, namespace_index

try:
    import orjson
except ImportError:
    orjson = None

__all__ = ["main", "realistic_pod", "watch_lines"]

HERE = Path(__file__).resolve().parent
MILLION = 1_000_000
#: Pods per namespace (so by_index on a namespace has this many matches),
#: per app label (10) and per pod IP (1).
PER_NAMESPACE = 100
PER_APP = 10


def _hex(i: int, salt: str, n: int) -> str:
    return hashlib.blake2b(f"{salt}{i}".encode(), digest_size=n // 2).hexdigest()


def _uuid(i: int, salt: str) -> str:
    h = _hex(i, salt, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


#: The alphabet of the random suffix Kubernetes gives a pod's name.
_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(i: int) -> str:
    """Pod ``i``'s five-letter name suffix (unique up to 27**5 pods)."""
    i = (i * 2654435761) % 27**5  # spread, still one to one
    out = []
    for _ in range(5):
        i, digit = divmod(i, 27)
        out.append(_SUFFIX[digit])
    return "".join(out)


def realistic_pod(i: int) -> dict[str, Any]:
    """Pod number ``i`` of a cluster of Deployments: as an API server sends a
    running pod (managed fields, owner reference, projected service-account
    volume, container status with IDs), with values that differ per pod where
    real ones do (uid, name hash, IPs, node, container ID, timestamps), so
    compression sees realistic entropy. About 3.3 KB of JSON, 2.4 KB without
    ``managedFields``."""
    app = f"app-{i // PER_APP:05d}"
    ns = f"ns-{i // PER_NAMESPACE:05d}"
    rs = _hex(i // PER_APP, "rs", 10)
    owner_uid = _uuid(i // PER_APP, "owner")
    ip = f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"
    t0 = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i * 7 % 60:02d}Z"
    repository = f"registry.example.com/team-{i % 40}/{app}"
    image = f"{repository}:1.{i % 30}.{i % 7}"
    owner_key = f'k:{{"uid":"{owner_uid}"}}'
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{rs}-{_suffix(i)}",
            "generateName": f"{app}-{rs}-",
            "namespace": ns,
            "uid": _uuid(i, "uid"),
            "resourceVersion": str(1000 + i),
            "creationTimestamp": t0,
            "labels": {
                "app": app,
                "pod-template-hash": rs,
                "tier": ("web", "api", "worker")[i % 3],
            },
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{rs}",
                    "uid": owner_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "manager": "kube-controller-manager",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": t0,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:generateName": {},
                            "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                            "f:ownerReferences": {".": {}, owner_key: {}},
                        },
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"app"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {},
                                    "f:resources": {},
                                }
                            }
                        },
                    },
                },
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": t0,
                    "fieldsType": "FieldsV1",
                    "subresource": "status",
                    "fieldsV1": {
                        "f:status": {
                            "f:conditions": {
                                'k:{"type":"Ready"}': {
                                    ".": {},
                                    "f:lastProbeTime": {},
                                    "f:lastTransitionTime": {},
                                    "f:status": {},
                                    "f:type": {},
                                }
                            },
                            "f:containerStatuses": {},
                            "f:hostIP": {},
                            "f:phase": {},
                            "f:podIP": {},
                            "f:podIPs": {".": {}, f'k:{{"ip":"{ip}"}}': {".": {}, "f:ip": {}}},
                            "f:startTime": {},
                        }
                    },
                },
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "args": ["--port=8080", f"--shard={i % 16}"],
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "env": [{"name": "LOG_LEVEL", "value": "info"}],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "512Mi"},
                        "requests": {"cpu": "100m", "memory": "128Mi"},
                    },
                    "volumeMounts": [
                        {
                            "name": "kube-api-access",
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "readOnly": True,
                        }
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}
                        ],
                    },
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": f"node-{i % 500:04d}",
            "schedulerName": "default-scheduler",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": t0}
                for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": f"192.168.{i % 500 // 250}.{i % 250}",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": t0,
            "qosClass": "Burstable",
            "containerStatuses": [
                {
                    "name": "app",
                    "state": {"running": {"startedAt": t0}},
                    "ready": True,
                    "restartCount": i % 3,
                    "image": image,
                    "imageID": f"{repository}@sha256:{_hex(i % 1000, 'img', 64)}",
                    "containerID": f"containerd://{_hex(i, 'cid', 64)}",
                    "started": True,
                }
            ],
        },
    }


def _dumps(obj: Any) -> bytes:
    if orjson is not None:
        return bytes(orjson.dumps(obj))
    return json.dumps(obj, separators=(",", ":")).encode()


def watch_lines(n: int, batch: int = 10_000) -> Iterator[list[bytes]]:
    """Watch ``ADDED`` event lines (bytes, as a watch response carries them)
    for pods 0..n-1, in batches of ``batch`` lines."""
    for start in range(0, n, batch):
        yield [
            b'{"type":"ADDED","object":' + _dumps(realistic_pod(i)) + b"}\n"
            for i in range(start, min(n, start + batch))
        ]


def app_index(obj: Any) -> list[str]:
    """The ``app`` label (10 pods each)."""
    app = get_labels(obj).get("app")
    return [app] if app else []


def ip_index(obj: Any) -> list[str]:
    """The pod IP (one pod each)."""
    ip = obj.get("status", {}).get("podIP")
    return [ip] if ip else []


INDEXERS = {NAMESPACE_INDEX: namespace_index, "app": app_index, "ip": ip_index}


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def make_store(kind: str, hot: int = 10_000) -> Any:
    """``dict`` (the default Indexer) or ``compact-<codec>``."""
    if kind == "dict":
        return Indexer(indexers=dict(INDEXERS))
    codec_name = kind.removeprefix("compact-")
    codecs: dict[str, Any] = {
        **available_codecs(),
        "zlib-nodict": ZlibCodec(dictionary=b""),
        "json": JSONCodec(),
    }
    return CompactStore(indexers=dict(INDEXERS), codec=codecs[codec_name], hot_objects=hot)


def _per_call(func: Callable[[], Any], budget: float = 0.3) -> float:
    """Seconds per call: the best of 5 rounds of about ``budget`` seconds."""
    number = 1
    while True:
        took = timeit.timeit(func, number=number)
        if took > budget / 5 or number > 1 << 20:
            break
        number *= 4
    return min(timeit.repeat(func, number=number, repeat=5)) / number


def lookups(store: Any, n: int, start: int = 0) -> dict[str, float]:
    """Microseconds per call; hot lookups are warmed (their objects hot);
    cold ones read namespaces from ``start`` on (a new ``start`` per round)."""
    hot_i = n // 2
    pod = realistic_pod(hot_i)
    ns, app, ip = (
        pod["metadata"]["namespace"],
        pod["metadata"]["labels"]["app"],
        pod["status"]["podIP"],
    )
    key = f"{ns}/{pod['metadata']['name']}"
    out: dict[str, float] = {}
    for label, call in (
        ("by_index 1 hot", lambda: store.by_index("ip", ip)),
        ("by_index 10 hot", lambda: store.by_index("app", app)),
        ("by_index 100 hot", lambda: store.by_index(NAMESPACE_INDEX, ns)),
        ("get_by_key hot", lambda: store.get_by_key(key)),
    ):
        assert call(), label  # also warms the hot set
        out[label] = _per_call(call) * 1e6
    # Cold: every call asks for a namespace (or a pod) not read before, so a
    # compact store decodes each object: namespaces far from the last ones
    # written (which a write made hot) and from the warmed one, and different
    # in every round.
    spare = max(1, n // PER_NAMESPACE - 200)
    namespaces = [f"ns-{(start + 7 * k) % spare:05d}" for k in range(61)]
    started = time.perf_counter()
    for namespace in namespaces[:60]:
        store.by_index(NAMESPACE_INDEX, namespace)
    out["by_index 100 cold"] = (time.perf_counter() - started) / 60 * 1e6
    cold_keys = store.index_keys(NAMESPACE_INDEX, namespaces[60])
    started = time.perf_counter()
    for k in cold_keys:
        store.get_by_key(k)
    out["get_by_key cold"] = (time.perf_counter() - started) / max(1, len(cold_keys)) * 1e6
    return out


def store_child(kind: str, n: int) -> dict[str, Any]:
    """In a fresh process: fill one store with ``n`` pods from watch lines;
    RSS, ingest time, lookups."""
    store = make_store(kind)
    loads, strip = _json.loads, strip_managed_fields
    # Warm every code path once, outside the measurement.
    for lines in watch_lines(10, 10):
        for line in lines:
            obj = strip(loads(line)["object"])
            store.upsert(store.key_of(obj), obj)
    store.replace([], "0")
    gc.collect()
    before = _rss()
    ingest = 0.0
    for lines in watch_lines(n):
        started = time.perf_counter()
        for line in lines:
            event = loads(line)  # what the reflector's watch stream does per line
            obj = strip(event["object"])  # the informer's transform
            store.upsert(store.key_of(obj), obj)  # the informer loop's write
        ingest += time.perf_counter() - started
        del lines
    gc.collect()
    rss = _rss() - before
    assert len(store) == n
    result: dict[str, Any] = {
        "kind": kind,
        "n": n,
        "rss_bytes": rss,
        "rss_per_object": rss / n,
        "peak_rss": _peak_rss(),
        "ingest_s": ingest,
        "ingest_per_object_us": ingest / n * 1e6,
        "lookups_us": lookups(store, n),
    }
    if isinstance(store, CompactStore):
        result["encoded_per_object"] = store.stats()["encoded_bytes"] / n
    return result


def lookups_child(n: int, rounds: int = 3) -> dict[str, Any]:
    """In a fresh process: the dict store and the compact store filled with
    the same ``n`` pods, their lookups measured in alternation (best of
    ``rounds`` each), so load on the machine hits both alike."""
    stores = {"dict": make_store("dict"), "compact-zlib": make_store("compact-zlib")}
    loads, strip = _json.loads, strip_managed_fields
    for lines in watch_lines(n):
        for line in lines:
            obj = strip(loads(line)["object"])
            for store in stores.values():
                store.upsert(store.key_of(obj), obj)
    best: dict[str, dict[str, float]] = {kind: {} for kind in stores}
    for round_ in range(rounds):
        for kind, store in stores.items():
            for label, value in lookups(store, n, start=round_).items():
                best[kind][label] = min(value, best[kind].get(label, value))
    return {
        "n": n,
        "lookups_us": best,
        "ratio": {
            label: best["compact-zlib"][label] / best["dict"][label] for label in best["dict"]
        },
    }


def _child(*args: str, timeout: float = 3600) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_compact", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=HERE.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    if out.returncode != 0:
        raise RuntimeError(f"child {args} failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------- codecs


def codecs_table(samples: int = 2000) -> list[dict[str, Any]]:
    """Bytes, encode and decode microseconds per object for every codec."""
    pods = [strip_managed_fields(realistic_pod(i * 37)) for i in range(samples)]
    raw = statistics.fmean(len(_dumps(realistic_pod(i * 37))) for i in range(200))
    codecs: dict[str, Any] = {
        "zlib (default: Kubernetes dictionary)": ZlibCodec(),
        "zlib, no dictionary": ZlibCodec(dictionary=b""),
        "zlib level 1": ZlibCodec(1),
        "json": JSONCodec(),
    }
    for name in ("zstd", "msgpack"):  # when their packages are installed
        if name in available_codecs():
            codecs[name] = available_codecs()[name]
    rows = [
        {
            "codec": "JSON as sent (with managedFields)",
            "bytes": raw,
            "encode_us": None,
            "decode_us": None,
        }
    ]
    for name, codec in codecs.items():
        blobs = [codec.encode(p) for p in pods]
        assert all(codec.decode(b) == p for b, p in zip(blobs[:100], pods, strict=False))
        encode = min(timeit.repeat(lambda: [codec.encode(p) for p in pods], number=1, repeat=7))
        decode = min(timeit.repeat(lambda: [codec.decode(b) for b in blobs], number=1, repeat=7))
        rows.append(
            {
                "codec": name,
                "bytes": statistics.fmean(map(len, blobs)),
                "encode_us": encode / samples * 1e6,
                "decode_us": decode / samples * 1e6,
            }
        )
    return rows


# ---------------------------------------------------------------------------- end to end


def serve(n: int) -> None:
    """Child: an ApiServer holding ``n`` realistic pods; prints its URL, then
    waits for a line on stdin and stops."""
    from informers.testing import ApiServer
    from informers.wire.resources import PODS

    with ApiServer(watch_buffer_size=1000) as server:
        for k in range(max(1, (n + PER_NAMESPACE - 1) // PER_NAMESPACE)):
            server.create("namespaces", {"metadata": {"name": f"ns-{k:05d}"}})
        server.create_many(PODS, (realistic_pod(i) for i in range(n)))
        print(server.url, flush=True)
        sys.stdin.readline()


def e2e_child(kind: str, url: str, n: int) -> dict[str, Any]:
    """Child: sync a SharedIndexInformer (``kind``: ``dict`` or ``compact``)
    with the emulator at ``url``; sync time, RSS, a digest of the cache."""
    import kubernetes.client

    from informers import HTTPListerWatcher, SharedIndexInformer
    from informers.wire.resources import PODS

    config = kubernetes.client.Configuration()
    config.host = url
    client = kubernetes.client.ApiClient(config)
    gc.collect()
    before = _rss()
    informer = SharedIndexInformer(
        HTTPListerWatcher(client, PODS),
        indexers=dict(INDEXERS),
        name="pods",
        store=None if kind == "dict" else CompactStore,
    )
    informer.set_transform(strip_managed_fields)
    started = time.perf_counter()
    informer.start()
    try:
        assert informer.wait_synced(1800)
        took = time.perf_counter() - started
        gc.collect()
        rss = _rss() - before
        peak = _peak_rss()  # before the digest below decodes every object
        store = informer.get_indexer()
        assert len(store) == n, len(store)
        # The digest of every object's digest, in uid order, read in batches
        # (a list() of a compact store of a million pods would decode them
        # all at once).
        digests: list[tuple[str, bytes]] = []
        keys = store.list_keys()
        for start in range(0, len(keys), 1000):
            for obj in store.get_many(keys[start : start + 1000]):
                digests.append((obj["metadata"]["uid"], hashlib.sha256(_dumps(obj)).digest()))
        del keys
        digests.sort()
        digest = hashlib.sha256()
        for _, one in digests:
            digest.update(one)
        del digests
        sample = store.by_index(NAMESPACE_INDEX, "ns-00000")
        return {
            "kind": kind,
            "n": n,
            "sync_s": took,
            "rss_bytes": rss,
            "rss_per_object": rss / n,
            "peak_rss": peak,
            "digest": digest.hexdigest()[:16],
            "ns-00000 pods": len(sample),
            "managedFields left": sum("managedFields" in o["metadata"] for o in sample),
        }
    finally:
        informer.stop()
        client.close()


def e2e(n: int, kinds: tuple[str, ...] = ("compact", "dict")) -> list[dict[str, Any]]:
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_compact", "--serve", str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=HERE.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        started = time.perf_counter()
        url = server.stdout.readline().strip()
        print(
            f"  emulator filled with {n} pods in {time.perf_counter() - started:.0f} s", flush=True
        )
        return [_child("--e2e-child", kind, url, str(n)) for kind in kinds]
    finally:
        server.stdin.write("quit\n")
        server.stdin.flush()
        server.wait(120)
        server.stdin.close()
        server.stdout.close()


# ---------------------------------------------------------------------------- report


def _gb(value: float) -> str:
    return f"{value / 1e9:.2f} GB"


def report_stores(results: list[dict[str, Any]]) -> None:
    by = {(r["kind"], r["n"]): r for r in results}
    print("\nstores, fed from watch lines (RSS growth; ingest = parse + strip + upsert)")
    print(
        f"{'store':<22} {'pods':>9} {'RSS':>9} {'B/pod':>7} {'encoded':>8} {'ingest':>8} "
        f"{'us/pod':>7}  lookups us (ratio to dict at the same size)"
    )
    for r in results:
        base = by.get(("dict", r["n"]))
        looks = []
        for label, value in r["lookups_us"].items():
            ratio = ""
            if base is not None and r is not base:
                ratio = f" ({value / base['lookups_us'][label]:.2f}x)"
            looks.append(f"{label}: {value:.2f}{ratio}")
        encoded = f"{r['encoded_per_object']:.0f}" if "encoded_per_object" in r else "-"
        print(
            f"{r['kind']:<22} {r['n']:>9,} {_gb(r['rss_bytes']):>9} {r['rss_per_object']:>7,.0f} "
            f"{encoded:>8} {r['ingest_s']:>7.1f}s {r['ingest_per_object_us']:>7.1f}  "
            + "; ".join(looks)
        )
    dicts = [r for r in results if r["kind"] == "dict"]
    if dicts:
        biggest = max(dicts, key=lambda r: r["n"])
        print(
            f"dict store at 1,000,000 pods, extrapolated from {biggest['n']:,}: "
            f"{_gb(biggest['rss_per_object'] * MILLION)} "
            f"({biggest['rss_per_object']:,.0f} B/pod x 1M; not run: it would not fit beside "
            "the other work on this machine)"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--store-child"]:
        print(json.dumps(store_child(argv[1], int(argv[2]))), flush=True)
        return 0
    if argv[:1] == ["--lookups-child"]:
        print(json.dumps(lookups_child(int(argv[1]))), flush=True)
        return 0
    if argv[:1] == ["--e2e-child"]:
        print(json.dumps(e2e_child(argv[1], argv[2], int(argv[3]))), flush=True)
        return 0
    if argv[:1] == ["--serve"]:
        serve(int(argv[1]))
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_compact", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--only", default="codecs,lookups,stores,e2e")
    parser.add_argument(
        "--sizes", default="100000", help="store sizes both stores run at (comma-separated)"
    )
    parser.add_argument(
        "--million",
        type=int,
        default=MILLION,
        help="the compact store alone at this size (0: skip)",
    )
    parser.add_argument(
        "--codecs",
        default="zlib",
        help="compact codecs at --sizes (zlib, zlib-nodict, json, msgpack)",
    )
    parser.add_argument("--e2e", type=int, default=100_000, help="pods for the e2e part")
    parser.add_argument(
        "--e2e-stores",
        default="compact,dict",
        help="the stores of the e2e part (a dict store of a million pods needs about 18 GB)",
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    everything: dict[str, Any] = {}
    started = time.perf_counter()
    if "codecs" in only:
        rows = codecs_table()
        everything["codecs"] = rows
        print("\ncodecs over realistic pods, managedFields stripped (per object)")
        print(f"{'codec':<40} {'bytes':>7} {'encode us':>10} {'decode us':>10}")
        for row in rows:
            enc = f"{row['encode_us']:.1f}" if row["encode_us"] is not None else "-"
            dec = f"{row['decode_us']:.1f}" if row["decode_us"] is not None else "-"
            print(f"{row['codec']:<40} {row['bytes']:>7,.0f} {enc:>10} {dec:>10}", flush=True)
    if "lookups" in only:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
        print("\nlookups, both stores in one process, alternating (us per call, best of 3)")
        everything["lookups"] = []
        for n in sizes:
            got = _child("--lookups-child", str(n))
            everything["lookups"].append(got)
            for label, ratio in got["ratio"].items():
                print(
                    f"  {n:>9,} pods  {label:<20} dict {got['lookups_us']['dict'][label]:8.2f}  "
                    f"compact {got['lookups_us']['compact-zlib'][label]:8.2f}  "
                    f"ratio {ratio:5.2f}x",
                    flush=True,
                )
    if "stores" in only:
        results = []
        kinds = ["dict", *(f"compact-{c.strip()}" for c in args.codecs.split(",") if c.strip())]
        for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
            for kind in kinds:
                print(f"  {kind} at {n:,} pods ...", flush=True)
                results.append(_child("--store-child", kind, str(n)))
        if args.million:
            print(f"  compact-zlib at {args.million:,} pods ...", flush=True)
            t0 = time.perf_counter()
            one = _child("--store-child", "compact-zlib", str(args.million))
            one["wall_s"] = time.perf_counter() - t0
            results.append(one)
        everything["stores"] = results
        report_stores(results)
        for r in results:
            if r["n"] == args.million:
                print(
                    f"1M run: RSS {_gb(r['rss_bytes'])} (target <= 3 GB: "
                    f"{'met' if r['rss_bytes'] <= 3e9 else 'MISSED'}), peak process RSS "
                    f"{_gb(r['peak_rss'])}, ingest {r['ingest_s']:.0f} s, child wall time "
                    f"{r['wall_s']:.0f} s"
                )
    if "e2e" in only and args.e2e:
        print(f"\nend to end: {args.e2e:,} pods through the emulator and the informer", flush=True)
        t0 = time.perf_counter()
        rows = e2e(args.e2e, tuple(k.strip() for k in args.e2e_stores.split(",") if k.strip()))
        print(f"  (e2e part: {time.perf_counter() - t0:.0f} s wall)")
        everything["e2e"] = rows
        for r in rows:
            print(
                f"  {r['kind']:<8} sync {r['sync_s']:6.1f} s  RSS {_gb(r['rss_bytes'])} "
                f"({r['rss_per_object']:,.0f} B/pod, peak {_gb(r['peak_rss'])})  digest "
                f"{r['digest']}  ns-00000: {r['ns-00000 pods']} pods, "
                f"{r['managedFields left']} with managedFields"
            )
        print(f"  same contents: {len({r['digest'] for r in rows}) == 1}")
    print(f"\ntook {time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


def test_bench_compact_smoke() -> None:
    """One tiny round of every part (run by ``python -m pytest benchmarks``)."""
    assert main(["--sizes", "300", "--million", "0", "--e2e", "200"]) == 0
