"""The static checks are part of the test suite: mypy --strict on both
packages, ruff on the whole tree, and the Sphinx docs built with warnings as
errors. Each runs the real tool in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_mypy_strict_on_both_packages() -> None:
    result = _run("mypy", "--strict", "informers", "tracker")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_check_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_clean() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_docs_build_with_warnings_as_errors(tmp_path: Path) -> None:
    result = _run("sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
