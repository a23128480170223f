"""run_with_leader_election: a controller runs only while its replica leads,
and is stopped -- stop() returned -- before another replica's starts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from leaderelection_helpers import (
    HEADER,
    LEASE_DURATION,
    RENEW_DEADLINE,
    Replica,
    Timeline,
    by_identity,
)

from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
    Runnable,
    run_with_leader_election,
)

WAIT = 15.0
MARGIN = LEASE_DURATION - RENEW_DEADLINE


class Controller:
    """A Runnable with one worker thread; its running interval (start()
    called until stop() returned) goes on the timeline."""

    def __init__(self, who: str, timeline: Timeline, *, fail_start: bool = False) -> None:
        self.who = who
        self.timeline = timeline
        self.fail_start = fail_start
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.stop_timeouts: list[float | None] = []
        self._halt = threading.Event()
        self._worker: threading.Thread | None = None

    def start(self) -> None:
        if self.fail_start:
            raise RuntimeError("cannot start")
        self.timeline.start(self.who)
        self._worker = threading.Thread(target=self._halt.wait, name=f"controller-{self.who}")
        self._worker.start()
        self.started.set()

    def stop(self, timeout: float | None = None) -> None:
        self.stop_timeouts.append(timeout)
        self._halt.set()
        if self._worker is not None:
            self._worker.join(timeout)
            self.timeline.end(self.who)
        self.stopped.set()


class Runner:
    """run_with_leader_election on its own thread, for one replica."""

    def __init__(self, replica: Replica, controller: Controller, elector: object) -> None:
        self.replica = replica
        self.controller = controller
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._elector = elector
        self.thread = threading.Thread(target=self._main, name=f"runner-{replica.identity}")
        self.thread.start()

    def _main(self) -> None:
        try:
            run_with_leader_election(self.controller, self._elector, stop=self.stop)  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc
        finally:
            self.done.set()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


@pytest.fixture
def timeline() -> Timeline:
    return Timeline()


@pytest.fixture
def replicas(api_server: ApiServer, timeline: Timeline) -> Iterator[list[Replica]]:
    made = [Replica(api_server, f"r{i}", timeline) for i in range(3)]
    yield made
    api_server.clear_faults()
    for replica in made:
        replica.api.close()


def test_a_controller_satisfies_runnable(timeline: Timeline) -> None:
    assert isinstance(Controller("x", timeline), Runnable)


def test_controllers_never_overlap_and_stop_within_the_margin(
    replicas: list[Replica], timeline: Timeline, api_server: ApiServer
) -> None:
    runners = [Runner(r, Controller(r.identity, timeline), r.config) for r in replicas]
    try:
        leader = by_identity(replicas, timeline.wait_for_starts(1, WAIT)[0].who)
        runner = next(x for x in runners if x.replica is leader)
        api_server.fail_next(10**6, 500, header=(HEADER, leader.identity))
        assert runner.done.wait(WAIT)  # leadership lost: it returns
        assert runner.error is None
        assert runner.controller.stopped.is_set()
        (timeout,) = runner.controller.stop_timeouts
        assert timeout is not None
        assert 0 <= timeout <= MARGIN
        second = timeline.wait_for_starts(2, WAIT)[1]
        assert second.who != leader.identity
    finally:
        for x in runners:
            x.close()
    timeline.assert_no_overlap()
    for x in runners:
        assert x.error is None
        assert x.controller.started.is_set() == x.controller.stopped.is_set()


def test_stop_stops_the_controller_and_releases(api_server: ApiServer, timeline: Timeline) -> None:
    replica = Replica(api_server, "r0", timeline, release_on_cancel=True)
    controller = Controller("r0", timeline)
    runner = Runner(replica, controller, replica.config)
    try:
        assert controller.started.wait(WAIT)
        stopped_at = time.monotonic()
        runner.stop.set()
        assert runner.done.wait(WAIT)
        assert controller.stopped.is_set()
        assert controller.stop_timeouts[0] is not None
        assert controller.stop_timeouts[0] <= MARGIN
        assert time.monotonic() - stopped_at < LEASE_DURATION
        assert api_server.get("leases", "election", "default")["spec"]["holderIdentity"] == ""
    finally:
        runner.close()
        replica.api.close()
    assert runner.error is None


def test_an_elector_keeps_its_own_callbacks(api_server: ApiServer, timeline: Timeline) -> None:
    api = api_server.api_client()
    order: list[str] = []
    leading = threading.Event()

    def started(stop: threading.Event) -> None:
        order.append("started")
        leading.set()
        stop.wait()

    config = LeaderElectionConfig(
        lock=LeaseLock(api, "default", "election"),
        identity="e",
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=0.2,
    )
    elector = LeaderElector(
        config, on_started_leading=started, on_stopped_leading=lambda: order.append("stopped")
    )
    controller = Controller("e", timeline)
    stop = threading.Event()
    thread = threading.Thread(
        target=run_with_leader_election, args=(controller, elector), kwargs={"stop": stop}
    )
    thread.start()
    try:
        assert controller.started.wait(WAIT)
        assert leading.wait(WAIT)
        assert elector.is_leader()
    finally:
        stop.set()
        thread.join(WAIT)
        api.close()
    assert order == ["started", "stopped"]
    assert controller.stopped.is_set()


def test_a_controller_that_fails_to_start_ends_leadership(
    api_server: ApiServer, timeline: Timeline
) -> None:
    replica = Replica(api_server, "r0", timeline, release_on_cancel=True)
    controller = Controller("r0", timeline, fail_start=True)
    runner = Runner(replica, controller, replica.config)
    try:
        assert runner.done.wait(WAIT)
    finally:
        runner.close()
        replica.api.close()
    assert isinstance(runner.error, RuntimeError)
    assert str(runner.error) == "cannot start"
    assert not controller.stopped.is_set()
    assert api_server.get("leases", "election", "default")["spec"]["holderIdentity"] == ""
