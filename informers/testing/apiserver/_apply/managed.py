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

import collections
import datetime
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from informers.errors import InformersError
from informers.testing.apiserver._apply.fieldpath import (
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
    "remember",
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
    #: the fieldsV1 document ``encoded_for`` was read from or written as
    encoded: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    encoded_for: FieldSet | None = field(default=None, compare=False, repr=False)

    def fields_v1(self) -> dict[str, Any]:
        """``fields`` as ``fieldsV1`` (kept while ``fields`` is the same set)."""
        if self.encoded is None or self.encoded_for is not self.fields:
            self.encoded = to_fields_v1(self.fields)
            self.encoded_for = self.fields
        return self.encoded

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


#: (second, its stamp): the last stamp made (a tuple, replaced whole).
_last_stamp: tuple[int, str] = (0, "")


def now() -> str:
    """The current time as managedFields stamp it (RFC 3339, seconds, UTC)."""
    global _last_stamp  # noqa: PLW0603 - a one-entry cache, replaced atomically
    second = int(time.time())
    last = _last_stamp
    if last[0] == second:
        return last[1]
    stamp = datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _last_stamp = (second, stamp)
    return stamp


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


#: Decoded lists by id(list), each with the list itself (keeping the id
#: valid while cached); guarded by _cache_lock.
_cache: collections.OrderedDict[int, tuple[list[Any], dict[Identity, Entry]]] = (
    collections.OrderedDict()
)
_cache_lock = threading.Lock()
_CACHE_SIZE = 4096


def _copies(managed: dict[Identity, Entry]) -> dict[Identity, Entry]:
    return {
        ident: Entry(
            entry.manager,
            entry.operation,
            entry.api_version,
            entry.fields,
            entry.time,
            entry.subresource,
            entry.encoded,
            entry.encoded_for,
        )
        for ident, entry in managed.items()
    }


def remember(entries: list[Any], managed: dict[Identity, Entry]) -> None:
    """Record that ``entries`` (a list that will not be modified, such as a
    stored object's) decodes to ``managed``, so :func:`decode` of the same
    list is free."""
    with _cache_lock:
        _cache[id(entries)] = (entries, _copies(managed))
        _cache.move_to_end(id(entries))
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def decode(entries: Any, *, stored: bool = False) -> dict[Identity, Entry]:
    """The entries of a ``managedFields`` list by identity (an absent or
    ``null`` list is empty). :class:`ManagedFieldsError` when malformed.
    The caller owns the returned entries. Lists given to :func:`remember`
    are not decoded again; a ``stored`` list (one the server wrote) is
    remembered, and its ``fieldsV1`` documents are reused when encoding."""
    if entries is None:
        return {}
    with _cache_lock:
        cached = _cache.get(id(entries))
    if cached is not None and cached[0] is entries:
        return _copies(cached[1])
    found = _decode(entries, stored)
    if stored and isinstance(entries, list):
        remember(entries, found)
    return found


def _decode(entries: Any, stored: bool) -> dict[Identity, Entry]:
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
            encoded=(raw.get("fieldsV1") or {}) if stored else None,
            encoded_for=fields if stored else None,
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
        item["fieldsV1"] = entry.fields_v1()
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
