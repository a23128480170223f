"""The transport (and the lister-watcher, discovery and factory over it) with
``kubernetes`` clients older than 37 (no ``ApiClient.param_serialize``): the
requests are built from the client's own parts instead
(``informers.rest._urllib3.prepare_request``). The installed client may be 37, so
the old clients are stood in for by one whose ``param_serialize`` is hidden;
the requests are checked where they arrive, in the emulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes.client
import kubernetes.config
import pytest

from informers.cache.factory import SharedInformerFactory
from informers.errors import ConflictError
from informers.rest._urllib3 import can_abort, prepare_request
from informers.rest.discovery import discover_resource
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.rest.transport import ApiClientTransport, RequestAborter
from informers.testing import ApiServer
from informers.testing.apiserver import _server
from informers.testing.apiserver._kubeconfig import DUMMY_TOKEN, write_kubeconfig
from informers.wire.resources import CONFIGMAPS, LEASES, PODS
from tests.helpers import POD_SPEC


class OldApiClient(kubernetes.client.ApiClient):  # type: ignore[misc]
    """An ApiClient as kubernetes 31 to 36 have it: no ``param_serialize``."""

    def __getattribute__(self, name: str) -> Any:
        if name == "param_serialize":
            raise AttributeError(name)
        return super().__getattribute__(name)


class ThreeArgAuthApiClient(OldApiClient):
    """And ``update_params_for_auth(headers, querys, auth_settings)`` as
    kubernetes 31 to 35 have it (37 added the request to the signature)."""

    def update_params_for_auth(  # type: ignore[override]
        self, headers: dict[str, str], querys: list[Any], auth_settings: list[str]
    ) -> None:
        for name in auth_settings:
            setting = self.configuration.auth_settings().get(name)
            if setting:
                assert setting["in"] == "header"
                headers[setting["key"]] = setting["value"]


CLIENTS = {
    "old": OldApiClient,
    "old-auth": ThreeArgAuthApiClient,
    "current": kubernetes.client.ApiClient,
}

Seen = list[dict[str, str]]


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """The path and headers of every GET the emulator receives."""
    return _record(monkeypatch, "GET")


@pytest.fixture
def seen_writes(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """The method, path and headers of every POST and PUT the emulator receives."""
    requests = _record(monkeypatch, "POST")
    return _record(monkeypatch, "PUT", requests)


def _record(monkeypatch: pytest.MonkeyPatch, method: str, into: Seen | None = None) -> Seen:
    requests: Seen = [] if into is None else into
    attribute = f"do_{method}"
    plain = getattr(_server.Handler, attribute)

    def record(handler: Any) -> None:
        requests.append(
            {
                "method": method,
                "path": handler.path,
                **{k.lower(): v for k, v in handler.headers.items()},
            }
        )
        plain(handler)

    monkeypatch.setattr(_server.Handler, attribute, record)
    return requests


def _configuration(api_server: ApiServer, tmp_path: Path) -> Any:
    """A configuration as the client's own kubeconfig loader fills it (the
    bearer token under whichever ``api_key`` entry this client version uses)."""
    path = write_kubeconfig(tmp_path / "kubeconfig", api_server.url)
    config = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(path), client_configuration=config)
    return config


@pytest.fixture(params=sorted(CLIENTS))
def client(request: pytest.FixtureRequest, api_server: ApiServer, tmp_path: Path) -> Iterator[Any]:
    c = CLIENTS[request.param](_configuration(api_server, tmp_path))
    if request.param != "current":
        assert not hasattr(c, "param_serialize")
    yield c
    c.close()


def _list_and_watch(api_server: ApiServer, lw: HTTPListerWatcher) -> None:
    api_server.create(PODS, {"metadata": {"name": "a"}, "spec": dict(POD_SPEC)})
    listed = lw.list(ListOptions(limit=10))
    assert [p["metadata"]["name"] for p in listed["items"]] == ["a"]
    stream = lw.watch(
        ListOptions(resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=30)
    )
    try:
        api_server.create(PODS, {"metadata": {"name": "b"}, "spec": dict(POD_SPEC)})
        event = next(iter(stream))
    finally:
        stream.stop()
    assert event["type"] == "ADDED"
    assert event["object"]["metadata"]["name"] == "b"


def _check_requests(seen: Seen, client: Any, count: int) -> None:
    assert len(seen) == count
    for request in seen:
        assert request["authorization"] == f"Bearer {DUMMY_TOKEN}"
        assert request["accept"] == "application/json"
        assert request["user-agent"] == client.user_agent


def test_list_and_watch_carry_the_token(api_server: ApiServer, client: Any, seen: Seen) -> None:
    _list_and_watch(api_server, HTTPListerWatcher(client, PODS, "default"))
    _check_requests(seen, client, 2)
    assert seen[0]["path"].startswith("/api/v1/namespaces/default/pods?limit=10")
    assert "watch=true" in seen[1]["path"]


def test_abortable_list_and_watch_carry_the_token(
    api_server: ApiServer, client: Any, seen: Seen
) -> None:
    assert can_abort(client)  # so the requests below take send_abortable
    aborter = RequestAborter()
    _list_and_watch(api_server, HTTPListerWatcher(client, PODS).abortable(aborter))
    _check_requests(seen, client, 2)
    aborter.abort()
    with pytest.raises(ConnectionAbortedError):
        HTTPListerWatcher(client, PODS).abortable(aborter).list(ListOptions())


def test_default_headers_and_cookie_are_sent(
    api_server: ApiServer, client: Any, seen: Seen
) -> None:
    client.set_default_header("X-Request-Tag", "compat")
    client.cookie = "session=abc"
    HTTPListerWatcher(client, CONFIGMAPS).list(ListOptions())
    HTTPListerWatcher(client, CONFIGMAPS).abortable(RequestAborter()).list(ListOptions())
    _check_requests(seen, client, 2)
    for request in seen:
        assert request["x-request-tag"] == "compat"
        assert request["cookie"] == "session=abc"


def test_token_refresh_hook_and_prefix_apply_per_request(
    api_server: ApiServer, client: Any, seen: Seen
) -> None:
    config = client.configuration
    (key,) = config.api_key  # the entry this client version's loader uses
    config.api_key[key] = "raw"
    config.api_key_prefix[key] = "Bearer"
    calls: list[int] = []

    def refresh(configuration: Any) -> None:
        calls.append(1)
        configuration.api_key[key] = f"token-{len(calls)}"

    config.refresh_api_key_hook = refresh
    lw = HTTPListerWatcher(client, PODS)
    lw.list(ListOptions())
    lw.abortable(RequestAborter()).list(ListOptions())
    assert [r["authorization"] for r in seen] == ["Bearer token-1", "Bearer token-2"]


def test_no_token_no_authorization_header(api_server: ApiServer, seen: Seen) -> None:
    config = api_server.configuration()
    with OldApiClient(config) as client:
        HTTPListerWatcher(client, PODS).list(ListOptions())
        HTTPListerWatcher(client, PODS).abortable(RequestAborter()).list(ListOptions())
    assert len(seen) == 2
    assert all("authorization" not in r for r in seen)


def test_fallback_builds_what_param_serialize_builds(api_server: ApiServer, tmp_path: Path) -> None:
    # On a client that has param_serialize (37+), the fallback must agree with it.
    config = _configuration(api_server, tmp_path)
    path = "/api/v1/namespaces/default/pods?labelSelector=app%20in%20%28a%2Cb%29&watch=true"
    with (
        kubernetes.client.ApiClient(config) as current,
        OldApiClient(config) as old,
        ThreeArgAuthApiClient(config) as older,
    ):
        for c in (current, old, older):
            c.set_default_header("X-Request-Tag", "compat")
            c.cookie = "session=abc"
        for method in ("GET", "PUT"):
            assert prepare_request(old, method, path) == prepare_request(current, method, path)
            assert prepare_request(older, method, path) == prepare_request(current, method, path)
        url, headers = prepare_request(old, "GET", path)
    assert url == api_server.url + path
    assert headers["authorization"] == f"Bearer {DUMMY_TOKEN}"


def test_discovery_and_informer_through_the_fallback(
    api_server: ApiServer, tmp_path: Path, seen: Seen
) -> None:
    api_server.create(CONFIGMAPS, {"metadata": {"name": "c"}})
    with OldApiClient(_configuration(api_server, tmp_path)) as client:
        assert discover_resource(client, "configmaps") == CONFIGMAPS
        factory = SharedInformerFactory(client)
        try:
            factory.configmaps()
            factory.start()
            assert factory.wait_for_cache_sync(timeout=10)
            assert factory.lister(CONFIGMAPS).namespace("default").get("c") is not None
        finally:
            factory.shutdown()
    assert seen
    assert all(r["authorization"] == f"Bearer {DUMMY_TOKEN}" for r in seen)


@pytest.mark.parametrize("abortable", [False, True])
def test_writes_through_the_transport_carry_the_token(
    api_server: ApiServer, client: Any, seen_writes: Seen, abortable: bool
) -> None:
    transport = ApiClientTransport(client)
    aborter = RequestAborter() if abortable else None
    path = LEASES.collection_path("default")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "lock"},
        "spec": {"holderIdentity": "a"},
    }
    created = transport.request("POST", path, body=lease, aborter=aborter).json()
    created["spec"]["holderIdentity"] = "b"
    updated = transport.request("PUT", f"{path}/lock", body=created, aborter=aborter).json()
    assert updated["spec"]["holderIdentity"] == "b"
    with pytest.raises(ConflictError):  # the resourceVersion of `created` is stale now
        transport.request("PUT", f"{path}/lock", body=created, aborter=aborter)
    assert [(r["method"], r["path"]) for r in seen_writes] == [
        ("POST", path),
        ("PUT", f"{path}/lock"),
        ("PUT", f"{path}/lock"),
    ]
    for request in seen_writes:
        assert request["authorization"] == f"Bearer {DUMMY_TOKEN}"
        assert request["content-type"] == "application/json"
        assert request["user-agent"] == client.user_agent
