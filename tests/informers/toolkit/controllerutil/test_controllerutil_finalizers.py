"""informers.toolkit.controllerutil.finalizers: in place, order kept, the
changed flag tells the truth (checked against a list model)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from informers.toolkit.controllerutil import add_finalizer, has_finalizer, remove_finalizer

NAMES = st.sampled_from(["example.com/cleanup", "a/b", "kubernetes", "x.io/y"])
OBJECTS: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.just({"metadata": {}}),
    st.lists(NAMES, max_size=5).map(lambda fs: {"metadata": {"name": "o", "finalizers": fs}}),
)


def _finalizers(obj: dict[str, Any]) -> list[str]:
    return list(obj.get("metadata", {}).get("finalizers") or [])


def test_add_creates_metadata_and_the_list() -> None:
    obj: dict[str, Any] = {}
    assert add_finalizer(obj, "example.com/f")
    assert obj == {"metadata": {"finalizers": ["example.com/f"]}}
    assert has_finalizer(obj, "example.com/f")
    assert not add_finalizer(obj, "example.com/f")


def test_remove_keeps_order_and_leaves_an_empty_list() -> None:
    obj: dict[str, Any] = {"metadata": {"finalizers": ["a", "b", "a", "c"]}}
    assert remove_finalizer(obj, "a")
    assert obj["metadata"]["finalizers"] == ["b", "c"]
    assert remove_finalizer(obj, "b")
    assert remove_finalizer(obj, "c")
    assert obj["metadata"]["finalizers"] == []
    assert not remove_finalizer(obj, "c")
    assert not remove_finalizer({}, "c")
    assert not has_finalizer({"metadata": {"finalizers": None}}, "c")


@given(OBJECTS, NAMES)
def test_add_model(obj: dict[str, Any], name: str) -> None:
    obj = copy.deepcopy(obj)
    before = _finalizers(obj)
    changed = add_finalizer(obj, name)
    assert changed == (name not in before)
    assert _finalizers(obj) == (before if not changed else [*before, name])
    assert has_finalizer(obj, name)
    snapshot = copy.deepcopy(obj)
    assert not add_finalizer(obj, name)  # idempotent
    assert obj == snapshot


@given(OBJECTS, NAMES)
def test_remove_model(obj: dict[str, Any], name: str) -> None:
    obj = copy.deepcopy(obj)
    before = _finalizers(obj)
    changed = remove_finalizer(obj, name)
    assert changed == (name in before)
    assert _finalizers(obj) == [f for f in before if f != name]
    assert not has_finalizer(obj, name)
    snapshot = copy.deepcopy(obj)
    assert not remove_finalizer(obj, name)  # idempotent
    assert obj == snapshot


@given(OBJECTS, st.lists(st.tuples(st.booleans(), NAMES), max_size=12))
def test_any_sequence_matches_a_set_model(obj: dict[str, Any], ops: list[tuple[bool, str]]) -> None:
    obj = copy.deepcopy(obj)
    model = set(_finalizers(obj))
    for add, name in ops:
        changed = add_finalizer(obj, name) if add else remove_finalizer(obj, name)
        expected = (name not in model) if add else (name in model)
        assert changed == expected
        if add:
            model.add(name)
        else:
            model.discard(name)
        assert set(_finalizers(obj)) == model
