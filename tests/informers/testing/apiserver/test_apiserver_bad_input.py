"""Bad input: clear Status errors, a server that never dies, no data lost."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import urllib3
from kubernetes import client

from informers.testing import ApiServer, ApiServerError
from tests.helpers import configmap


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def _post(
    http: urllib3.PoolManager, url: str, body: bytes, **headers: str
) -> urllib3.BaseHTTPResponse:
    headers.setdefault("Content-Type", "application/json")
    return http.request("POST", url, body=body, headers=headers)


def _survives(server: ApiServer, ns: str) -> None:
    """The server still answers and still holds the object created first."""
    assert server.get("configmaps", "keep", ns)["metadata"]["name"] == "keep"


@pytest.fixture
def kept(server: ApiServer, ns: str) -> str:
    server.create("configmaps", configmap("keep", k="v"), ns)
    return ns


def test_malformed_json_body_is_400(
    server: ApiServer, http: urllib3.PoolManager, kept: str
) -> None:
    response = _post(http, f"{server.url}/api/v1/namespaces/{kept}/configmaps", b"{not json")
    assert response.status == 400
    status = json.loads(response.data)
    assert status["kind"] == "Status"
    assert status["reason"] == "BadRequest"
    _survives(server, kept)


def test_body_that_is_not_an_object_is_400(
    server: ApiServer, http: urllib3.PoolManager, kept: str
) -> None:
    response = _post(http, f"{server.url}/api/v1/namespaces/{kept}/configmaps", b"[1, 2]")
    assert response.status == 400
    _survives(server, kept)


def test_unknown_resource_is_404(server: ApiServer, http: urllib3.PoolManager, kept: str) -> None:
    for path in ("/api/v1/widgets", "/apis/nope.example.com/v1/things", "/nothing/here"):
        response = http.request("GET", server.url + path)
        assert response.status == 404, path
        assert json.loads(response.data) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "the server could not find the requested resource",
            "reason": "NotFound",
            "details": {},
            "code": 404,
        }
    _survives(server, kept)


def test_oversized_body_is_413(server: ApiServer, http: urllib3.PoolManager, kept: str) -> None:
    big = b'{"metadata": {"name": "big"}, "data": {"k": "' + b"x" * (4 * 1024 * 1024) + b'"}}'
    try:
        response = _post(http, f"{server.url}/api/v1/namespaces/{kept}/configmaps", big)
    except urllib3.exceptions.ProtocolError:
        pytest.skip("the client could not send the whole body before the server answered")
    assert response.status == 413
    assert json.loads(response.data)["reason"] == "RequestEntityTooLarge"
    _survives(server, kept)
    with pytest.raises(ApiServerError) as err:
        server.get("configmaps", "big", kept)
    assert err.value.code == 404


@pytest.mark.parametrize("name", ["Upper", "under_score", "-dash", "a" * 254, "dot."])
def test_invalid_name_is_422(core: client.CoreV1Api, kept: str, name: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map(kept, configmap(name))
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "metadata.name"


def test_namespace_name_must_be_a_dns_label(core: client.CoreV1Api) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespace({"metadata": {"name": "has.dot"}})
    assert err.value.status == 422


def test_missing_name_is_422(core: client.CoreV1Api, kept: str) -> None:
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map(kept, {"metadata": {}})
    assert err.value.status == 422


def test_namespace_mismatch_is_400(core: client.CoreV1Api, kept: str) -> None:
    body = {"metadata": {"name": "x", "namespace": "default"}}
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map(kept, body)
    assert err.value.status == 400


def test_protobuf_body_without_decoder_is_415(
    server: ApiServer, http: urllib3.PoolManager, kept: str
) -> None:
    response = _post(
        http,
        f"{server.url}/api/v1/namespaces/{kept}/configmaps",
        b"k8s\x00\x0a\x00",
        **{"Content-Type": "application/vnd.kubernetes.protobuf"},
    )
    assert response.status in (201, 415)
    if response.status == 415:
        assert json.loads(response.data)["reason"] == "UnsupportedMediaType"
    _survives(server, kept)


def test_unknown_content_type_is_415(
    server: ApiServer, http: urllib3.PoolManager, kept: str
) -> None:
    response = _post(
        http,
        f"{server.url}/api/v1/namespaces/{kept}/configmaps",
        b"name: x",
        **{"Content-Type": "text/csv"},
    )
    assert response.status == 415


def test_bad_patch_is_answered_with_status(
    server: ApiServer, http: urllib3.PoolManager, kept: str
) -> None:
    url = f"{server.url}/api/v1/namespaces/{kept}/configmaps/keep"
    for content_type, body in [
        ("application/merge-patch+json", b"{broken"),
        ("application/json-patch+json", b'[{"op": "remove", "path": "/data/missing"}]'),
        ("application/json-patch+json", b'{"op": "add"}'),
    ]:
        response = http.request("PATCH", url, body=body, headers={"Content-Type": content_type})
        assert 400 <= response.status < 500, (content_type, body)
        assert json.loads(response.data)["kind"] == "Status"
    assert server.get("configmaps", "keep", kept)["data"] == {"k": "v"}


def test_bad_query_values_are_400(server: ApiServer, http: urllib3.PoolManager, kept: str) -> None:
    for query in ("limit=ten", "watch=perhaps", "timeoutSeconds=x"):
        response = http.request("GET", f"{server.url}/api/v1/configmaps?{query}")
        assert response.status == 400, query
    _survives(server, kept)


def test_method_not_allowed_is_405(server: ApiServer, http: urllib3.PoolManager, kept: str) -> None:
    response = http.request("PUT", f"{server.url}/api/v1/namespaces/{kept}/configmaps", body=b"{}")
    assert response.status == 405


def test_garbage_on_the_socket_does_not_kill_the_server(server: ApiServer, kept: str) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"\x00\x01garbage\r\n\r\n")
        sock.recv(1024)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")
        sock.recv(1024)
    _survives(server, kept)
    http = urllib3.PoolManager()
    try:
        assert http.request("GET", f"{server.url}/version").status == 200
    finally:
        http.clear()


def test_discovery_documents(server: ApiServer, http: urllib3.PoolManager) -> None:
    version = json.loads(http.request("GET", f"{server.url}/version").data)
    assert {"major", "minor", "gitVersion"} <= set(version)
    core = json.loads(http.request("GET", f"{server.url}/api").data)
    assert core["versions"] == ["v1"]
    groups = json.loads(http.request("GET", f"{server.url}/apis").data)
    for group in groups["groups"]:
        for version_entry in group["versions"]:
            url = f"{server.url}/apis/{version_entry['groupVersion']}"
            assert http.request("GET", url).status == 200, url
    aggregated = http.request(
        "GET",
        f"{server.url}/api",
        headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    )
    assert aggregated.headers["Content-Type"] == (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )
    assert json.loads(aggregated.data)["kind"] == "APIGroupDiscoveryList"
    plain = http.request("GET", f"{server.url}/api", headers={"Accept": "application/json"})
    assert plain.headers["Content-Type"] == "application/json"
    v1 = json.loads(http.request("GET", f"{server.url}/api/v1").data)
    pods = next(r for r in v1["resources"] if r["name"] == "pods")
    assert pods["kind"] == "Pod"
    assert pods["namespaced"] is True


def test_openapi_v2_is_json_only(server: ApiServer, http: urllib3.PoolManager) -> None:
    # kubectl asks for protobuf only and carries on without v2 on 406.
    protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    refused = http.request("GET", f"{server.url}/openapi/v2", headers={"Accept": protobuf})
    assert refused.status == 406
    assert json.loads(refused.data)["reason"] == "NotAcceptable"
    served = http.request("GET", f"{server.url}/openapi/v2")
    assert served.status == 200
    assert json.loads(served.data)["swagger"] == "2.0"
