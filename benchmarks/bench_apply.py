"""Server-side apply against an ordinary update, in the emulator, over HTTP.

One Deployment of about 100 fields (labels, annotations, a container with
env vars and ports) is written alternately by a server-side apply PATCH
(``application/apply-patch+yaml``, JSON body, ``force=true`` as controllers
apply: the update in between owns the value it changed) and by a PUT of the same object
with one value changed, both through the real HTTP path with urllib3. Every
write changes one env value, so each is a real write (a new
resourceVersion, managedFields recorded). The cost of an apply is reported
as a ratio to the update's cost measured in the same run (target: within
2x).

    python -m pytest benchmarks/bench_apply.py --benchmark-enable
    PYTHONPATH=. python -m benchmarks.bench_apply [--rounds 5] [--writes 200]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import urllib3

from informers.testing import ApiServer
from informers.testing.apiserver._apply import target_for
from informers.testing.apiserver._apply.merge import field_set

PATH = "/apis/apps/v1/namespaces/default/deployments/web"
TARGET = 2.0


def deployment(version: int) -> dict[str, Any]:
    """The benchmark's Deployment; ``version`` changes one env value."""
    env = [{"name": f"SETTING_{n}", "value": f"value-{n}"} for n in range(30)]
    env[0]["value"] = f"v{version}"
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {f"label-{n}": f"v{n}" for n in range(10)},
            "annotations": {f"example.com/note-{n}": f"text {n}" for n in range(10)},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "frontend"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "registry.example.com/team/app:1.24.3",
                            "args": ["--port=8080"],
                            "ports": [
                                {"containerPort": 8080, "name": "http"},
                                {"containerPort": 9090, "name": "metrics"},
                            ],
                            "env": env,
                            "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}},
                        }
                    ]
                },
            },
        },
    }


def field_count() -> int:
    schema = target_for("apps", "v1", "Deployment", builtin=True, status_subresource=True).schema
    fields = field_set(deployment(0), schema)
    return sum(1 for path in fields.paths() if not _has_children(fields, path))


def _has_children(fields: Any, path: tuple[Any, ...]) -> bool:
    node = fields
    for element in path[:-1]:
        node = node.children[element]
    return path[-1] in node.children


class Writer:
    """Writes the Deployment by apply or by update, each with a new value."""

    def __init__(self, server: ApiServer) -> None:
        self.url = server.url + PATH
        self.http = urllib3.PoolManager(maxsize=1)
        self.version = 0
        status = self._apply()
        assert status == 201, status
        response = self.http.request("GET", self.url)
        self.current = json.loads(response.data)

    def _apply(self) -> int:
        self.version += 1
        body = json.dumps(deployment(self.version)).encode()
        response = self.http.request(
            "PATCH",
            self.url + "?fieldManager=bench&force=true",
            body=body,
            headers={"Content-Type": "application/apply-patch+yaml"},
        )
        return int(response.status)

    def apply(self) -> None:
        status = self._apply()
        assert status == 200, status

    def update(self) -> None:
        self.version += 1
        obj = copy.deepcopy(self.current)
        obj["metadata"].pop("resourceVersion", None)
        env = obj["spec"]["template"]["spec"]["containers"][0]["env"]
        env[0]["value"] = f"v{self.version}"
        response = self.http.request(
            "PUT",
            self.url + "?fieldManager=bench-update",
            body=json.dumps(obj).encode(),
            headers={"Content-Type": "application/json"},
        )
        assert response.status == 200, response.status

    def close(self) -> None:
        self.http.clear()


def _time(call: Callable[[], None], writes: int) -> float:
    start = time.perf_counter()
    for _ in range(writes):
        call()
    return (time.perf_counter() - start) / writes


def measure(rounds: int, writes: int) -> tuple[float, float]:
    """Median seconds per apply and per update, interleaved round by round."""
    applies: list[float] = []
    updates: list[float] = []
    with ApiServer() as server:
        writer = Writer(server)
        try:
            _time(writer.apply, writes // 4)  # warm up both paths
            _time(writer.update, writes // 4)
            for _ in range(rounds):
                applies.append(_time(writer.apply, writes))
                updates.append(_time(writer.update, writes))
        finally:
            writer.close()
    return statistics.median(applies), statistics.median(updates)


@pytest.fixture
def writer() -> Iterator[Writer]:
    with ApiServer() as server:
        made = Writer(server)
        yield made
        made.close()


def test_apply_100_fields(benchmark: Any, ratios: Any, writer: Writer) -> None:
    benchmark.pedantic(writer.apply, rounds=200, iterations=1, warmup_rounds=10)
    ratios.record(f"apply of {field_count()} fields vs update", "impl", benchmark, TARGET)


def test_update_100_fields(benchmark: Any, ratios: Any, writer: Writer) -> None:
    benchmark.pedantic(writer.update, rounds=200, iterations=1, warmup_rounds=10)
    ratios.record(f"apply of {field_count()} fields vs update", "floor", benchmark)


def storage_writes(rounds: int, writes: int) -> tuple[float, float]:
    """Median seconds per storage-level update of the Deployment (no HTTP),
    recording managedFields and not (``manager=None``), interleaved: the
    cost field management adds to every write."""
    from informers.testing.apiserver._storage import Storage
    from informers.wire.resources import DEPLOYMENTS

    storage = Storage()
    stored = storage.create(DEPLOYMENTS, deployment(0), "default", manager="bench")
    first = copy.deepcopy(stored.obj)
    del first["metadata"]["resourceVersion"]
    template = json.dumps(first).replace('"value": "v0"', '"value": "@@"')
    count = 0

    def write(manager: str | None) -> None:
        nonlocal count
        count += 1
        body = json.loads(template.replace("@@", f"w{count}"))
        body["metadata"]["managedFields"] = (
            storage.get(DEPLOYMENTS, "web", "default").obj["metadata"].get("managedFields")
        )
        storage.update(DEPLOYMENTS, body, "default", "web", manager=manager)

    tracked: list[float] = []
    plain: list[float] = []
    for _ in range(rounds):
        tracked.append(_time(lambda: write("bench"), writes))
        plain.append(_time(lambda: write(None), writes))
    return statistics.median(tracked), statistics.median(plain)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    apply_s, update_s = measure(args.rounds, args.writes)
    ratio = apply_s / update_s
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"object: {field_count()} fields")
    print(f"apply  {apply_s * 1e6:9.1f} us per write")
    print(f"update {update_s * 1e6:9.1f} us per write")
    print(f"ratio  {ratio:5.2f}x  (target <= {TARGET:.1f}x: {verdict})")
    tracked_s, plain_s = storage_writes(args.rounds, args.writes)
    print(
        f"storage update with managedFields {tracked_s * 1e6:7.1f} us, without "
        f"{plain_s * 1e6:7.1f} us: {tracked_s / plain_s:4.2f}x (the field manager's share)"
    )


if __name__ == "__main__":
    main()
