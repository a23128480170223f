"""The emulator's metadata-only content negotiation (``as=PartialObjectMetadata``
and ``as=PartialObjectMetadataList``), as the real API server serves it:
for get, list (with pages), watch and watch-list, for a built-in kind and a
custom resource; 406 where the server refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from apiserver_helpers import pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers.errors import ApiError
from informers.rest.transport import ApiClientTransport
from informers.testing import ApiServer
from informers.testing.apiserver import _partial
from informers.testing.apiserver._exchange import Request
from informers.testing.apiserver._status import StatusError
from informers.wire.partial import PARTIAL_LIST_ACCEPT, PARTIAL_OBJECT_ACCEPT
from informers.wire.resources import PODS, Resource
from tests.helpers import install_widgets


@pytest.fixture
def transport(api: Any) -> ApiClientTransport:
    return ApiClientTransport(api)


def _get(transport: ApiClientTransport, path: str, accept: str) -> dict[str, Any]:
    data = transport.request("GET", path, headers={"Accept": accept}).data
    parsed: dict[str, Any] = json.loads(data)
    return parsed


def _watch(
    transport: ApiClientTransport, path: str, accept: str, query: list[tuple[str, str]], n: int
) -> list[dict[str, Any]]:
    response = transport.stream("GET", path, query=query, headers={"Accept": accept})
    events: list[dict[str, Any]] = []
    pending = b""
    try:
        for chunk in response.chunks(65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            events.extend(json.loads(line) for line in lines if line.strip())
            if len(events) >= n:
                break
    finally:
        response.close()
    return events


def _is_partial(obj: dict[str, Any], full: dict[str, Any], version: str = "v1") -> None:
    assert obj == {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": full["metadata"],
    }


@pytest.fixture
def widgets(server: ApiServer, ns: str) -> Resource:
    return install_widgets(server)


@pytest.mark.parametrize("kind", ["pods", "widgets"])
def test_list_get_and_pages_are_metadata_only(
    server: ApiServer, transport: ApiClientTransport, ns: str, widgets: Resource, kind: str
) -> None:
    resource = PODS if kind == "pods" else widgets
    full = []
    for i in range(5):
        body = pod(f"o{i}", {"i": str(i)})
        if kind == "widgets":
            body = {"apiVersion": "example.com/v1", "kind": "Widget", **body}
        full.append(server.create(resource, body, ns))
    path = resource.collection_path(ns)
    listed = _get(transport, path, PARTIAL_LIST_ACCEPT)
    assert listed["kind"] == "PartialObjectMetadataList"
    assert listed["apiVersion"] == "meta.k8s.io/v1"
    assert listed["metadata"]["resourceVersion"] == str(server.resource_version)
    assert len(listed["items"]) == 5
    for item, obj in zip(listed["items"], full, strict=True):
        _is_partial(item, obj)
    page = _get(transport, path + "?limit=2", PARTIAL_LIST_ACCEPT)
    assert len(page["items"]) == 2
    assert page["metadata"]["continue"]
    assert page["metadata"]["remainingItemCount"] == 3
    rest = _get(
        transport, path + "?limit=10&continue=" + page["metadata"]["continue"], PARTIAL_LIST_ACCEPT
    )
    assert [i["metadata"]["name"] for i in page["items"] + rest["items"]] == [
        f"o{i}" for i in range(5)
    ]
    one = _get(transport, f"{path}/o1", PARTIAL_OBJECT_ACCEPT)
    _is_partial(one, full[1])
    beta = _get(transport, f"{path}/o1", PARTIAL_OBJECT_ACCEPT.replace("v=v1", "v=v1beta1"))
    _is_partial(beta, full[1], "v1beta1")
    # whole objects still, for a client that asks for them
    assert _get(transport, f"{path}/o1", "application/json")["kind"] == full[1]["kind"]


@pytest.mark.parametrize("kind", ["pods", "widgets"])
def test_watch_and_watch_list_are_metadata_only(
    server: ApiServer, transport: ApiClientTransport, ns: str, widgets: Resource, kind: str
) -> None:
    resource = PODS if kind == "pods" else widgets
    extra = {"apiVersion": "example.com/v1", "kind": "Widget"} if kind == "widgets" else {}
    first = server.create(resource, {**extra, **pod("a")}, ns)
    path = resource.collection_path(ns)
    initial = _watch(
        transport,
        path,
        PARTIAL_OBJECT_ACCEPT,
        [
            ("watch", "true"),
            ("sendInitialEvents", "true"),
            ("resourceVersionMatch", "NotOlderThan"),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", "5"),
        ],
        2,
    )
    assert [e["type"] for e in initial] == ["ADDED", "BOOKMARK"]
    _is_partial(initial[0]["object"], first)
    bookmark = initial[1]["object"]
    assert bookmark["kind"] == "PartialObjectMetadata"
    assert bookmark["apiVersion"] == "meta.k8s.io/v1"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    rv = first["metadata"]["resourceVersion"]
    second = server.create(resource, {**extra, **pod("b")}, ns)
    gone = server.delete(resource, "a", ns)
    events = _watch(
        transport,
        path,
        PARTIAL_OBJECT_ACCEPT,
        [("watch", "true"), ("resourceVersion", rv), ("timeoutSeconds", "5")],
        2,
    )
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    _is_partial(events[0]["object"], second)
    _is_partial(events[1]["object"], gone)


def test_what_the_server_refuses_is_406(
    server: ApiServer, transport: ApiClientTransport, ns: str
) -> None:
    server.create(PODS, pod("a"), ns)
    path = PODS.collection_path(ns)
    refused = [
        (f"{path}/a", PARTIAL_LIST_ACCEPT, "is not a list (*v1.Pod)"),
        (path, PARTIAL_OBJECT_ACCEPT, "is a list (*v1.PodList)"),
        (path, "application/json;as=Secret;g=meta.k8s.io;v=v1", "only the following media"),
        (path, PARTIAL_LIST_ACCEPT.replace("v=v1", "v=v2"), "only the following media"),
        (path, PARTIAL_LIST_ACCEPT.replace("g=meta.k8s.io", "g=apps"), "only the following"),
    ]
    for target, accept, message in refused:
        with pytest.raises(ApiError) as caught:
            transport.request("GET", target, headers={"Accept": accept})
        assert caught.value.status == 406, accept
        assert caught.value.reason == "NotAcceptable"
        assert message in caught.value.message
    with pytest.raises(ApiError) as caught:
        transport.stream(
            "GET", path, query=[("watch", "true")], headers={"Accept": PARTIAL_LIST_ACCEPT}
        )
    assert caught.value.status == 406
    # client-go's metadata client lists protobuf first: the emulator takes the JSON clause
    protobuf = PARTIAL_LIST_ACCEPT.replace(
        "application/json", "application/vnd.kubernetes.protobuf"
    )
    both = f"{protobuf},{PARTIAL_LIST_ACCEPT}"
    assert _get(transport, path, both)["kind"] == "PartialObjectMetadataList"
    # a later plain clause is served when the first cannot be
    fallback = "application/json;as=Secret;g=x;v=v1,application/json"
    assert _get(transport, path, fallback)["kind"] == "PodList"


METADATA = st.fixed_dictionaries(
    {},
    optional={
        "labels": st.dictionaries(
            st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True),
            st.from_regex(r"[a-z0-9]{0,5}", fullmatch=True),
            max_size=3,
        ),
        "annotations": st.dictionaries(
            st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.text(max_size=8), max_size=3
        ),
        "finalizers": st.lists(st.from_regex(r"[a-z]{1,6}/f", fullmatch=True), max_size=2),
    },
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metas=st.lists(METADATA, min_size=1, max_size=6), data=st.text(max_size=40))
def test_a_partial_list_is_the_metadata_of_the_full_list(
    server: ApiServer, transport: ApiClientTransport, metas: list[dict[str, Any]], data: str
) -> None:
    """Property: for any objects, the metadata-only list holds exactly the
    ``metadata`` of each object of the full list, in the same order, at the
    same resourceVersion."""
    namespace = f"p{server.resource_version}"
    server.create("namespaces", {"metadata": {"name": namespace}})
    for i, meta in enumerate(metas):
        server.create(
            "configmaps", {"metadata": {"name": f"c{i}", **meta}, "data": {"d": data}}, namespace
        )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    full = _get(transport, path, "application/json")
    partial = _get(transport, path, PARTIAL_LIST_ACCEPT)
    assert partial["metadata"] == full["metadata"]
    assert [i["metadata"] for i in partial["items"]] == [i["metadata"] for i in full["items"]]
    assert {i["kind"] for i in partial["items"]} == {"PartialObjectMetadata"}
    assert all("data" not in i for i in partial["items"])


CLAUSES = st.sampled_from(
    [
        "application/json",
        "*/*",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        PARTIAL_LIST_ACCEPT,
        PARTIAL_OBJECT_ACCEPT,
        PARTIAL_LIST_ACCEPT.replace("v=v1", "v=v1beta1"),
        PARTIAL_LIST_ACCEPT.replace("json", "vnd.kubernetes.protobuf"),
        "application/json;as=Table;g=meta.k8s.io;v=v1",
        "application/json;as=Secret;g=meta.k8s.io;v=v1",
        "application/json;as=PartialObjectMetadata;g=apps;v=v1",
    ]
)


def _negotiate(accept: str) -> Any:
    request = Request("GET", "/api/v1/pods", {}, {"Accept": accept})
    try:
        return _partial.wanted(request)
    except StatusError as error:
        return error.code


@given(st.lists(CLAUSES, min_size=1, max_size=5))
def test_the_first_servable_clause_decides(clauses: list[str]) -> None:
    """Property of the Accept negotiation: the answer is that of the first
    clause the emulator can serve -- whole objects for a clause without
    ``as`` (or a Table), the metadata-only form for a JSON partial clause --
    and 406 only when no clause can be served."""
    got = _negotiate(",".join(clauses))
    for clause in clauses:
        one = _negotiate(clause)
        if one != 406 and not clause.startswith("application/vnd.kubernetes.protobuf;"):
            assert got == one
            return
    assert got == 406  # every clause unservable (or a protobuf transformation)
