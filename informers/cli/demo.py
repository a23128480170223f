"""The ``kube-informers demo`` command: a real informer against an embedded
API server emulator, through churn and the failures a real cluster throws.

It starts :class:`~informers.testing.ApiServer` on a free loopback port,
creates pods, and runs a :class:`~informers.SharedInformerFactory` over HTTP
with a node index and a counting handler. Then it writes to the server in
phases, each with a fault:

1. **churn**: creates, updates and deletes while the watch is healthy;
2. **missed deletes**: the watch stalls, pods are deleted, history is
   compacted and the stream is cut, so the reflector's re-watch gets
   410 Gone and it relists; the deletions it missed reach the handler as
   ``DeletedFinalStateUnknown`` tombstones;
3. **throttling**: the stream is cut and the next requests get 429 with
   ``Retry-After``; the reflector waits as told and re-watches from where it
   was, without a relist.

After each phase it waits (on the reflector's state, not by sleeping) until
the informer caught up, and checks that the cache equals the server.

Around that, the rest of the platform runs on the same factory: a realistic
cluster (namespaces, nodes, deployments, replicasets, pods owned by their
ReplicaSets, which are owned by their Deployments), informers for each kind,
a typed :class:`tracker.ResourceTracker` of the pods, the
:class:`tracker.IndexSynchronizationTracker` (fires once every kind synced),
a small controller on :mod:`informers.toolkit.runtime` counting the pods of each
ReplicaSet (pod events map to their owner through :func:`enqueue_owner`, the
count is an index lookup), and, when the ``mirror`` extra is installed, the
SQL mirror of every kind into a temporary SQLite file (or ``db``). At the end
the objects per kind in the API are compared with the rows in the database.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cache.reflector import Watching
from informers.cli._common import (
    MIRROR_EXTRA_HINT,
    CommandError,
    add_logging_options,
    configured_logging,
    positive_float,
    positive_int,
    safe_url,
)
from informers.testing.apiserver import ApiServer
from informers.toolkit.runtime import Controller, InformerSource, Request, enqueue_owner
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.wire.resources import DEPLOYMENTS, NAMESPACES, NODES, PODS, REPLICASETS, Resource
from tracker import (
    EventBus,
    IndexSynchronizationTracker,
    IndexSynchronizedEvent,
    ResourceTracker,
    SyncEventPublisher,
)

__all__ = ["DemoReport", "MirrorCount", "PhaseReport", "add_parser", "run_command", "run_demo"]

NODE_INDEX = "node"
OWNER_INDEX = "owner"
#: The kinds the demo runs informers for (and mirrors), in creation order.
DEMO_KINDS: tuple[Resource, ...] = (NAMESPACES, NODES, DEPLOYMENTS, REPLICASETS, PODS)
_NODES = 4
_NAMESPACES = ("default", "shop", "payments")


def _node_index(obj: Any) -> list[str]:
    node = obj.get("spec", {}).get("nodeName")
    return [node] if node else []


def _owner_index(obj: Any) -> list[str]:
    """The ``namespace/name`` of the ReplicaSet that controls a pod."""
    meta = obj.get("metadata", {})
    return [
        f"{meta.get('namespace', '')}/{ref['name']}"
        for ref in meta.get("ownerReferences") or []
        if ref.get("kind") == "ReplicaSet" and ref.get("controller")
    ]


@dataclass
class MirrorCount:
    """One mirrored kind at the end: objects in the API, rows in the database,
    and whether the rows equal the objects (UIDs, resourceVersions, columns)."""

    resource: str
    api_objects: int
    db_rows: int
    matches: bool


@dataclass
class PhaseReport:
    """One phase: what was written, how long the informer took to catch up,
    and whether its cache then equalled the server's state."""

    name: str
    writes: int
    seconds: float
    cache_matches_server: bool
    cached: int


@dataclass
class DemoReport:
    """Everything the demo saw."""

    initial_pods: int = 0
    sync_seconds: float = 0.0
    phases: list[PhaseReport] = field(default_factory=list)
    events: Counter[str] = field(default_factory=Counter)
    watch_errors: Counter[str] = field(default_factory=Counter)
    by_node: dict[str, int] = field(default_factory=dict)
    #: objects per kind created before the informers started
    cluster: dict[str, int] = field(default_factory=dict)
    #: seconds from the factory's start until the index tracker fired
    index_synced_seconds: float = 0.0
    #: the counts the index tracker fired with
    index_counts: dict[str, int] = field(default_factory=dict)
    #: pods the typed ResourceTracker knew at the end
    tracked_pods: int = 0
    #: reconciles of the pods-per-replicaset controller, and its last counts
    reconciles: int = 0
    pods_per_replicaset: dict[str, int] = field(default_factory=dict)
    #: index lookups made (node and owner indexes)
    index_lookups: int = 0
    #: the mirror at the end (empty when skipped) and why it was skipped
    mirror: list[MirrorCount] = field(default_factory=list)
    mirror_skipped: str = ""
    mirror_db: str = ""

    @property
    def converged(self) -> bool:
        """Every phase ended with cache == server, every ReplicaSet's pod count
        adds up, and every mirrored table equals its kind."""
        return (
            all(phase.cache_matches_server for phase in self.phases)
            and all(count.matches for count in self.mirror)
            and sum(self.pods_per_replicaset.values())
            == (self.phases[-1].cached if self.phases else 0)
        )


class _CountingHandler:
    """The demo's event handler (any object with the three ``on_*`` methods
    is one): counts what it is told, on its own listener thread. The lock
    only guards the counter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._count("added (initial list)" if is_in_initial_list else "added")

    def on_update(self, old: Any, new: Any) -> None:
        self._count("updated")

    def on_delete(self, obj: Any) -> None:
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        self._count("deleted (tombstone)" if tombstone else "deleted")


def _owner_ref(owner: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _pod(rng: random.Random, number: int, owners: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod owned by one of the ReplicaSets ``owners``, on one of the nodes."""
    owner = rng.choice(owners)
    app = owner["metadata"]["labels"]["app"]
    return {
        "metadata": {
            "name": f"{owner['metadata']['name']}-{number}",
            "namespace": owner["metadata"]["namespace"],
            "labels": {"app": app},
            "ownerReferences": [_owner_ref(owner, "apps/v1", "ReplicaSet")],
        },
        "spec": {
            "nodeName": f"node-{rng.randrange(_NODES)}",
            "containers": [{"name": "main", "image": f"example/{app}:1"}],
        },
    }


def _workloads(server: ApiServer, rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Create ``count`` Deployments, each with one ReplicaSet it owns; returns
    the ReplicaSets."""
    replicasets = []
    for number in range(count):
        namespace = _NAMESPACES[number % len(_NAMESPACES)]
        app = f"{rng.choice(['web', 'api', 'worker', 'cart', 'search'])}-{number}"
        labels = {"app": app}
        template = {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "main", "image": f"example/{app}:1"}]},
        }
        spec = {"replicas": 3, "selector": {"matchLabels": labels}, "template": template}
        deployment = server.create(
            DEPLOYMENTS,
            {"metadata": {"name": app, "namespace": namespace, "labels": labels}, "spec": spec},
        )
        rs_labels = {**labels, "pod-template-hash": f"{number:x}"}
        replicasets.append(
            server.create(
                REPLICASETS,
                {
                    "metadata": {
                        "name": f"{app}-{number:x}",
                        "namespace": namespace,
                        "labels": rs_labels,
                        "ownerReferences": [_owner_ref(deployment, "apps/v1", "Deployment")],
                    },
                    "spec": {
                        **spec,
                        "selector": {"matchLabels": rs_labels},
                        "template": {**template, "metadata": {"labels": rs_labels}},
                    },
                },
            )
        )
    return replicasets


class _ReplicaSetPods:
    """The demo's controller on :mod:`informers.toolkit.runtime`: reconciles a
    ReplicaSet (its own events, and its pods' through the owner mapping) by
    counting its pods with one lookup in the pods' owner index. The lock
    guards ``counts``, ``reconciles`` and ``lookups``."""

    def __init__(self, pods: Any) -> None:
        self._pods = pods
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.reconciles = 0

    def reconcile(self, request: Request) -> None:
        key = f"{request.namespace}/{request.name}"
        count = len(self._pods.get_indexer().index_keys(OWNER_INDEX, key))
        with self._lock:
            self.reconciles += 1
            if count:
                self.counts[key] = count
            else:
                self.counts.pop(key, None)

    def snapshot(self) -> tuple[int, dict[str, int]]:
        with self._lock:
            return self.reconciles, dict(self.counts)


def _mirror_available() -> str:
    """Why the mirror cannot run here ("" when it can)."""
    try:
        import sqlalchemy  # noqa: F401
    except ImportError:
        return "SQLAlchemy is not installed: pip install 'kube-informers[mirror]'"
    return ""


def run_demo(
    pods: int = 200,
    writes: int = 300,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    fault: Callable[[str | None], None] | None = None,
    *,
    duration: float | None = None,
    db: str | None = None,
    mirror: bool = True,
) -> DemoReport:
    """Run the whole demo and return what it saw.

    ``pods`` pods are created before the informers start (in ``pods // 10``
    Deployments, at least one, each with one ReplicaSet); the churn phase
    makes ``writes`` writes, or writes for ``duration`` seconds when given.
    ``db`` is the mirror's database URL (default: a SQLite file in a
    temporary directory, removed afterwards); ``mirror=False``, or a missing
    ``mirror`` extra, skips the mirror (:attr:`DemoReport.mirror_skipped`
    says why).

    ``progress(message)`` is told what happens; ``fault(description)`` is
    told of each fault the demo injects on purpose, when it injects it, and
    ``fault(None)`` once the informer recovered from it (so that a caller can
    mark the warnings in between as expected).

    Blocks until every phase converged (raising :class:`TimeoutError` if the
    informer does not catch up within 60 s of a phase) and every thread it
    started has been stopped and joined (on any exception too, Ctrl-C's
    :class:`KeyboardInterrupt` included).
    """
    say = progress or (lambda _message: None)
    injected = fault or (lambda _description: None)
    rng = random.Random(seed)
    report = DemoReport(initial_pods=pods)
    counter = _CountingHandler()
    skipped = "" if mirror else "not asked for"
    if not skipped:
        skipped = _mirror_available()
        if skipped and db is not None:
            raise CommandError(f"--db: {skipped}")
    report.mirror_skipped = skipped
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(ApiServer())
        for namespace in _NAMESPACES[1:]:
            server.create(NAMESPACES, {"metadata": {"name": namespace}})
        for number in range(_NODES):
            server.create(NODES, {"metadata": {"name": f"node-{number}"}, "spec": {}})
        owners = _workloads(server, rng, max(1, pods // 10))
        live: dict[str, dict[str, Any]] = {}
        for number in range(pods):
            pod = _pod(rng, number, owners)
            live[meta_namespace_key(pod)] = server.create(PODS, pod)
        report.cluster = {str(kind): len(server.list_objects(kind)) for kind in DEMO_KINDS}
        say(f"emulator at {server.url} holds {pods} pods")
        say(
            "cluster: "
            + ", ".join(f"{count} {kind}" for kind, count in report.cluster.items())
            + " (pods owned by ReplicaSets, owned by Deployments)"
        )

        client = server.api_client()
        stack.callback(client.close)
        factory = SharedInformerFactory(client)
        stack.callback(factory.shutdown)
        informers = {kind: factory.for_resource(kind) for kind in DEMO_KINDS}
        informer = informers[PODS]
        informer.add_indexers({NODE_INDEX: _node_index, OWNER_INDEX: _owner_index})
        informer.set_watch_error_handler(
            lambda _reflector, error: report.watch_errors.update([type(error).__name__])
        )
        registration = informer.add_event_handler(counter)

        # The typed tracker of the pods, and the index tracker: fires once
        # every kind has synced.
        tracked = stack.enter_context(ResourceTracker(informer))
        bus = EventBus()
        publisher = stack.enter_context(SyncEventPublisher(bus, list(informers.values())))
        index = IndexSynchronizationTracker(bus, publisher.resource_names)
        ready = bus.subscribe("demo", 1, IndexSynchronizedEvent.event_type)
        stack.callback(ready.close)
        bus.start()
        index.start()

        def stop_index() -> None:
            index.stop()
            index.join(timeout=10)

        stack.callback(stop_index)

        # A controller on the runtime: pods per ReplicaSet.
        per_rs = _ReplicaSetPods(informer)
        controller = Controller(
            "pods-per-replicaset",
            per_rs.reconcile,
            [
                InformerSource(informers[REPLICASETS]),
                InformerSource(informer, map_func=enqueue_owner(REPLICASETS)),
            ],
            workers=2,
        )

        started = time.monotonic()
        factory.start()
        factory.wait_for_cache_sync(timeout=60)  # raises CacheSyncTimeoutError
        if not registration.wait_synced(60):
            raise TimeoutError("the demo's event handler did not sync")
        report.sync_seconds = time.monotonic() - started
        say(f"synced {len(informer.get_indexer())} pods in {report.sync_seconds:.2f} s")
        fired = ready.get(timeout=60)
        report.index_synced_seconds = time.monotonic() - started
        report.index_counts = dict(fired.resource_counts)  # type: ignore[attr-defined]
        say(
            f"index synchronization tracker fired: all {len(report.index_counts)} kinds "
            f"synced after {report.index_synced_seconds:.2f} s"
        )
        controller.start()
        stack.callback(controller.stop)

        mirrors: list[Any] = []
        if not skipped:
            mirrors = _start_mirror(stack, report, client=client, factory=factory, db=db, say=say)

        def catch_up(name: str) -> None:
            """Wait until the informer has applied every write made so far
            and the handler has been told."""
            target = server.resource_version
            # Watching again from there: a relist's items are in the queue.
            caught_up = informer.reflector is not None and informer.reflector.wait_for(
                lambda state: (
                    isinstance(state, Watching) and int(state.mem.last_sync_rv or 0) >= target
                ),
                60,
            )
            if not caught_up or not informer.wait_idle(60) or not registration.wait_idle(60):
                raise TimeoutError(f"informer did not catch up in phase {name!r}")

        def converge(name: str, done_writes: int, began: float) -> None:
            catch_up(name)
            server_state = {
                meta_namespace_key(obj): obj["metadata"]["resourceVersion"]
                for obj in server.list_objects(PODS)
            }
            cache_state = {
                meta_namespace_key(obj): obj["metadata"]["resourceVersion"]
                for obj in informer.get_indexer().list()
            }
            phase = PhaseReport(
                name,
                done_writes,
                time.monotonic() - began,
                cache_state == server_state,
                len(cache_state),
            )
            report.phases.append(phase)
            injected(None)
            verdict = "cache == server" if phase.cache_matches_server else "CACHE DIFFERS"
            say(f"{name}: {done_writes} writes, caught up in {phase.seconds:.2f} s, {verdict}")

        next_number = pods

        def write_one() -> None:
            nonlocal next_number
            roll = rng.random()
            if roll < 0.3 or not live:
                pod = _pod(rng, next_number, owners)
                next_number += 1
                live[meta_namespace_key(pod)] = server.create(PODS, pod)
            elif roll < 0.8:
                key = rng.choice(sorted(live))
                obj = live[key]
                changed = {**obj, "metadata": {**obj["metadata"]}}
                labels = dict(changed["metadata"].get("labels", {}))
                labels["revision"] = str(rng.randrange(1000))
                changed["metadata"]["labels"] = labels
                live[key] = server.update(PODS, changed)
            else:
                key = rng.choice(sorted(live))
                namespace, _, name = key.partition("/")
                server.delete(PODS, name, namespace)
                del live[key]

        def churn(count: int) -> int:
            for _ in range(count):
                write_one()
            return count

        def churn_for(seconds: float) -> int:
            done = 0
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                write_one()
                done += 1
            return done

        began = time.monotonic()
        converge("churn", churn(writes) if duration is None else churn_for(duration), began)

        began = time.monotonic()
        injected(
            "watches stalled, a tenth of the pods deleted unseen, history compacted, "
            "watches dropped: expect a 410 Expired and a relist with tombstones"
        )
        server.stall_watches(60)
        victims = rng.sample(sorted(live), k=max(1, len(live) // 10))
        for key in victims:
            namespace, _, name = key.partition("/")
            server.delete(PODS, name, namespace)
            del live[key]
        server.compact()
        server.drop_watches()
        server.stall_watches(0)
        converge("missed deletes (410 relist)", len(victims), began)

        began = time.monotonic()
        written = churn(max(1, writes // 20))
        # Once these writes arrived, the watch that carried them is open:
        # the fault below is sure to cut a live stream.
        catch_up("throttled")
        injected("the next 2 pod requests answer 429 Retry-After: 1, watches dropped")
        server.fail_next(2, 429, retry_after=1, path_prefix="/api/v1/pods")
        server.drop_watches()
        written += churn(max(1, writes // 20))  # made while the reflector is throttled
        converge("throttled (429 Retry-After)", written, began)

        indexer = informer.get_indexer()
        report.by_node = {
            node: len(indexer.index_keys(NODE_INDEX, node))
            for node in sorted(indexer.list_index_func_values(NODE_INDEX))
        }
        report.index_lookups += len(report.by_node)
        report.tracked_pods = len(tracked.known_resources())
        if not controller.wait_idle(60):
            raise TimeoutError("the pods-per-replicaset controller did not settle")
        report.reconciles, report.pods_per_replicaset = per_rs.snapshot()
        report.index_lookups += report.reconciles
        for kind, store, sync in mirrors:
            if not sync.wait_idle(60):
                raise TimeoutError(f"the mirror of {kind} did not settle")
            report.mirror.append(_compare(server, kind, store))
    report.events = counter.counts
    return report


def _start_mirror(
    stack: contextlib.ExitStack,
    report: DemoReport,
    *,
    client: Any,
    factory: SharedInformerFactory,
    db: str | None,
    say: Callable[[str], None],
) -> list[Any]:
    """Open the database (a temporary SQLite file unless ``db``) and start a
    mirror controller per kind; their stop is pushed on ``stack``. Returns
    ``(kind, store, controller)`` triples."""
    import sqlalchemy as sa

    from tracker.errors import MirrorError

    try:
        return _open_mirror(stack, report, client=client, factory=factory, db=db, say=say)
    except (MirrorError, sa.exc.SQLAlchemyError) as error:
        raise CommandError(f"database {safe_url(db or '')}: {error}") from None
    except ImportError as error:  # the URL's driver (psycopg)
        raise CommandError(f"database driver missing ({error}): {MIRROR_EXTRA_HINT}") from None


def _open_mirror(
    stack: contextlib.ExitStack,
    report: DemoReport,
    *,
    client: Any,
    factory: SharedInformerFactory,
    db: str | None,
    say: Callable[[str], None],
) -> list[Any]:
    from tracker.mirror import Column, MirrorDatabase, mirror_controller

    if db is None:
        directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="kube-informers-"))
        db = f"sqlite:///{directory}/demo.db"
        report.mirror_db = "a temporary SQLite file"
    else:
        report.mirror_db = db
    database = stack.enter_context(MirrorDatabase(db))
    columns = {PODS: [Column("node", "spec.nodeName"), Column("phase", "status.phase")]}
    mirrors = []
    began = time.monotonic()
    for kind in DEMO_KINDS:
        store = database.store(kind, columns.get(kind, ()))
        sync = mirror_controller(store, client, factory)
        sync.start()
        stack.callback(sync.stop)
        mirrors.append((kind, store, sync))
    for kind, _store, sync in mirrors:
        if not sync.wait_idle(60):
            raise TimeoutError(f"the mirror of {kind} did not finish its initial sync")
    rows = sum(store.count() for _kind, store, _sync in mirrors)
    say(
        f"mirror: {rows} rows in {len(mirrors)} tables of {report.mirror_db} "
        f"after {time.monotonic() - began:.2f} s"
    )
    return mirrors


def _compare(server: ApiServer, kind: Resource, store: Any) -> MirrorCount:
    from tracker.syncapi import diff

    listed = server.list_objects(kind)
    differing = diff(listed, store.rows(), store.matches, store.key)
    return MirrorCount(str(kind), len(listed), store.count(), not differing)


def print_summary(report: DemoReport, console: Any) -> None:
    """Print ``report`` as rich tables on ``console``: the phases, the
    events, the platform's numbers and the API against the database."""
    from rich.markup import escape
    from rich.table import Table

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
    console.print(
        f"time to sync: {report.sync_seconds:.2f} s (pods); the index synchronization "
        f"tracker fired after {report.index_synced_seconds:.2f} s with {report.index_counts}"
    )
    rs_pods = sum(report.pods_per_replicaset.values())
    console.print(
        f"pods-per-replicaset controller: {report.reconciles} reconciles, "
        f"{rs_pods} pods in {len(report.pods_per_replicaset)} ReplicaSets; "
        f"{report.index_lookups} index lookups; the typed pod tracker knows "
        f"{report.tracked_pods} pods"
    )
    if not report.mirror:
        # escaped: the hint's "[mirror]" is not rich markup
        console.print(f"[yellow]mirror skipped[/]: {escape(report.mirror_skipped)}")
        return
    table = Table(title=f"API vs database ({report.mirror_db})")
    for column in ("kind", "objects in the API", "rows in the DB", "match"):
        table.add_column(column)
    for kind in report.mirror:
        table.add_row(
            kind.resource,
            str(kind.api_objects),
            str(kind.db_rows),
            "[green]yes[/]" if kind.matches else "[red]NO[/]",
        )
    console.print(table)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    add_logging_options(demo, default_level="warning")
    demo.set_defaults(run=run_command)


class _DeliberateFaults(logging.Filter):
    """Prefixes warnings logged while a deliberate fault is in force."""

    active = False

    def filter(self, record: logging.LogRecord) -> bool:
        if self.active and record.levelno >= logging.WARNING:
            record.msg = f"(deliberate fault, expected) {record.msg}"
        return True


def run_command(args: argparse.Namespace) -> int:
    """Run the demo and print what happened; 0 when every phase ended with
    the cache equal to the server's state and the database equal to the API."""
    from rich.console import Console
    from rich.logging import RichHandler

    console = Console()
    # The reflector's warnings (410, 429, dropped streams) are part of the show;
    # while a deliberate fault is in force they are marked as expected. Shown
    # by rich, unless --log-format or --log-level ask for plain log lines.
    marker = _DeliberateFaults()
    handler: logging.Handler
    plain = contextlib.ExitStack()
    if args.log_format == "text" and args.log_level is None:
        handler = RichHandler(console=console, show_path=False, show_time=False)
        logging.getLogger("informers").addHandler(handler)
    else:
        handler = plain.enter_context(configured_logging(args))
    handler.addFilter(marker)

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
        handler.removeFilter(marker)
        plain.close()
    print_summary(report, console)
    return 0 if report.converged else 1
