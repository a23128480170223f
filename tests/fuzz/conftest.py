"""Hostile-input fuzzing: every target counts the inputs it tried, and the
session ends with one line per target (the Reliability guide quotes them).

Each target is a hypothesis test whose body calls ``tried(name)`` once per
example."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

_TRIED: Counter[str] = Counter()


@pytest.fixture(scope="session")
def tried() -> Callable[[str], None]:
    """``tried(target)`` counts one input tried against ``target``."""

    def count(target: str) -> None:
        _TRIED[target] += 1

    return count


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TRIED:
        return
    terminalreporter.section("hostile inputs tried")
    for target, count in sorted(_TRIED.items()):
        terminalreporter.write_line(f"{target}: {count} inputs")
    terminalreporter.write_line(f"total: {sum(_TRIED.values())} inputs")
