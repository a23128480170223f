from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    ObjectKeyError,
    deletion_handling_meta_namespace_key,
    get_labels,
    get_name,
    get_namespace,
    get_resource_version,
    get_uid,
    meta_namespace_key,
    meta_namespace_keys,
    namespace_index,
    split_meta_namespace_key,
)


def obj(name: Any = "web", namespace: Any = None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **meta}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}


def test_namespaced_key() -> None:
    assert meta_namespace_key(obj("web", "prod")) == "prod/web"


@pytest.mark.parametrize("namespace", [None, ""])
def test_cluster_scoped_key(namespace: str | None) -> None:
    assert meta_namespace_key(obj("node-1", namespace)) == "node-1"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({}, "has no metadata"),
        ({"metadata": None}, "has no metadata"),
        ({"metadata": {}}, "no metadata.name"),
        ({"metadata": {"name": ""}}, "no metadata.name"),
        ({"metadata": {"name": 5}}, "metadata.name is a int"),
        ({"metadata": {"name": "a", "namespace": 3}}, "metadata.namespace is a int"),
        (None, "NoneType has no metadata"),
    ],
)
def test_missing_name_is_a_clear_object_key_error(bad: Any, message: str) -> None:
    with pytest.raises(ObjectKeyError, match=message) as info:
        meta_namespace_key(bad)
    assert isinstance(info.value, ValueError)
    assert not isinstance(info.value, KeyError)


def test_tombstone_needs_the_deletion_handling_key_func() -> None:
    tombstone = DeletedFinalStateUnknown("prod/web", obj("web", "prod"))
    with pytest.raises(ObjectKeyError, match="deletion_handling_meta_namespace_key"):
        meta_namespace_key(tombstone)
    assert deletion_handling_meta_namespace_key(tombstone) == "prod/web"
    assert deletion_handling_meta_namespace_key(obj("web", "prod")) == "prod/web"


@pytest.mark.parametrize("accessor", [get_name, get_namespace, get_labels, namespace_index])
def test_accessors_refuse_tombstones(accessor: Any) -> None:
    with pytest.raises(ObjectKeyError, match="tombstone"):
        accessor(DeletedFinalStateUnknown("prod/web", obj("web", "prod")))


def test_tombstone_repr_hides_the_object() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "hunter2"}}
    tombstone = DeletedFinalStateUnknown("s", secret)
    assert "hunter2" not in repr(tombstone)
    assert "'s'" in repr(tombstone)
    assert tombstone == DeletedFinalStateUnknown("s", secret)
    with pytest.raises(AttributeError):
        tombstone.key = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("key", "parts"),
    [("prod/web", ("prod", "web")), ("node-1", ("", "node-1"))],
)
def test_split_key(key: str, parts: tuple[str, str]) -> None:
    assert split_meta_namespace_key(key) == parts


@pytest.mark.parametrize("key", ["", "a/b/c", "/web", "prod/", "/"])
def test_split_malformed_key(key: str) -> None:
    with pytest.raises(ObjectKeyError):
        split_meta_namespace_key(key)


_segment = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)


@given(name=_segment, namespace=st.none() | _segment)
def test_key_round_trip(name: str, namespace: str | None) -> None:
    key = meta_namespace_key(obj(name, namespace))
    assert split_meta_namespace_key(key) == (namespace or "", name)


def test_namespace_index() -> None:
    assert namespace_index(obj("a", "prod")) == ["prod"]
    assert namespace_index(obj("node")) == [""]
    assert NAMESPACE_INDEX == "namespace"


def test_accessors() -> None:
    full = obj("web", "prod", resourceVersion="42", uid="u-1", labels={"app": "web"})
    assert get_name(full) == "web"
    assert get_namespace(full) == "prod"
    assert get_resource_version(full) == "42"
    assert get_uid(full) == "u-1"
    assert get_labels(full) == {"app": "web"}
    bare = obj("n")
    assert (get_namespace(bare), get_resource_version(bare), get_uid(bare)) == ("", "", "")
    assert get_labels(bare) == {}
    assert get_labels({}) == {}
    assert get_labels(obj("n", labels=None)) == {}


def test_accessors_do_not_copy() -> None:
    labels = {"app": "web"}
    assert get_labels(obj("web", labels=labels)) is labels


def test_attribute_style_objects() -> None:
    metadata = SimpleNamespace(
        name="web", namespace="prod", resource_version="7", uid="u", labels={"a": "b"}
    )
    model = SimpleNamespace(metadata=metadata)
    assert meta_namespace_key(model) == "prod/web"
    assert get_resource_version(model) == "7"
    assert get_labels(model) == {"a": "b"}
    assert meta_namespace_key(SimpleNamespace(metadata=SimpleNamespace(name="n"))) == "n"
    with pytest.raises(ObjectKeyError, match=r"no metadata\.name"):
        meta_namespace_key(SimpleNamespace(metadata=SimpleNamespace(name=None)))


def test_kubernetes_client_models() -> None:
    from kubernetes.client import V1ObjectMeta, V1Pod

    pod = V1Pod(metadata=V1ObjectMeta(name="web", namespace="prod", resource_version="9"))
    assert meta_namespace_key(pod) == "prod/web"
    assert get_resource_version(pod) == "9"
    assert get_labels(pod) == {}


# --- meta_namespace_keys (its fast path is held to meta_namespace_key in
# tests/informers/wire/test_fastpath.py)


def test_meta_namespace_keys_defaults_to_meta_namespace_key() -> None:
    assert meta_namespace_keys([obj("a", "prod"), obj("node")]) == ["prod/a", "node"]
    with pytest.raises(ObjectKeyError, match="deletion_handling"):
        meta_namespace_keys([DeletedFinalStateUnknown("prod/a", obj("a", "prod"))])
