"""Fixtures of the mirror tests: a real PostgreSQL server for the session (run
as the unprivileged ``postgres`` user when the tests run as root, as CI does),
a fresh database per test, and ``database``, parametrised over SQLite and
PostgreSQL.

Without the server binaries the PostgreSQL cases skip, saying why; with the
environment variable ``CI`` set they fail instead (CI installs the
``postgresql`` package in ``.ci/run``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.postgres import PostgresServer, PostgresServerError, find_postgres_bindir
from tracker.mirror import MirrorDatabase

_databases = itertools.count()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server on a free loopback port for the whole session."""
    bindir = find_postgres_bindir()
    if bindir is None:
        _unavailable(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin "
            "(apt-get install postgresql)"
        )
    server = PostgresServer(bindir)
    try:
        server.start()
    except PostgresServerError as error:
        server.cleanup()
        _unavailable(f"the PostgreSQL test server did not start: {error}")
    yield server
    server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database on the session's server; dropped afterwards (the
    server is started again first if a test left it stopped)."""
    name = f"mirror_test_{next(_databases)}"
    url = postgres_server.create_database(name)
    yield url
    postgres_server.start()
    postgres_server.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty database: a SQLite file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'mirror.db'}"
    url: Any = request.getfixturevalue("postgres_url")
    return str(url)


@pytest.fixture
def database(database_url: str) -> Iterator[MirrorDatabase]:
    """A :class:`MirrorDatabase` on ``database_url``, closed afterwards."""
    db = MirrorDatabase(database_url)
    yield db
    db.close()
