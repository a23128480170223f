"""The plan of the house, checked: the layer contracts of ``pyproject.toml``
(import-linter), no import cycle among the modules of ``informers`` and
``tracker``, and a facade that imports only the library's own layers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def _graph() -> grimp.ImportGraph:
    # Imports under ``if TYPE_CHECKING:`` never run: they annotate, they do
    # not order module initialisation, so they cannot make a cycle.
    return grimp.build_graph("informers", "tracker", exclude_type_checking_imports=True)


def strongly_connected_components(edges: dict[str, set[str]]) -> list[set[str]]:
    """The components of more than one module (or one that imports itself),
    by Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(component)
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert sorted(map(sorted, strongly_connected_components(edges))) == [
        ["a", "b", "c"],
        ["e"],
    ]


def test_no_import_cycle() -> None:
    graph = _graph()
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert strongly_connected_components(edges) == []


def test_the_facade_imports_no_tracker_testing_or_cli() -> None:
    graph = _graph()
    imported = graph.find_modules_directly_imported_by("informers")
    assert not {
        m for m in imported if m.startswith(("tracker", "informers.testing", "informers.cli"))
    }


def test_the_layer_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    command = [str(lint)] if lint.exists() else ["lint-imports"]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
