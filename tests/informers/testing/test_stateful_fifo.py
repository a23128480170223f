"""Runs the shipped RealFIFO state machine against RealFIFO, and checks that it
catches a queue that forgets pending keys when computing relist deletions."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import informers.testing
from informers.cache.fifo import Delta, RealFIFO
from informers.cache.protocols import KeyListerGetter
from informers.testing.stateful_fifo import RealFIFOStateMachine, real_fifo_machine

TestRealFIFO = RealFIFOStateMachine.TestCase


class ForgetsPendingKeys(RealFIFO):
    """Computes relist deletions from the cache only: keys that are still
    queued but not yet applied never get their tombstone."""

    def _pending_locked(self) -> dict[str, Delta]:
        return {}


def test_machine_catches_a_queue_that_ignores_pending_keys() -> None:
    def factory(known_objects: KeyListerGetter) -> RealFIFO:
        return ForgetsPendingKeys(known_objects=known_objects)

    machine = real_fifo_machine(factory)
    with pytest.raises(AssertionError):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=500, database=None, print_blob=False, report_multiple_bugs=False
            ),
        )


def test_machine_is_exported_lazily() -> None:
    assert informers.testing.RealFIFOStateMachine is RealFIFOStateMachine
    assert informers.testing.real_fifo_machine is real_fifo_machine
