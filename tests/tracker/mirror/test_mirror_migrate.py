"""Schema on first run and additive migration on later runs, SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from informers.wire.resources import PODS
from tests.helpers import api_pod
from tracker.errors import SchemaMismatchError
from tracker.mirror import STATE_TABLE, Column, MirrorDatabase


def pod(name: str, uid: str, node: str = "n1", rv: str = "1") -> dict[str, Any]:
    return api_pod(name, uid, rv, node=node, spec={"priority": 7})


def _columns(db: MirrorDatabase, table: str) -> list[str]:
    return [c["name"] for c in sa.inspect(db.engine).get_columns(table)]


def _indexes(db: MirrorDatabase, table: str) -> dict[str, list[Any]]:
    return {ix["name"]: ix["column_names"] for ix in sa.inspect(db.engine).get_indexes(table)}


def test_first_run_creates_the_table_indexes_and_state(database: MirrorDatabase) -> None:
    database.store(PODS, [Column("node", "spec.nodeName"), Column("raw", "spec", index=False)])
    assert _columns(database, "pods") == [
        "uid",
        "namespace",
        "name",
        "resource_version",
        "labels",
        "annotations",
        "object",
        "deletion_timestamp",
        "synced_at",
        "node",
        "raw",
    ]
    indexes = _indexes(database, "pods")
    assert indexes["ix_pods_namespace_name"] == ["namespace", "name"]
    assert indexes["ix_pods_node"] == ["node"]
    assert "ix_pods_raw" not in indexes
    with database.engine.connect() as conn:
        state = conn.execute(sa.text(f"SELECT table_name, kind FROM {STATE_TABLE}")).all()
    assert [tuple(s) for s in state] == [("pods", "Pod")]


def test_a_second_run_with_the_same_columns_changes_nothing(database: MirrorDatabase) -> None:
    columns = [Column("node", "spec.nodeName")]
    store = database.store(PODS, columns)
    store.sync(pod("a", "u1"))
    again = database.store(PODS, columns)
    assert again.rows() == store.rows()


def test_an_added_column_is_created_indexed_and_backfilled(database: MirrorDatabase) -> None:
    store = database.store(PODS, [Column("node", "spec.nodeName")])
    for i in range(25):
        store.sync(pod(f"p{i}", f"u{i:03}", node=f"n{i % 3}"))
    grown = database.store(
        PODS,
        [
            Column("node", "spec.nodeName"),
            Column("phase", "status.phase"),
            Column("priority", "spec.priority", "integer"),
        ],
    )
    rows = grown.rows()
    assert len(rows) == 25
    assert {r.columns["phase"] for r in rows.values()} == {"Running"}
    assert {r.columns["priority"] for r in rows.values()} == {7}
    assert rows["u004"].columns["node"] == "n1"
    indexes = _indexes(database, "pods")
    assert indexes["ix_pods_phase"] == ["phase"]
    assert indexes["ix_pods_priority"] == ["priority"]
    # Backfilled rows match, so a re-sync of the same objects writes nothing.
    assert grown.sync(pod("p4", "u004", node="n1")) is False


def test_backfill_spans_several_chunks(
    database: MirrorDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.mirror import store as store_module

    monkeypatch.setattr(store_module, "BACKFILL_CHUNK", 4)
    store = database.store(PODS)
    with store.batch() as batch:
        for i in range(10):
            batch.sync(pod(f"p{i}", f"u{i}", node=f"n{i}"))
    grown = database.store(PODS, [Column("node", "spec.nodeName")])
    assert {r.uid: r.columns["node"] for r in grown.rows().values()} == {
        f"u{i}": f"n{i}" for i in range(10)
    }


def test_a_column_dropped_from_the_declaration_is_an_error_and_keeps_data(
    database: MirrorDatabase,
) -> None:
    store = database.store(PODS, [Column("node", "spec.nodeName"), Column("phase", "status.phase")])
    store.sync(pod("a", "u1"))
    with pytest.raises(SchemaMismatchError, match=r"'phase' \(status\.phase, text\)") as info:
        database.store(PODS, [Column("node", "spec.nodeName")])
    assert info.value.table == "pods"
    assert info.value.differences == [
        "column 'phase' (status.phase, text) is in the table but not declared "
        "(drop_undeclared_columns=True, or the CLI's --drop-undeclared-columns, drops it)"
    ]
    assert "phase" in _columns(database, "pods")
    assert database.store(
        PODS, [Column("node", "spec.nodeName"), Column("phase", "status.phase")]
    ).rows()["u1"].columns == {"node": "n1", "phase": "Running"}


def test_undeclared_columns_are_dropped_when_asked(database: MirrorDatabase) -> None:
    # Issue 30 item 8: a way forward after re-running with fewer columns.
    store = database.store(
        PODS,
        [Column("node", "spec.nodeName"), Column("phase", "status.phase"), Column("p", "spec")],
    )
    store.sync(pod("a", "u1"))
    fewer = database.store(PODS, [Column("node", "spec.nodeName")], drop_undeclared_columns=True)
    assert "phase" not in _columns(database, "pods")
    assert "p" not in _columns(database, "pods")
    assert "ix_pods_phase" not in _indexes(database, "pods")
    assert fewer.rows()["u1"].columns == {"node": "n1"}
    # the record follows: the same declaration again needs no option
    again = database.store(PODS, [Column("node", "spec.nodeName")])
    assert again.rows()["u1"].columns == {"node": "n1"}
    assert again.sync(pod("a", "u1")) is False
    # and a dropped column can be declared again (backfilled)
    back = database.store(PODS, [Column("node", "spec.nodeName"), Column("phase", "status.phase")])
    assert back.rows()["u1"].columns == {"node": "n1", "phase": "Running"}


def test_a_timestamp_column_round_trips_and_matches(database: MirrorDatabase) -> None:
    # Issue 30 item 7: typed columns, timestamp included.
    store = database.store(PODS, [Column("created", "metadata.creationTimestamp", "timestamp")])
    obj = pod("a", "u1")
    obj["metadata"]["creationTimestamp"] = "2024-05-01T12:00:00Z"
    store.sync(obj)
    (row,) = store.rows().values()
    stamp = row.columns["created"]
    assert (stamp.year, stamp.month, stamp.day, stamp.hour) == (2024, 5, 1, 12)
    assert store.matches(obj, row)  # no endless re-sync over a time zone
    assert store.sync(obj) is False


def test_a_changed_path_or_type_is_an_error_naming_both(database: MirrorDatabase) -> None:
    database.store(PODS, [Column("node", "spec.nodeName"), Column("prio", "spec.priority")])
    with pytest.raises(SchemaMismatchError) as info:
        database.store(
            PODS, [Column("node", "spec.hostname"), Column("prio", "spec.priority", "integer")]
        )
    assert info.value.differences == [
        "column 'node' is spec.nodeName (text) in the table, but spec.hostname (text) is declared",
        "column 'prio' is spec.priority (text) in the table, but spec.priority (integer) "
        "is declared",
    ]


def test_a_foreign_table_of_that_name_is_an_error(database: MirrorDatabase) -> None:
    with database.engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE pods (id integer primary key, extra text)"))
    with pytest.raises(SchemaMismatchError) as info:
        database.store(PODS)
    differences = info.value.differences
    assert "built-in column 'uid' is missing" in differences
    assert any(d.startswith("column 'extra' is in the table but not declared") for d in differences)


def test_a_column_added_by_hand_without_a_record_is_an_error(database: MirrorDatabase) -> None:
    database.store(PODS)
    with database.engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE pods ADD COLUMN node text"))
    with pytest.raises(SchemaMismatchError, match="never recorded"):
        database.store(PODS, [Column("node", "spec.nodeName")])


def test_a_table_dropped_by_hand_is_created_again_and_its_state_reset(
    database: MirrorDatabase,
) -> None:
    store = database.store(PODS)
    store.set_resource_version("99")
    with database.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE pods"))
    again = database.store(PODS, [Column("node", "spec.nodeName")])
    assert again.resource_version == ""
    again.sync(pod("a", "u1"))
    assert again.count() == 1
