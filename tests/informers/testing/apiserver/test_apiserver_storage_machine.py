"""State machine over the emulator's storage: writes, compactions and live
watches (with and without a selector, from now or with initial events), each
watch's stream compared with a model of the events it must receive."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from informers.testing.apiserver._filtering import build_predicate
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._watch import Watcher
from informers.wire.resources import CONFIGMAPS

NAMES = st.sampled_from(["a", "b", "c"])
LABELS = st.sampled_from(["on", "off"])


def _sees(selected: bool, old: str | None, new: str | None, kind: str) -> str | None:
    """The event type a watcher gets (selector ``x=on`` when ``selected``)."""
    if not selected:
        return kind
    was, now = old == "on", new == "on"
    if kind == "ADDED":
        return "ADDED" if now else None
    if kind == "DELETED":
        return "DELETED" if was else None
    if was and now:
        return "MODIFIED"
    return "ADDED" if now else "DELETED" if was else None


class StorageMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.storage = Storage(history_window=50)
        self.labels: dict[str, str] = {}
        # watcher -> (selected, expected events, received events)
        self.watches: list[
            tuple[Watcher, bool, list[tuple[int, str, str]], list[tuple[int, str, str]]]
        ] = []
        self.predicate = build_predicate(CONFIGMAPS, "x=on", None)

    def _record(self, rv: int, kind: str, name: str, old: str | None, new: str | None) -> None:
        for _, selected, expected, _ in self.watches:
            seen = _sees(selected, old, new, kind)
            if seen is not None:
                expected.append((rv, seen, name))

    @rule(name=NAMES, label=LABELS)
    def create(self, name: str, label: str) -> None:
        body = {"metadata": {"name": name, "labels": {"x": label}}}
        if name in self.labels:
            with pytest.raises(StatusError) as err:
                self.storage.create(CONFIGMAPS, body, "default")
            assert err.value.code == 409
            return
        stored = self.storage.create(CONFIGMAPS, body, "default")
        self._record(stored.rv, "ADDED", name, None, label)
        self.labels[name] = label

    @rule(name=NAMES, label=LABELS)
    def update(self, name: str, label: str) -> None:
        if name not in self.labels or self.labels[name] == label:
            return
        body = {"metadata": {"name": name, "labels": {"x": label}}}
        stored = self.storage.update(CONFIGMAPS, body, "default")
        self._record(stored.rv, "MODIFIED", name, self.labels[name], label)
        self.labels[name] = label

    @rule(name=NAMES)
    def delete(self, name: str) -> None:
        if name not in self.labels:
            return
        stored, deleted = self.storage.delete(CONFIGMAPS, name, "default")
        assert deleted
        self._record(stored.rv, "DELETED", name, self.labels.pop(name), None)

    @precondition(lambda self: len(self.watches) < 6)
    @rule(selected=st.booleans(), initial=st.booleans())
    def open_watch(self, selected: bool, initial: bool) -> None:
        watcher, first, _ = self.storage.open_watch(
            CONFIGMAPS,
            "default",
            self.predicate if selected else None,
            from_rv=None,
            initial=initial,
            capacity=1000,
        )
        expected: list[tuple[int, str, str]] = []
        received = [(s.rv, t, s.obj["metadata"]["name"]) for t, s in first]
        if initial:
            for name in sorted(self.labels):
                if not selected or self.labels[name] == "on":
                    stored = self.storage.get(CONFIGMAPS, name, "default")
                    expected.append((stored.rv, "ADDED", name))
        self.watches.append((watcher, selected, expected, received))

    @rule()
    def drain(self) -> None:
        for watcher, _, _, received in self.watches:
            events, _ = self.storage.next_batch(watcher, 0)
            received.extend((s.rv, t, s.obj["metadata"]["name"]) for t, s in events)

    @rule()
    def compact(self) -> None:
        # Compaction drops history, never what open watches still have to send.
        self.storage.compact()

    @invariant()
    def streams_are_prefixes_of_the_model(self) -> None:
        for watcher, _, expected, received in self.watches:
            assert watcher.end is None
            assert received == expected[: len(received)]

    @invariant()
    def list_matches_the_model(self) -> None:
        page = self.storage.list_page(
            CONFIGMAPS, "default", exact_rv=None, limit=0, start_after=None, predicate=None
        )
        got: dict[str, Any] = {
            s.obj["metadata"]["name"]: s.obj["metadata"]["labels"]["x"] for s in page.items
        }
        assert got == self.labels

    def teardown(self) -> None:
        self.drain()
        for watcher, _, expected, received in self.watches:
            assert received == expected
            self.storage.close_watch(watcher)


TestStorageMachine = StorageMachine.TestCase
