"""The cost the schema pass (field validation against the client's models)
adds to a write, in the emulator.

The pass is what a POST or PUT of a built-in kind now does beyond plain
``json.loads``: parsing with duplicate-key detection and walking the body
against the kind's type (unknown fields, type mismatches). Measured
in-process on the ~100-field Deployment of ``bench_apply`` (``Warn``, no
unknown fields: the common write), interleaved with its floor, the plain
``json.loads`` of the same body that every write did before; and, for
scale, a whole PUT of that Deployment through the HTTP path (which includes
the pass). Reported: microseconds the pass adds per write, and that as a
share of a whole write.

    PYTHONPATH=. python -m benchmarks.bench_schema [--rounds 5] [--writes 2000]
    python -m pytest benchmarks/bench_schema.py --benchmark-enable
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.bench_apply import Writer, deployment
from informers.testing import ApiServer
from informers.testing.apiserver._schema.fieldcheck import WARN, check_object, decode_json
from informers.testing.apiserver._schema.kinds import kind_type
from informers.wire.resources import DEPLOYMENTS

BODY = json.dumps(deployment(1)).encode()


def schema_pass() -> None:
    obj, duplicates = decode_json(BODY)
    check_object(DEPLOYMENTS, kind_type(DEPLOYMENTS), obj, WARN, duplicates)


def plain_decode() -> None:
    json.loads(BODY)


def _time(call: Callable[[], None], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - start) / n


def measure(rounds: int, writes: int) -> dict[str, float]:
    """Medians (seconds per call) of the pass, its floor and a whole PUT."""
    passes: list[float] = []
    floors: list[float] = []
    puts: list[float] = []
    schema_pass()  # builds and caches the Deployment's types
    with ApiServer() as server:
        writer = Writer(server)
        try:
            _time(writer.update, max(1, writes // 20))
            for _ in range(rounds):
                passes.append(_time(schema_pass, writes))
                floors.append(_time(plain_decode, writes))
                puts.append(_time(writer.update, max(1, writes // 10)))
        finally:
            writer.close()
    return {
        "pass": statistics.median(passes),
        "floor": statistics.median(floors),
        "put": statistics.median(puts),
    }


def report(figures: dict[str, float]) -> str:
    added = figures["pass"] - figures["floor"]
    return (
        f"schema pass {figures['pass'] * 1e6:.1f} us vs json.loads {figures['floor'] * 1e6:.1f} us"
        f" ({figures['pass'] / figures['floor']:.2f}x): +{added * 1e6:.1f} us per write,"
        f" {added / figures['put']:.1%} of a whole PUT ({figures['put'] * 1e6:.0f} us)"
    )


def test_schema_pass(benchmark: Any, ratios: Any) -> None:
    schema_pass()
    benchmark.pedantic(schema_pass, rounds=200, iterations=10, warmup_rounds=5)
    ratios.record("schema pass vs json.loads", "impl", benchmark)


def test_schema_pass_floor(benchmark: Any, ratios: Any) -> None:
    benchmark.pedantic(plain_decode, rounds=200, iterations=10, warmup_rounds=5)
    ratios.record("schema pass vs json.loads", "floor", benchmark)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=2000)
    args = parser.parse_args()
    print(report(measure(args.rounds, args.writes)))


if __name__ == "__main__":
    main()
