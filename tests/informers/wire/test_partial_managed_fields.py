"""informers.wire.partial.without_managed_fields: ``metadata.managedFields``
cut out of a JSON text, exactly -- the result decodes as the input less that
member, or the function declines (``None``) and the caller decodes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.bench_compact import realistic_pod
from informers.wire.partial import as_partial_object_metadata, without_managed_fields

JSON_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
    max_leaves=8,
)
#: Keys a document may hold, the interesting ones more often.
KEYS = st.sampled_from(["managedFields", "metadata", "name", "labels"]) | JSON_TEXT


def _without(doc: Any) -> Any:
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    if isinstance(meta, dict) and "managedFields" in meta:
        return {**doc, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return doc


def _dumps(doc: Any, spaced: bool, ascii_only: bool) -> bytes:
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(doc, separators=separators, ensure_ascii=ascii_only).encode()


@given(
    st.dictionaries(KEYS, VALUES, max_size=3),
    st.dictionaries(KEYS, VALUES, max_size=4),
    st.booleans(),
    st.booleans(),
)
def test_the_cut_is_exact_or_declined(
    outer: dict[str, Any], meta: dict[str, Any], spaced: bool, ascii_only: bool
) -> None:
    doc = {**outer, "metadata": meta}
    data = _dumps(doc, spaced, ascii_only)
    cut = without_managed_fields(data)
    if cut is None:
        return  # declined: the caller decodes
    assert json.loads(cut) == _without(doc)
    if "managedFields" not in meta:
        assert cut is data  # nothing to cut: the very bytes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"metadata":{"managedFields":[1],"name":"a"}}', b'{"metadata":{"name":"a"}}'),
        (b'{"metadata":{"name":"a","managedFields":[{"x":1}]}}', b'{"metadata":{"name":"a"}}'),
        (b'{"metadata":{"managedFields":[]}}', b'{"metadata":{}}'),
        (b'{"metadata":{"name":"x"}}', b'{"metadata":{"name":"x"}}'),
        (b'{"a":{"managedFields":1},"metadata":{}}', b'{"a":{"managedFields":1},"metadata":{}}'),
        # declined: the key twice, written escaped, spaced, or not JSON
        (b'{"a":{"managedFields":1},"metadata":{"managedFields":1}}', None),
        (b'{"metadata":{"managed\\u0046ields":[1]},"x":{"managedFields":[1]}}', None),
        (b'{"metadata": {"managedFields": [1]}}', None),
        (b'{"metadata":{"managedFields":[1]', None),
    ],
)
def test_cases(text: bytes, expected: bytes | None) -> None:
    assert without_managed_fields(text) == expected


def test_a_realistic_pod_loses_only_its_managed_fields() -> None:
    for doc in (realistic_pod(3), as_partial_object_metadata(realistic_pod(4))):
        data = json.dumps(doc, separators=(",", ":")).encode()
        cut = without_managed_fields(data)
        assert cut is not None
        assert len(cut) < len(data)
        assert json.loads(cut) == _without(doc)
