"""The ``kube-informers`` command line.

``kube-informers demo`` shows the machinery at work on generated objects.
Later subcommands (``serve``, ``watch``, ``mirror``) are added by their
features.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kube-informers", description="Thread-based Kubernetes informers for Python."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the machinery on generated objects and show it")
    demo.add_argument("--objects", type=int, default=200, help="how many objects to generate")
    demo.add_argument("--seed", type=int, default=0, help="random seed for the churn")
    return parser


def _demo(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from informers._demo import run_store_demo

    console = Console()
    console.print(
        f"[bold]kube-informers demo[/]: {args.objects} generated pods through the delta "
        f"queue into an indexed store (seed {args.seed})"
    )
    report = run_store_demo(args.objects, args.seed)
    deltas = Table(title="deltas by type")
    deltas.add_column("type")
    deltas.add_column("count", justify="right")
    for kind, count in sorted(report.deltas.items()):
        deltas.add_row(kind, str(count))
    console.print(deltas)
    nodes = Table(title="pods by node")
    nodes.add_column("node")
    nodes.add_column("pods", justify="right")
    for node, count in report.by_node.items():
        nodes.add_row(node, str(count))
    console.print(nodes)
    console.print(
        f"synced after the first entry ({report.synced_after} popped); "
        f"{report.tombstones} tombstones from the last relist; {report.cached} pods cached; "
        f"namespaces: {report.by_namespace}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kube-informers`` command; returns the exit code."""
    args = _build_parser().parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
