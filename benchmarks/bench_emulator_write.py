"""The cost of a write in the emulator now that it validates and records
``managedFields``, against the same write without them, measured side by
side in one run.

A write is a create and then an update (a PUT changing one env value) of a
realistic Deployment (~100 fields: labels, annotations, a container with
ports, env and resources), deleted again so each round starts alike. Three
variants, interleaved in short batches on one storage (or one server):

- ``bare``: validation off (``validation``), no field manager
  (``field_management`` off over HTTP) -- the emulator before issue 32;
- ``managed``: validation off, managedFields recorded;
- ``now``: validation (and conversion) on, managedFields recorded.

Reported: ``now`` as a ratio to ``bare`` (target: within 1.5x) and to
``managed``, at the storage (no HTTP) and over HTTP. At the storage, two
floors measured in the same run bound what any managedFields can cost:
``copy`` (one ``copy.deepcopy`` of the object, one walk over it) and
``paths`` (computing the create's and the update's changed-path sets).

Figures (2026-12-05, 2-core machine, load under 1; before = the code at
051e4ad with this benchmark): storage ``now`` 325--345 us against ``bare`` 85--87 us,
3.7--4.0x (before 7.3x); ``paths`` alone 2.05x, ``copy`` 1.7x, so 1.5x is out of
reach there. Over HTTP 1.43--1.60x depending on the round trip (before
1.63--1.88x).

    PYTHONPATH=.:benchmarks python -m benchmarks.bench_emulator_write [--rounds 5] [--writes 200]
    python -m pytest benchmarks/bench_emulator_write.py --benchmark-enable
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
import urllib3
from bench_apply import deployment

from informers.testing import ApiServer
from informers.testing.apiserver._apply import target_for
from informers.testing.apiserver._apply.merge import compare
from informers.testing.apiserver._storage import Storage
from informers.wire.resources import DEPLOYMENTS

TARGET = 1.5
PATH = "/apis/apps/v1/namespaces/default/deployments"


def changed(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its second env value changed (copied along that path
    only: stored objects are never mutated, so the rest is shared)."""
    spec = obj["spec"]
    template = spec["template"]
    container = template["spec"]["containers"][0]
    env = list(container["env"])
    env[1] = {**env[1], "value": "changed"}
    containers = [{**container, "env": env}, *template["spec"]["containers"][1:]]
    pod_spec = {**template["spec"], "containers": containers}
    return {**obj, "spec": {**spec, "template": {**template, "spec": pod_spec}}}


class StorageWriter:
    """Creates, updates and deletes the Deployment straight on a storage."""

    def __init__(self) -> None:
        self.storage = Storage()
        self.count = 0

    def write(self, *, validation: bool, manager: str | None) -> None:
        storage = self.storage
        storage.validation = validation
        self.count += 1
        body = deployment(self.count)
        made = storage.create(DEPLOYMENTS, body, "default", manager=manager)
        storage.update(DEPLOYMENTS, changed(made.obj), "default", "web", manager=manager)
        storage.delete(DEPLOYMENTS, "web", "default")


class HttpWriter:
    """The same write through the HTTP path (POST, PUT, DELETE)."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.http = urllib3.PoolManager(maxsize=1)
        self.count = 0

    def write(self, *, validation: bool, managed: bool = True) -> None:
        self.server.validation = validation
        self.server.field_management = managed
        self.count += 1
        url = self.server.url + PATH
        headers = {"Content-Type": "application/json"}
        body = json.dumps(deployment(self.count)).encode()
        made = self.http.request("POST", url, body=body, headers=headers)
        assert made.status == 201, made.data
        changed = json.loads(made.data)
        changed["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = "changed"
        put = self.http.request(
            "PUT", url + "/web", body=json.dumps(changed).encode(), headers=headers
        )
        assert put.status == 200, put.data
        gone = self.http.request("DELETE", url + "/web")
        assert gone.status == 200, gone.data

    def close(self) -> None:
        self.http.clear()


def _time(call: Callable[[], None], writes: int) -> float:
    start = time.perf_counter()
    for _ in range(writes):
        call()
    return (time.perf_counter() - start) / writes


class Floors:
    """What any write that records managedFields must at least do more than
    a bare one, in Python, on the same object: ``copy`` walks it once
    (``copy.deepcopy`` of the stored object), ``paths`` computes the changed
    paths of the create (every field) and of the update (one env value)
    with :func:`~informers.testing.apiserver._apply.merge.compare`."""

    def __init__(self) -> None:
        storage = Storage()
        storage.validation = False
        made = storage.create(DEPLOYMENTS, deployment(0), "default", manager=None).obj
        self.obj = made
        self.new = changed(made)
        self.empty = {"metadata": {}, "spec": {}, "status": {}}
        self.schema = target_for(
            "apps", "v1", "Deployment", builtin=True, status_subresource=True
        ).schema

    def copy(self) -> None:
        copy.deepcopy(self.obj)

    def paths(self) -> None:
        compare(self.empty, self.obj, self.schema)
        compare(self.obj, self.new, self.schema)


def measure_storage(rounds: int, writes: int) -> dict[str, float]:
    """Median seconds per write of each variant, and of the floors, at the
    storage."""
    writer = StorageWriter()
    floors = Floors()
    variants: dict[str, Callable[[], None]] = {
        "bare": lambda: writer.write(validation=False, manager=None),
        "managed": lambda: writer.write(validation=False, manager="bench"),
        "now": lambda: writer.write(validation=True, manager="bench"),
        "copy": floors.copy,
        "paths": floors.paths,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    for call in variants.values():
        _time(call, writes // 4)  # warm up
    # Short batches, many times over: the machine is shared, so a slow
    # spell hits every variant alike and the medians stay comparable.
    batch = max(1, writes // 10)
    for _ in range(rounds * 10):
        for name, call in variants.items():
            times[name].append(_time(call, batch))
    return {name: statistics.median(found) for name, found in times.items()}


def measure_http(rounds: int, writes: int) -> dict[str, float]:
    """Median seconds per write over HTTP: without validation and
    managedFields, with managedFields only, and with both."""
    times: dict[str, list[float]] = {"bare": [], "managed": [], "now": []}
    with ApiServer() as server:
        writer = HttpWriter(server)
        variants: dict[str, Callable[[], None]] = {
            "bare": lambda: writer.write(validation=False, managed=False),
            "managed": lambda: writer.write(validation=False),
            "now": lambda: writer.write(validation=True),
        }
        try:
            for call in variants.values():
                _time(call, max(1, writes // 8))  # warm up
            batch = max(1, writes // 10)
            for _ in range(rounds * 10):
                for name, call in variants.items():
                    times[name].append(_time(call, batch))
        finally:
            writer.close()
    return {name: statistics.median(found) for name, found in times.items()}


@pytest.fixture
def storage_writer() -> StorageWriter:
    return StorageWriter()


def test_write_now(benchmark: Any, ratios: Any, storage_writer: StorageWriter) -> None:
    benchmark.pedantic(
        lambda: storage_writer.write(validation=True, manager="bench"),
        rounds=200,
        iterations=1,
        warmup_rounds=10,
    )
    ratios.record("emulator write (validation + managedFields) vs bare", "impl", benchmark, TARGET)
    ratios.record("emulator write with validation vs without", "impl", benchmark, TARGET)


def test_write_managed(benchmark: Any, ratios: Any, storage_writer: StorageWriter) -> None:
    benchmark.pedantic(
        lambda: storage_writer.write(validation=False, manager="bench"),
        rounds=200,
        iterations=1,
        warmup_rounds=10,
    )
    ratios.record("emulator write with validation vs without", "floor", benchmark)


def test_write_bare(benchmark: Any, ratios: Any, storage_writer: StorageWriter) -> None:
    benchmark.pedantic(
        lambda: storage_writer.write(validation=False, manager=None),
        rounds=200,
        iterations=1,
        warmup_rounds=10,
    )
    ratios.record("emulator write (validation + managedFields) vs bare", "floor", benchmark)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    found = measure_storage(args.rounds, args.writes)
    print("storage, per create+update+delete:")
    for name, seconds in found.items():
        print(f"  {name:8s} {seconds * 1e6:9.1f} us")
    bare = found["bare"]
    ratio = found["now"] / bare
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"  now/bare    {ratio:5.2f}x  (target <= {TARGET:.1f}x: {verdict})")
    print(f"  now/managed {found['now'] / found['managed']:5.2f}x  (validation's share)")
    print(
        f"  floor: (bare+paths)/bare {(bare + found['paths']) / bare:5.2f}x, "
        f"(bare+copy)/bare {(bare + found['copy']) / bare:5.2f}x; "
        f"now-bare = {(found['now'] - bare) / found['copy']:4.1f} copies"
    )
    over_http = measure_http(args.rounds, args.writes // 2)
    print("HTTP, per POST+PUT+DELETE:")
    for name, seconds in over_http.items():
        print(f"  {name:8s} {seconds * 1e6:9.1f} us")
    ratio = over_http["now"] / over_http["bare"]
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"  now/bare    {ratio:5.2f}x  (target <= {TARGET:.1f}x: {verdict})")
    print(f"  now/managed {over_http['now'] / over_http['managed']:5.2f}x  (validation's share)")


if __name__ == "__main__":
    main()
