"""Two managers under leader election against the emulator: never two
reconciling at once, the standby takes over warm (no new list) as soon as
the leader releases the Lease, and losing leadership sets the reconcile
contexts' stop event and stops the manager.

Every request is authorized through a counting authorizer, which is how the
test sees the list requests each replica makes."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from informers import Manager
from informers.errors import InformerStateError
from informers.testing.apiserver import Access, ApiServer
from informers.toolkit.leaderelection import LeaderElectionConfig, LeaseLock
from informers.toolkit.runtime import Controller, InformerSource, Request, current_context

TOKENS = {"token-a": "a", "token-b": "b", "token-c": "c"}
HEADER = "X-Replica"


class Requests:
    """Counts the resource requests the emulator authorizes, by user and verb."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str]] = Counter()

    def __call__(self, access: Access) -> bool:
        with self._lock:
            self._counts[(access.user, access.verb, access.resource)] += 1
        return True

    def count(self, user: str, verb: str, resource: str) -> int:
        with self._lock:
            return self._counts[(user, verb, resource)]


class Overlap:
    """Reconciles of both replicas on one timeline: counts any moment at
    which two replicas were inside a reconcile."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._inside: Counter[str] = Counter()
        self.violations = 0
        self.reconciled: dict[str, set[str]] = {"a": set(), "b": set(), "c": set()}
        self.first = {"a": threading.Event(), "b": threading.Event(), "c": threading.Event()}

    def reconcile(self, replica: str, request: Request) -> None:
        with self._lock:
            self._inside[replica] += 1
            if any(n for r, n in self._inside.items() if r != replica):
                self.violations += 1
        try:
            context = current_context()
            assert context is not None
            context.wait(0.005)  # a little work, cut short by a stop
        finally:
            with self._lock:
                self._inside[replica] -= 1
                self.reconciled[replica].add(request.name)
                self._lock.notify_all()
            self.first[replica].set()

    def wait_reconciled(self, replica: str, count: int, timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: len(self.reconciled[replica]) >= count, timeout)


@pytest.fixture
def server() -> Iterator[tuple[ApiServer, Requests]]:
    requests = Requests()
    with ApiServer(tokens=TOKENS, authorizer=requests) as api_server:
        yield api_server, requests


def _manager(api_server: ApiServer, replica: str, overlap: Overlap) -> Manager:
    client = api_server.api_client(token=f"token-{replica}")
    client.set_default_header(HEADER, replica)
    config = LeaderElectionConfig(
        lock=LeaseLock(client, "default", "manager-test", read_timeout=2.0),
        identity=replica,
        # A retry period far beyond the test's waits: the standby takes over
        # only because its release watch sees the Lease released.
        lease_duration=300.0,
        renew_deadline=200.0,
        retry_period=60.0,
        release_on_cancel=True,
    )
    manager = Manager(client, leader_election=config, graceful_shutdown_timeout=10)

    def reconcile(request: Request) -> None:
        overlap.reconcile(replica, request)

    controllers[replica] = manager.controller(
        "cm", reconcile, [InformerSource(manager.factory.configmaps())]
    )
    return manager


#: The controller of each replica made by _manager.
controllers: dict[str, Controller] = {}


def _seed(api_server: ApiServer, n: int) -> None:
    for i in range(n):
        api_server.create(
            "configmaps", {"metadata": {"name": f"cm-{i}", "namespace": "default"}, "data": {}}
        )


def test_the_standby_takes_over_warm_and_they_never_reconcile_together(
    server: tuple[ApiServer, Requests],
) -> None:
    api_server, requests = server
    _seed(api_server, 50)
    overlap = Overlap()
    a, b = _manager(api_server, "a", overlap), _manager(api_server, "b", overlap)
    a.start()
    try:
        assert a.leading.wait(20)
        b.start()  # synced, not leading: a warm standby
        try:
            assert overlap.first["a"].wait(20)
            assert b.factory.configmaps().has_synced()
            assert not b.leading.is_set()
            # Warm: b's controller queued every cached object; its workers wait.
            assert len(controllers["b"].queue) == 50
            assert not controllers["b"].is_running()
            lists_before = requests.count("b", "list", "configmaps")
            assert lists_before == 1
            a.stop()  # releases the Lease last
            assert b.leading.wait(20)
            assert overlap.first["b"].wait(20)
            elector = b.leader_elector
            assert elector is not None
            assert elector.is_leader()
            # b reconciles every object from the cache it already had.
            assert overlap.wait_reconciled("b", 50, 20)
            assert requests.count("b", "list", "configmaps") == lists_before  # no new list
            # A third replica stands by, warmed up, and stops without ever leading.
            c = _manager(api_server, "c", overlap)
            c.start()
            assert len(controllers["c"].queue) == 50
            c.stop()
            assert controllers["c"].stop_event.is_set()
            assert overlap.reconciled["c"] == set()
            assert overlap.violations == 0
        finally:
            b.stop()
    finally:
        a.stop()
    assert not a.leadership_lost
    assert not b.leadership_lost


def test_losing_leadership_sets_the_reconcile_stop_event_and_stops_the_manager(
    server: tuple[ApiServer, Requests],
) -> None:
    api_server, _ = server
    _seed(api_server, 1)
    client = api_server.api_client(token="token-a")
    client.set_default_header(HEADER, "a")
    config = LeaderElectionConfig(
        lock=LeaseLock(client, "default", "manager-lost", read_timeout=0.5),
        identity="a",
        lease_duration=1.5,
        renew_deadline=1.0,
        retry_period=0.2,
    )
    manager = Manager(client, leader_election=config, graceful_shutdown_timeout=10)
    entered, saw_stop = threading.Event(), threading.Event()

    def reconcile(request: Request) -> None:
        context = current_context()
        assert context is not None
        entered.set()
        if context.wait(30):  # until the stop event is set
            saw_stop.set()

    manager.controller("cm", reconcile, [InformerSource(manager.factory.configmaps())])
    runner = threading.Thread(target=manager.run, name="test-manager-run")
    runner.start()
    try:
        assert entered.wait(20)
        # Every renewal of this replica fails from now on: leadership is lost.
        api_server.fail_next(10_000, 500, "/apis/coordination.k8s.io", header=(HEADER, "a"))
        assert saw_stop.wait(20)
        runner.join(30)
        assert not runner.is_alive()
        assert manager.leadership_lost
    finally:
        api_server.clear_faults()
        manager.stop()
        runner.join(30)


def test_runnables_functions_and_order(api_server: ApiServer) -> None:
    events: list[str] = []
    lock = threading.Lock()

    def record(what: str) -> None:
        with lock:
            events.append(what)

    class Thing:
        def __init__(self, name: str) -> None:
            self.name = name

        def start(self) -> None:
            record(f"start {self.name}")

        def stop(self, timeout: float | None = None) -> None:
            record(f"stop {self.name}")

    def loop(stop: threading.Event) -> None:
        record("loop running")
        stop.wait()
        record("loop done")

    class Runner:
        name = "runner"

        def run(self, stop: threading.Event) -> None:
            record("runner running")
            stop.wait()
            record("runner done")

    manager = Manager(api_server.api_client())
    manager.add(Thing("one"))
    manager.add(loop)
    manager.add(Runner())
    manager.add(Thing("two"), needs_leader=False)
    with pytest.raises(TypeError, match="not runnable"):
        manager.add(42)  # type: ignore[arg-type]
    manager.start()
    try:
        with pytest.raises(InformerStateError):
            manager.add(Thing("late"))
        assert manager.leading.is_set()
    finally:
        manager.stop()
    manager.stop()  # idempotent
    assert events.index("start one") < events.index("start two")
    assert events.index("stop two") < events.index("stop one")
    assert "loop done" in events
    assert "runner done" in events
