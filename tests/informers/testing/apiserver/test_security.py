"""TLS, bearer tokens, the authorizer, the loopback check and credential-free
logs, through the real ``kubernetes`` client over HTTPS (a ``trustme`` CA)."""

from __future__ import annotations

import json
import logging
import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
import urllib3
from kubernetes import client, config, watch

from informers.testing.apiserver import (
    Access,
    ApiServer,
    SecurityConfigError,
    TLSConfig,
    generate_self_signed,
)
from informers.testing.apiserver._kubeconfig import DUMMY_TOKEN
from informers.testing.apiserver._security import (
    Security,
    is_loopback_address,
    request_access,
    warn_if_exposed,
)

TOKEN = "s3cr3t-t0ken-value-0123456789"
VIEWER_TOKEN = "viewer-token-abcdef"
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def read_only_viewer(access: Access) -> bool:
    """``viewer`` may only read, and never Secrets."""
    if access.user != "viewer":
        return True
    return access.verb in ("get", "list", "watch") and access.resource != "secrets"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def tls(ca: trustme.CA, tmp_path: Path) -> TLSConfig:
    cert = ca.issue_cert("127.0.0.1", "localhost")
    server_pem, ca_pem = tmp_path / "server.pem", tmp_path / "ca.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(server_pem))
    ca.cert_pem.write_to_path(str(ca_pem))
    return TLSConfig(server_pem, server_pem, ca_pem)


@pytest.fixture
def secure(tls: TLSConfig) -> Iterator[ApiServer]:
    tokens = {TOKEN: "alice", VIEWER_TOKEN: "viewer"}
    with ApiServer(tls=tls, tokens=tokens, authorizer=read_only_viewer) as server:
        yield server


@pytest.fixture
def http(ca: trustme.CA) -> Iterator[urllib3.PoolManager]:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    pool = urllib3.PoolManager(ssl_context=context, retries=False)
    yield pool
    pool.clear()


def _get(http: urllib3.PoolManager, url: str, token: str | None = None, **headers: str) -> Any:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return http.request("GET", url, headers=headers)


# ----------------------------------------------------------------- TLS


def test_https_with_a_client_that_verifies_the_ca(secure: ApiServer) -> None:
    assert secure.url.startswith("https://127.0.0.1:")
    with secure.api_client() as api:
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
    assert "default" in names


def test_a_client_without_the_ca_is_refused(secure: ApiServer) -> None:
    configuration = secure.configuration()
    configuration.ssl_ca_cert = None  # the system's CAs do not know ours
    configuration.retries = False
    # (newer clients wrap the SSLError in an ApiException of status 0)
    refused = (client.ApiException, urllib3.exceptions.HTTPError)
    with (
        client.ApiClient(configuration) as api,
        pytest.raises(refused, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        client.CoreV1Api(api).list_namespace()


def test_plain_http_to_the_https_port_gets_no_answer(secure: ApiServer) -> None:
    pool = urllib3.PoolManager(retries=False)
    try:
        with pytest.raises(urllib3.exceptions.HTTPError):
            pool.request("GET", f"http://127.0.0.1:{secure.port}/version")
    finally:
        pool.clear()
    with secure.api_client() as api:  # the server is unharmed
        assert client.VersionApi(api).get_code().major == "1"


def test_watch_over_tls_and_the_server_notices_the_client_leave(secure: ApiServer) -> None:
    with secure.api_client() as api:
        core = client.CoreV1Api(api)
        rv = core.list_namespaced_config_map("default").metadata.resource_version
        stream = watch.Watch()
        events = stream.stream(
            core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=30
        )
        secure.create("configmaps", {"metadata": {"name": "a"}}, "default")
        first = next(events)
        assert (first["type"], first["object"].metadata.name) == ("ADDED", "a")
        assert secure.watch_count() == 1
        stream.stop()
        events.close()
    # The connection was closed under TLS: the server's next heartbeat sees it.
    assert secure.wait_for_watch_count(0, timeout=10)


def test_the_kubeconfig_carries_the_ca_and_the_token(secure: ApiServer, tmp_path: Path) -> None:
    path = secure.write_kubeconfig(tmp_path / "kubeconfig")
    assert path.stat().st_mode & 0o777 == 0o600
    with config.new_client_from_config(config_file=str(path)) as api:
        assert client.CoreV1Api(api).read_namespace("default").metadata.name == "default"
    assert TOKEN in path.read_text()
    assert "certificate-authority-data" in path.read_text()


def test_a_bare_ssl_context_serves_https_too(ca: trustme.CA, tmp_path: Path) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    with ApiServer(tls=context) as server:
        assert server.ca_pem is None
        configuration = server.configuration()
        configuration.ssl_ca_cert = str(ca_file)
        with client.ApiClient(configuration) as api:
            assert client.VersionApi(api).get_code().major == "1"


def test_generate_self_signed_makes_a_pair_clients_trust(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not on PATH")
    tls = generate_self_signed(tmp_path / "tls")
    assert sorted(p.name for p in (tmp_path / "tls").iterdir()) == [
        "ca.crt",
        "server.crt",
        "server.key",
    ]
    assert (tmp_path / "tls" / "server.key").stat().st_mode & 0o777 == 0o600
    with ApiServer(tls=tls) as server, server.api_client() as api:
        assert client.VersionApi(api).get_code().minor == "32"


def test_tls_setup_errors_are_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing.pem"
    with pytest.raises(SecurityConfigError, match="not found"):
        ApiServer(tls=TLSConfig(missing, missing))
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(SecurityConfigError, match="cannot load"):
        ApiServer(tls=TLSConfig(garbage, garbage))
    with pytest.raises(SecurityConfigError, match=r"TLSConfig or an ssl\.SSLContext"):
        ApiServer(tls="cert.pem")  # type: ignore[arg-type]
    monkeypatch.setenv("PATH", str(tmp_path))  # no openssl there
    with pytest.raises(SecurityConfigError, match="openssl command is needed"):
        generate_self_signed(tmp_path / "tls")
    with pytest.raises(SecurityConfigError, match="could not run"):
        generate_self_signed(tmp_path / "tls", openssl=str(tmp_path / "no-such-openssl"))


def test_ca_pem_of_a_combined_file_holds_no_key(tls: TLSConfig) -> None:
    combined = TLSConfig(tls.cert_file, tls.key_file)  # no ca_file: the cert file itself
    pem = combined.ca_pem()
    assert b"PRIVATE KEY" not in pem
    assert pem.count(b"-----BEGIN CERTIFICATE-----") >= 1


# ------------------------------------------------------ authentication


def test_no_or_an_unknown_token_is_401_everywhere(
    secure: ApiServer, http: urllib3.PoolManager
) -> None:
    for path in ("/version", "/api", "/apis", "/healthz", "/api/v1/namespaces", "/api/v1/nope"):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic YTpi"}):
            response = http.request("GET", secure.url + path, headers=headers)
            assert response.status == 401, (path, headers)
            assert json.loads(response.data) == UNAUTHORIZED
    assert _get(http, secure.url + "/version", TOKEN).status == 200
    # The scheme is case-insensitive, as in the real server.
    assert _get(http, secure.url + "/healthz", Authorization=f"bearer {TOKEN}").status == 200


def test_the_python_client_with_a_wrong_token_gets_401(secure: ApiServer) -> None:
    with secure.api_client(token="wrong") as api, pytest.raises(client.ApiException) as err:
        client.CoreV1Api(api).list_namespace()
    assert err.value.status == 401
    assert json.loads(err.value.body) == UNAUTHORIZED


def test_authentication_comes_before_injected_faults(
    secure: ApiServer, http: urllib3.PoolManager
) -> None:
    secure.fail_next(1, 500)
    assert _get(http, secure.url + "/api/v1/namespaces").status == 401
    assert _get(http, secure.url + "/api/v1/namespaces", TOKEN).status == 500  # the fault


def test_without_tokens_nothing_is_checked(server: ApiServer, core: client.CoreV1Api) -> None:
    assert server.url.startswith("http://")
    assert core.list_namespace().items
    assert server.configuration().api_key == {}


def test_bad_token_settings_are_clear() -> None:
    with pytest.raises(SecurityConfigError, match="at least one"):
        ApiServer(tokens={})
    with pytest.raises(SecurityConfigError, match="without spaces"):
        ApiServer(tokens={"two words": "x"})
    with pytest.raises(SecurityConfigError, match="surrounding whitespace"):
        ApiServer(tokens={" t": "x"})
    with pytest.raises(SecurityConfigError, match="user name"):
        ApiServer(tokens={"t": ""})
    with pytest.raises(SecurityConfigError, match="needs tokens"):
        ApiServer(authorizer=read_only_viewer)


def test_security_never_shows_its_tokens() -> None:
    security = Security({TOKEN: "alice"})
    assert TOKEN not in repr(security)
    assert security.authenticate(f"Bearer {TOKEN}") == "alice"
    assert security.authenticate(f"Bearer {TOKEN}x") is None
    assert security.authenticate("Bearer") is None
    assert security.authenticate(TOKEN) is None


# ------------------------------------------------------- authorization


def _forbidden(error: client.ApiException) -> dict[str, Any]:
    assert error.status == 403
    body: dict[str, Any] = json.loads(error.body)
    assert (body["reason"], body["code"], body["status"]) == ("Forbidden", 403, "Failure")
    return body


def test_a_read_only_user_reads_and_is_forbidden_to_write(secure: ApiServer) -> None:
    secure.create("configmaps", {"metadata": {"name": "c"}}, "default")
    with secure.api_client(token=VIEWER_TOKEN) as api:
        core = client.CoreV1Api(api)
        assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["c"]
        with pytest.raises(client.ApiException) as err:
            core.create_namespaced_config_map("default", {"metadata": {"name": "d"}})
        body = _forbidden(err.value)
        assert body["message"] == (
            'configmaps is forbidden: User "viewer" cannot create resource "configmaps" '
            'in API group "" in the namespace "default"'
        )
        assert body["details"] == {"kind": "configmaps"}
        with pytest.raises(client.ApiException) as err:
            core.delete_namespaced_config_map("c", "default")
        assert _forbidden(err.value)["message"] == (
            'configmaps "c" is forbidden: User "viewer" cannot delete resource "configmaps" '
            'in API group "" in the namespace "default"'
        )
        with pytest.raises(client.ApiException) as err:
            core.list_secret_for_all_namespaces()
        assert _forbidden(err.value)["message"] == (
            'secrets is forbidden: User "viewer" cannot list resource "secrets" '
            'in API group "" at the cluster scope'
        )
        with pytest.raises(client.ApiException) as err:
            client.AppsV1Api(api).patch_namespaced_deployment_scale(
                "web", "default", {"spec": {"replicas": 2}}
            )
        body = _forbidden(err.value)
        assert body["message"] == (
            'deployments.apps "web" is forbidden: User "viewer" cannot patch resource '
            '"deployments/scale" in API group "apps" in the namespace "default"'
        )
        assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    assert [c["metadata"]["name"] for c in secure.list_objects("configmaps")] == ["c"]


def test_every_access_reaches_the_authorizer(tls: TLSConfig) -> None:
    seen: list[Access] = []

    def record(access: Access) -> bool:
        seen.append(access)
        return True

    server = ApiServer(tls=tls, tokens={TOKEN: "alice"}, authorizer=record)
    with server, server.api_client() as api:
        core = client.CoreV1Api(api)
        client.VersionApi(api).get_code()  # non-resource: not asked
        core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
        core.read_namespace("default")
    assert seen == [
        Access("alice", "create", "", "configmaps", namespace="default"),
        Access("alice", "get", "", "namespaces", namespace="default", name="default"),
    ]


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/version", {}, None),
        ("GET", "/apis/apps", {}, None),
        ("GET", "/apis/apps/v1", {}, None),
        ("GET", "/api/v1/pods", {}, ("list", "", "pods", "", "", "")),
        ("GET", "/api/v1/namespaces/ns/pods/p", {}, ("get", "", "pods", "", "ns", "p")),
        (
            "GET",
            "/api/v1/namespaces/ns/pods",
            {"watch": ["true"]},
            ("watch", "", "pods", "", "ns", ""),
        ),
        ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "", "pods", "", "ns", "")),
        (
            "GET",
            "/api/v1/pods",
            {"fieldSelector": ["metadata.name=p"]},
            ("list", "", "pods", "", "", "p"),
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/ns/deployments",
            {},
            ("create", "apps", "deployments", "", "ns", ""),
        ),
        (
            "PUT",
            "/api/v1/namespaces/ns/pods/p/status",
            {},
            ("update", "", "pods", "status", "ns", "p"),
        ),
        ("PATCH", "/api/v1/nodes/n", {}, ("patch", "", "nodes", "", "", "n")),
        (
            "DELETE",
            "/api/v1/namespaces/ns/configmaps",
            {},
            ("deletecollection", "", "configmaps", "", "ns", ""),
        ),
        ("DELETE", "/api/v1/namespaces/ns", {}, ("delete", "", "namespaces", "", "ns", "ns")),
        (
            "PUT",
            "/api/v1/namespaces/ns/finalize",
            {},
            ("update", "", "namespaces", "finalize", "ns", "ns"),
        ),
        ("GET", "/api/v1/namespaces", {}, ("list", "", "namespaces", "", "", "")),
        ("GET", "/apis/example.com/v1/widgets", {}, ("list", "example.com", "widgets", "", "", "")),
    ],
)
def test_request_access_parses_the_url_as_the_real_server(
    method: str, path: str, query: dict[str, list[str]], expected: tuple[str, ...] | None
) -> None:
    access = request_access("u", method, path, query)
    if expected is None:
        assert access is None
    else:
        assert access == Access("u", *expected)


# ------------------------------------------------------------ loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("0.0.0.0", False),
        ("", False),
        ("::", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("203.0.113.7", False),
        ("::ffff:10.0.0.1", False),
        ("example.com", False),
    ],
)
def test_is_loopback_address(host: str, loopback: bool) -> None:
    assert is_loopback_address(host) is loopback


def test_one_warning_for_a_non_loopback_address(caplog: pytest.LogCaptureFixture) -> None:
    # The address is only checked here, never bound (tests bind loopback only).
    with caplog.at_level(logging.WARNING, logger="informers.testing.apiserver"):
        assert warn_if_exposed("127.0.0.1", authenticated=False)
        assert not caplog.records
        assert not warn_if_exposed("0.0.0.0", authenticated=False)
        assert not warn_if_exposed("198.51.100.4", authenticated=True)
    first, second = caplog.records
    assert first.levelno == second.levelno == logging.WARNING
    assert "0.0.0.0" in first.getMessage()
    assert "no authentication" in first.getMessage()
    assert "no authentication" not in second.getMessage()


def test_binding_another_loopback_address_logs_no_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG), ApiServer(host="127.0.0.2") as server:
        assert server.url.startswith("http://127.0.0.2:")
        with server.api_client() as api:
            assert client.VersionApi(api).get_code().major == "1"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# ------------------------------------------------------------- logging


def test_credentials_never_reach_the_logs(
    tls: TLSConfig, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    key_pem = Path(tls.key_file).read_text()
    key_lines = [
        line
        for line in key_pem.split("-----BEGIN")[1].splitlines()[1:]
        if line and not line.startswith("-----")
    ]
    assert key_lines  # the key body we look for
    tokens = {TOKEN: "alice", VIEWER_TOKEN: "viewer"}
    with caplog.at_level(logging.DEBUG):
        server = ApiServer(tls=tls, tokens=tokens, authorizer=read_only_viewer)
        with server:
            with server.api_client() as api:
                core = client.CoreV1Api(api)
                core.create_namespaced_secret("default", {"metadata": {"name": "s"}})
                rv = core.list_namespaced_secret("default").metadata.resource_version
                stream = watch.Watch()
                events = stream.stream(
                    core.list_namespaced_secret, "default", resource_version=rv, timeout_seconds=30
                )
                server.create("secrets", {"metadata": {"name": "t"}}, "default")
                assert next(events)["object"].metadata.name == "t"
                stream.stop()
                events.close()
            for token in ("wrong-token", VIEWER_TOKEN):
                with server.api_client(token=token) as api, pytest.raises(client.ApiException):
                    client.CoreV1Api(api).list_namespaced_secret("default")
            server.write_kubeconfig(tmp_path / "kubeconfig")
    text = "\n".join(
        f"{r.name} {r.getMessage()} {r.exc_text or ''} {r.stack_info or ''}" for r in caplog.records
    )
    assert "API server emulator listening on https://" in text  # we did capture the emulator
    assert "unauthenticated request GET /api/v1/namespaces/default/secrets" in text
    for secret in (TOKEN, VIEWER_TOKEN, "wrong-token", "Bearer", *key_lines):
        assert secret not in text
    assert "PRIVATE KEY" not in text
    assert DUMMY_TOKEN not in text
