"""Predicates: the ready-made ones, Funcs, and the combinators' boolean laws."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.toolkit.runtime import (
    Funcs,
    Predicate,
    and_,
    annotation_changed,
    generation_changed,
    label_changed,
    new_predicate_funcs,
    not_,
    or_,
    resource_version_changed,
)
from informers.toolkit.runtime.predicates import as_predicate
from informers.wire.objects import DeletedFinalStateUnknown


def obj(generation: int | None = 1, rv: str = "1", **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "x", "namespace": "ns", "resourceVersion": rv, **meta}
    if generation is not None:
        metadata["generation"] = generation
    return {"metadata": metadata}


def test_generation_changed() -> None:
    p = generation_changed()
    assert p.update(obj(1), obj(2))
    assert not p.update(obj(1, rv="1"), obj(1, rv="2"))  # a status update
    assert not p.update(obj(None), obj(None, rv="2"))  # kinds without generation
    assert p.create(obj())
    assert p.delete(obj())
    assert p.generic(obj())


def test_resource_version_changed_drops_resyncs() -> None:
    p = resource_version_changed()
    assert p.update(obj(rv="1"), obj(rv="2"))
    assert not p.update(obj(rv="5"), obj(rv="5"))


def test_label_and_annotation_changed() -> None:
    assert label_changed().update(obj(labels={"a": "1"}), obj(labels={"a": "2"}))
    assert not label_changed().update(obj(), obj(labels={}))  # missing == empty
    assert not label_changed().update(obj(labels={"a": "1"}), obj(labels={"a": "1"}, rv="2"))
    assert annotation_changed().update(obj(), obj(annotations={"k": "v"}))
    assert not annotation_changed().update(obj(annotations={"k": "v"}), obj(annotations={"k": "v"}))


def test_predicates_tolerate_odd_objects() -> None:
    tomb = DeletedFinalStateUnknown("ns/x", obj(3))
    assert generation_changed().update(tomb, obj(4))
    assert not generation_changed().update({"metadata": "junk"}, None)
    assert not label_changed().update({"metadata": {"labels": "junk"}}, {})


def test_funcs_missing_hooks_pass() -> None:
    p = Funcs(update_func=lambda old, new: False)
    assert p.create(obj())
    assert p.delete(obj())
    assert p.generic(obj())
    assert not p.update(obj(), obj())
    assert isinstance(p, Predicate)


def test_new_predicate_funcs_applies_to_the_new_object() -> None:
    p = new_predicate_funcs(lambda o: o["metadata"]["name"] == "keep")
    keep, drop = {"metadata": {"name": "keep"}}, {"metadata": {"name": "drop"}}
    assert p.create(keep)
    assert not p.create(drop)
    assert p.update(drop, keep)
    assert not p.update(keep, drop)
    assert p.delete(keep)
    assert p.generic(keep)
    assert not p.generic(drop)


def test_as_predicate() -> None:
    p = generation_changed()
    assert as_predicate(p) is p
    assert as_predicate(lambda o: True).create(obj())
    with pytest.raises(TypeError, match="predicate"):
        as_predicate(42)  # type: ignore[arg-type]


def const(value: bool) -> Predicate:
    return Funcs(
        create_func=lambda o: value,
        update_func=lambda o, n: value,
        delete_func=lambda o: value,
        generic_func=lambda o: value,
    )


def verdicts(p: Predicate) -> tuple[bool, bool, bool, bool]:
    o = obj()
    return (p.create(o), p.update(o, o), p.delete(o), p.generic(o))


@given(st.lists(st.booleans(), max_size=5))
def test_combinators_follow_boolean_logic(values: list[bool]) -> None:
    preds = [const(v) for v in values]
    assert verdicts(and_(*preds)) == (all(values),) * 4
    assert verdicts(or_(*preds)) == (any(values),) * 4
    assert verdicts(not_(and_(*preds))) == (not all(values),) * 4
    # De Morgan
    assert verdicts(not_(or_(*preds))) == verdicts(and_(*[not_(p) for p in preds]))
