from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import SelectorParseError
from informers.wire.selectors import (
    FieldRequirement,
    FieldSelector,
    LabelRequirement,
    LabelSelector,
    Operator,
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


# --- the grammar rule by rule, as apimachinery's labels.Parse decides it

# Whitespace is exactly " \t\r\n" (Go's isWhitespace); anything else is part of a word.
_LEXER_ACCEPTED = [
    ("a\r\n=\tb", "a=b"),
    ("a==b", "a==b"),  # "==" is kept distinct from "=" (String() writes it back)
    ("a!=b", "a!=b"),
    ("a>1", "a>1"),
    ("a < 1", "a<1"),
    ("in", "in"),  # keywords are plain words where a key or a value is expected
    ("!notin", "!notin"),
    ("notin notin (in,notin)", "notin notin (in,notin)"),
    ("a=in", "a=in"),
    # The Go lexer reads a NUL byte as "end of input": where a token would
    # start, the selector ends there (the rest is never read) ...
    ("\x00a=b", ""),
    ("a=b,c \x00garbage (", "a=b,c"),
    # ... and right after a token the NUL is swallowed, acting as a separator.
    ("a=b\x00,c", "a=b,c"),
    ("a,\x00b", "a,b"),
    ("a=\x00b", "a=b"),
]


@pytest.mark.parametrize(("text", "canonical"), _LEXER_ACCEPTED)
def test_label_lexer_accepts(text: str, canonical: str) -> None:
    assert str(LabelSelector.parse(text)) == canonical


_LEXER_REJECTED = [
    ("a\x0b", "name part"),  # vertical tab is not whitespace: part of the key
    ("a\u00a0=b", "name part"),  # no-break space likewise
    ("a===b", "found '=', expected: identifier"),  # lexed "==" then "="
    ("a!==b", "found '=', expected: identifier"),
    ("a=!b", "found '!', expected: identifier"),  # "=!" is not a token: "=" then "!"
    ("a<=1", "found '=', expected: identifier"),  # no "<=" / ">=" operators
    ("a gt 1", "found 'gt'"),  # gt/lt are operator names, the syntax is > and <
    ("a, \x00b", "after ','"),  # NUL after whitespace ends the input
]


@pytest.mark.parametrize(("text", "fragment"), _LEXER_REJECTED)
def test_label_lexer_rejects(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "key",
    [
        "a",
        "A9",
        "a_b",
        "a..b",  # the name part allows consecutive dots (only its ends are checked)
        "a-_.b",
        "x" * 63,
        "example.com/a",
        "a-b.c-d/Name_1",
        "1.2/a",
        ("p" * 100 + "/a"),  # the prefix's DNS labels are not held to 63 characters
        (("p" * 63 + ".") * 3 + "p" * 61) + "/a",  # a 253-character prefix
        "in/notin",
    ],
)
def test_label_keys_accepted(key: str) -> None:
    assert LabelSelector.parse(key).requirements[0].key == key
    assert LabelSelector.parse(f"{key}=v").matches({key: "v"})


@pytest.mark.parametrize(
    ("key", "fragment"),
    [
        ("x" * 64, "no more than 63"),
        ("-a", "name part"),
        ("a-", "name part"),
        ("_a", "name part"),
        ("a.", "name part"),
        ("a:b", "name part"),
        ("é", "name part"),
        ("a/b/c", "at most one '/'"),
        ("/a", "prefix part must be non-empty"),
        ("a/", "name part must be non-empty"),
        ("Example.com/a", "prefix part"),  # the prefix is a lowercase DNS subdomain
        ("a..b/c", "prefix part"),
        ("a-.b/c", "prefix part"),
        ("a_b/c", "prefix part"),
        ((("p" * 63 + ".") * 3 + "p" * 62) + "/a", "no more than 253"),
        ("a/" + "x" * 64, "no more than 63"),
    ],
)
def test_label_keys_rejected(key: str, fragment: str) -> None:
    for text in (key, f"!{key}", f"{key}=v", f"{key} in (v)"):
        with pytest.raises(SelectorParseError, match="invalid label key") as info:
            LabelSelector.parse(text)
        assert fragment in str(info.value)


@pytest.mark.parametrize("value", ["", "a", "A.b_c-D", "0", "x" * 63, "in", "notin", "a..b"])
def test_label_values_accepted(value: str) -> None:
    for text in (f"k={value}", f"k=={value}", f"k in ({value})", f"k notin ({value})"):
        assert LabelSelector.parse(text).requirements[0].values == (value,)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("x" * 64, "no more than 63"),
        ("-a", "label value"),
        ("a-", "label value"),
        ("a/b", "label value"),
        ("a:b", "label value"),
        ("é", "label value"),
    ],
)
def test_label_values_rejected(value: str, fragment: str) -> None:
    for text in (f"k={value}", f"k!={value}", f"k in (ok,{value})", f"k notin ({value})"):
        with pytest.raises(SelectorParseError, match="invalid value") as info:
            LabelSelector.parse(text)
        assert fragment in str(info.value)


# Value lists. apimachinery's parseIdentifiersList reads "," as a value
# separator, a leading "(," and a trailing ",)" as the empty value, and ",,"
# as one unit (the empty value between them) that must be followed by a value
# or another ",". So a run of commas can end the list only if its length is odd.
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ("()", ("",)),
        ("(,)", ("",)),
        ("(,,)", None),
        ("(,,,)", ("",)),
        ("(,,,,)", None),
        ("(,,,,,)", ("",)),
        ("(a,)", ("", "a")),
        ("(a,,)", None),  # the known bug: this used to be accepted
        ("(a,,,)", ("", "a")),
        ("(a,,,,)", None),
        ("(,a)", ("", "a")),
        ("(,,a)", ("", "a")),
        ("(a,,b)", ("", "a", "b")),
        ("(a,,,b)", ("", "a", "b")),
        ("(b,a,b)", ("a", "b")),  # a set: sorted, duplicates dropped
        ("( a , b )", ("a", "b")),
        ("(a b)", None),
        ("(a,=)", None),
        ("(a,(b))", None),
        ("(a", None),
        ("(a,", None),
        ("(", None),
        ("(=)", None),
        ("a", None),  # no parentheses
    ],
)
def test_label_value_lists(values: str, expected: tuple[str, ...] | None) -> None:
    for op in ("in", "notin"):
        text = f"k {op} {values}"
        if expected is None:
            with pytest.raises(SelectorParseError, match="position"):
                LabelSelector.parse(text)
        else:
            assert LabelSelector.parse(text).requirements[0].values == expected


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("k>1", {"k": "2"}, True),
        ("k>1", {"k": "+2"}, True),  # label values compare via ParseInt, which takes a sign
        ("k<1", {"k": "-3"}, True),
        ("k>01", {"k": "2"}, True),  # "01" is a valid label value and integer 1
        ("k>1", {"k": "1"}, False),
        ("k>1", {"k": "1.5"}, False),  # not an int64: never matches
        ("k>1", {"k": "99999999999999999999"}, False),
        ("k>1", {}, False),  # gt/lt need the key
        ("k<9223372036854775807", {"k": "-9223372036854775808"}, True),
        ("k in (1)", {"k": "01"}, False),  # in / = compare strings, not numbers
        ("k=", {"k": ""}, True),
        ("k!=", {"k": ""}, False),
        ("k!=", {}, True),
        ("k==v", {"k": "v"}, True),
        ("k notin ()", {"k": "x"}, True),
        ("k notin ()", {"k": ""}, False),
    ],
)
def test_label_operator_semantics(text: str, labels: dict[str, str], expected: bool) -> None:
    assert LabelSelector.parse(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("k>-1", "label value"),  # ParseInt takes "-1" but a label value may not start with "-"
        ("k>+1", "label value"),
        ("k>", "must be an integer"),  # the empty value is no integer
        ("k>1.5", "must be an integer"),
        ("k<0x10", "must be an integer"),
        ("k>1_000", "must be an integer"),  # base-10 ParseInt: no underscores
        ("k>9223372036854775808", "must be an integer"),  # beyond int64
        ("k>a", "must be an integer"),
        ("k>(1)", "expected: identifier"),
    ],
)
def test_label_numeric_operators_rejected(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("!", "found 'end of string', expected: identifier"),
        ("!!a", "found '!', expected: identifier"),
        ("!a=b", "found '=', expected: ',' or end of string"),  # !key takes no operator
        ("!a in (x)", "found 'in', expected: ',' or end of string"),
        ("a,,b", "after ','"),
        ("a=b, ", "after ','"),
        ("a in (x)(y)", "expected: ',' or end of string"),
        ("a in (x) b", "expected: ',' or end of string"),
        ("(a)", "expected: !, identifier, or end of string"),
        ("=a", "expected: !, identifier, or end of string"),
        ("a b=c", "expected: in, notin, =, ==, !=, gt, lt"),
        ("a in in (x)", "expected: '('"),
    ],
)
def test_label_structure_rejected(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        LabelSelector.parse(text)
    message = str(info.value)
    assert fragment in message
    assert repr(text) in message
    assert "position" in message


def test_label_requirement_create_checks_types() -> None:
    with pytest.raises(SelectorParseError, match="key must be a str"):
        LabelRequirement.create(1, "exists")  # type: ignore[arg-type]
    with pytest.raises(SelectorParseError, match="single str"):
        LabelRequirement.create("a", "in", "xy")
    with pytest.raises(SelectorParseError, match="value must be a str"):
        LabelRequirement.create("a", "in", [1])  # type: ignore[list-item]
    with pytest.raises(SelectorParseError, match="must be an integer"):
        LabelRequirement.create("a", "gt", ["x"])
    with pytest.raises(SelectorParseError, match="exactly one value"):
        LabelRequirement.create("a", "lt", ["1", "2"])


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
    st.sampled_from(["in", "notin", "a.b_c-d", "A"]),
    st.builds(lambda p, n: f"{p}.io/{n}", st.sampled_from(["x", "ex-1", "in"]), label_names),
)
label_values = st.one_of(
    st.just(""), label_names, st.sampled_from(["1", "10", "in", "notin", "a-b.c_D"])
)
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


# Pieces that make up interesting garbage: grammar tokens, near-misses,
# characters the lexer treats specially (NUL, other whitespace) and non-ASCII.
_LABEL_PIECES = [
    *"ab1-_./ =!(),<>\t\r\n\x00\x0bé",
    "in",
    "notin",
    "==",
    "!=",
    "ex.io/",
    "gt",
]
garbage = st.one_of(
    st.text(max_size=16),
    st.lists(st.sampled_from(_LABEL_PIECES), max_size=14).map("".join),
)


@given(garbage, st.lists(label_sets, min_size=1, max_size=3))
def test_label_parser_raises_only_parse_errors(text: str, samples: list[dict[str, str]]) -> None:
    try:
        selector = LabelSelector.parse(text)
    except SelectorParseError:
        return
    reparsed = LabelSelector.parse(str(selector))
    assert reparsed == selector
    for labels in samples:
        assert reparsed.matches(labels) is selector.matches(labels)


prop_keys = st.sampled_from(["a", "in", "ex.io/a"])
prop_values = st.sampled_from(["", "x", "y", "1", "in"])


@given(
    prop_keys,
    st.lists(prop_values, min_size=1, max_size=3),
    st.dictionaries(prop_keys, prop_values, max_size=3),
)
def test_set_and_unary_operators_agree_with_equality_and_existence(
    key: str, values: list[str], labels: dict[str, str]
) -> None:
    listed = ",".join(sorted(set(values)))  # "" sorts first: "(,x)", never "(x,,)"
    present = key in labels
    equal_any = any(LabelSelector.parse(f"{key}={v}").matches(labels) for v in values)
    assert LabelSelector.parse(f"{key} in ({listed})").matches(labels) is equal_any
    not_in = LabelSelector.parse(f"{key} notin ({listed})").matches(labels)
    assert not_in is (not equal_any if present else True)
    assert LabelSelector.parse(key).matches(labels) is present
    assert LabelSelector.parse(f"!{key}").matches(labels) is not present
    for value in values:
        equal = LabelSelector.parse(f"{key}=={value}").matches(labels)
        assert LabelSelector.parse(f"{key}!={value}").matches(labels) is not equal


@given(
    st.lists(st.sampled_from(["", "", "a", "b"]), max_size=6),
    st.sampled_from([",", " ,", ", ", "\t,\n"]),
)
def test_value_list_reads_like_a_split_but_rejects_an_even_comma_run_at_the_end(
    items: list[str], separator: str
) -> None:
    """``(v1,v2,...)`` holds exactly the comma-separated items (empty ones
    included), but apimachinery reads ",," as one unit that must be followed,
    so a list ending in an even run of commas is an error."""
    listed = separator.join(items)
    trailing = len(listed.replace(" ", "").replace("\t", "").replace("\n", ""))
    trailing -= len(listed.replace(" ", "").replace("\t", "").replace("\n", "").rstrip(","))
    text = f"k in ({listed})"
    if trailing >= 2 and trailing % 2 == 0:
        with pytest.raises(SelectorParseError, match="even run of commas"):
            LabelSelector.parse(text)
    else:
        expected = tuple(sorted(set(items))) if items else ("",)
        assert LabelSelector.parse(text).requirements[0].values == expected


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


field_names = st.sampled_from(["metadata.name", "metadata.namespace", "status.phase"])
field_values = st.text(alphabet="ab,=\\ !", max_size=5)


# fields.ParseSelector, term by term: split on commas not escaped by "\",
# drop empty terms, cut each term at the first "!=", "==" or "=" (tried in
# that order at each position), keep the field verbatim, unescape the value.
@pytest.mark.parametrize(
    ("text", "requirements"),
    [
        (",,a=b,,", [("a", "=", "b")]),
        (",", []),
        ("a==b", [("a", "=", "b")]),  # "==" is "=": same requirement
        ("a!=", [("a", "!=", "")]),
        ("=x", [("", "=", "x")]),  # an empty field parses; the server then rejects the label
        ("a = b", [("a ", "=", " b")]),  # no whitespace trimming anywhere
        ("a!b=c", [("a!b", "=", "c")]),
        (r"a\,b=c", [(r"a\,b", "=", "c")]),  # escapes in the field are kept verbatim
        (r"a=\\", [("a", "=", "\\")]),
        (r"a=\,\=\\x", [("a", "=", ",=\\x")]),
        (r"a=b\,c,d!=e", [("a", "=", "b,c"), ("d", "!=", "e")]),
        ("a=é b", [("a", "=", "é b")]),  # values are arbitrary strings
    ],
)
def test_field_selector_terms(text: str, requirements: list[tuple[str, str, str]]) -> None:
    assert FieldSelector.parse(text) == FieldSelector(FieldRequirement(*r) for r in requirements)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a", "can't split term 'a'"),
        ("a!b", "can't split term"),
        ("!", "can't split term"),
        ("a=b,c", "can't split term 'c'"),
        ("a===b", "unescaped '='"),  # cut at "==", leaving "=b"
        ("a!==b", "unescaped '='"),  # cut at "!=", leaving "=b"
        (r"a\=b=c", "unescaped '='"),  # no escapes in the field: cut after "a\"
        (r"a=b\,c=d", "unescaped '='"),
        (r"a=\n", "invalid escape sequence '\\n'"),
        ("a=\\", "invalid escape sequence"),
    ],
)
def test_field_selector_terms_rejected(text: str, fragment: str) -> None:
    with pytest.raises(SelectorParseError, match="invalid field selector") as info:
        FieldSelector.parse(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


_FIELD_PIECES = [*"ab.=!,\\ \x00é", "==", "!=", r"\,", r"\=", r"\\", "metadata.name"]


@given(
    st.one_of(
        st.text(max_size=16), st.lists(st.sampled_from(_FIELD_PIECES), max_size=10).map("".join)
    ),
    st.lists(st.dictionaries(st.sampled_from(["a", "b", "metadata.name"]), field_values)),
)
def test_field_parser_raises_only_parse_errors(text: str, samples: list[dict[str, str]]) -> None:
    try:
        selector = FieldSelector.parse(text)
    except SelectorParseError:
        return
    reparsed = FieldSelector.parse(str(selector))
    assert reparsed == selector
    for fields in samples:
        assert reparsed.matches(fields) is selector.matches(fields)


def test_field_selector_rejects_bad_operator() -> None:
    with pytest.raises(SelectorParseError):
        FieldSelector([FieldRequirement("a", "in", "b")])


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
