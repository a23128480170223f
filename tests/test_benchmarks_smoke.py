"""A smoke run of the peer comparison (``python -m benchmarks.compare``): it
exits 0, prints the table and writes a plot per scaling curve. No timing is
asserted; a peer that is not installed is reported so and the run still
passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(320)
def test_compare_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.compare",
            "--size",
            "smoke",
            "--out",
            str(out),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "section  contender" in result.stdout
    for section in ("sync", "events", "latency", "lookups", "memory"):
        png = out / f"{section}.png"
        assert png.is_file(), section
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = json.loads((out / "compare.json").read_text())["rows"]
    contenders = {row["contender"] for row in rows}
    assert "kube-informers" in contenders
    assert "official SharedInformer" in contenders
    # the events floors, ours measured against each
    for floor in (
        "floor: parse + keep in dict",
        "floor: exact parse + keep in dict",
        "floor: parse + keep, 2 thread hand-offs",
        "floor: the informer contract, 3 threads",
    ):
        assert floor in contenders, floor
    # every peer has a row, measured or with the reason it was not
    for peer in ("lightkube", "kr8s", "official list+Watch"):
        assert any(c.startswith(peer) for c in contenders), peer
    for row in rows:
        assert any(v is not None for v in row["values"].values()) or row["note"], row


def test_compare_rejects_unknown_section() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.compare", "--only", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2
    assert "unknown sections" in result.stderr


def test_events_pipeline_benchmark_smoke_run(capsys: pytest.CaptureFixture[str]) -> None:
    # python -m benchmarks.bench_events at a tiny size: every contender runs
    # and is reported (no timing is asserted).
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import bench_events
    finally:
        sys.path.remove(str(ROOT))
    assert bench_events.main(["--events", "200", "--rounds", "2", "--gc", "both"]) == 0
    out = capsys.readouterr().out
    for name in bench_events.CONTENDERS:
        assert out.count(name) == 2, name
        rows = [line for line in out.splitlines() if line.startswith(name)]
        assert all("/event  " in line for line in rows), rows  # the switches column
