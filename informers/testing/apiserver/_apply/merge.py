"""The three walks server-side apply makes over JSON values and a schema.

:func:`field_set`
    the fields a value sets (an applied configuration's field set): leaves,
    atomic nodes, empty objects, map entries, associative list items (each
    item and its fields), set members.
:func:`compare`
    what changed from one value to another: the paths *added*, *modified*
    and *removed*. A node that appears or disappears as a whole is itself
    reported as well as what lies below it; atomic nodes and scalars are
    compared as one value.
:func:`merge`
    a configuration laid over a live value: objects merge field by field
    (the configuration wins), associative lists merge item by item by their
    keys, sets by value, and atomic lists, atomic maps and scalars are
    replaced. A ``null`` in the configuration removes the field.
:func:`remove`
    a value with the given paths taken out; a container emptied this way
    disappears.

Values are parsed JSON (dicts, lists, scalars). Inputs are never modified:
results share unchanged subtrees with them, so callers treat every value as
read-only. All functions are pure and thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._apply.fieldpath import (
    FieldSet,
    Path,
    PathElement,
    element_documents,
    index,
    json_text,
    member_document,
    print_element,
)
from informers.testing.apiserver._apply.schema import Schema

__all__ = [
    "Comparison",
    "compare",
    "field_set",
    "item_element",
    "merge",
    "remove",
]

_MISSING: Any = object()


def _is_leaf(schema: Schema, value: Any) -> bool:
    """True when ``value`` is owned as one field under ``schema``."""
    if schema.atomic or schema.kind == "scalar":
        return True
    if isinstance(value, dict):
        return schema.kind == "list"
    if isinstance(value, list):
        # untyped lists are atomic; a list where an object belongs is a leaf
        return schema.kind != "list"
    return True


#: Elements of items with one key field, a string: (key, value) -> element.
_ONE_KEY: dict[tuple[str, str], PathElement] = {}
_ONE_KEY_SIZE = 16384


def item_element(schema: Schema, item: Any, position: int) -> PathElement:
    """The path element of ``item`` (at ``position``) in a list of ``schema``."""
    if schema.list_type == "map" and isinstance(item, dict):
        keys = schema.keys
        if len(keys) == 1 and keys[0] in item:  # the common case, quickly
            name = keys[0]
            found = item[name]
            if type(found) is not str:
                return ("k", ((name, json_text(found)),))
            cached = _ONE_KEY.get((name, found))
            if cached is None:
                cached = ("k", ((name, json_text(found)),))
                if len(_ONE_KEY) >= _ONE_KEY_SIZE:
                    _ONE_KEY.clear()
                _ONE_KEY[(name, found)] = cached
            return cached
        fields = {}
        for name in schema.keys:
            if name in item:
                fields[name] = item[name]
            elif name in schema.key_defaults:
                fields[name] = schema.key_defaults[name]
        return ("k", tuple(sorted((n, json_text(v)) for n, v in fields.items())))
    if schema.list_type == "set":
        return ("v", json_text(item))
    return index(position)


# ------------------------------------------------------------------ field set


def field_set(obj: dict[str, Any], schema: Schema) -> FieldSet:
    """The set of fields ``obj`` sets, under ``schema``."""
    out = FieldSet()
    _collect(obj, schema, out)
    return out


def _collect(value: Any, schema: Schema, out: FieldSet) -> None:
    if isinstance(value, dict):
        struct = schema.kind == "struct"
        fields = schema.fields() if struct else None
        for name, child in value.items():
            element = ("f", name)
            sub_schema = schema.field(name)
            if _is_leaf(sub_schema, child) or not child:
                if not isinstance(child, list) or _is_leaf(sub_schema, child):
                    out.members.add(element)
                continue
            sub = FieldSet()
            _collect(child, sub_schema, sub)
            if sub:
                out.children[element] = sub
            if fields is None or name not in fields:
                out.members.add(element)
        return
    if isinstance(value, list):
        item_schema = schema.element()
        seen: set[PathElement] = set()
        for position, item in enumerate(value):
            element = item_element(schema, item, position)
            if element in seen:
                continue
            seen.add(element)
            out.members.add(element)
            if isinstance(item, dict | list) and item and not _is_leaf(item_schema, item):
                sub = FieldSet()
                _collect(item, item_schema, sub)
                if sub:
                    out.children[element] = sub


# ------------------------------------------------------------------- compare


class Comparison:
    """The paths :func:`compare` found added, modified and removed."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added = FieldSet()
        self.modified = FieldSet()
        self.removed = FieldSet()

    def changed(self) -> FieldSet:
        """Added or modified paths."""
        return self.added.union(self.modified)

    def is_same(self) -> bool:
        return not (self.added or self.modified or self.removed)


def compare(old: Any, new: Any, schema: Schema) -> Comparison:
    """What changed from ``old`` to ``new`` (either may be ``None`` for
    absent at the root)."""
    out = Comparison()
    _compare(
        _MISSING if old is None else old,
        _MISSING if new is None else new,
        schema,
        (),
        out,
    )
    return out


def _empty(value: Any) -> bool:
    return value is _MISSING or value is None or (isinstance(value, dict | list) and not value)


def _whole(value: Any, schema: Schema) -> FieldSet:
    """Every path below ``value`` (a non-empty container that is not a
    leaf): what :func:`compare` reports below a node that appears or
    disappears as a whole. Built as its ``FieldsV1`` document in one walk,
    and decoded only where a later operation looks."""
    return member_document(_whole_document(value, schema))


#: Documents of objects whose fields are all leaves, by their names (shared:
#: documents are never changed).
_LEAF_DOCUMENTS: dict[tuple[str, ...], dict[str, Any]] = {}
_LEAF_DOCUMENTS_SIZE = 4096


def _whole_document(value: Any, schema: Schema) -> dict[str, Any]:
    """The ``FieldsV1`` document of ``value`` as a member node with every
    path below it."""
    if isinstance(value, dict):
        for child in value.values():
            if child and isinstance(child, dict | list):
                break
        else:  # only leaves: the document depends on the names alone
            names = tuple(value)
            known = _LEAF_DOCUMENTS.get(names)
            if known is None:
                known = {".": {}, **{"f:" + name: {} for name in sorted(names)}}
                if len(_LEAF_DOCUMENTS) >= _LEAF_DOCUMENTS_SIZE:
                    _LEAF_DOCUMENTS.clear()
                _LEAF_DOCUMENTS[names] = known
            return known
        out: dict[str, Any] = {".": {}}
        for name in sorted(value):
            child = value[name]
            if child and isinstance(child, dict | list):
                sub_schema = schema.field(name)
                if not _is_leaf(sub_schema, child):
                    out["f:" + name] = _whole_document(child, sub_schema)
                    continue
            out["f:" + name] = {}  # the printed field element
        return out
    item_schema = schema.element()
    if schema.list_type == "map" and len(schema.keys) == 1:
        quick = _one_key_document(value, schema.keys[0], item_schema)
        if quick is not None:
            return quick
    documents: dict[PathElement, dict[str, Any]] = {}
    for position, item in enumerate(value):
        element = item_element(schema, item, position)
        if element in documents:  # the first of duplicates wins
            continue
        if item and isinstance(item, dict | list) and not _is_leaf(item_schema, item):
            documents[element] = _whole_document(item, item_schema)
        else:
            documents[element] = {}
    return element_documents(documents)


#: Printed elements of items with one key field, a string: (key, value) -> text.
_ONE_KEY_TEXTS: dict[tuple[str, str], str] = {}


def _one_key_document(items: list[Any], name: str, item_schema: Schema) -> dict[str, Any] | None:
    """:func:`_whole_document` of an associative list keyed by the one field
    ``name`` when every item is an object with a string there (their
    elements then sort by that string); ``None`` otherwise."""
    by_value: dict[str, Any] = {}
    for item in items:
        if type(item) is not dict:
            return None
        found = item.get(name)
        if type(found) is not str:
            return None
        if found not in by_value:  # the first of duplicates wins
            by_value[found] = item
    out: dict[str, Any] = {".": {}}
    for found in sorted(by_value):
        text = _ONE_KEY_TEXTS.get((name, found))
        if text is None:
            text = print_element(("k", ((name, json_text(found)),)))
            if len(_ONE_KEY_TEXTS) >= _ONE_KEY_SIZE:
                _ONE_KEY_TEXTS.clear()
            _ONE_KEY_TEXTS[(name, found)] = text
        item = by_value[found]
        out[text] = {} if _is_leaf(item_schema, item) else _whole_document(item, item_schema)
    return out


def _attach(into: FieldSet, path: Path, below: FieldSet) -> None:
    """Add ``path`` and ``below`` (the paths under it, a set of its own) to
    ``into`` in place; ``path`` is not in ``into`` yet."""
    if not path:
        into.members |= below.members
        into.children.update(below.children)
        return
    node = into
    for element in path[:-1]:
        child = node.children.get(element)
        if child is None:
            child = node.children[element] = FieldSet()
        node = child
    node.members.add(path[-1])
    node.children[path[-1]] = below


def _compare(old: Any, new: Any, schema: Schema, path: Path, out: Comparison) -> None:
    if old is _MISSING or new is _MISSING:
        # a node that appears or disappears: itself and everything below it
        present = new if old is _MISSING else old
        into = out.added if old is _MISSING else out.removed
        if present is _MISSING or _empty(present) or _is_leaf(schema, present):
            into.insert(path)
        else:
            _attach(into, path, _whole(present, schema))
        return
    if (
        _is_leaf(schema, old)
        or _is_leaf(schema, new)
        or isinstance(old, dict) != isinstance(new, dict)
        or (_empty(old) and _empty(new))
    ):
        if not _equal(old, new):
            out.modified.insert(path)
        return
    if isinstance(old, dict):
        for name, lvalue in old.items():
            rvalue = new.get(name, _MISSING)
            if rvalue is lvalue or _same_container(lvalue, rvalue):
                continue
            _compare(lvalue, rvalue, schema.field(name), (*path, ("f", name)), out)
        for name, rvalue in new.items():
            if name not in old:
                _compare(_MISSING, rvalue, schema.field(name), (*path, ("f", name)), out)
        return
    item_schema = schema.element()
    left_items = _index(schema, old)
    right_items = _index(schema, new)
    for element, litem in left_items.items():
        ritem = right_items.get(element, _MISSING)
        if ritem is litem or _same_container(litem, ritem):
            continue
        _compare(litem, ritem, item_schema, (*path, element), out)
    for element, ritem in right_items.items():
        if element not in left_items:
            _compare(_MISSING, ritem, item_schema, (*path, element), out)


def _same_container(left: Any, right: Any) -> bool:
    """Equal objects or lists (compared in C: inside them, ``true`` and ``1``
    count as equal, which the server's typed values never mix)."""
    kind = type(left)
    return (kind is dict or kind is list) and type(right) is kind and left == right


def _index(schema: Schema, items: list[Any]) -> dict[PathElement, Any]:
    """Items of an associative list by element; the first of duplicates wins."""
    found: dict[PathElement, Any] = {}
    if schema.list_type == "map" and len(schema.keys) == 1:
        name = schema.keys[0]
        for position, item in enumerate(items):
            element = None
            if type(item) is dict:
                key_value = item.get(name)
                if type(key_value) is str:
                    element = _ONE_KEY.get((name, key_value))  # item_element's cache
            if element is None:
                element = item_element(schema, item, position)
            if element not in found:
                found[element] = item
        return found
    for position, item in enumerate(items):
        found.setdefault(item_element(schema, item, position), item)
    return found


def _equal(left: Any, right: Any) -> bool:
    """JSON equality where ``True`` is not ``1``."""
    if left is right:
        return True
    if type(left) is not type(right):
        if isinstance(left, bool) or isinstance(right, bool):
            return False
        if isinstance(left, int | float) and isinstance(right, int | float):
            return left == right
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_equal(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_equal, left, right))
    return bool(left == right)


# --------------------------------------------------------------------- merge


def merge(live: Any, config: Any, schema: Schema) -> Any:
    """``config`` laid over ``live`` (see the module docstring)."""
    if config is _MISSING:
        return live
    if live is _MISSING or live is None or _is_leaf(schema, config) or _is_leaf(schema, live):
        return config
    if isinstance(config, dict):
        if not isinstance(live, dict):
            return config
        out = dict(live)
        for name, value in config.items():
            if value is None:
                out.pop(name, None)
                continue
            out[name] = merge(live.get(name, _MISSING), value, schema.field(name))
        return out
    if not isinstance(live, list) or not isinstance(config, list):
        return config
    return _merge_list(live, config, schema)


def _merge_list(live: list[Any], config: list[Any], schema: Schema) -> list[Any]:
    """Associative lists: items merged by element. Items only in ``live``
    keep their place; the configuration's items follow its order, each one
    placed before the live item that comes after it in the live list."""
    item_schema = schema.element()
    live_items = [(item_element(schema, item, i), item) for i, item in enumerate(live)]
    config_items = [(item_element(schema, item, i), item) for i, item in enumerate(config)]
    live_by = dict(reversed(live_items))
    config_by: dict[PathElement, Any] = {}
    for element, item in config_items:
        config_by.setdefault(element, item)
    out: list[Any] = []
    done: set[PathElement] = set()
    pending = iter(config_items)

    def emit_config_up_to(stop: PathElement | None) -> None:
        for element, item in pending:
            if element in done:
                continue
            done.add(element)
            if item is None:
                continue
            out.append(merge(live_by.get(element, _MISSING), item, item_schema))
            if element == stop:
                return

    for element, item in live_items:
        if element in done:
            continue
        if element in config_by:
            emit_config_up_to(element)
        else:
            done.add(element)
            out.append(item)
    emit_config_up_to(None)
    return out


# -------------------------------------------------------------------- remove


def remove(value: Any, paths: FieldSet, schema: Schema, keep: FieldSet | None = None) -> Any:
    """``value`` without ``paths`` (members are removed with everything below
    them; children are descended). A container emptied this way disappears
    unless ``keep`` (owned paths) has it as a member. Returns ``value``
    itself when nothing is removed."""
    if not paths or _is_leaf(schema, value):
        return value
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for element in paths.members | paths.children.keys():
            tag, name = element
            if tag != "f" or name not in value:
                continue
            if out is None:
                out = dict(value)
            if element in paths.members:
                del out[name]
                continue
            below = keep.children.get(element) if keep is not None else None
            child = remove(value[name], paths.children[element], schema.field(name), below)
            emptied = isinstance(child, dict | list) and not child and value[name]
            if emptied and not (keep is not None and element in keep.members):
                del out[name]
            else:
                out[name] = child
        return value if out is None else out
    if isinstance(value, list):
        item_schema = schema.element()
        items: list[Any] = []
        changed = False
        for position, item in enumerate(value):
            element = item_element(schema, item, position)
            if element in paths.members:
                changed = True
                continue
            sub = paths.children.get(element)
            below = keep.children.get(element) if keep is not None else None
            kept = item if sub is None else remove(item, sub, item_schema, below)
            changed = changed or kept is not item
            items.append(kept)
        return items if changed else value
    return value
