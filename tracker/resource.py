"""ResourceTracker[T]: a typed, filtered view of one shared informer, with
channels for its added, updated and deleted events.

The informer caches raw objects (dicts). A tracker converts them to ``T`` only
when asked, memoised per (uid, resourceVersion) (see ``model`` and
``cache_size``), applies an optional filter over ``T``, and fans the
informer's events out to the channels registered with it.

What each channel receives
--------------------------

* **added** — ``T``: an object that was added and passes the filter, or an
  update that makes an object enter the filter.
* **updated** — ``(old, new)`` pairs of ``T``: an update where both states pass
  the filter.
* **deleted** — :class:`TrackerDeleteResource`: an object that was deleted
  while it passed the filter, or an update that makes it leave the view
  (it fails the filter, or no longer converts). ``resource`` is the converted
  final (or new) state, ``raw_resource`` the raw one, ``unknown_state`` False.

An update enters or leaves the view by the rule of every filtered handler
(:func:`informers.cache.handlers.filter_transition`), applied to the converted
states: "passes" means "converts, and the filter accepts it".

  A delete the informer missed arrives as a tombstone: ``unknown_state`` is
  True, ``resource_key`` the key from the tombstone, ``raw_resource`` the last
  raw state the cache knew (possibly stale), and ``resource`` that state
  converted. A delete whose final state does not convert is delivered with
  ``resource=None``: the tracker cannot tell whether the consumer saw the
  object, and a spurious delete by key is safer than a missed one. A delete
  whose final state converts but fails the filter is not delivered.

Objects that fail to convert are reported to ``on_error`` (by default logged
with the kind and key, never the content) and are otherwise left out of
:meth:`ResourceTracker.known_resources` and the added and updated channels;
nothing is ever raised into the informer. Conversion is lazy: an event that
no registered channel would receive is not converted (nor reported). A resync replays the cache as
updates whose old and new states are the same object; they reach the updated
channels like any update.

Slow or full channels
---------------------

Delivery to a channel never waits. An unbounded channel (the default for
:class:`~tracker.Channel`) buffers everything, so a slow consumer costs memory,
not events. A bounded channel that is full **drops** the event for that
channel only; the drop is counted (:meth:`ResourceTracker.dropped`) and logged
as a warning. Neither case delays the informer or the other channels. A
channel closed by its consumer is unregistered on the next delivery.

A channel registered late receives events from then on; use
:meth:`ResourceTracker.known_resources` for the current state.

The tracker is a handler
------------------------

A tracker registers itself on its informer as an ordinary event handler
(:meth:`~informers.SharedIndexInformer.add_event_handler`): it has its own
listener thread and buffer, so a tracker whose filter or conversion is slow
never delays the informer, its other handlers or another tracker, and its own
:meth:`ResourceTracker.has_synced`. Made before the informer starts, it
receives the initial list as added events; made later, it does not replay the
cache (``deliver_existing=False``): its events start at its admission.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Generic, Literal, TypeVar, overload

from informers.cache.handlers import FilterTransition, filter_transition
from informers.cache.informer import SharedIndexInformer
from informers.cache.registration import ResourceEventHandlerRegistration
from informers.errors import ChannelClosedError, ChannelFullError, InformerStateError
from informers.util.channels import Channel
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from tracker._convert import DEFAULT_CACHE_SIZE, Converter, converter_for
from tracker.errors import (
    ChannelRegistrationError,
    ConversionError,
)

__all__ = ["ResourceTracker", "TrackerDeleteResource"]

_logger = logging.getLogger(__name__)

T = TypeVar("T")

_Kind = Literal["added", "updated", "deleted"]


@dataclasses.dataclass(frozen=True)
class TrackerDeleteResource(Generic[T]):
    """What a deleted channel receives (see the module documentation)."""

    #: The converted state: the deleted object, the new state of an object
    #: that left the filter, or a tombstone's last state (``None`` when that
    #: does not convert).
    resource: T | None
    #: The object's key, ``"namespace/name"`` or ``"name"``.
    resource_key: str
    #: The raw object the state was converted from.
    raw_resource: Any = dataclasses.field(repr=False)
    #: True when the informer missed the delete (a tombstone): the state may be stale.
    unknown_state: bool


class ResourceTracker(Generic[T]):
    """A typed, filtered view of one shared informer (see the module documentation).

    ``model`` is what objects are converted to: a ``kubernetes`` client model
    class (``V1Pod``), a pydantic model, a dataclass, or ``dict`` (no
    conversion). ``convert(raw) -> T`` overrides it. ``filter(obj: T) -> bool``
    selects the objects the tracker shows. ``on_error(error)`` receives each
    :class:`~tracker.errors.ConversionError` (default: a warning naming the
    kind and key). ``cache_size`` bounds the conversion memo.

    The tracker is an event handler of the informer from construction until
    :meth:`close` (also a context manager): events are converted, filtered
    and put into the channels on the tracker's own listener thread, in the
    informer's event order, with the informer's default resync period (a
    resync reaches the updated channels). :meth:`on_add`, :meth:`on_update`
    and :meth:`on_delete` are that handler; calling them yourself injects an
    event (they never raise). A tracker made on a stopped informer only
    reads its cache.

    Thread-safety: every method may be called from any thread. One lock guards
    the channel registrations; it is never held while converting, filtering,
    calling ``on_error`` or touching a channel. Reading
    (:meth:`known_resources`) converts on the caller's thread.
    """

    @overload
    def __init__(
        self: ResourceTracker[dict[str, Any]],
        informer: SharedIndexInformer,
        model: type[dict[str, Any]] = ...,
        *,
        convert: None = ...,
        filter: Callable[[dict[str, Any]], bool] | None = ...,
        on_error: Callable[[ConversionError], object] | None = ...,
        cache_size: int = ...,
        kind: str | None = ...,
    ) -> None: ...

    @overload
    def __init__(
        self,
        informer: SharedIndexInformer,
        model: type[T],
        *,
        convert: None = ...,
        filter: Callable[[T], bool] | None = ...,
        on_error: Callable[[ConversionError], object] | None = ...,
        cache_size: int = ...,
        kind: str | None = ...,
    ) -> None: ...

    @overload
    def __init__(
        self,
        informer: SharedIndexInformer,
        model: type[Any] = ...,
        *,
        convert: Callable[[Mapping[str, Any]], T],
        filter: Callable[[T], bool] | None = ...,
        on_error: Callable[[ConversionError], object] | None = ...,
        cache_size: int = ...,
        kind: str | None = ...,
    ) -> None: ...

    def __init__(
        self,
        informer: SharedIndexInformer,
        model: type[Any] = dict,
        *,
        convert: Callable[[Mapping[str, Any]], Any] | None = None,
        filter: Callable[[Any], bool] | None = None,
        on_error: Callable[[ConversionError], object] | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
        kind: str | None = None,
    ) -> None:
        self._informer = informer
        self._kind = kind or _informer_kind(informer)
        conversion = convert if convert is not None else converter_for(model)
        self._convert: Converter[T] = Converter(
            conversion,
            kind=self._kind,
            cache_size=cache_size,
            memoise=not (convert is None and model is dict),
        )
        self._filter = filter
        self._on_error = on_error
        self._lock = threading.Lock()
        # --- guarded by _lock ---------------------------------------------------
        # A channel is registered at most once (under one kind); _drops has an
        # entry for each registered channel, keyed like _channels by id(channel).
        self._channels: dict[_Kind, dict[int, Channel[Any]]] = {
            "added": {},
            "updated": {},
            "deleted": {},
        }
        self._drops: dict[int, int] = {}
        self._closed = False
        # ------------------------------------------------------------------------
        # Last, once everything the handler methods use is in place. Set once.
        self._registration: ResourceEventHandlerRegistration | None = None
        try:
            self._registration = informer.add_event_handler(self, deliver_existing=False)
        except InformerStateError:
            _logger.debug("%s tracker: the informer is stopped; no events", self._kind)

    def __enter__(self) -> ResourceTracker[T]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def informer(self) -> SharedIndexInformer:
        """The informer the tracker views."""
        return self._informer

    @property
    def registration(self) -> ResourceEventHandlerRegistration | None:
        """The tracker's handler registration on the informer (``None`` when
        the informer was stopped already)."""
        return self._registration

    def has_synced(self) -> bool:
        """Whether the tracker has handled the informer's initial list (or,
        made after the informer synced, has been admitted): from then on its
        channels see every change."""
        return self._registration is not None and self._registration.has_synced()

    # --- reading the cache -------------------------------------------------

    def known_resources(self) -> list[T]:
        """The cached objects, converted, that pass the filter (a new list;
        the objects themselves are shared and read-only)."""
        return self._view(self._informer.get_indexer().list())

    def known_resources_by_index(self, index_name: str, index_value: str) -> list[T]:
        """Like :meth:`known_resources`, for the objects under ``index_value``
        of the informer's index ``index_name``. An unknown index raises
        :class:`~informers.errors.UnknownIndexError`."""
        return self._view(self._informer.get_indexer().by_index(index_name, index_value))

    def _view(self, raws: list[Any]) -> list[T]:
        out = []
        for raw in raws:
            key = meta_namespace_key(raw)
            converted = self._try_convert(raw, key)
            if converted is not _FAILED and self._passes(converted, key):
                out.append(converted)
        return out

    # --- channels -----------------------------------------------------------

    def register_added_resource_channel(self, channel: Channel[T]) -> None:
        """Send each added object (and each that enters the filter) to ``channel``."""
        self._register("added", channel)

    def unregister_added_resource_channel(self, channel: Channel[T]) -> None:
        """Stop sending to ``channel`` and close it."""
        self._unregister("added", channel)

    def register_updated_resource_channel(self, channel: Channel[tuple[T, T]]) -> None:
        """Send ``(old, new)`` for each update that stays inside the filter."""
        self._register("updated", channel)

    def unregister_updated_resource_channel(self, channel: Channel[tuple[T, T]]) -> None:
        """Stop sending to ``channel`` and close it."""
        self._unregister("updated", channel)

    def register_deleted_resource_channel(self, channel: Channel[TrackerDeleteResource[T]]) -> None:
        """Send a :class:`TrackerDeleteResource` for each delete (and each
        object that leaves the filter)."""
        self._register("deleted", channel)

    def unregister_deleted_resource_channel(
        self, channel: Channel[TrackerDeleteResource[T]]
    ) -> None:
        """Stop sending to ``channel`` and close it."""
        self._unregister("deleted", channel)

    def dropped(self, channel: Channel[Any]) -> int:
        """How many events a registered bounded ``channel`` missed because it
        was full. Raises :class:`~tracker.errors.ChannelRegistrationError`
        when the channel is not registered."""
        with self._lock:
            try:
                return self._drops[id(channel)]
            except KeyError:
                raise ChannelRegistrationError("channel is not registered") from None

    def close(self) -> None:
        """Detach from the informer and close every registered channel;
        idempotent. Registering a channel afterwards raises
        :class:`~informers.errors.InformerStateError`; reading still works."""
        with self._lock:
            already, self._closed = self._closed, True
        if not already and self._registration is not None:
            self._registration.remove()
        with self._lock:
            channels = [ch for by_id in self._channels.values() for ch in by_id.values()]
            for by_id in self._channels.values():
                by_id.clear()
            self._drops.clear()
        for channel in channels:
            channel.close()

    def _register(self, kind: _Kind, channel: Channel[Any]) -> None:
        if not isinstance(channel, Channel):
            raise TypeError(f"expected a tracker.Channel, not {type(channel).__name__}")
        with self._lock:
            if self._closed:
                raise InformerStateError(f"the {self._kind} tracker is closed")
            if id(channel) in self._drops:
                raise ChannelRegistrationError("channel is registered already")
            self._channels[kind][id(channel)] = channel
            self._drops[id(channel)] = 0

    def _unregister(self, kind: _Kind, channel: Channel[Any]) -> None:
        with self._lock:
            if self._channels[kind].pop(id(channel), None) is None:
                raise ChannelRegistrationError(f"channel is not registered for {kind} events")
            del self._drops[id(channel)]
        channel.close()

    def _wants(self, *kinds: _Kind) -> bool:
        """Whether a channel of one of ``kinds`` is registered: events nobody
        listens to are not converted at all."""
        with self._lock:
            return any(self._channels[kind] for kind in kinds)

    def _send(self, kind: _Kind, item: Any) -> None:
        with self._lock:
            channels = list(self._channels[kind].values())
        for channel in channels:
            try:
                channel.put(item, timeout=0)
            except ChannelFullError:
                self._count_drop(kind, channel)
            except ChannelClosedError:
                self._forget(kind, channel)

    def _count_drop(self, kind: _Kind, channel: Channel[Any]) -> None:
        with self._lock:
            if id(channel) not in self._drops:
                return
            self._drops[id(channel)] += 1
            drops = self._drops[id(channel)]
        if drops == 1 or drops % 100 == 0:
            _logger.warning(
                "%s tracker: a full %s channel dropped %d events so far", self._kind, kind, drops
            )

    def _forget(self, kind: _Kind, channel: Channel[Any]) -> None:
        with self._lock:
            if self._channels[kind].pop(id(channel), None) is not None:
                del self._drops[id(channel)]
        _logger.debug("%s tracker: unregistered a closed %s channel", self._kind, kind)

    # --- the handler (the tracker's listener thread) ----------------------------

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        """Handler: an object was added (see the module documentation)."""
        self._guarded("add", self._on_add, obj)

    def on_update(self, old: Any, new: Any) -> None:
        """Handler: an object changed, or was resynced."""
        self._guarded("update", self._on_update, old, new)

    def on_delete(self, obj: Any) -> None:
        """Handler: an object was deleted (``obj`` may be a tombstone)."""
        self._guarded("delete", self._on_delete, obj)

    def _guarded(self, what: str, method: Callable[..., None], *args: Any) -> None:
        try:
            method(*args)
        except Exception:
            _logger.exception("%s tracker: handling an %s event failed", self._kind, what)

    def _on_add(self, raw: Any) -> None:
        if not self._wants("added"):
            return
        key = meta_namespace_key(raw)
        converted = self._try_convert(raw, key)
        if converted is not _FAILED and self._passes(converted, key):
            self._send("added", converted)

    def _on_update(self, old_raw: Any, new_raw: Any) -> None:
        if not self._wants("added", "updated", "deleted"):
            return
        key = meta_namespace_key(new_raw)
        new = self._try_convert(new_raw, key)
        old = self._try_convert(old_raw, key, report=False)  # reported when it came
        transition = filter_transition(
            old is not _FAILED and self._passes(old, key),
            new is not _FAILED and self._passes(new, key),
        )
        if transition is FilterTransition.UPDATED:
            self._send("updated", (old, new))
        elif transition is FilterTransition.ENTERED:
            self._send("added", new)
        elif transition is FilterTransition.LEFT:  # by the filter, or it no longer converts
            resource = None if new is _FAILED else new
            self._send("deleted", TrackerDeleteResource(resource, key, new_raw, False))

    def _on_delete(self, obj: Any) -> None:
        if not self._wants("deleted"):
            return
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        raw, key = (obj.obj, obj.key) if tombstone else (obj, meta_namespace_key(obj))
        converted = self._try_convert(raw, key)
        if converted is _FAILED:
            # Whether it was shown cannot be told: tell the consumer, by key.
            self._send("deleted", TrackerDeleteResource(None, key, raw, tombstone))
        elif self._passes(converted, key):
            self._send("deleted", TrackerDeleteResource(converted, key, raw, tombstone))

    # --- helpers ---------------------------------------------------------------

    def _passes(self, obj: T, key: str) -> bool:
        if self._filter is None:
            return True
        try:
            return bool(self._filter(obj))
        except Exception:
            _logger.exception(
                "%s tracker: filter raised for %r; treated as not matching", self._kind, key
            )
            return False

    def _try_convert(self, raw: Any, key: str, *, report: bool = True) -> Any:
        try:
            return self._convert(raw, key)
        except ConversionError as err:
            if report:
                self._report(err)
            return _FAILED

    def _report(self, err: ConversionError) -> None:
        if self._on_error is None:
            _logger.warning("%s", err)
            return
        try:
            self._on_error(err)
        except Exception:
            _logger.exception("on_error hook of the %s tracker failed", self._kind)


_FAILED: Any = object()


def _informer_kind(informer: Any) -> str:
    name = getattr(informer, "name", "")
    return name if isinstance(name, str) and name else type(informer).__name__
