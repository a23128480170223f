"""SQL mirror benchmarks, printed side by side in one run, on SQLite and PostgreSQL.

Run: ``PYTHONPATH=. python benchmarks/bench_mirror.py [N ...]`` from the
repository root (default: 10,000 and 100,000 pods); ``python -m pytest
benchmarks/bench_mirror.py`` runs it once at 10,000 pods as a smoke test.
PostgreSQL is measured when the server binaries are installed (a throwaway
server is started, as in the tests).

* **Initial mirror**: N pods written into an empty table by the path the
  mirror controller takes for a relist (the informer's initial list): the
  relist handler's work per object (``MirrorSyncer.needs_sync`` against the
  row snapshot), then ``MirrorSyncer.apply_relist`` -- the listed objects
  given back their ``apiVersion``/``kind``, row building, JSON encoding,
  upserts that compare before writing, the stale-incarnation check, in
  transactions of ``RELIST_BATCH`` (5,000) operations, the last one recording
  the list's resourceVersion. The floor is a bulk insert of the same rows into
  the same table (same indexes) with the same driver: ``cursor.executemany``
  of a plain ``INSERT`` in one transaction, JSON encoded by the same encoder.
  Target: within 2x.
* **End to end** (informational, one round): the same N pods in the API
  server emulator; the time from ``SyncController.start()`` until it returns
  (the informer's list over HTTP, decoded, through the delta FIFO and the
  handler, then written as above) -- the emulator's serving and the client's
  decoding are on the same 2 cores, so this is not compared with the floor.
* **Steady state**: events one at a time, each ``MirrorStore.sync`` its own
  transaction (an object with a new resourceVersion), against a floor of the
  same driver running one ``INSERT ... ON CONFLICT DO UPDATE`` and a commit per
  event. Also the rate of re-syncs of unchanged objects (nothing is written).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from informers.cache.factory import SharedInformerFactory
from informers.testing import ApiServer
from informers.toolkit.runtime import Request
from informers.wire.resources import PODS
from tests.postgres import PostgresServer, find_postgres_bindir
from tracker.mirror import Column, MirrorDatabase, MirrorStore
from tracker.mirror.controller import MirrorSyncer, mirror_controller
from tracker.mirror.jsoncolumn import json_dumps
from tracker.mirror.live import LiveReader
from tracker.mirror.relist import RelistChange, key_of

COLUMNS = [Column("node", "spec.nodeName"), Column("phase", "status.phase")]
TARGET = 2.0
ROUNDS = 3


def make_pod(i: int, rv: int = 1) -> dict[str, Any]:
    """A pod of realistic size (about 1.5 kB of JSON)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-{i:06d}",
            "namespace": f"team-{i % 20}",
            "uid": f"8d2f3c1e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(rv * 1_000_000 + i),
            "creationTimestamp": "2024-05-01T12:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6", "tier": f"t{i % 3}"},
            "annotations": {"prometheus.io/scrape": "true"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d4b9c8f6",
                    "uid": "1b1e1c2d-0000-4000-8000-000000000001",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": f"node-{i % 50}",
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "env": [{"name": "MODE", "value": "production"}],
                }
            ],
            "restartPolicy": "Always",
            "serviceAccountName": "default",
        },
        "status": {
            "phase": "Running",
            "podIP": f"10.0.{i // 250 % 250}.{i % 250}",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T12:00:05Z"}
            ],
            "containerStatuses": [
                {"name": "web", "ready": True, "restartCount": 0, "image": "nginx:1.27"}
            ],
        },
    }


class Target:
    """Where the measurements go: fresh SQLite files, or fresh databases on
    one PostgreSQL server."""

    def __init__(self, dialect: str, server: PostgresServer | None = None) -> None:
        self.dialect = dialect
        self._server = server
        self._tmp = tempfile.TemporaryDirectory(prefix="bench-mirror-")
        self._count = 0

    def fresh(self) -> MirrorDatabase:
        self._count += 1
        if self._server is None:
            return MirrorDatabase(f"sqlite:///{Path(self._tmp.name) / f'm{self._count}.db'}")
        return MirrorDatabase(self._server.create_database(f"bench_{self._count}"))

    def close(self) -> None:
        self._tmp.cleanup()


def _floor_row(obj: dict[str, Any]) -> tuple[Any, ...]:
    m = obj["metadata"]
    return (
        m["uid"],
        m.get("namespace", ""),
        m["name"],
        m["resourceVersion"],
        json_dumps(m.get("labels") or {}),
        json_dumps(m.get("annotations") or {}),
        json_dumps(obj),
        None,
        datetime.now(UTC),
        obj["spec"].get("nodeName"),
        obj["status"].get("phase"),
    )


def _insert_sql(dialect: str, table: str) -> str:
    names = (
        "uid, namespace, name, resource_version, labels, annotations, object, "
        "deletion_timestamp, synced_at, node, phase"
    )
    if dialect == "sqlite":
        return f"INSERT INTO {table} ({names}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    return (
        f"INSERT INTO {table} ({names}) VALUES "
        "(%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s, %s, %s)"
    )


def _raw(db: MirrorDatabase) -> Iterator[Any]:
    conn = db.engine.raw_connection()
    try:
        yield conn
    finally:
        conn.close()


def _bulk_insert(db: MirrorDatabase, store: MirrorStore, pods: list[dict[str, Any]]) -> float:
    sql = _insert_sql(db.dialect, store.table_name)
    for conn in _raw(db):
        cursor = conn.cursor()
        start = time.perf_counter()
        if db.dialect == "sqlite":
            cursor.execute("BEGIN")
        cursor.executemany(sql, [_floor_row(p) for p in pods])
        conn.commit()
        return time.perf_counter() - start
    raise AssertionError("unreachable")


class _Requeued:
    """The sink of ``apply_relist``: what it would requeue (nothing, here)."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def add(self, item: Request) -> None:
        self.requests.append(item)


def _listed(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod as an item of a list response: without apiVersion and kind."""
    return {k: v for k, v in pod.items() if k not in ("apiVersion", "kind")}


def _relist(store: MirrorStore, items: list[dict[str, Any]]) -> float:
    """The mirror controller's relist path, timed from the row snapshot."""
    start = time.perf_counter()
    syncer = MirrorSyncer(store, LiveReader(None, PODS))
    syncer.take_snapshot()
    changes: list[RelistChange] = []
    for obj in items:  # what the relist handler does per object
        key = key_of(obj)
        if key is not None and syncer.needs_sync(obj):
            changes.append((key, obj))
    sink = _Requeued()
    before = store.transactions
    syncer.apply_relist(changes, "12345", sink)
    elapsed = time.perf_counter() - start
    assert store.writes == len(items), (store.writes, len(items))
    assert not sink.requests, len(sink.requests)
    assert store.transactions - before == -(-len(items) // syncer.relist_batch)
    assert store.resource_version == "12345"
    return elapsed


def _mirror(store: MirrorStore, pods: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    with store.batch() as batch:
        for pod in pods:
            batch.sync(pod)
    elapsed = time.perf_counter() - start
    assert batch.written == len(pods), (batch.written, len(pods))
    return elapsed


def _median(run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(ROUNDS))


def bench_initial(target: Target, n: int) -> tuple[float, float]:
    pods = [make_pod(i) for i in range(n)]
    items = [_listed(p) for p in pods]

    def impl() -> float:
        with target.fresh() as db:
            return _relist(db.store(PODS, COLUMNS), items)

    def floor() -> float:
        with target.fresh() as db:
            return _bulk_insert(db, db.store(PODS, COLUMNS), pods)

    ours, base = _median(impl), _median(floor)
    verdict = "met" if ours / base <= TARGET else "MISSED"
    print(
        f"{target.dialect:<10} initial mirror of {n:>7,} pods: {n / ours:>9,.0f} rows/s; "
        f"bulk insert {n / base:>9,.0f} rows/s; ratio {ours / base:4.2f}x "
        f"(target <= {TARGET:.0f}x: {verdict})"
    )
    return ours, base


def bench_end_to_end(target: Target, n: int) -> None:
    with ApiServer() as server:
        for ns in sorted({p["metadata"]["namespace"] for p in (make_pod(i) for i in range(20))}):
            server.create("namespaces", {"metadata": {"name": ns}})
        created = [make_pod(i) for i in range(n)]
        for pod in created:
            for field in ("uid", "resourceVersion", "creationTimestamp"):
                del pod["metadata"][field]
        server.create_many("pods", created)
        client = server.api_client()
        factory = SharedInformerFactory(client)
        try:
            with target.fresh() as db:
                store = db.store(PODS, COLUMNS)
                sc = mirror_controller(store, client, factory, diff_every=3600.0, sync_timeout=None)
                start = time.perf_counter()
                sc.start()
                elapsed = time.perf_counter() - start
                sc.stop()
                rows, transactions = store.count(), store.transactions
        finally:
            factory.shutdown()
            client.close()
    assert rows == n, (rows, n)
    print(
        f"{target.dialect:<10} end to end (emulator list -> informer -> relist write) of "
        f"{n:>7,} pods: {n / elapsed:>9,.0f} rows/s, {elapsed:.1f} s, "
        f"{transactions} write transaction(s)"
    )


def bench_steady(target: Target, n: int, events: int) -> None:
    pods = [make_pod(i) for i in range(n)]
    changed = [make_pod(i % n, rv=2 + i // n) for i in range(events)]
    with target.fresh() as db:
        store = db.store(PODS, COLUMNS)
        _mirror(store, pods)
        start = time.perf_counter()
        for pod in changed:
            store.sync(pod)
        ours = events / (time.perf_counter() - start)
        before = store.writes
        start = time.perf_counter()
        for pod in changed[-min(events, n) :]:
            store.sync(pod)
        unchanged = min(events, n) / (time.perf_counter() - start)
        assert store.writes == before, "re-syncing unchanged objects wrote rows"

        sql = _insert_sql(db.dialect, store.table_name) + (
            " ON CONFLICT (uid) DO UPDATE SET resource_version = excluded.resource_version, "
            "object = excluded.object, synced_at = excluded.synced_at"
        )
        again = [make_pod(i % n, rv=1000 + i // n) for i in range(events)]
        for conn in _raw(db):
            cursor = conn.cursor()
            start = time.perf_counter()
            for pod in again:
                if db.dialect == "sqlite":
                    cursor.execute("BEGIN")
                cursor.execute(sql, _floor_row(pod))
                conn.commit()
            base = events / (time.perf_counter() - start)
    print(
        f"{target.dialect:<10} steady state over {n:>7,} rows: {ours:>9,.0f} events/s; "
        f"raw upsert + commit {base:>9,.0f} events/s; ratio {base / ours:4.2f}x; "
        f"unchanged re-syncs {unchanged:,.0f}/s (no writes)"
    )


def targets() -> Iterator[Target]:
    sqlite_target = Target("sqlite")
    try:
        yield sqlite_target
    finally:
        sqlite_target.close()
    if find_postgres_bindir() is None:
        print("postgresql: server binaries not installed; skipped")
        return
    with PostgresServer() as server:
        pg_target = Target("postgresql", server)
        try:
            yield pg_target
        finally:
            pg_target.close()


def run(sizes: list[int], events: int) -> list[tuple[str, int, float, float]]:
    results = []
    for target in targets():
        for n in sizes:
            ours, base = bench_initial(target, n)
            results.append((target.dialect, n, ours, base))
        for n in sizes:
            bench_end_to_end(target, n)
        bench_steady(target, sizes[0], events)
    return results


def test_bench_mirror_smoke() -> None:
    """One run at 10,000 pods (pytest collects benchmarks as a smoke test)."""
    global ROUNDS  # noqa: PLW0603 - a smoke run needs one round only
    ROUNDS = 1
    results = run([10_000], events=500)
    assert results


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    run(sizes, events=2_000)


if __name__ == "__main__":
    main()
