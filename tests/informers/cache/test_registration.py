"""informers.cache.registration: listener threads, the optional handler hooks (relist
begin/end, synced), late admission and self-removal, on a real informer fed by
a FakeListerWatcher; and the SharedProcessor's distribution on its own."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from informers.cache.informer import SharedIndexInformer
from informers.cache.registration import (
    AddNotification,
    DeleteNotification,
    ResourceEventHandlerRegistration,
    SharedProcessor,
    UpdateNotification,
)
from informers.errors import InformerStateError
from informers.testing.fake import FakeClock, FakeListerWatcher
from tests.helpers import HookedRecorder, pod, settle

WAIT = 5.0


class Hooked(HookedRecorder):
    """Records every call, the optional hooks included; an update as
    ``("update", name)``, ``synced`` with whether the registration says so."""

    def __init__(self) -> None:
        super().__init__()
        self.registration: ResourceEventHandlerRegistration | None = None

    def updated(self, old: Any, new: Any) -> tuple[Any, ...]:
        return ("update", new["metadata"]["name"])

    def on_synced(self) -> None:
        reg = self.registration
        self.record("synced", reg.has_synced() if reg is not None else None)


@pytest.fixture
def lw() -> FakeListerWatcher:
    lw = FakeListerWatcher()
    lw.set_objects([pod("a", "2"), pod("b", "3")], "5")
    return lw


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def informer(lw: FakeListerWatcher, clock: FakeClock) -> Iterator[SharedIndexInformer]:
    inf = SharedIndexInformer(lw, name="pods", clock=clock)
    yield inf
    inf.stop()


def test_relist_hooks_wrap_the_initial_list_and_every_relist(
    informer: SharedIndexInformer, lw: FakeListerWatcher, clock: FakeClock
) -> None:
    hooked = Hooked()
    hooked.registration = informer.add_event_handler(hooked)
    informer.start()
    assert hooked.registration.wait_synced(WAIT)
    assert informer.wait_idle()
    assert hooked.snapshot() == [
        ("begin", "5"),
        ("add", "a", True),
        ("add", "b", True),
        ("end", "5"),
        ("synced", True),  # has_synced() is already true in on_synced
    ]
    watch = lw.wait_for_watch()
    watch.add(pod("w", "6"))  # a watch event: no hooks around it
    settle(informer, "6")
    lw.set_objects([pod("a", "2"), pod("c", "12")], "12")  # b and w deleted while away
    watch.error(410, "Expired", "too old")
    assert clock.wait_for_waiters()
    clock.advance(2)
    lw.wait_for_watch(2)
    settle(informer, "12")
    assert hooked.snapshot()[5:] == [
        ("add", "w", False),
        ("begin", "12"),
        ("add", "c", False),  # a is unchanged: no resync due, not delivered
        ("delete", "ns/b", True),
        ("delete", "ns/w", True),
        ("end", "12"),
    ]


def test_late_handler_gets_the_cache_inside_relist_hooks(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    informer.start()
    assert informer.wait_synced(WAIT)
    hooked = Hooked()
    hooked.registration = informer.add_event_handler(hooked)
    assert hooked.registration.wait_synced(WAIT)
    assert informer.wait_idle()
    events = hooked.snapshot()
    assert events[0] == ("begin", "5")
    assert events[3:] == [("end", "5"), ("synced", True)]
    assert sorted(events[1:3]) == [("add", "a", True), ("add", "b", True)]


def test_wait_idle_waits_for_a_late_handler_to_be_admitted(
    informer: SharedIndexInformer,
) -> None:
    informer.start()
    assert informer.wait_synced(WAIT)
    assert informer.wait_idle()
    hooked = Hooked()
    registration = informer.add_event_handler(hooked)
    assert informer.wait_idle()  # no wait_synced first: wait_idle covers the admission
    assert registration.has_synced()
    assert len(hooked.snapshot()) == 5
    assert registration.pending() == 0


def test_a_late_handler_can_skip_the_cache(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    informer.start()
    assert informer.wait_synced(WAIT)
    watch = lw.wait_for_watch()
    hooked = Hooked()
    registration = informer.add_event_handler(hooked, deliver_existing=False)
    assert not registration.deliver_existing
    # Not waiting for the admission: an event queued after add_event_handler
    # returned is never missed (the loop admits the handler before it).
    watch.add(pod("z", "9"))
    settle(informer, "9")
    assert registration.has_synced()
    assert hooked.snapshot() == [("synced", None), ("add", "z", False)]


def test_a_handler_added_before_start_with_deliver_existing_false_gets_the_initial_list(
    informer: SharedIndexInformer,
) -> None:
    hooked = Hooked()
    registration = informer.add_event_handler(hooked, deliver_existing=False)
    informer.start()
    assert registration.wait_synced(WAIT)
    assert informer.wait_idle()
    assert [e[0] for e in hooked.snapshot()] == ["begin", "add", "add", "end", "synced"]


def test_raising_hooks_are_logged_and_delivery_goes_on(
    informer: SharedIndexInformer, lw: FakeListerWatcher, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Hooked):
        def on_relist_begin(self, resource_version: str) -> None:
            super().on_relist_begin(resource_version)
            raise RuntimeError("begin broke")

        def on_synced(self) -> None:
            super().on_synced()
            raise RuntimeError("synced broke")

    broken = Broken()
    registration = informer.add_event_handler(broken)
    informer.start()
    assert registration.wait_synced(WAIT)
    lw.wait_for_watch().add(pod("c", "6"))
    settle(informer, "6")
    assert [e[0] for e in broken.snapshot()] == ["begin", "add", "add", "end", "synced", "add"]
    assert "raised on relist begin of the informer" in caplog.text
    assert "raised on synced of the informer" in caplog.text


def test_a_handler_can_remove_itself(informer: SharedIndexInformer, lw: FakeListerWatcher) -> None:
    class Quitter(Hooked):
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            super().on_add(obj, is_in_initial_list)
            if obj["metadata"]["name"] == "c" and self.registration is not None:
                self.registration.remove()  # on its own listener thread

    quitter = Quitter()
    quitter.registration = informer.add_event_handler(quitter)
    informer.start()
    assert quitter.registration.wait_synced(WAIT)
    watch = lw.wait_for_watch()
    watch.add(pod("c", "6"))
    settle(informer, "6")
    watch.add(pod("d", "7"))
    settle(informer, "7")
    assert quitter.snapshot()[-1] == ("add", "c", False)
    assert quitter.registration not in informer.registrations()
    assert quitter.registration.wait_idle(0)  # removed: never waits
    informer.stop()  # joins the listener thread that removed itself
    assert not any(t.name == quitter.registration.name for t in threading.enumerate())


# --- the processor on its own -------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.got: list[Any] = []

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.got.append(("add", obj, is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        self.got.append(("update", old, new))

    def on_delete(self, obj: Any) -> None:
        self.got.append(("delete", obj))


def make_processor(clock: FakeClock) -> tuple[SharedProcessor, list[int]]:
    joins: list[int] = []
    return SharedProcessor("test", clock, lambda: joins.append(1)), joins


def test_processor_resync_goes_only_to_due_registrations(clock: FakeClock) -> None:
    processor, _ = make_processor(clock)
    fast, slow, never = Sink(), Sink(), Sink()
    regs = [processor.add(h, period) for h, period in ((fast, 10), (slow, 30), (never, 0))]
    processor.start()
    try:
        assert not processor.should_resync()
        clock.advance(10)
        assert processor.should_resync()
        processor.distribute(UpdateNotification("o", "o"), is_sync=True)
        processor.distribute(AddNotification("n", False))
        processor.distribute_relist(
            [UpdateNotification("r", "r"), DeleteNotification("t")], [True, False], "9"
        )
        for reg in regs:
            assert reg.wait_idle(WAIT)
        assert fast.got == [
            ("update", "o", "o"),
            ("add", "n", False),
            ("update", "r", "r"),
            ("delete", "t"),
        ]
        assert slow.got == never.got == [("add", "n", False), ("delete", "t")]
        clock.advance(20)
        assert processor.should_resync()  # fast (due at 20) and slow (due at 30)
    finally:
        processor.stop()


def test_processor_gate_skips_events_but_never_the_sync(clock: FakeClock) -> None:
    processor, _ = make_processor(clock)
    open_gate = [False]
    sink = Sink()
    reg = processor.add(sink, 0, gate=lambda: open_gate[0])
    processor.start()
    try:
        processor.distribute(AddNotification("skipped", True))
        processor.distribute_relist([AddNotification("skipped too", True)], [False], "1")
        processor.distribute_synced()
        assert reg.wait_synced(WAIT)
        open_gate[0] = True
        processor.distribute(AddNotification("seen", False))
        assert reg.wait_idle(WAIT)
        assert sink.got == [("add", "seen", False)]
    finally:
        processor.stop()


def test_processor_admits_joiners_with_a_snapshot_and_skips_removed_ones(
    clock: FakeClock,
) -> None:
    processor, joins = make_processor(clock)
    processor.start()
    try:
        early, late, gone = Sink(), Sink(), Sink()
        reg_early = processor.add(early, 0)
        assert joins == [1]  # the loop is asked to admit it
        assert processor.has_joining()
        assert processor.admit_joining(lambda: ["x", "y"], True, "4")
        assert not processor.has_joining()
        assert not processor.admit_joining(lambda: ["never called"], True, "4")
        reg_late = processor.add(late, 0, deliver_existing=False)
        reg_gone = processor.add(gone, 0)
        reg_gone.remove()
        assert processor.admit_joining(lambda: ["x", "y"], False, "4")
        assert processor.registrations() == [reg_early, reg_late]
        processor.distribute(AddNotification("z", False))
        for reg in (reg_early, reg_late):
            assert reg.wait_idle(WAIT)
        assert early.got == [("add", "x", True), ("add", "y", True), ("add", "z", False)]
        assert reg_early.has_synced()
        assert late.got == [("add", "z", False)]
        assert not reg_late.has_synced()  # admitted before the informer synced
        assert gone.got == []
    finally:
        processor.stop()
    with pytest.raises(InformerStateError, match="stopped"):
        processor.add(Sink(), 0)


def test_a_failing_handler_is_logged_with_the_key_never_the_object(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    class Failing(Sink):
        def on_update(self, old: Any, new: Any) -> None:
            raise ValueError("handler bug")

    processor, _ = make_processor(clock)
    failing = Failing()
    reg = processor.add(failing, 0)
    processor.start()
    try:
        secret = {"metadata": {"name": "s", "namespace": "ns", "resourceVersion": "3"}, "x": "pw"}
        with caplog.at_level(logging.ERROR, logger="informers.cache.registration"):
            processor.distribute(UpdateNotification(secret, secret))
            processor.distribute(DeleteNotification(secret))
            assert reg.wait_idle(WAIT)
        assert failing.got == [("delete", secret)]
        assert "test: handler Failing raised on update of ns/s (rv 3)" in caplog.text
        assert "pw" not in caplog.text
    finally:
        processor.stop()


def test_late_handlers_never_miss_an_event_queued_after_they_were_added(
    informer: SharedIndexInformer, lw: FakeListerWatcher
) -> None:
    """Many joins racing events, with the interpreter switching threads far
    more often than usual: each late handler (replaying the cache or not)
    sees every event queued after add_event_handler returned."""
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        informer.start()
        assert informer.wait_synced(WAIT)
        watch = lw.wait_for_watch()
        joined: list[tuple[Hooked, int]] = []
        for n in range(20):
            hooked = Hooked()
            informer.add_event_handler(hooked, deliver_existing=n % 2 == 0)
            joined.append((hooked, n))
            watch.add(pod(f"x{n}", str(10 + n)))
        settle(informer, str(10 + 19))
    finally:
        sys.setswitchinterval(old_interval)
    everything = {"a", "b", *(f"x{i}" for i in range(20))}
    for hooked, n in joined:
        events = hooked.snapshot()
        live = [e[1] for e in events if e[0] == "add" and not e[2]]
        replayed = [e[1] for e in events if e[0] == "add" and e[2]]
        # Every event from its own on (perhaps a few queued just before it,
        # when the loop admitted it first), in order...
        first = 20 - len(live)
        assert first <= n, (n, live)
        assert live == [f"x{i}" for i in range(first, 20)]
        # ...and, replaying the cache, exactly the rest: nothing twice.
        if n % 2 == 0:
            assert sorted(replayed + live) == sorted(everything), (n, replayed, live)
        else:
            assert replayed == []
