from __future__ import annotations

from typing import Any

import pytest
from blinker import Namespace

from informers.signals import send_to_each


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
