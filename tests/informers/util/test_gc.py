"""informers.util.gcpolicy: the opt-in collector pause, nested and from threads; the
collector always comes back as it was."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from informers.util.gcpolicy import collector_paused


@pytest.fixture(autouse=True)
def restore_collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    gc.unfreeze()
    if was:
        gc.enable()
    else:
        gc.disable()


def test_pauses_and_freezes() -> None:
    gc.enable()
    gc.unfreeze()
    with collector_paused():
        assert not gc.isenabled()
        kept = [{"i": i} for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_without_freeze() -> None:
    gc.enable()
    gc.unfreeze()
    with collector_paused(freeze=False):
        pass
    assert gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_nested_blocks_restore_only_at_the_outermost_end() -> None:
    gc.enable()
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_exception_restores_the_collector() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_overlapping_blocks_from_threads() -> None:
    gc.enable()
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other, name="gc-other")
    thread.start()
    assert inside.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's block is still open
    release.set()
    thread.join(10)
    assert gc.isenabled()
