"""Custom resource writes with a structural schema against the same writes
without one, in the emulator's storage (no HTTP: the schema's cost alone).

One custom resource of about 100 fields (a spec of 40 typed scalars with
bounds, enums and patterns, a list of 10 items of 5 fields, defaults to fill
and an unknown field to prune) is updated repeatedly, once as a kind whose
CRD carries that ``openAPIV3Schema`` (defaulting, pruning and validation on
every write) and once as a kind registered without a schema. The cost is
reported as a ratio (schema / no schema) measured in the same run.

    python -m pytest benchmarks/bench_crd.py --benchmark-enable
    PYTHONPATH=. python -m benchmarks.bench_crd [--rounds 5] [--writes 300]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from informers.testing import ApiServer
from informers.wire.resources import Resource

CHECKED = Resource("bench.example.com", "v1", "checked", "Checked")
PLAIN = Resource("bench.example.com", "v1", "plains", "Plain")


def schema() -> dict[str, Any]:
    props: dict[str, Any] = {}
    for n in range(40):
        if n % 4 == 0:
            props[f"int{n}"] = {"type": "integer", "minimum": 0, "maximum": 1_000_000}
        elif n % 4 == 1:
            props[f"str{n}"] = {"type": "string", "maxLength": 64, "pattern": "^[a-z0-9-]+$"}
        elif n % 4 == 2:
            props[f"enum{n}"] = {"type": "string", "enum": ["a", "b", "c"], "default": "a"}
        else:
            props[f"flag{n}"] = {"type": "boolean", "default": False}
    item = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
            "weight": {"type": "number"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    props["items"] = {"type": "array", "maxItems": 20, "items": item}
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props}},
    }


def body(version: int) -> dict[str, Any]:
    spec: dict[str, Any] = {"unknown": "pruned"}
    for n in range(40):
        if n % 4 == 0:
            spec[f"int{n}"] = n + version
        elif n % 4 == 1:
            spec[f"str{n}"] = f"value-{n}"
        elif n % 4 == 3 and n % 8 == 3:
            spec[f"flag{n}"] = True
    spec["items"] = [
        {"name": f"i{n}", "port": 8000 + n, "weight": 0.5, "labels": {"k": "v"}} for n in range(10)
    ]
    return {"metadata": {"name": "obj", "namespace": "default"}, "spec": spec}


def make_server() -> ApiServer:
    server = ApiServer()
    server.start()
    server.create(
        "customresourcedefinitions",
        {
            "metadata": {"name": "checked.bench.example.com"},
            "spec": {
                "group": CHECKED.group,
                "names": {"plural": CHECKED.plural, "kind": CHECKED.kind},
                "scope": "Namespaced",
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {"openAPIV3Schema": schema()},
                    }
                ],
            },
        },
    )
    server.register_resource(PLAIN)
    return server


def writer(server: ApiServer, resource: Resource) -> Callable[[], None]:
    created = server.create(resource, body(0))
    state = {"n": 0, "rv": created["metadata"]["resourceVersion"]}

    def write() -> None:
        state["n"] += 1
        obj = copy.deepcopy(body(state["n"]))
        obj["metadata"]["resourceVersion"] = state["rv"]
        state["rv"] = server.update(resource, obj)["metadata"]["resourceVersion"]

    return write


@pytest.fixture(scope="module")
def server() -> Iterator[ApiServer]:
    srv = make_server()
    yield srv
    srv.stop()


@pytest.mark.parametrize(("role", "resource"), [("impl", CHECKED), ("floor", PLAIN)])
def test_crd_schema_write(
    benchmark: Any, ratios: Any, server: ApiServer, role: str, resource: Resource
) -> None:
    benchmark(writer(server, resource))
    ratios.record("crd-schema-write", role, benchmark)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    server = make_server()
    try:
        checked, plain = writer(server, CHECKED), writer(server, PLAIN)
        times: dict[str, list[float]] = {"schema": [], "none": []}
        for _ in range(args.rounds):
            for label, write in (("schema", checked), ("none", plain)):
                start = time.perf_counter()
                for _ in range(args.writes):
                    write()
                times[label].append((time.perf_counter() - start) / args.writes)
    finally:
        server.stop()
    with_schema, without = statistics.median(times["schema"]), statistics.median(times["none"])
    print(f"write with schema:    {with_schema * 1e6:8.1f} us")
    print(f"write without schema: {without * 1e6:8.1f} us")
    print(f"ratio: {with_schema / without:.2f}x")


if __name__ == "__main__":
    main()
