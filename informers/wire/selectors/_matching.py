"""Compiled label matching: a label selector's requirements turned, once, into
plain functions specialised to each requirement's shape.

:func:`compile_requirements` gives the ``match`` and ``select`` behind
:meth:`LabelSelector.matches <informers.wire.selectors.labels.LabelSelector.matches>`,
``matcher()`` and ``filter()``: they answer (and raise) exactly what checking
every requirement in order with
:meth:`~informers.wire.selectors.requirements.LabelRequirement.matches`
answers, for any input, and run a closure per requirement shape for the
plain ``dict`` labels the cache holds (the plain-dict recognition is
:mod:`informers.wire.fastpath`'s). Pure and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from informers.wire.fastpath import (
    LabelTest,
    label_filter,
    label_filter_both,
    label_filter_equals,
    labels_matcher,
)
from informers.wire.objects import get_labels
from informers.wire.selectors.requirements import (
    _EXACT_OPERATORS,
    _SET_OPERATORS,
    LabelRequirement,
    Operator,
    _parse_int64,
)

__all__ = ["Compiled", "compile_requirements"]

# --- one closure per requirement shape, for plain dicts
#
# Each closure below returns exactly what LabelRequirement.matches returns for
# a plain dict of labels, with the generic branching decided once:
#
# * "k=v" / "k!=v": ``v == x`` is what ``x in (v,)`` computes (the tuple's
#   element on the left, no call for a missing label: ``v == None`` is False);
# * "k in (...)" / "k notin (...)": the tuple membership itself (``None in
#   values`` is False), through a frozenset for long lists, only for exact
#   ``str`` values (anything else, even unhashable, goes to the tuple);
# * "k" / "!k": the dict's own ``in``;
# * "k>n" / "k<n": the same integer parse, the requirement's side parsed once.
#
# A selector with a requirement that is not the validated shape (built
# directly with odd fields, or a subclass) keeps the generic checks. A
# selector is checked in order and stops at the first failing requirement.

#: Above this many values an "in"/"notin" test goes through a frozenset.
_FROZENSET_FROM = 5


def _equals_test(key: str, value: str) -> LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        # a bool even if the label's own __eq__ answers something else
        return True if value == labels.get(key) else False  # noqa: SIM210

    return test


def _not_equals_test(key: str, value: str) -> LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        # not "!=": the generic check's "in" calls __eq__, never __ne__
        return not value == labels.get(key)  # noqa: SIM201

    return test


def _in_test(key: str, values: tuple[str, ...], negated: bool) -> LabelTest:
    if len(values) < _FROZENSET_FROM:
        if negated:
            return lambda labels: labels.get(key) not in values
        return lambda labels: labels.get(key) in values
    fast = frozenset(values)

    def test(labels: dict[str, Any]) -> bool:
        found = labels.get(key)
        hit = found in fast if type(found) is str else found in values
        return not hit if negated else hit

    return test


def _exists_test(key: str, negated: bool) -> LabelTest:
    if negated:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def _numeric_test(key: str, want: int, greater: bool) -> LabelTest:
    def test(labels: dict[str, Any]) -> bool:
        value = labels.get(key)
        if value is None:
            return False
        have = _parse_int64(value)
        if have is None:
            return False
        return have > want if greater else have < want

    return test


def _requirement_test(req: LabelRequirement) -> LabelTest | None:
    """The specialised test of one requirement, or None when it is not a
    validated-shape :class:`LabelRequirement`."""
    key, op, values = req.key, req.operator, req.values
    if (
        type(req) is not LabelRequirement
        or type(key) is not str
        or type(op) is not Operator
        or type(values) is not tuple
        or not all(type(v) is str for v in values)
    ):
        return None
    if op is Operator.EXISTS or op is Operator.DOES_NOT_EXIST:
        return _exists_test(key, op is Operator.DOES_NOT_EXIST)
    if op in _EXACT_OPERATORS and len(values) == 1:
        if op is Operator.NOT_EQUALS:
            return _not_equals_test(key, values[0])
        return _equals_test(key, values[0])
    if op in _SET_OPERATORS or op in _EXACT_OPERATORS:
        return _in_test(key, values, op is Operator.NOT_IN or op is Operator.NOT_EQUALS)
    want = _parse_int64(values[0]) if values else None
    if want is None:
        return None
    return _numeric_test(key, want, op is Operator.GREATER_THAN)


class Compiled(NamedTuple):
    """A selector compiled: ``match`` is
    :meth:`~informers.wire.selectors.labels.LabelSelector.matches` and
    ``select`` is :meth:`~informers.wire.selectors.labels.LabelSelector.filter`."""

    match: Callable[[Mapping[str, str]], bool]
    select: Callable[[Iterable[Any]], list[Any]]


def compile_requirements(requirements: tuple[LabelRequirement, ...]) -> Compiled:
    """Functions equal to checking ``requirements`` in order, specialised for
    plain dicts (any other mapping or object takes the generic checks)."""

    def generic(labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in requirements)

    compiled = [_requirement_test(r) for r in requirements]
    tests = tuple(t for t in compiled if t is not None)
    if len(tests) != len(compiled):

        def generic_select(objects: Iterable[Any]) -> list[Any]:
            return [obj for obj in objects if generic(get_labels(obj))]

        return Compiled(generic, generic_select)
    test: LabelTest
    if not tests:

        def test(labels: dict[str, Any]) -> bool:
            return True

    elif len(tests) == 1:
        (test,) = tests
    elif len(tests) == 2:
        first, second = tests

        def test(labels: dict[str, Any]) -> bool:
            return first(labels) and second(labels)

    else:

        def test(labels: dict[str, Any]) -> bool:
            for each in tests:  # noqa: SIM110 (a loop is cheaper than all() here)
                if not each(labels):
                    return False
            return True

    match = labels_matcher(test, generic)

    def general(obj: Any) -> bool:
        return match(get_labels(obj))

    if len(requirements) == 1:
        (req,) = requirements
        if req.operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS) and len(req.values) == 1:
            return Compiled(match, label_filter_equals(req.key, req.values[0], general))
    if len(tests) == 2:
        return Compiled(match, label_filter_both(tests[0], tests[1], general))
    return Compiled(match, label_filter(test, general))
