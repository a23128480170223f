"""LeaseLock against the emulator over real HTTP with the real kubernetes
client: raw JSON bodies, MicroTime on the wire, optimistic concurrency, and
errors mapped to ApiError / LeaseLockError."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import kubernetes.client
import pytest

from informers.errors import ApiError
from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    InvalidLeaseRecordError,
    LeaderElectionRecord,
    LeaseLock,
    LeaseLockError,
    ResourceLock,
)

T0 = datetime(2024, 5, 1, 12, 0, 0, 123, tzinfo=UTC)
RECORD = LeaderElectionRecord("a", 15, T0, T0, 0)


@pytest.fixture
def api(api_server: ApiServer) -> Iterator[Any]:
    client = api_server.api_client()
    yield client
    client.close()


@pytest.fixture
def lock(api: Any) -> LeaseLock:
    return LeaseLock(api, "default", "election", read_timeout=5.0)


def test_is_a_resource_lock(lock: LeaseLock) -> None:
    assert isinstance(lock, ResourceLock)
    assert lock.describe() == "default/election"


def test_get_of_a_missing_lease_is_none(lock: LeaseLock) -> None:
    assert lock.get() is None


def test_create_writes_micro_time_and_the_record(lock: LeaseLock, api_server: ApiServer) -> None:
    state = lock.create(RECORD)
    assert state.record == RECORD
    assert state.resource_version
    stored = api_server.get("leases", "election", "default")
    assert stored["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-05-01T12:00:00.000123Z",
        "renewTime": "2024-05-01T12:00:00.000123Z",
        "leaseTransitions": 0,
    }
    got = lock.get()
    assert got is not None
    assert got.record == RECORD
    assert got.resource_version == stored["metadata"]["resourceVersion"]


def test_create_of_an_existing_lease_is_a_409(lock: LeaseLock) -> None:
    lock.create(RECORD)
    with pytest.raises(ApiError) as err:
        lock.create(LeaderElectionRecord("b", 15, T0, T0, 0))
    assert err.value.status == 409
    got = lock.get()
    assert got is not None
    assert got.record.holder_identity == "a"


def test_update_with_a_stale_resource_version_is_a_409(lock: LeaseLock) -> None:
    created = lock.create(RECORD)
    renewed = LeaderElectionRecord("a", 15, T0, T0.replace(second=5), 0)
    updated = lock.update(renewed, created.resource_version)
    assert updated.record == renewed
    assert int(updated.resource_version) > int(created.resource_version)
    with pytest.raises(ApiError) as err:
        lock.update(LeaderElectionRecord("b", 15, T0, T0, 1), created.resource_version)
    assert err.value.status == 409
    assert err.value.reason == "Conflict"
    got = lock.get()
    assert got is not None
    assert got.record == renewed  # never overwritten


def test_update_is_never_unconditional(lock: LeaseLock) -> None:
    lock.create(RECORD)
    with pytest.raises(ValueError, match="resourceVersion"):
        lock.update(RECORD, "")


def test_update_keeps_metadata_and_foreign_spec_fields(
    lock: LeaseLock, api_server: ApiServer
) -> None:
    api_server.create(
        "leases",
        {
            "metadata": {"name": "election", "labels": {"app": "x"}, "annotations": {"n": "1"}},
            "spec": {
                "holderIdentity": "a",
                "preferredHolder": "b",
                "strategy": "OldestEmulationVersion",
            },
        },
        "default",
    )
    state = lock.get()
    assert state is not None
    lock.update(LeaderElectionRecord("c", 15, T0, T0, 1), state.resource_version)
    stored = api_server.get("leases", "election", "default")
    assert stored["metadata"]["labels"] == {"app": "x"}
    assert stored["metadata"]["annotations"] == {"n": "1"}
    assert stored["spec"]["preferredHolder"] == "b"
    assert stored["spec"]["holderIdentity"] == "c"
    assert stored["spec"]["leaseTransitions"] == 1


def test_an_update_of_a_deleted_lease_is_a_404(lock: LeaseLock, api_server: ApiServer) -> None:
    created = lock.create(RECORD)
    api_server.delete("leases", "election", "default")
    with pytest.raises(ApiError) as err:
        lock.update(RECORD, created.resource_version)
    assert err.value.status == 404


def test_server_errors_are_api_errors(lock: LeaseLock, api_server: ApiServer) -> None:
    api_server.fail_next(1, 500)
    with pytest.raises(ApiError) as err:
        lock.get()
    assert err.value.status == 500
    assert "injected" in err.value.message
    api_server.fail_next(1, 500)
    with pytest.raises(ApiError) as err:
        lock.create(RECORD)
    assert err.value.status == 500
    assert lock.get() is None  # the failed create wrote nothing


def test_an_invalid_spec_is_an_invalid_record(lock: LeaseLock, api_server: ApiServer) -> None:
    # A record no real server would store (it refuses the time with 400):
    # written with validation off, as a corrupt or foreign store could hold it.
    api_server.validation = False
    api_server.create(
        "leases", {"metadata": {"name": "election"}, "spec": {"renewTime": "soon"}}, "default"
    )
    with pytest.raises(InvalidLeaseRecordError, match=r"default/election.*renewTime"):
        lock.get()


def test_a_refused_connection_is_a_lease_lock_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = kubernetes.client.Configuration()
    config.host = f"http://127.0.0.1:{port}"
    config.retries = False
    with kubernetes.client.ApiClient(config) as api:
        lock = LeaseLock(api, "default", "election")
        with pytest.raises(LeaseLockError, match="read of lease default/election failed"):
            lock.get()


def test_a_slow_answer_times_out(api_server: ApiServer) -> None:
    config = api_server.configuration()
    config.retries = False
    with kubernetes.client.ApiClient(config) as api:
        lock = LeaseLock(api, "default", "election", read_timeout=5.0)
        api_server.delay_next(1, 1.0)
        with pytest.raises(LeaseLockError, match=r"timed out|timeout"):
            lock.get(timeout=0.2)


@pytest.mark.parametrize(
    ("namespace", "name", "timeout"), [("", "x", 1.0), ("default", "", 1.0), ("default", "x", 0)]
)
def test_bad_arguments(api: Any, namespace: str, name: str, timeout: float) -> None:
    with pytest.raises(ValueError, match=r"namespace|read_timeout"):
        LeaseLock(api, namespace, name, read_timeout=timeout)
