from __future__ import annotations

import pytest

from informers.wire.resources import (
    BUILTIN_RESOURCES,
    DEPLOYMENTS,
    LEASES,
    NAMESPACES,
    PODS,
    Resource,
    find_builtin,
)


def test_core_namespaced_paths() -> None:
    assert PODS.collection_path() == "/api/v1/pods"
    assert PODS.collection_path("ns1") == "/api/v1/namespaces/ns1/pods"
    assert PODS.object_path("p", "ns1") == "/api/v1/namespaces/ns1/pods/p"
    assert PODS.list_kind == "PodList"
    assert PODS.api_version == "v1"


def test_cluster_scoped_ignores_namespace() -> None:
    assert NAMESPACES.collection_path("x") == "/api/v1/namespaces"


def test_group_paths_and_versions() -> None:
    assert DEPLOYMENTS.collection_path("a") == "/apis/apps/v1/namespaces/a/deployments"
    assert LEASES.api_version == "coordination.k8s.io/v1"
    assert str(LEASES) == "leases.coordination.k8s.io"


def test_singular_defaults_to_lower_kind() -> None:
    assert Resource("example.com", "v1", "widgets", "Widget").singular == "widget"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("po", PODS),
        ("pod", PODS),
        ("pods", PODS),
        ("Pod", PODS),
        ("deployments.apps", DEPLOYMENTS),
        ("leases.coordination.k8s.io", LEASES),
        ("nope", None),
        ("pods.apps", None),
    ],
)
def test_find_builtin(name: str, expected: Resource | None) -> None:
    assert find_builtin(name) == expected


def test_builtin_plurals_unique_per_group() -> None:
    keys = [(r.group, r.plural) for r in BUILTIN_RESOURCES]
    assert len(keys) == len(set(keys))
