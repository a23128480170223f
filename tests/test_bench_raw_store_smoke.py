"""The decode-on-demand benchmark runs end to end at a tiny size."""

from __future__ import annotations

import pytest

from benchmarks import bench_raw_store


def test_bench_raw_store_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench_raw_store.main(["--n", "200", "--events", "100", "--only", "parse,raw"])
    assert set(rows) == {"parse", "raw"}
    for row in rows.values():
        assert row["sync_s"] > 0
        assert row["events_per_s"] > 0
    assert rows["raw"]["cold_get_nohot_us"] > 0
    assert "x parse" in capsys.readouterr().out
