"""Batched writes of the mirror: a relist reaches the database in
``ceil(N / relist_batch)`` transactions, a burst a worker drained is one
transaction, a failed transaction leaves nothing partial and its keys are
retried, keys a worker holds during a relist are reconciled again; the
runtime controller's ``reconcile_batch``; a hypothesis property of the relist
protocol against a model. On SQLite and PostgreSQL, against the emulator."""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mirror_helpers import Running, api_objects

from informers.testing import ApiServer
from informers.testing.fake import FakeClock
from informers.toolkit.runtime import Controller, PeriodicSource, Request, Result
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue
from informers.wire.resources import PODS
from tracker.mirror import Column, MirrorDatabase, MirrorStore, create_mirror_engine
from tracker.mirror.controller import (
    BURST_BATCH,
    RELIST_BATCH,
    MirrorSyncer,
)
from tracker.mirror.live import LiveReader
from tracker.mirror.relist import RelistChange
from tracker.syncapi import ObjectKey

NAMESPACES = ["ns-0", "ns-1"]
#: The node a pod is labelled with (a pod's spec.nodeName cannot change).
COLUMNS = [Column("node", "metadata.labels.node")]


# ------------------------------------------------------------------ helpers


def new_pod(name: str, node: str = "n1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"node": node}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def pod(name: str, uid: str, rv: str = "1", namespace: str = "ns-0") -> dict[str, Any]:
    """A pod as a list item (no apiVersion/kind), with its uid and rv."""
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": rv},
        "spec": {"nodeName": "n1"},
    }


def refuse_name(db: MirrorDatabase, name: str) -> None:
    """A trigger that makes the database refuse to write a row named ``name``."""
    with db.engine.begin() as conn:
        if db.dialect == "sqlite":
            conn.execute(
                sa.text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON pods "
                    f"WHEN NEW.name = '{name}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )
        else:
            conn.execute(
                sa.text(
                    "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                    f"IF NEW.name = '{name}' THEN RAISE EXCEPTION 'refused'; END IF; "
                    "RETURN NEW; END $$ LANGUAGE plpgsql"
                )
            )
            conn.execute(
                sa.text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON pods "
                    "FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            )


def allow_all(db: MirrorDatabase) -> None:
    with db.engine.begin() as conn:
        conn.execute(
            sa.text("DROP TRIGGER refuse" + ("" if db.dialect == "sqlite" else " ON pods"))
        )


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


def syncer_of(store: MirrorStore, relist_batch: int) -> MirrorSyncer:
    """A syncer whose relist path is driven by hand (it never reads live)."""
    syncer = MirrorSyncer(store, LiveReader(None, PODS), relist_batch=relist_batch)
    syncer.take_snapshot()
    return syncer


def changes_of(objects: Sequence[dict[str, Any]]) -> list[RelistChange]:
    return [(ObjectKey.of(o), o) for o in objects]


def queue_on(clock: FakeClock) -> RateLimitingQueue[Request]:
    return RateLimitingQueue(ItemExponentialFailureRateLimiter(1.0, 60.0), clock=clock)


def drain(queue: RateLimitingQueue[Request]) -> set[Request]:
    taken = set()
    while True:
        item, _ = queue.get(0.0)
        if item is None:
            return taken
        taken.add(item)
        queue.done(item)


# ---------------------------------------------------------------- defaults


def test_batch_sizes() -> None:
    assert (RELIST_BATCH, BURST_BATCH) == (5000, 100)


# ------------------------------------------------------- the relist path


def test_a_relist_takes_ceil_n_over_batch_transactions(database: MirrorDatabase) -> None:
    store = database.store(PODS, COLUMNS)
    syncer = syncer_of(store, relist_batch=7)
    objects = [pod(f"p{i}", f"u{i}", namespace=NAMESPACES[i % 2]) for i in range(23)]
    clock = FakeClock()
    queue = queue_on(clock)
    before = store.transactions
    syncer.apply_relist(changes_of(objects), "40", queue)
    assert store.transactions - before == math.ceil(23 / 7)
    assert store.count() == 23
    assert store.resource_version == "40"
    assert len(queue) == 0
    assert queue.num_delayed() == 0
    stored = store.get("ns-0/p0")
    assert stored is not None
    assert (stored["apiVersion"], stored["kind"]) == ("v1", "Pod")  # put back, as a GET has them
    assert "kind" not in objects[0]  # the listed object is not mutated
    queue.shutdown()


def test_an_empty_relist_records_only_its_resource_version(database: MirrorDatabase) -> None:
    store = database.store(PODS)
    syncer = syncer_of(store, relist_batch=5)
    queue = queue_on(FakeClock())
    syncer.apply_relist([], "77", queue)
    assert store.transactions == 1
    assert store.writes == 0
    assert store.resource_version == "77"
    syncer.apply_relist([], "", queue)  # a replay of an empty cache: nothing at all
    assert store.transactions == 1
    queue.shutdown()


def test_a_refused_relist_chunk_leaves_nothing_partial_and_its_keys_retry(
    database: MirrorDatabase,
) -> None:
    store = database.store(PODS)
    refuse_name(database, "p7")
    syncer = syncer_of(store, relist_batch=5)
    objects = [pod(f"p{i}", f"u{i}") for i in range(12)]  # chunks p0-4, p5-9, p10-11
    clock = FakeClock()
    queue = queue_on(clock)
    syncer.apply_relist(changes_of(objects), "90", queue)
    # The refused transaction rolled back whole; its changes were then each
    # tried alone, so only the refused row is missing.
    assert {r.key.name for r in store.rows().values()} == {f"p{i}" for i in range(12)} - {"p7"}
    assert store.resource_version == ""  # the relist is not recorded as applied
    assert syncer.relist_failures == 1
    # The refused key is requeued with backoff (not at once).
    assert len(queue) == 0
    assert queue.num_delayed() == 1
    clock.advance(1.0)
    assert drain(queue) == {Request("ns-0", "p7")}
    allow_all(database)
    queue.shutdown()


def test_an_unreachable_database_fails_the_whole_chunk_and_requeues_every_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mirror.db"
    engine = create_mirror_engine(
        f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 0.05}
    )
    db = MirrorDatabase(engine)
    try:
        store = db.store(PODS)
        syncer = syncer_of(store, relist_batch=4)
        objects = [pod(f"p{i}", f"u{i}") for i in range(6)]
        clock = FakeClock()
        queue = queue_on(clock)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            syncer.apply_relist(changes_of(objects), "12", queue)
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert store.count() == 0  # nothing partial
        assert syncer.relist_failures == 2
        clock.advance(1.0)
        assert drain(queue) == {Request("ns-0", f"p{i}") for i in range(6)}
        queue.shutdown()
    finally:
        engine.dispose()


def test_keys_a_worker_holds_during_a_relist_are_reconciled_again(
    database: MirrorDatabase,
) -> None:
    store = database.store(PODS)
    syncer = syncer_of(store, relist_batch=10)
    queue = queue_on(FakeClock())
    held = ObjectKey("ns-0", "p1")
    with syncer.reconciling([held]):  # a worker read p1 live and has not written yet
        syncer.apply_relist(changes_of([pod("p0", "u0"), pod("p1", "u1")]), "5", queue)
    assert drain(queue) == {Request("ns-0", "p1")}
    syncer.apply_relist(changes_of([pod("p1", "u1", rv="6")]), "6", queue)
    assert drain(queue) == set()  # nothing held any more
    queue.shutdown()


def test_the_restart_snapshot_skips_rows_that_match(database: MirrorDatabase) -> None:
    store = database.store(PODS)
    store.sync({"kind": "Pod", **pod("same", "u1")})
    syncer = syncer_of(store, relist_batch=10)
    assert not syncer.needs_sync(pod("same", "u1"))
    assert syncer.needs_sync(pod("same", "u1"))  # the snapshot's row was consumed
    assert syncer.needs_sync(pod("other", "u2"))


# -------------------------------------------------------------- end to end


def test_the_initial_list_is_written_in_batches_not_per_key(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    for i in range(23):
        server.create("pods", new_pod(f"p{i}", node=f"n{i % 3}"), NAMESPACES[i % 2])
    store = database.store(PODS, COLUMNS)
    with Running(store, api_client, max_delay=0.5, relist_batch=5) as run:
        # start() returned: the initial relist is in the database already.
        assert store.count() == 23
        run.converge(server)
        assert store.transactions <= math.ceil(23 / 5)
        assert sum(run.reconciles.relist_changes) == 23
        assert run.reconciles.calls == 0  # no key was read live or written alone


def test_a_later_relist_is_batched_and_rows_equal_the_api(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    for i in range(10):
        server.create("pods", new_pod(f"p{i}"), NAMESPACES[i % 2])
    store = database.store(PODS, COLUMNS)
    with Running(store, api_client, max_delay=0.5, relist_batch=4) as run:
        run.converge(server)
        before = store.transactions
        relists = len(run.reconciles.relist_changes)
        # Hold the watch back, change things, then make the watch's history
        # unusable: the reflector relists, and the relist carries the changes.
        server.stall_watches(30.0)
        for i in range(10, 19):
            server.create("pods", new_pod(f"p{i}", node="late"), NAMESPACES[i % 2])
        server.delete("pods", "p0", "ns-0")
        obj = server.get("pods", "p1", "ns-1")
        obj["metadata"]["labels"]["node"] = "moved"
        server.update("pods", obj)
        server.compact()
        server.drop_watches()
        server.stall_watches(0.0)
        run.converge(server)
        later = run.reconciles.relist_changes[relists:]
        assert later, "no relist happened"
        budget = sum(max(1, math.ceil(n / 4)) for n in later)
        per_key = run.reconciles.calls  # anything the watch delivered before the stall
        assert store.transactions - before <= budget + per_key
        assert store.objects() == api_objects(server)


def test_a_burst_is_drained_into_one_transaction(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    server.create("pods", new_pod("live"), "ns-0")
    store = database.store(PODS)
    # 30 rows whose objects are gone: the first diff pushes their 30 keys
    # before the workers start, so the first worker takes them all at once.
    with store.batch() as batch:
        for i in range(30):
            batch.sync({"kind": "Pod", **pod(f"ghost{i}", f"g{i}", namespace="ns-1")})
    before = store.transactions
    with Running(store, api_client, max_delay=0.5, workers=2) as run:
        run.converge(server)
        assert run.reconciles.batch_sizes == [30]  # one call, every key read live (404)
        # The initial relist (the live pod) and the burst's one transaction.
        assert store.transactions - before == 2
        assert store.objects() == api_objects(server)


def test_a_refused_row_in_a_burst_holds_back_no_other(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    store = database.store(PODS)
    with Running(store, api_client, max_delay=0.5) as run:
        run.converge(server)
        refuse_name(database, "bad")
        server.stall_watches(30.0)
        for i in range(8):
            server.create("pods", new_pod(f"p{i}"), "ns-0")
        server.create("pods", new_pod("bad"), "ns-0")
        server.stall_watches(0.0)  # the nine events arrive at once
        controller = run.sc.controller
        assert controller is not None
        seen = run.reconciles.progress()
        while store.count() < 8:
            assert run.reconciles.wait_progress(seen, 30), "the good rows were not written"
            seen = run.reconciles.progress()
        assert store.get("ns-0/bad") is None
        allow_all(database)
        run.converge(server)
        assert store.count() == 9


# ------------------------------------------------ the runtime's batching


def test_controller_reconcile_batch_applies_each_outcome() -> None:
    clock = FakeClock()
    requests = [Request("ns", f"r{i}") for i in range(25)]
    seen: list[list[str]] = []
    single: list[str] = []
    failed_once: set[str] = set()
    lock = threading.Lock()

    def reconcile(request: Request) -> Result | None:
        with lock:
            single.append(request.name)
        return None

    def reconcile_batch(batch: Sequence[Request]) -> list[Result | BaseException | None]:
        outcomes: list[Result | BaseException | None] = []
        with lock:
            seen.append([r.name for r in batch])
            for r in batch:
                if r.name == "r3" and r.name not in failed_once:
                    failed_once.add(r.name)
                    outcomes.append(RuntimeError("once"))
                else:
                    outcomes.append(None)
        return outcomes

    source = PeriodicSource(lambda: requests, 3600.0, name="all", clock=clock)
    controller = Controller(
        "batching",
        reconcile,
        [source],
        workers=1,
        clock=clock,
        rate_limiter=ItemExponentialFailureRateLimiter(1.0, 10.0),
        reconcile_batch=reconcile_batch,
        max_batch=10,
    )
    controller.start()
    try:
        assert controller.wait_idle(10)
        assert [len(b) for b in seen] == [10, 10, 5]
        assert sorted(name for b in seen for name in b) == sorted(r.name for r in requests)
        assert controller.queue.num_delayed() == 1  # r3's backoff
        clock.advance(1.0)
        assert controller.wait_idle(10)
        assert single == ["r3"]  # retried alone: a batch of one goes to reconcile
        assert controller.queue.num_delayed() == 0
    finally:
        controller.stop()


def test_controller_batch_options_are_validated() -> None:
    source = PeriodicSource(list, 3600.0, name="none")
    with pytest.raises(ValueError, match="reconcile_batch"):
        Controller("c", lambda r: None, [source], max_batch=5)
    with pytest.raises(ValueError, match="max_batch"):
        Controller("c", lambda r: None, [source], max_batch=0)
    with pytest.raises(TypeError):
        Controller("c", lambda r: None, [source], max_batch=True)


# --------------------------------------------- the protocol, as a property


@st.composite
def relists(draw: st.DrawFn) -> list[list[tuple[str, int | None]]]:
    """Rounds of relist changes: (name, generation) to sync a new uid or a
    new resourceVersion, (name, None) to delete."""
    names = [f"p{i}" for i in range(8)]
    change = st.tuples(st.sampled_from(names), st.one_of(st.none(), st.integers(0, 3)))
    return draw(st.lists(st.lists(change, max_size=12), min_size=1, max_size=4))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(rounds=relists(), size=st.integers(1, 5))
def test_relists_keep_the_table_equal_to_a_model(
    rounds: list[list[tuple[str, int | None]]], size: int
) -> None:
    with MirrorDatabase("sqlite://") as db:
        store = db.store(PODS)
        syncer = syncer_of(store, relist_batch=size)
        queue = queue_on(FakeClock())
        model: dict[ObjectKey, dict[str, Any]] = {}
        rv = 0
        for number, round_ in enumerate(rounds):
            changes: list[RelistChange] = []
            for name, generation in round_:
                rv += 1
                key = ObjectKey("ns-0", name)
                if generation is None:
                    changes.append((key, None))
                    model.pop(key, None)
                else:  # generation picks the uid: a new one is a recreation
                    obj = pod(name, f"{name}-g{generation}", rv=str(rv))
                    changes.append((key, obj))
                    model[key] = {"apiVersion": "v1", "kind": "Pod", **obj}
            before = store.transactions
            syncer.apply_relist(changes, str(1000 + number), queue)
            assert store.transactions - before == max(1, math.ceil(len(changes) / size))
            assert store.objects() == model
            assert {r.key for r in store.rows().values()} == set(model)  # one row per key
            assert store.resource_version == str(1000 + number)
        assert len(queue) == 0
        queue.shutdown()
