"""The mirror's informer source: a relist reaches the database in a few large
transactions, every other event becomes a request for the reconcile path.

:class:`RelistSource` is an :mod:`informers.toolkit.runtime` source (like
:class:`~informers.toolkit.runtime.InformerSource`) whose handler uses the relist
hooks of :mod:`informers.cache.handlers`:

* between ``on_relist_begin`` and ``on_relist_end`` (the informer's initial
  list and every later relist, on the handler's listener thread) the adds,
  updates and deletions are gathered instead of enqueued; at
  ``on_relist_end`` they are handed, whole and in order, to
  :meth:`RelistTarget.apply_relist`, which writes them in transactions of at
  most ``batch_size`` operations;
* outside a relist, each add, update and delete pushes the request of its key
  into the controller's queue, as an informer source does.

Adds (in a relist or not) first go through :meth:`RelistTarget.needs_sync`:
an object whose row already mirrors it is neither gathered nor enqueued (a
restart with nothing to do).

The source has synced when its registration has: the informer synced and the
handler returned from its initial relist, so a controller starts its workers
only after the initial list was written. Thread-safety: the handler runs on
its listener thread only; the source's methods may be called from any
thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from informers.errors import ObjectKeyError
from informers.toolkit.runtime import HandlerSource, Request, Sink
from informers.wire.objects import DeletedFinalStateUnknown
from tracker.errors import ObjectKeyParseError
from tracker.syncapi import ObjectKey

__all__ = ["RelistChange", "RelistSource", "RelistTarget", "key_of"]

log = logging.getLogger(__name__)

#: One gathered change of a relist: the key, and the object as listed (``None``
#: when the relist revealed that the key is gone).
RelistChange = tuple[ObjectKey, "dict[str, Any] | None"]


class RelistTarget(Protocol):
    """Where a :class:`RelistSource` sends what it sees (a
    :class:`~tracker.mirror.controller.MirrorSyncer`)."""

    def needs_sync(self, obj: Any) -> bool:
        """Whether an added object needs writing (false when its row mirrors it)."""
        ...

    def apply_relist(
        self, changes: Sequence[RelistChange], resource_version: str, sink: Sink
    ) -> None:
        """Write one relist's changes; requeue into ``sink`` what could not be
        written. Must not raise."""
        ...


def key_of(obj: Any) -> ObjectKey | None:
    """The key of an object (a raw dict, or anything
    :meth:`~tracker.syncapi.ObjectKey.of` reads) or of a deletion tombstone;
    ``None`` (logged) when it has none. Pure, thread-safe."""
    if type(obj) is dict:  # the informer's raw objects: the fast path
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            name = metadata.get("name")
            namespace = metadata.get("namespace") or ""
            if type(name) is str and name and type(namespace) is str:
                try:
                    return ObjectKey(namespace, name)
                except ObjectKeyParseError as error:
                    log.warning("mirror: an event without a usable key is ignored: %s", error)
                    return None
    try:
        if isinstance(obj, DeletedFinalStateUnknown):
            return ObjectKey.parse(obj.key)
        return ObjectKey.of(obj)
    except (ObjectKeyError, ObjectKeyParseError) as error:
        log.warning("mirror: an event without a usable key is ignored: %s", error)
        return None


class _RelistHandler:
    """The informer handler of a :class:`RelistSource` (see the module docs).
    Called on its listener thread only, so its gathering state needs no lock."""

    def __init__(self, target: RelistTarget, sink: Sink, name: str) -> None:
        self._target = target
        self._sink = sink
        self._name = name
        # Listener thread only: the changes of the relist in progress, or None.
        self._changes: list[RelistChange] | None = None
        self._resource_version = ""

    def _event(self, obj: Any, deleted: bool) -> None:
        key = key_of(obj)
        if key is None:
            return
        if self._changes is not None:
            self._changes.append((key, None if deleted else obj))
        else:
            self._sink.add(Request(key.namespace, key.name))

    def on_relist_begin(self, resource_version: str) -> None:
        self._changes = []
        self._resource_version = resource_version

    def on_relist_end(self, resource_version: str) -> None:
        changes, self._changes = self._changes or [], None
        log.debug("%s: relist at rv %s: %d change(s)", self._name, resource_version, len(changes))
        self._target.apply_relist(changes, resource_version or self._resource_version, self._sink)

    def on_add(self, obj: Any, is_in_initial_list: bool = False) -> None:
        if self._target.needs_sync(obj):
            self._event(obj, deleted=False)

    def on_update(self, old: Any, new: Any) -> None:
        self._event(new, deleted=False)

    def on_delete(self, obj: Any) -> None:
        self._event(obj, deleted=True)


class RelistSource(HandlerSource):
    """The informer source of a mirrored kind (see the module docstring).

    :param informer: the kind's shared informer (one handler is added on
        :meth:`start`, removed on :meth:`stop`).
    :param target: what relists are written to, and asked whether an added
        object needs writing.
    :param name: for logs and errors.

    Satisfies :class:`informers.toolkit.runtime.Source`. Thread-safe; runs once.
    """

    def __init__(self, informer: Any, target: RelistTarget, *, name: str = "") -> None:
        super().__init__(
            informer,
            name=name or f"relist {getattr(informer, 'name', '') or type(informer).__name__}",
        )
        self.target = target

    def add_handler(self, sink: Sink) -> Any:
        """Add the relist-aware handler (no resync: a relist writes every key)."""
        return self.informer.add_event_handler(_RelistHandler(self.target, sink, self.name))
