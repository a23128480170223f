"""informers.toolkit.controllerutil.owners: controller-runtime's rules for
owner references on dicts (same owner = group, kind, name; one controller;
same namespace or cluster-scoped owner)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import AlreadyOwnedError, ObjectReferenceError, OwnerReferenceError
from informers.toolkit.controllerutil import (
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)
from informers.wire.resources import DEPLOYMENTS, NAMESPACES, REPLICASETS


def _owner(
    name: str = "web", kind: str = "ReplicaSet", api_version: str = "apps/v1", **meta: str
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{kind}-{name}", **meta},
    }


def _pod(**meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web-1", "namespace": "default", **meta}}


def test_controller_reference_has_controller_runtimes_flags() -> None:
    pod = _pod()
    assert set_controller_reference(_owner(), pod)
    assert pod["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": "uid-ReplicaSet-web",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert get_controller_of(pod) == pod["metadata"]["ownerReferences"][0]
    assert has_controller_reference(pod)
    assert not set_controller_reference(_owner(), pod)  # idempotent


def test_block_owner_deletion_can_be_turned_off() -> None:
    pod = _pod()
    set_controller_reference(_owner(), pod, block_owner_deletion=False)
    assert pod["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is False


def test_another_controller_raises_already_owned_and_changes_nothing() -> None:
    pod = _pod()
    set_controller_reference(_owner("a"), pod)
    before = copy.deepcopy(pod)
    with pytest.raises(AlreadyOwnedError) as info:
        set_controller_reference(_owner("b"), pod)
    assert info.value.owner["name"] == "a"
    assert info.value.object_key == "default/web-1"
    assert "ReplicaSet controller 'a'" in str(info.value)
    assert isinstance(info.value, OwnerReferenceError)
    assert pod == before
    # a plain owner reference to b is fine, and leaves a the controller
    assert set_owner_reference(_owner("b"), pod)
    assert get_controller_of(pod)["name"] == "a"  # type: ignore[index]


def test_same_owner_across_versions_is_replaced_not_added() -> None:
    pod = _pod()
    set_controller_reference(_owner(api_version="apps/v1beta2"), pod)
    assert set_controller_reference(_owner(), pod)  # same group apps: replaced
    refs = pod["metadata"]["ownerReferences"]
    assert len(refs) == 1
    assert refs[0]["apiVersion"] == "apps/v1"
    # another group is another owner
    assert set_owner_reference(_owner(api_version="example.com/v1"), pod)
    assert len(pod["metadata"]["ownerReferences"]) == 2


def test_new_uid_replaces_the_reference() -> None:
    pod = _pod()
    set_controller_reference(_owner(), pod)
    recreated = _owner()
    recreated["metadata"]["uid"] = "new"
    assert set_controller_reference(recreated, pod)
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "new"


def test_set_owner_reference_demotes_a_controller_reference_as_controller_runtime() -> None:
    pod = _pod()
    set_controller_reference(_owner(), pod)
    assert set_owner_reference(_owner(), pod)
    assert pod["metadata"]["ownerReferences"][0] == {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web",
        "uid": "uid-ReplicaSet-web",
    }
    assert not has_controller_reference(pod)


def test_namespace_rules() -> None:
    other_ns = _owner()
    other_ns["metadata"]["namespace"] = "other"
    with pytest.raises(OwnerReferenceError, match="cross-namespace"):
        set_controller_reference(other_ns, _pod())
    with pytest.raises(OwnerReferenceError, match="cluster-scoped"):
        set_owner_reference(_owner(), {"metadata": {"name": "node-1"}})
    namespace = {"metadata": {"name": "team", "uid": "ns-uid"}}
    pod = _pod()
    assert set_owner_reference(namespace, pod, owner_resource=NAMESPACES)  # cluster-scoped owner
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "Namespace"


def test_cached_owner_needs_its_resource() -> None:
    cached = {"metadata": {"name": "web", "namespace": "default", "uid": "u"}}
    with pytest.raises(ObjectReferenceError, match="pass its resource"):
        set_controller_reference(cached, _pod())
    pod = _pod()
    assert set_controller_reference(cached, pod, owner_resource=REPLICASETS)
    assert has_owner_reference(pod, cached, REPLICASETS)
    assert not has_owner_reference(pod, cached, DEPLOYMENTS)
    no_uid = {"metadata": {"name": "web", "namespace": "default"}}
    with pytest.raises(ObjectReferenceError, match="uid"):
        set_owner_reference(no_uid, _pod(), owner_resource=REPLICASETS)


def test_remove_owner_reference() -> None:
    pod = _pod()
    set_controller_reference(_owner("a"), pod)
    set_owner_reference(_owner("b"), pod)
    assert remove_owner_reference(_owner("a", api_version="apps/v1beta1"), pod)
    assert [r["name"] for r in pod["metadata"]["ownerReferences"]] == ["b"]
    assert not remove_owner_reference(_owner("a"), pod)
    assert not remove_owner_reference(_owner("a"), {"metadata": {}})


OWNERS = st.builds(
    _owner,
    name=st.sampled_from(["a", "b", "c"]),
    kind=st.sampled_from(["ReplicaSet", "Deployment"]),
    api_version=st.sampled_from(["apps/v1", "apps/v1beta1", "example.com/v1"]),
)
OPS = st.lists(st.tuples(st.sampled_from(["controller", "owner", "remove"]), OWNERS), max_size=10)


def _key(ref: dict[str, Any]) -> tuple[str, str, str]:
    return (
        ref["apiVersion"].rpartition("/")[0],
        ref["kind"],
        ref["metadata"]["name"] if "metadata" in ref else ref["name"],
    )


@given(OPS)
def test_operations_match_a_model(ops: list[tuple[str, dict[str, Any]]]) -> None:
    pod = _pod()
    # the model: owner key -> is controller, at most one controller
    model: dict[tuple[str, str, str], bool] = {}
    for op, owner in ops:
        key = _key(owner)
        before = copy.deepcopy(pod)
        if op == "controller":
            current = next((k for k, c in model.items() if c), None)
            if current is not None and current != key:
                with pytest.raises(AlreadyOwnedError):
                    set_controller_reference(owner, pod)
                assert pod == before
                continue
            changed = set_controller_reference(owner, pod)
            model[key] = True
        elif op == "owner":
            changed = set_owner_reference(owner, pod)
            model[key] = False
        else:
            changed = remove_owner_reference(owner, pod)
            model.pop(key, None)
        assert changed == (pod != before)
        refs = pod["metadata"].get("ownerReferences", [])
        assert {_key(r): bool(r.get("controller")) for r in refs} == model
        assert len(refs) == len(model)  # never two references to one owner
        # idempotent: the same operation again changes nothing
        again = copy.deepcopy(pod)
        if op == "controller":
            assert not set_controller_reference(owner, pod)
        elif op == "owner":
            assert not set_owner_reference(owner, pod)
        else:
            assert not remove_owner_reference(owner, pod)
        assert pod == again
