"""A closable channel with Go-channel semantics, for threads.

:class:`Channel` is a FIFO handed between threads: producers :meth:`~Channel.put`,
consumers :meth:`~Channel.get` or iterate, and whoever owns the channel
:meth:`~Channel.close`\\ s it to say "nothing more is coming". Closing does not
lose anything: items queued before the close can still be drained, and
iteration ends only once the channel is closed *and* empty.

Differences from a Go channel, on purpose:

* There is no unbuffered (rendezvous) mode: ``capacity`` is ``None``
  (unbounded, the default) or at least 1.
* Putting into a closed channel raises :class:`~informers.errors.ChannelClosedError`
  instead of panicking; so does a ``put`` that is blocked on a full channel
  when the channel gets closed.
* Timeouts raise typed errors (:class:`~informers.errors.ChannelFullError`,
  :class:`~informers.errors.ChannelEmptyError`, both :class:`TimeoutError`);
  ``timeout=0`` makes an operation non-blocking.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

from informers.errors import ChannelClosedError, ChannelEmptyError, ChannelFullError
from informers.util.clock import REAL_CLOCK

__all__ = ["Channel"]

T = TypeVar("T")


class Channel(Generic[T]):
    """A thread-safe FIFO channel that can be closed.

    ``capacity`` bounds how many items may wait in the channel (``None``, the
    default, means unbounded). Every method is safe to call from any thread.

    What blocks: :meth:`put` on a full bounded channel, until a consumer makes
    room, the channel is closed or the timeout passes; :meth:`get` and
    iteration on an empty open channel, until an item arrives, the channel is
    closed or the timeout passes. :meth:`close`, :attr:`closed` and ``len()``
    never block (beyond the short internal lock).
    """

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be None (unbounded) or >= 1, not {capacity}")
        self._capacity = capacity
        # _lock guards _items and _closed. Invariants: len(_items) <= _capacity
        # when bounded; once _closed is True it never becomes False again.
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._items: deque[T] = deque()
        self._closed = False

    @property
    def capacity(self) -> int | None:
        """The bound given at construction, or ``None`` when unbounded."""
        return self._capacity

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called (items may still be queued)."""
        with self._lock:
            return self._closed

    def __len__(self) -> int:
        """How many items are queued right now."""
        with self._lock:
            return len(self._items)

    def __repr__(self) -> str:
        with self._lock:
            state = "closed" if self._closed else "open"
            return f"<Channel {state} {len(self._items)}/{self._capacity or 'unbounded'}>"

    def put(self, item: T, timeout: float | None = None) -> None:
        """Append ``item``; on a full bounded channel, wait for room.

        Raises :class:`~informers.errors.ChannelClosedError` when the channel is
        closed (before or while waiting) and :class:`~informers.errors.ChannelFullError`
        when ``timeout`` seconds pass without room (``timeout=0``: do not wait;
        ``None``: wait as long as it takes).
        """
        deadline = None if timeout is None else REAL_CLOCK.now() + max(0.0, timeout)
        with self._not_full:
            while True:
                if self._closed:
                    raise ChannelClosedError("put on a closed channel")
                if self._capacity is None or len(self._items) < self._capacity:
                    break
                remaining = None if deadline is None else deadline - REAL_CLOCK.now()
                if remaining is not None and remaining <= 0:
                    raise ChannelFullError(f"channel still full after {timeout} s")
                self._not_full.wait(remaining)
            self._items.append(item)
            self._not_empty.notify()

    def get(self, timeout: float | None = None) -> T:
        """Remove and return the oldest item; on an empty channel, wait for one.

        Raises :class:`~informers.errors.ChannelClosedError` when the channel is
        closed and drained (also when that happens while waiting), and
        :class:`~informers.errors.ChannelEmptyError` when ``timeout`` seconds
        pass without an item (``timeout=0``: do not wait).
        """
        deadline = None if timeout is None else REAL_CLOCK.now() + max(0.0, timeout)
        with self._not_empty:
            while not self._items:
                if self._closed:
                    raise ChannelClosedError("channel is closed and drained")
                remaining = None if deadline is None else deadline - REAL_CLOCK.now()
                if remaining is not None and remaining <= 0:
                    raise ChannelEmptyError(f"channel still empty after {timeout} s")
                self._not_empty.wait(remaining)
            item = self._items.popleft()
            self._not_full.notify()
            return item

    def close(self, *, discard: bool = False) -> int:
        """Close the channel; idempotent. Returns how many queued items were
        discarded (always 0 unless ``discard``).

        Wakes every waiting thread: blocked producers get
        :class:`~informers.errors.ChannelClosedError`, blocked consumers drain
        what is left and then get the same error (iteration simply ends).
        With ``discard=True`` what is queued is dropped as well, so consumers
        get the error at once (a bus subscription closes this way).
        """
        with self._lock:
            discarded = 0
            if discard:
                discarded = len(self._items)
                self._items.clear()
            if not self._closed:
                self._closed = True
                self._not_empty.notify_all()
                self._not_full.notify_all()
            return discarded

    def __iter__(self) -> Iterator[T]:
        """Yield items as they arrive, until the channel is closed and drained.

        Blocks between items. Several threads may iterate one channel at once;
        each item goes to exactly one of them.
        """
        while True:
            try:
                yield self.get()
            except ChannelClosedError:
                return
