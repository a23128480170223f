"""Label routing with the drain handshake, three and four replicas and a
leader-elected sharder in one process against the emulator: no object is
ever reconciled by two shards at once, on join or on stop."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sharding_helpers import Reconciled, RingRecorder, Timeline

from informers.cache.informer import SharedIndexInformer
from informers.rest.listwatch import HTTPListerWatcher
from informers.rest.transport import ApiClientTransport
from informers.testing import ApiServer, ApiServerError
from informers.toolkit.leaderelection import (
    LeaderElectionConfig,
    LeaseLock,
    run_with_leader_election,
)
from informers.toolkit.runtime import Controller, InformerSource, Request
from informers.toolkit.sharding import (
    DrainingReconciler,
    HashRing,
    RingWatcher,
    Sharder,
    ShardLease,
    ring_key,
    shard_label,
    shard_label_selector,
)
from informers.util.backoff import ExponentialBackoff
from informers.wire.resources import CONFIGMAPS

LEASE: dict[str, Any] = {"lease_duration": 1.0, "renew_deadline": 0.7, "retry_period": 0.2}
COUNT = 60
RING = "cm"


def key_of(name: str) -> str:
    return ring_key({"metadata": {"name": name, "namespace": "default"}}, "", "ConfigMap")


def informer(client: Any, name: str, selector: str = "") -> SharedIndexInformer:
    return SharedIndexInformer(
        HTTPListerWatcher(client, CONFIGMAPS, label_selector=selector),
        name=name,
        backoff=ExponentialBackoff(initial=0.01, cap=0.05),
    )


class Drains:
    """Sharding metrics that record drain times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.times: list[float] = []  # guarded by _lock
        self.counts: dict[str, int] = {}  # guarded by _lock

    def ring_changed(self, ring: str, shards: int) -> None:
        pass

    def objects_assigned(self, ring: str, shard: str, count: int) -> None:
        with self._lock:
            self.counts[shard] = count

    def drained(self, ring: str, seconds: float) -> None:
        with self._lock:
            self.times.append(seconds)


class Replica:
    def __init__(self, client: Any, shard: str, timeline: Timeline, done: Reconciled) -> None:
        self.shard, self.timeline, self.done = shard, timeline, done
        self.transport = ApiClientTransport(client)
        self.lease = ShardLease(client, "default", RING, shard, **LEASE)
        self.informer = informer(client, f"cm-{shard}", shard_label_selector(RING, shard))
        reconcile = DrainingReconciler(
            self.reconcile,
            client,
            CONFIGMAPS,
            self.informer,
            ring=RING,
            shard=shard,
            lease=self.lease,
        )
        self.controller = Controller(
            f"cm-{shard}", reconcile, [InformerSource(self.informer)], workers=2
        )

    def reconcile(self, request: Request) -> None:
        key = key_of(request.name)
        self.timeline.begin(key, self.shard)
        # real work in between the stamps: a round trip to the server
        self.transport.request("GET", CONFIGMAPS.object_path(request.name, "default"))
        self.timeline.end(key, self.shard)
        self.done.record(key, self.shard)

    def start(self) -> None:
        self.lease.start()
        self.informer.start()
        assert self.lease.wait_ready(10)
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()
        self.lease.stop(10)
        self.informer.stop()


class SharderProcess:
    """The sharder under leader election on its own thread."""

    def __init__(self, client: Any, metrics: Drains) -> None:
        self.watcher = RingWatcher(client, "default", RING, lease_duration=1.0)
        self.recorder = RingRecorder(self.watcher)
        self.informer = informer(client, "cm-sharder")
        self.sharder = Sharder(client, CONFIGMAPS, self.informer, self.watcher, metrics=metrics)
        self.config = LeaderElectionConfig(
            lock=LeaseLock(client, "default", "cm-sharder"),
            identity="sharder-0",
            release_on_cancel=True,
            **LEASE,
        )
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=run_with_leader_election,
            args=(self.sharder, self.config),
            kwargs={"stop": self.stop_event},
            name="test-sharder",
        )

    def start(self) -> None:
        self.watcher.start()
        self.informer.start()
        assert self.watcher.wait_synced(10)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        if self.thread.is_alive() or self.thread.ident is not None:
            self.thread.join(30)
        self.informer.stop()
        self.watcher.stop()


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def touch_all(api_server: ApiServer, names: list[str], round_: int) -> None:
    """Change every object once (events for whichever shard owns it)."""
    for name in names:
        while True:
            obj = api_server.get(CONFIGMAPS, name, namespace="default")
            obj["data"] = {"round": str(round_)}
            try:
                api_server.update(CONFIGMAPS, obj)
                break
            except ApiServerError as exc:  # a 409 against the sharder: read again
                if exc.code != 409:
                    raise


def labelled(api_server: ApiServer, ring: HashRing, names: list[str]) -> bool:
    return all(
        (api_server.get(CONFIGMAPS, n, namespace="default")["metadata"].get("labels") or {}).get(
            shard_label(RING)
        )
        == ring.shard_for(key_of(n))
        for n in names
    )


def test_objects_move_by_drain_and_never_run_on_two_shards(
    api_server: ApiServer, client: Any
) -> None:
    names = [f"cm-{i:03d}" for i in range(COUNT)]
    api_server.create_many(
        CONFIGMAPS, ({"metadata": {"name": n, "namespace": "default"}} for n in names)
    )
    timeline, done, metrics = Timeline(), Reconciled(), Drains()
    replicas = [Replica(client, f"shard-{i}", timeline, done) for i in range(3)]
    sharder = SharderProcess(client, metrics)
    joined: Replica | None = None
    try:
        for r in replicas:
            r.start()
        sharder.start()
        three = HashRing(r.shard for r in replicas)
        assert sharder.recorder.wait_for(lambda ring: ring == three)
        assert done.wait_for(lambda seen: len(seen) == COUNT)
        first = done.snapshot()
        assert all(first[key_of(n)] == [three.shard_for(key_of(n))] for n in names)

        # a fourth replica: its share is drained from the others, then moved
        joined = Replica(client, "shard-3", timeline, done)
        joined.start()
        four = three.with_shard("shard-3")
        moved = [key_of(n) for n in names if four.shard_for(key_of(n)) == "shard-3"]
        assert COUNT / 8 <= len(moved) <= 3 * COUNT / 8, len(moved)
        touch_all(api_server, names, 1)  # work in flight while objects move
        assert done.wait_for(lambda seen: all("shard-3" in seen[k] for k in moved))
        assert sharder.sharder.wait_idle(10)
        assert labelled(api_server, four, names)
        assert len(metrics.times) >= len(moved)
        assert timeline.overlaps() == []

        # stop shard-1: released lease, its objects reassigned directly
        gone = [key_of(n) for n in names if four.shard_for(key_of(n)) == "shard-1"]
        rest = four.without_shard("shard-1")
        before = {k: len(v) for k, v in done.snapshot().items()}
        started = time.monotonic()
        replicas[1].stop()
        assert done.wait_for(
            lambda seen: all(
                len(seen[k]) > before[k] and seen[k][-1] == rest.shard_for(k) for k in gone
            )
        )
        assert time.monotonic() - started < 1.0 + 0.2 + 1.0
        touch_all(api_server, names, 2)
        assert sharder.sharder.wait_idle(10)
        assert labelled(api_server, rest, names)
        assert timeline.overlaps() == []
    finally:
        sharder.stop()
        if joined is not None:
            joined.stop()
        for r in replicas:
            r.stop()
