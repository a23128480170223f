"""Controller.warm_up: the sources start and fill the queue, the workers
wait for start(); a warmed controller that is stopped reconciles nothing."""

from __future__ import annotations

import threading

import pytest

from informers.errors import InformerStateError
from informers.toolkit.runtime import Controller, PeriodicSource, Request

KEYS = [f"default/item-{i}" for i in range(20)]


class Listing:
    """A periodic source's function: the keys, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[str]:
        self.calls += 1
        return KEYS


def _controller(reconciled: list[Request], lock: threading.Lock) -> tuple[Controller, Listing]:
    listing = Listing()

    def reconcile(request: Request) -> None:
        with lock:
            reconciled.append(request)

    source = PeriodicSource(listing, every=3600.0)
    return Controller("warm", reconcile, [source], workers=2), listing


def test_warm_up_fills_the_queue_and_start_only_starts_the_workers() -> None:
    reconciled: list[Request] = []
    lock = threading.Lock()
    controller, listing = _controller(reconciled, lock)
    try:
        controller.warm_up()
        assert len(controller.queue) == len(KEYS)  # queued, not reconciled
        assert not controller.is_running()
        with lock:
            assert reconciled == []
        controller.start()
        assert controller.wait_idle(10)
        assert listing.calls == 1  # the source was not started again
        with lock:
            assert sorted(str(r) for r in reconciled) == sorted(KEYS)
        with pytest.raises(InformerStateError):
            controller.warm_up()
    finally:
        controller.stop()


def test_a_warmed_controller_stopped_before_start_reconciles_nothing() -> None:
    reconciled: list[Request] = []
    lock = threading.Lock()
    controller, _ = _controller(reconciled, lock)
    controller.warm_up()
    controller.stop()
    assert controller.stop_event.is_set()
    with pytest.raises(InformerStateError):
        controller.start()
    with lock:
        assert reconciled == []
