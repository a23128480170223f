"""Indexer benchmarks, each measured side by side with its floor.

The floor does the same work with no abstraction at all: a plain dict of
objects, a plain dict of sets per index, and a list comprehension. The
summary at the end prints Indexer/floor for every case, plus the cost of an
update in a 100k-object store relative to a 1k-object one.

Objects are realistic pods (~5 KB as JSON): every pod has its own metadata,
labels, spec and status dicts; large parts that the store never reads
(container specs, managed fields, conditions) are shared between pods so that
100k pods build in seconds and fit in memory.

    python -m pytest benchmarks --benchmark-enable

The lookup figures of the Performance guide come from ``python -m
benchmarks.bench_store``, which times each case interleaved with its floors
(pytest-benchmark times one after the other, so a load change on a shared
machine lands on one side of a ratio).
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from informers import (
    NAMESPACE_INDEX,
    Indexer,
    LabelSelector,
    Lister,
    get_labels,
    meta_namespace_key,
    namespace_index,
)

#: by_index cases: namespaces with exactly this many pods exist in every store.
MATCHES = {"one": 1, "hundred": 100, "fivek": 5000}
FILLER_NAMESPACE_SIZE = 50


def app_index(obj: Any) -> list[str]:
    app = get_labels(obj).get("app")
    return [app] if app else []


INDEXERS = {NAMESPACE_INDEX: namespace_index, "app": app_index}

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
        "volumeMounts": [
            {"mountPath": "/etc/app", "name": "config", "readOnly": True},
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            },
        ],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    },
    {
        "name": "sidecar",
        "image": "registry.example.com/infra/proxy:2.8.0",
        "ports": [{"containerPort": 15001, "name": "proxy", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
    },
]
_SPEC = {
    "containers": _CONTAINERS,
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": True,
    "preemptionPolicy": "PreemptLowerPriority",
    "priority": 0,
    "restartPolicy": "Always",
    "schedulerName": "default-scheduler",
    "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
    "serviceAccountName": "app",
    "terminationGracePeriodSeconds": 30,
    "tolerations": [
        {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
    ],
    "volumes": [
        {"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}},
        {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": []}},
    ],
}
_CONDITIONS = [
    {"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:10Z"}
    for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
]
_MANAGED_FIELDS = [
    {
        "manager": "kube-controller-manager",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}}}},
    }
]


def make_pod(i: int, namespace: str, rv: int, app_suffix: str = "") -> dict[str, Any]:
    owner = f"app-{i // 25}"
    app = owner + app_suffix
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner}-{i:07d}",
            "generateName": f"{owner}-",
            "namespace": namespace,
            "uid": f"5f1c2b3a-0000-4000-8000-{i:012d}",
            "resourceVersion": str(rv),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": app, "pod-template-hash": "5d8f7c9b4", "tier": "backend"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{owner}-5d8f7c9b4",
                    "uid": f"0b1c2d3e-0000-4000-8000-{i // 25:012d}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": _MANAGED_FIELDS,
        },
        "spec": {**_SPEC, "nodeName": f"node-{i % 300:03d}"},
        "status": {
            "phase": "Running",
            "conditions": _CONDITIONS,
            "hostIP": f"192.168.{i % 300 // 250}.{i % 250}",
            "podIP": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}",
            "qosClass": "Burstable",
            "startTime": "2026-01-01T00:00:05Z",
        },
    }


@functools.cache
def pods(size: int) -> tuple[dict[str, Any], ...]:
    """``size`` pods: one namespace per MATCHES entry (that many pods each, if
    they fit), the rest in namespaces of FILLER_NAMESPACE_SIZE pods."""
    namespaces: list[str] = []
    for namespace, count in MATCHES.items():
        if len(namespaces) + count <= size:
            namespaces.extend([namespace] * count)
    filler = size - len(namespaces)
    namespaces.extend(f"ns-{n // FILLER_NAMESPACE_SIZE:05d}" for n in range(filler))
    return tuple(make_pod(i, ns, rv=1000 + i) for i, ns in enumerate(namespaces))


def build_floor(objects: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    items: dict[str, Any] = {}
    indices: dict[str, dict[str, set[str]]] = {name: {} for name in INDEXERS}
    for obj in objects:
        key = meta_namespace_key(obj)
        items[key] = obj
        for name, func in INDEXERS.items():
            for value in func(obj):
                indices[name].setdefault(value, set()).add(key)
    return items, indices


@functools.cache
def indexer(size: int) -> Indexer:
    store = Indexer(indexers=INDEXERS)
    store.replace(pods(size), "1")
    return store


@functools.cache
def floor(size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    return build_floor(pods(size))


# ------------------------------------------------------------------ by_index


@pytest.mark.parametrize("role", ["impl", "floor", "locked floor"])
@pytest.mark.parametrize("namespace", list(MATCHES))
@pytest.mark.parametrize("size", [10_000, 100_000])
def test_by_index(benchmark: Any, ratios: Any, size: int, namespace: str, role: str) -> None:
    """Two floors: the dict of key sets read bare, and read under a
    ``threading.Lock`` taken with ``with`` (the least any thread-safe read can
    cost). Targets: within 1.3x of the locked floor at every size, and of the
    bare one from 100 matches up (at one match the lock is most of the cost)."""
    matches = MATCHES[namespace]
    case = f"by_index n={size} matches={matches}"
    locked_case = f"{case} (locked)"
    benchmark.group = case
    if role == "impl":
        store = indexer(size)

        def run() -> list[Any]:
            return store.by_index(NAMESPACE_INDEX, namespace)

    else:
        items, indices = floor(size)
        index = indices[NAMESPACE_INDEX]
        lock = threading.Lock()

        def bare() -> list[Any]:
            return [items[key] for key in index[namespace]]

        def locked() -> list[Any]:
            with lock:
                return [items[key] for key in index[namespace]]

        run = bare if role == "floor" else locked

    result = benchmark(run)
    assert len(result) == matches
    if role == "impl":
        ratios.record(case, "impl", benchmark, target=1.3 if matches >= 100 else None)
        ratios.record(locked_case, "impl", benchmark, target=1.3)
    else:
        ratios.record(case if role == "floor" else locked_case, "floor", benchmark)


# ------------------------------------------------------------ list(selector)


def old_list(store: Indexer, selector: str) -> list[Any]:
    """Lister.list(selector) as it was before the compiled path (the text
    parsed on every call; per object get_labels, then LabelSelector.matches,
    which was ``all(r.matches(labels) for r in requirements)``; the
    requirements' own ``matches`` is unchanged): the "before" figures."""
    sel = LabelSelector.parse(selector)
    if sel.empty:
        return store.list()
    return [o for o in store.list() if _old_selector_matches(sel, get_labels(o))]


def _old_selector_matches(sel: LabelSelector, labels: Any) -> bool:
    return all(r.matches(labels) for r in sel.requirements)


#: Selector -> the scan a user writes instead (labels -> bool), the floor:
#: a list comprehension over the objects with the comparison written out.
SELECTORS: dict[str, Callable[[dict[str, str]], bool]] = {
    "app=app-7": lambda labels: labels.get("app") == "app-7",
    "app=app-7,tier=backend": lambda labels: (
        labels.get("app") == "app-7" and labels.get("tier") == "backend"
    ),
    "tier in (backend,web),!canary": lambda labels: (
        labels.get("tier") in ("backend", "web") and "canary" not in labels
    ),
}


def _floor_scan(objects: list[Any], selector: str) -> Callable[[], list[Any]]:
    # Each floor is written out in full, as a user would: no call per object.
    if selector == "app=app-7":
        return lambda: [p for p in objects if p["metadata"].get("labels", {}).get("app") == "app-7"]
    if selector == "app=app-7,tier=backend":
        return lambda: [
            p
            for p in objects
            if (labels := p["metadata"].get("labels", {})).get("app") == "app-7"
            and labels.get("tier") == "backend"
        ]
    return lambda: [
        p
        for p in objects
        if (labels := p["metadata"].get("labels", {})).get("tier") in ("backend", "web")
        and "canary" not in labels
    ]


@pytest.mark.parametrize("role", ["impl", "before", "floor"])
@pytest.mark.parametrize("selector", list(SELECTORS))
@pytest.mark.parametrize("size", [10_000, 100_000])
def test_lister_list(benchmark: Any, ratios: Any, size: int, selector: str, role: str) -> None:
    """Lister.list(selector) (the text parsed by the lister, as users call
    it) against the floor: the scan over a list of dicts with the comparison
    written out. "before" is the code the compiled path replaced."""
    case = f"list({selector!r}) n={size}"
    benchmark.group = case
    store = indexer(size)
    if role == "impl":
        lister = Lister(store)

        def run() -> list[Any]:
            return lister.list(selector)

    elif role == "before":

        def run() -> list[Any]:
            return old_list(store, selector)

    else:
        run = _floor_scan(store.list(), selector)

    result = benchmark(run)
    wanted = SELECTORS[selector]
    assert len(result) == sum(1 for p in pods(size) if wanted(p["metadata"]["labels"]))
    if role == "before":
        ratios.record(f"{case} (before)", "impl", benchmark)
    else:
        ratios.record(case, role, benchmark)
        if role == "floor":
            ratios.record(f"{case} (before)", "floor", benchmark)


# -------------------------------------------------------------------- writes

WRITE_SIZES = [1_000, 100_000]
#: Distinct keys cycled through by the write benchmarks.
WRITE_KEYS = 500


def _versions(size: int) -> list[dict[str, Any]]:
    """For WRITE_KEYS stored pods, alternating versions: a new
    resourceVersion and a changed ``app`` label, so the app index really
    moves the key from one value to another on every update."""
    base = pods(size)[:: max(1, size // WRITE_KEYS)][:WRITE_KEYS]
    out = []
    for generation, suffix in ((1, "-blue"), (2, "")):
        for obj in base:
            meta = obj["metadata"]
            i = int(meta["name"].rsplit("-", 1)[1])
            out.append(make_pod(i, meta["namespace"], rv=10**7 + generation, app_suffix=suffix))
    return out


def _fresh(size: int) -> list[dict[str, Any]]:
    """WRITE_KEYS pods whose keys are not in the store."""
    return [make_pod(10**6 + i, "fresh", rv=10**7) for i in range(WRITE_KEYS)]


def floor_put(items: dict[str, Any], indices: dict[str, dict[str, set[str]]], obj: Any) -> None:
    """The floor for an update: key, index values, diff against the old
    object's values, plain dict and set operations."""
    key = meta_namespace_key(obj)
    old = items.get(key)
    items[key] = obj
    for name, func in INDEXERS.items():
        index = indices[name]
        new_values = func(obj)
        old_values = func(old) if old is not None else []
        if old_values == new_values:
            continue
        for value in old_values:
            keys = index[value]
            keys.discard(key)
            if not keys:
                del index[value]
        for value in new_values:
            index.setdefault(value, set()).add(key)


def floor_delete(items: dict[str, Any], indices: dict[str, dict[str, set[str]]], obj: Any) -> None:
    key = meta_namespace_key(obj)
    old = items.pop(key, None)
    if old is None:
        return
    for name, func in INDEXERS.items():
        index = indices[name]
        for value in func(old):
            keys = index[value]
            keys.discard(key)
            if not keys:
                del index[value]


def _write_op(size: int, role: str, op: str) -> Callable[[], None]:
    if role == "impl":
        store = indexer(size)
        put: Callable[[Any], None] = store.update
        delete: Callable[[Any], None] = store.delete
    else:
        items, indices = floor(size)
        put = functools.partial(floor_put, items, indices)
        delete = functools.partial(floor_delete, items, indices)
    if op == "update":
        next_version = itertools.cycle(_versions(size)).__next__
        return lambda: put(next_version())
    next_fresh = itertools.cycle(_fresh(size)).__next__

    def add_then_delete() -> None:
        obj = next_fresh()
        put(obj)
        delete(obj)

    return add_then_delete


@pytest.mark.parametrize("role", ["impl", "floor"])
@pytest.mark.parametrize("op", ["update", "add+delete"])
@pytest.mark.parametrize("size", WRITE_SIZES)
def test_write(benchmark: Any, ratios: Any, size: int, op: str, role: str) -> None:
    case = f"{op} n={size}"
    benchmark.group = case
    run = _write_op(size, role, op)
    benchmark(run)
    ratios.record(case, role, benchmark)
    if role == "impl":
        store = indexer(size)
        assert len(store) == size
        assert len(store.list_index_func_values("app")) > 0


def test_register_scaling_comparisons(ratios: Any) -> None:
    """Not a benchmark: asks the summary for the 100k-vs-1k write ratios."""
    for op in ("update", "add+delete"):
        ratios.compare(f"{op} n=100000 / n=1000", f"{op} n=100000", f"{op} n=1000", target=1.5)


# ------------------------------------------------------- interleaved figures


def interleaved(
    cases: dict[str, Callable[[], Any]], rounds: int, batch_seconds: float = 0.005
) -> dict[str, tuple[float, float]]:
    """Seconds per call of every case, (best, median) over ``rounds`` rounds.
    Each round times every case once, one after the other (starting from a
    different case each round), so load on the machine hits all of them
    alike; a case's batch is as many calls as take about ``batch_seconds``.
    Time is this thread's CPU time (``time.thread_time``): on a shared
    machine the time spent waiting for a core is left out."""
    numbers: dict[str, int] = {}
    for name, func in cases.items():
        start = time.perf_counter()
        func()
        once = max(time.perf_counter() - start, 1e-7)
        numbers[name] = max(1, int(batch_seconds / once))
    samples: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    gc.collect()
    gc.disable()
    try:
        for r in range(rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                func, number = cases[name], numbers[name]
                start = time.thread_time()
                for _ in range(number):
                    func()
                samples[name].append((time.thread_time() - start) / number)
    finally:
        gc.enable()
    return {name: (min(s), statistics.median(s)) for name, s in samples.items()}


def _lister_cases(size: int) -> dict[str, dict[str, Callable[[], Any]]]:
    store = indexer(size)
    lister = Lister(store)
    objects = store.list()
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    for selector in SELECTORS:
        out[f"list({selector!r}) n={size}"] = {
            "after": functools.partial(lister.list, selector),
            "before": functools.partial(old_list, store, selector),
            "floor": _floor_scan(objects, selector),
        }
    return out


def _by_index_cases(size: int) -> dict[str, dict[str, Callable[[], Any]]]:
    store = indexer(size)
    items, indices = floor(size)
    index = indices[NAMESPACE_INDEX]
    lock = threading.Lock()
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    for namespace, matches in MATCHES.items():
        if namespace not in index:  # a small store has no room for it
            continue

        def locked(namespace: str = namespace) -> list[Any]:
            with lock:
                return [items[key] for key in index[namespace]]

        def bare(namespace: str = namespace) -> list[Any]:
            return [items[key] for key in index[namespace]]

        out[f"by_index n={size} matches={matches}"] = {
            "ours": functools.partial(store.by_index, NAMESPACE_INDEX, namespace),
            "locked floor": locked,
            "bare floor": bare,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.bench_store [--sizes 10000,100000] [--rounds N]``:
    the lookup figures of the Performance guide, every case interleaved with
    its floors (see :func:`interleaved`); ratios of best times, medians in
    brackets."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    for size in (int(s) for s in args.sizes.split(",")):
        pods(size)
        groups = {**_by_index_cases(size), **_lister_cases(size)}
        for case, contenders in groups.items():
            figures = interleaved(contenders, args.rounds)
            reference = "locked floor" if "locked floor" in figures else "floor"
            ref_best, ref_median = figures[reference]
            print(case, flush=True)
            for name, (best, median) in figures.items():
                print(
                    f"  {name:<13} {best * 1e6:12.2f} us  ({median * 1e6:12.2f})"
                    f"  {best / ref_best:6.2f}x {reference} ({median / ref_median:.2f}x)"
                    + (
                        f"  {best / figures['bare floor'][0]:5.2f}x bare floor"
                        f" ({median / figures['bare floor'][1]:.2f}x)"
                        if name == "ours"
                        else ""
                    ),
                    flush=True,
                )


def test_interleaved_smoke() -> None:
    """Not a benchmark: the interleaved runner runs and every case answers."""
    figures = interleaved({"a": lambda: None, "b": list}, rounds=2, batch_seconds=1e-4)
    assert set(figures) == {"a", "b"}
    for groups in (_by_index_cases(1_000), _lister_cases(1_000)):
        for contenders in groups.values():
            results = [sorted(map(id, func())) for func in contenders.values()]
            assert all(r == results[0] for r in results)  # the floors' sets have no order


if __name__ == "__main__":
    main()
