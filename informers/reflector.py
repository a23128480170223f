"""The reflector: keeps a store in step with the API server by listing, then
watching, and recovering from every failure by re-watching or re-listing.

It is written as an explicit state machine. :func:`step` is pure: it takes the
current state and one :data:`Input` (something that happened) and returns the
next state and a tuple of :data:`Action` (what to do now). :class:`Reflector`
is the thin threaded driver that performs the actions (HTTP requests, store
updates, waits) and feeds what happens back into :func:`step`. Every
transition is therefore testable without a server or a thread.

Behaviour (client-go's reflector):

* The first list is at resourceVersion ``"0"`` (served from the watch cache);
  a relist uses the last synced RV; after a 410 or a "too large resource
  version" the RV is unavailable and the list uses ``""`` (most recent).
* Pages of ``page_size`` only when listing at ``""``/``"0"`` or once the server
  answered paginated at ``"0"``; a continue token in an answer is always
  followed; an expired continue token falls back to one full list at the most
  recent state.
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

from __future__ import annotations

import enum
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeAlias

from informers.backoff import ExponentialBackoff
from informers.clock import REAL_CLOCK, Clock, TimerHandle
from informers.errors import (
    ApiError,
    ExpiredError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    WatchDecodeError,
)
from informers.listwatch import (
    ListerWatcher,
    ListOptions,
    RequestAborter,
    WatchStream,
    error_from_status,
    is_connection_refused,
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

log = logging.getLogger(__name__)

#: The annotation on the bookmark that ends the initial events of a streaming list.
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"
#: A watch that ends sooner than this without any event counts as "very short".
SHORT_WATCH_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class ReflectorConfig:
    """Tunables of one reflector (immutable)."""

    #: Kind or resource name, used in log lines and errors.
    description: str = "objects"
    #: Page size of paginated lists (0: never paginate).
    page_size: int = 500
    #: Try streaming lists (``sendInitialEvents``) first.
    use_watch_list: bool = False
    #: The server timeout of a watch is random in [this, 2 * this] seconds.
    min_watch_timeout: float = 300.0
    #: Seconds to wait for the initial-events-end bookmark of a streaming list.
    watch_list_deadline: float = 60.0


# --------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class Memory:
    """What every state carries: facts that survive transitions."""

    #: RV of the last list, or of the last event/bookmark applied ("" = never synced).
    last_sync_rv: str = ""
    #: The last RV was refused (410 / too large): the next list is at "".
    rv_unavailable: bool = False
    #: Streaming lists are still worth trying.
    watch_list: bool = False
    #: The server paginated a list at RV "0": keep paginating relists.
    paginated: bool = False


class Next(enum.Enum):
    """What a backoff leads to."""

    RELIST = "relist"  # list (or streaming list) again
    REWATCH = "rewatch"  # watch again from the last RV
    RESTREAM = "restream"  # streaming list again


@dataclass(frozen=True, slots=True)
class Idle:
    """Not started."""

    mem: Memory = field(default_factory=Memory)


@dataclass(frozen=True, slots=True)
class Listing:
    """A list request is in flight."""

    mem: Memory
    list_rv: str  # the RV the list was asked at
    limit: int  # page size in use (0 = unpaginated)
    continue_token: str = ""  # non-empty while fetching continuation pages
    pages: int = 0  # pages received so far
    full_list_fallback: bool = False  # re-listing in full after an expired continue
    retried_unavailable: bool = False  # already retried at "" after 410 / too large


@dataclass(frozen=True, slots=True)
class Streaming:
    """A streaming list (watch with sendInitialEvents) is collecting objects."""

    mem: Memory
    requested_rv: str
    events: int = 0


@dataclass(frozen=True, slots=True)
class Watching:
    """A watch is open (or being opened) from ``rv``."""

    mem: Memory
    rv: str
    events: int = 0


@dataclass(frozen=True, slots=True)
class BackingOff:
    """Waiting out a backoff before ``then``."""

    mem: Memory
    then: Next


@dataclass(frozen=True, slots=True)
class Stopped:
    """Stopped for good."""

    mem: Memory


ReflectorState: TypeAlias = Idle | Listing | Streaming | Watching | BackingOff | Stopped

# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Begin:
    """The driver starts."""


@dataclass(frozen=True, slots=True)
class ListPage:
    """A list request answered with this parsed list object."""

    page: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ListError:
    """A list request failed."""

    error: BaseException


@dataclass(frozen=True, slots=True)
class WatchOpenError:
    """Opening a watch failed."""

    error: BaseException


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One parsed event from the open watch."""

    event: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class WatchEnded:
    """The open watch ended: cleanly (``error=None``) or with a transport or
    decode error, ``elapsed`` seconds after it was requested."""

    error: BaseException | None
    elapsed: float


@dataclass(frozen=True, slots=True)
class TimerFired:
    """A backoff wait is over."""


@dataclass(frozen=True, slots=True)
class DeadlineFired:
    """The initial-events-end bookmark did not arrive in time."""


@dataclass(frozen=True, slots=True)
class StopRequested:
    """The owner asked the reflector to stop."""


Input: TypeAlias = (
    Begin
    | ListPage
    | ListError
    | WatchOpenError
    | WatchEvent
    | WatchEnded
    | TimerFired
    | DeadlineFired
    | StopRequested
)

# --------------------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class RequestList:
    """Send a list request; answer with :class:`ListPage` or :class:`ListError`."""

    options: ListOptions


@dataclass(frozen=True, slots=True)
class RequestWatch:
    """Open a watch (the driver adds a random ``timeout_seconds``); answer with
    :class:`WatchOpenError`, or with the stream's :class:`WatchEvent` /
    :class:`WatchEnded`. With ``deadline``, feed :class:`DeadlineFired` if it
    passes before :class:`CancelDeadline`."""

    options: ListOptions
    deadline: float | None = None


@dataclass(frozen=True, slots=True)
class CloseWatch:
    """Stop and forget the open watch (no :class:`WatchEnded` follows)."""


@dataclass(frozen=True, slots=True)
class CancelDeadline:
    """The initial-events-end bookmark arrived: disarm the deadline."""


@dataclass(frozen=True, slots=True)
class ClearBuffer:
    """Empty the buffer that collects a list before it replaces the store."""


@dataclass(frozen=True, slots=True)
class Buffer:
    """Add listed objects to the buffer."""

    items: Sequence[Any]


@dataclass(frozen=True, slots=True)
class BufferPut:
    """Add or overwrite one streamed object in the buffer."""

    obj: Any


@dataclass(frozen=True, slots=True)
class BufferDelete:
    """Remove one streamed object from the buffer."""

    obj: Any


@dataclass(frozen=True, slots=True)
class Replace:
    """Replace the store with the buffer's objects at ``resource_version``."""

    resource_version: str


@dataclass(frozen=True, slots=True)
class StoreAdd:
    """Apply an ADDED event."""

    obj: Any


@dataclass(frozen=True, slots=True)
class StoreUpdate:
    """Apply a MODIFIED event."""

    obj: Any


@dataclass(frozen=True, slots=True)
class StoreDelete:
    """Apply a DELETED event."""

    obj: Any


@dataclass(frozen=True, slots=True)
class Backoff:
    """Wait (``retry_after`` seconds when the server said so and it is
    positive, else the next backoff delay), then answer with :class:`TimerFired`."""

    reason: str
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """Pass an error to the watch error handler (and log it)."""

    error: BaseException


Action: TypeAlias = (
    RequestList
    | RequestWatch
    | CloseWatch
    | CancelDeadline
    | ClearBuffer
    | Buffer
    | BufferPut
    | BufferDelete
    | Replace
    | StoreAdd
    | StoreUpdate
    | StoreDelete
    | Backoff
    | Report
)

Step: TypeAlias = tuple[ReflectorState, tuple[Action, ...]]

# --------------------------------------------------------------------------- helpers


def _is_expired_or_too_large(err: BaseException) -> bool:
    return isinstance(err, ExpiredError | ResourceVersionTooLargeError)


def _is_retriable_watch_error(err: BaseException) -> bool:
    return isinstance(err, TooManyRequestsError) or (
        not isinstance(err, ApiError) and is_connection_refused(err)
    )


def _retry_after(err: BaseException) -> float | None:
    return err.retry_after if isinstance(err, ApiError) else None


def _relist_rv(mem: Memory) -> str:
    if mem.rv_unavailable:
        return ""
    return mem.last_sync_rv or "0"


def _start_list(mem: Memory, config: ReflectorConfig, *, retried: bool = False) -> Step:
    rv = _relist_rv(mem)
    limit = config.page_size if (rv in ("", "0") or mem.paginated) else 0
    state = Listing(mem, list_rv=rv, limit=limit, retried_unavailable=retried)
    return state, (ClearBuffer(), RequestList(ListOptions(resource_version=rv, limit=limit)))


def _start_stream(mem: Memory, config: ReflectorConfig) -> Step:
    rv = "" if mem.rv_unavailable else mem.last_sync_rv
    options = ListOptions(
        resource_version=rv,
        resource_version_match="NotOlderThan",
        send_initial_events=True,
        allow_watch_bookmarks=True,
    )
    return Streaming(mem, requested_rv=rv), (
        ClearBuffer(),
        RequestWatch(options, deadline=config.watch_list_deadline),
    )


def _start_initial(mem: Memory, config: ReflectorConfig) -> Step:
    return _start_stream(mem, config) if mem.watch_list else _start_list(mem, config)


def _start_watch(mem: Memory) -> Step:
    options = ListOptions(resource_version=mem.last_sync_rv, allow_watch_bookmarks=True)
    return Watching(mem, rv=mem.last_sync_rv), (RequestWatch(options),)


def _fall_back_to_list(mem: Memory, config: ReflectorConfig, *pre: Action) -> Step:
    """LIST now and on every later relist: the server does not do streaming
    lists (it refused them, or never ended the initial events)."""
    state, actions = _start_list(replace(mem, watch_list=False), config)
    return state, (*pre, *actions)


def _list_this_time(mem: Memory, config: ReflectorConfig, *pre: Action) -> Step:
    """LIST now, but try a streaming list again on the next relist: the
    failure (a 5xx, a broken connection) says nothing about the server's
    support for streaming lists. Making progress beats waiting."""
    state, actions = _start_list(mem, config)
    return state, (*pre, *actions)


#: Statuses with which a server says it does not serve streaming lists.
_STREAMING_UNSUPPORTED = frozenset({400, 403, 404, 405, 406, 415, 422, 501})


def _streaming_unsupported(err: BaseException) -> bool:
    return isinstance(err, ApiError) and err.status in _STREAMING_UNSUPPORTED


def _rv_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    rv = meta.get("resourceVersion") if type(meta) is dict or isinstance(meta, Mapping) else None
    return rv if isinstance(rv, str) else ""


def _newer(rv: str, than: str) -> bool:
    """False only when both RVs are integers and ``rv`` is not above ``than``."""
    if rv.isdigit() and than.isdigit():
        return int(rv) > int(than)
    return True


_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})


def _malformed(
    event: Mapping[str, Any], config: ReflectorConfig
) -> tuple[str, Mapping[str, Any] | None, str | None]:
    """Returns (type, object, problem); ``problem`` is None for a valid event."""
    etype = event.get("type")
    obj = event.get("object")
    if type(etype) is not str and not isinstance(etype, str):
        return "", None, "an event without a type"
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return etype, None, f"a {etype} event without an object"
    if etype == "ERROR":
        return etype, obj, None
    if etype not in (_EVENT_TYPES if type(etype) is str else tuple(_EVENT_TYPES)):
        return etype, obj, f"an event of unknown type {etype!r} (rv {_rv_of(obj) or '?'})"
    meta = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return etype, obj, f"a {etype} event whose object has no metadata"
    if etype == "BOOKMARK":
        if not _rv_of(obj):
            return etype, obj, "a BOOKMARK without a resourceVersion"
        return etype, obj, None
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        return etype, obj, f"a {etype} event whose object has no name (rv {_rv_of(obj) or '?'})"
    return etype, obj, None


def _decode_error(config: ReflectorConfig, problem: str) -> WatchDecodeError:
    return WatchDecodeError(f"watch of {config.description} sent {problem}")


def _invalid_item(items: Sequence[Any]) -> int | None:
    """The index of the first item without a string ``metadata.name``, or None."""
    # Fast path: decoded JSON is plain dicts, checked with cheap type tests;
    # anything else takes the general Mapping checks below.
    for item in items:
        if type(item) is not dict:
            break
        meta = item.get("metadata")
        if type(meta) is not dict or type(meta.get("name")) is not str:
            break
    else:
        return None
    for i, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            return i
    return None


# --------------------------------------------------------------------------- step


def step(state: ReflectorState, inp: Input, config: ReflectorConfig) -> Step:
    """The whole reflector logic: from ``state`` and one input, the next state
    and the actions to perform, in order. Pure: no I/O, no clock, no randomness."""
    if isinstance(inp, StopRequested):
        if isinstance(state, Streaming | Watching):
            return Stopped(state.mem), (CloseWatch(),)
        return Stopped(state.mem), ()
    match state:
        case Watching():  # first: every watch event lands here
            return _step_watching(state, inp, config)
        case Idle(mem):
            if isinstance(inp, Begin):
                return _start_initial(replace(mem, watch_list=config.use_watch_list), config)
        case Listing():
            return _step_listing(state, inp, config)
        case Streaming():
            return _step_streaming(state, inp, config)
        case BackingOff(mem, then):
            if isinstance(inp, TimerFired):
                if then is Next.REWATCH:
                    return _start_watch(mem)
                if then is Next.RESTREAM:
                    return _start_stream(mem, config)
                return _start_initial(mem, config)
        case Stopped():
            return state, ()
    return state, ()  # an input that does not apply to this state is ignored


def _step_listing(state: Listing, inp: Input, config: ReflectorConfig) -> Step:
    mem = state.mem
    if isinstance(inp, ListPage):
        page = inp.page
        meta = page.get("metadata")
        items = page.get("items")
        if items is None:
            items = []
        bad = None if isinstance(items, list) else -1
        if bad is None:
            bad = _invalid_item(items)
        if not isinstance(meta, Mapping) or bad is not None:
            what = (
                "a list without metadata"
                if not isinstance(meta, Mapping)
                else (f"a list whose item {bad} has no metadata.name")
            )
            err = _decode_error(config, what)
            return BackingOff(mem, Next.RELIST), (
                ClearBuffer(),
                Report(err),
                Backoff("malformed list"),
            )
        cont = meta.get("continue")
        actions: list[Action] = [Buffer(items)]
        if isinstance(cont, str) and cont:
            # Followed even when we asked for no limit (a tweak_list_options
            # may have set one): replacing the store with one page of many
            # would delete every object of the pages not fetched.
            nxt = replace(state, continue_token=cont, pages=state.pages + 1)
            actions.append(RequestList(ListOptions(limit=state.limit, continue_token=cont)))
            return nxt, tuple(actions)
        rv = meta.get("resourceVersion")
        rv = rv if isinstance(rv, str) else ""
        paginated = mem.paginated or (state.list_rv == "0" and state.pages > 0)
        mem = replace(mem, last_sync_rv=rv, rv_unavailable=False, paginated=paginated)
        actions.append(Replace(rv))
        watching, watch_actions = _start_watch(mem)
        return watching, (*actions, *watch_actions)
    if isinstance(inp, ListError):
        failure = inp.error
        if (
            isinstance(failure, ExpiredError)
            and state.continue_token
            and not state.full_list_fallback
        ):
            # The continue token expired mid-way: one full list at the latest state.
            nxt = Listing(mem, list_rv="", limit=0, full_list_fallback=True)
            return nxt, (ClearBuffer(), RequestList(ListOptions()))
        if _is_expired_or_too_large(failure) and not state.retried_unavailable:
            return _start_list(replace(mem, rv_unavailable=True), config, retried=True)
        if _is_expired_or_too_large(failure):
            mem = replace(mem, rv_unavailable=True)
        return BackingOff(mem, Next.RELIST), (
            ClearBuffer(),
            Report(failure),
            Backoff("list failed", _retry_after(failure)),
        )
    return state, ()


def _step_streaming(state: Streaming, inp: Input, config: ReflectorConfig) -> Step:
    mem = state.mem
    if isinstance(inp, WatchOpenError):
        err = inp.error
        if _is_retriable_watch_error(err):
            return BackingOff(mem, Next.RESTREAM), (
                Backoff("streaming list refused", _retry_after(err)),
            )
        if _is_expired_or_too_large(err):
            return _start_stream(replace(mem, rv_unavailable=True), config)
        if _streaming_unsupported(err):
            return _fall_back_to_list(mem, config, Report(err))
        return _list_this_time(mem, config, Report(err))
    if isinstance(inp, WatchEvent):
        etype, obj, problem = _malformed(inp.event, config)
        if problem is not None or obj is None:
            err = _decode_error(config, problem or "an invalid event")
            return BackingOff(mem, Next.RESTREAM), (
                CloseWatch(),
                ClearBuffer(),
                Report(err),
                Backoff("malformed event"),
            )
        if etype == "ERROR":
            err = error_from_status(obj)
            if _is_expired_or_too_large(err):
                stream, actions = _start_stream(replace(mem, rv_unavailable=True), config)
                return stream, (CloseWatch(), *actions)
            if isinstance(err, TooManyRequestsError):
                return BackingOff(mem, Next.RESTREAM), (
                    CloseWatch(),
                    Backoff("streaming list throttled", err.retry_after),
                )
            if _streaming_unsupported(err):
                return _fall_back_to_list(mem, config, CloseWatch(), Report(err))
            return _list_this_time(mem, config, CloseWatch(), Report(err))
        nxt = replace(state, events=state.events + 1)
        if etype in ("ADDED", "MODIFIED"):
            return nxt, (BufferPut(obj),)
        if etype == "DELETED":
            return nxt, (BufferDelete(obj),)
        # BOOKMARK
        annotations = obj["metadata"].get("annotations")
        if isinstance(annotations, Mapping) and (
            annotations.get(INITIAL_EVENTS_END_ANNOTATION) == "true"
        ):
            rv = _rv_of(obj)
            mem = replace(mem, last_sync_rv=rv, rv_unavailable=False)
            return Watching(mem, rv=rv, events=nxt.events), (CancelDeadline(), Replace(rv))
        return nxt, ()
    if isinstance(inp, WatchEnded):
        # Ended before the initial-events-end bookmark: the server does not
        # support streaming lists properly. LIST from now on.
        pre: tuple[Action, ...] = (ClearBuffer(),)
        if isinstance(inp.error, WatchDecodeError):
            pre = (*pre, Report(inp.error))
        return _fall_back_to_list(mem, config, *pre)
    if isinstance(inp, DeadlineFired):
        err = WatchDecodeError(
            f"streaming list of {config.description} sent no initial-events-end bookmark "
            f"within {config.watch_list_deadline:g} s; falling back to LIST"
        )
        return _fall_back_to_list(mem, config, CloseWatch(), ClearBuffer(), Report(err))
    return state, ()


def _step_watching(state: Watching, inp: Input, config: ReflectorConfig) -> Step:
    mem = state.mem
    if isinstance(inp, WatchEvent):
        etype, obj, problem = _malformed(inp.event, config)
        if problem is not None or obj is None:
            bad = _decode_error(config, problem or "an invalid event")
            return BackingOff(mem, Next.RELIST), (
                CloseWatch(),
                Report(bad),
                Backoff("malformed event"),
            )
        if etype == "ERROR":
            err = error_from_status(obj)
            if isinstance(err, TooManyRequestsError):
                return BackingOff(mem, Next.REWATCH), (
                    CloseWatch(),
                    Backoff("watch throttled", err.retry_after),
                )
            # 410 relists at the last RV (a list at RV N is at least as new as N).
            return BackingOff(mem, Next.RELIST), (
                CloseWatch(),
                Report(err),
                Backoff("watch error"),
            )
        rv = _rv_of(obj)
        if rv and state.rv and not _newer(rv, state.rv):
            return state, ()  # replayed or out-of-order: never move back in time
        if rv:
            # (direct construction: this is the hot path of every event)
            mem = Memory(rv, mem.rv_unavailable, mem.watch_list, mem.paginated)
        nxt = Watching(mem, rv or state.rv, state.events + 1)
        if etype == "ADDED":
            return nxt, (StoreAdd(obj),)
        if etype == "MODIFIED":
            return nxt, (StoreUpdate(obj),)
        if etype == "DELETED":
            return nxt, (StoreDelete(obj),)
        return nxt, ()  # BOOKMARK: only the RV moves
    if isinstance(inp, WatchOpenError):
        failure = inp.error
        if _is_retriable_watch_error(failure):
            # Reported too (the hook sees every list/watch error), though
            # only backed off: the next watch resumes from the same RV.
            return BackingOff(mem, Next.REWATCH), (
                Report(failure),
                Backoff("watch refused", _retry_after(failure)),
            )
        return BackingOff(mem, Next.RELIST), (Report(failure), Backoff("watch failed"))
    if isinstance(inp, WatchEnded):
        if isinstance(inp.error, WatchDecodeError):
            return BackingOff(mem, Next.RELIST), (Report(inp.error), Backoff("malformed event"))
        if inp.elapsed < SHORT_WATCH_SECONDS and state.events == 0:
            return BackingOff(mem, Next.RELIST), (Backoff("very short watch"),)
        return _start_watch(mem)
    return state, ()


# --------------------------------------------------------------------------- backoff


#: The reflector's retry backoff; the policy lives in :mod:`informers.backoff`.
BackoffManager = ExponentialBackoff


# --------------------------------------------------------------------------- driver


class ReflectorStore(Protocol):
    """What the reflector writes to (a :class:`~informers.fifo.RealFIFO`, or
    any :class:`~informers.store.Store`)."""

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, objects: Iterable[Any], resource_version: str) -> None: ...

    def resync(self) -> None: ...


_BLOCKING = (RequestList, RequestWatch, Backoff)


def _buffer_key(obj: Any) -> tuple[str, str]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(meta, Mapping):
        return ("", "")
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _buffer_items(buf: dict[tuple[str, str], Any], items: Iterable[Any]) -> None:
    """``buf[_buffer_key(item)] = item`` for every item, in order (a later
    duplicate wins), with the key computed inline for plain-dict items whose
    name and namespace are strings (what the list handed over holds)."""
    for item in items:
        if type(item) is dict:
            meta = item.get("metadata")
            if type(meta) is dict:
                name = meta.get("name")
                namespace = meta.get("namespace")
                if type(name) is str and (namespace is None or type(namespace) is str):
                    buf[(namespace or "", name)] = item
                    continue
        buf[_buffer_key(item)] = item


WatchErrorHandler: TypeAlias = Callable[["Reflector", BaseException], None]


class Reflector:
    """Runs :func:`step` against a :class:`~informers.listwatch.ListerWatcher`
    and a store, on the caller's thread (:meth:`run`).

    ``should_resync`` (with ``resync_period`` > 0) is asked every period
    whether to call ``store.resync()``. ``watch_error_handler(reflector,
    error)`` is called (outside any lock) for every reported error; it must
    not block for long. Read accessors are thread-safe. Stopping: set the
    ``stop`` event passed to :meth:`run`; an open watch is interrupted at once.
    When the lister-watcher offers ``abortable(aborter)`` (as
    :class:`~informers.listwatch.HTTPListerWatcher` does), a list or a watch
    request in flight is aborted too (connecting, waiting for headers or
    reading a list); otherwise such a request finishes first.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        store: ReflectorStore,
        *,
        config: ReflectorConfig | None = None,
        name: str = "",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        clock: Clock = REAL_CLOCK,
        backoff: BackoffManager | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config or ReflectorConfig()
        self.name = name or f"reflector-{self.config.description}"
        self._lw = lister_watcher
        # The lister-watcher of the current run (an abortable view of _lw when
        # it offers one) and that run's aborter; written by run() only.
        self._run_lw: ListerWatcher = lister_watcher
        self._aborter: RequestAborter | None = None
        self._store = store
        self._clock = clock
        self._rng = rng or random.Random()
        self._backoff = backoff or BackoffManager(clock=clock, rng=self._rng)
        self._resync_period = resync_period
        self._should_resync = should_resync
        self._cond = threading.Condition()
        # Guarded by _cond:
        self._state: ReflectorState = Idle()
        self._stream: WatchStream | None = None
        self._running = False
        self._error_handler: WatchErrorHandler | None = watch_error_handler
        self._errors: list[BaseException] = []
        # Used only by the driver thread:
        self._buffer: dict[tuple[str, str], Any] = {}
        self._events: Iterator[Mapping[str, Any]] | None = None
        self._watch_started = 0.0
        self._deadline: TimerHandle | None = None
        self._deadline_fired = threading.Event()
        self._resync_timer: TimerHandle | None = None  # guarded by _cond
        # The timer whose callback armed _resync_timer: its thread may still be
        # finishing, so run() cancels (joins) it too. Guarded by _cond.
        self._resync_armer: TimerHandle | None = None
        self._resync_off = False  # guarded by _cond
        self._pending: Input | None = None
        self._done = threading.Event()
        self._waiting = 0  # guarded by _cond: threads in wait_for()
        # Bumped at every published transition (written by the driver thread
        # only; waiters read it under _cond).
        self._transitions = 0

    # ------------------------------------------------------------------ accessors

    @property
    def state(self) -> ReflectorState:
        """The current state (an immutable snapshot)."""
        with self._cond:
            return self._state

    def last_sync_resource_version(self) -> str:
        """The RV of the last list or event applied to the store ("" before
        the first list)."""
        with self._cond:
            return self._state.mem.last_sync_rv

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Replace the error hook (``None``: log only)."""
        with self._cond:
            self._error_handler = handler

    def errors(self) -> list[BaseException]:
        """Errors reported so far (the last 100), oldest first."""
        with self._cond:
            return list(self._errors)

    def wait_for(self, predicate: Callable[[ReflectorState], bool], timeout: float) -> bool:
        """Block until ``predicate(state)`` holds (checked now and after every
        transition) or ``timeout`` real seconds passed; returns whether it
        holds. The predicate runs on the caller's thread without any lock of
        the reflector held."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
        try:
            while True:
                with self._cond:
                    seen, state = self._transitions, self._state
                if predicate(state):
                    return True
                if not self._wait_transition(seen, deadline):
                    break
            with self._cond:
                state = self._state
            return predicate(state)
        finally:
            with self._cond:
                self._waiting -= 1

    def _wait_transition(self, seen: int, deadline: float) -> bool:
        """Wait until a transition after the ``seen``-th one, or the deadline."""
        with self._cond:
            remaining = deadline - time.monotonic()
            return remaining > 0 and self._cond.wait_for(
                lambda: self._transitions != seen, remaining
            )

    # ------------------------------------------------------------------ driver

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set. Blocks; call it on a thread
        of your own (the informer does). Never raises for API or transport
        errors: those are reported and retried."""
        with self._cond:
            if self._running:
                raise RuntimeError(f"{self.name} is running already")
            self._running = True
            self._state = Idle(self._state.mem)
        self._bind_aborter()
        stopper = threading.Thread(
            target=self._interrupt_on, args=(stop,), name=f"{self.name}-stop", daemon=True
        )
        done = self._done = threading.Event()
        stopper.start()
        self._arm_resync(stop)
        inp: Input = Begin()
        try:
            while True:
                if stop.is_set():
                    inp = StopRequested()
                try:
                    self._transition(inp, stop)
                    if isinstance(self.state, Stopped):
                        return
                    nxt = self._pending
                    inp = nxt if nxt is not None else self._next_from_stream(stop)
                except Exception:
                    log.exception("%s: unexpected error; relisting after a backoff", self.name)
                    inp = self._recover(stop)
        finally:
            self._close_stream()
            with self._cond:
                self._resync_off = True
                timers = (self._resync_timer, self._resync_armer)
                self._resync_timer = self._resync_armer = None
            for timer in timers:
                if timer is not None:
                    timer.cancel()
            done.set()
            stopper.join()
            with self._cond:
                self._running = False
                self._cond.notify_all()

    def _bind_aborter(self) -> None:
        """Use an abortable view of the lister-watcher for this run, when it
        offers one (an optional ``abortable(aborter)`` method: the
        :class:`~informers.listwatch.ListerWatcher` protocol does not require it)."""
        bind = getattr(self._lw, "abortable", None)
        if not callable(bind):
            self._run_lw, self._aborter = self._lw, None
            return
        aborter = RequestAborter()
        self._run_lw, self._aborter = bind(aborter), aborter

    def _recover(self, stop: threading.Event) -> Input:
        self._close_stream()
        self._buffer = {}
        self._publish(BackingOff(self.state.mem, Next.RELIST))
        result = self._perform(Backoff("unexpected error"), stop)
        return result if result is not None else TimerFired()

    def _interrupt_on(self, stop: threading.Event) -> None:
        # Normally woken by ``stop``; the timeout only bounds how long this
        # thread outlives a run() that ended by an exception.
        while not stop.wait(0.5) and not self._done.is_set():
            pass
        if stop.is_set():
            aborter = self._aborter
            if aborter is not None:
                aborter.abort()  # a list or watch request in flight
            with self._cond:
                stream = self._stream
            if stream is not None:
                stream.stop()

    def _arm_resync(self, stop: threading.Event) -> None:
        if self._resync_period <= 0:
            return
        with self._cond:
            self._resync_off = False

        def fire() -> None:
            if stop.is_set():
                return
            if self._should_resync is None or self._should_resync():
                try:
                    self._store.resync()
                except Exception:
                    log.exception("%s: resync failed", self.name)
            arm()

        def arm() -> None:
            with self._cond:
                if self._resync_off:
                    return
            # Scheduled outside our lock (the clock has its own); if run()
            # ended meanwhile, cancel what was just scheduled.
            timer = self._clock.call_later(self._resync_period, fire, f"{self.name}-resync")
            if not self._keep_resync_timer(timer):
                timer.cancel()

        arm()

    def _keep_resync_timer(self, timer: TimerHandle) -> bool:
        with self._cond:
            if self._resync_off:
                return False
            # Called from the callback of the current timer (or first by run()).
            self._resync_armer, self._resync_timer = self._resync_timer, timer
            return True

    def _transition(self, inp: Input, stop: threading.Event) -> None:
        state = self._state  # only this thread writes it
        new_state, actions = step(state, inp, self.config)
        # The new state is published once the store actions before the first
        # blocking action (a request or a wait) are done, so a reader that
        # sees an RV in ``state`` also sees its events in the store.
        published = False
        self._pending = None
        for action in actions:
            if not published and isinstance(action, _BLOCKING):
                self._publish(new_state)
                published = True
            result = self._perform(action, stop)
            if result is not None:
                self._pending = result
        if not published:
            self._publish(new_state)

    def _publish(self, state: ReflectorState) -> None:
        # Replacing the reference is atomic; the lock is only needed to wake
        # threads blocked in wait_for() (checked without it: a waiter that
        # registers concurrently re-checks the predicate under the lock).
        self._state = state
        self._transitions += 1
        if self._waiting:
            with self._cond:
                self._cond.notify_all()

    def _perform(self, action: Action, stop: threading.Event) -> Input | None:
        match action:
            case StoreAdd(obj):
                self._store.add(obj)
            case StoreUpdate(obj):
                self._store.update(obj)
            case StoreDelete(obj):
                self._store.delete(obj)
            case Buffer(items):
                _buffer_items(self._buffer, items)
            case BufferPut(obj):
                self._buffer[_buffer_key(obj)] = obj
            case BufferDelete(obj):
                self._buffer.pop(_buffer_key(obj), None)
            case ClearBuffer():
                self._buffer = {}
            case Replace(rv):
                objects, self._buffer = list(self._buffer.values()), {}
                log.info("%s: synced %d objects at rv %s", self.name, len(objects), rv)
                self._store.replace(objects, rv)
            case RequestList(options):
                return self._list(options, stop)
            case RequestWatch(options, deadline):
                return self._open_watch(options, deadline, stop)
            case CloseWatch():
                self._close_stream()
            case CancelDeadline():
                self._cancel_deadline()
            case Backoff(reason, retry_after):
                # A Retry-After of 0 (or less) gives no delay: back off as usual
                # rather than retrying in a tight loop against a throttling server.
                if retry_after is not None and retry_after > 0:
                    delay = retry_after
                else:
                    delay = self._backoff.next_delay()
                log.warning("%s: %s; retrying in %.2f s", self.name, reason, delay)
                return StopRequested() if self._clock.wait(stop, delay) else TimerFired()
            case Report(error):
                self._report(error)
        return None

    def _report(self, error: BaseException) -> None:
        log.warning("%s: %s: %s", self.name, type(error).__name__, error)
        with self._cond:
            self._errors = [*self._errors[-99:], error]
            handler = self._error_handler
        if handler is not None:
            try:
                handler(self, error)
            except Exception:
                log.exception("%s: the watch error handler raised", self.name)

    def _list(self, options: ListOptions, stop: threading.Event) -> Input:
        try:
            return ListPage(self._run_lw.list(options))
        except Exception as exc:  # noqa: BLE001 - any failure is an input to step()
            if stop.is_set():  # most likely our own abort: the stop, not a failure
                log.debug("%s: list ended by the stop: %s", self.name, type(exc).__name__)
                return StopRequested()
            return ListError(exc)

    def _open_watch(
        self, options: ListOptions, deadline: float | None, stop: threading.Event
    ) -> Input | None:
        low = self.config.min_watch_timeout
        timeout = int(low * (self._rng.random() + 1.0))
        options = replace(options, timeout_seconds=max(1, timeout))
        self._watch_started = self._clock.now()
        try:
            stream = self._run_lw.watch(options)
        except Exception as exc:  # noqa: BLE001 - any failure is an input to step()
            if stop.is_set():  # most likely our own abort: the stop, not a failure
                log.debug("%s: watch ended by the stop: %s", self.name, type(exc).__name__)
                return StopRequested()
            return WatchOpenError(exc)
        with self._cond:
            self._stream = stream
        if stop.is_set():
            stream.stop()
        self._events = iter(stream)
        self._deadline_fired.clear()
        if deadline is not None:

            def fire() -> None:
                self._deadline_fired.set()
                stream.stop()

            self._deadline = self._clock.call_later(deadline, fire, f"{self.name}-deadline")
        return None

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _close_stream(self) -> None:
        self._cancel_deadline()
        with self._cond:
            stream, self._stream = self._stream, None
        self._events = None
        if stream is not None:
            stream.stop()

    def _next_from_stream(self, stop: threading.Event) -> Input:
        events = self._events
        if events is None:  # nothing pending and no watch: cannot happen
            raise AssertionError(f"{self.name}: no input after {self._state!r}")
        error: BaseException | None = None
        try:
            return WatchEvent(next(events))
        except StopIteration:
            pass
        except Exception as exc:  # noqa: BLE001 - transport errors end the watch
            error = exc
        if stop.is_set():
            return StopRequested()
        if self._deadline_fired.is_set() and isinstance(self._state, Streaming):
            self._close_stream()
            return DeadlineFired()
        # (A deadline that fired as the end bookmark was being applied stopped
        # a stream that is now a plain watch: that watch simply ended.)
        elapsed = self._clock.now() - self._watch_started
        self._close_stream()
        if error is not None and not isinstance(error, WatchDecodeError):
            log.info("%s: watch ended: %s", self.name, type(error).__name__)
        return WatchEnded(error, elapsed)
