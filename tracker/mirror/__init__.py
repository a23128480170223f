"""Mirror Kubernetes kinds into SQL: a table per kind on SQLAlchemy Core,
SQLite by default, PostgreSQL through psycopg 3 (the ``mirror`` extra).

* :class:`MirrorDatabase` -- the engine, transactions with typed errors, the
  state table (:mod:`tracker.mirror.database`).
* :class:`MirrorStore` -- the table of one kind: ``sync``, ``delete``,
  ``matches``, ``rows``, batches, the resourceVersion last applied
  (:mod:`tracker.mirror.store`).
* :class:`Column` -- a declared column extracted by path; the table layout
  and what is stored of Secrets (:mod:`tracker.mirror.schema`).
* :class:`LiveReader` -- uncached GETs and complete lists of a kind
  (:mod:`tracker.mirror.live`).
* :func:`mirror_controller`, :class:`SyncController`, :class:`MirrorSyncer`,
  :func:`sync_reconciler` -- the controller that keeps a table equal to the
  API server, on :mod:`informers.toolkit.runtime` (:mod:`tracker.mirror.controller`).

The public API is exactly what ``__all__`` lists (a test pins it).
"""

from __future__ import annotations

from tracker.errors import (
    DatabaseUnavailableError,
    InvalidObjectError,
    MirrorConfigError,
    MirrorDatabaseError,
    MirrorError,
    SchemaMismatchError,
)
from tracker.mirror.controller import (
    MirrorSyncer,
    SyncController,
    mirror_controller,
    sync_reconciler,
)
from tracker.mirror.database import STATE_TABLE, MirrorDatabase, create_mirror_engine
from tracker.mirror.live import LiveReader
from tracker.mirror.schema import BUILTIN_COLUMNS, Column, ColumnType, table_name_for
from tracker.mirror.store import MirrorBatch, MirrorRow, MirrorStore

__all__ = [
    # database
    "MirrorDatabase",
    "create_mirror_engine",
    "STATE_TABLE",
    # tables
    "MirrorStore",
    "MirrorBatch",
    "MirrorRow",
    # schema
    "Column",
    "ColumnType",
    "BUILTIN_COLUMNS",
    "table_name_for",
    # the controller
    "mirror_controller",
    "SyncController",
    "MirrorSyncer",
    "sync_reconciler",
    "LiveReader",
    # errors
    "MirrorError",
    "MirrorConfigError",
    "InvalidObjectError",
    "SchemaMismatchError",
    "MirrorDatabaseError",
    "DatabaseUnavailableError",
]
