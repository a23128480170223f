"""The reflector's pure state machine: :func:`step` takes the current
:data:`ReflectorState` and one :data:`Input` (something that happened) and
returns the next state and a tuple of :data:`Action` (what to do now, in
order). No I/O, no threads, no clock and no randomness: every transition is
testable by feeding inputs. The threaded driver that performs the actions is
:class:`informers.cache.reflector.driver.Reflector`; the behaviour is summarised in
:mod:`informers.cache.reflector`.

All the types here are frozen dataclasses: safe to share between threads.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from informers.cache.reflector.config import ReflectorConfig
from informers.errors import (
    ApiError,
    ExpiredError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    WatchDecodeError,
    error_from_status,
    is_connection_refused,
)
from informers.rest.listwatch import ListOptions
from informers.wire.fastpath import named_items, watch_event

__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "Action",
    "Backoff",
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
    "ReflectorState",
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

#: The annotation on the bookmark that ends the initial events of a streaming list.
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"
#: A watch that ends sooner than this without any event counts as "very short".
SHORT_WATCH_SECONDS = 1.0


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


#: Every state of the reflector (each carries its :class:`Memory` as ``mem``).
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


#: Everything that can happen to the reflector: the argument of :func:`step`.
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
class StoreBookmark:
    """A watch bookmark moved the resource version forward: the store learns,
    in order with the events, that it has seen everything up to it (a store
    without a ``bookmark(resource_version)`` method ignores it)."""

    resource_version: str


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


#: Everything :func:`step` can ask the driver to do.
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
    | StoreBookmark
    | Backoff
    | Report
)

#: What :func:`step` returns: the next state and the actions, in order.
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
    if config.paginate_lists and rv == "0":
        rv = ""  # "0" is answered from the server's cache in one response
    paged = rv in ("", "0") or mem.paginated or bool(config.paginate_lists)
    limit = config.page_size if paged else 0
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
    """False only when both RVs are integers (ASCII digits: ``str.isdigit``
    alone also accepts digits ``int`` refuses, such as superscripts) and
    ``rv`` is not above ``than``."""
    if rv.isdigit() and than.isdigit() and rv.isascii() and than.isascii():
        if rv[0] != "0" != than[0]:
            # No leading zeros: the longer is the larger, and digit strings of
            # one length order as their values (once per watch event: cheaper
            # than two int() conversions).
            return len(rv) > len(than) if len(rv) != len(than) else rv > than
        return int(rv) > int(than)
    return True


_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})


def _malformed(event: object) -> tuple[str, Mapping[str, Any] | None, str | None]:
    """Returns (type, object, problem); ``problem`` is None for a valid event."""
    if type(event) is not dict and not isinstance(event, Mapping):
        return "", None, "an event that is not a JSON object"
    etype = event.get("type")
    obj = event.get("object")
    if type(etype) is not str and not isinstance(etype, str):
        return "", None, "an event without a type"
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return etype, None, f"a {etype} event without an object"
    if etype == "ERROR":
        return etype, obj, None
    if etype not in (_EVENT_TYPES if type(etype) is str else tuple(_EVENT_TYPES)):
        shown = etype if len(etype) <= 40 else f"{etype[:40]}..."
        return etype, obj, f"an event of unknown type {shown!r} (rv {_rv_of(obj)[:40] or '?'})"
    meta = obj.get("metadata")
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return etype, obj, f"a {etype} event whose object has no metadata"
    if etype == "BOOKMARK":
        if not _rv_of(obj):
            return etype, obj, "a BOOKMARK without a resourceVersion"
        return etype, obj, None
    if not isinstance(meta.get("name"), str) or not meta.get("name"):
        return etype, obj, f"a {etype} event whose object has no name (rv {_rv_of(obj) or '?'})"
    if not _namespace_ok(meta):
        return (
            etype,
            obj,
            f"a {etype} event whose namespace is not a string (rv {_rv_of(obj) or '?'})",
        )
    return etype, obj, None


def _namespace_ok(meta: Mapping[str, Any]) -> bool:
    """Whether ``metadata.namespace`` is absent, null or a string (anything
    else has no store key)."""
    namespace = meta.get("namespace")
    return namespace is None or isinstance(namespace, str)


def _decode_error(config: ReflectorConfig, problem: str) -> WatchDecodeError:
    return WatchDecodeError(f"watch of {config.description} sent {problem}")


def _invalid_item(items: Sequence[Any]) -> int | None:
    """The index of the first item without a string ``metadata.name`` (or
    with a ``metadata.namespace`` that is neither null nor a string), or None."""
    if named_items(items):  # decoded JSON: every item is plain and named
        return None
    for i, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            return i
        if not _namespace_ok(meta):
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
        # A custom lister-watcher may hand over anything: a non-object is
        # "a list without metadata" below.
        page = inp.page if isinstance(inp.page, Mapping) else {}
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
                else (f"a list whose item {bad} has no metadata.name or a non-string namespace")
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
        etype, obj, problem = _malformed(inp.event)
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


def _watch_event_step(state: Watching, event: object) -> tuple[Watching, str, Any] | None:
    """The common case of ``step(state, WatchEvent(event), config)``, without
    building the input and the action: for a well-formed ``ADDED``,
    ``MODIFIED``, ``DELETED`` or ``BOOKMARK`` event of plain decoded JSON
    (dicts and strings) it returns ``(next_state, store_action, object)``,
    where ``store_action`` is the event's type when :func:`step` would answer
    the matching :class:`StoreAdd` / :class:`StoreUpdate` /
    :class:`StoreDelete` of ``object`` or :class:`StoreBookmark` of its
    resource version (``BOOKMARK``), and ``""`` when it would answer no
    action (an event that does not move the resource version forward). For
    anything else (an ``ERROR`` event, a malformed event, a value of another
    type) it returns ``None``: ask :func:`step`.

    The driver calls it for every watch event; a property test holds it to
    :func:`step`. Pure, like :func:`step`."""
    recognised = watch_event(event)
    if recognised is None:
        return None
    etype, obj, rv = recognised
    action = etype
    if not rv:
        return _watching(state.mem, state.rv, state.events + 1), action, obj
    if state.rv and not _newer(rv, state.rv):
        return state, "", obj  # replayed or out-of-order: never move back in time
    return _watching(_memory_at(state.mem, rv), rv, state.events + 1), action, obj


# The two objects every watch event builds, made without the dataclass
# __init__: a frozen dataclass sets each field through object.__setattr__,
# which looks the slot up again on every call; setting the slots through
# their descriptors builds the same frozen object in less than half the time.
# Equal to the constructor's result (the property test of _watch_event_step
# compares them with step's).
_new = object.__new__
_MEMORY_SLOTS = tuple(Memory.__dict__[name].__set__ for name in Memory.__slots__)
_WATCHING_SLOTS = tuple(Watching.__dict__[name].__set__ for name in Watching.__slots__)
if Memory.__slots__ != ("last_sync_rv", "rv_unavailable", "watch_list", "paginated") or (
    Watching.__slots__ != ("mem", "rv", "events")
):  # pragma: no cover - a field was added: update _memory_at and _watching
    raise TypeError("reflector.machine: Memory or Watching changed; update the fast builders")


def _memory_at(mem: Memory, rv: str) -> Memory:
    """``replace(mem, last_sync_rv=rv)``, fast."""
    set_rv, set_unavailable, set_watch_list, set_paginated = _MEMORY_SLOTS
    new = _new(Memory)
    set_rv(new, rv)
    set_unavailable(new, mem.rv_unavailable)
    set_watch_list(new, mem.watch_list)
    set_paginated(new, mem.paginated)
    return new


def _watching(mem: Memory, rv: str, events: int) -> Watching:
    """``Watching(mem, rv, events)``, fast."""
    set_mem, set_rv, set_events = _WATCHING_SLOTS
    new = _new(Watching)
    set_mem(new, mem)
    set_rv(new, rv)
    set_events(new, events)
    return new


def _step_watching(state: Watching, inp: Input, config: ReflectorConfig) -> Step:
    mem = state.mem
    if isinstance(inp, WatchEvent):
        etype, obj, problem = _malformed(inp.event)
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
        # BOOKMARK: the RV moves (and the store is told, so a consumer that
        # waits for an RV it will never see an event at is released).
        return nxt, (StoreBookmark(nxt.rv),)
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
