from __future__ import annotations

import pytest

from informers._demo import run_store_demo
from informers.cli import main


def test_store_demo_cache_matches_producer_and_counts_tombstones() -> None:
    report = run_store_demo(200, seed=3)
    assert report.synced_after == 1
    assert report.tombstones > 0
    assert sum(report.by_node.values()) == report.cached
    assert sum(report.by_namespace.values()) == report.cached
    assert report.deltas["Replaced"] >= report.cached


def test_demo_command_prints_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--objects", "50", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "deltas by type" in out
    assert "Replaced" in out
    assert "tombstones" in out
