from __future__ import annotations

import pytest

from informers._demo import run_demo
from informers.cli import main


def test_demo_converges_through_churn_410_and_429() -> None:
    messages: list[str] = []
    report = run_demo(pods=60, writes=80, seed=3, progress=messages.append)
    assert [phase.name for phase in report.phases] == [
        "churn",
        "missed deletes (410 relist)",
        "throttled (429 Retry-After)",
    ]
    assert all(phase.cache_matches_server for phase in report.phases)
    assert report.events["added (initial list)"] == 60
    assert report.events["deleted (tombstone)"] >= 1  # the deletes the watch missed
    assert report.watch_errors["ExpiredError"] >= 1
    assert report.watch_errors["TooManyRequestsError"] >= 1
    assert sum(report.by_node.values()) == report.phases[-1].cached
    assert any("synced 60 pods" in message for message in messages)


def test_demo_command_prints_phases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--pods", "30", "--writes", "40", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "phases" in out
    assert "tombstone" in out
