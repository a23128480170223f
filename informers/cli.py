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
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["EXIT_INTERRUPTED", "main", "port_number", "positive_float", "positive_int"]


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
        "and check after each phase that the cache equals the server; alongside, typed "
        "trackers, the index synchronization tracker, a controller on the workqueue, and the "
        "SQL mirror of every kind. Exits non-zero if the cache or the database differs.",
    )
    demo.add_argument(
        "--pods",
        "--objects",
        dest="pods",
        type=positive_int,
        default=200,
        help="pods created before the informers start, in pods/10 deployments (default 200)",
    )
    demo.add_argument("--writes", type=positive_int, default=300, help="writes in the churn phase")
    demo.add_argument("--seed", type=int, default=0, help="random seed for the churn")
    demo.add_argument(
        "--duration",
        type=positive_float,
        help="churn for this many seconds instead of --writes writes",
    )
    demo.add_argument(
        "--db",
        help="the mirror's database URL (default: a temporary SQLite file); the mirror "
        "needs the mirror extra and is skipped without it",
    )
    _add_serve_parser(sub)
    _add_mirror_parser(sub)
    _add_watch_parser(sub)
    return parser


# --- mirror and watch: against a cluster (a kubeconfig) or the embedded emulator ---


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def _add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig", help="the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context (default: its current one)")
    parser.add_argument("--namespace", "-n", help="one namespace only (default: all)")
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="run against the embedded API server emulator, with generated churn",
    )
    parser.add_argument(
        "--objects",
        type=positive_int,
        default=60,
        help="with --embedded: objects created before starting (default 60)",
    )
    parser.add_argument("--seed", type=int, default=0, help="with --embedded: the churn's seed")
    parser.add_argument(
        "--duration",
        type=positive_float,
        help="stop after this many seconds (default: run until Ctrl-C)",
    )
    parser.add_argument(
        "--output", choices=("rich", "json"), default="rich", help="rich tables, or plain JSON"
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="show the library's warnings (retries)"
    )


def _add_mirror_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from informers._cli_mirror import parse_column

    mirror = sub.add_parser(
        "mirror",
        help="mirror kinds of a cluster into SQL tables until interrupted",
        description="Keep a SQL table per kind (SQLite or PostgreSQL) equal to what the API "
        "server holds, until Ctrl-C, SIGTERM or --duration; then drain the work, commit, "
        "close, and print the objects per kind in the API against the rows in the database. "
        "Needs the mirror extra: pip install 'kube-informers[mirror]'.",
    )
    mirror.add_argument(
        "--resource",
        "-r",
        action="append",
        required=True,
        help="a kind to mirror, as kubectl names it (pods, deploy, deployments.apps); repeatable",
    )
    mirror.add_argument(
        "--column",
        "-c",
        action="append",
        type=parse_column,
        help="an indexed column: RESOURCE=PATH or RESOURCE=NAME:PATH (pods=status.phase); "
        "repeatable",
    )
    mirror.add_argument(
        "--db",
        default="sqlite:///mirror.db",
        help="the database URL: sqlite:///FILE (default sqlite:///mirror.db) or postgresql://...",
    )
    _add_cluster_options(mirror)


def _add_watch_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from informers._cli_watch import parse_index

    watch = sub.add_parser(
        "watch",
        help="show a kind's events and index counts live until interrupted",
        description="Run a shared informer for one kind and show, live, its recent events "
        "(type, key, resourceVersion; never the objects' contents) and, for each --index, "
        "how many objects each value has. --output json prints one JSON line per event.",
    )
    watch.add_argument("resource", help="the kind, as kubectl names it (pods, deploy, ...)")
    watch.add_argument(
        "--index",
        "-i",
        action="append",
        type=parse_index,
        help="an index: NAME=PATH (node=spec.nodeName); repeatable",
    )
    watch.add_argument("--selector", "-l", help="a label selector (app=web,tier!=db)")
    _add_cluster_options(watch)


# --- serve: the API server emulator, standalone (emulator-kubectl) ---

#: Where ``serve`` writes its kubeconfig unless told otherwise.
DEFAULT_KUBECONFIG = "kube-informers.kubeconfig"


def _add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the API server emulator until interrupted and write a kubeconfig for it",
        description="Run the API server emulator (plain HTTP, or HTTPS with --tls) until "
        "SIGINT or SIGTERM, and write a kubeconfig pointing at it so kubectl and controllers "
        "can connect.",
    )
    serve.add_argument(
        "--port", type=port_number, default=0, help="port to listen on (0: a free one)"
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything but loopback is reachable from "
        "other machines: use --tls and --token then)",
    )
    serve.add_argument(
        "--kubeconfig",
        default=DEFAULT_KUBECONFIG,
        help=f"where to write the kubeconfig (default ./{DEFAULT_KUBECONFIG})",
    )
    serve.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a throw-away self-signed certificate made by the openssl "
        "command (its CA goes into the kubeconfig)",
    )
    serve.add_argument(
        "--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate (implies --tls)"
    )
    serve.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert")
    serve.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="the CA certificate clients should trust (default: --tls-cert itself)",
    )
    serve.add_argument(
        "--token",
        metavar="TOKEN",
        help='require this bearer token (user "admin") on every request; the kubeconfig '
        "carries it (note: other local users can see command lines)",
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
    import tempfile

    from informers.testing.apiserver import (
        ApiServer,
        SecurityConfigError,
        TLSConfig,
        generate_self_signed,
    )
    from informers.testing.apiserver._security import is_loopback_address

    cleanups: list[Callable[[], None]] = []

    def make_server() -> ApiServer:
        """The (not yet started) emulator with the TLS and token options;
        SecurityConfigError (one line) when they cannot be had. A self-signed
        pair is made in a private temporary directory that is deleted when
        the server stops."""
        if (args.tls_cert is None) != (args.tls_key is None):
            raise SecurityConfigError("--tls-cert and --tls-key go together")
        if args.tls_ca is not None and args.tls_cert is None:
            raise SecurityConfigError("--tls-ca needs --tls-cert and --tls-key")
        tokens = {args.token: "admin"} if args.token is not None else None
        if args.tls_cert is not None:
            tls = TLSConfig(args.tls_cert, args.tls_key, args.tls_ca)
            return ApiServer(host=args.host, port=args.port, tls=tls, tokens=tokens)
        if not args.tls:
            return ApiServer(host=args.host, port=args.port, tokens=tokens)
        hosts = ["127.0.0.1", "localhost"]
        if args.host and args.host not in hosts:
            hosts.append(args.host)
        # Kept until the server stops: clients made by server.api_client() (the
        # built-in controllers') read the CA file by its path.
        directory = tempfile.TemporaryDirectory(prefix="kube-informers-tls-")
        cleanups.append(directory.cleanup)
        try:
            tls = generate_self_signed(directory.name, hosts=hosts)
        except SecurityConfigError as exc:
            raise SecurityConfigError(f"--tls: {exc}; or pass --tls-cert and --tls-key") from None
        return ApiServer(host=args.host, port=args.port, tls=tls, tokens=tokens)

    encrypted = bool(args.tls or args.tls_cert)
    if not is_loopback_address(args.host):
        if args.token is None:
            risk = "; it has no authentication (pass --token and --tls)"
        elif not encrypted:
            risk = "; without --tls the token crosses the network in clear text"
        else:
            risk = ""
        print(
            f"kube-informers serve: warning: {args.host or 'every interface'} is not a loopback "
            f"address, so other machines can reach the emulator{risk}",
            file=sys.stderr,
            flush=True,
        )
    try:
        server = make_server()
    except SecurityConfigError as exc:
        for cleanup in cleanups:
            cleanup()
        print(f"kube-informers serve: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve_until_stopped(args, server)
    finally:
        for cleanup in cleanups:
            cleanup()


def _serve_until_stopped(args: argparse.Namespace, server: Any) -> int:
    """Start ``server`` (and its built-in controllers), write the kubeconfig,
    and block until SIGINT or SIGTERM; 130 after Ctrl-C, 0 after SIGTERM."""

    # The one stop rule of every long-running command (mirror and watch use
    # it too): SIGINT and SIGTERM set an event; Ctrl-C exits 130.
    from informers._cli_common import StopSignals

    with StopSignals() as signals:
        try:
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
            path = server.write_kubeconfig(args.kubeconfig).resolve()
            print(f"kube-informers API server emulator serving at {server.url}", flush=True)
            if args.token is not None:
                print("every request needs the bearer token (the kubeconfig carries it)")
            print(f"kubeconfig written to {path}; try:", flush=True)
            print(f"  KUBECONFIG={_shell_quote(path)} kubectl get pods -A", flush=True)
            print("Press Ctrl-C to stop.", flush=True)
            signals.event.wait()
        finally:
            if manager is not None:
                manager.stop()
            server.stop()
        print("kube-informers serve: stopped", flush=True)
        # SIGTERM is the ordinary way to stop a server (0); Ctrl-C reports 130.
        return EXIT_INTERRUPTED if signals.interrupted else 0


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
    """Run the demo and print what happened; 0 when every phase ended with
    the cache equal to the server's state and the database equal to the API."""
    from rich.console import Console
    from rich.logging import RichHandler

    from informers._cli_common import CommandError
    from informers._demo import print_summary, run_demo

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
        report = run_demo(
            args.pods,
            args.writes,
            args.seed,
            progress=console.print,
            fault=on_fault,
            duration=args.duration,
            db=args.db,
        )
    except CommandError as error:
        print(f"kube-informers demo: {error}", file=sys.stderr, flush=True)
        return error.exit_code
    finally:
        logging.getLogger("informers").removeHandler(handler)
    print_summary(report, console)
    return 0 if report.converged else 1


def _cluster_command(args: argparse.Namespace) -> int:
    """Run ``mirror`` or ``watch``; a :class:`CommandError` is one line on
    stderr and its exit code."""
    from rich.console import Console

    from informers._cli_common import CommandError

    console = Console(stderr=args.output == "json")
    try:
        if args.command == "mirror":
            from informers._cli_mirror import run_mirror

            return run_mirror(args, console)
        from informers._cli_watch import run_watch

        return run_watch(args, console)
    except CommandError as error:
        print(f"kube-informers {args.command}: {error}", file=sys.stderr, flush=True)
        return error.exit_code


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
        if args.command in ("mirror", "watch"):
            return _cluster_command(args)
    except KeyboardInterrupt:
        print(f"kube-informers {args.command}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
