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
import logging
import random
import sys
import time
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
    check_reachable,
    configured_logging,
    connect,
    print_json,
    safe_url,
    seed_cluster,
)
from informers.errors import ApiError, UnknownResourceError
from informers.wire.resources import Resource

__all__ = ["add_parser", "parse_column", "run_mirror"]

log = logging.getLogger(__name__)


#: How long the stop waits for each controller's queue to drain.
DRAIN_TIMEOUT = 30.0


def parse_column(text: str) -> tuple[str, str, str]:
    """``RESOURCE=PATH`` or ``RESOURCE=NAME:PATH`` as ``(resource, name,
    path)``; the name defaults to the path's last key (``status.phase`` →
    ``phase``). An argparse type: raises :class:`argparse.ArgumentTypeError`."""
    resource, sep, rest = text.partition("=")
    if not sep or not resource.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not RESOURCE=PATH or RESOURCE=NAME:PATH (e.g. pods=status.phase)"
        )
    name, colon, path = rest.partition(":")
    if not colon:
        path = rest
        name = rest.rsplit(".", 1)[-1]
    return resource.strip(), name.strip(), path.strip()


def _require_mirror_extra() -> None:
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        raise CommandError(f"the mirror needs SQLAlchemy: {MIRROR_EXTRA_HINT}") from None


def _open_tables(
    db: Any, resources: list[Resource], columns: dict[Resource, list[Any]]
) -> list[Any]:
    return [db.store(resource, columns.get(resource, ())) for resource in resources]


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
    with StopSignals() as signals, configured_logging(args):
        cluster = connect(args.kubeconfig, args.context, args.embedded)
        churn: Churn | None = None
        factory = SharedInformerFactory(cluster.api_client, namespace=args.namespace)
        controllers: list[Any] = []
        db: Any = None
        try:
            resources = _resolve(factory, args.resource, cluster)
            columns: dict[Resource, list[Any]] = {}
            for resource_name, name, path in args.column or []:
                resource = _resolve(factory, [resource_name], cluster)[0]
                if resource not in resources:
                    raise CommandError(f"--column {resource_name}=...: {resource} is not mirrored")
                try:
                    columns.setdefault(resource, []).append(Column(name, path))
                except MirrorError as error:
                    raise CommandError(f"--column {resource_name}={path}: {error}") from None
            for resource in resources:
                check_reachable(cluster, resource, args.namespace)
            try:
                db = MirrorDatabase(args.db)
                tables = _open_tables(db, resources, columns)
            except ImportError as error:  # the URL's driver (psycopg) is not installed
                raise CommandError(
                    f"database driver missing ({error}): {MIRROR_EXTRA_HINT}"
                ) from None
            except (MirrorError, sa.exc.SQLAlchemyError) as error:
                raise CommandError(f"database {safe_url(args.db)}: {error}") from None
            if cluster.server is not None:
                seed_cluster(cluster.server, random.Random(args.seed), args.objects)
                churn = Churn(cluster.server, random.Random(args.seed + 1))
                churn.start()
            for table in tables:
                controllers.append(mirror_controller(table, cluster.api_client, factory))
            _start(controllers, tables, console, as_json, signals)
            if not as_json:
                console.print(
                    f"mirroring {', '.join(str(r) for r in resources)} into {safe_url(args.db)} "
                    "(Ctrl-C to stop)",
                    highlight=False,
                    markup=False,
                )
            else:
                print(f"# mirroring {len(resources)} kind(s); Ctrl-C to stop", file=sys.stderr)
            signals.event.wait(args.duration)
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
    controllers: list[Any], tables: list[Any], console: Any, as_json: bool, signals: StopSignals
) -> None:
    """Start each controller (blocks until its initial sync), with a progress
    line per kind unless printing JSON."""
    if as_json:
        for controller in controllers:
            if not signals.event.is_set():
                controller.start()
                controller.wait_idle(DRAIN_TIMEOUT)
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console
    ) as progress:
        for controller, table in zip(controllers, tables, strict=True):
            task = progress.add_task(f"initial sync of {table.resource}", total=1)
            if signals.event.is_set():
                break
            controller.start()
            controller.wait_idle(DRAIN_TIMEOUT)
            progress.update(
                task,
                completed=1,
                description=f"synced {table.resource}: {table.count()} rows",
            )
    console.print("initial sync done", highlight=False)


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
        help="an indexed column: RESOURCE=PATH or RESOURCE=NAME:PATH (pods=status.phase); "
        "repeatable",
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
