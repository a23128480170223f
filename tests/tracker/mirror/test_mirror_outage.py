"""A database outage is logged once when it starts and once when it ends,
with counts, and one traceback per distinct error at DEBUG (issue 30 item
10); a reconcile during an outage is requeued, not logged as an error."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from informers.testing import ApiServer
from informers.toolkit.runtime import Request, Result
from informers.wire.resources import PODS
from tests.helpers import api_pod
from tests.postgres import PostgresServer
from tracker.errors import DatabaseUnavailableError, MirrorDatabaseError
from tracker.mirror import LiveReader, MirrorDatabase, create_mirror_engine
from tracker.mirror.controller import MirrorSyncer, sync_reconciler
from tracker.mirror.outage import LOGGER_NAME, OutageLog


def _lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER_NAME and r.levelno == level]


def test_an_outage_is_two_lines_whatever_its_failures(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    outages = OutageLog(clock=lambda: now[0])
    outages.succeeded()  # nothing to end
    with caplog.at_level(logging.DEBUG, LOGGER_NAME):
        for n in range(1000):
            outages.failed(DatabaseUnavailableError("syncing pods", f"refused #{n % 2}"))
        assert outages.in_outage
        now[0] += 5.0
        outages.succeeded()
        outages.succeeded()
    assert not outages.in_outage
    (started,) = _lines(caplog, logging.WARNING)
    assert "unavailable: syncing pods failed: refused #0" in started
    (ended,) = _lines(caplog, logging.INFO)
    assert ended == (
        "mirror database: available again after 5.0 s; 1000 operation(s) failed meanwhile "
        "(2 distinct error(s)) and are retried"
    )
    tracebacks = [r for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(tracebacks) == 2  # one per distinct error
    assert all(r.exc_info for r in tracebacks)


def test_a_refused_write_is_not_an_outage(caplog: pytest.LogCaptureFixture) -> None:
    outages = OutageLog()
    with caplog.at_level(logging.DEBUG, LOGGER_NAME):
        outages.failed(MirrorDatabaseError("syncing pods", "IntegrityError"))
        outages.failed(MirrorDatabaseError("syncing pods", "IntegrityError"))
    assert not outages.in_outage
    assert len(_lines(caplog, logging.WARNING)) == 2


@pytest.fixture
def locked_db(tmp_path: Path) -> Iterator[tuple[MirrorDatabase, sqlite3.Connection]]:
    path = tmp_path / "mirror.db"
    engine = create_mirror_engine(
        f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 0.01}
    )
    db = MirrorDatabase(engine)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        yield db, other
    finally:
        other.close()
        engine.dispose()


def test_a_store_logs_a_locked_database_as_one_outage(
    locked_db: tuple[MirrorDatabase, sqlite3.Connection], caplog: pytest.LogCaptureFixture
) -> None:
    db, other = locked_db
    store = db.store(PODS)
    other.execute("BEGIN EXCLUSIVE")
    with caplog.at_level(logging.DEBUG, "tracker"):
        for n in range(20):
            with pytest.raises(DatabaseUnavailableError):
                store.sync(api_pod(f"p{n}", f"u{n}"))
        other.execute("ROLLBACK")
        assert store.sync(api_pod("a", "u1"))
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in warnings] == [LOGGER_NAME]  # one line, not twenty
    (ended,) = _lines(caplog, logging.INFO)
    assert "20 operation(s) failed meanwhile (1 distinct error(s))" in ended


def test_a_reconcile_during_an_outage_is_requeued_not_an_error(
    locked_db: tuple[MirrorDatabase, sqlite3.Connection],
) -> None:
    db, other = locked_db
    with ApiServer() as server:
        server.create(
            PODS,
            {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            "default",
        )
        client = server.api_client()
        try:
            store = db.store(PODS)
            syncer = MirrorSyncer(store, LiveReader(client, PODS))
            reconcile = sync_reconciler(syncer, syncer.read)
            other.execute("BEGIN EXCLUSIVE")
            assert reconcile(Request("default", "a")) == Result(requeue=True)
            other.execute("ROLLBACK")
            assert reconcile(Request("default", "a")) is None
        finally:
            client.close()
    assert len(store.rows()) == 1


def test_postgres_stopped_is_one_outage(
    postgres_server: PostgresServer, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with MirrorDatabase(postgres_url) as db:
        store = db.store(PODS)
        postgres_server.stop()
        try:
            with caplog.at_level(logging.INFO, "tracker"):
                for n in range(10):
                    with pytest.raises(DatabaseUnavailableError):
                        store.sync(api_pod(f"p{n}", f"u{n}"))
        finally:
            postgres_server.start()
        with caplog.at_level(logging.INFO, "tracker"):
            assert store.sync(api_pod("b", "u2"))
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1
    (ended,) = _lines(caplog, logging.INFO)
    assert "10 operation(s) failed meanwhile" in ended


@pytest.mark.parametrize("verbose", [False, True])
def test_the_mirror_command_shows_an_outage_by_default(
    verbose: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from informers.cli.mirror import _outage_logging

    outages = OutageLog()
    with _outage_logging(verbose):
        for _ in range(50):
            try:
                raise DatabaseUnavailableError("syncing pods", "connection refused")
            except DatabaseUnavailableError as error:
                outages.failed(error)
        outages.succeeded()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(("WARNING", "INFO", "DEBUG"))]
    expected = ["WARNING", "DEBUG", "INFO"] if verbose else ["WARNING", "INFO"]
    assert [line.split()[0] for line in lines] == expected
    assert err.count("Traceback") == (1 if verbose else 0)
    assert logging.getLogger(LOGGER_NAME).propagate  # restored
