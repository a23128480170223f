from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import SelectorParseError
from informers.selectors import (
    FieldRequirement,
    FieldSelector,
    LabelRequirement,
    LabelSelector,
    Operator,
    object_fields,
    supported_fields,
)

# ----------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {}, True),
        ("   ", {"a": "b"}, True),
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a==b", {"a": "b"}, True),
        ("a!=b", {"a": "c"}, True),
        ("a!=b", {}, True),  # absent key matches !=
        ("a!=b", {"a": "b"}, False),
        ("a in (x,y)", {"a": "y"}, True),
        ("a in (x,y)", {}, False),
        ("a notin (x)", {}, True),  # absent key matches notin
        ("a notin (x)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("a", {"b": "a"}, False),
        ("!a", {}, True),
        ("!a", {"a": "x"}, False),
        ("a=", {"a": ""}, True),
        ("a in ()", {"a": ""}, True),
        ("a in (,x)", {"a": ""}, True),
        ("a>5", {"a": "6"}, True),
        ("a>5", {"a": "5"}, False),
        ("a<5", {"a": "x"}, False),
        ("a<5", {}, False),
        ("a=b, c notin (d) ,!e", {"a": "b", "c": "x"}, True),
        ("a=b,a!=b", {"a": "b"}, False),
        ("example.com/tier=web", {"example.com/tier": "web"}, True),
        ("a in(in,notin)", {"a": "notin"}, True),
        ("in=notin", {"in": "notin"}, True),
        ("a\tin\n( x , y )", {"a": "x"}, True),
    ],
)
def test_label_selector_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("b=1,a=2", "a=2,b=1"),
        ("a == b", "a==b"),
        ("x in (foo,,baz)", "x in (,baz,foo)"),
        ("z notin ()", "z notin ()"),
        ("!a , b", "!a,b"),
        ("a in (y,x,y)", "a in (x,y)"),
        ("a>10", "a>10"),
    ],
)
def test_label_selector_canonical_string(text: str, canonical: str) -> None:
    assert str(LabelSelector.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a=b=c", "position 3"),
        ("a in (x", "expected: ',' or ')'"),
        ("a in x", "expected: '('"),
        ("!a=b", "position 2"),
        ("a,", "after ','"),
        (",a", "position 0"),
        ("a b", "position 2"),
        ("a=b c", "expected: ',' or end of string"),
        ("A/b=c", "prefix part"),
        ("a/b/c", "at most one '/'"),
        ("/a", "prefix part must be non-empty"),
        ("a/", "name part must be non-empty"),
        ("-a", "start and end with an alphanumeric"),
        ("a=" + "x" * 64, "no more than 63"),
        ("a=b_", "label value"),
        ("a>x", "must be an integer"),
        ("a>99999999999999999999", "must be an integer"),
        ("a in (x y)", "expected: ',' or ')'"),
        ("a in (x,=)", "expected: ',' or identifier"),
        ("a notin", "expected: '('"),
        ("a=(", "expected: identifier"),
        ("x" * 64, "no more than 63"),
    ],
)
def test_label_selector_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError, match="label") as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)


def test_label_selector_is_a_value() -> None:
    assert LabelSelector.parse("a=b,c") == LabelSelector.parse(" c , a=b ")
    assert len({LabelSelector.parse("a"), LabelSelector.parse("a")}) == 1
    assert LabelSelector.everything().empty
    assert not LabelSelector.parse("a").empty
    assert repr(LabelSelector.parse("a=b")) == "LabelSelector('a=b')"


def test_label_selector_from_dict() -> None:
    sel = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "NotIn", "values": ["x"]},
                {"key": "team", "operator": "Exists"},
            ],
        }
    )
    assert str(sel) == "app=web,!canary,team,tier in (a,b),zone notin (x)"
    assert sel.matches({"app": "web", "tier": "a", "team": "t"})
    assert not sel.matches({"app": "web", "tier": "a", "team": "t", "canary": "1"})
    assert LabelSelector.from_dict({}).empty


@pytest.mark.parametrize(
    ("obj", "fragment"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, "operator"),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}, "can't be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "empty"),
        ({"matchExpressions": [{"key": "a b", "operator": "Exists"}]}, "invalid label key"),
        ({"matchLabels": {"a": 1}}, "strings"),
        ({"matchLabels": ["a"]}, "mapping"),
        ({"matchExpressions": {"key": "a"}}, "list"),
        ({"matchExpressions": ["a"]}, "matchExpressions[0]"),
    ],
)
def test_label_selector_from_dict_errors(obj: dict[str, Any], fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.from_dict(obj)
    assert fragment in str(info.value)


def test_label_selector_from_set() -> None:
    sel = LabelSelector.from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2", "c": "3"})


def test_label_requirement_create_validates() -> None:
    with pytest.raises(SelectorParseError):
        LabelRequirement.create("a", "=", ["x", "y"])
    with pytest.raises(SelectorParseError, match="bogus"):
        LabelRequirement.create("a", "bogus", [])


def test_non_string_selectors_are_parse_errors() -> None:
    with pytest.raises(SelectorParseError, match="must be a str"):
        LabelSelector.parse(None)  # type: ignore[arg-type]
    with pytest.raises(SelectorParseError, match="must be a str"):
        FieldSelector.parse(b"a=b")  # type: ignore[arg-type]


# --- properties: round-trip through str() and agreement with a model evaluator

NAME_CHARS = "abz09"
label_names = st.text(NAME_CHARS, min_size=1, max_size=4)
label_keys = st.one_of(
    label_names,
    st.builds(lambda p, n: f"{p}.io/{n}", st.sampled_from(["x", "ex-1"]), label_names),
)
label_values = st.one_of(st.just(""), label_names, st.sampled_from(["1", "10", "in", "notin"]))
int_values = st.integers(min_value=0, max_value=20).map(str)


@st.composite
def requirements(draw: st.DrawFn) -> LabelRequirement:
    key = draw(st.sampled_from(["a", "b", "ex.io/a"]) | label_keys)
    op = draw(st.sampled_from(list(Operator)))
    if op in (Operator.IN, Operator.NOT_IN):
        values = draw(st.lists(label_values, min_size=1, max_size=3))
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        values = []
    elif op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        values = [draw(int_values)]
    else:
        values = [draw(label_values)]
    return LabelRequirement.create(key, op, values)


label_sets = st.dictionaries(
    st.sampled_from(["a", "b", "ex.io/a"]) | label_keys,
    label_values | int_values,
    max_size=4,
)


def model_matches(reqs: list[tuple[str, str, list[str]]], labels: dict[str, str]) -> bool:
    """Straight from the API documentation, one requirement at a time."""
    for key, op, values in reqs:
        present = key in labels
        value = labels.get(key)
        if op in ("=", "==", "in"):
            ok = present and value in values
        elif op in ("!=", "notin"):
            ok = not present or value not in values
        elif op == "exists":
            ok = present
        elif op == "!":
            ok = not present
        else:
            ok = (
                present
                and value is not None
                and value.isdigit()
                and (int(value) > int(values[0]) if op == "gt" else int(value) < int(values[0]))
            )
        if not ok:
            return False
    return True


@given(st.lists(requirements(), max_size=4), st.lists(label_sets, min_size=1, max_size=5))
def test_label_selector_round_trips_and_agrees_with_model(
    reqs: list[LabelRequirement], samples: list[dict[str, str]]
) -> None:
    selector = LabelSelector(reqs)
    reparsed = LabelSelector.parse(str(selector))
    assert reparsed == selector
    assert str(reparsed) == str(selector)
    model = [(r.key, r.operator.value, list(r.values)) for r in reqs]
    for labels in samples:
        expected = model_matches(model, labels)
        assert selector.matches(labels) is expected
        assert reparsed.matches(labels) is expected


@given(st.text(alphabet="ab =!(),<>in\t1", max_size=20))
def test_label_parser_never_fails_with_anything_but_a_parse_error(text: str) -> None:
    try:
        selector = LabelSelector.parse(text)
    except SelectorParseError:
        return
    assert LabelSelector.parse(str(selector)) == selector


# ----------------------------------------------------------------------------- fields


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {}, True),
        ("metadata.name=a", {"metadata.name": "a"}, True),
        ("metadata.name==a", {"metadata.name": "a"}, True),
        ("metadata.name!=a", {"metadata.name": "a"}, False),
        ("metadata.name!=a", {}, True),
        ("spec.nodeName=", {}, True),  # a missing field is ""
        ("spec.nodeName!=", {"spec.nodeName": "n1"}, True),
        (r"metadata.name=a\,b", {"metadata.name": "a,b"}, True),
        (r"metadata.name=a\=b", {"metadata.name": "a=b"}, True),
        (r"metadata.name=a\\b", {"metadata.name": "a\\b"}, True),
        ("a=1,b!=2", {"a": "1", "b": "3"}, True),
        ("a=1,,b!=2", {"a": "1", "b": "2"}, False),
    ],
)
def test_field_selector_matches(text: str, fields: dict[str, str], expected: bool) -> None:
    assert FieldSelector.parse(text).matches(fields) is expected


def test_field_selector_requirements_and_string() -> None:
    sel = FieldSelector.parse(r"status.phase!=Running,metadata.name==a\,b")
    assert sel.requirements == (
        FieldRequirement("metadata.name", "=", "a,b"),
        FieldRequirement("status.phase", "!=", "Running"),
    )
    assert str(sel) == r"metadata.name=a\,b,status.phase!=Running"
    assert FieldSelector.parse(str(sel)) == sel
    assert FieldSelector.everything().empty
    assert str(FieldSelector.from_set({"a": "x=y"})) == r"a=x\=y"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("metadata.name", "can't split term"),
        ("a=b=c", "unescaped '='"),
        (r"a=b\x", "invalid escape sequence"),
        ("a=b\\", "invalid escape sequence"),
    ],
)
def test_field_selector_parse_errors(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError, match="field selector") as info:
        FieldSelector.parse(text)
    assert fragment in str(info.value)


def test_field_selector_rejects_bad_operator() -> None:
    with pytest.raises(SelectorParseError):
        FieldSelector([FieldRequirement("a", "in", "b")])


field_names = st.sampled_from(["metadata.name", "metadata.namespace", "status.phase"])
field_values = st.text(alphabet="ab,=\\ !", max_size=5)


@given(
    st.lists(st.tuples(field_names, st.sampled_from(["=", "!="]), field_values), max_size=4),
    st.lists(st.dictionaries(field_names, field_values, max_size=3), min_size=1, max_size=4),
)
def test_field_selector_round_trips_and_agrees_with_model(
    reqs: list[tuple[str, str, str]], samples: list[dict[str, str]]
) -> None:
    selector = FieldSelector(FieldRequirement(*r) for r in reqs)
    reparsed = FieldSelector.parse(str(selector))
    assert reparsed == selector
    for fields in samples:
        expected = all((fields.get(f, "") == v) == (op == "=") for f, op, v in reqs)
        assert selector.matches(fields) is expected
        assert reparsed.matches(fields) is expected


# ----------------------------------------------------------------------------- object fields


def test_object_fields_for_pods() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"nodeName": "n1", "hostNetwork": True},
        "status": {"phase": "Running"},
    }
    fields = object_fields(pod, "pods")
    assert fields["metadata.name"] == "p"
    assert fields["metadata.namespace"] == "ns"
    assert fields["spec.nodeName"] == "n1"
    assert fields["status.phase"] == "Running"
    assert fields["spec.hostNetwork"] == "true"
    assert fields["status.podIP"] == ""
    assert set(fields) == supported_fields("pods")
    assert FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed").matches(fields)


def test_object_fields_for_other_kinds() -> None:
    ns = object_fields({"metadata": {"name": "default"}}, "namespaces")
    assert ns == {"metadata.name": "default", "metadata.namespace": "", "status.phase": ""}
    cm = object_fields({"metadata": {"name": "c", "namespace": "x"}}, "configmaps")
    assert cm == {"metadata.name": "c", "metadata.namespace": "x"}
    assert supported_fields("configmaps") == {"metadata.name", "metadata.namespace"}
    event = object_fields({"metadata": {}, "source": {"component": "kubelet"}}, "events")
    assert event["source"] == "kubelet"
    assert object_fields({"metadata": {"name": "n"}}, "nodes")["spec.unschedulable"] == "false"
    assert "spec.nodeName" in supported_fields("pods")
    assert "spec.nodeName" not in supported_fields("services")
