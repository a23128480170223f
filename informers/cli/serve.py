"""The ``kube-informers serve`` command: the API server emulator, standalone,
with a kubeconfig written for it, until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from informers.cli._common import (
    StopSignals,
    add_logging_options,
    configured_logging,
    port_number,
)
from informers.cli.exits import EXIT_INTERRUPTED

__all__ = ["DEFAULT_KUBECONFIG", "add_parser", "run_serve"]


#: Where ``serve`` writes its kubeconfig unless told otherwise.
DEFAULT_KUBECONFIG = "kube-informers.kubeconfig"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        help=f"where to write the kubeconfig (default ./{DEFAULT_KUBECONFIG}); its "
        "directory must exist",
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
    add_logging_options(serve, default_level="warning")
    serve.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """Run the emulator until SIGINT/SIGTERM; blocks the calling (main) thread."""
    import tempfile

    from informers.testing.apiserver import (
        ApiServer,
        SecurityConfigError,
        TLSConfig,
        generate_self_signed,
        is_loopback_address,
    )

    directory = Path(args.kubeconfig).expanduser().absolute().parent
    if not directory.is_dir():  # refused, rather than creating directories the user did not ask for
        print(
            f"kube-informers serve: --kubeconfig {args.kubeconfig}: the directory {directory} "
            "does not exist (create it first, or name a file in an existing directory)",
            file=sys.stderr,
        )
        return 1
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
        with configured_logging(args):
            return _serve_until_stopped(args, server)
    finally:
        for cleanup in cleanups:
            cleanup()


def _serve_until_stopped(args: argparse.Namespace, server: Any) -> int:
    """Start ``server`` (and its built-in controllers), write the kubeconfig,
    and block until SIGINT or SIGTERM; 130 after Ctrl-C, 0 after SIGTERM."""

    # The one stop rule of every long-running command (mirror and watch use
    # it too): SIGINT and SIGTERM set an event; Ctrl-C exits 130.

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
