"""Map functions: the object's own request and the owner mapping."""

from __future__ import annotations

from typing import Any

import pytest

from informers.toolkit.runtime import Request, enqueue_owner, request_for_object
from informers.wire.objects import DeletedFinalStateUnknown
from informers.wire.resources import DEPLOYMENTS, NAMESPACES, REPLICASETS


def ref(
    kind: str, name: str, api_version: str = "apps/v1", controller: Any = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": name}
    if controller is not None:
        out["controller"] = controller
    return out


def pod(*refs: dict[str, Any], ns: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": ns, "ownerReferences": list(refs)}}


def test_request_for_object() -> None:
    assert request_for_object(pod()) == [Request("default", "p")]
    assert request_for_object(DeletedFinalStateUnknown("a/b", None)) == [Request("a", "b")]


def test_controller_only_takes_the_first_controller_reference() -> None:
    m = enqueue_owner("ReplicaSet", "apps")
    p = pod(
        ref("ReplicaSet", "not-controller"),
        ref("ReplicaSet", "rs-1", controller=True),
        ref("ReplicaSet", "rs-2", controller=True),
    )
    assert m(p) == [Request("default", "rs-1")]
    assert m(pod(ref("ReplicaSet", "x", controller=False))) == []
    # the controller reference is of another kind: no owner of ours
    assert m(pod(ref("Deployment", "d", controller=True), ref("ReplicaSet", "rs"))) == []


def test_all_owners_when_not_controller_only() -> None:
    m = enqueue_owner(REPLICASETS, controller_only=False)
    p = pod(ref("ReplicaSet", "a"), ref("ReplicaSet", "b", controller=True), ref("ReplicaSet", "a"))
    assert m(p) == [Request("default", "a"), Request("default", "b")]


def test_group_must_match_and_version_is_ignored() -> None:
    m = enqueue_owner("ReplicaSet", "apps", controller_only=False)
    assert m(pod(ref("ReplicaSet", "a", "apps/v1beta2"))) == [Request("default", "a")]
    assert m(pod(ref("ReplicaSet", "a", "extensions/v1beta1"))) == []
    assert m(pod(ref("ReplicaSet", "a", "v1"))) == []
    core = enqueue_owner("ConfigMap", controller_only=False)
    assert core(pod(ref("ConfigMap", "c", "v1"))) == [Request("default", "c")]


def test_cluster_scoped_owner_has_no_namespace() -> None:
    m = enqueue_owner(NAMESPACES, controller_only=False)
    assert m(pod(ref("Namespace", "team-a", "v1"))) == [Request("", "team-a")]
    m2 = enqueue_owner("Thing", "example.com", controller_only=False, namespaced=False)
    assert m2(pod(ref("Thing", "t", "example.com/v1"))) == [Request("", "t")]


def test_malformed_references_are_skipped() -> None:
    m = enqueue_owner(DEPLOYMENTS, controller_only=False)
    junk = {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": "junk"}}
    assert m(junk) == []
    refs = [
        "junk",
        {"kind": "Deployment", "apiVersion": "apps/v1"},  # no name
        {"kind": "Deployment", "apiVersion": "apps/v1", "name": "a/b"},
        {"kind": "Deployment", "apiVersion": "a/b/c", "name": "x"},
        ref("Deployment", "ok"),
    ]
    assert m({"metadata": {"name": "p", "namespace": "ns", "ownerReferences": refs}}) == [
        Request("ns", "ok")
    ]
    assert m({"no": "metadata"}) == []


def test_tombstones_map_through_their_last_state() -> None:
    m = enqueue_owner(REPLICASETS)
    tomb = DeletedFinalStateUnknown("default/p", pod(ref("ReplicaSet", "rs", controller=True)))
    assert m(tomb) == [Request("default", "rs")]


def test_bad_owner() -> None:
    with pytest.raises(ValueError, match="owner"):
        enqueue_owner("")
