"""tracker._convert: conversion rules per model kind and the (uid, resourceVersion) memo."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.client import V1ConfigMap, V1Pod

from tracker._convert import Converter, converter_for
from tracker.errors import ConversionError


def obj(name: str = "a", uid: str = "u1", rv: str = "1", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv},
        **extra,
    }


def test_dict_model_returns_the_raw_object_itself() -> None:
    raw = obj()
    assert converter_for(dict)(raw) is raw


def test_kubernetes_model_uses_the_client_deserializer() -> None:
    raw = obj(data={"k": "v"})
    raw["metadata"]["creationTimestamp"] = "2024-01-02T03:04:05Z"
    cm = converter_for(V1ConfigMap)(raw)
    assert isinstance(cm, V1ConfigMap)
    assert cm.metadata.name == "a"
    assert cm.data == {"k": "v"}
    assert cm.metadata.creation_timestamp.year == 2024


def test_kubernetes_model_validation_failure_is_a_conversion_error() -> None:
    raw = obj(spec={"containers": [{"image": "no-name"}]}, data={"password": "hunter2"})
    conv = Converter(converter_for(V1Pod), kind="pods")
    with pytest.raises(ConversionError) as info:
        conv(raw, "ns/a")
    assert str(info.value).startswith("cannot convert pods 'ns/a': ")
    assert "hunter2" not in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.key == "ns/a"


@dataclasses.dataclass
class Thing:
    api_version: str
    metadata: Mapping[str, Any]
    data: Mapping[str, str] = dataclasses.field(default_factory=dict)


def test_dataclass_fields_are_taken_by_name_or_camel_case() -> None:
    thing = converter_for(Thing)(obj(data={"x": "1"}))
    assert thing.api_version == "v1"
    assert thing.metadata["name"] == "a"
    assert thing.data == {"x": "1"}


def test_dataclass_missing_required_field_fails() -> None:
    conv = Converter(converter_for(Thing), kind="things")
    with pytest.raises(ConversionError, match="TypeError"):
        conv({"metadata": {"name": "a"}}, "a")


def test_pydantic_model_uses_model_validate() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Meta(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        name: str

    class Item(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        kind: str
        metadata: Meta

    item = converter_for(Item)(obj())
    assert item.metadata.name == "a"
    assert item.kind == "ConfigMap"


def test_unsupported_model_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="convert="):
        converter_for(int)


def test_memo_returns_the_same_object_for_the_same_uid_and_version() -> None:
    conv = Converter(converter_for(V1ConfigMap))
    first = conv(obj(), "ns/a")
    assert conv(obj(), "ns/a") is first
    assert (conv.hits, conv.misses) == (1, 1)
    newer = conv(obj(rv="2"), "ns/a")
    assert newer is not first
    assert conv.misses == 2


def test_objects_without_uid_or_version_are_converted_every_time() -> None:
    conv = Converter(converter_for(V1ConfigMap))
    raw = obj(uid="")
    assert conv(raw, "ns/a") is not conv(raw, "ns/a")
    assert conv.hits == 0


def test_cache_size_zero_disables_the_memo() -> None:
    conv = Converter(converter_for(V1ConfigMap), cache_size=0)
    conv(obj(), "ns/a")
    conv(obj(), "ns/a")
    assert (conv.hits, conv.misses) == (0, 2)
    with pytest.raises(ValueError, match="cache_size"):
        Converter(converter_for(dict), cache_size=-1)


@given(
    size=st.integers(1, 4),
    lookups=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 2)), max_size=40),
)
def test_memo_behaves_as_an_lru_of_its_size(size: int, lookups: list[tuple[int, int]]) -> None:
    calls: list[tuple[str, str]] = []

    def convert(raw: Mapping[str, Any]) -> tuple[str, str]:
        meta = raw["metadata"]
        calls.append((meta["uid"], meta["resourceVersion"]))
        return calls[-1]

    conv = Converter(convert, cache_size=size)
    model: OrderedDict[tuple[str, str], None] = OrderedDict()
    expected_calls = []
    for uid, rv in lookups:
        memo_key = (f"u{uid}", str(rv))
        if memo_key in model:
            model.move_to_end(memo_key)
        else:
            expected_calls.append(memo_key)
            model[memo_key] = None
            if len(model) > size:
                model.popitem(last=False)
        assert conv(obj(uid=memo_key[0], rv=memo_key[1]), "k") == memo_key
    assert calls == expected_calls


def test_deserializer_works_with_both_client_signatures() -> None:
    import json

    from tracker._convert import deserializer_for

    class Client37:
        def deserialize(self, response_text: str, response_type: Any, content_type: Any) -> Any:
            return ("37", json.loads(response_text), response_type, content_type)

    class Client31:
        def deserialize(self, response: Any, response_type: Any) -> Any:
            return ("31", json.loads(response.data), response_type)

    raw = obj(data={"big": 2**70, "s": "é"})  # beyond orjson's integers: the stdlib serialises it
    assert deserializer_for(Client37())(raw, V1ConfigMap) == (
        "37",
        raw,
        V1ConfigMap,
        "application/json",
    )
    assert deserializer_for(Client31())(raw, V1ConfigMap) == ("31", raw, V1ConfigMap)
    small = obj(data={"k": "v"})
    assert deserializer_for(Client37())(small, V1ConfigMap)[1] == small


def test_a_failed_typed_view_says_which_field_and_why_never_the_value() -> None:
    import dataclasses

    from kubernetes.client import V1Pod

    from tracker._convert import Converter, converter_for, failure_reason
    from tracker.errors import ConversionError

    @dataclasses.dataclass
    class Needs:
        metadata: dict[str, Any]
        replicas: int

    secret = "hunter2-do-not-log"
    cases = [
        (V1Pod, {"metadata": {"name": "p"}, "spec": {"containers": [{"image": secret}]}}, "name"),
        (Needs, {"metadata": {}, "spec": {"password": secret}}, "replicas"),
    ]
    for model, raw, field in cases:
        with pytest.raises(ConversionError) as info:
            Converter(converter_for(model), kind="pods")(raw, "default/p")
        message = str(info.value)
        assert field in message
        assert secret not in message
        assert message.startswith("cannot convert pods 'default/p': ")

    class OpaqueError(Exception):
        pass

    # unknown shapes: the type only
    assert failure_reason(OpaqueError(f"value {secret}")) == "OpaqueError"
    assert secret not in failure_reason(
        ValueError(f"Invalid value for `phase` ({secret}), must be one of ['Running']")
    )
    assert failure_reason(ValueError("Invalid value for `phase` (x), must not be `None`")) == (
        "ValueError: phase: must not be `None`"
    )
