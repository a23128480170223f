"""What a mirror table looks like: the built-in columns, the columns a user
declares (:class:`Column`, a value extracted from each object by path), the
table name derived from the resource, and how an object becomes a row.

Every kind gets one table::

    uid                 text, primary key    metadata.uid
    namespace           text, not null       "" for cluster-scoped objects
    name                text, not null
    resource_version    text, not null
    labels              JSON (JSONB)         {} when none
    annotations         JSON (JSONB)         {} when none
    object              JSON (JSONB)         the whole object, as the API returned it
    deletion_timestamp  timestamp, nullable  set while the object is terminating
    synced_at           timestamp            when the row was last written (UTC)
    <declared columns>  one per Column, each with its own index

with an index on ``(namespace, name)`` (not unique: for a moment an object
recreated under its name has a row per incarnation; :meth:`MirrorStore.sync`
removes the stale one in the same transaction).

**Secrets.** Unless a store is told otherwise (``store_secret_data=True``), a
Secret's ``data`` and ``stringData`` are removed before it is stored, and so
is the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (which
repeats them); everything else (type, metadata, labels, other annotations) is
kept. See :func:`prepare_object`.

Everything here is pure and thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from informers.wire.resources import Resource
from tracker.errors import MirrorConfigError

__all__ = [
    "BUILTIN_COLUMNS",
    "COLUMN_TYPES",
    "LAST_APPLIED_ANNOTATION",
    "MAX_IDENTIFIER_LENGTH",
    "Column",
    "ColumnType",
    "describe_path",
    "identifier",
    "is_secret",
    "parse_timestamp",
    "prepare_object",
    "table_name_for",
    "validate_identifier",
]

#: The columns every mirror table has, in order.
BUILTIN_COLUMNS = (
    "uid",
    "namespace",
    "name",
    "resource_version",
    "labels",
    "annotations",
    "object",
    "deletion_timestamp",
    "synced_at",
)

#: The SQL types a declared column may have.
ColumnType = Literal["text", "integer", "float", "boolean", "json", "timestamp"]
#: The types a declared column may have.
COLUMN_TYPES: tuple[str, ...] = ("text", "integer", "float", "boolean", "json", "timestamp")

#: PostgreSQL's identifier limit (bytes); names are ASCII, so characters.
MAX_IDENTIFIER_LENGTH = 63

#: The annotation ``kubectl apply`` writes: a copy of the applied object,
#: Secret data included.
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*\Z")
_DNS_PART = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_INT64 = (-(2**63), 2**63 - 1)


def validate_identifier(name: str, what: str = "name") -> str:
    """Return ``name`` if it is a safe SQL identifier: lower-case ASCII
    letters, digits and ``_``, not starting with a digit, at most
    :data:`MAX_IDENTIFIER_LENGTH` characters. Raises
    :class:`~tracker.errors.MirrorConfigError` otherwise. (Names are quoted in
    SQL anyway; validation keeps them portable and readable.)"""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise MirrorConfigError(
            f"{what} {name!r} is not a safe identifier "
            "(lower-case letters, digits and _, not starting with a digit)"
        )
    if len(name) > MAX_IDENTIFIER_LENGTH:
        raise MirrorConfigError(
            f"{what} {name!r} is longer than {MAX_IDENTIFIER_LENGTH} characters"
        )
    return name


def identifier(*parts: str) -> str:
    """Join parts with ``_`` into an identifier; when that is longer than
    :data:`MAX_IDENTIFIER_LENGTH`, keep a prefix and end it with a short hash
    of the whole, so distinct inputs stay distinct."""
    joined = "_".join(parts)
    if len(joined) <= MAX_IDENTIFIER_LENGTH:
        return joined
    digest = hashlib.sha256(joined.encode()).hexdigest()[:10]
    return f"{joined[: MAX_IDENTIFIER_LENGTH - 11].rstrip('_')}_{digest}"


def table_name_for(resource: Resource) -> str:
    """The table of a resource: its plural for the core group (``pods``),
    ``<plural>_<group with dots as underscores>`` otherwise
    (``deployments_apps``, ``certificates_cert_manager_io``).

    The mapping is injective: a plural or group with a ``-`` (which becomes
    ``_``) and a name past :data:`MAX_IDENTIFIER_LENGTH` characters get a hash
    of the exact ``(group, plural)`` appended. Raises
    :class:`~tracker.errors.MirrorConfigError` for a plural or group that is
    not a DNS name (nothing else can reach SQL).
    """
    plural, group = resource.plural, resource.group
    if not _DNS_PART.match(plural):
        raise MirrorConfigError(f"resource plural {plural!r} is not a DNS label")
    if group and not all(_DNS_PART.match(part) for part in group.split(".")):
        raise MirrorConfigError(f"resource group {group!r} is not a DNS subdomain")
    readable = plural if not group else f"{plural}_{group}"
    name = readable.replace(".", "_").replace("-", "_")
    if "-" in readable:
        digest = hashlib.sha256(f"{group}/{plural}".encode()).hexdigest()[:8]
        name = f"{name}_{digest}"
    if name[0].isdigit():
        name = f"t_{name}"
    return identifier(name)


def _parse_path(path: str | Sequence[str]) -> tuple[str, ...]:
    if isinstance(path, str):
        parts = tuple(path.split("."))
    elif isinstance(path, Sequence) and all(isinstance(p, str) for p in path):
        parts = tuple(path)
    else:
        raise MirrorConfigError(f"a column path is a dotted string or a list of keys, not {path!r}")
    if not parts or any(not p for p in parts):
        raise MirrorConfigError(f"column path {path!r} has an empty segment")
    return parts


@dataclass(frozen=True)
class Column:
    """A column the user declares: a value extracted from each object by path.

    :param name: the SQL column name (see :func:`validate_identifier`); must
        not be one of :data:`BUILTIN_COLUMNS`.
    :param path: where the value is, as a dotted string (``"spec.nodeName"``,
        ``"status.phase"``, ``"spec.containers.0.image"``: a number indexes a
        list) or a sequence of keys, for keys with dots in them
        (``("metadata", "labels", "app.kubernetes.io/name")``).
    :param type: ``"text"`` (default), ``"integer"`` (64-bit), ``"float"``,
        ``"boolean"``, ``"json"`` (any value; JSONB on PostgreSQL) or
        ``"timestamp"`` (an RFC 3339 time of the API, as a UTC timestamp with
        time zone).
    :param index: create an index on the column (default: yes).

    A value that is missing, or not of the column's type, is stored as SQL
    ``NULL`` (an integer beyond 64 bits too); a text column stores strings as
    they are and any other value as its compact JSON (``3``, ``true``,
    ``{"a":1}``). The whole object is kept in ``object`` regardless.
    """

    name: str
    path: str | Sequence[str] = field(compare=False)
    type: ColumnType = "text"
    index: bool = True
    parts: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        validate_identifier(self.name, "column name")
        if self.name in BUILTIN_COLUMNS:
            raise MirrorConfigError(f"column name {self.name!r} is a built-in column")
        if self.type not in COLUMN_TYPES:
            raise MirrorConfigError(
                f"column {self.name!r} has type {self.type!r}; expected one of {COLUMN_TYPES}"
            )
        object.__setattr__(self, "parts", _parse_path(self.path))

    @property
    def path_text(self) -> str:
        """The path for messages: dotted, or a JSON list when a key has a dot."""
        return describe_path(self.parts)

    def spec(self) -> dict[str, Any]:
        """What the state table records of the column (compared on later runs)."""
        return {"path": list(self.parts), "type": self.type}

    def extract(self, obj: Any) -> Any:
        """The column's value for ``obj`` (``None`` for SQL ``NULL``)."""
        value: Any = obj
        for part in self.parts:
            if type(value) is dict or isinstance(value, Mapping):  # the fast check first
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit():
                index = int(part)
                value = value[index] if index < len(value) else None
            else:
                return None
            if value is None:
                return None
        return _convert(value, self.type)


def describe_path(parts: Sequence[str]) -> str:
    """A path for messages: ``spec.nodeName``, or a JSON list of the keys when
    one of them has a dot in it."""
    if any("." in part for part in parts):
        return json.dumps(list(parts))
    return ".".join(parts)


def _convert(value: Any, column_type: str) -> Any:
    if column_type == "text":
        if isinstance(value, str):
            return value
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    if column_type == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return value if _INT64[0] <= value <= _INT64[1] else None
        return None
    if column_type == "float":
        if isinstance(value, int | float) and not isinstance(value, bool):
            try:
                return float(value)
            except OverflowError:
                return None
        return None
    if column_type == "boolean":
        return value if isinstance(value, bool) else None
    if column_type == "timestamp":
        return parse_timestamp(value)
    return value  # json


def is_secret(resource: Resource) -> bool:
    """Whether ``resource`` is the core group's Secrets."""
    return resource.group == "" and resource.plural == "secrets"


def prepare_object(obj: Mapping[str, Any], *, strip_secret_data: bool) -> Mapping[str, Any]:
    """The object as it is stored. With ``strip_secret_data`` a copy without
    ``data``, ``stringData`` and the last-applied annotation (see the module
    docstring); otherwise ``obj`` itself -- or, for a mapping that is not a
    dict (a decode-on-demand store's :class:`~informers.wire.raw.RawObject`,
    what a metadata-only informer hands its handlers by default), its
    decoded form, which the database's JSON encoder can write. Never
    mutates ``obj``."""
    if type(obj) is not dict:
        decoded = getattr(obj, "decoded", None)  # RawObject.decoded(): the exact decode
        obj = decoded() if callable(decoded) else dict(obj)
    if not strip_secret_data:
        return obj
    stored = {k: v for k, v in obj.items() if k not in ("data", "stringData")}
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping):
        annotations = metadata.get("annotations")
        if isinstance(annotations, Mapping) and LAST_APPLIED_ANNOTATION in annotations:
            kept = {k: v for k, v in annotations.items() if k != LAST_APPLIED_ANNOTATION}
            stored["metadata"] = {**metadata, "annotations": kept}
    return stored


def parse_timestamp(value: Any) -> datetime | None:
    """An RFC 3339 timestamp of the API (``2024-05-01T12:00:00Z``) as an aware
    UTC datetime; ``None`` for anything else."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
