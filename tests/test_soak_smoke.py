"""The chaos soak's short setting is part of the test command: 60 seconds of
faults against the emulator with informers, trackers, a workqueue controller
and the SQL mirror, and nothing may be lost or delivered against the contract
(``benchmarks/soak.py``; the Reliability guide quotes a long run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_sixty_second_soak_loses_nothing(tmp_path: Path) -> None:
    report = tmp_path / "soak.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--seconds", "60", "--json", str(report)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(report.read_text())
    assert summary["lost"] == 0, summary["lost_detail"]
    assert summary["contract_violations"] == 0, summary["violation_detail"]
    assert summary["rounds"] >= 5
    assert len(summary["faults"]) >= 5  # several kinds of fault, each survived
    assert summary["threads_before_and_after"][0] == summary["threads_before_and_after"][1]
