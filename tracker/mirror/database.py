"""The database a mirror writes to: an SQLAlchemy Core engine set up for the
two supported dialects, transactions with typed errors, and the state table.

* **SQLite** (the default; the standard library's driver). A file database is
  put in WAL mode (readers never wait for the writer) with
  ``synchronous=NORMAL``: a committed transaction survives a crash of the
  process, though the last ones may be lost on a power failure. ``sqlite://``
  (in memory) keeps one connection shared by every thread. SQLite has one
  writer at a time, so the database runs its transactions one after another
  (under its lock); a connection of another process waiting for the file
  waits up to 30 s and then fails retryably.
* **PostgreSQL** through psycopg 3 (``postgresql://`` URLs are given that
  driver). The pool pre-pings each connection before use, so after a server
  restart stale connections are replaced instead of failing.

Errors: every database failure inside :meth:`MirrorDatabase.transaction`
rolls the whole transaction back and is raised as a
:class:`~tracker.errors.MirrorDatabaseError`;
:class:`~tracker.errors.DatabaseUnavailableError` (``retryable``) when the
server cannot be reached or the connection was lost. The engine is created
with ``hide_parameters``: no error or log line quotes the values written
(they may be Secrets).

Statements are always parameterised; the only names that reach SQL text are
validated identifiers, quoted (:mod:`tracker.mirror.schema`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event, exc
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.pool import StaticPool

from tracker.errors import DatabaseUnavailableError, MirrorConfigError, MirrorDatabaseError
from tracker.mirror.jsoncolumn import json_dumps
from tracker.mirror.outage import OutageLog

if TYPE_CHECKING:
    from collections.abc import Iterable

    from informers.wire.resources import Resource
    from tracker.mirror.schema import Column
    from tracker.mirror.store import MirrorStore

__all__ = [
    "STATE_TABLE",
    "MirrorDatabase",
    "create_mirror_engine",
    "translate_error",
]

log = logging.getLogger(__name__)

#: The table that records, per mirrored table, its kind, its declared columns,
#: its Secret option and the resourceVersion last applied.
STATE_TABLE = "kube_mirror_state"

#: Seconds a SQLite connection waits for a lock held by another connection.
SQLITE_BUSY_TIMEOUT = 30.0


def _is_memory(url: sa.URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or "mode=memory" in database


def create_mirror_engine(url: str | sa.URL, **kwargs: Any) -> Engine:
    r"""An :class:`~sqlalchemy.engine.Engine` for ``url`` set up as the module
    docstring says. ``kwargs`` go to :func:`sqlalchemy.create_engine`.
    Raises :class:`~tracker.errors.MirrorConfigError` for a dialect other than
    SQLite or PostgreSQL. ``postgres://`` (as most ``DATABASE_URL``\ s spell
    it) means ``postgresql://``."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgres":
        parsed = parsed.set(drivername="postgresql" + parsed.drivername[len("postgres") :])
    options: dict[str, Any] = {
        "hide_parameters": True,
        "json_serializer": json_dumps,
        "execution_options": {"preserve_rowcount": True},
    }
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        connect_args = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT}
        options["connect_args"] = connect_args
        if _is_memory(parsed):
            options["poolclass"] = StaticPool
    elif backend == "postgresql":
        if parsed.get_driver_name() in ("", "psycopg2") and "+" not in parsed.drivername:
            parsed = parsed.set(drivername="postgresql+psycopg")
        options["pool_pre_ping"] = True
    else:
        raise MirrorConfigError(
            f"the mirror supports sqlite and postgresql databases, not {backend!r}"
        )
    options.update(kwargs)
    engine = sa.create_engine(parsed, **options)
    if backend == "sqlite":
        _setup_sqlite(engine, wal=not _is_memory(parsed))
    return engine


def _setup_sqlite(engine: Engine, *, wal: bool) -> None:
    """Let SQLAlchemy, not the driver, begin transactions (so DDL is
    transactional too), and put a file database in WAL mode."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver's implicit BEGIN, off
        cursor = dbapi_connection.cursor()
        try:
            if wal:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")


def translate_error(error: exc.SQLAlchemyError, operation: str) -> MirrorDatabaseError:
    """The typed error for a database failure during ``operation``. The
    message names the driver's error class (and, for connection failures, its
    first line), never the values of the statement."""
    original = getattr(error, "orig", None)
    kind = type(original).__name__ if original is not None else type(error).__name__
    unavailable = isinstance(error, exc.OperationalError | exc.InterfaceError | exc.TimeoutError)
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        unavailable = True
    if unavailable:
        first_line = str(original if original is not None else error).strip().splitlines()
        detail = f"{kind}: {first_line[0]}" if first_line else kind
        return DatabaseUnavailableError(operation, detail)
    code = getattr(original, "sqlstate", None) or getattr(original, "sqlite_errorname", None)
    return MirrorDatabaseError(operation, f"{kind} ({code})" if code else kind)


class MirrorDatabase:
    """One database holding mirror tables (one per kind) and the state table.

    :param url: a SQLAlchemy URL (``sqlite:///mirror.db``, ``sqlite://``,
        ``postgresql://user@host/db``) or an :class:`~sqlalchemy.engine.Engine`
        the caller made (set up as :func:`create_mirror_engine` does; the
        caller disposes it).

    :meth:`store` opens the table of one kind (creating or migrating it).
    Thread-safe: every method may be called from any thread. On SQLite,
    transactions run one at a time (:meth:`transaction` blocks while another
    runs); on PostgreSQL they run concurrently, a pooled connection each.
    """

    def __init__(self, url: str | sa.URL | Engine = "sqlite:///mirror.db") -> None:
        if isinstance(url, Engine):
            self.engine = url
            self._owns_engine = False
        else:
            self.engine = create_mirror_engine(url)
            self._owns_engine = True
        self.dialect: str = self.engine.dialect.name
        if self.dialect not in ("sqlite", "postgresql"):
            raise MirrorConfigError(f"unsupported database dialect {self.dialect!r}")
        # On SQLite: held for the whole of each transaction (one writer).
        # Guards nothing else; never held while calling user code.
        self._lock = threading.Lock()
        #: Logs database outages (see :mod:`tracker.mirror.outage`).
        self.outages = OutageLog()
        self.metadata = sa.MetaData()
        self.state = sa.Table(
            STATE_TABLE,
            self.metadata,
            sa.Column("table_name", sa.Text, primary_key=True),
            sa.Column("resource", sa.Text, nullable=False),
            sa.Column("kind", sa.Text, nullable=False),
            sa.Column("resource_version", sa.Text, nullable=False, server_default=""),
            sa.Column("columns", sa.Text, nullable=False),
            sa.Column("secret_data", sa.Boolean, nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        )

    def __repr__(self) -> str:
        return f"MirrorDatabase({self.engine.url.render_as_string(hide_password=True)!r})"

    @contextlib.contextmanager
    def transaction(self, operation: str) -> Iterator[Connection]:
        """A connection inside one transaction: committed when the block
        ends, rolled back when it raises. A database failure is raised as a
        :class:`~tracker.errors.MirrorDatabaseError` (``__cause__``: the
        SQLAlchemy error); other exceptions pass through (after the rollback).
        Failures and successes go to :attr:`outages`, which logs an outage
        once when it starts and once when it ends.
        ``operation`` names what is done, for the error's message. Blocks on
        SQLite while another transaction runs."""
        lock = self._lock if self.dialect == "sqlite" else contextlib.nullcontext()
        with lock:
            try:
                with self.engine.begin() as conn:
                    yield conn
            except exc.SQLAlchemyError as error:
                typed = translate_error(error, operation)
                typed.__cause__ = error  # for the outage log's traceback, before the raise
                self.outages.failed(typed)
                raise typed from error
        self.outages.succeeded()

    def store(
        self,
        resource: Resource,
        columns: Iterable[Column] = (),
        *,
        table: str | None = None,
        store_secret_data: bool = False,
        drop_undeclared_columns: bool = False,
    ) -> MirrorStore:
        """Open the table of ``resource``: a :class:`~tracker.mirror.MirrorStore`
        (see there for the parameters). Creates the table on first use, and
        migrates it additively when ``columns`` gained some (and drops the
        columns no longer declared with ``drop_undeclared_columns``)."""
        from tracker.mirror.store import MirrorStore  # noqa: PLC0415 - store imports this module

        return MirrorStore(
            self,
            resource,
            columns,
            table=table,
            store_secret_data=store_secret_data,
            drop_undeclared_columns=drop_undeclared_columns,
        )

    def close(self) -> None:
        """Dispose of the engine's connections (if this database made the
        engine). Idempotent."""
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> MirrorDatabase:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
