"""informers.cache.transforms: the ready-made ingest transforms, alone and on an
informer against the emulator."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from informers.cache.factory import SharedInformerFactory
from informers.cache.transforms import (
    LAST_APPLIED_ANNOTATION,
    chain,
    strip_last_applied,
    strip_managed_fields,
)
from informers.testing import ApiServer
from informers.wire.raw import RawObject
from informers.wire.resources import CONFIGMAPS


def obj(**meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "a", **meta}, "data": {"k": "v"}}


def test_strip_managed_fields_drops_only_them() -> None:
    o = obj(managedFields=[{"manager": "kubectl"}], labels={"a": "b"})
    assert strip_managed_fields(o) is o
    assert o == {"metadata": {"name": "a", "labels": {"a": "b"}}, "data": {"k": "v"}}


def test_strip_last_applied_drops_the_annotation_and_an_empty_map() -> None:
    o = obj(annotations={LAST_APPLIED_ANNOTATION: "{...}"})
    assert strip_last_applied(o)["metadata"] == {"name": "a"}
    kept = obj(annotations={LAST_APPLIED_ANNOTATION: "{}", "x": "y"})
    assert strip_last_applied(kept)["metadata"]["annotations"] == {"x": "y"}


def test_odd_inputs_pass_unchanged() -> None:
    for odd in (None, 3, "x", [], {}, {"metadata": None}, {"metadata": {"annotations": 5}}):
        before = copy.deepcopy(odd)
        assert strip_managed_fields(odd) == before
        assert strip_last_applied(odd) == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    meta=st.dictionaries(
        st.sampled_from(["name", "managedFields", "annotations", "labels"]), json_values
    )
)
def test_transforms_are_idempotent(meta: dict[str, Any]) -> None:
    both = chain(strip_managed_fields, strip_last_applied)
    once = both(copy.deepcopy({"metadata": meta}))
    assert both(copy.deepcopy(once)) == once
    assert "managedFields" not in once["metadata"]


@given(
    meta=st.dictionaries(st.sampled_from(["name", "managedFields", "labels", "x\\y"]), json_values)
)
def test_strip_managed_fields_of_a_raw_object(meta: dict[str, Any]) -> None:
    # A RawObject is read-only: a new one of the JSON without them (cut from
    # the text, or decoded and dumped when the text cannot tell), or itself.
    raw = RawObject.from_object({"kind": "PartialObjectMetadata", "metadata": meta})
    stripped = strip_managed_fields(raw)
    assert type(stripped) is RawObject
    assert stripped == strip_managed_fields(
        {"kind": "PartialObjectMetadata", "metadata": dict(meta)}
    )
    assert (stripped is raw) == ("managedFields" not in meta)
    assert raw.decoded()["metadata"] == meta  # the original is untouched


def test_strip_managed_fields_of_a_raw_object_the_text_cannot_tell() -> None:
    escaped = b'{"metadata":{"name":"a","managed\\u0046ields":[1]},"spec":{"managedFields":[1]}}'
    stripped = strip_managed_fields(RawObject(escaped))
    assert stripped == {"metadata": {"name": "a"}, "spec": {"managedFields": [1]}}


def test_an_informer_caches_stripped_objects(api_server: ApiServer) -> None:
    api_server.create(
        CONFIGMAPS,
        {
            "metadata": {
                "name": "applied",
                "annotations": {LAST_APPLIED_ANNOTATION: '{"big": true}'},
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
            "data": {"k": "v"},
        },
    )
    client = api_server.api_client()
    factory = SharedInformerFactory(
        client, transform=chain(strip_managed_fields, strip_last_applied)
    )
    try:
        informer = factory.configmaps()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10)
        cached = informer.get_store().get_by_key("default/applied")
        assert cached is not None
        assert "managedFields" not in cached["metadata"]
        assert "annotations" not in cached["metadata"]
        assert cached["data"] == {"k": "v"}
    finally:
        factory.shutdown()
        client.close()
