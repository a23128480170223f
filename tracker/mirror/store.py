"""The SQL table of one kind: :class:`MirrorStore` writes objects as rows
(one upsert each, or many in one transaction with :meth:`MirrorStore.batch`),
removes them by key, snapshots the rows for a diff and records the
resourceVersion last applied.

The contract:

* ``sync(obj)`` is one ``INSERT ... ON CONFLICT (uid) DO UPDATE ... WHERE``
  the row differs (its resourceVersion, namespace, name or a declared column),
  plus the removal of any row of the same ``namespace/name`` with another UID
  (an earlier incarnation of a recreated object), in one transaction. Syncing
  an object whose row is current writes nothing: :attr:`MirrorStore.writes`
  counts the rows actually inserted, updated or deleted.
* ``delete(key)`` removes every row of ``namespace/name``.
* ``matches(obj, row)`` compares the UID, the resourceVersion and every
  declared column (extracted from the object as it would be stored).
* A failure rolls the whole transaction back: a batch is applied entirely or
  not at all.

The table is created on first use. When a later run declares more columns,
each is added (``ALTER TABLE ... ADD COLUMN``), indexed, and filled from the
stored objects, in one transaction. A column dropped from the declaration is
dropped from the table (with its index and data) only with
``drop_undeclared_columns=True``. Any other difference (that column without
the option, a column declared with another path or type, a built-in column
missing) raises :class:`~tracker.errors.SchemaMismatchError` naming each
difference; no data is dropped otherwise. Changing ``store_secret_data`` of a
Secrets table is handled as well: turned off, the stored ``data`` is removed
at once; turned on, every row is marked stale so the next diff re-syncs it.

Thread-safety: every method may be called from any thread at once (the
controller's workers do). The write counter has its own lock; database work
goes through :meth:`MirrorDatabase.transaction`, which blocks on SQLite while
another transaction runs.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from informers.wire.partial import PARTIAL_KIND
from informers.wire.resources import Resource
from tracker.errors import InvalidObjectError, MirrorConfigError, SchemaMismatchError
from tracker.mirror.jsoncolumn import json_dumps, json_type
from tracker.mirror.schema import (
    BUILTIN_COLUMNS,
    Column,
    describe_path,
    identifier,
    is_secret,
    parse_timestamp,
    prepare_object,
    table_name_for,
    validate_identifier,
)
from tracker.syncapi import ObjectKey

if TYPE_CHECKING:
    from tracker.mirror.database import MirrorDatabase

__all__ = ["MirrorBatch", "MirrorRow", "MirrorStore"]

log = logging.getLogger(__name__)

#: Rows read per round trip when filling a new column from the stored objects.
BACKFILL_CHUNK = 1000

_SQL_TYPES: dict[str, Any] = {
    "text": sa.Text,
    "integer": sa.BigInteger,
    "float": sa.Float,
    "boolean": sa.Boolean,
    "timestamp": partial(sa.DateTime, timezone=True),
}


@dataclass(frozen=True, slots=True)
class MirrorRow:
    """A row as :meth:`MirrorStore.rows` snapshots it (without the object).

    ``columns`` maps each declared column's name to its stored value.
    """

    uid: str
    namespace: str
    name: str
    resource_version: str
    columns: Mapping[str, Any]

    @property
    def key(self) -> ObjectKey:
        """The key of the object the row mirrors."""
        return ObjectKey(self.namespace, self.name)


def _sql_type(column: Column) -> sa.types.TypeEngine[Any]:
    if column.type == "json":
        return json_type()
    return _SQL_TYPES[column.type]()  # type: ignore[no-any-return]


def _same(stored: Any, extracted: Any) -> bool:
    """Whether a stored column value equals the value extracted from an
    object. SQLite hands timestamps back without their (UTC) time zone."""
    if isinstance(stored, datetime) and isinstance(extracted, datetime):
        if stored.tzinfo is None:
            stored = stored.replace(tzinfo=UTC)
        return bool(stored == extracted)
    return bool(stored == extracted)


def _quoted(name: str) -> sa.sql.elements.quoted_name:
    return sa.sql.elements.quoted_name(name, quote=True)


class MirrorStore:
    """The table mirroring one kind.

    :param database: where the table lives.
    :param resource: the kind (its table name is
        :func:`~tracker.mirror.schema.table_name_for` it, unless ``table``).
    :param columns: the declared :class:`~tracker.mirror.schema.Column`\\ s.
    :param table: the table name instead of the derived one (a validated
        identifier).
    :param store_secret_data: for Secrets, keep ``data`` and ``stringData``
        (off by default: see :mod:`tracker.mirror.schema`). Ignored for other
        kinds.
    :param drop_undeclared_columns: drop the declared columns an earlier run
        added that this one does not declare (with their index and data),
        instead of raising :class:`~tracker.errors.SchemaMismatchError`.

    Constructing the store creates or migrates its table (see the module
    docstring); it raises :class:`~tracker.errors.SchemaMismatchError`,
    :class:`~tracker.errors.MirrorConfigError`, or a
    :class:`~tracker.errors.MirrorDatabaseError` when the database fails.
    """

    def __init__(
        self,
        database: MirrorDatabase,
        resource: Resource,
        columns: Iterable[Column] = (),
        *,
        table: str | None = None,
        store_secret_data: bool = False,
        drop_undeclared_columns: bool = False,
    ) -> None:
        self.database = database
        self._drop_undeclared = bool(drop_undeclared_columns)
        self.resource = resource
        self.columns: tuple[Column, ...] = tuple(columns)
        names = [c.name for c in self.columns]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise MirrorConfigError(f"columns declared twice: {', '.join(duplicates)}")
        for column in self.columns:
            if not isinstance(column, Column):
                raise MirrorConfigError(f"columns must be Column objects, not {column!r}")
        self.table_name = (
            validate_identifier(table, "table name") if table else table_name_for(resource)
        )
        if self.table_name.startswith("kube_mirror_"):
            raise MirrorConfigError(f"table name {self.table_name!r} is reserved for the mirror")
        self.secret = is_secret(resource)
        self.store_secret_data = bool(store_secret_data)
        self._strip = self.secret and not self.store_secret_data
        self.table = self._define_table()
        self._upsert = self._upsert_statement()
        t = self.table
        self._delete_key = t.delete().where(
            t.c.namespace == sa.bindparam("k_namespace"), t.c.name == sa.bindparam("k_name")
        )
        self._delete_stale = t.delete().where(
            t.c.namespace == sa.bindparam("k_namespace"),
            t.c.name == sa.bindparam("k_name"),
            t.c.uid != sa.bindparam("k_uid"),
        )
        # Built on first use, then never changed: the upsert as driver SQL.
        self._driver_upsert: _DriverStatement | None = None
        self._lock = threading.Lock()
        self._writes = 0  # guarded by _lock: rows inserted, updated or deleted
        self._transactions = 0  # guarded by _lock: write transactions committed
        self._ensure_schema()

    def __repr__(self) -> str:
        return f"MirrorStore({self.resource}, table={self.table_name!r})"

    # ---------------------------------------------------------- definition

    def _define_table(self) -> sa.Table:
        metadata = sa.MetaData()
        name = self.table_name
        table = sa.Table(
            _quoted(name),
            metadata,
            sa.Column(_quoted("uid"), sa.Text, primary_key=True),
            sa.Column(_quoted("namespace"), sa.Text, nullable=False),
            sa.Column(_quoted("name"), sa.Text, nullable=False),
            sa.Column(_quoted("resource_version"), sa.Text, nullable=False),
            sa.Column(_quoted("labels"), json_type(), nullable=False),
            sa.Column(_quoted("annotations"), json_type(), nullable=False),
            sa.Column(_quoted("object"), json_type(), nullable=False),
            sa.Column(_quoted("deletion_timestamp"), sa.DateTime(timezone=True)),
            sa.Column(_quoted("synced_at"), sa.DateTime(timezone=True), nullable=False),
            *(sa.Column(_quoted(c.name), _sql_type(c)) for c in self.columns),
        )
        sa.Index(_quoted(identifier("ix", name, "namespace_name")), table.c.namespace, table.c.name)
        for column in self.columns:
            if column.index:
                sa.Index(_quoted(self._index_name(column)), table.c[column.name])
        return table

    def _index_name(self, column: Column) -> str:
        return identifier("ix", self.table_name, column.name)

    def _upsert_statement(self) -> Any:
        t = self.table
        insert: Any = (
            postgresql.insert(t) if self.database.dialect == "postgresql" else sqlite.insert(t)
        )
        updated = [c.name for c in t.columns if c.name != "uid"]
        compared = ["resource_version", "namespace", "name", *(c.name for c in self.columns)]
        return insert.on_conflict_do_update(
            index_elements=[t.c.uid],
            set_={name: insert.excluded[name] for name in updated},
            where=sa.or_(*(t.c[name].is_distinct_from(insert.excluded[name]) for name in compared)),
        )

    # -------------------------------------------------------------- schema

    def _state_row(self, conn: Connection) -> Any:
        state = self.database.state
        return conn.execute(
            sa.select(state).where(state.c.table_name == self.table_name)
        ).one_or_none()

    def _write_state(self, conn: Connection, *, insert: bool) -> None:
        state = self.database.state
        values = {
            "resource": str(self.resource),
            "kind": self.resource.kind,
            "columns": json.dumps({c.name: c.spec() for c in self.columns}, sort_keys=True),
            "secret_data": self.store_secret_data,
            "updated_at": datetime.now(UTC),
        }
        if insert:
            conn.execute(state.insert().values(table_name=self.table_name, **values))
        else:
            conn.execute(
                state.update().where(state.c.table_name == self.table_name).values(**values)
            )

    def _ensure_schema(self) -> None:
        with self.database.transaction(f"preparing table {self.table_name}") as conn:
            self.database.state.create(conn, checkfirst=True)
            inspector = sa.inspect(conn)
            if not inspector.has_table(self.table_name):
                self.table.create(conn)
                if self._state_row(conn) is None:
                    self._write_state(conn, insert=True)
                else:  # a table dropped by hand: start its record afresh
                    self._write_state(conn, insert=False)
                    self._set_rv_locked(conn, "")
                log.info("mirror: created table %s for %s", self.table_name, self.resource)
                return
            existing = [c["name"] for c in inspector.get_columns(self.table_name)]
            indexes = {ix["name"] for ix in inspector.get_indexes(self.table_name)}
            state = self._state_row(conn)
            self._migrate(conn, existing, indexes, state)

    def _migrate(
        self, conn: Connection, existing: Sequence[str], indexes: set[Any], state: Any
    ) -> None:
        recorded: dict[str, Any] = json.loads(state.columns) if state is not None else {}
        declared = {c.name: c for c in self.columns}
        differences = [
            f"built-in column {name!r} is missing"
            for name in BUILTIN_COLUMNS
            if name not in existing
        ]
        dropped: list[str] = []
        for name in existing:
            if name in BUILTIN_COLUMNS:
                continue
            if name not in declared:
                if self._drop_undeclared:
                    dropped.append(name)
                    continue
                spec = recorded.get(name)
                was = f" ({describe_path(spec['path'])}, {spec['type']})" if spec else ""
                differences.append(
                    f"column {name!r}{was} is in the table but not declared "
                    "(drop_undeclared_columns=True, or the CLI's --drop-undeclared-columns, "
                    "drops it)"
                )
                continue
            column = declared[name]
            if name not in recorded:
                differences.append(
                    f"column {name!r} is in the table but its path and type were never recorded"
                )
            elif recorded[name] != column.spec():
                differences.append(
                    f"column {name!r} is {describe_path(recorded[name]['path'])} "
                    f"({recorded[name]['type']}) in the table, but {column.path_text} "
                    f"({column.type}) is declared"
                )
        if differences:
            raise SchemaMismatchError(self.table_name, differences)

        added = [c for c in self.columns if c.name not in existing]
        prep = conn.dialect.identifier_preparer
        for name in dropped:
            index_name = identifier("ix", self.table_name, name)
            if index_name in indexes:
                conn.exec_driver_sql(f"DROP INDEX {prep.quote(index_name)}")
            conn.exec_driver_sql(
                f"ALTER TABLE {prep.quote(self.table_name)} DROP COLUMN {prep.quote(name)}"
            )
        if dropped:
            log.warning(
                "mirror: dropped columns %s of table %s (no longer declared)",
                ", ".join(dropped),
                self.table_name,
            )
        for column in added:
            sql_type = self.table.c[column.name].type.compile(dialect=conn.dialect)
            conn.exec_driver_sql(
                f"ALTER TABLE {prep.quote(self.table_name)} "
                f"ADD COLUMN {prep.quote(column.name)} {sql_type}"
            )
        for index in self.table.indexes:
            if index.name not in indexes:
                index.create(conn)
        if added:
            self._backfill(conn, added)
            log.info(
                "mirror: table %s gained columns %s (filled from the stored objects)",
                self.table_name,
                ", ".join(c.name for c in added),
            )
        if state is None:
            self._write_state(conn, insert=True)
            return
        if self.secret and bool(state.secret_data) != self.store_secret_data:
            self._secret_option_changed(conn)
        if added or dropped or bool(state.secret_data) != self.store_secret_data:
            self._write_state(conn, insert=False)

    def _stored_objects(self, conn: Connection) -> Iterator[Sequence[Any]]:
        """Every (uid, object), a chunk at a time, in uid order."""
        t = self.table
        after = ""
        while True:
            chunk = conn.execute(
                sa.select(t.c.uid, t.c.object)
                .where(t.c.uid > after)
                .order_by(t.c.uid)
                .limit(BACKFILL_CHUNK)
            ).all()
            if not chunk:
                return
            yield chunk
            after = chunk[-1].uid

    def _backfill(self, conn: Connection, added: Sequence[Column]) -> None:
        t = self.table
        update = (
            t.update()
            .where(t.c.uid == sa.bindparam("k_uid"))
            .values({c.name: sa.bindparam(f"v_{c.name}") for c in added})
        )
        for chunk in self._stored_objects(conn):
            params = [
                {"k_uid": row.uid, **{f"v_{c.name}": c.extract(row.object) for c in added}}
                for row in chunk
            ]
            conn.execute(update, params)

    def _secret_option_changed(self, conn: Connection) -> None:
        t = self.table
        if self.store_secret_data:
            # Rows lack the data: make every one stale, so the next diff re-syncs it.
            conn.execute(t.update().values(resource_version=""))
            log.info("mirror: %s now stores Secret data; every row will be re-synced", t.name)
            return
        update = (
            t.update()
            .where(t.c.uid == sa.bindparam("k_uid"))
            .values(object=sa.bindparam("v_object"), annotations=sa.bindparam("v_annotations"))
        )
        for chunk in self._stored_objects(conn):
            params = []
            for row in chunk:
                stored = prepare_object(row.object, strip_secret_data=True)
                params.append(
                    {
                        "k_uid": row.uid,
                        "v_object": stored,
                        "v_annotations": dict(_metadata(stored).get("annotations") or {}),
                    }
                )
            conn.execute(update, params)
        log.info("mirror: %s no longer stores Secret data; removed it from every row", t.name)

    # --------------------------------------------------------------- rows

    def row_values(self, obj: Any) -> dict[str, Any]:
        """The row ``obj`` is stored as (every column's value). Raises
        :class:`InvalidObjectError` for an object that cannot be a row.
        Never mutates ``obj``."""
        if type(obj) is not dict and not isinstance(obj, Mapping):  # the fast check first
            raise InvalidObjectError(f"a {self.resource.kind} must be a mapping, not {type(obj)}")
        metadata = obj.get("metadata")
        if type(metadata) is not dict and not isinstance(metadata, Mapping):
            raise InvalidObjectError(f"a {self.resource.kind} without metadata cannot be stored")
        name = metadata.get("name")
        namespace = metadata.get("namespace") or ""
        if not isinstance(name, str) or not name or not isinstance(namespace, str):
            raise InvalidObjectError(f"a {self.resource.kind} without a name cannot be stored")
        uid = metadata.get("uid")
        if not isinstance(uid, str) or not uid:
            raise InvalidObjectError(f"{self.resource.kind} {namespace}/{name} has no metadata.uid")
        kind = obj.get("kind")
        # A metadata-only informer's objects (PartialObjectMetadata) are
        # stored as they are: their metadata columns, and the object's JSON.
        if kind is not None and kind not in (self.resource.kind, PARTIAL_KIND):
            raise InvalidObjectError(
                f"{namespace}/{name} is a {kind!r}, not a {self.resource.kind!r}"
            )
        stored = prepare_object(obj, strip_secret_data=self._strip)
        stored_meta = _metadata(stored)
        rv = metadata.get("resourceVersion")
        values: dict[str, Any] = {
            "uid": uid,
            "namespace": namespace,
            "name": name,
            "resource_version": rv if isinstance(rv, str) else "",
            "labels": _mapping(stored_meta.get("labels")),
            "annotations": _mapping(stored_meta.get("annotations")),
            "object": stored,
            "deletion_timestamp": parse_timestamp(metadata.get("deletionTimestamp")),
            "synced_at": datetime.now(UTC),
        }
        for column in self.columns:
            values[column.name] = column.extract(stored)
        return values

    def matches(self, obj: Any, row: MirrorRow) -> bool:
        """Whether ``row`` already mirrors ``obj``: same UID, same
        resourceVersion, and every declared column equal to the value
        extracted from ``obj`` (as stored: for Secrets without their data).
        Pure; the ``matches`` of :func:`tracker.syncapi.diff`."""
        metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
        if not isinstance(metadata, Mapping):
            return False
        if (
            metadata.get("uid") != row.uid
            or metadata.get("resourceVersion") != row.resource_version
        ):
            return False
        if not self.columns:
            return True
        stored = prepare_object(obj, strip_secret_data=self._strip)
        return all(_same(row.columns.get(c.name), c.extract(stored)) for c in self.columns)

    @staticmethod
    def key(row: MirrorRow) -> ObjectKey:
        """The key of the object ``row`` mirrors (the ``key`` of
        :func:`tracker.syncapi.diff`)."""
        return row.key

    # ------------------------------------------------------------ writing

    @property
    def writes(self) -> int:
        """Rows inserted, updated or deleted by this store so far."""
        with self._lock:
            return self._writes

    @property
    def transactions(self) -> int:
        """Write transactions committed by this store so far: one per
        :meth:`sync`, :meth:`delete`, :meth:`apply` (a whole batch) and
        :meth:`set_resource_version`. Reads and the schema's preparation are
        not counted, nor transactions that failed (rolled back)."""
        with self._lock:
            return self._transactions

    def _count(self, written: int) -> None:
        with self._lock:
            self._writes += written
            self._transactions += 1

    def sync(self, obj: Any) -> bool:
        """Store ``obj`` (one transaction: the upsert, and the removal of
        rows of its key with another UID). Returns whether anything was
        written. See the module docstring."""
        values = self.row_values(obj)
        key_params = {
            "k_namespace": values["namespace"],
            "k_name": values["name"],
            "k_uid": values["uid"],
        }
        with self.database.transaction(f"sync {self.resource} {_key_text(values)}") as conn:
            written = max(conn.execute(self._upsert, values).rowcount, 0)
            written += max(conn.execute(self._delete_stale, key_params).rowcount, 0)
        self._count(written)
        log.debug(
            "mirror: synced %s %s (%d rows written)", self.resource, _key_text(values), written
        )
        return written > 0

    def delete(self, key: ObjectKey | str) -> bool:
        """Remove every row of ``key`` (an :class:`~tracker.syncapi.ObjectKey`
        or a key string). Returns whether a row was removed."""
        object_key = key if isinstance(key, ObjectKey) else ObjectKey.parse(key)
        params = {"k_namespace": object_key.namespace, "k_name": object_key.name}
        with self.database.transaction(f"delete {self.resource} {object_key}") as conn:
            written = max(conn.execute(self._delete_key, params).rowcount, 0)
        self._count(written)
        log.debug("mirror: deleted %s %s (%d rows)", self.resource, object_key, written)
        return written > 0

    def batch(self) -> MirrorBatch:
        """A batch of syncs and deletes applied in one transaction when its
        ``with`` block ends (nothing is written if the block raises)::

            with store.batch() as batch:
                batch.sync(obj)
                batch.delete(key)
                batch.set_resource_version(rv)
        """
        return MirrorBatch(self)

    def apply(self, batch: MirrorBatch) -> int:
        """Apply ``batch`` in one transaction (what leaving its ``with`` block
        does); returns the rows written. Operations run in the order given,
        consecutive syncs together (a later sync of a key supersedes an
        earlier one in the same run)."""
        ops, resource_version = batch.take()
        written = 0
        if not ops and resource_version is None:
            return 0
        with self.database.transaction(f"batch of {len(ops)} on {self.resource}") as conn:
            for kind, run in _runs(ops):
                if kind == "sync":
                    latest = {(v["namespace"], v["name"]): v for v in run}
                    rows = list(latest.values())
                    written += self._upsert_many(conn, rows)
                    written += self._delete_stale_many(conn, rows)
                else:
                    params = [{"k_namespace": k.namespace, "k_name": k.name} for k in run]
                    written += max(conn.execute(self._delete_key, params).rowcount, 0)
            if resource_version is not None:
                self._set_rv_locked(conn, resource_version)
        self._count(written)
        log.debug("mirror: batch on %s: %d ops, %d rows written", self.resource, len(ops), written)
        return written

    def _upsert_many(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
        """The upsert of many rows in one ``executemany``, straight through
        the driver: the statement is compiled once for the dialect and each
        value goes through its column type's own bind processor (what
        SQLAlchemy would do, without its per-row parameter bookkeeping).
        Returns the rows written."""
        driver = self._driver_upsert
        if driver is None:
            driver = self._driver_upsert = _DriverStatement(self._upsert, self.table, conn)
        return max(conn.exec_driver_sql(driver.sql, driver.params(rows)).rowcount, 0)

    def _delete_stale_many(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> int:
        """Remove the rows of the keys of ``rows`` whose UID is not the one
        given (earlier incarnations of recreated objects), in few statements
        that find them through the keys' index: one ``DELETE`` joining the
        table with the batch's ``(namespace, name, uid)`` triples, passed as
        one parameter -- three arrays unnested on PostgreSQL, a JSON array
        read by ``json_each`` on SQLite. Returns the rows removed."""
        if self.database.dialect == "postgresql":
            prep = conn.dialect.identifier_preparer
            statement = sa.text(
                f"DELETE FROM {prep.quote(self.table_name)} AS t USING "
                "(SELECT unnest(CAST(:k_namespaces AS text[])) AS namespace, "
                "unnest(CAST(:k_names AS text[])) AS name, "
                "unnest(CAST(:k_uids AS text[])) AS uid) AS k "
                "WHERE t.namespace = k.namespace AND t.name = k.name AND t.uid <> k.uid"
            )
            params = {
                "k_namespaces": [v["namespace"] for v in rows],
                "k_names": [v["name"] for v in rows],
                "k_uids": [v["uid"] for v in rows],
            }
            return max(conn.execute(statement, params).rowcount, 0)
        table = conn.dialect.identifier_preparer.quote(self.table_name)
        statement = sa.text(
            f"DELETE FROM {table} WHERE rowid IN (SELECT t.rowid FROM "
            f"json_each(:k_keys) AS k JOIN {table} AS t "
            "ON t.namespace = json_extract(k.value, '$[0]') "
            "AND t.name = json_extract(k.value, '$[1]') "
            "AND t.uid <> json_extract(k.value, '$[2]'))"
        )
        keys = json_dumps([[v["namespace"], v["name"], v["uid"]] for v in rows])
        return max(conn.execute(statement, {"k_keys": keys}).rowcount, 0)

    # ----------------------------------------------------------- the state

    def _set_rv_locked(self, conn: Connection, resource_version: str) -> None:
        state = self.database.state
        conn.execute(
            state.update()
            .where(state.c.table_name == self.table_name)
            .values(resource_version=resource_version, updated_at=datetime.now(UTC))
        )

    @property
    def resource_version(self) -> str:
        """The resourceVersion last recorded as applied (``""`` if none)."""
        state = self.database.state
        with self.database.transaction(f"reading the state of {self.table_name}") as conn:
            found = conn.execute(
                sa.select(state.c.resource_version).where(state.c.table_name == self.table_name)
            ).scalar_one_or_none()
        return found or ""

    def set_resource_version(self, resource_version: str) -> None:
        """Record ``resource_version`` as the last applied (its own
        transaction; :meth:`MirrorBatch.set_resource_version` records it with
        the batch's writes)."""
        with self.database.transaction(f"recording the state of {self.table_name}") as conn:
            self._set_rv_locked(conn, str(resource_version))
        self._count(0)

    # ------------------------------------------------------------ reading

    def rows(self) -> dict[str, MirrorRow]:
        """A snapshot of every row (without the objects), keyed by UID: the
        ``rows`` of :func:`tracker.syncapi.diff`."""
        t = self.table
        declared = [t.c[c.name] for c in self.columns]
        query = sa.select(t.c.uid, t.c.namespace, t.c.name, t.c.resource_version, *declared)
        with self.database.transaction(f"reading the rows of {self.table_name}") as conn:
            result = conn.execute(query).all()
        names = [c.name for c in self.columns]
        return {
            row[0]: MirrorRow(
                row[0],
                row[1],
                row[2],
                row[3],
                MappingProxyType(dict(zip(names, row[4:], strict=True))),
            )
            for row in result
        }

    def get(self, key: ObjectKey | str) -> dict[str, Any] | None:
        """The stored object of ``key``, or ``None``."""
        object_key = key if isinstance(key, ObjectKey) else ObjectKey.parse(key)
        t = self.table
        query = (
            sa.select(t.c.object)
            .where(t.c.namespace == object_key.namespace, t.c.name == object_key.name)
            .order_by(t.c.synced_at.desc())
            .limit(1)
        )
        with self.database.transaction(f"reading {self.resource} {object_key}") as conn:
            found = conn.execute(query).scalar_one_or_none()
        return dict(found) if found is not None else None

    def objects(self) -> dict[ObjectKey, dict[str, Any]]:
        """Every stored object by key (reads the whole table)."""
        t = self.table
        with self.database.transaction(f"reading {self.table_name}") as conn:
            result = conn.execute(sa.select(t.c.namespace, t.c.name, t.c.object)).all()
        return {ObjectKey(ns, name): dict(obj) for ns, name, obj in result}

    def count(self) -> int:
        """The number of rows."""
        with self.database.transaction(f"counting {self.table_name}") as conn:
            return int(
                conn.execute(sa.select(sa.func.count()).select_from(self.table)).scalar_one()
            )


class MirrorBatch:
    """Syncs and deletes gathered to be applied in one transaction (see
    :meth:`MirrorStore.batch`). Each ``sync`` converts its object at once (an
    :class:`InvalidObjectError` is raised there). ``written`` is the number
    of rows written, once applied. Not thread-safe: fill a batch from one
    thread."""

    def __init__(self, store: MirrorStore) -> None:
        self.store = store
        self._ops: list[tuple[str, Any]] = []
        self._resource_version: str | None = None
        self.written = 0

    def __len__(self) -> int:
        return len(self._ops)

    def sync(self, obj: Any) -> None:
        """Store ``obj`` when the batch is applied."""
        self._ops.append(("sync", self.store.row_values(obj)))

    def delete(self, key: ObjectKey | str) -> None:
        """Remove the rows of ``key`` when the batch is applied."""
        self._ops.append(("delete", key if isinstance(key, ObjectKey) else ObjectKey.parse(key)))

    def set_resource_version(self, resource_version: str) -> None:
        """Record ``resource_version`` as applied, with the batch's writes."""
        self._resource_version = str(resource_version)

    def take(self) -> tuple[list[tuple[str, Any]], str | None]:
        """The gathered operations and resourceVersion; empties the batch."""
        ops, rv = self._ops, self._resource_version
        self._ops, self._resource_version = [], None
        return ops, rv

    def __enter__(self) -> MirrorBatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.written = self.store.apply(self)
        else:
            self.take()


class _DriverStatement:
    """A statement compiled once for a connection's dialect, with the bind
    processor of each column: :meth:`params` turns row mappings into what the
    driver's ``executemany`` takes (tuples for a positional paramstyle,
    mappings otherwise)."""

    def __init__(self, statement: Any, table: sa.Table, conn: Connection) -> None:
        dialect = conn.dialect
        compiled = statement.compile(dialect=dialect)
        self.sql: str = compiled.string
        self.positional = compiled.positiontup is not None
        names = list(compiled.positiontup or compiled.binds)
        processors = {
            c.name: c.type.dialect_impl(dialect).bind_processor(dialect) for c in table.columns
        }
        self.fields = [(name, processors.get(name)) for name in names]

    def params(self, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
        fields = self.fields
        if self.positional:
            return [tuple(v[n] if f is None else f(v[n]) for n, f in fields) for v in rows]
        return [{n: v[n] if f is None else f(v[n]) for n, f in fields} for v in rows]


def _runs(ops: Sequence[tuple[str, Any]]) -> Iterator[tuple[str, list[Any]]]:
    """Consecutive operations of one kind, grouped."""
    run: list[Any] = []
    current = ""
    for kind, value in ops:
        if kind != current and run:
            yield current, run
            run = []
        current = kind
        run.append(value)
    if run:
        yield current, run


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if type(metadata) is dict or isinstance(metadata, Mapping) else {}


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if type(value) is dict or isinstance(value, Mapping) else {}


def _key_text(values: Mapping[str, Any]) -> str:
    return f"{values['namespace']}/{values['name']}"
