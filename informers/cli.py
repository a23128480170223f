"""The ``kube-informers`` command line.

``kube-informers demo`` shows the machinery at work on generated objects.
``kube-informers serve`` runs the API server emulator standalone and writes a
kubeconfig for it, so kubectl and any controller can connect. Later
subcommands (``watch``, ``mirror``) are added by their features.
"""

from __future__ import annotations

import argparse
import logging
import shlex
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

__all__ = ["EXIT_INTERRUPTED", "main", "port_number", "positive_int"]


#: The exit status after Ctrl-C (SIGINT), as shells report it: 128 + 2.
EXIT_INTERRUPTED = 130


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value


def _version() -> str:
    from informers import __version__

    return f"kube-informers {__version__}"


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kube-informers",
        description="Thread-based Kubernetes informers for Python: try them against an "
        "embedded API server emulator, or serve that emulator to kubectl.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run a real informer against an embedded API server emulator, through churn "
        "and faults, and show what it saw",
        description="Start the embedded API server emulator, run a SharedInformerFactory "
        "against it over HTTP, write to the server in phases with deliberate faults "
        "(churn; missed deletes and compaction, a 410 relist; throttling, 429 Retry-After) "
        "and check after each phase that the cache equals the server. Exits non-zero if it "
        "does not.",
    )
    demo.add_argument(
        "--pods", type=positive_int, default=200, help="pods created before the informer starts"
    )
    demo.add_argument("--writes", type=positive_int, default=300, help="writes in the churn phase")
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
    serve.add_argument(
        "--port", type=port_number, default=0, help="port to listen on (0: a free one)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--kubeconfig",
        default=DEFAULT_KUBECONFIG,
        help=f"where to write the kubeconfig (default ./{DEFAULT_KUBECONFIG})",
    )
    serve.add_argument(
        "--no-controllers",
        dest="controllers",
        action="store_false",
        help="serve a bare API server: no built-in controllers (Deployments, ReplicaSets, "
        "Jobs, pods turning Ready, namespace deletion, garbage collection)",
    )


def _serve(args: argparse.Namespace) -> int:
    """Run the emulator until SIGINT/SIGTERM; blocks the calling (main) thread."""
    from informers.testing.apiserver import ApiServer
    from informers.testing.apiserver._kubeconfig import write_kubeconfig

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
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
        manager = None
        try:
            if getattr(args, "controllers", True):
                from informers.testing.controllers import start_controllers

                manager = start_controllers(server)
            path = write_kubeconfig(args.kubeconfig, server.url).resolve()
            print(f"kube-informers API server emulator serving at {server.url}", flush=True)
            print(f"kubeconfig written to {path}; try:", flush=True)
            print(f"  KUBECONFIG={_shell_quote(path)} kubectl get pods -A", flush=True)
            print("Press Ctrl-C to stop.", flush=True)
            stop.wait()
        finally:
            if manager is not None:
                manager.stop()
            server.stop()
        print("kube-informers serve: stopped", flush=True)
        # SIGTERM is the ordinary way to stop a server (0); Ctrl-C reports 130.
        return EXIT_INTERRUPTED if signal.SIGINT in received else 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _shell_quote(path: Path) -> str:
    return shlex.quote(str(path))


class _DeliberateFaults(logging.Filter):
    """Prefixes warnings logged while a deliberate fault is in force."""

    active = False

    def filter(self, record: logging.LogRecord) -> bool:
        if self.active and record.levelno >= logging.WARNING:
            record.msg = f"(deliberate fault, expected) {record.msg}"
        return True


def _demo(args: argparse.Namespace) -> int:
    """Run the informer demo and print what happened; 0 when every phase
    ended with the cache equal to the server's state."""
    from rich.console import Console
    from rich.logging import RichHandler
    from rich.table import Table

    from informers._demo import run_demo

    console = Console()
    # The reflector's warnings (410, 429, dropped streams) are part of the show;
    # while a deliberate fault is in force they are marked as expected.
    handler = RichHandler(console=console, show_path=False, show_time=False)
    marker = _DeliberateFaults()
    handler.addFilter(marker)
    logging.getLogger("informers").addHandler(handler)

    def on_fault(description: str | None) -> None:
        marker.active = description is not None
        if description is not None:
            console.print(f"[bold yellow]deliberate fault:[/] {description}")

    console.print(
        f"[bold]kube-informers demo[/]: a SharedInformerFactory over HTTP against the "
        f"embedded API server emulator ({args.pods} pods, seed {args.seed})"
    )
    try:
        report = run_demo(args.pods, args.writes, args.seed, progress=console.print, fault=on_fault)
    finally:
        logging.getLogger("informers").removeHandler(handler)

    phases = Table(title="phases")
    for column in ("phase", "writes", "caught up in", "cached pods", "cache == server"):
        phases.add_column(column)
    for phase in report.phases:
        phases.add_row(
            phase.name,
            str(phase.writes),
            f"{phase.seconds:.2f} s",
            str(phase.cached),
            "[green]yes[/]" if phase.cache_matches_server else "[red]NO[/]",
        )
    console.print(phases)
    events = Table(title="events the handler received")
    events.add_column("event")
    events.add_column("count", justify="right")
    for what, count in sorted(report.events.items()):
        events.add_row(what, str(count))
    console.print(events)
    errors = ", ".join(f"{name} x{count}" for name, count in sorted(report.watch_errors.items()))
    console.print(f"watch errors seen (and recovered from): {errors or 'none'}")
    console.print(f"pods by node index: {report.by_node}")
    return 0 if all(phase.cache_matches_server for phase in report.phases) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kube-informers`` command; returns the exit code.

    Ctrl-C anywhere stops cleanly (every thread joined, the emulator
    stopped) and returns :data:`EXIT_INTERRUPTED` without a traceback; bad
    arguments exit 2 with argparse's message.
    """
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            return _demo(args)
        if args.command == "serve":
            return _serve(args)
    except KeyboardInterrupt:
        print(f"kube-informers {args.command}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
