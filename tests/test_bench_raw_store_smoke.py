"""The decode-on-demand benchmark runs end to end at a tiny size."""

from __future__ import annotations

import pytest

from benchmarks import bench_raw_store


def test_bench_raw_store_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench_raw_store.main(["--n", "200", "--events", "100", "--only", "parse,raw,raw-z"])
    assert set(rows) == {"parse", "raw", "raw-z"}
    for row in rows.values():
        assert row["sync_s"] > 0
        assert row["events_per_s"] > 0
    assert rows["raw"]["cold_get_nohot_us"] > 0
    assert rows["raw-z"]["compress_us"] > 0
    out = capsys.readouterr().out
    assert "x parse" in out
    assert "compression alone" in out
