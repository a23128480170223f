"""The compiled label-selector path (``LabelSelector.matcher``/``filter`` and
the listers over them) against the code it replaced, kept here as the model.

Random label sets include malformed ones (values that are not strings, some
unhashable; labels or metadata that are not dicts, other mappings,
attribute-style objects, tombstones), random selectors include requirements
built directly with odd fields; the fast path must give the same objects in
the same order, or raise the same error with the same message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from informers import Indexer, Lister, namespace_index
from informers.cache.protocols import IndexedStore
from informers.errors import InformersError
from informers.wire.objects import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    get_labels,
    get_namespace,
)
from informers.wire.selectors import LabelRequirement, LabelSelector, Operator

# ------------------------------------------------------------------ the model
# LabelRequirement.matches, LabelSelector.matches and the listers' filtering
# as they were before the compiled path (only the integer parse is shared,
# rewritten here).

_INT_RE = re.compile(r"[+-]?[0-9]+")
_SET = frozenset({Operator.IN, Operator.NOT_IN})
_EXACT = frozenset({Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS})


def _int64(text: Any) -> int | None:
    if not _INT_RE.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number <= 2**63 - 1 else None


def model_requirement(req: LabelRequirement, labels: Mapping[str, Any]) -> bool:
    op = req.operator
    if op is Operator.EXISTS:
        return req.key in labels
    if op is Operator.DOES_NOT_EXIST:
        return req.key not in labels
    value = labels.get(req.key)
    if op in _SET or op in _EXACT:
        if value is None:
            return op is Operator.NOT_IN or op is Operator.NOT_EQUALS
        found = value in req.values
        return not found if op is Operator.NOT_IN or op is Operator.NOT_EQUALS else found
    if value is None:
        return False
    have, want = _int64(value), _int64(req.values[0])
    if have is None or want is None:
        return False
    return have > want if op is Operator.GREATER_THAN else have < want


def model_matches(sel: LabelSelector, labels: Mapping[str, Any]) -> bool:
    return all(model_requirement(r, labels) for r in sel.requirements)


def model_filter(objects: list[Any], sel: LabelSelector) -> list[Any]:
    if sel.empty:
        return objects
    return [o for o in objects if model_matches(sel, get_labels(o))]


def model_namespace_list(store: IndexedStore, namespace: str, sel: LabelSelector) -> list[Any]:
    if NAMESPACE_INDEX in store.get_indexers():
        objects = store.by_index(NAMESPACE_INDEX, namespace)
    else:
        objects = [o for o in store.list() if get_namespace(o) == namespace]
    return model_filter(objects, sel)


def outcome(func: Callable[[], Any]) -> tuple[Any, ...]:
    """What a call did: the identities of the objects it returned (or the
    bool), or the type and message of what it raised."""
    try:
        result = func()
    except (TypeError, LookupError, AttributeError, InformersError) as err:
        return ("raised", type(err), str(err))
    if isinstance(result, list):
        return ("list", [id(o) for o in result])
    return ("value", result)


# ------------------------------------------------------------- the strategies

# Small domains, so that selectors and labels meet often.
KEYS = ["app", "tier", "example.com/y"]
VALUES = ["", "a", "b", "1", "-3", "10", "99999999999999999999"]
#: Valid label values (not "-3"), for the requirements.
SELECTOR_VALUES = ["", "a", "b", "1", "10"]


class OddStr(str):
    """A str subclass whose equality is case-insensitive."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.lower() == other.lower()

    __hash__ = str.__hash__


class DefaultingDict(dict[str, Any]):
    """A dict subclass whose ``get`` and ``in`` make every key present."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, "a")

    def __contains__(self, key: object) -> bool:
        return True


class Labels(Mapping[str, Any]):
    """A mapping that is not a dict."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


label_values = st.one_of(
    st.sampled_from(VALUES),
    st.sampled_from(VALUES).map(OddStr),
    st.sampled_from(["A", "B"]).map(OddStr),
    st.sampled_from(["A", "B"]).map(OddStr),
    st.sampled_from(["A", "WEB"]),
    st.none(),
    st.integers(-5, 20),
    st.lists(st.sampled_from(VALUES), max_size=2),  # unhashable
    st.just(b"1"),
    st.just(1.5),
)
label_dicts = st.dictionaries(st.sampled_from(KEYS), label_values, max_size=4)
labels_fields = st.one_of(
    label_dicts,
    label_dicts,
    label_dicts.map(DefaultingDict),
    st.none(),
    label_dicts.map(Labels),
    label_dicts.map(MappingProxyType),
    st.sampled_from([["app"], "app=a", 7]),
)
namespaces = st.sampled_from(["ns-a", "ns-b", ""])


@st.composite
def objects(draw: st.DrawFn) -> Any:
    labels = draw(labels_fields)
    namespace: Any = draw(st.one_of(namespaces, st.sampled_from([None, 3, OddStr("NS-A")])))
    metadata: dict[str, Any] = {"name": draw(st.sampled_from(["p", "q", "r"]))}
    if draw(st.booleans()):
        metadata["namespace"] = namespace
    if labels is not None or draw(st.booleans()):
        metadata["labels"] = labels
    kind = draw(
        st.sampled_from(["dict"] * 6 + ["dict-subclass", "meta-mapping", "attr", "no-meta", "odd"])
    )
    if kind == "dict":
        return {"metadata": metadata}
    if kind == "dict-subclass":
        return draw(
            st.sampled_from(
                [DefaultingDict(metadata=metadata), {"metadata": DefaultingDict(metadata)}]
            )
        )
    if kind == "meta-mapping":
        return {"metadata": Labels(metadata)}
    if kind == "attr":
        return SimpleNamespace(metadata=SimpleNamespace(**metadata))
    if kind == "no-meta":
        return draw(st.sampled_from([{}, {"metadata": None}, {"metadata": 5}]))
    return draw(st.sampled_from([None, 42, "pod", [1]]))


@st.composite
def requirements(draw: st.DrawFn) -> LabelRequirement:
    key = draw(st.sampled_from(KEYS))
    op = draw(st.sampled_from(list(Operator)))
    if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        values: list[str] = []
    elif op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        values = [draw(st.sampled_from(["1", "10", "0", "007"]))]
    elif op in (Operator.IN, Operator.NOT_IN):
        pool = st.sampled_from([*SELECTOR_VALUES, "c", "d", "e"])
        values = draw(
            st.one_of(  # short lists, and long ones (a frozenset inside)
                st.lists(pool, min_size=1, max_size=3),
                st.lists(pool, min_size=5, max_size=9, unique=True),
            )
        )
    else:
        values = [draw(st.sampled_from(SELECTOR_VALUES))]
    return LabelRequirement.create(key, op, values)


# Requirements the validating constructor would refuse, built directly.
odd_requirements = st.sampled_from(
    [
        LabelRequirement("app", Operator.GREATER_THAN, ()),
        LabelRequirement("app", Operator.LESS_THAN, ("x",)),
        LabelRequirement("app", Operator.EQUALS, ()),
        LabelRequirement("app", Operator.EQUALS, ("a", "b")),
        LabelRequirement("app", Operator.NOT_EQUALS, ("a", "b")),
        LabelRequirement("tier", Operator.IN, ()),
        LabelRequirement("tier", Operator.NOT_IN, ()),
        LabelRequirement("x", "exists", ()),  # type: ignore[arg-type]
        LabelRequirement("x", Operator.IN, ("a", 1)),  # type: ignore[arg-type]
        LabelRequirement(OddStr("APP"), Operator.EXISTS, ()),
        LabelRequirement(OddStr("Tier"), Operator.EQUALS, ("a",)),
    ]
)
selectors = st.lists(
    st.one_of(requirements(), requirements(), requirements(), odd_requirements), max_size=4
).map(LabelSelector)


def make_store(objs: list[Any], indexed: bool) -> Indexer:
    indexers = {NAMESPACE_INDEX: namespace_index} if indexed else None
    store = Indexer(indexers=indexers, on_index_error=lambda err: None)
    for i, obj in enumerate(objs):
        store.upsert(f"k{i}", obj)
    return store


# ------------------------------------------------------------------ the tests


@example(LabelSelector.parse("app!=a"), {"app": OddStr("A")})
@example(LabelSelector.parse("app=a"), {"app": OddStr("A")})
@example(LabelSelector.parse("app in (a,b,c,d,e)"), {"app": OddStr("A")})
@example(LabelSelector.parse("app notin (a,b,c,d,e)"), {"app": OddStr("A")})
@example(LabelSelector.parse("app in (a,b,c,d,e)"), {"app": ["a"]})
@example(LabelSelector.parse("app in (a,b,c,d,e)"), {"app": 1})
@example(LabelSelector.parse("app>1"), {"app": 5})
@example(LabelSelector.parse("app<1,tier"), {"tier": "x", "app": b"0"})
@example(LabelSelector.parse("app"), DefaultingDict())
@example(LabelSelector.parse("app=a,!tier"), DefaultingDict(app="b"))
@given(selectors, st.one_of(label_dicts, label_dicts.map(Labels), label_dicts.map(DefaultingDict)))
def test_matches_is_the_model(sel: LabelSelector, labels: Mapping[str, Any]) -> None:
    expected = outcome(lambda: model_matches(sel, labels))
    assert outcome(lambda: sel.matches(labels)) == expected
    assert outcome(lambda: sel.matcher()(labels)) == expected


@given(selectors, st.lists(objects(), max_size=8))
def test_filter_is_the_model(sel: LabelSelector, objs: list[Any]) -> None:
    # filter keeps get_labels' checks even for the empty selector
    expected = outcome(lambda: [o for o in objs if model_matches(sel, get_labels(o))])
    assert outcome(lambda: sel.filter(objs)) == expected
    assert outcome(lambda: sel.filter(iter(objs))) == expected


@given(selectors, st.lists(objects(), max_size=8), namespaces, st.booleans())
def test_listers_are_the_model(
    sel: LabelSelector, objs: list[Any], namespace: str, indexed: bool
) -> None:
    store = make_store(objs, indexed)
    lister = Lister(store)
    expected = outcome(lambda: model_filter(store.list(), sel))
    assert outcome(lambda: lister.list(sel)) == expected
    printed = outcome(lambda: LabelSelector.parse(str(sel)))
    if printed[0] == "value":  # the odd requirements may not print, or not parse
        text = str(sel)
        want = outcome(lambda: model_filter(store.list(), LabelSelector.parse(text)))
        assert outcome(lambda: lister.list(text)) == want
        assert outcome(lambda: lister.list(text)) == want  # the cached parse
    expected_ns = outcome(lambda: model_namespace_list(store, namespace, sel))
    assert outcome(lambda: lister.namespace(namespace).list(sel)) == expected_ns


def test_bad_selector_text_raises_every_time() -> None:
    lister = Lister(make_store([{"metadata": {"name": "p", "labels": {"a": "b"}}}], True))
    for _ in range(2):  # the parse cache keeps no errors
        assert outcome(lambda: lister.list("a in")) == outcome(lambda: LabelSelector.parse("a in"))
        assert outcome(lambda: lister.list("a in"))[0] == "raised"


def test_empty_selector_returns_the_store_snapshot() -> None:
    objs = [{"metadata": {"name": n}} for n in "abc"]
    lister = Lister(make_store(objs, False))
    for empty in (None, "", " ", LabelSelector()):
        assert [id(o) for o in lister.list(empty)] == [id(o) for o in objs]


def test_subclassed_selector_keeps_its_own_matches() -> None:
    class Everything(LabelSelector):
        def matches(self, labels: Mapping[str, str]) -> bool:
            return True

    objs = [{"metadata": {"name": "p", "labels": {"a": "b"}}}]
    lister = Lister(make_store(objs, False))
    assert lister.list(Everything(LabelSelector.parse("a=c").requirements)) == objs


def test_tombstone_raises_as_before() -> None:
    tomb = DeletedFinalStateUnknown("ns/p", {"metadata": {"name": "p"}})
    objs = [{"metadata": {"name": "q", "labels": {"a": "b"}}}, tomb]
    lister = Lister(make_store(objs, False))
    sel = LabelSelector.parse("a=b")
    assert outcome(lambda: lister.list(sel)) == outcome(lambda: model_filter(objs, sel))
    assert outcome(lambda: lister.list(sel))[0] == "raised"
