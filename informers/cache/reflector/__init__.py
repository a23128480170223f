"""The reflector: keeps a store in step with the API server by listing, then
watching, and recovering from every failure by re-watching or re-listing.

It is written as an explicit state machine, in two modules:

* :mod:`informers.cache.reflector.machine` -- the pure part.
  :func:`~informers.cache.reflector.machine.step` takes the current state and one
  input (something that happened) and returns the next state and a tuple of
  actions (what to do now). No I/O, no threads, no clock: every transition is
  testable without a server or a thread.
* :mod:`informers.cache.reflector.driver` -- the thin threaded driver,
  :class:`~informers.cache.reflector.driver.Reflector`, that performs the actions
  (HTTP requests, store updates, waits) and feeds what happens back into
  ``step``.

Its tunables are :class:`~informers.cache.reflector.config.ReflectorConfig`. Every
public name of the three modules is importable from this package
(``from informers.cache.reflector import Reflector, step, Watching``).

Behaviour (client-go's reflector):

* The first list is at resourceVersion ``"0"`` (served from the watch cache);
  a relist uses the last synced RV; after a 410 or a "too large resource
  version" the RV is unavailable and the list uses ``""`` (most recent).
* Pages of ``page_size`` only when listing at ``""``/``"0"`` or once the server
  answered paginated at ``"0"``; a continue token in an answer is always
  followed; an expired continue token falls back to one full list at the most
  recent state. With ``paginate_lists`` (which an informer turns on for a
  store with list buffers, :mod:`informers.cache.listbuffer`) every list is paged:
  the first at ``""`` rather than ``"0"`` (which a server answers from its
  cache in one response whatever the limit), relists at their RV.
* A store that is a :class:`~informers.cache.protocols.ListBufferSource`
  (offers ``new_list_buffer()``) gets each list collected in the
  buffer it returns, page by page (else in a dict of the parsed objects), and
  ``replace`` is handed the buffer's prepared list.
* The watch starts at the list RV with bookmarks always requested and a server
  timeout chosen at random in ``[min_watch_timeout, 2 * min_watch_timeout]``.
  A clean end re-watches from the last RV at once; a "very short" watch (ended
  within a second without events) backs off and relists.
* 429 and connection refused re-watch from the same RV after a backoff (the
  server's ``Retry-After`` when given) without relisting.
* Streaming lists (``sendInitialEvents``) when enabled; if the server refuses
  them (400, 403, 404, 405, 406, 415, 422, 501), ends the stream or does not
  send the initial-events-end bookmark within ``watch_list_deadline``, the
  reflector falls back to LIST for good. Any other failure (a 5xx, a broken
  connection) makes it LIST this time and stream again on the next relist, as
  client-go does.
* Malformed events (unknown type, no object, no metadata, an ERROR event) are
  reported with the kind and RV (never the object) and cause a relist; events
  older than the RV already seen on a watch are skipped (a replaying server
  must not move the cache back in time).
* Backoff: 0.8 s doubling to 30 s, jitter 1.0, reset after 2 minutes without
  backing off.
"""

from informers.cache.protocols import ReflectorStore
from informers.cache.reflector.config import ReflectorConfig
from informers.cache.reflector.driver import BackoffManager, Reflector

# Importable from here (informer.py imports it so) though not in __all__.
from informers.cache.reflector.driver import WatchErrorHandler as WatchErrorHandler
from informers.cache.reflector.machine import (
    INITIAL_EVENTS_END_ANNOTATION,
    Action,
    BackingOff,
    Backoff,
    Begin,
    Buffer,
    BufferDelete,
    BufferPut,
    CancelDeadline,
    ClearBuffer,
    CloseWatch,
    DeadlineFired,
    Idle,
    Input,
    ListError,
    Listing,
    ListPage,
    Memory,
    Next,
    ReflectorState,
    Replace,
    Report,
    RequestList,
    RequestWatch,
    Stopped,
    StopRequested,
    StoreAdd,
    StoreBookmark,
    StoreDelete,
    StoreUpdate,
    Streaming,
    TimerFired,
    WatchEnded,
    WatchEvent,
    Watching,
    WatchOpenError,
    step,
)

__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "Action",
    "Backoff",
    "BackoffManager",
    "BackingOff",
    "Begin",
    "Buffer",
    "BufferDelete",
    "BufferPut",
    "CancelDeadline",
    "ClearBuffer",
    "CloseWatch",
    "DeadlineFired",
    "Idle",
    "Input",
    "ListError",
    "ListPage",
    "Listing",
    "Memory",
    "Next",
    "Reflector",
    "ReflectorConfig",
    "ReflectorState",
    "ReflectorStore",
    "Replace",
    "Report",
    "RequestList",
    "RequestWatch",
    "StopRequested",
    "StoreAdd",
    "StoreBookmark",
    "StoreDelete",
    "StoreUpdate",
    "Stopped",
    "Streaming",
    "TimerFired",
    "WatchEnded",
    "WatchEvent",
    "WatchOpenError",
    "Watching",
    "step",
]
