"""Table output for ``kubectl get`` (pure function, no server)."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._table import human_duration, to_table
from informers.wire.resources import (
    BUILTIN_RESOURCES,
    CONFIGMAPS,
    DEPLOYMENTS,
    ENDPOINTS,
    JOBS,
    NODES,
    PODS,
    REPLICASETS,
    SECRETS,
    SERVICES,
    Resource,
)

NOW = datetime.datetime(2026, 1, 2, 12, 0, 0, tzinfo=datetime.UTC)


def _names(table: dict) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-0.5, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (200, "3m20s"),
        (600, "10m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60 * 5, "3h5m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 3600, "3d1h"),
        (100 * 86400, "100d"),
        (3 * 365 * 86400 + 86400, "3y1d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


@given(st.integers(0, 20 * 365 * 86400))
def test_human_duration_is_short(seconds: int) -> None:
    text = human_duration(seconds)
    assert 2 <= len(text) <= 8
    assert text[0].isdigit()


def test_configmap_table() -> None:
    cm = {
        "metadata": {"name": "c", "namespace": "ns", "creationTimestamp": "2026-01-02T11:55:00Z"},
        "data": {"a": "1", "b": "2"},
        "binaryData": {"c": "AA=="},
    }
    table = to_table(CONFIGMAPS, [cm], {"resourceVersion": "7", "continue": "x"}, now=NOW)
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "7", "continue": "x"}
    assert _names(table) == ["Name", "Data", "Age"]
    (row,) = table["rows"]
    assert row["cells"] == ["c", 3, "5m"]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == "ns"


def test_pod_table_counts_ready_containers_and_restarts() -> None:
    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2026-01-02T12:00:00Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {
            "phase": "Running",
            "containerStatuses": [{"ready": True, "restartCount": 2}, {"ready": False}],
        },
    }
    table = to_table(PODS, [pod], {}, now=NOW)
    assert _names(table) == ["Name", "Ready", "Status", "Restarts", "IP", "Node", "Age"]
    assert table["rows"][0]["cells"] == ["p", "1/2", "Running", 2, "<none>", "n1", "0s"]
    terminating = {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "x"}}
    assert to_table(PODS, [terminating], {}, now=NOW)["rows"][0]["cells"][2] == "Terminating"


def test_service_secret_and_deployment_columns() -> None:
    service = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "nodePort": 30080}]}}
    assert to_table(SERVICES, [service], {}, now=NOW)["rows"][0]["cells"] == [
        "s",
        "ClusterIP",
        "<none>",
        "<none>",
        "80:30080/TCP",
        "<unknown>",
    ]
    secret = {"metadata": {"name": "x"}, "data": {"k": "dg=="}}
    assert to_table(SECRETS, [secret], {}, now=NOW)["rows"][0]["cells"][1:3] == ["Opaque", 1]
    deployment = {
        "metadata": {"name": "d"},
        "spec": {"replicas": 3},
        "status": {"readyReplicas": 1},
    }
    assert to_table(DEPLOYMENTS, [deployment], {}, now=NOW)["rows"][0]["cells"][1:4] == [
        "1/3",
        0,
        0,
    ]


def test_custom_resources_get_name_and_age_and_include_object() -> None:
    widgets = Resource("example.com", "v1", "widgets", "Widget")
    obj = {"metadata": {"name": "w"}, "spec": {"size": 1}}
    table = to_table(widgets, [obj], {}, now=NOW, include_object="Object")
    assert _names(table) == ["Name", "Age"]
    assert table["rows"][0]["object"] == {
        "kind": "Widget",
        "apiVersion": "example.com/v1",
        "metadata": {"name": "w"},
        "spec": {"size": 1},
    }
    assert "object" not in to_table(widgets, [obj], {}, include_object="None")["rows"][0]


def _age_index(table: dict) -> int:
    return [c["name"] for c in table["columnDefinitions"]].index("Age")


@pytest.mark.parametrize(
    ("resource", "obj"),
    [
        (SERVICES, {"spec": {"ports": 5, "externalIPs": 3}, "status": {"loadBalancer": 7}}),
        (PODS, {"spec": {"containers": "x"}, "status": {"containerStatuses": 3}}),
        (NODES, {"status": {"conditions": 1}, "metadata": {"labels": 3}}),
        (ENDPOINTS, {"subsets": [{"ports": 3, "addresses": "x"}, 5]}),
        (DEPLOYMENTS, {"spec": "x", "status": {"readyReplicas": "y"}}),
        (JOBS, {"spec": {"completions": True}}),
    ],
)
def test_wrongly_typed_fields_do_not_break_the_table(resource: Resource, obj: dict) -> None:
    table = to_table(resource, [obj], {}, now=NOW)
    (row,) = table["rows"]
    assert row["cells"][_age_index(table)] == "<unknown>"


def test_malformed_objects_do_not_break_the_table() -> None:
    odd = {"metadata": {"creationTimestamp": "yesterday"}, "spec": "weird", "status": []}
    for resource in (PODS, SERVICES, DEPLOYMENTS, CONFIGMAPS):
        table = to_table(resource, [odd], {}, now=NOW)
        (row,) = table["rows"]
        assert row["cells"][0] == ""
        assert row["cells"][_age_index(table)] == "<unknown>"


_ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["metadata", "spec", "status", "data", "containers", "ports", "conditions", "name"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(st.sampled_from(BUILTIN_RESOURCES), st.dictionaries(st.text(max_size=8), _ANY_JSON))
def test_any_object_makes_a_table_row(resource: Resource, obj: dict) -> None:
    table = to_table(resource, [obj], {}, now=NOW)
    (row,) = table["rows"]
    assert len(row["cells"]) == len(table["columnDefinitions"])


def test_workloads_have_the_wide_columns_after_age() -> None:
    deployment = {
        "metadata": {"name": "web"},
        "spec": {
            "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
            },
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25"},
                        {"name": "side", "image": "busybox"},
                    ]
                }
            },
        },
    }
    for resource in (DEPLOYMENTS, REPLICASETS, JOBS):
        table = to_table(resource, [deployment], {}, now=NOW)
        names = [c["name"] for c in table["columnDefinitions"]]
        assert names[-4:] == ["Age", "Containers", "Images", "Selector"]
        assert [c["priority"] for c in table["columnDefinitions"][-3:]] == [1, 1, 1]
        (row,) = table["rows"]
        assert row["cells"][-3:] == ["nginx,side", "nginx:1.25,busybox", "app=web,tier in (a,b)"]
