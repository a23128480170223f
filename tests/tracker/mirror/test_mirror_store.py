"""tracker.mirror.store on SQLite and PostgreSQL: upserts that write only
changes, deletes, batches, the state table, Secrets, SQL-looking data."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import sqlalchemy as sa

from informers.wire.resources import NAMESPACES, PODS, SECRETS, Resource
from tests.helpers import api_pod
from tracker.errors import InvalidObjectError, MirrorConfigError
from tracker.mirror import Column, MirrorDatabase, MirrorRow, MirrorStore
from tracker.mirror.schema import LAST_APPLIED_ANNOTATION
from tracker.syncapi import ObjectKey, diff

COLUMNS = [Column("node", "spec.nodeName"), Column("phase", "status.phase")]


@pytest.fixture
def pods(database: MirrorDatabase) -> MirrorStore:
    return database.store(PODS, COLUMNS)


# ------------------------------------------------------------------ sync


def test_sync_inserts_a_row_with_every_column(pods: MirrorStore) -> None:
    obj = api_pod("a", "u1", labels={"app": "web"}, annotations={"note": "x"})
    assert pods.sync(obj) is True
    rows = pods.rows()
    assert rows == {"u1": MirrorRow("u1", "default", "a", "1", {"node": "n1", "phase": "Running"})}
    assert pods.get("default/a") == obj
    t = pods.table
    with pods.database.engine.connect() as conn:
        row = conn.execute(sa.select(t)).one()
    assert row.labels == {"app": "web"}
    assert row.annotations == {"note": "x"}
    assert row.deletion_timestamp is None
    assert row.synced_at is not None


def test_resyncing_an_unchanged_object_writes_nothing(pods: MirrorStore) -> None:
    obj = api_pod("a", "u1")
    assert pods.sync(obj)
    assert pods.writes == 1
    assert pods.sync(copy.deepcopy(obj)) is False
    assert pods.writes == 1


def test_a_new_resource_version_is_written(pods: MirrorStore) -> None:
    pods.sync(api_pod("a", "u1", "1"))
    assert pods.sync(api_pod("a", "u1", "2", phase="Succeeded"))
    assert pods.rows()["u1"].columns["phase"] == "Succeeded"
    assert pods.writes == 2


def test_a_recreated_object_replaces_the_row_of_its_old_uid(pods: MirrorStore) -> None:
    pods.sync(api_pod("a", "u1", "1"))
    assert pods.sync(api_pod("a", "u2", "7"))
    assert list(pods.rows()) == ["u2"]
    assert pods.writes == 3  # insert, insert, delete of the old incarnation


def test_terminating_objects_are_stored_with_their_deletion_timestamp(pods: MirrorStore) -> None:
    pods.sync(api_pod("a", "u1", deletionTimestamp="2024-05-01T12:00:00Z", finalizers=["x"]))
    with pods.database.engine.connect() as conn:
        stamp = conn.execute(sa.select(pods.table.c.deletion_timestamp)).scalar_one()
    assert (stamp.year, stamp.month, stamp.day, stamp.hour) == (2024, 5, 1, 12)


def test_cluster_scoped_objects_have_an_empty_namespace(database: MirrorDatabase) -> None:
    namespaces = database.store(NAMESPACES)
    namespaces.sync({"kind": "Namespace", "metadata": {"name": "ns1", "uid": "n1"}})
    assert namespaces.rows()["n1"].key == ObjectKey("", "ns1")
    assert namespaces.get("/ns1") is not None
    assert namespaces.get("ns1") is not None
    assert namespaces.delete(ObjectKey("", "ns1"))


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ("not an object", "mapping"),
        ({"kind": "Pod"}, "metadata"),
        ({"metadata": {"uid": "u1"}}, "name"),
        ({"metadata": {"name": "a", "namespace": "ns"}}, "ns/a has no metadata.uid"),
        ({"kind": "Secret", "metadata": {"name": "a", "uid": "u1"}}, "is a 'Secret'"),
    ],
)
def test_objects_that_cannot_be_rows_are_refused(pods: MirrorStore, obj: Any, message: str) -> None:
    with pytest.raises(InvalidObjectError, match=message):
        pods.sync(obj)
    assert pods.count() == 0


# ---------------------------------------------------------------- delete


def test_delete_removes_the_row_and_is_idempotent(pods: MirrorStore) -> None:
    pods.sync(api_pod("a", "u1"))
    pods.sync(api_pod("b", "u2"))
    assert pods.delete(ObjectKey("default", "a")) is True
    assert pods.delete("default/a") is False
    assert list(pods.rows()) == ["u2"]
    assert pods.writes == 3


# --------------------------------------------------------------- matches


def test_matches_compares_uid_resource_version_and_declared_columns(pods: MirrorStore) -> None:
    obj = api_pod("a", "u1", "5")
    pods.sync(obj)
    row = pods.rows()["u1"]
    assert pods.matches(obj, row)
    assert not pods.matches(api_pod("a", "u2", "5"), row)
    assert not pods.matches(api_pod("a", "u1", "6"), row)
    assert not pods.matches(api_pod("a", "u1", "5", node="n2"), row)
    assert not pods.matches({"metadata": None}, row)
    stale = MirrorRow("u1", "default", "a", "5", {"node": "n1", "phase": "Pending"})
    assert not pods.matches(obj, stale)
    assert MirrorStore.key(row) == ObjectKey("default", "a")


def test_the_store_plugs_into_diff(pods: MirrorStore) -> None:
    live = [api_pod("a", "u1", "1"), api_pod("b", "u2", "1"), api_pod("c", "u3", "1")]
    for obj in live[:2]:
        pods.sync(obj)
    pods.sync(api_pod("gone", "u9"))
    live[1] = api_pod("b", "u2", "2")
    assert diff(live, pods.rows(), pods.matches, pods.key) == [
        ObjectKey("default", "b"),
        ObjectKey("default", "c"),
        ObjectKey("default", "gone"),
    ]


# ---------------------------------------------------------------- batches


def test_a_batch_applies_in_one_transaction_and_counts_writes(pods: MirrorStore) -> None:
    pods.sync(api_pod("old", "u0"))
    with pods.batch() as batch:
        for i in range(50):
            batch.sync(api_pod(f"p{i}", f"u{i + 1}"))
        batch.delete("default/old")
        batch.set_resource_version("123")
        assert len(batch) == 51
    assert batch.written == 51
    assert pods.count() == 50
    assert pods.resource_version == "123"
    assert pods.writes == 52


def test_a_batch_of_unchanged_objects_writes_nothing(pods: MirrorStore) -> None:
    objs = [api_pod(f"p{i}", f"u{i}") for i in range(10)]
    with pods.batch() as batch:
        for obj in objs:
            batch.sync(obj)
    with pods.batch() as again:
        for obj in objs:
            again.sync(obj)
    assert again.written == 0
    assert pods.writes == 10


def test_a_batch_keeps_the_order_of_syncs_and_deletes(pods: MirrorStore) -> None:
    with pods.batch() as batch:
        batch.sync(api_pod("a", "u1", "1"))
        batch.delete("default/a")
        batch.sync(api_pod("b", "u2", "1"))
        batch.sync(api_pod("b", "u2", "2"))
        batch.sync(api_pod("c", "u3", "1"))
        batch.sync(api_pod("c", "u4", "5"))  # recreated within the batch
        batch.delete("default/none")
    rows = pods.rows()
    assert sorted(rows) == ["u2", "u4"]
    assert rows["u2"].resource_version == "2"


def test_a_batch_whose_block_raises_writes_nothing(pods: MirrorStore) -> None:
    def relist() -> None:
        with pods.batch() as batch:
            batch.sync(api_pod("a", "u1"))
            raise RuntimeError("the relist failed")

    with pytest.raises(RuntimeError):
        relist()
    assert pods.count() == 0
    assert pods.writes == 0


def test_an_invalid_object_is_refused_when_added_to_a_batch(pods: MirrorStore) -> None:
    batch = pods.batch()
    with pytest.raises(InvalidObjectError):
        batch.sync({"metadata": {"name": "x"}})
    assert len(batch) == 0


def test_an_empty_batch_does_nothing(pods: MirrorStore) -> None:
    with pods.batch() as batch:
        pass
    assert batch.written == 0


# ------------------------------------------------------------------ state


def test_the_resource_version_is_recorded_per_kind(database: MirrorDatabase) -> None:
    pods = database.store(PODS)
    secrets = database.store(SECRETS)
    assert pods.resource_version == ""
    pods.set_resource_version("41")
    assert pods.resource_version == "41"
    assert secrets.resource_version == ""
    assert database.store(PODS).resource_version == "41"  # a later run reads it back


# ---------------------------------------------------------- SQL as data

INJECTION = "'; DROP TABLE pods; --"


def test_values_that_look_like_sql_are_stored_as_data(pods: MirrorStore) -> None:
    obj = api_pod(
        "a",
        INJECTION,
        INJECTION,
        namespace="default",
        node=INJECTION,
        phase='") OR 1=1 --',
        labels={INJECTION: INJECTION},
        annotations={"x": "Robert'); DROP TABLE students;--"},
    )
    obj["spec"]["weird"] = {"\"'`;": ["%s", "?", ":name", "$1"]}
    assert pods.sync(obj)
    assert pods.get("default/a") == obj
    row = pods.rows()[INJECTION]
    assert row.resource_version == INJECTION
    assert row.columns["node"] == INJECTION
    assert pods.delete("default/a")
    assert sa.inspect(pods.database.engine).has_table("pods")


def test_reserved_words_as_table_and_column_names_are_quoted(database: MirrorDatabase) -> None:
    store = database.store(
        PODS, [Column("select", "spec.nodeName"), Column("order", "status.phase")], table="table"
    )
    store.sync(api_pod("a", "u1"))
    assert store.rows()["u1"].columns == {"select": "n1", "order": "Running"}


@pytest.mark.parametrize(
    "table", ["pods; DROP TABLE x", "Pods", "kube_mirror_state", "kube_mirror_x"]
)
def test_unsafe_or_reserved_table_names_are_refused(database: MirrorDatabase, table: str) -> None:
    with pytest.raises(MirrorConfigError):
        database.store(PODS, table=table)


def test_columns_declared_twice_are_refused(database: MirrorDatabase) -> None:
    with pytest.raises(MirrorConfigError, match="twice"):
        database.store(PODS, [Column("node", "spec.nodeName"), Column("node", "spec.x")])


# ---------------------------------------------------------------- Secrets


def secret(uid: str = "s1", rv: str = "1") -> dict[str, Any]:
    return {
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "creds",
            "namespace": "default",
            "uid": uid,
            "resourceVersion": rv,
            "annotations": {LAST_APPLIED_ANNOTATION: '{"data":{"password":"aHVudGVyMg=="}}'},
        },
        "data": {"password": "aHVudGVyMg=="},
        "stringData": {"token": "hunter2"},
    }


def _raw_json(store: MirrorStore) -> str:
    t = store.table
    with store.database.engine.connect() as conn:
        value = conn.execute(
            sa.select(sa.cast(t.c.object, sa.Text), sa.cast(t.c.annotations, sa.Text))
        ).one()
    return " ".join(value)


def test_secret_data_is_not_stored_by_default(database: MirrorDatabase) -> None:
    secrets = database.store(SECRETS, [Column("password", "data.password")])
    secrets.sync(secret())
    stored = secrets.get("default/creds")
    assert stored is not None
    assert "data" not in stored
    assert "stringData" not in stored
    assert stored["type"] == "Opaque"
    assert secrets.rows()["s1"].columns["password"] is None
    raw = _raw_json(secrets)
    assert "aHVudGVyMg" not in raw
    assert "hunter2" not in raw
    assert secrets.sync(secret()) is False  # unchanged: still matches without the data


def test_secret_data_is_stored_when_opted_in(database: MirrorDatabase) -> None:
    secrets = database.store(SECRETS, store_secret_data=True)
    secrets.sync(secret())
    stored = secrets.get("default/creds")
    assert stored is not None
    assert stored["data"] == {"password": "aHVudGVyMg=="}


def test_turning_secret_data_off_removes_it_from_stored_rows(database: MirrorDatabase) -> None:
    database.store(SECRETS, store_secret_data=True).sync(secret())
    secrets = database.store(SECRETS)
    raw = _raw_json(secrets)
    assert "aHVudGVyMg" not in raw
    assert "hunter2" not in raw
    assert secrets.get("default/creds") is not None


def test_turning_secret_data_on_marks_every_row_for_resync(database: MirrorDatabase) -> None:
    database.store(SECRETS).sync(secret())
    secrets = database.store(SECRETS, store_secret_data=True)
    live = [secret()]
    assert diff(live, secrets.rows(), secrets.matches, secrets.key) == [
        ObjectKey("default", "creds")
    ]
    secrets.sync(live[0])
    stored = secrets.get("default/creds")
    assert stored is not None
    assert "data" in stored


def test_other_kinds_named_secret_keep_their_data(database: MirrorDatabase) -> None:
    custom = Resource("example.com", "v1", "secrets", "Secret")
    store = database.store(custom)
    store.sync(secret())
    stored = store.get("default/creds")
    assert stored is not None
    assert "data" in stored


# ---------------------------------------------------------------- reading


def test_objects_and_count_read_the_whole_table(pods: MirrorStore) -> None:
    a, b = api_pod("a", "u1"), api_pod("b", "u2", namespace="other")
    pods.sync(a)
    pods.sync(b)
    assert pods.count() == 2
    assert pods.objects() == {ObjectKey("default", "a"): a, ObjectKey("other", "b"): b}
    assert pods.get("default/missing") is None


def test_the_database_repr_hides_passwords() -> None:
    db = MirrorDatabase("postgresql://user:sekret@127.0.0.1:1/db")
    try:
        assert "sekret" not in repr(db)
    finally:
        db.close()


def test_an_unsupported_dialect_is_refused() -> None:
    with pytest.raises(MirrorConfigError, match="sqlite and postgresql"):
        MirrorDatabase("mysql://127.0.0.1/db")


def test_an_in_memory_sqlite_database_is_shared_by_threads() -> None:
    import threading

    with MirrorDatabase("sqlite://") as db:
        store = db.store(PODS)
        threads = [
            threading.Thread(target=store.sync, args=(api_pod(f"p{i}", f"u{i}"),), name=f"sync-{i}")
            for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.count() == 4
