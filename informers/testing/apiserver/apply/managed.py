"""``metadata.managedFields``: who owns which fields of an object.

An object carries one entry per *manager identity*: the manager's name, the
operation (``Apply`` for server-side apply, ``Update`` for every other
write), the subresource it wrote through, and for ``Update`` entries the
API version (an applier has one entry whatever version it used). Each entry
holds a :class:`~.fieldpath.FieldSet` in its ``FieldsV1`` form, and the time
of the manager's last change.

This module reads and writes those entries (:func:`decode`, :func:`encode`,
in the server's order: ``Apply`` entries first, then by time, manager, API
version and subresource) and names the manager of a request
(:func:`manager_name`). Everything is pure and thread-safe.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from informers.errors import InformersError
from informers.testing.apiserver.apply.fieldpath import (
    FieldSet,
    FieldsV1Error,
    from_fields_v1,
    to_fields_v1,
)

__all__ = [
    "APPLY",
    "MAX_MANAGER_LENGTH",
    "UPDATE",
    "Entry",
    "Identity",
    "ManagedFieldsError",
    "decode",
    "encode",
    "is_reset",
    "manager_name",
    "now",
]

APPLY = "Apply"
UPDATE = "Update"
#: The longest manager name the server keeps (FieldManagerMaxLength).
MAX_MANAGER_LENGTH = 128

#: (manager, operation, apiVersion for Update else "", subresource)
Identity = tuple[str, str, str, str]


class ManagedFieldsError(InformersError, ValueError):
    """A ``managedFields`` list is malformed (the server answers 400/500)."""


@dataclass
class Entry:
    """One ``managedFields`` entry, decoded."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: str | None = None
    subresource: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def identity(self) -> Identity:
        version = self.api_version if self.operation == UPDATE else ""
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """The manager as conflict messages name it: ``"name"``, plus
        ``with subresource "s"`` and, for updaters, ``using <apiVersion>``."""
        text = _go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {_go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


def _go_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def now() -> str:
    """The current time as managedFields stamp it (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _normal_time(text: Any) -> str | None:
    """A stamp as the server writes it (clients send ``+00:00`` or
    fractions); ``None`` when it is not a time."""
    if not isinstance(text, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def is_reset(entries: Any) -> bool:
    """True for the values a write sends to clear managedFields: ``[]`` or
    ``[{}]``."""
    return isinstance(entries, list) and entries in ([], [{}])


def decode(entries: Any) -> dict[Identity, Entry]:
    """The entries of a ``managedFields`` list by identity (an absent or
    ``null`` list is empty). :class:`ManagedFieldsError` when malformed."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ManagedFieldsError("metadata.managedFields must be a list")
    found: dict[Identity, Entry] = {}
    for number, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise ManagedFieldsError(f"managed fields entry {number} is not an object")
        operation = raw.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        api_version = raw.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = raw.get("fieldsType")
        if fields_type != "FieldsV1":
            if not fields_type:
                raise ManagedFieldsError(f"missing fieldsType in managed fields entry {number}")
            raise ManagedFieldsError(
                f"invalid fieldsType {fields_type!r} in managed fields entry {number}"
            )
        try:
            fields = from_fields_v1(raw.get("fieldsV1") or {})
        except FieldsV1Error as exc:
            raise ManagedFieldsError(f"error decoding set: {exc}") from None
        entry = Entry(
            manager=str(raw.get("manager") or ""),
            operation=operation,
            api_version=api_version,
            fields=fields,
            time=_normal_time(raw.get("time")),
            subresource=str(raw.get("subresource") or ""),
        )
        found[entry.identity] = entry
    return found


def _sort_key(entry: Entry) -> tuple[str, str, str, str, str]:
    # RFC 3339 UTC stamps of one format sort as text; a missing time first
    return (entry.operation, entry.time or "", entry.manager, entry.api_version, entry.subresource)


def encode(managed: dict[Identity, Entry]) -> list[dict[str, Any]]:
    """The ``managedFields`` list of ``managed`` (entries with no fields are
    left out), in the server's order and key order."""
    out: list[dict[str, Any]] = []
    for entry in sorted(managed.values(), key=_sort_key):
        if not entry.fields:
            continue
        item: dict[str, Any] = {
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
        }
        if entry.time is not None:
            item["time"] = entry.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = to_fields_v1(entry.fields)
        if entry.subresource:
            item["subresource"] = entry.subresource
        out.append(item)
    return out


def manager_name(field_manager: str | None, user_agent: str | None) -> str:
    """The manager of a write: the ``fieldManager`` parameter, else the
    User-Agent up to its first ``/`` (printable characters only, at most
    :data:`MAX_MANAGER_LENGTH`), else ``"unknown"``."""
    if field_manager:
        return field_manager
    prefix = (user_agent or "").split("/", 1)[0]
    kept: list[str] = []
    size = 0
    for char in prefix:
        if not char.isprintable():
            continue
        size += len(char.encode())
        if size > MAX_MANAGER_LENGTH:
            break
        kept.append(char)
    return "".join(kept) or "unknown"
