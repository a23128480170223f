"""informers.util.channels: unit tests, a state machine against a deque, and a
multi-threaded producer/consumer property."""

from __future__ import annotations

import threading
from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from informers.errors import ChannelClosedError, ChannelEmptyError, ChannelFullError, InformersError
from informers.util.channels import Channel

JOIN = 5.0


def _start(target: object, name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_put_then_get_is_fifo() -> None:
    ch: Channel[int] = Channel()
    for i in range(5):
        ch.put(i)
    assert len(ch) == 5
    assert [ch.get() for _ in range(5)] == [0, 1, 2, 3, 4]


def test_unbounded_by_default() -> None:
    ch: Channel[int] = Channel()
    assert ch.capacity is None
    for i in range(1000):
        ch.put(i, timeout=0)
    assert len(ch) == 1000


@pytest.mark.parametrize("capacity", [0, -1])
def test_capacity_below_one_is_rejected(capacity: int) -> None:
    with pytest.raises(ValueError, match="capacity"):
        Channel[int](capacity)


def test_put_on_full_channel_times_out_with_channel_full_error() -> None:
    ch: Channel[int] = Channel(1)
    ch.put(1)
    with pytest.raises(ChannelFullError):
        ch.put(2, timeout=0.01)
    with pytest.raises(TimeoutError):  # ChannelFullError is a TimeoutError
        ch.put(2, timeout=0)
    assert len(ch) == 1


def test_get_on_empty_channel_times_out_with_channel_empty_error() -> None:
    ch: Channel[int] = Channel()
    with pytest.raises(ChannelEmptyError):
        ch.get(timeout=0.01)
    with pytest.raises(TimeoutError):
        ch.get(timeout=0)


def test_errors_belong_to_the_library_tree() -> None:
    assert issubclass(ChannelClosedError, InformersError)
    assert issubclass(ChannelFullError, InformersError)
    assert issubclass(ChannelEmptyError, InformersError)


def test_put_into_closed_channel_raises() -> None:
    ch: Channel[int] = Channel()
    ch.close()
    with pytest.raises(ChannelClosedError):
        ch.put(1)


def test_close_is_idempotent_and_keeps_queued_items() -> None:
    ch: Channel[str] = Channel()
    ch.put("a")
    ch.put("b")
    ch.close()
    ch.close()
    assert ch.closed
    assert list(ch) == ["a", "b"]
    with pytest.raises(ChannelClosedError):
        ch.get(timeout=0)


def test_iteration_ends_when_closed_and_drained() -> None:
    ch: Channel[int] = Channel(2)
    received: list[int] = []
    consumer = _start(lambda: received.extend(ch), "test-consumer")
    for i in range(10):
        ch.put(i)
    ch.close()
    consumer.join(JOIN)
    assert not consumer.is_alive()
    assert received == list(range(10))


def test_close_wakes_blocked_getter() -> None:
    ch: Channel[int] = Channel()
    errors: list[BaseException] = []
    waiting = threading.Event()

    def consume() -> None:
        waiting.set()
        try:
            ch.get()
        except ChannelClosedError as err:
            errors.append(err)

    consumer = _start(consume, "test-getter")
    waiting.wait(JOIN)
    ch.close()
    consumer.join(JOIN)
    assert not consumer.is_alive()
    assert len(errors) == 1


def test_close_wakes_blocked_putter() -> None:
    ch: Channel[int] = Channel(1)
    ch.put(0)
    errors: list[BaseException] = []
    waiting = threading.Event()

    def produce() -> None:
        waiting.set()
        try:
            ch.put(1)
        except ChannelClosedError as err:
            errors.append(err)

    producer = _start(produce, "test-putter")
    waiting.wait(JOIN)
    ch.close()
    producer.join(JOIN)
    assert not producer.is_alive()
    assert len(errors) == 1
    assert list(ch) == [0]  # the blocked item never went in


def test_blocked_put_completes_when_room_is_made() -> None:
    ch: Channel[int] = Channel(1)
    ch.put(0)
    producer = _start(lambda: ch.put(1), "test-putter")
    assert ch.get(timeout=JOIN) == 0
    assert ch.get(timeout=JOIN) == 1
    producer.join(JOIN)
    assert not producer.is_alive()


def test_repr_shows_state() -> None:
    ch: Channel[int] = Channel(3)
    ch.put(1)
    assert repr(ch) == "<Channel open 1/3>"
    ch.close()
    assert repr(ch) == "<Channel closed 1/3>"


class ChannelMachine(RuleBasedStateMachine):
    """A single-threaded channel compared step by step with a deque."""

    def __init__(self) -> None:
        super().__init__()
        self.capacity: int | None = None
        self.channel: Channel[int] = Channel()
        self.model: deque[int] = deque()
        self.closed = False
        self.counter = 0

    @precondition(lambda self: self.counter == 0 and not self.model)
    @rule(capacity=st.none() | st.integers(1, 4))
    def recreate(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.channel = Channel(capacity)
        self.closed = False

    @rule()
    def put(self) -> None:
        self.counter += 1
        item = self.counter
        if self.closed:
            with pytest.raises(ChannelClosedError):
                self.channel.put(item, timeout=0)
        elif self.capacity is not None and len(self.model) >= self.capacity:
            with pytest.raises(ChannelFullError):
                self.channel.put(item, timeout=0)
        else:
            self.channel.put(item, timeout=0)
            self.model.append(item)

    @rule()
    def get(self) -> None:
        if self.model:
            assert self.channel.get(timeout=0) == self.model.popleft()
        elif self.closed:
            with pytest.raises(ChannelClosedError):
                self.channel.get(timeout=0)
        else:
            with pytest.raises(ChannelEmptyError):
                self.channel.get(timeout=0)

    @rule()
    def close(self) -> None:
        self.channel.close()
        self.closed = True

    @precondition(lambda self: self.closed)
    @rule()
    def drain_by_iteration(self) -> None:
        assert list(self.channel) == list(self.model)
        self.model.clear()

    @invariant()
    def same_length_and_state(self) -> None:
        assert len(self.channel) == len(self.model)
        assert self.channel.closed == self.closed


TestChannelMachine = ChannelMachine.TestCase


@given(
    capacity=st.none() | st.integers(1, 3),
    per_producer=st.lists(st.integers(0, 15), min_size=1, max_size=3),
    consumers=st.integers(1, 3),
)
def test_every_item_is_got_exactly_once_in_producer_order(
    capacity: int | None, per_producer: list[int], consumers: int
) -> None:
    ch: Channel[tuple[int, int]] = Channel(capacity)
    received: list[list[tuple[int, int]]] = [[] for _ in range(consumers)]

    def produce(producer: int, count: int) -> None:
        for seq in range(count):
            ch.put((producer, seq))

    consumer_threads = [
        _start(lambda out=out: out.extend(ch), f"test-consumer-{i}")
        for i, out in enumerate(received)
    ]
    producer_threads = [
        _start(lambda p=p, n=n: produce(p, n), f"test-producer-{p}")
        for p, n in enumerate(per_producer)
    ]
    for thread in producer_threads:
        thread.join(JOIN)
    ch.close()
    for thread in consumer_threads:
        thread.join(JOIN)
    assert not any(t.is_alive() for t in producer_threads + consumer_threads)

    everything = sorted(item for out in received for item in out)
    assert everything == sorted((p, s) for p, n in enumerate(per_producer) for s in range(n))
    for out in received:  # each consumer sees every producer's items in order
        for producer in range(len(per_producer)):
            seqs = [s for p, s in out if p == producer]
            assert seqs == sorted(seqs)


def test_close_with_discard_drops_what_is_queued() -> None:
    ch: Channel[int] = Channel(capacity=3)
    for i in range(3):
        ch.put(i)
    assert ch.close(discard=True) == 3
    assert len(ch) == 0
    with pytest.raises(ChannelClosedError):
        ch.get(timeout=0)
    assert ch.close(discard=True) == 0  # idempotent


def test_plain_close_keeps_what_is_queued() -> None:
    ch: Channel[int] = Channel()
    ch.put(1)
    assert ch.close() == 0
    assert ch.get(timeout=0) == 1
