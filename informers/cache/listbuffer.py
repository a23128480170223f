"""List buffers: how a list being collected is kept until it replaces the cache.

A reflector collects every page of a list (or every event of a streaming
list) before the list replaces the cache in one atomic relist. By default it
keeps them as the decoded objects, in a dict by key, and that is the fastest
way when the cache keeps decoded objects too (the default
:class:`~informers.cache.store.Indexer`: the same dicts end up in the cache).

A cache that keeps its objects in another form (the compact store,
:mod:`informers.cache.compact`, keeps them encoded) can offer a :class:`ListBuffer`
instead: it takes each page as it arrives and keeps it in the cache's own
form, so the decoded page can die at once and a list never exists decoded in
full. Once the list is complete, :meth:`ListBuffer.finish` turns the buffer
into a :class:`PreparedList`: the objects already transformed and keyed, in
list order, that the delta queue (:class:`~informers.cache.fifo.RealFIFO`) queues
in a relist as they are, and that the cache adopts without converting them
again. Reading an item of a prepared list decodes it: code that iterates a
relist works unchanged, one object at a time.

How the parts meet (all optional; without them nothing changes):

* the cache offers ``new_list_buffer(transform) -> ListBuffer | None``
  (``None``: not for this configuration);
* :class:`~informers.cache.fifo.RealFIFO` is given that method as ``list_buffer``
  and offers :meth:`RealFIFO.new_list_buffer
  <informers.cache.fifo.RealFIFO.new_list_buffer>` to its producer, binding its
  transform;
* the :class:`~informers.cache.reflector.Reflector` asks its store for
  ``new_list_buffer()`` at the start of each list and hands the finished
  :class:`PreparedList` to ``store.replace``;
* the informer applies a relist whose objects are a :class:`PreparedList`
  through the cache's ``replace_prepared`` (see
  :class:`~informers.cache.compact.store.CompactStore`).

:class:`Deferred` is the value a notification carries when the object is
decoded only when a handler receives it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any, Protocol, overload

__all__ = ["Deferred", "ListBuffer", "PreparedList"]

_UNSET: Any = object()


class PreparedList(Sequence[Any], abc.ABC):
    """The objects of one complete list, already transformed and keyed, in
    list order, kept in the form of the cache that prepared them.

    ``keys[i]`` is the cache's key of item ``i``. Reading an item
    (``prepared[i]``, iterating) gives a new decoded object each time: the
    list never holds the decoded objects itself. Immutable; safe to read
    from any thread.
    """

    __slots__ = ()

    @property
    @abc.abstractmethod
    def keys(self) -> tuple[str, ...]:
        """The key of every item, in list order."""

    @abc.abstractmethod
    def decode(self, index: int) -> Any:
        """Item ``index``, decoded (a new object on every call)."""

    @abc.abstractmethod
    def deferred(self, index: int) -> Deferred:
        """Item ``index`` as a :class:`Deferred` (decoded on first use)."""

    @abc.abstractmethod
    def resource_version(self, index: int) -> str:
        """The ``metadata.resourceVersion`` of item ``index`` ("" when it has
        none), without decoding it."""

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self.decode(i) for i in range(*index.indices(len(self)))]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError("prepared list index out of range")
        return self.decode(position)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self)} objects>"


class ListBuffer(Protocol):
    """Collects one list for the reflector, by the reflector's key (not
    thread-safe: used by the reflector's thread alone).

    Collecting follows a dict's rules: an item put under a key already there
    replaces it in place (the list keeps the position it was first put at);
    an item put after its key was discarded goes to the end. A transform,
    key, index or codec failure raises from the call that met it; the buffer
    is then discarded by its user (the reflector relists).
    """

    def put_many(self, keys: Sequence[str], objects: Sequence[Any]) -> None:
        """Put ``objects[i]`` under ``keys[i]``, in order (a list page)."""

    def put(self, key: str, obj: Any) -> None:
        """Put one object (an event of a streaming list)."""

    def discard(self, key: str) -> None:
        """Forget the object under ``key`` (none: nothing happens)."""

    def __len__(self) -> int:
        """How many objects the buffer holds."""

    def finish(self) -> PreparedList:
        """The collected list, in order; the buffer is empty afterwards."""


class Deferred:
    """A value computed on first use: ``make(argument)``, kept once made.

    It lives as long as whoever holds it (a notification waiting in a
    handler's buffer): the made value goes with it. Thread-safe in the sense
    that matters here: two threads calling :meth:`get` at once may both
    make the value (equal results, and one is kept); neither blocks.
    """

    __slots__ = ("_argument", "_make", "_value")

    def __init__(self, make: Callable[[Any], Any], argument: Any) -> None:
        self._make = make
        self._argument = argument
        self._value = _UNSET

    @classmethod
    def ready(cls, value: Any) -> Deferred:
        """A deferred whose value is made already."""
        deferred = cls(_identity, value)
        deferred._value = value
        return deferred

    def get(self) -> Any:
        """The value (made now if it was not yet, and kept)."""
        value = self._value
        if value is _UNSET:
            value = self._value = self._make(self._argument)
        return value

    def peek(self) -> Any:
        """The value, made now if it was not yet but not kept (a caller
        that only reads a field of it)."""
        value = self._value
        return self._make(self._argument) if value is _UNSET else value

    def same_source(self, other: Deferred) -> bool:
        """Whether both are made the same way from equal arguments (so their
        values are equal), known without making either: two objects decoded
        by one codec from equal bytes."""
        return self._make == other._make and self._argument == other._argument

    def __repr__(self) -> str:
        return f"<Deferred {'made' if self._value is not _UNSET else 'pending'}>"


def _identity(value: Any) -> Any:
    return value
