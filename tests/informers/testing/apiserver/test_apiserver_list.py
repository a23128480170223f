"""LIST rules of SEMANTICS.md Part A, through the real kubernetes client."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from informers.testing import ApiServer
from tests.helpers import configmap


def _error(exc: client.ApiException) -> dict:
    return json.loads(exc.body)


def _raw_list(core: client.CoreV1Api, ns: str, **kwargs: object) -> dict:
    response = core.list_namespaced_config_map(ns, _preload_content=False, **kwargs)
    return json.loads(response.data)


def _make(core: client.CoreV1Api, ns: str, *names: str) -> list[int]:
    return [
        int(core.create_namespaced_config_map(ns, configmap(n)).metadata.resource_version)
        for n in names
    ]


def test_list_is_ordered_by_namespace_and_name(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "c", "a", "b")
    assert [c.metadata.name for c in core.list_namespaced_config_map(ns).items] == ["a", "b", "c"]
    everything = core.list_config_map_for_all_namespaces().items
    keys = [(c.metadata.namespace, c.metadata.name) for c in everything]
    assert keys == sorted(keys)


def test_list_items_of_builtin_kinds_carry_no_kind(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a")
    body = _raw_list(core, ns)
    assert body["kind"] == "ConfigMapList"
    assert body["apiVersion"] == "v1"
    assert "kind" not in body["items"][0]
    assert "apiVersion" not in body["items"][0]


def test_list_rv_unset_is_most_recent(server: ApiServer, core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b")
    body = _raw_list(core, ns)
    assert body["metadata"]["resourceVersion"] == str(server.resource_version)
    assert len(body["items"]) == 2


def test_list_rv_zero_ignores_limit(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b", "c")
    body = _raw_list(core, ns, resource_version="0", limit=1)
    assert len(body["items"]) == 3
    assert "continue" not in body["metadata"]


def test_list_rv_not_older_than_returns_current_state(core: client.CoreV1Api, ns: str) -> None:
    first, _ = _make(core, ns, "a", "b")
    body = _raw_list(core, ns, resource_version=str(first), resource_version_match="NotOlderThan")
    assert [i["metadata"]["name"] for i in body["items"]] == ["a", "b"]


def test_list_rv_n_without_match_is_not_older_than(core: client.CoreV1Api, ns: str) -> None:
    first, second = _make(core, ns, "a", "b")
    body = _raw_list(core, ns, resource_version=str(first))
    assert int(body["metadata"]["resourceVersion"]) >= second
    assert len(body["items"]) == 2


def test_list_rv_n_with_limit_is_exact(core: client.CoreV1Api, ns: str) -> None:
    first, _ = _make(core, ns, "a", "b")
    body = _raw_list(core, ns, resource_version=str(first), limit=10)
    assert body["metadata"]["resourceVersion"] == str(first)
    assert [i["metadata"]["name"] for i in body["items"]] == ["a"]


def test_list_rv_exact_returns_state_at_rv(core: client.CoreV1Api, ns: str) -> None:
    (first,) = _make(core, ns, "a")
    core.patch_namespaced_config_map("a", ns, {"data": {"k": "changed"}})
    _make(core, ns, "b")
    core.delete_namespaced_config_map("a", ns)
    body = _raw_list(core, ns, resource_version=str(first), resource_version_match="Exact")
    assert body["metadata"]["resourceVersion"] == str(first)
    assert [(i["metadata"]["name"], i.get("data")) for i in body["items"]] == [("a", {})]


def test_list_rv_exact_compacted_is_410(server: ApiServer, core: client.CoreV1Api, ns: str) -> None:
    (first,) = _make(core, ns, "a")
    _make(core, ns, "b")
    server.compact()
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(
            ns, resource_version=str(first), resource_version_match="Exact"
        )
    assert err.value.status == 410
    assert _error(err.value)["reason"] == "Expired"


def test_list_rv_exact_at_compaction_point_is_served(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    _make(core, ns, "a")
    compacted = server.compact()
    body = _raw_list(core, ns, resource_version=str(compacted), resource_version_match="Exact")
    assert len(body["items"]) == 1


def test_list_rv_exact_in_future_is_504(server: ApiServer, core: client.CoreV1Api, ns: str) -> None:
    future = server.resource_version + 100
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(
            ns, resource_version=str(future), resource_version_match="Exact"
        )
    assert err.value.status == 504
    status = _error(err.value)
    assert status["reason"] == "Timeout"
    assert status["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_list_rv_not_older_than_in_future_waits_then_504(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    future = server.resource_version + 100
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(
            ns, resource_version=str(future), resource_version_match="NotOlderThan"
        )
    assert err.value.status == 504


def test_list_non_numeric_rv_is_500(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, resource_version="abc")
    assert err.value.status == 500
    assert _error(err.value)["reason"] == "InternalError"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"resource_version_match": "Exact"}, "resourceVersionMatch"),
        ({"resource_version": "5", "resource_version_match": "Sometimes"}, "resourceVersionMatch"),
        ({"resource_version": "0", "resource_version_match": "Exact"}, "resourceVersionMatch"),
        ({"send_initial_events": True}, "sendInitialEvents"),
    ],
    ids=["match-without-rv", "bad-match", "exact-zero", "send-initial-events"],
)
def test_list_invalid_options_are_422(
    core: client.CoreV1Api, ns: str, kwargs: dict, field: str
) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, **kwargs)
    assert err.value.status == 422
    status = _error(err.value)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == field


def test_list_match_with_continue_is_422(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    _make(core, ns, "a", "b")
    token = _raw_list(core, ns, limit=1)["metadata"]["continue"]
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(
            ns, _continue=token, resource_version="1", resource_version_match="NotOlderThan"
        )
    assert err.value.status == 422


def test_list_limit_and_continue_paginate_consistently(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b", "c", "d", "e")
    first = _raw_list(core, ns, limit=2)
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 3
    list_rv = first["metadata"]["resourceVersion"]
    core.delete_namespaced_config_map("c", ns)  # after the snapshot: not visible
    _make(core, ns, "bb")
    seen = []
    token = first["metadata"]["continue"]
    while token:
        page = _raw_list(core, ns, limit=2, _continue=token)
        assert page["metadata"]["resourceVersion"] == list_rv
        seen += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert seen == ["c", "d", "e"]


def test_list_continue_token_is_opaque_base64(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b")
    token = _raw_list(core, ns, limit=1)["metadata"]["continue"]
    assert "a" not in token.split("eyJ")[0]  # not the key in clear text
    assert token.replace("-", "").replace("_", "").isalnum()


def test_list_continue_expired_is_410_with_inconsistent_token(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    _make(core, ns, "a", "b", "c")
    token = _raw_list(core, ns, limit=1)["metadata"]["continue"]
    _make(core, ns, "bb")
    server.compact()
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, limit=1, _continue=token)
    assert err.value.status == 410
    status = _error(err.value)
    assert status["reason"] == "Expired"
    fresh = status["metadata"]["continue"]
    rest = _raw_list(core, ns, _continue=fresh)
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b", "bb", "c"]


def test_list_continue_with_rv_is_400(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b")
    body = _raw_list(core, ns, limit=1)
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(
            ns, limit=1, _continue=body["metadata"]["continue"], resource_version="3"
        )
    assert err.value.status == 400


def test_list_malformed_continue_is_400(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, _continue="not-a-token!")
    assert err.value.status == 400


def test_list_last_page_has_no_continue(core: client.CoreV1Api, ns: str) -> None:
    _make(core, ns, "a", "b")
    body = _raw_list(core, ns, limit=2)
    assert "continue" not in body["metadata"]
    assert "remainingItemCount" not in body["metadata"]


def test_list_latency_delays_lists(server: ApiServer, core: client.CoreV1Api, ns: str) -> None:
    import time

    server.list_latency = 0.2
    started = time.monotonic()
    core.list_namespaced_config_map(ns)
    assert time.monotonic() - started >= 0.2


def _labelled(core: client.CoreV1Api, ns: str) -> None:
    for name, labels in [
        ("a", {"env": "prod", "tier": "web"}),
        ("b", {"env": "dev"}),
        ("c", {"tier": "db"}),
        ("d", {"env": "prod"}),
    ]:
        core.create_namespaced_config_map(ns, {"metadata": {"name": name, "labels": labels}})


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", ["a", "d"]),
        ("env==prod", ["a", "d"]),
        ("env!=prod", ["b", "c"]),
        ("env in (dev,prod)", ["a", "b", "d"]),
        ("env notin (prod)", ["b", "c"]),
        ("tier", ["a", "c"]),
        ("!tier", ["b", "d"]),
        ("env=prod,tier", ["a"]),
    ],
)
def test_list_label_selector_grammar(
    core: client.CoreV1Api, ns: str, selector: str, expected: list[str]
) -> None:
    _labelled(core, ns)
    listed = core.list_namespaced_config_map(ns, label_selector=selector)
    assert [c.metadata.name for c in listed.items] == expected


def test_list_label_selector_parse_error_is_400(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, label_selector="env in (prod")
    assert err.value.status == 400
    assert _error(err.value)["reason"] == "BadRequest"


def test_list_field_selector_metadata_fields(core: client.CoreV1Api, ns: str) -> None:
    _labelled(core, ns)
    listed = core.list_config_map_for_all_namespaces(
        field_selector=f"metadata.namespace={ns},metadata.name!=a"
    )
    assert [c.metadata.name for c in listed.items] == ["b", "c", "d"]


def test_list_field_selector_pod_node_name_and_phase(core: client.CoreV1Api, ns: str) -> None:
    containers = [{"name": "c", "image": "nginx"}]
    body = {"metadata": {"name": "p1"}, "spec": {"nodeName": "n1", "containers": containers}}
    core.create_namespaced_pod(ns, body)
    core.create_namespaced_pod(ns, {"metadata": {"name": "p2"}, "spec": {"containers": containers}})
    core.patch_namespaced_pod_status("p2", ns, {"status": {"phase": "Running"}})
    on_node = core.list_namespaced_pod(ns, field_selector="spec.nodeName=n1")
    assert [p.metadata.name for p in on_node.items] == ["p1"]
    unscheduled = core.list_namespaced_pod(ns, field_selector="spec.nodeName=")
    assert [p.metadata.name for p in unscheduled.items] == ["p2"]
    running = core.list_namespaced_pod(ns, field_selector="status.phase==Running")
    assert [p.metadata.name for p in running.items] == ["p2"]


def test_list_field_selector_unknown_field_is_400(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, field_selector="spec.nodeName=n1")
    assert err.value.status == 400
    assert "field label not supported" in _error(err.value)["message"]


def test_list_field_selector_parse_error_is_400(core: client.CoreV1Api, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map(ns, field_selector="metadata.name")
    assert err.value.status == 400


def test_list_remaining_item_count_only_without_selectors(core: client.CoreV1Api, ns: str) -> None:
    _labelled(core, ns)
    page = _raw_list(core, ns, limit=1, label_selector="env")
    assert "continue" in page["metadata"]
    assert "remainingItemCount" not in page["metadata"]
    seen = [i["metadata"]["name"] for i in page["items"]]
    token = page["metadata"]["continue"]
    while token:
        page = _raw_list(core, ns, limit=1, label_selector="env", _continue=token)
        seen += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert seen == ["a", "b", "d"]


def test_long_list_is_streamed_chunked_and_equals_its_pages(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    import urllib3

    count = 2_345  # more than two write batches
    server.create_many("configmaps", (configmap(f"cm-{i:05d}", k=str(i)) for i in range(count)), ns)
    http = urllib3.PoolManager()
    try:
        response = http.request("GET", f"{server.url}/api/v1/namespaces/{ns}/configmaps")
        short = http.request("GET", f"{server.url}/api/v1/namespaces/{ns}/configmaps?limit=10")
    finally:
        http.clear()
    assert response.status == 200
    assert response.headers.get("Transfer-Encoding") == "chunked"  # no whole-body copy
    assert short.headers.get("Content-Length") == str(len(short.data))
    whole = json.loads(response.data)
    assert whole["kind"] == "ConfigMapList"
    assert whole["metadata"] == {"resourceVersion": str(server.resource_version)}
    paged, token = [], None
    while True:
        page = core.list_namespaced_config_map(ns, limit=1000, _continue=token)
        paged += [item.metadata.name for item in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert [item["metadata"]["name"] for item in whole["items"]] == paged
    assert len(paged) == count
    assert "kind" not in whole["items"][0]
    assert whole["items"][-1]["data"] == {"k": str(count - 1)}
    via_client = core.list_namespaced_config_map(ns)
    assert len(via_client.items) == count
