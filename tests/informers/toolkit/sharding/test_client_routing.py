"""Client-side routing with three to four replicas in one process against
the emulator: every replica watches every ConfigMap and reconciles the ones
its shard owns in the ring of ready shard Leases."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from sharding_helpers import Reconciled, RingRecorder, Timeline

from informers.cache.informer import SharedIndexInformer
from informers.rest.listwatch import HTTPListerWatcher
from informers.testing import ApiServer
from informers.toolkit.runtime import Controller, InformerSource, Request
from informers.toolkit.sharding import (
    HashRing,
    RingChangeSource,
    RingWatcher,
    ShardLease,
    ring_key,
    shard_filter,
)
from informers.util.backoff import ExponentialBackoff
from informers.wire.resources import CONFIGMAPS

LEASE: dict[str, Any] = {"lease_duration": 1.0, "renew_deadline": 0.7, "retry_period": 0.2}
COUNT = 120


def key_of(name: str) -> str:
    return ring_key({"metadata": {"name": name, "namespace": "default"}}, "", "ConfigMap")


class Replica:
    """One replica: its shard lease, its ring watcher, an informer on every
    ConfigMap and a controller behind the shard filter."""

    def __init__(self, client: Any, shard: str, timeline: Timeline, done: Reconciled) -> None:
        self.shard = shard
        self.lease = ShardLease(client, "default", "cm", shard, **LEASE)
        self.watcher = RingWatcher(client, "default", "cm", lease_duration=1.0)
        self.recorder = RingRecorder(self.watcher)
        self.informer = SharedIndexInformer(
            HTTPListerWatcher(client, CONFIGMAPS),
            name=f"configmaps-{shard}",
            backoff=ExponentialBackoff(initial=0.01, cap=0.05),
        )
        self.filter = shard_filter(self.watcher, shard, "", "ConfigMap", lease=self.lease)
        self.timeline, self.done = timeline, done
        self.lease_started = False
        self.controller = Controller(
            f"cm-{shard}",
            self.reconcile,
            [
                InformerSource(self.informer, predicates=[self.filter]),
                RingChangeSource(self.watcher, self.informer, shard, "", "ConfigMap"),
            ],
            workers=2,
        )

    def reconcile(self, request: Request) -> None:
        obj = self.informer.get_store().get_by_key(str(request))
        if obj is None or not self.filter(obj):
            return  # queued before the ring moved it away, or deleted
        key = key_of(request.name)
        self.timeline.begin(key, self.shard)
        self.timeline.end(key, self.shard)
        self.done.record(key, self.shard)

    def start_lease(self) -> None:
        if not self.lease_started:
            self.lease_started = True
            self.lease.start()

    def start(self) -> None:
        self.start_lease()
        self.watcher.start()
        self.informer.start()
        assert self.lease.wait_ready(10)
        assert self.watcher.wait_synced(10)
        self.controller.start()

    def stop(self) -> None:
        # work first, then the lease: released only once nothing runs
        self.controller.stop()
        self.lease.stop(10)
        self.watcher.stop()
        self.informer.stop()


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def owners(ring: HashRing, names: list[str]) -> dict[str, str | None]:
    return {key_of(n): ring.shard_for(key_of(n)) for n in names}


def test_replicas_split_the_objects_and_take_over_when_one_stops(
    api_server: ApiServer, client: Any
) -> None:
    names = [f"cm-{i:03d}" for i in range(COUNT)]
    api_server.create_many(
        CONFIGMAPS, ({"metadata": {"name": n, "namespace": "default"}} for n in names)
    )
    timeline, done = Timeline(), Reconciled()
    replicas = [Replica(client, f"shard-{i}", timeline, done) for i in range(3)]
    try:
        for r in replicas:
            r.start_lease()
        assert all(r.lease.wait_ready(10) for r in replicas)
        for r in replicas:
            r.start()
        full = HashRing(r.shard for r in replicas)
        assert all(r.recorder.wait_for(lambda ring: ring == full) for r in replicas)
        expected = owners(full, names)
        assert done.wait_for(lambda seen: set(seen) >= set(expected))
        for r in replicas:
            assert r.controller.wait_idle(10)
        # each object was reconciled by its owner in the full ring, only
        seen = done.snapshot()
        for key, owner in expected.items():
            assert set(seen[key]) <= {owner} | {r.shard for r in replicas}
            assert owner in seen[key]
        stray = {k: s for k, s in seen.items() if set(s) != {expected[k]}}
        # before every replica saw the full ring a key may have gone to the
        # owner in a smaller ring; never to two shards at once (below)
        assert len(stray) < COUNT

        # stop shard-1: its objects move to the others within lease + retry
        moved = [k for k, o in expected.items() if o == "shard-1"]
        assert moved
        before = {k: len(v) for k, v in done.snapshot().items()}
        started = time.monotonic()
        replicas[1].stop()
        rest = full.without_shard("shard-1")
        after = owners(rest, names)
        assert done.wait_for(
            lambda seen: all(len(seen[k]) > before[k] and seen[k][-1] == after[k] for k in moved),
            timeout=10,
        )
        took = time.monotonic() - started
        assert took < 1.0 + 0.2 + 1.0, took
        assert all(after[k] == expected[k] for k in expected if k not in moved)
        assert timeline.overlaps() == []
    finally:
        for r in replicas:
            r.stop()


def test_a_new_replica_takes_about_a_quarter_of_the_objects(
    api_server: ApiServer, client: Any
) -> None:
    names = [f"cm-{i:03d}" for i in range(COUNT)]
    api_server.create_many(
        CONFIGMAPS, ({"metadata": {"name": n, "namespace": "default"}} for n in names)
    )
    timeline, done = Timeline(), Reconciled()
    replicas = [Replica(client, f"shard-{i}", timeline, done) for i in range(3)]
    joined: Replica | None = None
    try:
        for r in replicas:
            r.start_lease()
        assert all(r.lease.wait_ready(10) for r in replicas)
        for r in replicas:
            r.start()
        three = HashRing(r.shard for r in replicas)
        assert all(r.recorder.wait_for(lambda ring: ring == three) for r in replicas)
        assert done.wait_for(lambda seen: len(seen) == COUNT)
        for r in replicas:
            assert r.controller.wait_idle(10)
        before = owners(three, names)
        joined = Replica(client, "shard-3", timeline, done)
        joined.start()
        four = three.with_shard("shard-3")
        assert all(r.recorder.wait_for(lambda ring: ring == four) for r in replicas)
        after = owners(four, names)
        moved = [k for k in after if after[k] != before[k]]
        # consistent hashing: only keys moving to the new shard change owner
        assert all(after[k] == "shard-3" for k in moved)
        # about 1/N of them: 1/4 expected, within [1/8, 3/8] for 120 keys
        assert COUNT / 8 <= len(moved) <= 3 * COUNT / 8, len(moved)
        assert done.wait_for(lambda seen: all("shard-3" in seen[k] for k in moved))
        assert joined.controller.wait_idle(10)
        # nothing lost: every key was reconciled by its current owner
        seen = done.snapshot()
        assert all(after[k] in seen[k] for k in after)
        # the new shard reconciled only what it owns
        assert {k for k, s in seen.items() if "shard-3" in s} == set(moved)
    finally:
        if joined is not None:
            joined.stop()
        for r in replicas:
            r.stop()
