"""No credential and no Secret data reaches a log line, an exception message
or a repr: the whole stack runs at DEBUG over HTTPS with a known bearer
token and client-certificate key, against Secrets with known values, with
errors on the way (a refused token, a 500), and the captured output is
searched for them. Also: turning TLS verification off is warned about once."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from prometheus_client import CollectorRegistry, generate_latest

from informers import SharedInformerFactory
from informers.cache.prometheus import PrometheusInformerMetrics
from informers.errors import UnauthorizedError
from informers.rest.transport import ApiClientTransport, warn_if_unverified
from informers.testing.apiserver import ApiServer, TLSConfig
from informers.toolkit.runtime import Controller, InformerSource, Request
from informers.util.logfmt import JsonFormatter
from informers.wire.resources import SECRETS
from tracker import ResourceTracker
from tracker.mirror import MirrorDatabase, mirror_controller

TOKEN = "tok-9f8e7d6c5b4a-do-not-log"
WRONG_TOKEN = "tok-wrong-0a1b2c3d-do-not-log"
SECRET_VALUE = "c2VjcmV0LXZhbHVlLWRvLW5vdC1sb2c="  # base64 of a secret value
SECRET_PLAIN = "plain-secret-value-do-not-log"


@pytest.fixture
def pki(tmp_path: Path) -> tuple[TLSConfig, Path, Path, str]:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    server_pem, ca_pem = tmp_path / "server.pem", tmp_path / "ca.pem"
    server.private_key_and_cert_chain_pem.write_to_path(str(server_pem))
    ca.cert_pem.write_to_path(str(ca_pem))
    client = ca.issue_cert("client@example.com")
    cert_pem, key_pem = tmp_path / "client.crt", tmp_path / "client.key"
    client.cert_chain_pems[0].write_to_path(str(cert_pem))
    client.private_key_pem.write_to_path(str(key_pem))
    key_text = client.private_key_pem.bytes().decode()
    return TLSConfig(server_pem, server_pem, ca_pem), cert_pem, key_pem, key_text


@pytest.fixture
def secure(pki: tuple[TLSConfig, Path, Path, str]) -> Iterator[ApiServer]:
    tls = pki[0]
    with ApiServer(tls=tls, tokens={TOKEN: "alice"}) as server:
        yield server


def _key_lines(key_text: str) -> list[str]:
    return [line for line in key_text.splitlines() if line and "-----" not in line]


def test_nothing_secret_reaches_logs_errors_or_reprs(
    secure: ApiServer,
    pki: tuple[TLSConfig, Path, Path, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    _, cert_pem, key_pem, key_text = pki
    secure.create(
        SECRETS,
        {
            "metadata": {"name": "db", "namespace": "default"},
            "data": {"password": SECRET_VALUE},
            "stringData": {"token": SECRET_PLAIN},
        },
    )
    config = secure.configuration(token=TOKEN)
    config.cert_file, config.key_file = str(cert_pem), str(key_pem)
    from kubernetes.client import ApiClient

    client = ApiClient(config)
    reprs: list[str] = []
    registry = CollectorRegistry()
    with caplog.at_level(logging.DEBUG):
        factory = SharedInformerFactory(client, metrics=PrometheusInformerMetrics(registry))
        db = MirrorDatabase(f"sqlite:///{tmp_path / 'm.db'}")
        seen = threading.Event()
        try:
            secrets = factory.secrets()
            tracker: ResourceTracker[dict[str, Any]] = ResourceTracker(secrets)
            controller = Controller(
                "secret-watcher",
                lambda request: seen.set(),
                [InformerSource(secrets)],
            )
            mirror = mirror_controller(db.store(SECRETS), client, factory)
            factory.start()
            assert factory.wait_for_cache_sync(timeout=30)
            controller.start()
            mirror.start()
            assert seen.wait(30)
            assert mirror.wait_idle(30)
            # errors on the way: a 500 on the watch, a refused token
            secure.fail_next(2, 500)
            secure.drop_watches()
            secure.update(
                SECRETS,
                {
                    **secure.get(SECRETS, "db", "default"),
                    "data": {"password": SECRET_VALUE, "more": SECRET_VALUE},
                },
            )
            bad = ApiClient(secure.configuration(token=WRONG_TOKEN))
            try:
                with pytest.raises(UnauthorizedError) as refused:
                    ApiClientTransport(bad).request("GET", "/api/v1/secrets")
                reprs.append(str(refused.value))
                reprs.append(repr(refused.value))
            finally:
                bad.close()
            assert mirror.wait_idle(30)
            reprs += [
                repr(client),
                repr(ApiClientTransport(client)),
                repr(factory),
                repr(secrets),
                repr(secrets.reflector),
                *(str(e) for e in (secrets.reflector.errors() if secrets.reflector else [])),
                repr(tracker),
                repr(Request("default", "db")),
                generate_latest(registry).decode(),
            ]
            controller.stop()
            mirror.stop()
            tracker.close()
        finally:
            factory.shutdown()
            db.close()
            client.close()
    captured = capfd.readouterr()
    everything = "\n".join(
        [
            caplog.text,
            *(r.getMessage() for r in caplog.records),
            # the structured form too: every extra field of every line
            *(JsonFormatter().format(r) for r in caplog.records),
            captured.out,
            captured.err,
            *reprs,
        ]
    )
    assert len(caplog.records) > 20  # DEBUG really was on
    for needle in (TOKEN, WRONG_TOKEN, SECRET_VALUE, SECRET_PLAIN, *_key_lines(key_text)):
        assert needle not in everything, f"{needle[:12]}... leaked"


def test_turning_verification_off_is_warned_once_per_host(
    secure: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    config = secure.configuration()
    config.verify_ssl = False
    with caplog.at_level(logging.WARNING, logger="informers.rest.transport"):
        assert warn_if_unverified(config)
        assert warn_if_unverified(config)
        from kubernetes.client import ApiClient

        client = ApiClient(config)
        try:
            ApiClientTransport(client)  # what every lister-watcher builds: warns (once)
        finally:
            client.close()
    warnings = [r for r in caplog.records if "verification is turned off" in r.getMessage()]
    assert len(warnings) <= 1  # once per host and process (an earlier test may have warned)
    verified = secure.configuration()
    assert not warn_if_unverified(verified)
    plain = type(verified)()
    plain.host = "http://127.0.0.1:1"
    plain.verify_ssl = False
    assert not warn_if_unverified(plain)  # nothing to verify over plain HTTP


def test_the_first_unverified_use_warns(caplog: pytest.LogCaptureFixture) -> None:
    from kubernetes.client import Configuration

    config = Configuration()
    config.host = "https://unverified.example.invalid:6443"
    config.verify_ssl = False
    with caplog.at_level(logging.WARNING, logger="informers.rest.transport"):
        warn_if_unverified(config)
        warn_if_unverified(config)
    warnings = [r for r in caplog.records if "verification is turned off" in r.getMessage()]
    assert len(warnings) == 1
    assert "unverified.example.invalid" in warnings[0].getMessage()
