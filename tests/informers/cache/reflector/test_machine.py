"""informers.cache.reflector.machine: every transition of the reflector's pure step
function, without I/O, and properties over reachable states."""

from __future__ import annotations

from typing import Any
from unittest.mock import ANY

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from informers.cache.reflector.config import ReflectorConfig
from informers.cache.reflector.machine import (
    INITIAL_EVENTS_END_ANNOTATION,
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
    _newer,
    _watch_event_step,
    step,
)
from informers.errors import (
    ApiError,
    ExpiredError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    WatchDecodeError,
)
from informers.rest.listwatch import ListOptions
from tests.helpers import pod

CFG = ReflectorConfig(description="pods", page_size=2)
STREAM_CFG = ReflectorConfig(description="pods", use_watch_list=True, watch_list_deadline=7.0)


def page(items: list[Any], rv: str, cont: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": rv}
    if cont:
        meta["continue"] = cont
    return {"kind": "PodList", "metadata": meta, "items": items}


def watching(rv: str = "10", events: int = 0, **mem: Any) -> Watching:
    return Watching(Memory(last_sync_rv=rv, **mem), rv=rv, events=events)


def watch_opts(rv: str) -> ListOptions:
    return ListOptions(resource_version=rv, allow_watch_bookmarks=True)


# ---------------------------------------------------------------- start


def test_begin_lists_at_rv_0_paginated() -> None:
    state, actions = step(Idle(), Begin(), CFG)
    assert state == Listing(Memory(), list_rv="0", limit=2)
    assert actions == (ClearBuffer(), RequestList(ListOptions(resource_version="0", limit=2)))


def test_begin_streams_when_watch_list_enabled() -> None:
    state, actions = step(Idle(), Begin(), STREAM_CFG)
    assert state == Streaming(Memory(watch_list=True), requested_rv="")
    opts = ListOptions(
        resource_version="",
        resource_version_match="NotOlderThan",
        send_initial_events=True,
        allow_watch_bookmarks=True,
    )
    assert actions == (ClearBuffer(), RequestWatch(opts, deadline=7.0))


def test_idle_ignores_other_inputs() -> None:
    assert step(Idle(), TimerFired(), CFG) == (Idle(), ())


@pytest.mark.parametrize(
    "state",
    [
        Idle(),
        Listing(Memory(), "0", 2),
        BackingOff(Memory(), Next.RELIST),
        Stopped(Memory()),
    ],
)
def test_stop_without_watch(state: ReflectorState) -> None:
    assert step(state, StopRequested(), CFG) == (Stopped(state.mem), ())


@pytest.mark.parametrize("state", [watching(), Streaming(Memory(), "")])
def test_stop_closes_the_watch(state: ReflectorState) -> None:
    assert step(state, StopRequested(), CFG) == (Stopped(state.mem), (CloseWatch(),))


def test_stopped_is_final() -> None:
    s = Stopped(Memory(last_sync_rv="5"))
    assert step(s, Begin(), CFG) == (s, ())


# ---------------------------------------------------------------- listing


def test_list_page_with_continue_requests_next_page_without_rv() -> None:
    s = Listing(Memory(), "0", 2)
    items = [pod("a", "3"), pod("b", "4")]
    state, actions = step(s, ListPage(page(items, "9", cont="tok")), CFG)
    assert state == Listing(Memory(), "0", 2, continue_token="tok", pages=1)
    assert actions == (Buffer(items), RequestList(ListOptions(limit=2, continue_token="tok")))


def test_last_page_replaces_and_watches_from_list_rv() -> None:
    s = Listing(Memory(rv_unavailable=True), "", 2, continue_token="tok", pages=1)
    items = [pod("c", "5")]
    state, actions = step(s, ListPage(page(items, "9")), CFG)
    mem = Memory(last_sync_rv="9")
    assert state == Watching(mem, rv="9")
    assert actions == (Buffer(items), Replace("9"), RequestWatch(watch_opts("9")))


def test_paginated_answer_at_rv_0_is_remembered() -> None:
    s = Listing(Memory(), "0", 2, continue_token="tok", pages=1)
    state, _ = step(s, ListPage(page([], "9")), CFG)
    assert state.mem.paginated
    # and relists at a specific RV keep paginating
    state, actions = step(BackingOff(state.mem, Next.RELIST), TimerFired(), CFG)
    assert actions[-1] == RequestList(ListOptions(resource_version="9", limit=2))


def test_relist_at_last_rv_is_not_paginated() -> None:
    state, actions = step(BackingOff(Memory(last_sync_rv="9"), Next.RELIST), TimerFired(), CFG)
    assert state == Listing(Memory(last_sync_rv="9"), "9", 0)
    assert actions == (ClearBuffer(), RequestList(ListOptions(resource_version="9")))


def test_relist_after_unavailable_rv_is_at_empty_rv_paginated() -> None:
    mem = Memory(last_sync_rv="9", rv_unavailable=True)
    _, actions = step(BackingOff(mem, Next.RELIST), TimerFired(), CFG)
    assert actions[-1] == RequestList(ListOptions(resource_version="", limit=2))


PAGED_CFG = ReflectorConfig(description="pods", page_size=2, paginate_lists=True)


def test_paginate_lists_lists_first_at_empty_rv() -> None:
    """rv "0" is answered from the server's cache in one response: asked to
    paginate, the first list is a consistent read in pages."""
    state, actions = step(Idle(), Begin(), PAGED_CFG)
    assert state == Listing(Memory(), list_rv="", limit=2)
    assert actions == (ClearBuffer(), RequestList(ListOptions(resource_version="", limit=2)))


def test_paginate_lists_relists_at_the_last_rv_in_pages() -> None:
    mem = Memory(last_sync_rv="9")
    state, actions = step(BackingOff(mem, Next.RELIST), TimerFired(), PAGED_CFG)
    assert state == Listing(mem, "9", 2)
    assert actions == (ClearBuffer(), RequestList(ListOptions(resource_version="9", limit=2)))
    # a resourceVersion the server no longer has: in pages at "" (as always)
    state, actions = step(state, ListError(ExpiredError("gone")), PAGED_CFG)
    assert actions[-1] == RequestList(ListOptions(resource_version="", limit=2))


def test_page_without_limit_still_follows_continue() -> None:
    # A tweak_list_options may set a limit on a list the reflector asked
    # unpaginated: the answer is then one page of many, and replacing the
    # store with it would delete every object of the later pages.
    s = Listing(Memory(last_sync_rv="5"), "5", 0)
    items = [pod("a", "3")]
    state, actions = step(s, ListPage(page(items, "9", cont="tok")), CFG)
    assert state == Listing(Memory(last_sync_rv="5"), "5", 0, continue_token="tok", pages=1)
    assert actions == (Buffer(items), RequestList(ListOptions(continue_token="tok")))


def test_list_without_items_key_is_empty() -> None:
    state, actions = step(
        Listing(Memory(), "0", 2), ListPage({"metadata": {"resourceVersion": "3"}}), CFG
    )
    assert isinstance(state, Watching)
    assert actions[0] == Buffer([])


@pytest.mark.parametrize(
    "bad",
    [
        {"items": []},
        {"metadata": {"resourceVersion": "1"}, "items": [{"spec": {}}]},
        {"metadata": {"resourceVersion": "1"}, "items": "nope"},
        {"metadata": {"resourceVersion": "1"}, "items": [{"metadata": {"name": 3}}]},
        # a namespace that is not a string has no store key (found by fuzzing)
        {
            "metadata": {"resourceVersion": "1"},
            "items": [{"metadata": {"name": "a", "namespace": []}}],
        },
    ],
)
def test_malformed_list_reports_and_backs_off(bad: dict[str, Any]) -> None:
    state, actions = step(Listing(Memory(), "0", 2), ListPage(bad), CFG)
    assert state == BackingOff(Memory(), Next.RELIST)
    assert isinstance(actions[1], Report)
    assert isinstance(actions[1].error, WatchDecodeError)
    assert actions[2] == Backoff("malformed list")


def test_expired_continue_falls_back_to_full_list() -> None:
    s = Listing(Memory(), "", 2, continue_token="tok", pages=3)
    state, actions = step(s, ListError(ExpiredError(410, "Expired")), CFG)
    assert state == Listing(Memory(), "", 0, full_list_fallback=True)
    assert actions == (ClearBuffer(), RequestList(ListOptions()))


def test_expired_full_list_fallback_retries_at_empty_rv_then_backs_off() -> None:
    s = Listing(Memory(), "", 0, full_list_fallback=True, retried_unavailable=True)
    err = ExpiredError(410, "Expired")
    state, actions = step(s, ListError(err), CFG)
    assert state == BackingOff(Memory(rv_unavailable=True), Next.RELIST)
    assert actions == (ClearBuffer(), Report(err), Backoff("list failed", None))


@pytest.mark.parametrize(
    "err", [ExpiredError(410, "Expired"), ResourceVersionTooLargeError(504, "Timeout")]
)
def test_unavailable_rv_relists_at_empty_rv_at_once(err: ApiError) -> None:
    s = Listing(Memory(last_sync_rv="9"), "9", 0)
    state, actions = step(s, ListError(err), CFG)
    mem = Memory(last_sync_rv="9", rv_unavailable=True)
    assert state == Listing(mem, "", 2, retried_unavailable=True)
    assert actions == (ClearBuffer(), RequestList(ListOptions(resource_version="", limit=2)))
    # a second failure backs off and keeps the RV unavailable
    state, actions = step(state, ListError(err), CFG)
    assert state == BackingOff(mem, Next.RELIST)
    assert isinstance(actions[-1], Backoff)


def test_list_429_backs_off_with_retry_after() -> None:
    err = TooManyRequestsError(429, "TooManyRequests", retry_after=3.0)
    state, actions = step(Listing(Memory(), "0", 2), ListError(err), CFG)
    assert state == BackingOff(Memory(), Next.RELIST)
    assert actions == (ClearBuffer(), Report(err), Backoff("list failed", 3.0))


def test_list_transport_error_backs_off() -> None:
    err = ConnectionResetError()
    state, actions = step(Listing(Memory(), "0", 2), ListError(err), CFG)
    assert state == BackingOff(Memory(), Next.RELIST)
    assert actions[-1] == Backoff("list failed", None)


def test_listing_ignores_watch_inputs() -> None:
    s = Listing(Memory(), "0", 2)
    assert step(s, WatchEnded(None, 5), CFG) == (s, ())


# ---------------------------------------------------------------- watching


@pytest.mark.parametrize(
    ("etype", "action"), [("ADDED", StoreAdd), ("MODIFIED", StoreUpdate), ("DELETED", StoreDelete)]
)
def test_watch_events_apply_and_advance_rv(etype: str, action: type) -> None:
    obj = pod("a", "11")
    state, actions = step(watching("10"), WatchEvent({"type": etype, "object": obj}), CFG)
    assert state == Watching(Memory(last_sync_rv="11"), rv="11", events=1)
    assert actions == (action(obj),)


def test_bookmark_advances_rv_and_tells_the_store() -> None:
    # The store (the informer's delta queue) is told, so the informer's
    # applied resource version moves too: a read-your-writes wait on an RV
    # the informer sees no event at is released by the next bookmark.
    ev = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "20"}}}
    state, actions = step(watching("10"), WatchEvent(ev), CFG)
    assert state == Watching(Memory(last_sync_rv="20"), rv="20", events=1)
    assert actions == (StoreBookmark("20"),)
    old = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}
    assert step(watching("10"), WatchEvent(old), CFG) == (watching("10"), ())


def test_replayed_old_event_is_skipped() -> None:
    s = watching("10")
    assert step(s, WatchEvent({"type": "MODIFIED", "object": pod("a", "9")}), CFG) == (s, ())
    assert step(s, WatchEvent({"type": "MODIFIED", "object": pod("a", "10")}), CFG) == (s, ())


def test_non_numeric_rvs_are_not_compared() -> None:
    state, actions = step(
        watching("abc"), WatchEvent({"type": "ADDED", "object": pod("a", "1")}), CFG
    )
    assert state.mem.last_sync_rv == "1"
    assert actions == (StoreAdd(pod("a", "1")),)


def test_event_without_rv_keeps_rv() -> None:
    obj = {"metadata": {"name": "a"}}
    state, actions = step(watching("10"), WatchEvent({"type": "ADDED", "object": obj}), CFG)
    assert state == Watching(Memory(last_sync_rv="10"), rv="10", events=1)
    assert actions == (StoreAdd(obj),)


@pytest.mark.parametrize(
    "event",
    [
        {"object": pod("a", "11")},
        {"type": "ADDED"},
        {"type": "ADDED", "object": "x"},
        {"type": "WEIRD", "object": pod("a", "11")},
        {"type": "ADDED", "object": {"spec": {}}},
        {"type": "MODIFIED", "object": {"metadata": {"resourceVersion": "11"}}},
        {"type": "BOOKMARK", "object": {"metadata": {}}},
        # found by fuzzing: the store could not key it
        {"type": "ADDED", "object": {"metadata": {"name": "0", "namespace": []}}},
        {"type": "DELETED", "object": {"metadata": {"name": "0", "namespace": 7}}},
    ],
)
def test_malformed_event_closes_reports_and_relists(event: dict[str, Any]) -> None:
    state, actions = step(watching("10"), WatchEvent(event), CFG)
    assert state == BackingOff(Memory(last_sync_rv="10"), Next.RELIST)
    assert actions[0] == CloseWatch()
    assert isinstance(actions[1], Report)
    assert isinstance(actions[1].error, WatchDecodeError)
    assert "pods" in str(actions[1].error)
    assert "spec" not in str(actions[1].error)  # never the object
    assert actions[2] == Backoff("malformed event")


def _error_event(code: int, reason: str) -> WatchEvent:
    return WatchEvent(
        {"type": "ERROR", "object": {"kind": "Status", "code": code, "reason": reason}}
    )


def test_error_410_relists_at_last_rv() -> None:
    state, actions = step(watching("10"), _error_event(410, "Expired"), CFG)
    assert state == BackingOff(Memory(last_sync_rv="10"), Next.RELIST)
    assert actions[0] == CloseWatch()
    assert isinstance(actions[1], Report)
    assert isinstance(actions[1].error, ExpiredError)
    # the relist is at the last RV (not "")
    _, actions = step(state, TimerFired(), CFG)
    assert actions[-1] == RequestList(ListOptions(resource_version="10"))


def test_error_429_rewatches_without_relist() -> None:
    ev = WatchEvent(
        {
            "type": "ERROR",
            "object": {
                "code": 429,
                "reason": "TooManyRequests",
                "details": {"retryAfterSeconds": 2},
            },
        }
    )
    state, actions = step(watching("10"), ev, CFG)
    assert state == BackingOff(Memory(last_sync_rv="10"), Next.REWATCH)
    assert actions == (CloseWatch(), Backoff("watch throttled", 2.0))
    state, actions = step(state, TimerFired(), CFG)
    assert state == Watching(Memory(last_sync_rv="10"), rv="10")
    assert actions == (RequestWatch(watch_opts("10")),)


def test_error_500_relists() -> None:
    state, actions = step(watching("10"), _error_event(500, "InternalError"), CFG)
    assert state == BackingOff(Memory(last_sync_rv="10"), Next.RELIST)
    assert actions[-1] == Backoff("watch error")


def test_clean_end_rewatches_from_last_rv_at_once() -> None:
    state, actions = step(watching("12", events=3), WatchEnded(None, 300.0), CFG)
    assert state == Watching(Memory(last_sync_rv="12"), rv="12")
    assert actions == (RequestWatch(watch_opts("12")),)


def test_transport_error_mid_stream_rewatches() -> None:
    state, actions = step(watching("12", events=1), WatchEnded(ConnectionResetError(), 0.2), CFG)
    assert isinstance(state, Watching)
    assert actions == (RequestWatch(watch_opts("12")),)


def test_very_short_watch_backs_off_and_relists() -> None:
    state, actions = step(watching("12"), WatchEnded(None, 0.1), CFG)
    assert state == BackingOff(Memory(last_sync_rv="12"), Next.RELIST)
    assert actions == (Backoff("very short watch"),)


def test_decode_error_reports_and_relists() -> None:
    err = WatchDecodeError("bad line")
    state, actions = step(watching("12", events=4), WatchEnded(err, 30.0), CFG)
    assert state == BackingOff(Memory(last_sync_rv="12"), Next.RELIST)
    assert actions == (Report(err), Backoff("malformed event"))


@pytest.mark.parametrize(
    "err",
    [
        TooManyRequestsError(429, "TooManyRequests", retry_after=5.0),
        ConnectionRefusedError(111, "Connection refused"),
    ],
)
def test_watch_refused_rewatches_after_backoff(err: BaseException) -> None:
    state, actions = step(watching("12"), WatchOpenError(err), CFG)
    assert state == BackingOff(Memory(last_sync_rv="12"), Next.REWATCH)
    expected = 5.0 if isinstance(err, ApiError) else None
    assert actions == (Report(err), Backoff("watch refused", expected))


def test_watch_open_failure_relists() -> None:
    err = ApiError(403, "Forbidden")
    state, actions = step(watching("12"), WatchOpenError(err), CFG)
    assert state == BackingOff(Memory(last_sync_rv="12"), Next.RELIST)
    assert actions == (Report(err), Backoff("watch failed"))


def test_watching_ignores_list_inputs() -> None:
    s = watching()
    assert step(s, ListPage(page([], "1")), CFG) == (s, ())


# ---------------------------------------------------------------- streaming lists


def streaming(rv: str = "") -> Streaming:
    return Streaming(Memory(watch_list=True, last_sync_rv=rv), requested_rv=rv)


def test_stream_buffers_objects() -> None:
    obj = pod("a", "3")
    state, actions = step(streaming(), WatchEvent({"type": "ADDED", "object": obj}), STREAM_CFG)
    assert state == Streaming(Memory(watch_list=True), "", events=1)
    assert actions == (BufferPut(obj),)
    _, actions = step(state, WatchEvent({"type": "MODIFIED", "object": obj}), STREAM_CFG)
    assert actions == (BufferPut(obj),)
    _, actions = step(state, WatchEvent({"type": "DELETED", "object": obj}), STREAM_CFG)
    assert actions == (BufferDelete(obj),)


def test_stream_plain_bookmark_is_ignored() -> None:
    ev = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "5"}}}
    state, actions = step(streaming(), WatchEvent(ev), STREAM_CFG)
    assert state == Streaming(Memory(watch_list=True), "", events=1)
    assert actions == ()


def test_initial_events_end_bookmark_replaces_and_keeps_watching() -> None:
    meta = {"resourceVersion": "7", "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"}}
    s = Streaming(Memory(watch_list=True, rv_unavailable=True), "", events=2)
    state, actions = step(
        s, WatchEvent({"type": "BOOKMARK", "object": {"metadata": meta}}), STREAM_CFG
    )
    assert state == Watching(Memory(last_sync_rv="7", watch_list=True), rv="7", events=3)
    assert actions == (CancelDeadline(), Replace("7"))


def test_stream_refused_falls_back_to_list_for_good() -> None:
    err = ApiError(422, "Invalid")
    state, actions = step(streaming(), WatchOpenError(err), STREAM_CFG)
    assert state == Listing(Memory(), "0", 500)
    assert actions[0] == Report(err)
    assert actions[-1] == RequestList(ListOptions(resource_version="0", limit=500))


def test_stream_throttled_retries_stream() -> None:
    err = TooManyRequestsError(429, "TooManyRequests", retry_after=1.5)
    state, actions = step(streaming("4"), WatchOpenError(err), STREAM_CFG)
    assert state == BackingOff(Memory(watch_list=True, last_sync_rv="4"), Next.RESTREAM)
    assert actions == (Backoff("streaming list refused", 1.5),)
    state, actions = step(state, TimerFired(), STREAM_CFG)
    assert state == Streaming(Memory(watch_list=True, last_sync_rv="4"), "4")
    assert actions[-1].options.resource_version == "4"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "err", [ExpiredError(410, "Expired"), ResourceVersionTooLargeError(504, "Timeout")]
)
def test_stream_unavailable_rv_restreams_at_empty_rv(err: ApiError) -> None:
    state, actions = step(streaming("4"), WatchOpenError(err), STREAM_CFG)
    assert state == Streaming(
        Memory(watch_list=True, last_sync_rv="4", rv_unavailable=True), requested_rv=""
    )
    assert actions[-1].options.resource_version == ""  # type: ignore[union-attr]


def test_stream_error_event_410_restreams() -> None:
    state, actions = step(streaming("4"), _error_event(410, "Expired"), STREAM_CFG)
    assert isinstance(state, Streaming)
    assert state.requested_rv == ""
    assert actions[0] == CloseWatch()


def test_stream_error_event_429_backs_off() -> None:
    state, actions = step(streaming(), _error_event(429, "TooManyRequests"), STREAM_CFG)
    assert state == BackingOff(Memory(watch_list=True), Next.RESTREAM)
    assert actions == (CloseWatch(), Backoff("streaming list throttled", None))


def test_stream_error_event_500_lists_this_time_only() -> None:
    state, actions = step(streaming(), _error_event(500, "InternalError"), STREAM_CFG)
    assert isinstance(state, Listing)
    assert state.mem.watch_list  # the next relist streams again
    assert actions[0] == CloseWatch()


def test_stream_error_event_invalid_falls_back_for_good() -> None:
    state, actions = step(streaming(), _error_event(422, "Invalid"), STREAM_CFG)
    assert isinstance(state, Listing)
    assert not state.mem.watch_list
    assert actions[0] == CloseWatch()


@pytest.mark.parametrize(
    "err", [ApiError(500, "InternalError"), ApiError(503, "ServiceUnavailable"), OSError("reset")]
)
def test_stream_open_failure_lists_now_and_streams_on_the_next_relist(
    err: BaseException,
) -> None:
    state, actions = step(streaming("4"), WatchOpenError(err), STREAM_CFG)
    assert state == Listing(Memory(watch_list=True, last_sync_rv="4"), "4", 0)
    assert actions[0] == Report(err)
    # The list succeeds and its watch later gets 410: the relist streams again.
    state, _ = step(state, ListPage(page([], "9")), STREAM_CFG)
    state, actions = step(state, WatchOpenError(ExpiredError(410, "Expired")), STREAM_CFG)
    while not isinstance(state, Streaming):
        assert isinstance(state, BackingOff), state
        state, actions = step(state, TimerFired(), STREAM_CFG)
    assert state.mem.watch_list


def test_stream_malformed_event_restreams_after_backoff() -> None:
    state, actions = step(streaming(), WatchEvent({"type": "ADDED"}), STREAM_CFG)
    assert state == BackingOff(Memory(watch_list=True), Next.RESTREAM)
    assert actions[:2] == (CloseWatch(), ClearBuffer())
    assert isinstance(actions[2], Report)


def test_stream_ended_without_end_bookmark_falls_back() -> None:
    state, actions = step(streaming(), WatchEnded(None, 40.0), STREAM_CFG)
    assert state == Listing(Memory(), "0", 500)
    assert actions[0] == ClearBuffer()


def test_stream_decode_error_falls_back_and_reports() -> None:
    err = WatchDecodeError("x")
    state, actions = step(streaming(), WatchEnded(err, 1.0), STREAM_CFG)
    assert isinstance(state, Listing)
    assert Report(err) in actions


def test_stream_deadline_falls_back_to_list() -> None:
    state, actions = step(streaming(), DeadlineFired(), STREAM_CFG)
    assert state == Listing(Memory(), "0", 500)
    assert actions[:2] == (CloseWatch(), ClearBuffer())
    assert isinstance(actions[2], Report)
    assert "initial-events-end" in str(actions[2].error)


def test_streaming_ignores_timer() -> None:
    s = streaming()
    assert step(s, TimerFired(), STREAM_CFG) == (s, ())


def test_backoff_relist_streams_when_enabled() -> None:
    state, _ = step(BackingOff(Memory(watch_list=True), Next.RELIST), TimerFired(), STREAM_CFG)
    assert isinstance(state, Streaming)


def test_backoff_ignores_other_inputs() -> None:
    s = BackingOff(Memory(), Next.RELIST)
    assert step(s, WatchEnded(None, 1), CFG) == (s, ())


# ---------------------------------------------------------------- properties

_events = st.lists(
    st.one_of(
        st.builds(
            lambda t, n, rv: WatchEvent({"type": t, "object": pod(n, str(rv))}),
            st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "BOGUS"]),
            st.sampled_from("abc"),
            st.integers(1, 50),
        ),
        st.just(WatchEnded(None, 100.0)),
        st.just(TimerFired()),
        st.builds(lambda rv: ListPage(page([pod("z", str(rv))], str(rv))), st.integers(1, 50)),
        st.just(ListError(ExpiredError(410, "Expired"))),
        st.just(WatchOpenError(TooManyRequestsError(429, ""))),
    ),
    max_size=30,
)


@given(_events)
def test_rv_never_goes_back_while_watching(inputs: list[Any]) -> None:
    state: ReflectorState = Watching(Memory(last_sync_rv="10"), rv="10")
    for inp in inputs:
        before = state
        state, actions = step(state, inp, CFG)
        if isinstance(before, Watching) and isinstance(inp, WatchEvent):
            assert int(state.mem.last_sync_rv) >= int(before.mem.last_sync_rv)
        # at most one action asks the driver for the next input
        asking = [a for a in actions if isinstance(a, RequestList | RequestWatch | Backoff)]
        assert len(asking) <= 1


# ---------------------------------------------- the driver's fast path for events

_anything = st.one_of(
    st.none(), st.integers(-3, 3), st.booleans(), st.lists(st.integers(0, 2), max_size=2)
)
_rvs = st.one_of(
    st.just(""),
    st.integers(0, 30).map(str),
    st.sampled_from(["abc", "\u00b2", "07", "99999999999999999999", " 5"]),
    _anything,
)
_names = st.one_of(st.just(""), st.sampled_from(["a", "b"]), _anything)
_namespaces = st.one_of(st.sampled_from(["ns", ""]), st.none(), _anything)


@st.composite
def _raw_events(draw: st.DrawFn) -> Any:
    """Watch events as a server or a broken one sends them: a well-formed
    event, then none, one or two of its parts replaced (by a value of the
    wrong type, or an odd one of the right type) or removed."""
    meta: dict[str, Any] = {
        "name": draw(st.sampled_from(["a", "b"])),
        "namespace": draw(st.sampled_from(["ns", "", None])),
        "resourceVersion": draw(st.integers(0, 30).map(str)),
    }
    if draw(st.integers(0, 3)) == 0:
        meta["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
    obj: Any = {"metadata": meta}
    event: Any = {
        "type": draw(st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])),
        "object": obj,
    }
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.sampled_from(["event", "type", "object", "metadata", *["field"] * 6]))
        if where == "event":
            event = draw(st.one_of(_anything, st.just({"object": obj})))
            break
        if where == "type":
            event["type"] = draw(st.one_of(st.sampled_from(["ERROR", "BOGUS", ""]), _anything))
        elif where == "object":
            event["object"] = draw(_anything)
        elif where == "metadata":
            obj["metadata"] = draw(_anything)
        else:
            field = draw(st.sampled_from(["name", "namespace", "resourceVersion"]))
            values = {"name": _names, "namespace": _namespaces, "resourceVersion": _rvs}
            if draw(st.booleans()):
                meta.pop(field, None)
            else:
                meta[field] = draw(values[field])
    return event


_STORE_ACTIONS: dict[str, Any] = {
    "ADDED": StoreAdd,
    "MODIFIED": StoreUpdate,
    "DELETED": StoreDelete,
    "BOOKMARK": lambda obj: StoreBookmark(obj["metadata"]["resourceVersion"]),
}


def _ev(etype: str, name: Any = "a", namespace: Any = "ns", rv: Any = "11") -> dict[str, Any]:
    return {
        "type": etype,
        "object": {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}},
    }


@settings(max_examples=500)  # a pure function: 500 cases take well under a second
@example(watching("10", 2), _ev("ADDED", rv=""))
@example(watching("10", 2), _ev("BOOKMARK", rv=""))
@example(watching("10", 2), _ev("MODIFIED", name=""))
@example(watching("10", 2), _ev("DELETED", namespace=3))
@example(watching("10", 2), _ev("ADDED", rv="9"))
@example(watching("10", 2), _ev("ADDED", rv="\u00b2"))
@example(watching("", 2), _ev("ADDED", rv="3"))
@given(
    st.builds(
        lambda rv, events, unavailable: Watching(
            Memory(last_sync_rv=rv, rv_unavailable=unavailable), rv=rv, events=events
        ),
        st.one_of(st.integers(0, 30).map(str), st.just(""), st.just("abc")),
        st.integers(0, 5),
        st.booleans(),
    ),
    _raw_events(),
)
def test_the_event_fast_path_decides_as_step_does(state: Watching, event: Any) -> None:
    decided = _watch_event_step(state, event)
    if decided is None:
        return  # the driver asks step(): nothing to compare
    nxt, action, obj = decided
    expected_state, expected_actions = step(state, WatchEvent(event), CFG)
    assert nxt == expected_state
    actions = (_STORE_ACTIONS[action](obj),) if action else ()
    assert actions == expected_actions


@pytest.mark.parametrize("etype", ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])
def test_the_event_fast_path_takes_every_well_formed_event(etype: str) -> None:
    # (so that the property above compares something)
    state = watching("10")
    assert _watch_event_step(state, {"type": etype, "object": pod("a", "11")}) is not None
    assert _watch_event_step(state, {"type": etype, "object": pod("a", "9")}) == (state, "", ANY)
    assert _watch_event_step(state, {"type": "ERROR", "object": pod("a", "11")}) is None
    assert _watch_event_step(state, WatchEvent({"type": etype})) is None


def test_a_unicode_digit_rv_is_not_compared_as_a_number() -> None:
    # "\u00b2".isdigit() is true but int() refuses it: such an RV is opaque.
    state, actions = step(
        watching("10"), WatchEvent({"type": "ADDED", "object": pod("a", "\u00b2")}), CFG
    )
    assert state.mem.last_sync_rv == "\u00b2"
    assert actions == (StoreAdd(pod("a", "\u00b2")),)


_digit_rvs = st.one_of(
    st.integers(0, 10**30).map(str),
    st.tuples(st.text("0", max_size=3), st.integers(0, 10**6)).map(lambda t: t[0] + str(t[1])),
)


@given(_digit_rvs, _digit_rvs)
@example("10", "9")
@example("9", "10")
@example("010", "9")
@example("100", "100")
def test_a_digit_rv_is_newer_exactly_when_its_value_is_larger(rv: str, than: str) -> None:
    # _newer compares digit strings without int() where no leading zero
    # makes their length lie about their value.
    assert _newer(rv, than) is (int(rv) > int(than))


@given(st.text(max_size=6), st.text(max_size=6))
@example("\u00b2", "1")
@example("", "1")
def test_an_rv_that_is_not_ascii_digits_on_either_side_is_always_newer(rv: str, than: str) -> None:
    digits = rv.isascii() and rv.isdigit() and than.isascii() and than.isdigit()
    assert _newer(rv, than) is (int(rv) > int(than) if digits else True)


# ------------------------------------------------- properties over reachable states

_BLOCKING = (RequestList, RequestWatch, Backoff)
_WATCHES = (Streaming, Watching)
_list_rvs = st.integers(1, 60).map(str)
_event_rvs = st.integers(1, 1000).map(str)  # mostly newer than the lists' RVs
_failures = st.sampled_from(
    [
        ExpiredError(410, "Expired"),
        ResourceVersionTooLargeError(504, "Timeout"),
        TooManyRequestsError(429, "TooManyRequests", retry_after=3.0),
        ApiError(500, "InternalError"),
        ApiError(403, "Forbidden"),
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError("reset"),
        WatchDecodeError("pods: a watch line is not JSON"),
    ]
)


def _event(etype: str, obj: Any) -> WatchEvent:
    return WatchEvent({"type": etype, "object": obj})


def _end_bookmark(rv: str) -> WatchEvent:
    meta = {"resourceVersion": rv, "annotations": {INITIAL_EVENTS_END_ANNOTATION: "true"}}
    return _event("BOOKMARK", {"metadata": meta})


_pages = st.one_of(
    st.builds(
        lambda rv, cont, n: ListPage(page([pod(f"p{i}", rv) for i in range(n)], rv, cont)),
        _list_rvs,
        st.sampled_from(["", "", "next-page"]),
        st.integers(0, 3),
    ),
    st.sampled_from([ListPage({"items": []}), ListPage(page([{"metadata": {}}], "5"))]),
)
_object_events = st.builds(
    lambda t, n, rv: _event(t, pod(n, rv)),
    st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]),
    st.sampled_from("ab"),
    _event_rvs,
)
_bad_events = st.one_of(
    st.builds(
        lambda status: _error_event(*status),
        st.sampled_from([(410, "Expired"), (429, "TooManyRequests"), (500, ""), (400, "")]),
    ),
    st.sampled_from(
        [
            WatchEvent({}),
            _event("ADDED", None),
            _event("ADDED", {"spec": {}}),
            _event("BOGUS", pod("a", "5")),
        ]
    ),
)
_watch_ends = st.one_of(
    st.builds(WatchOpenError, _failures),
    st.builds(
        WatchEnded,
        st.sampled_from([None, WatchDecodeError("bad line"), ConnectionResetError("reset")]),
        st.sampled_from([0.1, 100.0]),
    ),
)
#: What the driver can feed in each state (StopRequested: tried from every
#: state by the test itself).
_INPUTS_FOR: dict[type, st.SearchStrategy[Any]] = {
    Idle: st.just(Begin()),
    Listing: st.one_of(_pages, _pages, st.builds(ListError, _failures)),
    Streaming: st.one_of(
        _object_events,
        _object_events,
        st.builds(_end_bookmark, _event_rvs),
        _bad_events,
        _watch_ends,
        st.just(DeadlineFired()),
    ),
    Watching: st.one_of(_object_events, _object_events, _object_events, _bad_events, _watch_ends),
    BackingOff: st.just(TimerFired()),
}
#: Anything at all: what does not apply to a state must be ignored.
_ANY_INPUT = st.one_of(
    st.sampled_from([Begin(), TimerFired(), DeadlineFired()]),
    _pages,
    st.builds(ListError, _failures),
    _object_events,
    _bad_events,
    _watch_ends,
)
_configs = st.sampled_from([CFG, STREAM_CFG, ReflectorConfig(page_size=0)])


def _check_step(
    old: ReflectorState, inp: Any, new: ReflectorState, actions: tuple[Any, ...]
) -> None:
    """What every transition must respect, whatever the state and the input."""
    if isinstance(old, Stopped):
        assert (new, actions) == (old, ())  # final
        return
    if isinstance(inp, StopRequested):
        assert new == Stopped(old.mem)
        assert actions == ((CloseWatch(),) if isinstance(old, _WATCHES) else ())
        return
    if new is old:
        assert actions == ()  # an input that does not apply is ignored
        return
    assert not isinstance(new, Idle | Stopped)
    # At most one action gives the driver its next input, and it comes last;
    # it matches the new state.
    blocking = [a for a in actions if isinstance(a, _BLOCKING)]
    assert len(blocking) <= 1
    if blocking:
        (ask,) = blocking
        assert actions[-1] is ask
        if isinstance(ask, RequestList):
            assert isinstance(new, Listing)
        elif isinstance(ask, Backoff):
            assert isinstance(new, BackingOff)
        else:
            assert isinstance(new, _WATCHES)
            streams = isinstance(new, Streaming)
            assert bool(ask.options.send_initial_events) is streams
            assert (ask.deadline is not None) is streams
    else:  # the next input comes from the watch, which stays open
        assert isinstance(inp, WatchEvent)
        assert isinstance(old, _WATCHES)
        assert isinstance(new, _WATCHES)
    if isinstance(inp, WatchEvent) and blocking:
        assert actions[0] == CloseWatch()  # an open watch is closed before leaving it
    # Each action only where the states allow it.
    for i, action in enumerate(actions):
        if isinstance(action, StoreAdd | StoreUpdate | StoreDelete):
            assert isinstance(old, Watching)
            assert isinstance(new, Watching)
            assert len(actions) == 1
            assert new.events == old.events + 1
        elif isinstance(action, BufferPut | BufferDelete):
            assert isinstance(old, Streaming)
            assert isinstance(new, Streaming)
        elif isinstance(action, Buffer):
            assert isinstance(old, Listing)
        elif isinstance(action, Replace):
            assert isinstance(old, Listing | Streaming)
            assert isinstance(new, Watching)
            assert action.resource_version == new.mem.last_sync_rv == new.rv
        elif isinstance(action, CancelDeadline):
            assert isinstance(old, Streaming)
            assert isinstance(new, Watching)
        elif isinstance(action, CloseWatch):
            assert isinstance(old, _WATCHES)
            assert i == 0
        elif isinstance(action, RequestList | RequestWatch):
            fresh_list = isinstance(action, RequestList) and not action.options.continue_token
            if fresh_list or action.options.send_initial_events:
                assert ClearBuffer() in actions[:i]  # a new list starts from an empty buffer
    # The RV moves only with the store: a reader that sees it sees its objects.
    if new.mem.last_sync_rv != old.mem.last_sync_rv:
        moved_by_event = isinstance(old, Watching) and isinstance(new, Watching)
        assert moved_by_event or any(isinstance(a, Replace) for a in actions)
    # Once given up, streaming lists are never tried again.
    if not isinstance(old, Idle):
        assert new.mem.watch_list <= old.mem.watch_list


@given(_configs, st.data())
def test_every_reachable_transition_is_well_formed_and_stop_always_stops(
    config: ReflectorConfig, data: st.DataObject
) -> None:
    state: ReflectorState = Idle()
    for _ in range(data.draw(st.integers(1, 60), label="steps")):
        stopped, stop_actions = step(state, StopRequested(), config)
        _check_step(state, StopRequested(), stopped, stop_actions)
        assert isinstance(stopped, Stopped)
        # Mostly what the driver would feed now; one time in ten, anything.
        anything = data.draw(st.integers(0, 9), label="roll") == 9
        inp = data.draw(_ANY_INPUT if anything else _INPUTS_FOR[type(state)])
        new, actions = step(state, inp, config)
        _check_step(state, inp, new, actions)
        state = new
    stopped, _ = step(state, StopRequested(), config)
    for inp in [StopRequested(), Begin(), data.draw(_ANY_INPUT)]:  # Stopped is final
        new, actions = step(stopped, inp, config)
        _check_step(stopped, inp, new, actions)
