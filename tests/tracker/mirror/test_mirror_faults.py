"""Database faults: a failing write leaves nothing behind; an unreachable
database raises a retryable error and the store recovers once it is back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from informers.wire.resources import PODS
from tests.helpers import api_pod
from tests.postgres import PostgresServer
from tracker.errors import DatabaseUnavailableError, MirrorDatabaseError
from tracker.mirror import MirrorDatabase, MirrorStore, create_mirror_engine


def refuse_uid(db: MirrorDatabase, uid: str) -> None:
    """A trigger that makes the database refuse to write a row of ``uid``."""
    with db.engine.begin() as conn:
        if db.dialect == "sqlite":
            conn.execute(
                sa.text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON pods "
                    f"WHEN NEW.uid = '{uid}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )
        else:
            conn.execute(
                sa.text(
                    "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                    f"IF NEW.uid = '{uid}' THEN RAISE EXCEPTION 'refused'; END IF; "
                    "RETURN NEW; END $$ LANGUAGE plpgsql"
                )
            )
            conn.execute(
                sa.text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON pods "
                    "FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            )


@pytest.fixture
def pods(database: MirrorDatabase) -> MirrorStore:
    store = database.store(PODS)
    refuse_uid(database, "u-bad")
    return store


def test_a_failing_sync_leaves_no_partial_row(pods: MirrorStore) -> None:
    pods.sync(api_pod("a", "u1"))
    with pytest.raises(MirrorDatabaseError) as info:
        pods.sync(api_pod("a", "u-bad", "2"))  # a recreation: upsert, then the old row's removal
    assert not info.value.retryable
    assert list(pods.rows()) == ["u1"]
    assert pods.writes == 1


def test_a_failing_batch_is_rolled_back_whole(pods: MirrorStore) -> None:
    pods.sync(api_pod("keep", "u0"))
    batch = pods.batch()
    batch.delete("default/keep")
    batch.sync(api_pod("a", "u1"))
    batch.sync(api_pod("b", "u-bad"))
    batch.set_resource_version("50")
    with pytest.raises(MirrorDatabaseError):
        pods.apply(batch)
    assert list(pods.rows()) == ["u0"]
    assert pods.resource_version == ""
    assert pods.writes == 1
    # The store goes on working after the failure.
    with pods.batch() as batch:
        batch.sync(api_pod("a", "u1"))
    assert sorted(pods.rows()) == ["u0", "u1"]


def test_the_error_message_does_not_quote_the_values(pods: MirrorStore) -> None:
    obj = api_pod("a", "u-bad")
    obj["spec"]["password"] = "hunter2"
    with pytest.raises(MirrorDatabaseError) as info:
        pods.sync(obj)
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in str(info.value.__cause__)


def test_a_locked_sqlite_database_is_retryable(tmp_path: Path) -> None:
    path = tmp_path / "mirror.db"
    engine = create_mirror_engine(
        f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 0.05}
    )
    db = MirrorDatabase(engine)
    try:
        store = db.store(PODS)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            with pytest.raises(DatabaseUnavailableError) as info:
                store.sync(api_pod("a", "u1"))
            assert info.value.retryable
            other.execute("ROLLBACK")
        finally:
            other.close()
        assert store.sync(api_pod("a", "u1"))
    finally:
        engine.dispose()


def test_postgres_stopped_and_restarted_mid_run(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    with MirrorDatabase(postgres_url) as db:
        store = db.store(PODS)
        store.sync(api_pod("a", "u1"))
        postgres_server.stop()
        try:
            for operation in (
                lambda: store.sync(api_pod("b", "u2")),
                lambda: store.delete("default/a"),
                store.rows,
            ):
                with pytest.raises(DatabaseUnavailableError) as info:
                    operation()
                assert info.value.retryable
        finally:
            postgres_server.start()
        # Stale pooled connections are replaced (pre-ping): the store works again.
        assert store.sync(api_pod("b", "u2"))
        assert sorted(store.rows()) == ["u1", "u2"]
        assert store.writes == 2


def test_an_unreachable_postgres_at_start_is_retryable() -> None:
    with (
        socket_free_port() as port,
        MirrorDatabase(f"postgresql://postgres@127.0.0.1:{port}/none") as db,
        pytest.raises(DatabaseUnavailableError),
    ):
        db.store(PODS)


class socket_free_port:  # noqa: N801 - used as a context manager, reads like one
    """A loopback port nobody listens on, reserved while the block runs."""

    def __enter__(self) -> int:
        import socket

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        return int(self._sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self._sock.close()
