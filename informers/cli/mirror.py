"""The ``kube-informers mirror`` command: keep SQL tables equal to kinds of a
cluster (:mod:`tracker.mirror`) until interrupted.

One :func:`tracker.mirror.mirror_controller` per ``--resource`` on one
:class:`~informers.SharedInformerFactory`. It stops cleanly on SIGINT
(exit :data:`~informers.cli.EXIT_INTERRUPTED`), SIGTERM or ``--duration``
(exit 0): the churn (``--embedded``) stopped, each controller's queue
drained, then the controllers, the informers, the database and the client
closed. At the end it prints the objects per kind in the API against the rows
in the database (a rich table, or one JSON object with ``--output json``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import re
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cli._common import (
    EXIT_INTERRUPTED,
    MIRROR_EXTRA_HINT,
    Churn,
    Cluster,
    CommandError,
    StopSignals,
    add_cluster_options,
    check_answers,
    check_reachable,
    configured_logging,
    connect,
    print_json,
    safe_url,
    seed_cluster,
)
from informers.cli._paths import split_path, unmatched_warning
from informers.errors import ApiError, UnknownResourceError
from informers.wire.resources import Resource

__all__ = ["COLUMN_TYPE_NAMES", "add_parser", "parse_column", "run_mirror"]

log = logging.getLogger(__name__)


#: How long the stop waits for each controller's queue to drain.
DRAIN_TIMEOUT = 30.0
#: Seconds past the end of ``--duration`` the initial sync may take: a short
#: ``--duration`` still mirrors, a silent API server still ends the command.
SYNC_GRACE = 2.5


#: ``--column`` types: what the command line says, the mirror's column type.
COLUMN_TYPE_NAMES = {
    "text": "text",
    "int": "integer",
    "integer": "integer",
    "float": "float",
    "bool": "boolean",
    "boolean": "boolean",
    "json": "json",
    "timestamp": "timestamp",
}


def parse_column(text: str) -> tuple[str, str, str, str]:
    """``RESOURCE=[NAME:]PATH[:TYPE]`` as ``(resource, name, path, type)``.

    The name defaults to the path's last key made an identifier
    (``status.phase`` → ``phase``); the path is kubectl's form (``\\.``
    escapes a dot inside a key, ``[N]`` indexes a list: see
    :mod:`informers.cli._paths`); the type is one of
    :data:`COLUMN_TYPE_NAMES` (default ``text``), returned as the mirror
    names it (``int`` → ``integer``). An argparse type: raises
    :class:`argparse.ArgumentTypeError`."""
    resource, sep, rest = text.partition("=")
    if not sep or not resource.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not RESOURCE=[NAME:]PATH[:TYPE] (e.g. pods=status.phase, "
            "pods=ready:status.containerStatuses[0].ready:bool)"
        )
    pieces = [piece.strip() for piece in rest.split(":")]
    column_type = "text"
    if len(pieces) > 1 and pieces[-1] in COLUMN_TYPE_NAMES:
        column_type = COLUMN_TYPE_NAMES[pieces.pop()]
    elif len(pieces) == 3:
        raise argparse.ArgumentTypeError(
            f"--column {text!r}: type {pieces[2]!r} is not one of "
            f"{', '.join(sorted(COLUMN_TYPE_NAMES))}"
        )
    if len(pieces) > 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not RESOURCE=[NAME:]PATH[:TYPE]")
    path = pieces[-1]
    try:
        parts = split_path(path)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--column {text!r}: {error}") from None
    name = pieces[0] if len(pieces) == 2 else _identifier(parts[-1])
    return resource.strip(), name, path, column_type


def _identifier(key: str) -> str:
    """A column name made of a path's last key (``app.kubernetes.io/name`` →
    ``app_kubernetes_io_name``)."""
    name = re.sub(r"[^a-z0-9_]+", "_", key.lower()).strip("_") or "value"
    return f"c_{name}" if name[0].isdigit() else name


def _require_mirror_extra() -> None:
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        raise CommandError(f"the mirror needs SQLAlchemy: {MIRROR_EXTRA_HINT}") from None


@contextlib.contextmanager
def _outage_logging(verbose: bool) -> Iterator[None]:
    """Show database outages on stderr even without ``--verbose``: one line
    when one starts, one when it ends (:mod:`tracker.mirror.outage`); with
    ``--verbose`` also one traceback per distinct error. Restores the logger
    afterwards."""
    from tracker.mirror.outage import LOGGER_NAME

    logger = logging.getLogger(LOGGER_NAME)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    saved = logger.level, logger.propagate
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False  # not twice through the --verbose handler of "tracker"
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def _open_tables(
    db: Any, resources: list[Resource], columns: dict[Resource, list[Any]], drop: bool
) -> list[Any]:
    return [
        db.store(resource, columns.get(resource, ()), drop_undeclared_columns=drop)
        for resource in resources
    ]


def _warn_unmatched(
    factory: SharedInformerFactory, probes: list[tuple[str, Resource, Any]]
) -> None:
    """One line on stderr per ``--column`` whose path found nothing in the
    first cached objects of its kind."""
    for option, resource, column in probes:
        objects = factory.for_resource(resource).get_store().list()
        message = unmatched_warning(option, column.parts, objects, str(resource))
        if message is not None:
            print(f"kube-informers mirror: warning: {message}", file=sys.stderr, flush=True)


def _resolve(factory: SharedInformerFactory, names: list[str], cluster: Cluster) -> list[Resource]:
    import urllib3

    resolved: list[Resource] = []
    for name in names:
        try:
            resource = factory.resolve(name)
        except UnknownResourceError as error:
            raise CommandError(str(error)) from None
        except ApiError as error:
            raise CommandError(f"the API server at {cluster.url}: {error}") from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise CommandError(f"cannot reach the API server at {cluster.url}: {reason}") from None
        if resource not in resolved:
            resolved.append(resource)
    return resolved


def _count_api(cluster: Cluster, resource: Resource, namespace: str | None) -> int | None:
    """Objects of ``resource`` in the API now; ``None`` when it cannot be asked
    (the server went away meanwhile)."""
    import urllib3

    from tracker.mirror import LiveReader

    try:
        listed = LiveReader(cluster.api_client, resource, namespace).list()
    except (ApiError, urllib3.exceptions.HTTPError, OSError) as error:
        log.warning("cannot count %s in the API: %s", resource, error)
        return None
    return len(listed.get("items") or [])


def run_mirror(args: argparse.Namespace, console: Any) -> int:
    """Run the mirror command with parsed ``args``; returns the exit code.
    Blocks (the main thread) until a signal or ``--duration``. Raises
    :class:`~informers.cli._common.CommandError` for what stops it early."""
    _require_mirror_extra()
    import sqlalchemy as sa

    from tracker.errors import MirrorError

    try:
        return _run(args, console)
    except (MirrorError, sa.exc.SQLAlchemyError) as error:
        raise CommandError(f"database {safe_url(args.db)}: {error}") from None


def _run(args: argparse.Namespace, console: Any) -> int:
    import sqlalchemy as sa

    from tracker.errors import MirrorError
    from tracker.mirror import Column, MirrorDatabase, mirror_controller

    as_json = args.output == "json"
    started = time.monotonic()
    with StopSignals() as signals, configured_logging(args), contextlib.ExitStack() as stack:
        cluster = connect(args.kubeconfig, args.context, args.embedded)
        churn: Churn | None = None
        factory = SharedInformerFactory(cluster.api_client, namespace=args.namespace)
        controllers: list[Any] = []
        db: Any = None
        try:
            end = None if args.duration is None else started + args.duration
            check_answers(cluster, signals=signals, deadline=end)  # before discovery asks it
            resources = _resolve(factory, args.resource, cluster)
            columns: dict[Resource, list[Any]] = {}
            probes: list[tuple[str, Resource, Any]] = []  # (option, resource, column)
            for resource_name, name, path, column_type in args.column or []:
                resource = _resolve(factory, [resource_name], cluster)[0]
                if resource not in resources:
                    raise CommandError(f"--column {resource_name}=...: {resource} is not mirrored")
                try:
                    column = Column(name, split_path(path), column_type)
                except MirrorError as error:
                    raise CommandError(f"--column {resource_name}={path}: {error}") from None
                columns.setdefault(resource, []).append(column)
                probes.append((f"--column {resource_name}={name}:{path}", resource, column))
            for resource in resources:
                check_reachable(cluster, resource, args.namespace, signals=signals, deadline=end)
            try:
                db = MirrorDatabase(args.db)
                tables = _open_tables(db, resources, columns, args.drop_undeclared_columns)
            except ImportError as error:  # the URL's driver (psycopg) is not installed
                raise CommandError(
                    f"database driver missing ({error}): {MIRROR_EXTRA_HINT}"
                ) from None
            except (MirrorError, sa.exc.SQLAlchemyError) as error:
                raise CommandError(f"database {safe_url(args.db)}: {error}") from None
            # From here on a database outage is retried: shown as it starts and ends.
            stack.enter_context(_outage_logging(args.verbose))
            if cluster.server is not None:
                seed_cluster(cluster.server, random.Random(args.seed), args.objects)
                churn = Churn(cluster.server, random.Random(args.seed + 1))
                churn.start()
            for table in tables:
                controllers.append(mirror_controller(table, cluster.api_client, factory))
            # The initial sync may end SYNC_GRACE s after --duration, or after it began.
            sync_deadline = None
            if args.duration is not None:
                sync_deadline = max(started + args.duration, time.monotonic()) + SYNC_GRACE
            _start(
                controllers,
                tables,
                console,
                as_json=as_json,
                signals=signals,
                deadline=sync_deadline,
            )
            _warn_unmatched(factory, probes)
            if not as_json:
                console.print(
                    f"mirroring {', '.join(str(r) for r in resources)} into {safe_url(args.db)} "
                    "(Ctrl-C to stop)",
                    highlight=False,
                    markup=False,
                )
            else:
                print(f"# mirroring {len(resources)} kind(s); Ctrl-C to stop", file=sys.stderr)
            # --duration counts from the start of the command, the initial sync included.
            signals.event.wait(
                None
                if args.duration is None
                else max(0.0, started + args.duration - time.monotonic())
            )
            if churn is not None:
                churn.stop()
            drained = all(c.wait_idle(DRAIN_TIMEOUT) for c in controllers)
            summary = [
                {
                    "resource": str(table.resource),
                    "table": table.table.name,
                    "api_objects": _count_api(cluster, table.resource, args.namespace),
                    "db_rows": table.count(),
                }
                for table in tables
            ]
        finally:
            if churn is not None:
                churn.stop()
            for controller in controllers:
                controller.stop()
            factory.shutdown()
            if db is not None:
                db.close()
            cluster.close()
        for row in summary:
            row["match"] = row["api_objects"] == row["db_rows"]
        reason = "SIGINT" if signals.interrupted else "SIGTERM" if signals.received else "duration"
        result = {
            "command": "mirror",
            "kinds": summary,
            "drained": drained,
            "stopped_by": reason,
            "seconds": round(time.monotonic() - started, 3),
        }
        _report(result, console, as_json)
        return EXIT_INTERRUPTED if signals.interrupted else 0


def _start(
    controllers: list[Any],
    tables: list[Any],
    console: Any,
    *,
    as_json: bool,
    signals: StopSignals,
    deadline: float | None,
) -> None:
    """Start each controller (blocks until its initial sync), with a progress
    line per kind unless printing JSON.

    A signal, or ``deadline`` (a :func:`time.monotonic` time), ends the wait
    at once: the controller starting then is stopped and
    :class:`~informers.cli._common.CommandError` names the kind whose initial
    sync did not finish (exit :data:`EXIT_INTERRUPTED` after Ctrl-C)."""
    lock = threading.Lock()
    starting: list[Any] = []  # guarded by lock: the controller starting now
    expired = threading.Event()  # set by the watcher: stop starting
    wake = threading.Event()  # a signal, or every start is done
    done = threading.Event()  # every start finished
    signals.also_set(wake)

    def watch() -> None:
        wake.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        if done.is_set():
            return
        with lock:
            expired.set()
            current = list(starting)
        for controller in current:
            controller.stop(5.0)  # its start() returns early

    watcher = threading.Thread(target=watch, name="kube-informers-mirror-start")
    watcher.start()
    progress: Any = None
    try:
        if not as_json:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
            )
            progress.start()
        for controller, table in zip(controllers, tables, strict=True):
            task = None
            if progress is not None:
                task = progress.add_task(f"initial sync of {table.resource}", total=1)
            with lock:
                if expired.is_set():
                    _not_synced(table, signals)
                starting[:] = [controller]
            controller.start()
            with lock:
                starting.clear()
            if expired.is_set():
                _not_synced(table, signals)
            controller.wait_idle(DRAIN_TIMEOUT)
            if progress is not None:
                progress.update(
                    task, completed=1, description=f"synced {table.resource}: {table.count()} rows"
                )
    finally:
        done.set()
        wake.set()
        watcher.join()
        if progress is not None:
            progress.stop()
    if not as_json:
        console.print("initial sync done", highlight=False)


def _not_synced(table: Any, signals: StopSignals) -> None:
    """Raise the error of an initial sync ended by a signal or the deadline."""
    if signals.received:
        code = EXIT_INTERRUPTED if signals.interrupted else 1
        raise CommandError(
            f"stopped by {signals.reason} before the initial sync of {table.resource} finished",
            code,
        )
    raise CommandError(
        f"the initial sync of {table.resource} did not finish within --duration "
        f"(+{SYNC_GRACE:g} s): the API server did not answer its list"
    )


def _report(result: dict[str, Any], console: Any, as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
    from rich.table import Table

    table = Table(title="kube-informers mirror: API vs database")
    for column in ("kind", "table", "objects in the API", "rows in the DB", "match"):
        table.add_column(column)
    for row in result["kinds"]:
        table.add_row(
            row["resource"],
            row["table"],
            "?" if row["api_objects"] is None else str(row["api_objects"]),
            str(row["db_rows"]),
            "[green]yes[/]" if row["match"] else "[yellow]not yet[/]",
        )
    console.print(table)
    console.print(f"stopped by {result['stopped_by']} after {result['seconds']:.1f} s")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        help="an indexed column: RESOURCE=[NAME:]PATH[:TYPE], TYPE one of text (default), "
        "int, float, bool, json, timestamp (pods=status.phase, "
        "pods=ready:status.containerStatuses[0].ready:bool); escape dots inside a key: "
        "pods=app:metadata.labels.app\\.kubernetes\\.io/name; repeatable",
    )
    mirror.add_argument(
        "--drop-undeclared-columns",
        action="store_true",
        help="drop the columns an earlier run declared that this one does not (with their "
        "data); without it such a column is an error",
    )
    mirror.add_argument(
        "--db",
        default="sqlite:///mirror.db",
        help="the database URL: sqlite:///FILE (default sqlite:///mirror.db) or "
        "postgresql://... (postgres:// too)",
    )
    add_cluster_options(mirror)
    mirror.set_defaults(run=_command)


def _command(args: argparse.Namespace) -> int:
    """``run`` of the subcommand: :func:`run_mirror` on a rich console (stderr
    when stdout carries JSON)."""
    from rich.console import Console

    return run_mirror(args, Console(stderr=args.output == "json"))
