"""The ``kube-informers`` command line: the top floor of the library (nothing
imports it).

One module per subcommand, each with ``add_parser(sub)`` (which sets the
``run`` function its arguments go to): :mod:`~informers.cli.demo` (the whole
platform against the embedded emulator), :mod:`~informers.cli.serve` (the
emulator for kubectl), :mod:`~informers.cli.mirror` (kinds into SQL) and
:mod:`~informers.cli.watch` (a kind's events live) and :mod:`~informers.cli.run` (a
controller as a process, under a manager). Shared helpers live in
``informers.cli._common``, exit codes in :mod:`informers.cli.exits`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from informers.cli import demo, mirror, run, serve, watch
from informers.cli._common import CommandError
from informers.cli.exits import EXIT_INTERRUPTED

__all__ = ["EXIT_INTERRUPTED", "main"]


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
    for command in (demo, serve, mirror, watch, run):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kube-informers`` command; returns the exit code.

    Ctrl-C anywhere stops cleanly (every thread joined, the emulator
    stopped) and returns :data:`EXIT_INTERRUPTED` without a traceback; bad
    arguments exit 2 with argparse's message; a :class:`CommandError` is one
    line on stderr and its exit code.
    """
    args = _build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except CommandError as error:
        print(f"kube-informers {args.command}: {error}", file=sys.stderr, flush=True)
        return error.exit_code
    except KeyboardInterrupt:
        print(f"kube-informers {args.command}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    return code
