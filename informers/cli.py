"""The ``kube-informers`` command line.

``kube-informers demo`` shows the machinery at work on generated objects.
``kube-informers serve`` runs the API server emulator standalone and writes a
kubeconfig for it, so kubectl and any controller can connect. Later
subcommands (``watch``, ``mirror``) are added by their features.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kube-informers", description="Thread-based Kubernetes informers for Python."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the machinery on generated objects and show it")
    demo.add_argument("--objects", type=int, default=200, help="how many objects to generate")
    demo.add_argument("--seed", type=int, default=0, help="random seed for the churn")
    _add_serve_parser(sub)
    return parser


# --- serve: the API server emulator, standalone (emulator-kubectl) ---

#: Where ``serve`` writes its kubeconfig unless told otherwise.
DEFAULT_KUBECONFIG = "kube-informers.kubeconfig"


def _add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the API server emulator until interrupted and write a kubeconfig for it",
        description="Run the API server emulator (plain HTTP) until SIGINT or SIGTERM, "
        "and write a kubeconfig pointing at it so kubectl and controllers can connect.",
    )
    serve.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--kubeconfig",
        default=DEFAULT_KUBECONFIG,
        help=f"where to write the kubeconfig (default ./{DEFAULT_KUBECONFIG})",
    )


def _serve(args: argparse.Namespace) -> int:
    """Run the emulator until SIGINT/SIGTERM; blocks the calling (main) thread."""
    from informers.testing.apiserver import ApiServer
    from informers.testing.apiserver._kubeconfig import write_kubeconfig

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            server = ApiServer(host=args.host, port=args.port)
            server.start()
        except OSError as exc:
            print(
                f"kube-informers serve: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return 1
        try:
            path = write_kubeconfig(args.kubeconfig, server.url).resolve()
            print(f"kube-informers API server emulator serving at {server.url}", flush=True)
            print(f"kubeconfig written to {path}; try:", flush=True)
            print(f"  KUBECONFIG={_shell_quote(path)} kubectl get pods -A", flush=True)
            print("Press Ctrl-C to stop.", flush=True)
            stop.wait()
        finally:
            server.stop()
        print("kube-informers serve: stopped", flush=True)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _shell_quote(path: Path) -> str:
    return shlex.quote(str(path))


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
    if args.command == "serve":
        return _serve(args)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
