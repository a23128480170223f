from __future__ import annotations

from typing import Any

import pytest
from blinker import Namespace

from informers.cache.signals import send_to_each
from tests.helpers import obj


def test_send_to_each_runs_every_receiver_even_when_one_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = Namespace().signal("test.added")
    got: list[tuple[str, Any]] = []

    def first(sender: Any, **kwargs: Any) -> None:
        got.append(("first", kwargs["obj"]))

    def broken(sender: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    def last(sender: Any, **kwargs: Any) -> None:
        got.append(("last", kwargs["obj"]))

    for receiver in (first, broken, last):
        signal.connect(receiver)
    send_to_each(signal, "sender", obj={"secret": "s3cr3t"})
    assert sorted(got) == [("first", {"secret": "s3cr3t"}), ("last", {"secret": "s3cr3t"})]
    assert "broken" in caplog.text
    assert "test.added" in caplog.text
    assert "s3cr3t" not in caplog.text  # objects are never logged


def test_send_to_each_respects_the_sender_filter() -> None:
    signal = Namespace().signal("test.synced")
    got: list[Any] = []
    signal.connect(got.append, sender="a", weak=False)
    send_to_each(signal, "b")
    send_to_each(signal, "a")
    assert got == ["a"]


def test_raising_receivers_do_not_stop_the_informer_signals() -> None:
    from informers import SharedIndexInformer
    from informers.cache import signals
    from informers.testing import FakeListerWatcher

    lw = FakeListerWatcher()
    lw.set_objects([obj("a", "default", "1")], "2")
    informer = SharedIndexInformer(lw, name="pods")
    added: list[str] = []

    def broken_synced(sender: Any) -> None:
        raise RuntimeError("synced receiver broke")

    def broken_added(sender: Any, **kwargs: Any) -> None:
        raise RuntimeError("added receiver broke")

    def record_added(sender: Any, obj: Any, is_in_initial_list: bool) -> None:
        added.append(obj["metadata"]["name"])

    signals.synced.connect(broken_synced, sender=informer)
    signals.added.connect(broken_added, sender=informer)
    signals.added.connect(record_added, sender=informer)
    try:
        informer.start()
        assert informer.wait_synced(10)
        lw.wait_for_watch().add(obj("b", "default", "3"))
        assert informer.reflector is not None
        assert informer.reflector.wait_for(lambda s: s.mem.last_sync_rv == "3", 10)
        assert informer.wait_idle(10)
        # Every registration (the signal bridge included) drained its events:
        # the listener thread survived the raising synced receiver.
        assert all(reg.wait_idle(10) for reg in informer.registrations())
        assert added == ["a", "b"]
    finally:
        informer.stop()
        for signal, receiver in (
            (signals.synced, broken_synced),
            (signals.added, broken_added),
            (signals.added, record_added),
        ):
            signal.disconnect(receiver)
