"""The mirror controller end to end, against the API server emulator, on
SQLite and PostgreSQL: initial mirror, churn with API faults, terminating
objects, restart from the database, the periodic diff, PostgreSQL restarted
mid-run. Plus the reconciler's rules as plain functions."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from mirror_helpers import OUTAGE, Running, api_objects

from informers.cache.factory import SharedInformerFactory
from informers.testing import ApiServer
from informers.testing.fake import FakeClock
from informers.toolkit.runtime import Request, Result, TerminalError
from informers.wire.resources import PODS
from tests.postgres import PostgresServer
from tracker.errors import DatabaseUnavailableError, MirrorDatabaseError, SyncerConfigError
from tracker.mirror import Column, MirrorDatabase
from tracker.mirror.controller import (
    DIFF_EVERY,
    DIFF_JITTER,
    WORKERS,
    MirrorSyncer,
    SyncController,
    mirror_controller,
    sync_reconciler,
)
from tracker.mirror.live import LiveReader
from tracker.syncapi import ObjectKey

NAMESPACES = ["ns-0", "ns-1", "ns-2"]


# ------------------------------------------------------------------ helpers


@pytest.fixture
def server(api_server: ApiServer) -> ApiServer:
    for namespace in NAMESPACES:
        api_server.create("namespaces", {"metadata": {"name": namespace}})
    return api_server


@pytest.fixture
def api_client(server: ApiServer) -> Iterator[Any]:
    client = server.api_client()
    yield client
    client.close()


def new_pod(name: str, node: str = "n1", **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"node": node}, **metadata},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


#: The node a pod is labelled with (a pod's spec.nodeName cannot change).
COLUMNS = [Column("node", "metadata.labels.node")]


# ------------------------------------------------------------ reconciler


class RecordingSyncer:
    def __init__(self, fail_sync: BaseException | None = None) -> None:
        self.synced: list[Any] = []
        self.deleted: list[ObjectKey] = []
        self.fail_sync = fail_sync

    def new_object(self) -> dict[str, Any]:
        return {}

    def sources(self, factory: SharedInformerFactory) -> Sequence[Any]:
        return []

    def sync(self, obj: Any) -> None:
        if self.fail_sync is not None:
            raise self.fail_sync
        self.synced.append(obj)

    def delete(self, key: ObjectKey) -> None:
        self.deleted.append(key)

    def diff(self) -> list[ObjectKey]:
        return []


def test_reconciler_deletes_only_on_not_found() -> None:
    syncer = RecordingSyncer()
    reconcile = sync_reconciler(syncer, lambda key: None)
    assert reconcile(Request("ns", "a")) is None
    assert syncer.deleted == [ObjectKey("ns", "a")]
    assert syncer.synced == []


def test_reconciler_syncs_what_it_reads_terminating_or_not() -> None:
    syncer = RecordingSyncer()
    terminating = {"metadata": {"name": "a", "deletionTimestamp": "2024-05-01T12:00:00Z"}}
    sync_reconciler(syncer, lambda key: terminating)(Request("ns", "a"))
    assert syncer.synced == [terminating]
    assert syncer.deleted == []


def test_reconciler_read_errors_propagate_and_delete_nothing() -> None:
    syncer = RecordingSyncer()

    def broken(key: ObjectKey) -> Any:
        raise ConnectionResetError("the API server went away")

    with pytest.raises(ConnectionResetError):
        sync_reconciler(syncer, broken)(Request("ns", "a"))
    assert syncer.deleted == []
    assert syncer.synced == []


def test_reconciler_reads_the_key_of_the_request() -> None:
    seen: list[ObjectKey] = []
    sync_reconciler(RecordingSyncer(), seen.append)(Request("", "node-1"))
    assert seen == [ObjectKey("", "node-1")]


def test_an_object_that_can_never_be_stored_is_terminal(database: MirrorDatabase) -> None:
    store = database.store(PODS)

    class Store:
        def sync(self, obj: Any) -> None:
            store.sync(obj)

    syncer = RecordingSyncer()
    syncer.sync = Store().sync  # type: ignore[method-assign]
    with pytest.raises(TerminalError):
        sync_reconciler(syncer, lambda key: {"metadata": {"name": "a"}})(Request("ns", "a"))


def test_database_errors_are_retried_not_terminal() -> None:
    # An outage is requeued with backoff without counting as an error (the
    # database logs it once); a refused write is an error, retried too.
    syncer = RecordingSyncer(fail_sync=DatabaseUnavailableError("sync", "down"))
    result = sync_reconciler(syncer, lambda key: {"metadata": {"name": "a"}})(Request("ns", "a"))
    assert result == Result(requeue=True)
    refused = RecordingSyncer(fail_sync=MirrorDatabaseError("sync", "IntegrityError"))
    with pytest.raises(MirrorDatabaseError) as info:
        sync_reconciler(refused, lambda key: {"metadata": {"name": "a"}})(Request("ns", "a"))
    assert not isinstance(info.value, TerminalError)


# ---------------------------------------------------------- configuration


def test_defaults(database: MirrorDatabase, api_client: Any) -> None:
    factory = SharedInformerFactory(api_client)
    sc = mirror_controller(database.store(PODS), api_client, factory)
    assert sc.name == "db-sync-pods"
    assert (sc.workers, sc.diff_every, sc.diff_jitter) == (WORKERS, DIFF_EVERY, DIFF_JITTER)
    assert (WORKERS, DIFF_EVERY, DIFF_JITTER) == (4, 60.0, 0.1)
    factory.shutdown()


@pytest.mark.parametrize("name", ["db sync", "db-sync-\tpods", ""])
def test_a_name_with_whitespace_is_an_error_at_start(api_client: Any, name: str) -> None:
    factory = SharedInformerFactory(api_client)
    sc = SyncController("pods", RecordingSyncer(), lambda r: None, factory, name=name)
    with pytest.raises(SyncerConfigError, match="whitespace"):
        sc.start()
    factory.shutdown()


def test_no_reconcile_function_is_an_error_at_start(api_client: Any) -> None:
    factory = SharedInformerFactory(api_client)
    with pytest.raises(SyncerConfigError, match="no reconcile"):
        SyncController("pods", RecordingSyncer(), None, factory).start()
    factory.shutdown()


def test_no_sources_is_an_error_at_start(api_client: Any) -> None:
    factory = SharedInformerFactory(api_client)
    with pytest.raises(SyncerConfigError, match="no sources"):
        SyncController("pods", RecordingSyncer(), lambda r: None, factory).start()
    factory.shutdown()


def test_the_reader_must_read_the_stores_kind(database: MirrorDatabase, api_client: Any) -> None:
    from informers.wire.resources import SECRETS

    with pytest.raises(SyncerConfigError):
        MirrorSyncer(database.store(PODS), LiveReader(api_client, SECRETS))


def test_new_object_is_an_empty_object_of_the_kind(
    database: MirrorDatabase, api_client: Any
) -> None:
    syncer = MirrorSyncer(database.store(PODS), LiveReader(api_client, PODS))
    assert syncer.new_object() == {"apiVersion": "v1", "kind": "Pod"}


# -------------------------------------------------------------- end to end


def test_initial_mirror_equals_the_api(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    for i in range(20):
        server.create("pods", new_pod(f"p{i}", node=f"n{i % 3}"), NAMESPACES[i % 3])
    store = database.store(PODS, COLUMNS)
    with Running(store, api_client) as run:
        run.converge(server)
        assert store.writes == 20
        assert run.sc.diffs >= 1


def test_churn_with_api_faults_converges(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    rng = random.Random(7)
    names: dict[tuple[str, str], int] = {}
    for i in range(15):
        ns = NAMESPACES[i % 3]
        server.create("pods", new_pod(f"p{i}"), ns)
        names[(ns, f"p{i}")] = 0
    store = database.store(PODS, COLUMNS)
    with Running(store, api_client) as run:
        for step in range(80):
            roll = rng.random()
            if step % 10 == 3:
                server.fail_next(
                    rng.randint(1, 4), rng.choice([500, 503]), path_prefix="/api/v1/namespaces/"
                )
            if step % 25 == 11:
                server.drop_watches(mid_line=rng.random() < 0.5)
            if roll < 0.35 or not names:
                ns, name = rng.choice(NAMESPACES), f"q{step}"
                server.create("pods", new_pod(name, node=f"n{step % 4}"), ns)
                names[(ns, name)] = 0
            elif roll < 0.7:
                ns, name = rng.choice(sorted(names))
                obj = server.get("pods", name, ns)
                obj["metadata"]["labels"]["node"] = f"moved-{step}"
                server.update("pods", obj)
            elif roll < 0.9:
                ns, name = rng.choice(sorted(names))
                server.delete("pods", name, ns)
                del names[(ns, name)]
            else:  # recreate under the same name: a new uid
                ns, name = rng.choice(sorted(names))
                server.delete("pods", name, ns)
                server.create("pods", new_pod(name, node="reborn"), ns)
        run.converge(server)
        rows = store.rows()
        assert len(rows) == len(names)
        assert {r.key for r in rows.values()} == {ObjectKey(ns, n) for ns, n in names}
        assert all(
            r.columns["node"] == api_objects(server)[r.key]["metadata"]["labels"]["node"]
            for r in rows.values()
        )


def test_terminating_objects_are_synced_then_deleted(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    server.create("pods", new_pod("held", finalizers=["example.com/hold"]), "ns-0")
    store = database.store(PODS)
    with Running(store, api_client) as run:
        run.converge(server)
        server.delete("pods", "held", "ns-0")  # marked for deletion, kept by its finalizer
        run.converge(server)
        stored = store.get("ns-0/held")
        assert stored is not None
        assert stored["metadata"]["deletionTimestamp"]
        with database.engine.connect() as conn:
            stamp = conn.execute(sa.select(store.table.c.deletion_timestamp)).scalar_one()
        assert stamp is not None
        obj = server.get("pods", "held", "ns-0")
        obj["metadata"]["finalizers"] = []
        server.update("pods", obj)  # the finalizer goes: the object is deleted
        run.converge(server)
        assert store.count() == 0


def test_read_errors_requeue_and_never_delete(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    server.create("pods", new_pod("a"), "ns-0")
    store = database.store(PODS)
    with Running(store, api_client) as run:
        run.converge(server)
        server.fail_next(3, 500, path_prefix="/api/v1/namespaces/ns-0/pods/a")
        obj = server.get("pods", "a", "ns-0")
        obj["metadata"]["labels"]["node"] = "n9"
        server.update("pods", obj)
        assert run.reconciles.wait_failures(3, 30)
        assert store.get("ns-0/a") is not None  # never deleted on a read error
        run.converge(server)
        assert run.reconciles.failed_with.count("ApiError") == 3


def test_a_restart_resumes_from_the_database(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    for i in range(12):
        server.create("pods", new_pod(f"p{i}"), NAMESPACES[i % 3])
    with Running(database.store(PODS, COLUMNS), api_client) as first:
        first.converge(server)
        assert first.store.writes == 12

    # Unchanged: nothing is read again, nothing rewritten (the initial
    # relist brings no change; only its resourceVersion is recorded).
    with Running(database.store(PODS, COLUMNS), api_client) as second:
        second.converge(server)
        assert second.store.writes == 0
        assert second.reconciles.seen() == 0
        assert sum(second.reconciles.relist_changes) == 0

    # Changed while no controller ran: exactly those rows are written -- the
    # new and the changed one by the initial relist, the deleted one by the
    # reconcile of the key the first diff found (a live read said 404).
    server.delete("pods", "p0", "ns-0")
    server.create("pods", new_pod("new"), "ns-1")
    obj = server.get("pods", "p1", "ns-1")
    obj["metadata"]["labels"]["node"] = "elsewhere"
    server.update("pods", obj)
    with Running(database.store(PODS, COLUMNS), api_client) as third:
        third.converge(server)
        assert third.store.writes == 3
        assert sum(third.reconciles.relist_changes) == 2
        assert third.reconciles.seen() == 1


def test_the_periodic_diff_finds_orphans_and_runs_after_each_wait(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    server.create("pods", new_pod("live"), "ns-0")
    store = database.store(PODS)
    store.sync(
        {
            "kind": "Pod",
            "metadata": {"name": "ghost", "namespace": "ns-2", "uid": "g1", "resourceVersion": "1"},
        }
    )
    clock = FakeClock()
    with Running(store, api_client, clock=clock, diff_every=60.0, rng=random.Random(1)) as run:
        run.converge(server)
        assert store.get("ns-2/ghost") is None  # the first diff found it; a 404 deleted it
        assert run.sc.diffs == 1
        store.sync(
            {
                "kind": "Pod",
                "metadata": {
                    "name": "ghost2",
                    "namespace": "ns-2",
                    "uid": "g2",
                    "resourceVersion": "1",
                },
            }
        )
        clock.advance(59.0)
        assert run.sc.wait_idle(10)
        assert run.sc.diffs == 1  # not yet: the wait is at least 60 s
        clock.advance(60.0 * DIFF_JITTER + 1.0)  # past the longest jittered wait
        seen = run.reconciles.seen()
        assert run.reconciles.wait_after(seen, 10)
        run.converge(server)
        assert run.sc.diffs == 2
        assert store.get("ns-2/ghost2") is None


def test_postgres_restarted_mid_run_converges(
    postgres_server: PostgresServer, postgres_url: str, server: ApiServer, api_client: Any
) -> None:
    for i in range(6):
        server.create("pods", new_pod(f"p{i}"), NAMESPACES[i % 3])
    with MirrorDatabase(postgres_url) as db:
        store = db.store(PODS, COLUMNS)
        with Running(store, api_client) as run:
            run.converge(server)
            postgres_server.stop()
            try:
                for i in range(6, 12):
                    server.create("pods", new_pod(f"p{i}"), NAMESPACES[i % 3])
                server.delete("pods", "p0", "ns-0")
                obj = server.get("pods", "p1", "ns-1")
                obj["metadata"]["labels"]["node"] = "n7"
                server.update("pods", obj)
                assert run.reconciles.wait_failures(8, 30)  # each change failed at least once
            finally:
                postgres_server.start()
            run.converge(server)
            assert OUTAGE in run.reconciles.failed_with
            assert store.count() == 11
