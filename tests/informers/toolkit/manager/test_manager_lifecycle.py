"""The manager's lifecycle: the collector policy and its log line, every
thread joined by stop(), a reflector stuck in backoff turning liveness red,
a stop during the initial sync, validation."""

from __future__ import annotations

import gc
import logging
import threading
from typing import Any

import pytest
from manager_helpers import get, poll_until

from informers import Manager
from informers.errors import CacheSyncTimeoutError, InformerStateError
from informers.testing.apiserver import ApiServer
from informers.toolkit.runtime import InformerSource, Request

LOOPBACK = "127.0.0.1:0"


def _configmap(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}}


@pytest.mark.parametrize("policy", [True, False])
def test_the_collector_policy_is_applied_and_logged(
    api_server: ApiServer, caplog: pytest.LogCaptureFixture, policy: bool
) -> None:
    api_server.create("configmaps", _configmap("a"))
    manager = Manager(api_server.api_client(), gc_policy=policy)
    manager.factory.configmaps()
    was_enabled = gc.isenabled()
    frozen_before = gc.get_freeze_count()
    with caplog.at_level(logging.INFO, logger="informers.toolkit.manager"):
        manager.start()
    try:
        assert gc.isenabled() == was_enabled  # the pause ended with the sync
        messages = [r.getMessage() for r in caplog.records if "cache(s) synced" in r.getMessage()]
        assert len(messages) == 1
        if policy:
            assert "garbage collector paused" in messages[0]
            assert "heap frozen" in messages[0]
            assert gc.get_freeze_count() >= frozen_before
        else:
            assert "garbage collector left alone" in messages[0]
    finally:
        manager.stop()
        gc.unfreeze()


def test_stop_joins_every_thread_the_manager_started(api_server: ApiServer) -> None:
    api_server.create("configmaps", _configmap("a"))
    before = set(threading.enumerate())
    manager = Manager(
        api_server.api_client(),
        health_probe_bind_address=LOOPBACK,
        metrics_bind_address=LOOPBACK,
        metrics_registry=__import__("prometheus_client").CollectorRegistry(),
    )
    done = threading.Event()

    def reconcile(request: Request) -> None:
        done.set()

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
    manager.add(lambda stop: stop.wait(), name="loop")
    manager.start()
    assert done.wait(20)
    assert get(manager.health_probe_address(), "/healthz")[0] == 200
    assert get(manager.metrics_address(), "/metrics")[0] == 200
    manager.stop()
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
    # The emulator's own connection threads are the emulator's business.
    assert [n for n in left if not n.startswith("apiserver")] == []


def test_a_reflector_failing_without_progress_turns_liveness_red(api_server: ApiServer) -> None:
    api_server.create("configmaps", _configmap("a"))
    manager = Manager(
        api_server.api_client(),
        health_probe_bind_address=LOOPBACK,
        backoff_bound=1.0,
        cache_sync_timeout=60,
    )
    manager.factory.configmaps()
    manager.start()
    try:
        address = manager.health_probe_address()
        assert get(address, "/healthz") == (200, "ok")
        # Every request of the kind fails from now on; the watch is cut, so
        # the reflector re-watches, fails and backs off, over and over.
        api_server.fail_next(10_000, 500, path_prefix="/api/v1/configmaps")
        api_server.drop_watches()
        assert poll_until(lambda: get(address, "/healthz")[0] == 500)
        status, body = get(address, "/healthz/informers")
        if status == 500:
            assert "configmaps: failing without progress for" in body
            assert "last error:" in body
        api_server.clear_faults()
        # Progress again (a list, or events on a new watch): green.
        api_server.create("configmaps", _configmap("b"))
        assert poll_until(lambda: get(address, "/healthz") == (200, "ok"))
    finally:
        api_server.clear_faults()
        manager.stop()


def test_a_stop_during_the_initial_sync_returns_early(api_server: ApiServer) -> None:
    api_server.fail_next(10_000, 500, path_prefix="/api/v1/configmaps")
    manager = Manager(api_server.api_client(), cache_sync_timeout=None)
    manager.factory.configmaps()
    started = threading.Event()
    manager.add(lambda stop: started.set(), name="never")
    runner = threading.Thread(target=manager.start, name="test-manager-start")
    runner.start()
    try:
        informer = manager.factory.configmaps()
        reflector_seen = poll_until(lambda: informer.reflector is not None)
        assert reflector_seen
        reflector = informer.reflector
        assert reflector is not None
        assert poll_until(lambda: bool(reflector.errors()))
        manager.stop()
        runner.join(20)
        assert not runner.is_alive()
        assert not started.is_set()
    finally:
        api_server.clear_faults()
        manager.stop()
        runner.join(20)


def test_caches_that_do_not_sync_fail_the_start(api_server: ApiServer) -> None:
    api_server.fail_next(10_000, 500, path_prefix="/api/v1/configmaps")
    manager = Manager(api_server.api_client(), cache_sync_timeout=0.5)
    manager.factory.configmaps()
    try:
        with pytest.raises(CacheSyncTimeoutError):
            manager.start()
        with pytest.raises(InformerStateError):
            manager.start()
    finally:
        api_server.clear_faults()
        manager.stop()


def test_validation(api_server: ApiServer) -> None:
    client = api_server.api_client()
    with pytest.raises(ValueError, match="bind address"):
        Manager(client, health_probe_bind_address="localhost")
    with pytest.raises(ValueError, match="graceful_shutdown_timeout"):
        Manager(client, graceful_shutdown_timeout=-1)
    with pytest.raises(ValueError, match="leader_election_id"):
        Manager(client, leader_election=True)
    manager = Manager(client, health_probe_bind_address="0", metrics_bind_address="")
    assert manager.health_probe_address() is None
    assert manager.metrics_address() is None
    assert manager.metrics is None
    manager.stop()  # never started: nothing to do


def test_a_shard_lease_is_held_while_running_and_released_last(api_server: ApiServer) -> None:
    from informers.toolkit.sharding import ShardLease

    client = api_server.api_client()
    lease = ShardLease(
        client,
        "default",
        "ring",
        "shard-0",
        lease_duration=1.5,
        renew_deadline=1.0,
        retry_period=0.2,
    )
    ready_when_started: list[bool] = []

    class Probe:
        name = "probe"

        def start(self) -> None:
            ready_when_started.append(lease.is_ready())

        def stop(self, timeout: float | None = None) -> None:
            ready_when_started.append(lease.is_ready())

    manager = Manager(client, shard_lease=lease)
    manager.add(Probe())
    manager.start()
    manager.stop()
    assert ready_when_started == [True, True]  # held from before start to after stop
    stored = api_server.get("leases.coordination.k8s.io", "shard-0", "default")
    assert stored["spec"].get("holderIdentity", "") == ""  # released


def test_without_a_client_the_manager_makes_one_from_the_kubeconfig_and_closes_it(
    api_server: ApiServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig = api_server.write_kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    api_server.create("configmaps", _configmap("a"))
    manager = Manager(kubeconfig=str(kubeconfig))
    manager.factory.configmaps()
    manager.start()
    try:
        assert manager.factory.configmaps().has_synced()
    finally:
        manager.stop()
