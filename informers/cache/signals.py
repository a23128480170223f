"""Informer events as blinker signals (in-process notifications, not OS signals:
for SIGTERM and SIGINT see the CLI's stop rule, ``informers.cli._common.StopSignals``):
a thin adapter for lightweight receivers.

Four named signals; the **sender is the informer**, the objects travel as
keyword arguments::

    added    (sender, obj=..., is_in_initial_list=...)
    updated  (sender, old=..., new=...)
    deleted  (sender, obj=...)      # obj may be a DeletedFinalStateUnknown
    synced   (sender)               # once, when the first list is delivered

Connect to one informer with ``added.connect(receiver, sender=informer)``
(or to all informers without ``sender``). Every informer registers one
:class:`SignalBridge` as an ordinary handler: receivers run on that handler's
listener thread (one per informer), in event order, so they share it -- a slow
receiver delays the other receivers of that informer's signals (never the
informer itself or its other handlers). A receiver that raises is logged, and
every other receiver still gets that event and all later ones. A receiver sees
the events that happen after it connected (an informer with no receivers at
all does not even queue them). Objects are shared and read-only.

Consumers that do real work (a typed tracker, a database mirror) should be
handlers of their own instead (see :mod:`informers.cache.handlers`): their own
thread and buffer, their own ``has_synced``, and the relist hooks.
"""

from __future__ import annotations

import logging
from typing import Any

from blinker import NamedSignal, Namespace

__all__ = [
    "SignalBridge",
    "added",
    "deleted",
    "has_event_receivers",
    "send_to_each",
    "synced",
    "updated",
]

log = logging.getLogger(__name__)

_signals = Namespace()

#: An object was added: ``obj``, ``is_in_initial_list``.
added = _signals.signal("informers.added", doc="obj, is_in_initial_list")
#: An object changed (or was resynced): ``old``, ``new``.
updated = _signals.signal("informers.updated", doc="old, new")
#: An object was deleted: ``obj`` (or a DeletedFinalStateUnknown tombstone).
deleted = _signals.signal("informers.deleted", doc="obj")
#: The informer delivered its first full list to the signals.
synced = _signals.signal("informers.synced", doc="no arguments")


def send_to_each(signal: NamedSignal, sender: Any, **kwargs: Any) -> None:
    """Send ``signal`` like ``signal.send(sender, **kwargs)``, except that a
    receiver that raises is logged (with the signal's and receiver's names,
    never the objects) and the remaining receivers still run. Blinker's own
    ``send`` stops at the first receiver that raises. Runs the receivers on
    the calling thread; holds no lock."""
    for receiver in signal.receivers_for(sender):
        try:
            receiver(sender, **kwargs)
        except Exception:
            log.exception(
                "receiver %s of signal %s raised",
                getattr(receiver, "__qualname__", type(receiver).__name__),
                signal.name,
            )


def has_event_receivers() -> bool:
    """Whether any receiver (of any sender) is connected to ``added``,
    ``updated`` or ``deleted``: when none is, an informer does not even hand
    its events to its bridge. Cheap; holds no lock."""
    return bool(added.receivers or updated.receivers or deleted.receivers)


class SignalBridge:
    """The handler an informer registers to send the signals, with
    ``sender`` (the informer) as the sender; it sends ``synced`` from its
    ``on_synced`` hook. Uses :func:`send_to_each`, so one raising receiver
    never keeps the others from an event."""

    def __init__(self, sender: Any) -> None:
        self.sender = sender

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if added.receivers:
            send_to_each(added, self.sender, obj=obj, is_in_initial_list=is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        if updated.receivers:
            send_to_each(updated, self.sender, old=old, new=new)

    def on_delete(self, obj: Any) -> None:
        if deleted.receivers:
            send_to_each(deleted, self.sender, obj=obj)

    def on_synced(self) -> None:
        if synced.receivers:
            send_to_each(synced, self.sender)
