"""The fast paths of field management agree with the plain definitions:
:func:`compare` (whole subtrees built as ``FieldsV1`` documents) with a
path-by-path reference walk, :class:`DocumentSet` with :class:`FieldSet`,
and the flat sort key of path elements with the nested one."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._apply import target_for
from informers.testing.apiserver._apply.fieldpath import (
    FieldSet,
    Path,
    _order,
    field,
    index,
    key,
    member_document,
    to_fields_v1,
    value,
)
from informers.testing.apiserver._apply.merge import (
    _equal,
    _index,
    _is_leaf,
    _same_container,
    compare,
)
from informers.testing.apiserver._apply.schema import DEDUCED, Schema

SCHEMA = target_for("apps", "v1", "Deployment", builtin=True, status_subresource=True).schema

_MISSING: Any = object()


class _Reference:
    """compare() as defined: every node visited, every path inserted."""

    def __init__(self) -> None:
        self.added = FieldSet()
        self.modified = FieldSet()
        self.removed = FieldSet()

    def walk(self, old: Any, new: Any, schema: Schema, path: Path) -> None:
        def empty(v: Any) -> bool:
            return v is _MISSING or v is None or (isinstance(v, dict | list) and not v)

        leaf = (
            (old is not _MISSING and _is_leaf(schema, old))
            or (new is not _MISSING and _is_leaf(schema, new))
            or (
                old is not _MISSING
                and new is not _MISSING
                and isinstance(old, dict) != isinstance(new, dict)
            )
            or (empty(old) and empty(new))
        )
        if leaf:
            if old is _MISSING:
                self.added.insert(path)
            elif new is _MISSING:
                self.removed.insert(path)
            elif not _equal(old, new):
                self.modified.insert(path)
            return
        if isinstance(old if old is not _MISSING else new, dict):
            left = old if isinstance(old, dict) else {}
            right = new if isinstance(new, dict) else {}
            for name, lvalue in left.items():
                rvalue = right.get(name, _MISSING)
                if rvalue is not lvalue and not _same_container(lvalue, rvalue):
                    self.walk(lvalue, rvalue, schema.field(name), (*path, field(name)))
            for name, rvalue in right.items():
                if name not in left:
                    self.walk(_MISSING, rvalue, schema.field(name), (*path, field(name)))
        else:
            item_schema = schema.element()
            left_items = _index(schema, old if isinstance(old, list) else [])
            right_items = _index(schema, new if isinstance(new, list) else [])
            for element, litem in left_items.items():
                ritem = right_items.get(element, _MISSING)
                if ritem is not litem and not _same_container(litem, ritem):
                    self.walk(litem, ritem, item_schema, (*path, element))
            for element, ritem in right_items.items():
                if element not in left_items:
                    self.walk(_MISSING, ritem, item_schema, (*path, element))
        if old is _MISSING:
            self.added.insert(path)
        elif new is _MISSING:
            self.removed.insert(path)


def _reference(old: Any, new: Any, schema: Schema) -> _Reference:
    out = _Reference()
    out.walk(_MISSING if old is None else old, _MISSING if new is None else new, schema, ())
    return out


_small = st.sampled_from(["1", "2", "x y", ""])
_env = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["A", "B", "C"])},
        optional={"value": _small, "valueFrom": st.just({"fieldRef": {"fieldPath": "x"}})},
    ),
    max_size=4,
)  # duplicates allowed: the first wins
_ports = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.integers(79, 81)},
        optional={"protocol": st.sampled_from(["TCP", "UDP"]), "name": _small},
    ),
    max_size=3,
)
_container = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "side"])},
    optional={
        "image": _small,
        "env": _env,
        "ports": _ports,
        "args": st.lists(_small, max_size=2),
        "resources": st.fixed_dictionaries({}, optional={"limits": st.just({"cpu": "1"})}),
    },
)
_deployment = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "labels": st.dictionaries(st.sampled_from(["a", "b"]), _small, max_size=2),
                "finalizers": st.lists(st.sampled_from(["f/1", "f/2"]), max_size=3),
            },
        ),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "replicas": st.one_of(st.integers(0, 2), st.none()),
                "selector": st.just({"matchLabels": {"a": "1"}}),
                "template": st.fixed_dictionaries(
                    {},
                    optional={
                        "spec": st.fixed_dictionaries(
                            {}, optional={"containers": st.lists(_container, max_size=3)}
                        )
                    },
                ),
            },
        ),
        "status": st.fixed_dictionaries({}, optional={"replicas": st.integers(0, 1)}),
    },
)
_json: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1, 2), _small),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


def _same(fast: Any, reference: _Reference) -> None:
    for name in ("added", "modified", "removed"):
        mine, theirs = getattr(fast, name), getattr(reference, name)
        assert mine == theirs, name
        assert to_fields_v1(mine) == to_fields_v1(theirs), name
        assert list(mine.paths()) == list(theirs.paths()), name


@given(st.one_of(st.none(), _deployment), st.one_of(st.none(), _deployment))
def test_compare_agrees_with_the_reference_on_typed_objects(old: Any, new: Any) -> None:
    _same(compare(old, new, SCHEMA), _reference(old, new, SCHEMA))


@given(_json, _json)
def test_compare_agrees_with_the_reference_on_untyped_values(old: Any, new: Any) -> None:
    _same(compare(old, new, DEDUCED), _reference(old, new, DEDUCED))


_names = st.sampled_from(["a", "b", "spec", "x.y"])
_scalars = st.one_of(
    st.integers(-5, 300), st.sampled_from(["web", "TCP", "", "<&>"]), st.booleans()
)
_elements = st.one_of(
    _names.map(field),
    st.dictionaries(_names, _scalars, min_size=1, max_size=2).map(key),
    _scalars.map(value),
    st.integers(0, 5).map(index),
)
_paths = st.lists(_elements, min_size=1, max_size=4).map(tuple)


def _set(paths: list[Path]) -> FieldSet:
    out = FieldSet()
    for path in paths:
        out.insert(path)
    return out


def _document_set(fields: FieldSet) -> FieldSet:
    return member_document(json.loads(json.dumps({".": {}, **to_fields_v1(fields)})))


@given(st.lists(_paths, max_size=8), st.lists(_paths, max_size=8), _paths)
def test_a_document_set_behaves_as_the_set_it_encodes(
    left: list[Path], right: list[Path], extra: Path
) -> None:
    plain, other = _set(left), _set(right)
    lazy = _document_set(plain)
    assert lazy == plain
    assert bool(_document_set(plain)) == bool(plain)
    assert _document_set(plain).covers(other) == plain.covers(other)
    assert _document_set(other).covers(plain) == other.covers(plain)
    assert _document_set(plain).union(other) == plain.union(other)
    assert _document_set(plain).difference(other) == plain.difference(other)
    assert other.difference(_document_set(plain)) == other.difference(plain)
    assert _document_set(plain).intersection(other) == plain.intersection(other)
    assert list(_document_set(plain).paths()) == list(plain.paths())
    assert to_fields_v1(_document_set(plain)) == to_fields_v1(plain)
    changed = _document_set(plain)
    changed.insert(extra)
    expected = plain.copy()
    expected.insert(extra)
    assert changed == expected
    assert to_fields_v1(changed) == to_fields_v1(expected)
    holder = FieldSet()
    holder.children[field("x")] = _document_set(plain)
    holder.members.add(field("x"))
    holder.insert((field("x"), *extra))
    assert to_fields_v1(holder.children[field("x")]) == to_fields_v1(expected)


def _nested_order(element: tuple[str, Any]) -> tuple[int, Any]:
    """The sort key as first written: keys as nested pairs."""

    def value_order(text: str) -> tuple[int, Any]:
        parsed = json.loads(text)
        if isinstance(parsed, bool):
            return (2, parsed)
        if isinstance(parsed, int | float):
            return (0, parsed)
        if isinstance(parsed, str):
            return (1, parsed)
        return (3, text)

    tag, data = element
    if tag == "k":
        return (1, tuple((name, value_order(text)) for name, text in data))
    if tag == "v":
        return (2, value_order(data))
    return ({"f": 0, "i": 3}[tag], data)


@given(st.lists(_elements, unique=True, max_size=8))
def test_the_flat_order_is_the_nested_order(elements: list[tuple[str, Any]]) -> None:
    assert sorted(elements, key=_order) == sorted(elements, key=_nested_order)
