"""The manager's probes and metrics endpoints, against the emulator."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from manager_helpers import get, poll_until
from prometheus_client import CollectorRegistry, Counter

from informers import Manager
from informers.cache.reflector import ReflectorConfig
from informers.testing.apiserver import ApiServer
from informers.toolkit.manager import SERVED_METRIC_NAMES, HealthChecks
from informers.toolkit.runtime import InformerSource, Request

LOOPBACK = "127.0.0.1:0"


def _configmap(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}


def test_readyz_answers_503_until_the_caches_sync_then_200(api_server: ApiServer) -> None:
    api_server.create("configmaps", _configmap("a"))
    # Every list fails until the faults are cleared: the cache cannot sync.
    api_server.fail_next(10_000, 500, path_prefix="/api/v1/configmaps")
    manager = Manager(
        api_server.api_client(), health_probe_bind_address=LOOPBACK, cache_sync_timeout=60
    )
    manager.factory.configmaps()
    errors: list[BaseException] = []

    def start() -> None:
        try:
            manager.start()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    starter = threading.Thread(target=start, name="test-manager-start")
    starter.start()
    try:
        # The probe server is up before the sync; its port is known once bound.
        assert poll_until(lambda: manager.health_probe_address()[1] != 0)  # type: ignore[index]
        address = manager.health_probe_address()
        status, body = get(address, "/readyz")
        assert status == 503
        assert "[-]informers-synced failed: caches not synced: configmaps" in body
        assert body.endswith("readyz check failed\n")
        assert get(address, "/readyz/informers-synced")[0] == 503
        assert get(address, "/readyz/ping") == (200, "ok")
        assert get(address, "/healthz") == (200, "ok")  # not synced is not dead
        api_server.clear_faults()
        starter.join(60)
        assert not starter.is_alive()
        assert not errors
        assert get(address, "/readyz") == (200, "ok")
        status, body = get(address, "/readyz?verbose")
        assert status == 200
        assert body == "[+]ping ok\n[+]informers-synced ok\nreadyz check passed\n"
        assert get(address, "/readyz/nope")[0] == 404
        assert get(address, "/other")[0] == 404
    finally:
        api_server.clear_faults()
        starter.join(60)
        manager.stop()


def test_user_checks_and_exclude(api_server: ApiServer) -> None:
    manager = Manager(api_server.api_client(), health_probe_bind_address=LOOPBACK)
    broken = threading.Event()

    def database() -> None:
        if broken.is_set():
            raise ConnectionError("database unreachable")

    manager.add_healthz_check("database", database)
    manager.add_readyz_check("warm", lambda: not broken.is_set())
    with pytest.raises(ValueError, match="already exists"):
        manager.add_healthz_check("database", database)
    with pytest.raises(ValueError, match="check name"):
        manager.add_readyz_check("a/b", database)
    manager.start()
    try:
        address = manager.health_probe_address()
        assert get(address, "/healthz/database") == (200, "ok")
        broken.set()
        status, body = get(address, "/healthz?verbose")
        assert status == 500
        assert "[+]ping ok\n[+]informers ok\n[-]database failed: database unreachable\n" in body
        assert body.endswith("healthz check failed\n")
        assert get(address, "/healthz/database") == (
            500,
            "internal server error: database unreachable\n",
        )
        assert get(address, "/readyz")[0] == 503
        status, body = get(address, "/healthz?exclude=database&verbose")
        assert status == 200
        assert "[+]database excluded: ok" in body
    finally:
        manager.stop()


def test_a_silenced_watch_turns_liveness_red_within_the_watchdog_bound(
    api_server: ApiServer,
) -> None:
    bound = 2.0
    api_server.bookmark_interval = 1.0
    api_server.create("configmaps", _configmap("a"))
    manager = Manager(
        api_server.api_client(),
        health_probe_bind_address=LOOPBACK,
        reflector_config=ReflectorConfig(watch_progress_timeout=bound),
    )
    manager.factory.configmaps()
    manager.start()
    try:
        address = manager.health_probe_address()
        assert api_server.wait_for_watch_count(1)
        # A bookmark arrived on the open watch: progress was seen moving.
        reflector = manager.factory.configmaps().reflector
        assert reflector is not None
        assert poll_until(lambda: reflector.events_read() > 0)
        assert get(address, "/healthz/informers") == (200, "ok")
        silenced_at = time.monotonic()
        assert api_server.silence_watches() == 1
        assert poll_until(lambda: get(address, "/healthz")[0] == 500)
        red_after = time.monotonic() - silenced_at
        # Red once nothing arrived for the bound (the last bookmark came at
        # most one bookmark interval before the silence).
        assert red_after <= bound + 3.0  # (+ scheduling slack on a loaded machine)
        status, body = get(address, "/healthz?verbose")
        if status == 500:  # (the watchdog's re-watch may already have healed it)
            assert "[-]informers failed: configmaps: the watch delivered nothing" in body
            assert f"past the watchdog bound of {bound:g} s" in body
        # The watchdog re-watches; the new watch's bookmarks turn it green again.
        assert poll_until(lambda: get(address, "/healthz") == (200, "ok"))
    finally:
        manager.stop()


def test_metrics_endpoint_serves_the_toolkit_names_and_user_collectors(
    api_server: ApiServer,
) -> None:
    registry = CollectorRegistry()
    mine = Counter("my_controller_things_total", "Things.", registry=registry)
    mine.inc(3)
    api_server.create("configmaps", _configmap("a"))
    manager = Manager(
        api_server.api_client(),
        metrics_bind_address=LOOPBACK,
        metrics_registry=registry,
    )
    done = threading.Event()

    def reconcile(request: Request) -> None:
        done.set()

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
    manager.start()
    try:
        assert done.wait(20)
        status, body = get(manager.metrics_address(), "/metrics")
        assert status == 200
        for name in SERVED_METRIC_NAMES:
            assert f"# TYPE {name} " in body, name
        assert 'controller_runtime_reconcile_total{controller="cm",result="success"}' in body
        assert 'workqueue_adds_total{name="cm"}' in body
        assert "my_controller_things_total 3.0" in body
        assert get(manager.metrics_address(), "/other")[0] == 404
    finally:
        manager.stop()


def test_health_checks_answer_like_kube_apiserver() -> None:
    checks = HealthChecks("healthz", 500)
    checks.add("a", lambda: None)
    checks.add("b", lambda: False)
    status, _, body = checks.answer("/healthz", {})
    assert status == 500
    assert body == b"[+]a ok\n[-]b failed: check failed\nhealthz check failed\n"
    assert checks.answer("/healthz/a", {})[0] == 200
    assert checks.answer("/healthz", {"exclude": ["b"]})[:2] == (200, "text/plain; charset=utf-8")
