"""A smoke run of benchmarks/bench_client.py at a tiny size: it runs and
prints its table with every case. No timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks import bench_client


def test_bench_client_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_client.run(rounds=1, gets=200, writes=3, get_rounds=2)
    bench_client.report(result)
    out = capsys.readouterr().out
    for peer in bench_client.GET_PEERS:
        assert f"cached get vs {peer}" in out
    assert f"signature floor vs {bench_client.LISTER}" in out
    for verb in bench_client.VERBS:
        assert f"live {verb} vs CoreV1Api" in out
    gets = result["gets"]
    assert gets["ratio"] == gets["ratios"][bench_client.LISTER] > 0
    assert gets["floor_ratio"] > 0
    assert set(gets["seconds"]) == {bench_client.OURS, *bench_client.GET_PEERS}
