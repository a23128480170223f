"""The ``kube-informers watch`` command: one kind's events and index counts,
live, until interrupted.

A shared informer of the kind (through the factory, with ``--selector`` as
its label selector) gets one indexer per ``--index NAME=PATH``. Its handler
records each event's type, key and resourceVersion -- never the object's
contents (they may be Secrets). With rich, a live table shows the recent
events and, per index, the number of objects per value
(``list_index_func_values`` and ``index_keys``); ``--output json`` prints one
JSON line per event instead, one when the informer synced, and one at the end.
SIGINT exits :data:`~informers.cli._common.EXIT_INTERRUPTED`; SIGTERM and
``--duration`` exit 0.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import threading
import time
from dataclasses import replace
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cli._common import (
    EXIT_INTERRUPTED,
    Churn,
    CommandError,
    StopSignals,
    add_cluster_options,
    check_answers,
    check_reachable,
    configured_logging,
    connect,
    print_json,
    seed_cluster,
)
from informers.cli._paths import split_path, unmatched_warning, value_at
from informers.errors import ApiError, SelectorParseError, UnknownResourceError
from informers.rest.listwatch import ListOptions
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.wire.selectors import LabelSelector

__all__ = ["RECENT_EVENTS", "EventLog", "add_parser", "index_by_path", "parse_index", "run_watch"]

#: How many recent events the live table shows.
RECENT_EVENTS = 15

#: Seconds between refreshes of the live table.
REFRESH = 0.25


def parse_index(text: str) -> tuple[str, str]:
    """``NAME=PATH`` as ``(name, path)``; the path is checked as
    :func:`~informers.cli._paths.split_path` reads it (``\\.`` escapes a dot
    inside a key, ``[N]`` indexes a list). An argparse type: raises
    :class:`argparse.ArgumentTypeError`."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=PATH (e.g. node=spec.nodeName)")
    try:
        split_path(path.strip())
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return name.strip(), path.strip()


def index_by_path(path: str) -> Any:
    """An index function: the value at ``path`` (kubectl's form: keys joined
    by dots, ``\\.`` a dot inside a key, ``[N]`` or ``.N`` a list element) as
    text; a list value gives each element; missing gives nothing."""
    parts = split_path(path)

    def index(obj: Any) -> list[str]:
        value = value_at(obj, parts)
        if value is None:
            return []
        if isinstance(value, list):
            return [str(item) for item in value if item is not None]
        return [str(value)]

    return index


def _warn_unmatched(
    informer: Any, indexes: list[tuple[str, str]], resource: Any, warn: Any
) -> None:
    """``warn`` one line per ``--index`` whose path found nothing in the
    first cached objects."""
    if not indexes:
        return
    objects = informer.get_store().list()
    for name, path in indexes:
        message = unmatched_warning(
            f"--index {name}={path}", split_path(path), objects, str(resource)
        )
        if message is not None:
            warn(message)


def _meta(obj: Any) -> tuple[str, str]:
    if isinstance(obj, DeletedFinalStateUnknown):
        obj = obj.obj
    meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
    return meta_namespace_key(obj), str(meta.get("resourceVersion", ""))


class EventLog:
    """The watch handler: keeps the last :data:`RECENT_EVENTS` events and
    counts per type; with ``emit`` set, calls it with each event (on the
    informer's listener thread, outside the lock). Thread-safe; the lock
    guards ``_recent`` and ``_counts``."""

    def __init__(self, emit: Any = None) -> None:
        self._lock = threading.Lock()
        self._recent: collections.deque[dict[str, str]] = collections.deque(maxlen=RECENT_EVENTS)
        self._counts: collections.Counter[str] = collections.Counter()
        self._emit = emit

    def _record(self, kind: str, obj: Any) -> None:
        key, rv = _meta(obj)
        event = {"type": kind, "key": key, "resourceVersion": rv}
        with self._lock:
            self._recent.append(event)
            self._counts[kind] += 1
        if self._emit is not None:
            self._emit(event)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        """An ADDED event."""
        self._record("ADDED", obj)

    def on_update(self, old: Any, new: Any) -> None:
        """A MODIFIED event."""
        self._record("MODIFIED", new)

    def on_delete(self, obj: Any) -> None:
        """A DELETED event (a tombstone's last known state)."""
        self._record("DELETED", obj)

    def recent(self) -> list[dict[str, str]]:
        """The recent events, oldest first."""
        with self._lock:
            return list(self._recent)

    def counts(self) -> dict[str, int]:
        """Events seen per type."""
        with self._lock:
            return dict(self._counts)


def _index_counts(informer: Any, names: list[str]) -> dict[str, dict[str, int]]:
    indexer = informer.get_indexer()
    return {
        name: {
            value: len(indexer.index_keys(name, value))
            for value in sorted(indexer.list_index_func_values(name))
        }
        for name in names
    }


def _render(resource: Any, log: EventLog, informer: Any, names: list[str]) -> Any:
    from rich.console import Group
    from rich.table import Table

    events = Table(title=f"{resource}: recent events ({len(informer.get_indexer())} cached)")
    for column in ("type", "key", "resourceVersion"):
        events.add_column(column)
    for event in log.recent():
        events.add_row(event["type"], event["key"], event["resourceVersion"])
    parts: list[Any] = [events]
    for name, counts in _index_counts(informer, names).items():
        table = Table(title=f"index {name}")
        table.add_column("value")
        table.add_column("objects", justify="right")
        for value, count in counts.items():
            table.add_row(value, str(count))
        parts.append(table)
    return Group(*parts)


def run_watch(args: argparse.Namespace, console: Any) -> int:
    """Run the watch command with parsed ``args``; returns the exit code.
    Blocks (the main thread) until a signal or ``--duration``."""
    as_json = args.output == "json"
    if args.selector:
        try:
            LabelSelector.parse(args.selector)
        except SelectorParseError as error:
            raise CommandError(f"--selector: {error}") from None
    indexes = list(args.index or [])
    names = [name for name, _ in indexes]
    if len(set(names)) != len(names):
        raise CommandError("--index: each index needs its own name")
    started = time.monotonic()
    print_lock = threading.Lock()

    def emit(event: dict[str, str]) -> None:
        with print_lock:
            print_json({"event": event})

    selector = args.selector or ""

    def tweak(options: ListOptions) -> ListOptions:
        return replace(options, label_selector=selector) if selector else options

    with StopSignals() as signals, configured_logging(args):
        cluster = connect(args.kubeconfig, args.context, args.embedded)
        factory = SharedInformerFactory(
            cluster.api_client, namespace=args.namespace, tweak_list_options=tweak
        )
        churn: Churn | None = None
        log = EventLog(emit if as_json else None)
        try:
            end = None if args.duration is None else started + args.duration
            check_answers(cluster, signals=signals, deadline=end)  # before discovery asks it
            try:
                resource = factory.resolve(args.resource)
            except UnknownResourceError as error:
                raise CommandError(str(error)) from None
            except ApiError as error:
                raise CommandError(f"the API server at {cluster.url}: {error}") from None
            check_reachable(cluster, resource, args.namespace, signals=signals, deadline=end)
            if cluster.server is not None:
                seed_cluster(cluster.server, random.Random(args.seed), args.objects)
            informer = factory.for_resource(resource)
            if indexes:
                informer.add_indexers({name: index_by_path(path) for name, path in indexes})
            registration = informer.add_event_handler(log)
            factory.start()
            deadline = None if args.duration is None else started + args.duration
            synced = False

            def remaining() -> float | None:
                return None if deadline is None else max(0.0, deadline - time.monotonic())

            if as_json:
                while not synced and not signals.event.is_set():
                    left = remaining()
                    if left is not None and left <= 0:
                        break
                    synced = registration.wait_synced(
                        REFRESH if left is None else min(REFRESH, left)
                    )
                if synced:

                    def warn(message: str) -> None:
                        print(f"kube-informers watch: warning: {message}", file=sys.stderr)

                    _warn_unmatched(informer, indexes, resource, warn)
                    with print_lock:
                        print_json(
                            {
                                "synced": True,
                                "objects": len(informer.get_indexer()),
                                "indexes": _index_counts(informer, names),
                            }
                        )
                    if cluster.server is not None:
                        churn = Churn(cluster.server, random.Random(args.seed + 1))
                        churn.start()
                    signals.event.wait(remaining())
            else:
                from rich.live import Live

                with Live(console=console, refresh_per_second=4, transient=False) as live:
                    while True:
                        if not synced and registration.has_synced():
                            synced = True
                            _warn_unmatched(
                                informer,
                                indexes,
                                resource,
                                lambda m: live.console.print(
                                    f"warning: {m}", style="yellow", markup=False, highlight=False
                                ),
                            )
                            if cluster.server is not None:
                                churn = Churn(cluster.server, random.Random(args.seed + 1))
                                churn.start()
                        live.update(_render(resource, log, informer, names))
                        left = remaining()
                        if left is not None and left <= 0:
                            break
                        if signals.event.wait(REFRESH if left is None else min(REFRESH, left)):
                            break
                    live.update(_render(resource, log, informer, names))
            if churn is not None:
                churn.stop()
            informer.wait_idle(10)
            registration.wait_idle(10)
            final: dict[str, Any] = {
                "resource": str(resource),
                "objects": len(informer.get_indexer()),
                "events": log.counts(),
                "indexes": _index_counts(informer, names),
                "stopped_by": "SIGINT"
                if signals.interrupted
                else "SIGTERM"
                if signals.received
                else "duration",
                "seconds": round(time.monotonic() - started, 3),
            }
        finally:
            if churn is not None:
                churn.stop()
            factory.shutdown()
            cluster.close()
    if as_json:
        with print_lock:
            print_json({"summary": final})
    else:
        seen = log.counts()
        counts = ", ".join(f"{kind} {count}" for kind, count in sorted(seen.items()))
        console.print(f"{final['objects']} {resource} cached; events: {counts or 'none'}")
    return EXIT_INTERRUPTED if signals.interrupted else 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        help="an index: NAME=PATH (node=spec.nodeName, image=spec.containers[0].image); "
        "escape dots inside a key: app=metadata.labels.app\\.kubernetes\\.io/name; repeatable",
    )
    watch.add_argument("--selector", "-l", help="a label selector (app=web,tier!=db)")
    add_cluster_options(watch)
    watch.set_defaults(run=_command)


def _command(args: argparse.Namespace) -> int:
    """``run`` of the subcommand: :func:`run_watch` on a rich console (stderr
    when stdout carries JSON)."""
    from rich.console import Console

    return run_watch(args, Console(stderr=args.output == "json"))
