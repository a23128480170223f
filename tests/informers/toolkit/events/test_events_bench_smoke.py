"""A smoke run of benchmarks/bench_events_recorder.py at a tiny size: it
runs, prints its table, and the buffer stayed bounded. No timing is
asserted."""

from __future__ import annotations

import pytest

from benchmarks import bench_events_recorder


def test_bench_events_recorder_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    result = bench_events_recorder.run(calls=3000, objects=1200, rounds=3)
    bench_events_recorder.report(result)
    out = capsys.readouterr().out
    assert "event()" in out
    assert "event() CPU time" in out
    assert "floor: deque.append" in out
    assert "target p99 <= 50 us" in out
    ours = result["event()"]
    assert ours["rounds"] == 3
    for row in result.values():
        assert row["p50"] <= row["p99"] <= row["max"]
        assert 0 < row["p99 rounds"] <= row["max"]
    assert ours["pending"] <= 1000 + 1
    assert ours["dropped"] > 0  # 1200 objects overflow the 1000-entry buffer
