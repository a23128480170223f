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


# --- meta_namespace_keys: the batch fast path agrees with meta_namespace_key ---

_any_value = st.none() | st.integers() | st.text(max_size=3) | st.sampled_from(["", "web", "ns"])
_any_metadata = (
    st.none()
    | st.integers()
    | st.dictionaries(st.sampled_from(["name", "namespace", "uid"]), _any_value, max_size=3)
)
_any_object = (
    st.builds(lambda m: {"metadata": m}, _any_metadata)
    | st.just({})
    | st.none()
    | st.builds(lambda n, ns: DeletedFinalStateUnknown(f"{ns}/{n}", obj(n, ns)), _segment, _segment)
    | st.builds(lambda n: SimpleNamespace(metadata=SimpleNamespace(name=n)), _any_value)
)


def _key_or_error(key_func: Any, item: Any) -> tuple[str, str]:
    try:
        return ("key", key_func(item))
    except ObjectKeyError as err:
        return ("error", str(err))


@given(objects=st.lists(_any_object, max_size=6))
def test_meta_namespace_keys_agrees_with_meta_namespace_key(objects: list[Any]) -> None:
    for key_func in (meta_namespace_key, deletion_handling_meta_namespace_key):
        singles = [_key_or_error(key_func, o) for o in objects]
        if all(kind == "key" for kind, _ in singles):
            assert meta_namespace_keys(objects, key_func) == [key for _, key in singles]
        else:
            first_error = next(msg for kind, msg in singles if kind == "error")
            with pytest.raises(ObjectKeyError) as info:
                meta_namespace_keys(iter(objects), key_func)
            assert str(info.value) == first_error


def test_meta_namespace_keys_defaults_to_meta_namespace_key() -> None:
    assert meta_namespace_keys([obj("a", "prod"), obj("node")]) == ["prod/a", "node"]
    with pytest.raises(ObjectKeyError, match="deletion_handling"):
        meta_namespace_keys([DeletedFinalStateUnknown("prod/a", obj("a", "prod"))])


class _Text(str):
    """A str subclass: not decoded JSON, so never taken by a fast path."""


_rv_values = st.one_of(
    st.none(), st.text(max_size=3), st.integers(), st.builds(_Text, st.text(max_size=3))
)
_rv_objects = st.one_of(
    st.builds(lambda rv: {"metadata": {"resourceVersion": rv}}, _rv_values),
    st.builds(lambda: {"metadata": {}}),
    st.builds(lambda meta: {"metadata": meta}, st.one_of(st.none(), st.integers(), st.text())),
    st.builds(
        lambda rv: SimpleNamespace(metadata=SimpleNamespace(resource_version=rv)), _rv_values
    ),
    st.none(),
)


@given(_rv_objects)
def test_get_resource_version_fast_path_agrees_with_the_general_rule(obj: Any) -> None:
    # The general rule: metadata.resourceVersion when it is a string, else "".
    meta = obj.get("metadata") if isinstance(obj, dict) else getattr(obj, "metadata", None)
    if isinstance(meta, dict):
        value = meta.get("resourceVersion")
    else:
        value = getattr(meta, "resource_version", None)
    assert get_resource_version(obj) == (value if isinstance(value, str) else "")
