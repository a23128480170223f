"""Benchmark harness: collects ``bench_*.py`` files, and prints the ratios of
each measured implementation to its floor at the end of the run.

Run with ``python -m pytest benchmarks --benchmark-enable`` (the benchmarks
are not part of the default test paths). A benchmark records its result with
the ``ratios`` fixture: ``ratios.record(case, role, benchmark)``, where
``role`` is ``"impl"`` or ``"floor"``; the terminal summary prints
impl/floor for every case that has both, and any extra comparisons a module
registers with ``ratios.compare``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


@dataclass
class Ratios:
    """Medians and minimums (seconds) by case and role."""

    results: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    #: (label, case_a, case_b, target): ratio of case_a's impl to case_b's impl.
    comparisons: list[tuple[str, str, str, float]] = field(default_factory=list)
    targets: dict[str, float] = field(default_factory=dict)

    def record(self, case: str, role: str, benchmark: Any, target: float | None = None) -> None:
        stats = getattr(getattr(benchmark, "stats", None), "stats", None)
        if stats is None:  # --benchmark-disable: the function ran once, untimed
            return
        self.results.setdefault(case, {})[role] = (stats.median, stats.min)
        if target is not None:
            self.targets[case] = target

    def compare(self, label: str, case_a: str, case_b: str, target: float) -> None:
        self.comparisons.append((label, case_a, case_b, target))

    def lines(self) -> list[str]:
        out = []
        for case, roles in self.results.items():
            if "impl" in roles and "floor" in roles:
                (impl_med, impl_min), (floor_med, floor_min) = roles["impl"], roles["floor"]
                target = self.targets.get(case)
                verdict = ""
                if target is not None:
                    verdict = f"  target <= {target:.1f}x: "
                    verdict += "met" if impl_med / floor_med <= target else "MISSED"
                out.append(
                    f"{case:<36} impl {impl_med * 1e6:10.2f} us  floor {floor_med * 1e6:10.2f} us"
                    f"  ratio {impl_med / floor_med:5.2f}x (min/min {impl_min / floor_min:5.2f}x)"
                    f"{verdict}"
                )
        for label, case_a, case_b, target in self.comparisons:
            a, b = self.results.get(case_a, {}), self.results.get(case_b, {})
            if "impl" in a and "impl" in b:
                ratio = a["impl"][0] / b["impl"][0]
                ratio_min = a["impl"][1] / b["impl"][1]
                met = "met" if ratio <= target else "MISSED"
                out.append(
                    f"{label:<36} ratio {ratio:5.2f}x (min/min {ratio_min:5.2f}x)"
                    f"  target <= {target:.1f}x: {met}"
                )
        return out


_RATIOS = Ratios()


@pytest.fixture(scope="session")
def ratios() -> Ratios:
    return _RATIOS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = _RATIOS.lines()
    if lines:
        terminalreporter.section("ratios to the floor (medians)")
        for line in lines:
            terminalreporter.write_line(line)
