"""A hypothesis state machine for delta queues with :class:`~informers.cache.fifo.RealFIFO`
semantics (needs hypothesis, i.e. the ``test`` extra).

It drives a queue with random ``add``/``update``/``delete``/``replace``/
``resync``/``bookmark`` calls and pops, single or batched (some of whose
``process`` raise), and
checks it against a plain list model of the expected entries, after every step:

* every popped entry equals the model's next entry (deltas, order, tombstones,
  the ``is_in_initial_list`` flag), and is a :class:`~informers.cache.fifo.Relist`
  exactly when the model's entry is a relist (with the listed keys);
* :meth:`~informers.cache.fifo.RealFIFO.wake` makes ``pop_batch`` return before
  its next entry, once per wake-up, and never skips an entry;
* ``len``, :meth:`~informers.cache.fifo.RealFIFO.pending`,
  :meth:`~informers.cache.fifo.RealFIFO.has_synced` and
  :meth:`~informers.cache.fifo.RealFIFO.last_resource_version` agree with the model;
* consumer side: a dict cache built only by applying popped entries (and
  serving as the queue's ``known_objects``) equals the producer's view
  whenever the queue is drained.

Run it as is::

    from informers.testing.stateful_fifo import RealFIFOStateMachine
    TestRealFIFO = RealFIFOStateMachine.TestCase

or against your own queue with :func:`real_fifo_machine` (or by overriding
:meth:`RealFIFOStateMachine.make_fifo`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from informers.cache.fifo import Delta, DeltaType, Entry, RealFIFO, Relist
from informers.cache.protocols import KeyListerGetter
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key

__all__ = ["DictKnownObjects", "FIFOFactory", "RealFIFOStateMachine", "real_fifo_machine"]

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])

#: Builds the queue under test from the consumer cache it must use as
#: ``known_objects``.
FIFOFactory: TypeAlias = Callable[[KeyListerGetter], RealFIFO]


class DictKnownObjects:
    """A consumer cache over a plain dict, usable as ``known_objects``;
    :meth:`apply` applies one popped entry the way an informer does."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}

    def list_keys(self) -> list[str]:
        return list(self.items)

    def get_by_key(self, key: str) -> Any | None:
        return self.items.get(key)

    def apply(self, deltas: Sequence[Delta]) -> None:
        for delta in deltas:
            obj = delta.object
            if delta.type is DeltaType.BOOKMARK:
                continue
            if delta.type is DeltaType.DELETED:
                key = (
                    obj.key
                    if isinstance(obj, DeletedFinalStateUnknown)
                    else meta_namespace_key(obj)
                )
                self.items.pop(key, None)
            else:
                self.items[meta_namespace_key(obj)] = obj


class ProcessFailedError(Exception):
    """Raised on purpose by the machine's failing ``process``."""


@dataclass
class _Expected:
    deltas: list[Delta]
    keys: list[str]
    resource_version: str | None = None
    initial: bool = False
    #: The listed keys, for a relist (``None`` for a single delta).
    listed_keys: list[str] | None = None

    def check(self, entry: Entry) -> None:
        """``entry`` is what this expected entry says it must be."""
        assert entry == self.deltas
        if self.listed_keys is None:
            assert not isinstance(entry, Relist)
        else:
            assert isinstance(entry, Relist)
            assert list(entry.keys) == self.listed_keys
            assert entry.resource_version == self.resource_version


class RealFIFOStateMachine(RuleBasedStateMachine):
    """Model-based test of a delta queue; see the module documentation."""

    def make_fifo(self, known_objects: KeyListerGetter) -> RealFIFO:
        """The queue under test (override to test another implementation)."""
        return RealFIFO(known_objects=known_objects)

    def __init__(self) -> None:
        super().__init__()
        self.cache = DictKnownObjects()
        self.fifo = self.make_fifo(self.cache)
        self.truth: dict[str, Any] = {}
        self.model: list[_Expected] = []
        self.populated = False
        self.initial_count = 0
        self.last_rv = ""
        self.counter = 0
        self.woken = False

    # -- helpers

    def _obj(self, name: str) -> dict[str, Any]:
        self.counter += 1
        return {
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(self.counter)},
            "spec": {"n": self.counter},
        }

    def _pending(self) -> dict[str, Delta]:
        last: dict[str, Delta] = {}
        for entry in self.model:
            for key, delta in zip(entry.keys, entry.deltas, strict=True):
                if delta.type is not DeltaType.BOOKMARK:
                    last[key] = delta
        return last

    def _expect_single(self, delta_type: DeltaType, obj: Any) -> None:
        self.model.append(_Expected([Delta(delta_type, obj)], [meta_namespace_key(obj)]))

    # -- producer rules

    @rule(name=NAMES)
    def add(self, name: str) -> None:
        obj = self._obj(name)
        self.fifo.add(obj)
        self._expect_single(DeltaType.ADDED, obj)
        self.populated = True
        self.truth[meta_namespace_key(obj)] = obj

    @rule(name=NAMES)
    def update(self, name: str) -> None:
        obj = self._obj(name)
        self.fifo.update(obj)
        self._expect_single(DeltaType.UPDATED, obj)
        self.populated = True
        self.truth[meta_namespace_key(obj)] = obj

    @rule(name=NAMES)
    def delete(self, name: str) -> None:
        key = f"ns/{name}"
        obj = self.truth.pop(key, None) or self._obj(name)
        self.fifo.delete(obj)
        self._expect_single(DeltaType.DELETED, obj)
        self.populated = True

    @rule(names=st.frozensets(NAMES))
    def replace(self, names: frozenset[str]) -> None:
        listed = [self._obj(name) for name in sorted(names)]
        rv = str(self.counter)
        self.fifo.replace(listed, rv)
        listed_keys = [meta_namespace_key(o) for o in listed]
        pending = self._pending()
        tombstones = [
            (key, delta.object)
            for key, delta in pending.items()
            if key not in listed_keys and delta.type is not DeltaType.DELETED
        ]
        tombstones += [
            (key, obj)
            for key, obj in self.cache.items.items()
            if key not in listed_keys and key not in pending
        ]
        deltas = [Delta(DeltaType.REPLACED, o) for o in listed]
        deltas += [Delta(DeltaType.DELETED, DeletedFinalStateUnknown(k, o)) for k, o in tombstones]
        deltas.append(Delta(DeltaType.BOOKMARK, rv))
        keys = [*listed_keys, *(k for k, _ in tombstones), ""]
        self.model.append(_Expected(deltas, keys, rv, listed_keys=listed_keys))
        if not self.populated:
            self.populated = True
            for entry in self.model:
                entry.initial = True
            self.initial_count = len(self.model)
        self.truth = dict(zip(listed_keys, listed, strict=True))

    @rule()
    def resync(self) -> None:
        self.fifo.resync()
        pending = self._pending()
        for key, obj in self.cache.items.items():
            if key not in pending:
                self.model.append(_Expected([Delta(DeltaType.SYNC, obj)], [key]))

    @rule()
    def bookmark(self) -> None:
        self.counter += 1
        rv = str(self.counter)
        self.fifo.bookmark(rv)
        self.model.append(_Expected([Delta(DeltaType.BOOKMARK, rv)], [""], rv))

    # -- consumer rules

    def _synced(self) -> bool:
        return self.populated and self.initial_count == 0

    def _consume_expected(self, *, applied: bool) -> _Expected:
        expected = self.model.pop(0)
        if expected.initial:
            self.initial_count -= 1
        if applied and expected.resource_version is not None:
            self.last_rv = expected.resource_version
        return expected

    @precondition(lambda self: self.model)
    @rule()
    def pop(self) -> None:
        flags: list[bool] = []

        def process(deltas: Entry, is_in_initial_list: bool) -> None:
            flags.append(is_in_initial_list)
            self.cache.apply(deltas)

        initial = not self._synced()
        deltas = self.fifo.pop(process)
        expected = self._consume_expected(applied=True)
        expected.check(deltas)
        assert flags == [initial]

    @precondition(lambda self: self.model)
    @rule()
    def pop_with_failing_process(self) -> None:
        """``process`` applies the entry, then raises: the error must reach the
        caller and the entry must not come back."""
        seen: list[Entry] = []

        def process(deltas: Entry, _is_in_initial_list: bool) -> None:
            seen.append(deltas)
            self.cache.apply(deltas)
            raise ProcessFailedError

        try:
            self.fifo.pop(process)
        except ProcessFailedError:
            pass
        else:  # pragma: no cover - a failure of the queue under test
            raise AssertionError("pop() swallowed the error raised by process")
        expected = self._consume_expected(applied=False)
        assert len(seen) == 1
        expected.check(seen[0])

    @precondition(lambda self: self.model)
    @rule(
        max_entries=st.integers(1, 4),
        fail_at=st.none() | st.integers(0, 3),
        wake_at=st.none() | st.integers(0, 3),
        by_delta=st.booleans(),
    )
    def pop_batch(
        self, max_entries: int, fail_at: int | None, wake_at: int | None, by_delta: bool
    ) -> None:
        """:meth:`~informers.cache.fifo.RealFIFO.pop_batch` handles each entry as
        :meth:`pop` would, stops at ``max_entries`` or an empty queue, after a
        failing ``process`` leaves the following entries queued, and returns
        before its next entry once woken (by a ``process`` calling
        :meth:`~informers.cache.fifo.RealFIFO.wake`, or earlier: then at once).
        With ``by_delta``, entries of one delta go to ``process_delta`` with
        the key the queue gave them (``""`` for a bookmark), relists to
        ``process``, in the same order and with the same bookkeeping."""
        if self.woken:
            assert self.fifo.pop_batch(lambda _entry, _initial: None, max_entries) == 0
            self.woken = False
            return
        available = len(self.model)
        calls = 0

        def process(deltas: Entry, is_in_initial_list: bool, key: str | None = None) -> None:
            nonlocal calls
            index, calls = calls, calls + 1
            initial = not self._synced()
            expected = self._consume_expected(applied=index != fail_at)
            expected.check(deltas)
            if by_delta:  # single deltas came through process_delta, with their key
                assert (key is not None) == (expected.listed_keys is None)
                assert key is None or [key] == expected.keys
            assert is_in_initial_list == initial
            self.cache.apply(deltas)
            if index == wake_at:
                self.fifo.wake()
            if index == fail_at:
                raise ProcessFailedError

        def process_delta(delta: Delta, key: str, is_in_initial_list: bool) -> None:
            process([delta], is_in_initial_list, key)

        by: dict[str, Any] = {"process_delta": process_delta} if by_delta else {}
        expected_calls = min(max_entries, available)
        if (
            fail_at is not None
            and fail_at < expected_calls
            and (wake_at is None or fail_at <= wake_at)
        ):
            try:
                self.fifo.pop_batch(process, max_entries, **by)
            except ProcessFailedError:
                pass
            else:  # pragma: no cover - a failure of the queue under test
                raise AssertionError("pop_batch() swallowed the error raised by process")
            assert calls == fail_at + 1
            self.woken = wake_at == fail_at  # woken, then failed: not consumed
        elif wake_at is not None and wake_at < expected_calls:
            assert self.fifo.pop_batch(process, max_entries, **by) == wake_at + 1
            assert calls == wake_at + 1
        else:
            assert self.fifo.pop_batch(process, max_entries, **by) == expected_calls
            assert calls == expected_calls

    @rule()
    def wake(self) -> None:
        self.fifo.wake()
        self.woken = True

    @precondition(lambda self: not self.model and self.woken)
    @rule()
    def pop_batch_woken_on_empty_queue(self) -> None:
        """A wake-up ends one wait of ``pop_batch`` on an empty queue
        (:meth:`pop` calls since did not consume it)."""
        assert self.fifo.pop_batch(lambda _entry, _initial: None) == 0
        self.woken = False

    # -- invariants

    @invariant()
    def queue_matches_model(self) -> None:
        assert len(self.fifo) == len(self.model)
        assert self.fifo.pending() == len(self.model)
        assert self.fifo.has_synced() == self._synced()
        assert self.fifo.last_resource_version() == self.last_rv
        assert not self.fifo.is_closed()

    @invariant()
    def drained_cache_equals_producer_view(self) -> None:
        if not self.model:
            assert self.cache.items == self.truth

    def teardown(self) -> None:
        self.fifo.close()


def real_fifo_machine(factory: FIFOFactory) -> type[RealFIFOStateMachine]:
    """A subclass of :class:`RealFIFOStateMachine` testing the queues
    ``factory(known_objects)`` builds. Run it with its ``TestCase`` attribute
    or :func:`hypothesis.stateful.run_state_machine_as_test`."""

    def make_fifo(self: RealFIFOStateMachine, known_objects: KeyListerGetter) -> RealFIFO:
        return factory(known_objects)

    name = f"{getattr(factory, '__name__', 'FIFO')}StateMachine"
    return type(name, (RealFIFOStateMachine,), {"make_fifo": make_fifo})
