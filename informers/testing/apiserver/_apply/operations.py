"""Field management on writes: :func:`record_update` for ordinary writes
and :func:`apply` for server-side apply.

The rules (those of the API server's field manager):

* **Update** (create, PUT, JSON/merge/strategic patch): the fields that
  changed between the stored object and the new one become owned by the
  writing manager and are taken from every other manager; fields that were
  removed are dropped from everyone. Updates never conflict. An existing
  object that has no managedFields at all is left untracked (objects from
  before field management), unless it is being created.
* **Apply**: the configuration is the manager's whole intent. It is merged
  over the live object (see :mod:`.merge`); the manager's set becomes
  exactly the configuration's fields. A field it owned at its last apply
  and omits now is removed from the object unless some manager (itself
  included) still owns it or something below it; another manager's field
  that the apply changes is a conflict (:class:`ApplyConflictError`) unless
  ``force``, which moves the field to the applier. Setting a field to the
  value it already has shares it. The first apply to an object whose fields
  nobody owns gives them to a ``before-first-apply`` updater first.
* Fields the server owns are never tracked: ``apiVersion``, ``kind`` and
  ``metadata`` itself, its ``name``, ``namespace``, ``uid``,
  ``resourceVersion``, ``generation``, ``creationTimestamp``, ``selfLink``
  and ``managedFields``. For kinds with a status subresource, writes to the
  main resource do not own ``status`` (an applied ``status`` is ignored),
  and writes to ``/status`` own only ``status``.

* An object keeps at most :data:`MAX_UPDATE_MANAGERS` ``Update`` entries;
  the oldest are folded into an ``ancient-changes`` entry.

Deviation: when an applier drops an associative-list item that another
manager still owns fields of, the item stays (with its key fields), rather
than being removed whole.

Functions are pure (inputs are never modified) and thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from informers.errors import InformersError
from informers.testing.apiserver._apply import merge as _merge
from informers.testing.apiserver._apply.fieldpath import FieldSet, Path, format_path
from informers.testing.apiserver._apply.managed import (
    APPLY,
    UPDATE,
    Entry,
    Identity,
    ManagedFieldsError,
    decode,
    encode,
    is_reset,
    now,
    remember,
)
from informers.testing.apiserver._apply.schema import Schema

__all__ = [
    "ANCIENT_CHANGES",
    "BEFORE_FIRST_APPLY",
    "MAX_UPDATE_MANAGERS",
    "ApplyConflictError",
    "ApplyError",
    "Target",
    "apply",
    "record_update",
]

#: The updater that receives the fields nobody owned before the first apply.
BEFORE_FIRST_APPLY = "before-first-apply"
#: The updater that receives the oldest updaters' fields beyond the cap.
ANCIENT_CHANGES = "ancient-changes"
#: Most ``Update`` entries an object keeps (the server's DefaultMaxUpdateManagers).
MAX_UPDATE_MANAGERS = 10

_META_OWNED_BY_SERVER = (
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
)


def _strip_set() -> FieldSet:
    out = FieldSet()
    for name in ("apiVersion", "kind", "metadata"):
        out.insert((("f", name),))
    for name in _META_OWNED_BY_SERVER:
        out.insert((("f", "metadata"), ("f", name)))
    return out


_STRIP = _strip_set()
_STATUS = ("f", "status")


class ApplyError(InformersError, ValueError):
    """An apply request the server refuses; ``status`` is the HTTP code
    (400 for a malformed configuration)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ApplyConflictError(InformersError):
    """An apply would change fields other managers own.

    ``conflicts`` lists ``(manager description, path)`` pairs, sorted;
    :meth:`causes` and :attr:`message` are the 409 Status's ``details.causes``
    and ``message`` as the server words them."""

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        self.conflicts = conflicts
        self.message = _conflict_message(conflicts)
        super().__init__(self.message)

    def causes(self) -> list[dict[str, str]]:
        return [
            {
                "reason": "FieldManagerConflict",
                "message": f"conflict with {manager}",
                "field": format_path(path),
            }
            for manager, path in self.conflicts
        ]


def _conflict_message(conflicts: list[tuple[str, Path]]) -> str:
    if len(conflicts) == 1:
        manager, path = conflicts[0]
        return f"Apply failed with 1 conflict: conflict with {manager}: {format_path(path)}"
    by_manager: dict[str, list[Path]] = {}
    for manager, path in conflicts:
        by_manager.setdefault(manager, []).append(path)
    lines: list[str] = []
    for manager in sorted(by_manager):
        lines.append(f"conflicts with {manager}:")
        lines.extend(f"- {format_path(path)}" for path in by_manager[manager])
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)


@dataclass(frozen=True)
class Target:
    """What field management needs to know about a kind.

    ``schema`` is the root schema; ``api_version`` and ``kind`` the served
    version; ``status_subresource`` whether ``status`` is written through
    ``/status``; ``builtin`` whether empty objects have ``spec``/``status``
    structs (as typed built-in objects do, so creating them does not own
    ``spec`` itself)."""

    schema: Schema
    api_version: str
    kind: str
    status_subresource: bool = False
    builtin: bool = True


def _scoped(fields: FieldSet, target: Target, subresource: str) -> FieldSet:
    """``fields`` without what the server owns or the write cannot own."""
    fields = fields.difference(_STRIP)
    if subresource == "status":
        return fields.only_subtree(_STATUS)
    if target.status_subresource:
        return fields.without_subtree(_STATUS)
    return fields


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        obj = dict(obj)
        obj["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return obj


def _typed(obj: dict[str, Any], target: Target) -> dict[str, Any]:
    """``obj`` as a typed built-in object compares: its ``spec`` and
    ``status`` structs exist even when empty (a shallow copy when added)."""
    if not target.builtin:
        return obj
    out = obj
    for name in ("spec", "status"):
        if name not in obj and target.schema.field(name).kind == "struct":
            if out is obj:
                out = dict(obj)
            out[name] = {}
    return out


def _empty_object(target: Target) -> dict[str, Any]:
    """The object a create is compared with."""
    return _typed({"metadata": {}}, target)


def _decode_or_empty(entries: Any, *, stored: bool = False) -> dict[Identity, Entry]:
    try:
        return decode(entries, stored=stored)
    except ManagedFieldsError:
        return {}


def _set_managed(obj: dict[str, Any], managed: dict[Identity, Entry]) -> None:
    """Write ``managed`` into ``obj``'s metadata (which must be obj's own)."""
    encoded = encode(managed)
    meta = obj["metadata"]
    if encoded:
        meta["managedFields"] = encoded
        remember(encoded, managed)
    else:
        meta.pop("managedFields", None)


def _take_from_others(
    managed: dict[Identity, Entry], me: Identity, changed: FieldSet, removed: FieldSet
) -> None:
    for identity in list(managed):
        if identity == me:
            continue
        entry = managed[identity]
        rest = entry.fields.difference(changed).difference(removed)
        if rest:
            entry.fields = rest
        else:
            del managed[identity]


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str | None,
    target: Target,
    subresource: str = "",
    timestamp: str | None = None,
    entries: list[dict[str, Any]] | None = None,
) -> None:
    """Record an ordinary write (``old`` is ``None`` on create) in
    ``new["metadata"]["managedFields"]``. ``new``'s metadata dict must be the
    caller's own: it is modified in place; nothing else is.

    The starting entries are the request's own ``managedFields`` when it
    sends a non-empty valid list (``[]`` or ``[{}]`` clears them), else the
    stored object's; writes to a subresource always start from the stored
    object's. ``manager=None`` records nothing new (an internal write) but
    still carries the entries over. ``entries`` given are stored as they
    are (an apply computed them)."""
    meta = new["metadata"]
    sent = meta.pop("managedFields", None)
    if entries is not None:
        if entries:
            meta["managedFields"] = entries
        return
    stored = (old or {}).get("metadata", {}).get("managedFields")
    from_stored = bool(subresource) or sent is None or sent == stored
    if manager is None and (from_stored or is_reset(sent)):  # carried over as they are
        if from_stored and stored:
            meta["managedFields"] = stored
        return
    if from_stored:
        managed = _decode_or_empty(stored, stored=True)
    elif is_reset(sent):
        managed = {}
    else:
        managed = _decode_or_empty(sent)
        if not managed:
            managed = _decode_or_empty(stored, stored=True)
    if manager is None or (old is not None and not managed):
        _set_managed(new, managed)
        return
    base = _typed(_without_managed(old), target) if old is not None else _empty_object(target)
    comparison = _merge.compare(base, _typed(new, target), target.schema)
    changed = _scoped(comparison.changed(), target, subresource)
    removed = _scoped(comparison.removed, target, subresource)
    me: Identity = (manager, UPDATE, target.api_version, subresource)
    _take_from_others(managed, me, changed, removed)
    mine = managed.get(me)
    previous = mine.fields.difference(removed) if mine is not None else FieldSet()
    fields = previous.union(changed)
    if fields:
        time = mine.time if mine is not None else None
        if changed or mine is None:
            time = timestamp or now()
        entry = Entry(manager, UPDATE, target.api_version, fields, time, subresource)
        if mine is not None and mine.fields is fields:  # its fieldsV1 is still right
            entry.encoded, entry.encoded_for = mine.encoded, mine.encoded_for
        managed[me] = entry
    else:
        managed.pop(me, None)
    _cap_updaters(managed)
    _set_managed(new, managed)


def _cap_updaters(managed: dict[Identity, Entry]) -> None:
    """Fold the oldest ``Update`` entries into one ``ancient-changes`` entry
    per API version until at most :data:`MAX_UPDATE_MANAGERS` remain."""
    updaters = [e for e in managed.values() if e.operation == UPDATE]
    count = len(updaters)
    if count <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda e: (e.time or "", e.manager, e.api_version, e.subresource))
    for entry in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        if entry.manager == ANCIENT_CHANGES and not entry.subresource:
            continue
        del managed[entry.identity]
        bucket_id: Identity = (ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        bucket = managed.get(bucket_id)
        if bucket is None:
            managed[bucket_id] = Entry(
                ANCIENT_CHANGES, UPDATE, entry.api_version, entry.fields, entry.time
            )
        else:
            bucket.fields = bucket.fields.union(entry.fields)
            bucket.time = max(bucket.time or "", entry.time or "") or None
            count -= 1


def _applied_part(config: dict[str, Any], target: Target, subresource: str) -> dict[str, Any]:
    """The part of a configuration an apply through ``subresource`` uses."""
    if subresource == "status":
        meta = config.get("metadata") or {}
        part = {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
        part["metadata"] = {k: meta[k] for k in ("name", "namespace") if k in meta}
        return part
    if target.status_subresource and "status" in config:
        return {k: v for k, v in config.items() if k != "status"}
    return config


def _guard(remove: FieldSet, owned: FieldSet) -> FieldSet:
    """``remove`` without the members that have owned paths below them
    (they stay; their unowned descendants are still removed)."""
    out = FieldSet()
    out.members = {e for e in remove.members if e not in owned.children}
    for element, sub in remove.children.items():
        below = owned.children.get(element)
        kept = sub if below is None else _guard(sub, below)
        if kept:
            out.children[element] = kept
    return out


def _protect_keys(remove: FieldSet, value: Any, schema: Schema) -> FieldSet:
    """``remove`` without the key fields of associative-list items that stay."""
    if not remove.children:
        return remove
    out = FieldSet()
    out.members = set(remove.members)
    if isinstance(value, dict):
        for element, sub in remove.children.items():
            name = element[1]
            if element[0] == "f" and name in value:
                kept = _protect_keys(sub, value[name], schema.field(name))
                if kept:
                    out.children[element] = kept
    elif isinstance(value, list):
        item_schema = schema.element()
        keys = {("f", k) for k in schema.keys}
        for position, item in enumerate(value):
            element = _merge.item_element(schema, item, position)
            below = remove.children.get(element)
            if below is None or element in remove.members:
                continue
            kept = _protect_keys(below, item, item_schema)
            if kept.members & keys:
                trimmed = FieldSet()
                trimmed.members = kept.members - keys
                trimmed.children = kept.children
                kept = trimmed
            if kept:
                out.children[element] = kept
    return out


def apply(
    live: dict[str, Any] | None,
    config: Any,
    *,
    manager: str,
    force: bool,
    target: Target,
    subresource: str = "",
    timestamp: str | None = None,
) -> dict[str, Any]:
    """The object after ``manager`` applies ``config`` to ``live`` (``None``
    when the object does not exist yet: the result is the object to
    create), with its managedFields. Neither input is modified.

    Raises :class:`ApplyError` for a malformed configuration and
    :class:`ApplyConflictError` when the apply changes fields other managers own
    and ``force`` is false."""
    if not isinstance(config, dict):
        raise ApplyError(400, "the apply configuration must be an object")
    meta = config.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise ApplyError(400, "metadata must be an object")
    if (meta or {}).get("managedFields") is not None:
        raise ApplyError(400, "metadata.managedFields must be nil")
    version = config.get("apiVersion")
    if version != target.api_version:
        raise ApplyError(
            400,
            "Incorrect version specified in apply patch. Specified patch version: "
            f"{version or ''}, expected: {target.api_version}",
        )
    if config.get("kind") != target.kind:
        raise ApplyError(
            400,
            f"the kind of the apply configuration ({config.get('kind') or ''}) does not "
            f"match the kind of the resource ({target.kind})",
        )
    schema = target.schema
    if live is None:
        base: dict[str, Any] = {
            "apiVersion": target.api_version,
            "kind": target.kind,
            "metadata": {},
        }
        managed: dict[Identity, Entry] = {}
    else:
        base = _without_managed(live)
        try:
            managed = decode((live.get("metadata") or {}).get("managedFields"), stored=True)
        except ManagedFieldsError as exc:
            raise ApplyError(500, f"failed to decode managed fields: {exc}") from None
        if not managed:
            first = _merge.compare(_empty_object(target), _typed(base, target), schema)
            owned = _scoped(first.changed(), target, subresource)
            if owned:
                entry = Entry(
                    BEFORE_FIRST_APPLY, UPDATE, target.api_version, owned, None, subresource
                )
                managed[entry.identity] = entry
    part = _applied_part(config, target, subresource)
    merged = _merge.merge(base, part, schema)
    me: Identity = (manager, APPLY, "", subresource)
    last = managed.get(me)
    applied = _scoped(_merge.field_set(part, schema), target, subresource)
    time = last.time if last is not None else None
    managed[me] = Entry(manager, APPLY, target.api_version, applied, time, subresource)
    if last is not None and last.fields:
        owned_now = FieldSet()
        for entry in managed.values():
            owned_now = owned_now.union(entry.fields)
        dropped = _guard(last.fields.difference(owned_now), owned_now)
        dropped = _protect_keys(dropped, merged, schema)
        merged = _merge.remove(merged, dropped, schema, owned_now)
    comparison = _merge.compare(_typed(base, target), _typed(merged, target), schema)
    changed = _scoped(comparison.changed(), target, subresource)
    removed = _scoped(comparison.removed, target, subresource)
    conflicts: list[tuple[str, Path]] = []
    for identity, entry in managed.items():
        if identity == me:
            continue
        clash = entry.fields.intersection(changed)
        conflicts.extend((entry.describe(), path) for path in clash.paths())
    if conflicts and not force:
        conflicts.sort(key=lambda c: (c[0], format_path(c[1])))
        raise ApplyConflictError(conflicts)
    _take_from_others(managed, me, changed, removed)
    if not applied:
        del managed[me]
    elif last is None or not comparison.is_same():
        managed[me].time = timestamp or now()
    result = dict(merged)
    result["metadata"] = dict(result.get("metadata") or {})
    _set_managed(result, managed)
    return result
