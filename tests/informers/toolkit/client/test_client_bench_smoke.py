"""A smoke run of benchmarks/bench_client.py at a tiny size: it runs and
prints its table with every case. No timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks import bench_client


def test_bench_client_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_client.run(rounds=1, gets=200, writes=3)
    bench_client.report(result)
    out = capsys.readouterr().out
    assert "cached get vs lister read" in out
    for verb in bench_client.VERBS:
        assert f"live {verb} vs CoreV1Api" in out
    assert result["gets"]["ratio"] > 0
