"""Read-your-writes end to end, on the emulator: a controller that creates
one child (a Secret) per parent (a ConfigMap), finding the children through
an owner index of the cache, double-creates when its watch events are late
and nothing holds it back -- and never does when the client records its
writes and the controller holds the next reconcile until the cache
reflects them, whatever the interleaving of triggers, writes and delayed
watch events (hypothesis)."""

from __future__ import annotations

import queue
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers import SharedInformerFactory, wait_for_cache_sync
from informers.errors import NotFoundError
from informers.testing import ApiServer
from informers.toolkit.client import Client
from informers.toolkit.controllerutil import get_controller_of, set_controller_reference
from informers.toolkit.runtime import ChannelSource, Controller, Request, Result
from informers.wire.resources import CONFIGMAPS

OWNER_INDEX = "owner"
PARENTS = 3


def owner_uids(obj: Any) -> list[str]:
    ref = get_controller_of(obj)
    return [str(ref["uid"])] if ref is not None else []


class Harness:
    """One emulator and started informers, shared by a test's examples; each
    example gets a namespace and a controller of its own."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.api = server.api_client()
        self.factory = SharedInformerFactory(self.api)
        self.parents = self.factory.configmaps()
        self.children = self.factory.secrets()
        self.children.add_indexers({OWNER_INDEX: owner_uids})
        self.factory.start()
        wait_for_cache_sync(self.parents, self.children, timeout=10)

    def close(self) -> None:
        self.server.stall_watches(0)
        self.factory.shutdown()
        self.api.close()

    def run(
        self,
        ops: list[tuple[str, int]],
        *,
        read_your_writes: bool,
        catch_up_timeout: float = 10.0,
    ) -> Counter[str]:
        """Play ``ops`` against a fresh controller, then let the watches go,
        reconcile every parent once more and wait for the controller to be
        idle; the number of children of each parent (by parent name)."""
        ns = f"ryw-{uuid.uuid4().hex[:8]}"
        self.server.create("namespaces", {"metadata": {"name": ns}})
        client = Client(
            self.api,
            factory=self.factory,
            read_your_writes=read_your_writes,
            catch_up_timeout=catch_up_timeout,
        )
        index = self.children.get_indexer()

        def reconcile(request: Request) -> Result | None:
            try:
                parent = client.get("configmaps", request.name, namespace=request.namespace)
            except NotFoundError:
                return None
            if index.by_index(OWNER_INDEX, parent["metadata"]["uid"]):
                return None
            child: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"generateName": f"{request.name}-", "namespace": request.namespace},
            }
            set_controller_reference(parent, child, owner_resource=CONFIGMAPS)
            client.create(child)
            return None

        channel: queue.Queue[Any] = queue.Queue()
        controller = Controller(f"ryw-{ns}", reconcile, [ChannelSource(channel)])
        controller.start()
        stalled = False
        created: set[int] = set()
        last_parent: dict[str, Any] = {}
        try:
            for op, i in ops:
                if op == "parent" and i not in created:
                    created.add(i)
                    parent = self.server.create("configmaps", {"metadata": {"name": f"p{i}"}}, ns)
                    last_parent = parent
                    if not stalled:  # in the cache before anything else happens
                        assert self.parents.wait_for_resource_version(parent, 10)
                elif op == "trigger":
                    controller.queue.add(Request(ns, f"p{i}"))
                elif op == "stall":
                    self.server.stall_watches(60)
                    stalled = True
                elif op == "resume":
                    self.server.stall_watches(0)
                    stalled = False
                elif op == "idle":
                    quiet(controller)
                elif op == "failed":  # until a held reconcile has failed on its timeout
                    failed(controller, Request(ns, f"p{i}"))
            self.server.stall_watches(0)
            if last_parent:
                assert self.parents.wait_for_resource_version(last_parent, 10)
            for i in created:
                controller.queue.add(Request(ns, f"p{i}"))
            assert controller.wait_idle(30)
        finally:
            controller.stop()
        counts: Counter[str] = Counter()
        by_uid = {
            o["metadata"]["uid"]: o["metadata"]["name"]
            for o in self.server.list_objects("configmaps", ns)
        }
        for secret in self.server.list_objects("secrets", ns):
            for uid in owner_uids(secret):
                counts[by_uid[uid]] += 1
        return counts


def quiet(controller: Controller, timeout: float = 10.0) -> None:
    """Until every reconcile has finished, or one is held back waiting for
    the cache (which only resumed watches release)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if controller.write_barrier.waiting():
            return
        if controller.wait_idle(0.05):
            return
    raise AssertionError("the controller did not settle")


def failed(controller: Controller, request: Request, timeout: float = 10.0) -> None:
    """Until a reconcile of ``request`` has failed (and was requeued)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if controller.queue.num_requeues(request):
            return
        controller.wait_idle(0.05)
    raise AssertionError("no reconcile failed")


@pytest.fixture
def harness() -> Iterator[Harness]:
    with ApiServer(rv_wait_seconds=0.2) as server:
        made = Harness(server)
        try:
            yield made
        finally:
            made.close()


# Reconcile a parent while watch events are held back, then again before
# they arrive: the second reconcile reads a cache without the first's child.
STALE_SECOND_RECONCILE = [
    ("parent", 0),
    ("idle", 0),
    ("stall", 0),
    ("trigger", 0),
    ("idle", 0),
    ("trigger", 0),
    ("idle", 0),
    ("resume", 0),
]


def test_without_read_your_writes_a_stale_cache_double_creates(harness: Harness) -> None:
    counts = harness.run(STALE_SECOND_RECONCILE, read_your_writes=False)
    assert counts["p0"] >= 2  # (the last reconcile, after the watches resume, may add one more)


def test_with_read_your_writes_the_second_reconcile_waits(harness: Harness) -> None:
    counts = harness.run(STALE_SECOND_RECONCILE, read_your_writes=True)
    assert counts["p0"] == 1


def test_a_cache_that_lags_past_the_timeout_fails_the_reconcile_until_it_catches_up(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    # The held reconcile times out (CacheSyncTimeoutError), is retried with
    # backoff and waits again each time; it never reads the stale cache.
    ops = [op for op in STALE_SECOND_RECONCILE if op[0] != "resume"]
    ops.insert(ops.index(("trigger", 0), 4) + 1, ("failed", 0))
    counts = harness.run(ops, read_your_writes=True, catch_up_timeout=0.05)
    assert counts["p0"] == 1
    assert "did not catch up" in caplog.text


operations = st.lists(
    st.tuples(
        st.sampled_from(["parent", "trigger", "trigger", "stall", "resume", "idle"]),
        st.integers(0, PARENTS - 1),
    ),
    min_size=1,
    max_size=14,
)


@settings(  # examples: the profile's (50 here, 200 in CI; about 60 ms each)
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations)
def test_read_your_writes_never_double_creates(
    harness: Harness, ops: list[tuple[str, int]]
) -> None:
    counts = harness.run(ops, read_your_writes=True)
    created = {f"p{i}" for op, i in ops if op == "parent"}
    assert set(counts) == created
    assert all(n == 1 for n in counts.values()), counts
