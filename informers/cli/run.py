"""The ``kube-informers run PATH_OR_MODULE`` command: run a controller as a
process under a :class:`~informers.toolkit.manager.Manager`.

``PATH_OR_MODULE`` is a Python file (``controller.py``) or an importable
module (``mypackage.controller``) that defines ``setup(manager)``; ``setup``
builds the controllers on the manager (``manager.factory``,
``manager.controller(...)``, ``manager.add(...)``) and returns. The manager
then runs until SIGTERM or SIGINT, and stops gracefully.

Flags are named as in kubebuilder's scaffold: ``--kubeconfig``,
``--namespace``, ``--metrics-bind-address`` (``0``, the default, is off),
``--health-probe-bind-address`` (default ``:8081``; ``0`` is off),
``--leader-elect``, ``--leader-election-id``,
``--leader-election-namespace``, ``--log-format json|text`` and
``--log-level``.

Exit status: 0 after SIGTERM (or a ``setup`` that asked the manager to stop),
:data:`~informers.cli.exits.EXIT_INTERRUPTED` after SIGINT, 1 when
leadership was lost or the input is bad: a missing file, a module that does
not import or has no ``setup``, a ``setup`` that raises, caches that do not
sync. Bad input is one line on stderr, with the traceback only at
``--log-level debug``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import logging
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from informers.cli._common import EXIT_INTERRUPTED, CommandError, connect, positive_float

__all__ = ["JsonFormatter", "add_parser", "configure_logging", "load_setup", "run_manager"]

#: The namespace of the in-cluster service account (the default leader
#: election namespace inside a pod).
_SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

_LEVELS = ("debug", "info", "warning", "error")


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "run",
        help="run a controller (a file or module defining setup(manager)) as a process",
        description="Load PATH_OR_MODULE, call its setup(manager) and run the manager "
        "until SIGTERM/SIGINT: informers synced first, probes at /healthz and /readyz, "
        "metrics at /metrics, optional leader election.",
    )
    parser.add_argument("target", metavar="PATH_OR_MODULE", help="a .py file or a module name")
    parser.add_argument(
        "--kubeconfig", help="the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    parser.add_argument("--namespace", help="watch one namespace only (default: all)")
    parser.add_argument(
        "--metrics-bind-address",
        default="0",
        help="host:port of /metrics; 0 turns it off (default 0)",
    )
    parser.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        help="host:port of /healthz and /readyz; 0 turns them off (default :8081)",
    )
    parser.add_argument(
        "--leader-elect",
        action="store_true",
        help="run the controllers only while holding the leader election Lease",
    )
    parser.add_argument("--leader-election-id", help="the name of the leader election Lease")
    parser.add_argument(
        "--leader-election-namespace",
        help="the namespace of the Lease (default: the pod's, else 'default')",
    )
    parser.add_argument(
        "--log-format",
        choices=("json", "text"),
        default="text",
        help="log lines on stderr as text or one JSON object each (default text)",
    )
    parser.add_argument(
        "--log-level",
        choices=_LEVELS,
        default="info",
        help="the least severe level logged (default info); debug also prints tracebacks",
    )
    parser.add_argument(
        "--graceful-shutdown-timeout",
        type=positive_float,
        default=30.0,
        help="seconds the stop may take (default 30)",
    )
    parser.set_defaults(run=run_manager)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, and the
    record's ``extra`` fields that are plain values."""

    _STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
        "message",
        "asctime",
    }

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._STANDARD and isinstance(value, str | int | float | bool):
                entry[key] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


@contextlib.contextmanager
def configure_logging(log_format: str, level: str) -> Iterator[None]:
    """While entered, send every log record at ``level`` or above to stderr,
    as text or JSON lines; the root logger is restored on exit."""
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper()))
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def _import(target: str) -> ModuleType:
    looks_like_file = target.endswith(".py") or os.sep in target or "/" in target
    if looks_like_file:
        path = Path(target)
        if not path.is_file():
            raise CommandError(f"{target}: no such file")
        spec = importlib.util.spec_from_file_location(f"_kube_informers_run_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise CommandError(f"{target}: cannot be loaded as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if error.name is not None and target.startswith(error.name):
            raise CommandError(f"{target}: no such file or module") from None
        raise


def load_setup(target: str, debug: bool) -> Callable[[Any], object]:
    """The ``setup`` function of ``target`` (a file or a module). Raises
    :class:`~informers.cli._common.CommandError` with one line when it
    cannot be loaded or has no callable ``setup`` (printing the traceback
    first when ``debug``)."""
    try:
        module = _import(target)
    except CommandError:
        raise
    except Exception as error:  # noqa: BLE001 - the user's module failed: one line
        if debug:
            traceback.print_exc()
        raise CommandError(f"{target}: failed to load: {type(error).__name__}: {error}") from None
    setup = getattr(module, "setup", None)
    if not callable(setup):
        raise CommandError(f"{target}: defines no setup(manager) function")
    return setup  # type: ignore[no-any-return]


def _lease_namespace(given: str | None) -> str:
    if given:
        return given
    try:
        return _SA_NAMESPACE.read_text(encoding="utf-8").strip() or "default"
    except OSError:
        return "default"


def run_manager(args: argparse.Namespace) -> int:
    """Run ``args.target`` under a manager; answers the exit status."""
    from informers.toolkit.manager import Manager

    debug = args.log_level == "debug"
    if args.leader_elect and not args.leader_election_id:
        raise CommandError("--leader-elect needs --leader-election-id (the Lease's name)")
    log = logging.getLogger("informers.cli.run")
    with configure_logging(args.log_format, args.log_level):
        setup = load_setup(args.target, debug)
        cluster = connect(args.kubeconfig, None, embedded=False)
        try:
            try:
                manager = Manager(
                    cluster.api_client,
                    namespace=args.namespace,
                    leader_election=bool(args.leader_elect),
                    leader_election_id=args.leader_election_id,
                    leader_election_namespace=_lease_namespace(args.leader_election_namespace),
                    health_probe_bind_address=args.health_probe_bind_address,
                    metrics_bind_address=args.metrics_bind_address,
                    graceful_shutdown_timeout=args.graceful_shutdown_timeout,
                )
            except (ValueError, ImportError) as error:
                raise CommandError(str(error)) from None
            try:
                setup(manager)
            except Exception as error:  # noqa: BLE001 - the user's setup failed: one line
                if debug:
                    traceback.print_exc()
                raise CommandError(
                    f"{args.target}: setup(manager) failed: {type(error).__name__}: {error}"
                ) from None
            try:
                manager.run()
            except Exception as error:  # noqa: BLE001 - a failed start is one line
                if debug:
                    traceback.print_exc()
                raise CommandError(f"{type(error).__name__}: {error}") from None
        finally:
            cluster.close()
        if manager.leadership_lost:
            log.error("leadership lost; exiting 1 so that the process restarts")
            return 1
    if manager.stop_signal == signal.SIGINT:
        return EXIT_INTERRUPTED
    return 0
