"""Field paths, field sets and their ``FieldsV1`` JSON form.

A *path element* names one step from a value to a child:

``("f", name)``
    a field of an object (``f:name`` in ``FieldsV1``);
``("k", ((key, json), ...))``
    the item of an associative list whose key fields have these values
    (``k:{"name":"web"}``), key fields sorted by name, each value kept as its
    compact JSON text so the element is hashable and prints unchanged;
``("v", json)``
    the member of a set-typed list with this value (``v:"a"``);
``("i", index)``
    a position in a list that has no keys (``i:0``), which the server only
    uses for lists it cannot index otherwise.

A :class:`FieldSet` is a trie of paths. Each node has *members* (paths that
end there) and *children* (sub-tries). A path can be both a member and have
children: in ``FieldsV1`` such a node is written with a ``".": {}`` entry, as
in ``{"f:labels": {".": {}, "f:app": {}}}``.

Everything here is a pure data structure: a :class:`FieldSet` is not
thread-safe to mutate, and the functions return new sets unless they say
otherwise.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from informers.errors import InformersError

__all__ = [
    "DocumentSet",
    "FieldSet",
    "FieldsV1Error",
    "Path",
    "PathElement",
    "element_documents",
    "field",
    "format_path",
    "from_fields_v1",
    "index",
    "json_text",
    "key",
    "member_document",
    "parse_element",
    "print_element",
    "to_fields_v1",
    "value",
]

PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]


class FieldsV1Error(InformersError, ValueError):
    """A ``fieldsV1`` document (or one of its keys) is malformed."""


#: Strings JSON writes as they are: printable ASCII but for ``"``, ``\\``,
#: and the ``<``, ``>``, ``&`` that Go escapes.
_PLAIN = re.compile(r"[ !#-%'-;=?-\[\]-~]*")


def json_text(obj: Any) -> str:
    """``obj`` as compact JSON the way the server writes it in field paths:
    integral floats as integers, ``<``, ``>`` and ``&`` escaped, other
    non-ASCII characters kept."""
    kind = type(obj)
    if kind is str and _PLAIN.fullmatch(obj):
        return f'"{obj}"'
    if kind is int:
        return str(obj)
    if isinstance(obj, float) and obj.is_integer():
        obj = int(obj)
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    return text


def field(name: str) -> PathElement:
    """The element naming field ``name`` of an object."""
    return ("f", name)


def key(fields: dict[str, Any]) -> PathElement:
    """The element naming the associative-list item with these key values."""
    return ("k", tuple(sorted((name, json_text(v)) for name, v in fields.items())))


def value(item: Any) -> PathElement:
    """The element naming the set member ``item``."""
    return ("v", json_text(item))


def index(position: int) -> PathElement:
    """The element naming position ``position`` of a list."""
    return ("i", position)


@functools.lru_cache(maxsize=65536)
def print_element(element: PathElement) -> str:
    """The ``FieldsV1`` key of ``element`` (``f:name``, ``k:{...}``, ``v:...``, ``i:N``)."""
    tag, data = element
    if tag == "f":
        return "f:" + str(data)
    if tag == "k":
        inner = ",".join(f"{json_text(name)}:{text}" for name, text in data)
        return "k:{" + inner + "}"
    if tag == "v":
        return "v:" + str(data)
    return f"i:{data}"


@functools.lru_cache(maxsize=65536)
def parse_element(text: str) -> PathElement:
    """The element a ``FieldsV1`` key names; :class:`FieldsV1Error` if malformed."""
    if len(text) < 2 or text[1] != ":":
        raise FieldsV1Error(f"malformed field path element {text!r}")
    tag, rest = text[0], text[2:]
    if tag == "f":
        return ("f", rest)
    try:
        if tag == "k":
            fields = json.loads(rest)
            if not isinstance(fields, dict):
                raise FieldsV1Error(f"key element {text!r} is not a JSON object")
            return key(fields)
        if tag == "v":
            return ("v", json_text(json.loads(rest)))
        if tag == "i":
            return ("i", int(rest))
    except ValueError as exc:
        raise FieldsV1Error(f"malformed field path element {text!r}: {exc}") from None
    raise FieldsV1Error(f"unknown field path element type in {text!r}")


def format_path(path: Path) -> str:
    """``path`` as the server prints it in conflict messages:
    ``.spec.containers[name="web"].image``, ``[=value]`` for set members,
    ``[0]`` for indices."""
    parts: list[str] = []
    for tag, data in path:
        if tag == "f":
            parts.append("." + str(data))
        elif tag == "k":
            parts.append("[" + ",".join(f"{name}={text}" for name, text in data) + "]")
        elif tag == "v":
            parts.append(f"[={data}]")
        else:
            parts.append(f"[{data}]")
    return "".join(parts)


_RANKS = {"f": 0, "k": 1, "v": 2, "i": 3}


def _value_order(text: str) -> tuple[int, Any]:
    """Sort key of a JSON value: numbers (by value), strings, booleans, then
    anything else by its text."""
    parsed = json.loads(text)
    if isinstance(parsed, bool):
        return (2, parsed)
    if isinstance(parsed, int | float):
        return (0, parsed)
    if isinstance(parsed, str):
        return (1, parsed)
    return (3, text)


@functools.lru_cache(maxsize=65536)
def _order(element: PathElement) -> tuple[Any, ...]:
    """Sort key: fields, then keys, then values, then indices, each in the
    server's order (keys field by field, values numbers first). Flat, so
    that keys compare quickly: ``(1, name, rank, value, name, rank, value,
    ...)`` for a key element."""
    tag, data = element
    if tag == "k":
        flat: list[Any] = [1]
        for name, text in data:
            flat.append(name)
            flat.extend(_value_order(text))
        return tuple(flat)
    if tag == "v":
        return (2, *_value_order(data))
    return (_RANKS[tag], data)


class FieldSet:
    """A set of paths, stored as a trie. See the module docstring.

    ``members`` holds the elements whose path ends at this node; ``children``
    maps an element to the set of paths below it. Empty children are never
    kept, so a set is empty exactly when both are empty.

    A set is a value: :meth:`insert` builds a new one, and once built it is
    never changed, so the set operations may return an operand or share its
    subtrees.
    """

    __slots__ = ("children", "members")

    def __init__(self) -> None:
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}

    # ------------------------------------------------------------- building

    def insert(self, path: Path) -> None:
        """Add ``path`` (in place). The empty path is ignored."""
        if not path:
            return
        node = self
        for element in path[:-1]:
            child = node.children.get(element)
            if child is None:
                child = node.children[element] = FieldSet()
            elif child.__class__ is not FieldSet:  # a document's set: never changed
                child = node.children[element] = child.copy()
            node = child
        node.members.add(path[-1])

    # -------------------------------------------------------------- queries

    def __bool__(self) -> bool:
        return bool(self.members) or bool(self.children)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldSet({to_fields_v1(self)!r})"

    def has(self, path: Path) -> bool:
        """True when ``path`` is a member."""
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node is not None else None
        return node is not None and bool(path) and path[-1] in node.members

    def has_prefix(self, path: Path) -> bool:
        """True when ``path`` is a member or some member lies below it."""
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node is not None else None
            if node is None:
                return False
        if node is None or not path:
            return bool(self)
        return path[-1] in node.members or path[-1] in node.children

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every member path, in ``FieldsV1`` order."""
        elements = sorted(self.members | self.children.keys(), key=_order)
        for element in elements:
            here = (*prefix, element)
            if element in self.members:
                yield here
            child = self.children.get(element)
            if child is not None:
                yield from child.paths(here)

    # ----------------------------------------------------------- set algebra

    def copy(self) -> FieldSet:
        """A deep copy (safe to mutate)."""
        out = FieldSet()
        out.members = set(self.members)
        out.children = {e: c.copy() for e, c in self.children.items()}
        return out

    # The operations below return new sets that may share unchanged subtrees
    # with their operands: sets are values, never mutated once built.

    def covers(self, other: FieldSet) -> bool:
        """True when every path of ``other`` is in ``self``."""
        if not other.members <= self.members:
            return False
        for element, child in other.children.items():
            mine = self.children.get(element)
            if mine is None or not mine.covers(child):
                return False
        return True

    def union(self, other: FieldSet) -> FieldSet:
        if not other or other is self:
            return self
        if not self:
            return other
        if self.covers(other):
            return self
        out = FieldSet()
        out.members = self.members | other.members
        out.children = dict(self.children)
        for element, child in other.children.items():
            mine = out.children.get(element)
            out.children[element] = child if mine is None else mine.union(child)
        return out

    def difference(self, other: FieldSet) -> FieldSet:
        """Members of ``self`` that are not members of ``other`` (a member of
        ``other`` does not remove paths below it)."""
        if not other or not self:
            return self
        out = FieldSet()
        out.members = self.members - other.members
        same = len(out.members) == len(self.members)
        for element, child in self.children.items():
            theirs = other.children.get(element)
            rest = child if theirs is None else child.difference(theirs)
            if rest:
                out.children[element] = rest
            same = same and rest is child
        return self if same else out

    def intersection(self, other: FieldSet) -> FieldSet:
        out = FieldSet()
        out.members = self.members & other.members
        for element, child in self.children.items():
            theirs = other.children.get(element)
            if theirs is not None:
                both = child.intersection(theirs)
                if both:
                    out.children[element] = both
        return out

    def without_subtree(self, element: PathElement) -> FieldSet:
        """``self`` without ``element`` and anything below it (top level only)."""
        if element not in self.members and element not in self.children:
            return self
        out = FieldSet()
        out.members = set(self.members)
        out.children = dict(self.children)
        out.members.discard(element)
        out.children.pop(element, None)
        return out

    def only_subtree(self, element: PathElement) -> FieldSet:
        """A copy holding only ``element`` and what lies below it (top level)."""
        out = FieldSet()
        if element in self.members:
            out.members.add(element)
        child = self.children.get(element)
        if child is not None:
            out.children[element] = child
        return out


_MEMBERS: Any = FieldSet.__dict__["members"]
_CHILDREN: Any = FieldSet.__dict__["children"]


class DocumentSet(FieldSet):
    """The paths below a node, read from the node's ``FieldsV1`` document
    one level at a time, when first asked for (the document's ``"."``
    entry, if any, says the node itself is a member: it is not part of this
    set).

    Built by :func:`member_document` for sets the server computes (such as
    every field of a created object): emitting one gives its document back
    unchanged, and operations that look at a few paths decode only those.
    The document must be well-formed and is shared, never modified; a set
    changed in place (:meth:`insert`) stops using it."""

    __slots__ = ("_document", "_loaded")

    def __init__(self, document: dict[str, Any]) -> None:  # no super().__init__: lazy
        self._document: dict[str, Any] | None = document
        self._loaded = False

    def _load(self) -> None:
        members: set[PathElement] = set()
        children: dict[PathElement, FieldSet] = {}
        for name, sub in (self._document or {}).items():
            if name == ".":
                continue
            element = parse_element(name)
            if not sub or "." in sub:
                members.add(element)
            if len(sub) > ("." in sub):
                children[element] = DocumentSet(sub)
        _MEMBERS.__set__(self, members)
        _CHILDREN.__set__(self, children)
        self._loaded = True

    @property
    def members(self) -> set[PathElement]:
        if not self._loaded:
            self._load()
        found: set[PathElement] = _MEMBERS.__get__(self)
        return found

    @members.setter
    def members(self, value: set[PathElement]) -> None:
        if not self._loaded:
            self._load()
        self._document = None
        _MEMBERS.__set__(self, value)

    @property
    def children(self) -> dict[PathElement, FieldSet]:
        if not self._loaded:
            self._load()
        found: dict[PathElement, FieldSet] = _CHILDREN.__get__(self)
        return found

    @children.setter
    def children(self, value: dict[PathElement, FieldSet]) -> None:
        if not self._loaded:
            self._load()
        self._document = None
        _CHILDREN.__set__(self, value)

    def __bool__(self) -> bool:
        document = self._document
        if document is not None and not self._loaded:
            return len(document) > ("." in document)
        return super().__bool__()

    def covers(self, other: FieldSet) -> bool:
        """As :meth:`FieldSet.covers`, looking up only ``other``'s paths in
        the document (a few paths against a large set, as an update's)."""
        document = self._document
        if document is None or self._loaded:
            return super().covers(other)
        for element in other.members:
            sub = document.get(print_element(element))
            if sub is None or (sub and "." not in sub):
                return False
        for element, child in other.children.items():
            sub = document.get(print_element(element))
            if sub is None or len(sub) <= ("." in sub) or not DocumentSet(sub).covers(child):
                return False
        return True

    def insert(self, path: Path) -> None:
        """Add ``path``: the set is no longer its document's."""
        self._load()
        self._document = None
        super().insert(path)

    def document(self) -> dict[str, Any] | None:
        """The ``FieldsV1`` document of this node as a member (``None`` once
        changed in place)."""
        return self._document


def member_document(document: dict[str, Any]) -> FieldSet:
    """The set of paths below a member node whose ``FieldsV1`` document
    (``{".": {}, ...}``, well-formed, in the server's key order) is
    ``document``; the document is kept and shared, so it must never change."""
    return DocumentSet(document)


def element_documents(documents: dict[PathElement, dict[str, Any]]) -> dict[str, Any]:
    """The ``FieldsV1`` document of a member node whose elements have these
    documents (``{}`` for a member without children), keys in the server's
    order."""
    out: dict[str, Any] = {".": {}}
    elements = sorted(documents, key=_order) if len(documents) > 1 else documents
    for element in elements:
        out[print_element(element)] = documents[element]
    return out


# ------------------------------------------------------------------ FieldsV1


def to_fields_v1(fields: FieldSet) -> dict[str, Any]:
    """The ``fieldsV1`` document of ``fields``: nested objects whose keys are
    printed elements, ``{}`` for a member without children, and ``".": {}``
    in a node that is a member and has children. Keys are in the server's
    order (fields, keys, values, indices; each sorted)."""
    return _emit(fields, include_self=False)


def _emit(fields: FieldSet, include_self: bool) -> dict[str, Any]:
    if isinstance(fields, DocumentSet):
        document = fields.document()
        if document is not None:  # shared: documents are never changed
            if include_self == ("." in document):
                return document
            if include_self:
                return {".": {}, **document}
            return {k: v for k, v in document.items() if k != "."}
    out: dict[str, Any] = {".": {}} if include_self else {}
    members, children = fields.members, fields.children
    if not children:
        names = [data for tag, data in members if tag == "f"]
        if len(names) == len(members):  # only fields, none with children
            names.sort()
            for name in names:
                out["f:" + name] = {}
            return out
    elements = members | children.keys()
    names = [data for tag, data in elements if tag == "f"]
    if len(names) == len(elements):  # only fields: sorted by name, quickly
        names.sort()
        for name in names:
            child = children.get(("f", name))
            if child is None:
                out["f:" + name] = {}
            else:
                out["f:" + name] = _emit(child, ("f", name) in members)
        return out
    for element in sorted(elements, key=_order):
        child = children.get(element)
        if child is None:
            out[print_element(element)] = {}
        else:
            out[print_element(element)] = _emit(child, element in members)
    return out


def from_fields_v1(document: Any) -> FieldSet:
    """The set a ``fieldsV1`` document describes; :class:`FieldsV1Error` when
    it is not one."""
    if not isinstance(document, dict):
        raise FieldsV1Error("fieldsV1 must be a JSON object")
    out = FieldSet()
    _read(document, out)
    return out


def _read(document: dict[str, Any], into: FieldSet) -> None:
    for name, sub in document.items():
        if name == ".":
            continue
        if not isinstance(sub, dict):
            raise FieldsV1Error(f"fieldsV1 entry {name!r} must be a JSON object")
        element = parse_element(name)
        if not sub or "." in sub:
            into.members.add(element)
        if any(k != "." for k in sub):
            child = FieldSet()
            _read(sub, child)
            if child:
                into.children[element] = child
