"""The reflector's threaded driver: :class:`Reflector` runs the pure
:func:`~informers.cache.reflector.machine.step` against a
:class:`~informers.rest.listwatch.ListerWatcher` and a
:class:`~informers.cache.protocols.ReflectorStore`.
It performs each :data:`~informers.cache.reflector.machine.Action` (HTTP requests,
store updates, backoff waits, the streaming-list deadline) and feeds what
happens back into ``step`` as the next
:data:`~informers.cache.reflector.machine.Input`. Time (backoff waits, timers, how
long a watch lasted) comes from the injected :class:`~informers.util.clock.Clock`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from informers.cache.listbuffer import ListBuffer
from informers.cache.metrics import ReflectorMetrics
from informers.cache.protocols import ListBufferSource, ReflectorStore
from informers.cache.reflector.config import ReflectorConfig
from informers.cache.reflector.machine import (
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
    ListPage,
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
    _watch_event_step,
    step,
)
from informers.cache.reflector.watchdog import ProgressWatchdog
from informers.errors import (
    ExpiredError,
    ResourceVersionTooLargeError,
    WatchDecodeError,
    WatchStalledError,
    permanent_failure_hint,
)
from informers.rest.listwatch import ListerWatcher, ListOptions, WatchStream
from informers.rest.transport import RequestAborter
from informers.util.backoff import ExponentialBackoff
from informers.util.clock import REAL_CLOCK, Clock, TimerHandle
from informers.wire.objects import meta_namespace_keys

__all__ = ["BackoffManager", "Reflector", "WatchErrorHandler"]

log = logging.getLogger(__name__)

#: The reflector's retry backoff; the policy lives in :mod:`informers.util.backoff`.
BackoffManager = ExponentialBackoff


_BLOCKING = (RequestList, RequestWatch, Backoff)
#: Errors that say the resourceVersion asked for is gone (or not there yet).
_EXPIRED = (ExpiredError, ResourceVersionTooLargeError)


def _buffer_key(obj: Any) -> str:
    """The key an object is collected under: :func:`~informers.wire.objects.meta_namespace_key`'s,
    but never raising (what the machine let through has a name; anything
    else is collected under ``""`` rather than failing the list)."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    if not isinstance(meta, Mapping):
        return ""
    name = str(meta.get("name") or "")
    namespace = str(meta.get("namespace") or "")
    return f"{namespace}/{name}" if namespace else name


def _buffer_items(buf: dict[str, Any], items: Sequence[Any]) -> None:
    """``buf[key] = item`` for every item, in order (a later duplicate wins),
    keyed through the one batch fast path,
    :func:`~informers.wire.objects.meta_namespace_keys`."""
    buf.update(zip(meta_namespace_keys(items, _buffer_key), items, strict=True))


#: The error hook: called as ``handler(reflector, error)`` for every reported
#: list or watch error, on the reflector's thread and outside its lock.
WatchErrorHandler: TypeAlias = Callable[["Reflector", BaseException], None]


class Reflector:
    """Runs :func:`~informers.cache.reflector.machine.step` against a
    :class:`~informers.rest.listwatch.ListerWatcher` and a store, on the caller's
    thread (:meth:`run`).

    ``should_resync`` (with ``resync_period`` > 0) is asked every period
    whether to call ``store.resync()``; both run on the clock's timer thread,
    which every timer of the clock shares, so a store whose resync takes
    long should be driven through ``resync_handoff`` instead: called every
    period in their place, on that thread, it must only hand the resync to
    the thread that does it (the informer's loop does it so). ``watch_error_handler(reflector,
    error)`` is called (outside any lock) for every reported error; it must
    not block for long. Read accessors are thread-safe. Stopping: set the
    ``stop`` event passed to :meth:`run`; an open watch is interrupted at once.
    When the lister-watcher offers ``abortable(aborter)`` (as
    :class:`~informers.rest.listwatch.HTTPListerWatcher` does), a list or a watch
    request in flight is aborted too (connecting, waiting for headers or
    reading a list); otherwise such a request finishes first.

    ``metrics`` (:class:`~informers.cache.metrics.ReflectorMetrics`, off by
    default) counts list and watch requests by result, relists by cause and
    watchdog firings, and has :meth:`last_data_time` tracked.
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
        resync_handoff: Callable[[], None] | None = None,
        metrics: ReflectorMetrics | None = None,
    ) -> None:
        self.config = config or ReflectorConfig()
        self.name = name or f"reflector-{self.config.description}"
        #: The ``extra`` of this reflector's log records (informers.util.logfmt).
        self._log_extra: dict[str, str] = {"kind": self.config.description}
        # Set here, never rebound (the objects themselves are thread-safe or
        # immutable): config, name, _lw, _store, _clock, _rng, _backoff,
        # _resync_period, _should_resync, _resync_handoff.
        self._lw = lister_watcher
        self._store = store
        self._clock = clock
        self._rng = rng or random.Random()
        self._backoff = backoff or BackoffManager(clock=clock, rng=self._rng)
        self._resync_period = resync_period
        self._should_resync = should_resync
        self._resync_handoff = resync_handoff

        # The one lock. _cond guards exactly the fields below, which are read
        # and written only under it -- except _state and _transitions: the
        # driver thread (the one in run()), their only writer, reads them
        # without it and writes them without it too (see _publish; others
        # read them under it). wait_for() waits on _cond for _transitions
        # to move. Invariants: _running while a run() is between its start and
        # its end; _transitions counts every state published by run();
        # _errors holds the last 100 reported errors.
        self._cond = threading.Condition()
        self._state: ReflectorState = Idle()
        self._transitions = 0
        self._waiting = 0  # threads in wait_for()
        self._running = False
        self._stream: WatchStream | None = None  # the open watch (the stopper stops it)
        self._error_handler: WatchErrorHandler | None = watch_error_handler
        self._errors: list[BaseException] = []
        self._permanent: BaseException | None = None  # cleared by a successful list
        self._resync_off = False  # run() has ended: schedule no more resync timers
        self._resync_timer: TimerHandle | None = None  # the resync timer scheduled last
        # The timer whose callback armed _resync_timer: its thread may still be
        # finishing, so run() cancels (joins) it too.
        self._resync_armer: TimerHandle | None = None

        # Not guarded: used by the driver thread only.
        # The lister-watcher of the current run (an abortable view of _lw when
        # it offers one).
        self._run_lw: ListerWatcher = lister_watcher
        # Where lists are collected: the store's list buffers when it offers
        # them, else a dict by key (the default, fastest path).
        self._list_buffers: Callable[[], ListBuffer | None] | None = (
            store.new_list_buffer if isinstance(store, ListBufferSource) else None
        )
        self._buffer: dict[str, Any] | ListBuffer = {}  # a list being collected, by key
        self._events: Iterator[Mapping[str, Any]] | None = None  # the open watch's events
        self._watch_started = 0.0  # clock time the open watch was requested
        self._deadline: TimerHandle | None = None  # the streaming list's deadline timer
        # The HTTP statuses of permanent-looking failures already logged at ERROR.
        self._permanent_reported: set[object] = set()
        # Thread-safe on its own: set by the deadline timer, read by the driver.
        self._deadline_fired = threading.Event()
        # Events read from the open watches: written by the driver thread only,
        # read (racily, harmlessly) by the watchdog on the timer thread.
        self._progress = 0
        self._watchdog: ProgressWatchdog | None = None  # the open watch's
        # Metrics (None: off). The driver thread alone writes _relist_cause
        # and _last_data; _last_data is read racily (a float) by scrapes.
        self._metrics = metrics
        self._stamp: Callable[[], float] | None = clock.now if metrics is not None else None
        self._relist_cause = "initial"  # the cause the next list is counted under
        self._last_data = clock.now()

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

    def last_data_time(self) -> float:
        """The clock time the last list, watch event or bookmark arrived
        (the reflector's creation before any). Tracked only with
        ``metrics``; without, always the creation time. Thread-safe (a racy
        read of one float)."""
        return self._last_data

    def errors(self) -> list[BaseException]:
        """Errors reported so far (the last 100), oldest first."""
        with self._cond:
            return list(self._errors)

    def wait_for(self, predicate: Callable[[ReflectorState], bool], timeout: float) -> bool:
        """Block until ``predicate(state)`` holds (checked now and after every
        transition) or ``timeout`` real seconds passed; returns whether it
        holds. The predicate runs on the caller's thread without any lock of
        the reflector held.

        The timeout is wall time (:func:`time.monotonic`), not the injected
        clock's: it bounds how long the *caller* blocks, and has nothing to
        do with the reflector's own timing. With a
        :class:`~informers.testing.fake.FakeClock` (which only moves when a
        test advances it) a clock-timed wait could never time out, and a
        failing test would hang instead of failing -- the fakes' own
        ``wait_for_*`` helpers use real seconds for the same reason."""
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
        """Wait until a transition after the ``seen``-th one, or the
        (wall-time, see :meth:`wait_for`) deadline."""
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
        aborter = self._bind_aborter()
        done = threading.Event()
        stopper = threading.Thread(
            target=self._interrupt_on,
            args=(stop, done, aborter),
            name=f"{self.name}-stop",
            daemon=True,
        )
        stopper.start()
        self._arm_resync(stop)
        inp: Input = Begin()
        try:
            while True:
                if stop.is_set():
                    inp = StopRequested()
                try:
                    state, nxt = self._transition(inp, stop)
                    if type(state) is Stopped:
                        return
                    # Drop the input handled before blocking for the next one:
                    # a list page (for a list at resourceVersion 0, the whole
                    # list) must not stay alive until the watch's first event.
                    del inp
                    inp = nxt if nxt is not None else self._next_from_stream(state, stop)
                except Exception:
                    log.exception(
                        "%s: unexpected error; relisting after a backoff",
                        self.name,
                        extra=self._log_extra,
                    )
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

    def _bind_aborter(self) -> RequestAborter | None:
        """Use an abortable view of the lister-watcher for this run, when it
        offers one (an optional ``abortable(aborter)`` method: the
        :class:`~informers.rest.listwatch.ListerWatcher` protocol does not require
        it); returns the run's aborter, if any."""
        bind = getattr(self._lw, "abortable", None)
        if not callable(bind):
            self._run_lw = self._lw
            return None
        aborter = RequestAborter()
        self._run_lw = bind(aborter)
        return aborter

    def _fresh_buffer(self) -> dict[str, Any] | ListBuffer:
        """An empty buffer for a list starting now."""
        if self._list_buffers is not None:
            buffer = self._list_buffers()
            if buffer is not None:
                return buffer
        return {}

    def _recover(self, stop: threading.Event) -> Input:
        self._close_stream()
        self._buffer = {}
        self._publish(BackingOff(self._state.mem, Next.RELIST))
        result = self._perform(Backoff("unexpected error"), stop)
        return result if result is not None else TimerFired()

    def _interrupt_on(
        self, stop: threading.Event, done: threading.Event, aborter: RequestAborter | None
    ) -> None:
        """The stopper thread of one run: once ``stop`` is set, aborts the
        request in flight and stops the open watch. Normally woken by
        ``stop``; the 0.5 s timeout (wall time, not the clock's: a FakeClock
        would never end it) only bounds how long this thread outlives a
        run() that ended by an exception (``done``)."""
        while not stop.wait(0.5) and not done.is_set():
            pass
        if stop.is_set():
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
            if self._resync_handoff is not None:
                try:
                    self._resync_handoff()
                except Exception:
                    log.exception(
                        "%s: handing the resync off failed", self.name, extra=self._log_extra
                    )
            elif self._should_resync is None or self._should_resync():
                try:
                    self._store.resync()
                except Exception:
                    log.exception("%s: resync failed", self.name, extra=self._log_extra)
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

    def _transition(self, inp: Input, stop: threading.Event) -> tuple[ReflectorState, Input | None]:
        """Steps the machine with ``inp`` and performs the actions; returns
        the new state and the next input when an action produced one (else
        the next input comes from the open watch)."""
        # Read without the lock: this (the driver) thread is its only writer.
        new_state, actions = step(self._state, inp, self.config)
        # The new state is published once the store actions before the first
        # blocking action (a request or a wait) are done, so a reader that
        # sees an RV in ``state`` also sees its events in the store.
        published = False
        pending: Input | None = None
        for action in actions:
            if not published and isinstance(action, _BLOCKING):
                self._publish(new_state)
                published = True
            result = self._perform(action, stop)
            if result is not None:
                pending = result
        if not published:
            self._publish(new_state)
        return new_state, pending

    def _publish(self, state: ReflectorState) -> None:
        # Lock-free unless someone waits. This thread writes _state and
        # _transitions, then reads _waiting; wait_for() raises _waiting
        # (under the lock), then reads _transitions (under the lock, and again
        # before every sleep on _cond). Under the GIL's sequential
        # consistency at least one of them sees the other's write: a waiter
        # either finds the new transition or is notified of it (the notify
        # takes the lock, so it cannot fall between a waiter's check and its
        # sleep). Readers under the lock see the state of a transition
        # published in full or of the one before.
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
            case StoreBookmark(rv):
                bookmark = getattr(self._store, "bookmark", None)
                if bookmark is not None:
                    bookmark(rv)
            case Buffer(items):
                buffer = self._buffer
                if isinstance(buffer, dict):
                    _buffer_items(buffer, items)
                else:  # the store's list buffer: the page is kept its way
                    buffer.put_many(meta_namespace_keys(items, _buffer_key), items)
            case BufferPut(obj):
                buffer = self._buffer
                if isinstance(buffer, dict):
                    buffer[_buffer_key(obj)] = obj
                else:
                    buffer.put(_buffer_key(obj), obj)
            case BufferDelete(obj):
                buffer = self._buffer
                if isinstance(buffer, dict):
                    buffer.pop(_buffer_key(obj), None)
                else:
                    buffer.discard(_buffer_key(obj))
            case ClearBuffer():
                self._buffer = self._fresh_buffer()
            case Replace(rv):
                with self._cond:
                    self._permanent = None
                buffer, self._buffer = self._buffer, {}
                objects = list(buffer.values()) if isinstance(buffer, dict) else buffer.finish()
                del buffer
                log.info(
                    "%s: synced %d objects at rv %s",
                    self.name,
                    len(objects),
                    rv,
                    extra=self._log_extra,
                )
                if self._stamp is not None:
                    self._last_data = self._stamp()
                    self._relist_cause = "watch_error"  # unless an error tells another
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
                log.warning(
                    "%s: %s; retrying in %.2f s", self.name, reason, delay, extra=self._log_extra
                )
                return StopRequested() if self._clock.wait(stop, delay) else TimerFired()
            case Report(error):
                self._report(error)
        return None

    def _report(self, error: BaseException) -> None:
        hint = permanent_failure_hint(error, self.config.description)
        status = getattr(error, "status", None)
        if hint is not None and status not in self._permanent_reported:
            # Once per kind of failure, loudly, with what to check; the
            # retries go on (a CRD installed later heals a 404).
            self._permanent_reported.add(status)
            log.error(
                "%s: %s: %s; %s (still retrying with backoff)",
                self.name,
                type(error).__name__,
                error,
                hint,
                extra=self._log_extra,
            )
        else:
            log.warning("%s: %s: %s", self.name, type(error).__name__, error, extra=self._log_extra)
        if self._metrics is not None and isinstance(error, _EXPIRED):
            self._relist_cause = "expired"
        with self._cond:
            self._errors = [*self._errors[-99:], error]
            if hint is not None:
                self._permanent = error
            handler = self._error_handler
        if handler is not None:
            try:
                handler(self, error)
            except Exception:
                log.exception(
                    "%s: the watch error handler raised", self.name, extra=self._log_extra
                )

    def permanent_error(self) -> BaseException | None:
        """The last reported error that does not heal by itself (a 400, 401,
        403, 404 or 405: see :func:`~informers.errors.permanent_failure_hint`),
        until a list succeeds again; ``None`` when there is none."""
        with self._cond:
            return self._permanent

    def _list(self, options: ListOptions, stop: threading.Event) -> Input:
        metrics = self._metrics
        if metrics is not None and not options.continue_token:
            metrics.relists[self._relist_cause].inc()
        try:
            page = self._run_lw.list(options)
        except Exception as exc:  # noqa: BLE001 - any failure is an input to step()
            if stop.is_set():  # most likely our own abort: the stop, not a failure
                log.debug(
                    "%s: list ended by the stop: %s",
                    self.name,
                    type(exc).__name__,
                    extra=self._log_extra,
                )
                return StopRequested()
            if metrics is not None:
                self._count_failure(metrics.list_requests, exc)
            return ListError(exc)
        if metrics is not None:
            metrics.list_requests["success"].inc()
        return ListPage(page)

    def _count_failure(self, requests: Mapping[str, Any], error: BaseException) -> None:
        """Count a failed list or watch request; a 410 Gone (or too large a
        resourceVersion) makes the next list's cause ``expired``."""
        if isinstance(error, _EXPIRED):
            self._relist_cause = "expired"
            requests["expired"].inc()
        else:
            requests["error"].inc()

    def _open_watch(
        self, options: ListOptions, deadline: float | None, stop: threading.Event
    ) -> Input | None:
        low = self.config.min_watch_timeout
        timeout = int(low * (self._rng.random() + 1.0))
        options = replace(options, timeout_seconds=max(1, timeout))
        self._watch_started = self._clock.now()
        metrics = self._metrics
        if metrics is not None and options.send_initial_events:  # a streaming list
            metrics.relists[self._relist_cause].inc()
        try:
            stream = self._run_lw.watch(options)
        except Exception as exc:  # noqa: BLE001 - any failure is an input to step()
            if stop.is_set():  # most likely our own abort: the stop, not a failure
                log.debug(
                    "%s: watch ended by the stop: %s",
                    self.name,
                    type(exc).__name__,
                    extra=self._log_extra,
                )
                return StopRequested()
            if metrics is not None:
                self._count_failure(metrics.watch_requests, exc)
            return WatchOpenError(exc)
        if metrics is not None:
            metrics.watch_requests["success"].inc()
            if not options.send_initial_events:  # a watch is open: no failure pending
                self._relist_cause = "watch_error"
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
        limit = self.config.watch_progress_timeout
        if limit:
            self._watchdog = ProgressWatchdog(
                self._clock, limit, self.events_read, stream.stop, self.name
            )
            self._watchdog.start()
        return None

    def events_read(self) -> int:
        """How many events (bookmarks included) this reflector has read from
        its watches, ever: a counter that only grows. Read without a lock (a
        stale value is one event behind); a health check that sees it stand
        still while :attr:`state` is watching knows the watch delivers
        nothing (see :mod:`informers.cache.reflector.watchdog`)."""
        return self._progress

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _close_stream(self) -> None:
        self._cancel_deadline()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        with self._cond:
            stream, self._stream = self._stream, None
        self._events = None
        if stream is not None:
            stream.stop()

    def _next_from_stream(self, state: ReflectorState, stop: threading.Event) -> Input:
        """The next input from the open watch. While ``state`` is
        :class:`~informers.cache.reflector.machine.Watching`, the common events are
        applied here (``informers.cache.reflector.machine._watch_event_step``
        decides them: exactly what :meth:`_transition` would do, without
        building the input, the action tuple and the match), each published
        as its own transition after its store call, as :meth:`_transition`
        does. Returns the first input that needs
        :func:`~informers.cache.reflector.machine.step`: any event in another
        state, an unusual event, the end of the watch, or the stop."""
        events = self._events
        if events is None:  # nothing pending and no watch: cannot happen
            raise AssertionError(f"{self.name}: no input after {state!r}")
        store = self._store
        add, update, delete = store.add, store.update, store.delete
        bookmark: Callable[[str], None] | None = getattr(store, "bookmark", None)
        publish = self._publish
        stamp = self._stamp
        while not stop.is_set():
            try:
                event = next(events)
            except StopIteration:
                return self._watch_ended(None, stop)
            except Exception as exc:  # noqa: BLE001 - transport errors end the watch
                return self._watch_ended(exc, stop)
            self._progress += 1
            if stamp is not None:
                self._last_data = stamp()
            if type(state) is not Watching:
                return WatchEvent(event)
            decided = _watch_event_step(state, event)
            if decided is None:
                return WatchEvent(event)
            state, action, obj = decided
            if action == "ADDED":
                add(obj)
            elif action == "MODIFIED":
                update(obj)
            elif action == "DELETED":
                delete(obj)
            elif action == "BOOKMARK" and bookmark is not None:
                bookmark(state.rv)
            publish(state)
        return StopRequested()

    def _watch_ended(self, error: BaseException | None, stop: threading.Event) -> Input:
        """The input after the open watch ended (cleanly, or with ``error``):
        the stop, a stall the watchdog noticed, the streaming list's
        deadline, or :class:`~informers.cache.reflector.machine.WatchEnded`."""
        if stop.is_set():
            return StopRequested()
        watchdog = self._watchdog  # cancelled and cleared by _close_stream below
        if watchdog is not None and watchdog.fired.is_set():
            stalled = WatchStalledError(
                f"{self.config.description}: an open watch delivered nothing for "
                f"{watchdog.limit:g} s; re-watching from rv {self._state.mem.last_sync_rv}"
            )
            if self._metrics is not None:
                self._metrics.watchdog_firings.inc()
                self._relist_cause = "watchdog"  # if the machine lists next
            self._report(stalled)
            error = stalled
        if self._deadline_fired.is_set() and isinstance(self._state, Streaming):
            self._close_stream()
            return DeadlineFired()
        # (A deadline that fired as the end bookmark was being applied stopped
        # a stream that is now a plain watch: that watch simply ended.)
        elapsed = self._clock.now() - self._watch_started
        self._close_stream()
        if error is not None and not isinstance(error, WatchDecodeError | WatchStalledError):
            log.info("%s: watch ended: %s", self.name, type(error).__name__, extra=self._log_extra)
        return WatchEnded(error, elapsed)
