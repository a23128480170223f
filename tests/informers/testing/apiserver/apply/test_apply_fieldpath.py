"""Field paths and the FieldsV1 encoding, against managedFields as real
servers write them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._apply.fieldpath import (
    FieldSet,
    FieldsV1Error,
    field,
    format_path,
    from_fields_v1,
    index,
    key,
    parse_element,
    print_element,
    to_fields_v1,
    value,
)

# fieldsV1 documents in the shape (and key order) kube-apiserver writes them
REAL_EXAMPLES = [
    # kubectl apply --server-side of a Deployment
    '{"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":'
    '{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},'
    '"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":'
    '{".":{},"f:containerPort":{}}}}}}}}}',
    # kube-controller-manager's status update of a Deployment
    '{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},'
    '"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},'
    '"k:{\\"type\\":\\"Available\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},'
    '"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},'
    '"k:{\\"type\\":\\"Progressing\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},'
    '"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},'
    '"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}',
    # kubectl create configmap
    '{"f:data":{".":{},"f:a":{},"f:b":{}}}',
    # finalizers (a set) and owner references (a map keyed by uid)
    '{"f:metadata":{"f:finalizers":{".":{},"v:\\"example.com/cleanup\\"":{},'
    '"v:\\"foregroundDeletion\\"":{}},"f:ownerReferences":{".":{},'
    '"k:{\\"uid\\":\\"5f8e9c1a-0000-4000-8000-000000000001\\"}":{}}}}',
    # a list the server could only index
    '{"f:spec":{"f:items":{"i:0":{},"i:1":{"f:name":{}}}}}',
]


@pytest.mark.parametrize("text", REAL_EXAMPLES)
def test_real_fieldsv1_round_trips_byte_for_byte(text: str) -> None:
    fields = from_fields_v1(json.loads(text))
    assert json.dumps(to_fields_v1(fields), separators=(",", ":")) == text


def test_dot_marks_a_member_with_children() -> None:
    fields = from_fields_v1({"f:data": {".": {}, "f:a": {}}, "f:spec": {"f:x": {}}})
    assert fields.has((field("data"),))
    assert fields.has((field("data"), field("a")))
    assert not fields.has((field("spec"),))
    assert fields.has_prefix((field("spec"),))
    assert fields.has((field("spec"), field("x")))


def test_key_elements_sort_their_fields_and_print_compactly() -> None:
    element = key({"protocol": "TCP", "containerPort": 80})
    assert print_element(element) == 'k:{"containerPort":80,"protocol":"TCP"}'
    assert parse_element('k:{"protocol":"TCP","containerPort":80}') == element
    assert parse_element('k:{"containerPort":80.0,"protocol":"TCP"}') == element


def test_values_escape_html_characters_as_go_does() -> None:
    assert print_element(value("a<b>&c")) == 'v:"a\\u003cb\\u003e\\u0026c"'
    assert parse_element(print_element(value("a<b>&c"))) == value("a<b>&c")
    assert print_element(value("ünïcode")) == 'v:"ünïcode"'


def test_elements_order_fields_keys_values_indices() -> None:
    fields = FieldSet()
    for element in (index(0), value(2), value(10), key({"n": 10}), key({"n": 9}), field("z")):
        fields.insert((element,))
    assert list(to_fields_v1(fields)) == [
        "f:z",
        'k:{"n":9}',
        'k:{"n":10}',
        "v:2",
        "v:10",
        "i:0",
    ]


def test_paths_print_as_conflict_messages_show_them() -> None:
    path = (
        field("spec"),
        field("containers"),
        key({"name": "web"}),
        field("image"),
    )
    assert format_path(path) == '.spec.containers[name="web"].image'
    assert format_path((field("metadata"), field("finalizers"), value("x"))) == (
        '.metadata.finalizers[="x"]'
    )
    assert format_path((field("items"), index(3))) == ".items[3]"


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"f:a": []},
        {"x:a": {}},
        {"fa": {}},
        {'k:{"a":': {}},
        {"k:[1]": {}},
        {"i:one": {}},
        {"v:nope": {}},
    ],
)
def test_malformed_documents_are_refused(document: object) -> None:
    with pytest.raises(FieldsV1Error):
        from_fields_v1(document)


_names = st.sampled_from(["a", "b", "spec", "x.y", "a/b"])
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


def _set(paths: list[tuple[object, ...]]) -> FieldSet:
    out = FieldSet()
    for path in paths:
        out.insert(path)  # type: ignore[arg-type]
    return out


@given(st.lists(_paths, max_size=12))
def test_any_set_round_trips_through_fieldsv1(paths: list[tuple[object, ...]]) -> None:
    fields = _set(paths)
    document = json.loads(json.dumps(to_fields_v1(fields)))
    assert from_fields_v1(document) == fields
    assert sorted(map(repr, fields.paths())) == sorted({repr(p) for p in paths})


@given(st.lists(_paths, max_size=8), st.lists(_paths, max_size=8))
def test_set_algebra_agrees_with_python_sets(
    left: list[tuple[object, ...]], right: list[tuple[object, ...]]
) -> None:
    a, b = _set(left), _set(right)
    plain_a, plain_b = set(left), set(right)
    assert set(a.union(b).paths()) == plain_a | plain_b
    assert set(a.difference(b).paths()) == plain_a - plain_b
    assert set(a.intersection(b).paths()) == plain_a & plain_b
    assert bool(a) == bool(plain_a)
