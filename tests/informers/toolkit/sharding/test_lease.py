"""Shard Leases: the state classification (properties) and leases with a
ring watcher against the emulator."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sharding_helpers import RingRecorder

from informers.cache.informer import ResourceEventHandlerFuncs
from informers.testing import ApiServer
from informers.toolkit.leaderelection import LeaderElectionRecord, ObservedRecord
from informers.toolkit.sharding import (
    RING_LABEL,
    RingWatcher,
    ShardLease,
    ShardState,
    lease_state,
    state_changes_at,
)
from informers.wire.resources import LEASES

ORDER = [
    ShardState.READY,
    ShardState.EXPIRED,
    ShardState.UNCERTAIN,
    ShardState.DEAD,
    ShardState.ORPHANED,
]

records = st.builds(
    LeaderElectionRecord,
    holder_identity=st.sampled_from(["", "shard-a", "shard-b"]),
    lease_duration_seconds=st.integers(0, 5),
)
times = st.floats(0, 1000, allow_nan=False)


@given(records, times, st.lists(times, min_size=2, max_size=6), st.floats(0.1, 5), st.floats(0, 30))
def test_states_only_move_forward_and_change_where_announced(
    record: LeaderElectionRecord, seen: float, nows: list[float], duration: float, grace: float
) -> None:
    observed = ObservedRecord(record, "1", seen)
    nows = sorted(n + seen for n in nows)
    states = [lease_state(observed, "shard-a", n, duration, grace) for n in nows]
    assert [ORDER.index(s) for s in states] == sorted(ORDER.index(s) for s in states)
    for now, state in zip(nows, states, strict=True):
        at = state_changes_at(observed, "shard-a", now, duration, grace)
        if at is None:
            assert state is ShardState.ORPHANED
            continue
        assert at > now
        assert lease_state(observed, "shard-a", at, duration, grace) is not state
        midway = now + (at - now) / 2
        assert lease_state(observed, "shard-a", midway, duration, grace) is state


@given(records, times, st.floats(0, 100), st.floats(0.1, 5))
def test_ready_means_held_by_its_shard_and_younger_than_a_duration(
    record: LeaderElectionRecord, seen: float, age: float, duration: float
) -> None:
    observed = ObservedRecord(record, "1", seen)
    state = lease_state(observed, "shard-a", seen + age, duration)
    effective = max(duration, record.lease_duration_seconds)
    assert (state is ShardState.READY) == (
        record.holder_identity == "shard-a" and seen + age < seen + effective
    )
    if record.holder_identity != "shard-a":
        assert state in (ShardState.DEAD, ShardState.ORPHANED)


FAST: dict[str, Any] = {"lease_duration": 1.0, "renew_deadline": 0.7, "retry_period": 0.2}


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def test_leases_carry_the_ring_label_and_stopping_releases(
    api_server: ApiServer, client: Any
) -> None:
    watcher = RingWatcher(client, "default", "web", lease_duration=1.0)
    recorder = RingRecorder(watcher)
    leases = [ShardLease(client, "default", "web", f"shard-{i}", **FAST) for i in range(3)]
    watcher.start()
    try:
        for lease in leases:
            lease.start()
        assert all(lease.wait_ready(10) for lease in leases)
        assert recorder.wait_for(lambda r: len(r) == 3)
        lease = api_server.get(LEASES, "shard-1", namespace="default")
        assert lease["metadata"]["labels"][RING_LABEL] == "web"
        assert lease["spec"]["holderIdentity"] == "shard-1"
        started = time.monotonic()
        assert leases[1].stop(10)
        assert not leases[1].is_ready()
        assert recorder.wait_for(lambda r: r.shards == ("shard-0", "shard-2"))
        assert time.monotonic() - started < 1.0 + 0.2 + 0.5  # released: at once
        assert watcher.states()["shard-1"] is ShardState.DEAD
    finally:
        for lease in leases:
            lease.stop(10)
        watcher.stop()


def test_a_lease_that_stops_renewing_leaves_the_ring_after_its_duration(
    api_server: ApiServer, client: Any
) -> None:
    # a lease written once and never renewed: a replica that died
    api_server.create(
        LEASES,
        {
            "metadata": {"name": "ghost", "namespace": "default", "labels": {RING_LABEL: "web"}},
            "spec": {"holderIdentity": "ghost", "leaseDurationSeconds": 1},
        },
    )
    watcher = RingWatcher(client, "default", "web", lease_duration=1.0, orphan_grace=0.5)
    recorder = RingRecorder(watcher)
    deleted = threading.Event()
    watcher.informer.add_event_handler(
        ResourceEventHandlerFuncs(delete_func=lambda _o: deleted.set())
    )
    watcher.start()
    try:
        assert watcher.wait_synced(10)
        seen = time.monotonic()
        assert recorder.wait_for(lambda r: r.shards == ("ghost",))
        assert recorder.wait_for(lambda r: len(r) == 0, timeout=5)
        assert time.monotonic() - seen >= 0.9
        assert time.monotonic() - seen < 1.0 + 0.2 + 0.5
        # dead after 3 durations, orphaned half a second later: deleted
        assert deleted.wait(10)
        assert api_server.list_objects(LEASES, namespace="default") == []
    finally:
        watcher.stop()


def test_a_replica_that_cannot_renew_stops_before_the_others_drop_it(
    api_server: ApiServer, client: Any
) -> None:
    cut_off = api_server.api_client()
    cut_off.set_default_header("X-Replica", "shard-x")
    lost = threading.Event()
    lost_at: list[float] = []

    def on_lost() -> None:
        lost_at.append(time.monotonic())
        lost.set()

    lease = ShardLease(cut_off, "default", "web", "shard-x", on_lost=on_lost, **FAST)
    other = ShardLease(client, "default", "web", "shard-y", **FAST)
    watcher = RingWatcher(client, "default", "web", lease_duration=1.0)
    recorder = RingRecorder(watcher)
    dropped_at: list[float] = []
    watcher.add_callback(
        lambda old, new: (
            dropped_at.append(time.monotonic())
            if "shard-x" in old and "shard-x" not in new
            else None
        )
    )
    watcher.start()
    try:
        lease.start()
        other.start()
        assert lease.wait_ready(10)
        assert other.wait_ready(10)
        assert recorder.wait_for(lambda r: len(r) == 2)
        started = time.monotonic()
        api_server.fail_next(10_000, 500, header=("X-Replica", "shard-x"))
        assert lost.wait(5)
        assert recorder.wait_for(lambda r: r.shards == ("shard-y",), timeout=5)
        # the replica gave up (renew deadline) before anybody dropped it
        assert lost_at[0] < dropped_at[0]
        assert dropped_at[0] - started < 1.0 + 0.2 + 1.0
        api_server.clear_faults()
        assert lease.wait_ready(10)
        assert recorder.wait_for(lambda r: len(r) == 2)
    finally:
        api_server.clear_faults()
        lease.stop(10)
        other.stop(10)
        watcher.stop()
        cut_off.close()
