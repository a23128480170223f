"""LeaderElector.retry_now: a candidate waiting out a long retry period
tries again at once (the manager's release watch calls it)."""

from __future__ import annotations

import threading

from informers.testing import ApiServer
from informers.toolkit.leaderelection import (
    Candidate,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)


def _config(api_server: ApiServer, identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig(
        lock=LeaseLock(api_server.api_client(), "default", "retry-now"),
        identity=identity,
        lease_duration=300.0,
        renew_deadline=200.0,
        retry_period=60.0,  # far beyond the test: only retry_now() can make it try
    )


def test_retry_now_makes_a_waiting_candidate_try_at_once(api_server: ApiServer) -> None:
    holder = Candidate(_config(api_server, "a"))
    assert holder.try_acquire_or_renew()
    observed_a = threading.Event()
    leading = threading.Event()

    def on_new_leader(identity: str) -> None:
        if identity == "a":
            observed_a.set()

    def lead(stop: threading.Event) -> None:
        leading.set()
        stop.wait()

    elector = LeaderElector(
        _config(api_server, "b"), on_started_leading=lead, on_new_leader=on_new_leader
    )
    elector.start()
    try:
        assert observed_a.wait(10)  # its first attempt failed: it waits a retry period
        assert not leading.is_set()
        assert holder.release()
        elector.retry_now()
        assert leading.wait(10)
        assert elector.is_leader()
    finally:
        assert elector.stop(10)


def test_stop_still_interrupts_the_wait(api_server: ApiServer) -> None:
    holder = Candidate(_config(api_server, "a"))
    assert holder.try_acquire_or_renew()
    observed = threading.Event()
    elector = LeaderElector(
        _config(api_server, "b"),
        on_started_leading=lambda stop: None,
        on_new_leader=lambda identity: observed.set(),
    )
    elector.start()
    assert observed.wait(10)
    assert elector.stop(10)  # not a retry period later
    assert not elector.is_leader()
