"""Informer events as blinker signals: the lightweight way to consume them.

Four named signals; the **sender is the informer**, the objects travel as
keyword arguments::

    added    (sender, obj=..., is_in_initial_list=...)
    updated  (sender, old=..., new=...)
    deleted  (sender, obj=...)      # obj may be a DeletedFinalStateUnknown
    synced   (sender)               # once, when the first list is delivered

Connect to one informer with ``added.connect(receiver, sender=informer)``
(or to all informers without ``sender``). Receivers run on the informer's
signal listener thread (one per informer, like a handler's), in event order;
a receiver that raises is logged, and every other receiver still gets that
event and all later ones.
A receiver sees the events that happen after it connected (an informer with
no receivers at all does not even queue them). Objects are shared and
read-only.
"""

from __future__ import annotations

import logging
from typing import Any

from blinker import NamedSignal, Namespace

__all__ = ["added", "deleted", "synced", "updated"]

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
