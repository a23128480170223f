"""The :class:`EventRecorder`: Kubernetes Events from a controller, without
ever holding up the reconcile that emits them.

:meth:`EventRecorder.event` correlates the occurrence at once (aggregation,
series, spam filter: :mod:`~informers.toolkit.events.correlator`) and puts
what is to be written into a bounded buffer; one worker thread writes the
buffer to the API server. It never touches the network, and returns in
microseconds whether the server is up, slow or gone.

The buffer holds at most ``max_pending`` Events *to write*, keyed by series:
a repeat of an Event still waiting only updates the waiting entry (its count
and last time), so a flood of one event costs one slot. When the buffer is
full a new Event is dropped: counted in :attr:`EventRecorderStats.dropped`,
reported to the ``on_drop`` hook, and logged (once per episode: the next
warning comes only after the buffer emptied again).

The worker writes each entry with client-go's rules: a new Event is created
(POST), a repeat patches the existing one (and creates it when it is gone,
404); a connection failure, a timeout, 429 or 5xx is retried after
``retry_delay`` seconds (the first retry after a random part of it), up to
``max_tries`` times, then given up; any other refusal is logged and not
retried. Every request waits at most ``request_timeout`` seconds to connect
and for each read. Which API to write (events.k8s.io/v1, or core v1 when
the server lacks it) is discovered once, before the first write.

Life cycle: the worker starts with the recorder; :meth:`flush` waits until
everything accepted so far is written (or given up); :meth:`stop` aborts
the request in flight, drops what is still buffered and joins the worker.
Use it as a context manager to stop it.

Thread-safe: any thread may call :meth:`event`. One lock (a condition)
guards the correlator and the buffer; nothing blocking and no user code
runs under it.
"""

from __future__ import annotations

import enum
import logging
import random
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import urllib3

from informers.errors import (
    AlreadyExistsError,
    ApiError,
    InvalidEventError,
    NotFoundError,
    TooManyRequestsError,
)
from informers.rest.transport import ApiClientTransport, RequestAborter, Transport
from informers.toolkit._logcontext import context_logger
from informers.toolkit.controllerutil import object_reference
from informers.toolkit.events.correlator import Correlation, EventCorrelator, Occurrence
from informers.toolkit.events.sink import (
    CORE_V1,
    EVENTS_V1,
    MERGE_PATCH,
    discover_events_api,
    event_body,
    event_path,
    series_patch,
)
from informers.util.backoff import jittered
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire.resources import Resource

__all__ = [
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_TRIES",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_RETRY_DELAY",
    "EVENT_TYPES",
    "DropReason",
    "EventRecorder",
    "EventRecorderStats",
]

log = context_logger(logging.getLogger(__name__))

#: The event types the API accepts.
EVENT_TYPES = frozenset({"Normal", "Warning"})
#: Events waiting to be written before new ones are dropped (client-go: 1000).
DEFAULT_MAX_PENDING = 1000
#: Attempts to write one Event before it is given up (client-go: 12).
DEFAULT_MAX_TRIES = 12
#: Seconds between attempts (client-go: 10).
DEFAULT_RETRY_DELAY = 10.0
#: Seconds each request may wait to connect, and for each read.
DEFAULT_REQUEST_TIMEOUT = 10.0


class DropReason(enum.StrEnum):
    """Why an occurrence never became (or updated) an Event."""

    #: The buffer was full.
    BUFFER_FULL = "buffer-full"
    #: The per-object spam filter dropped it.
    SPAM = "spam"
    #: The recorder was stopped (before or while it waited in the buffer).
    STOPPED = "stopped"
    #: The server refused it (400, 403, 422, ...): not retried.
    REJECTED = "rejected"
    #: Every attempt to write it failed.
    RETRIES_EXHAUSTED = "retries-exhausted"


@dataclass(frozen=True, slots=True)
class EventRecorderStats:
    """Counters of one recorder, as of one moment. ``accepted``: occurrences
    taken into the buffer (a repeat of a waiting one included); ``written``:
    successful writes; ``dropped``: occurrences lost, by reason; ``pending``:
    Events waiting to be written (at most ``max_pending``) plus the one being
    written, if any; ``api_version``: the API written to
    (``""`` until discovered)."""

    accepted: int
    written: int
    dropped: dict[DropReason, int]
    pending: int
    api_version: str


class _Outcome(enum.Enum):
    WRITTEN = enum.auto()
    RETRY = enum.auto()
    REJECTED = enum.auto()


class _Write:
    """One buffered Event: the latest correlation of its series, whether it
    still has to be created, and the attempts made so far."""

    __slots__ = ("correlation", "create", "tries")

    def __init__(self, correlation: Correlation) -> None:
        self.correlation = correlation
        self.create = correlation.count == 1
        self.tries = 0


def _namespace_terminating(error: ApiError) -> bool:
    """Whether the server refused because the namespace is being deleted
    (nothing to do about it: not worth a warning)."""
    details = error.body.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    return any(
        isinstance(c, dict) and c.get("reason") == "NamespaceTerminating" for c in causes or ()
    )


class EventRecorder:
    """Records Kubernetes Events about objects, asynchronously (see the
    module documentation).

    ``api_client`` is a :class:`kubernetes.client.ApiClient` (its pool and
    credentials are used; the caller keeps it and closes it after
    :meth:`stop`) or a :class:`~informers.rest.transport.Transport`.
    ``component`` names the controller (``reportingController``,
    ``source.component``); ``instance`` this replica (default
    ``<component>-<hostname>``); ``host`` the core API's ``source.host``
    (default none, as controller-runtime).

    ``api_version`` forces :data:`~informers.toolkit.events.sink.EVENTS_V1`
    or :data:`~informers.toolkit.events.sink.CORE_V1` instead of
    discovering. ``clock`` drives the correlator and the retry waits;
    ``wall_clock`` gives the timestamps written (default :func:`time.time`
    with the real clock, and the fake clock's time shifted to today with
    any other, so tests on a fake clock get timestamps that move with it).
    ``on_drop(reason)`` is called (outside the lock, on the thread that
    dropped) for every occurrence dropped; it must be quick and must not
    raise. ``correlator`` replaces the default
    :class:`~informers.toolkit.events.correlator.EventCorrelator` (client-go's
    limits, on ``clock``) with one of other limits; the recorder owns it from
    then on. The buffer's limits default to client-go's too.
    """

    def __init__(
        self,
        api_client: Any,
        component: str,
        *,
        instance: str | None = None,
        host: str = "",
        api_version: str | None = None,
        clock: Clock = REAL_CLOCK,
        wall_clock: Callable[[], float] | None = None,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_tries: int = DEFAULT_MAX_TRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        correlator: EventCorrelator | None = None,
        on_drop: Callable[[DropReason], None] | None = None,
    ) -> None:
        if not component:
            raise ValueError("an EventRecorder needs a component name")
        if api_version not in (None, EVENTS_V1, CORE_V1):
            raise ValueError(f"api_version must be {EVENTS_V1!r} or {CORE_V1!r}")
        if max_pending < 1 or max_tries < 1:
            raise ValueError("max_pending and max_tries must be >= 1")
        if isinstance(api_client, Transport):
            self._transport: Transport = api_client
        else:
            self._transport = ApiClientTransport(api_client, connect_timeout=request_timeout)
        self._component = component
        self._logger = context_logger(log.logger, component=component)
        self._instance = (instance or f"{component}-{socket.gethostname()}")[:128]
        self._host = host
        self._clock = clock
        if wall_clock is None:
            if clock is REAL_CLOCK:
                wall_clock = time.time
            else:
                offset = time.time() - clock.now()
                wall_clock = lambda: offset + clock.now()  # noqa: E731 - a closure
        self._wall = wall_clock
        self._max_pending = max_pending
        self._max_tries = max_tries
        self._retry_delay = retry_delay
        self._timeout = request_timeout
        self._on_drop = on_drop
        self._aborter = RequestAborter()
        self._stop_event = threading.Event()  # set once, by stop(); the retry waits end on it

        self._cond = threading.Condition()
        # Guarded by _cond: the correlator (not thread-safe itself), the
        # buffer (series key -> write, oldest first; never more than
        # _max_pending entries), whether the worker has one write out of the
        # buffer, the API once discovered, the counters, the stop flag.
        self._correlator = correlator if correlator is not None else EventCorrelator(clock)
        self._pending: OrderedDict[tuple[object, ...], _Write] = OrderedDict()
        self._in_flight = False
        self._api_version = api_version or ""
        self._accepted = 0
        self._written = 0
        self._dropped = dict.fromkeys(DropReason, 0)
        self._overflowing = False  # a buffer-full warning was logged; reset when it empties
        self._stopping = False

        self._thread = threading.Thread(
            target=self._run, name=f"event-recorder-{component}", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ API

    @property
    def component(self) -> str:
        """The reporting controller's name."""
        return self._component

    @property
    def instance(self) -> str:
        """The reporting instance's name."""
        return self._instance

    def event(
        self,
        obj: Any,
        event_type: str,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: Any = None,
        resource: Resource | None = None,
        related_resource: Resource | None = None,
        field_path: str = "",
    ) -> None:
        """Record that ``reason`` happened to ``obj``: ``event_type`` is
        ``"Normal"`` or ``"Warning"``, ``message`` says what happened (a
        human sentence), ``action`` what the controller did or failed to do
        (events.k8s.io's required ``action``; default: ``reason``).
        ``related`` is an optional second object.

        ``obj`` (and ``related``) is a dict or a ``kubernetes`` model with a
        name; objects from a list or a cache carry no ``apiVersion``/``kind``:
        pass their ``resource``. ``field_path`` names a part of the object
        (``spec.containers{web}``).

        Never blocks on the network and never raises for the server's sake
        (see the module documentation); raises
        :class:`~informers.errors.InvalidEventError` for another type or an
        empty reason, and :class:`~informers.errors.ObjectReferenceError`
        for an object that cannot be referred to. Thread-safe.
        """
        if event_type not in EVENT_TYPES:
            raise InvalidEventError(f"event type must be Normal or Warning, not {event_type!r}")
        if not reason:
            raise InvalidEventError("an event needs a reason")
        occurrence = Occurrence(
            object_reference(obj, resource, field_path=field_path),
            event_type,
            reason,
            message,
            action or reason,
            self._component,
            self._instance,
            self._wall(),
            None if related is None else object_reference(related, related_resource),
        )
        dropped: DropReason | None = None
        first_overflow = False
        with self._cond:
            if self._stopping:
                dropped = DropReason.STOPPED
            else:
                correlation = self._correlator.correlate(occurrence)
                if correlation is None:
                    dropped = DropReason.SPAM
                else:
                    waiting = self._pending.get(correlation.key)
                    if waiting is not None:
                        waiting.correlation = correlation
                    elif len(self._pending) < self._max_pending:
                        self._pending[correlation.key] = _Write(correlation)
                        self._cond.notify()
                    else:
                        dropped = DropReason.BUFFER_FULL
                        first_overflow = not self._overflowing
                        self._overflowing = True
            if dropped is None:
                self._accepted += 1
            else:
                self._dropped[dropped] += 1
        if dropped is not None:
            self._report_drop(dropped, occurrence, first_overflow)

    def flush(self, timeout: float | None = None) -> bool:
        """Block until every occurrence accepted so far was written, given up
        or dropped, at most ``timeout`` seconds (real time; ``None``: no
        limit). Returns whether that happened. While the server is down this
        waits for the retries: give a timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._stopping or (not self._pending and not self._in_flight), timeout
            )

    def stop(self, timeout: float = 10.0) -> None:
        """Stop: later events are dropped, the request in flight is aborted,
        what is buffered is dropped (call :meth:`flush` first to write it),
        and the worker is joined (at most ``timeout`` seconds). Idempotent."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._stop_event.set()
        self._aborter.abort()
        self._thread.join(timeout)

    def stats(self) -> EventRecorderStats:
        """The counters now (see :class:`EventRecorderStats`)."""
        with self._cond:
            return EventRecorderStats(
                self._accepted,
                self._written,
                dict(self._dropped),
                len(self._pending) + (1 if self._in_flight else 0),
                self._api_version,
            )

    def __enter__(self) -> EventRecorder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<EventRecorder {self._component}>"

    # ------------------------------------------------------------ internals

    def _report_drop(self, reason: DropReason, occurrence: Occurrence, first: bool) -> None:
        if first:
            self._logger.warning(
                "event recorder %s: buffer full (%d events waiting), dropping events "
                "until it drains (first: %s); further drops are only counted",
                self._component,
                self._max_pending,
                occurrence.describe(),
            )
        if self._on_drop is not None:
            try:
                self._on_drop(reason)
            except Exception:
                self._logger.exception("event recorder %s: on_drop hook failed", self._component)

    def _run(self) -> None:
        self._logger.debug("event recorder %s: started", self._component)
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopping or bool(self._pending))
                if self._stopping:
                    break
                key, write = self._pending.popitem(last=False)
                self._in_flight = True
            outcome = self._write(write)
            retry_in = 0.0
            with self._cond:
                self._in_flight = False
                if outcome is _Outcome.WRITTEN:
                    self._written += 1
                elif outcome is _Outcome.REJECTED:
                    self._dropped[DropReason.REJECTED] += 1
                elif self._stop_event.is_set():  # aborted by stop()
                    self._dropped[DropReason.STOPPED] += 1
                else:
                    write.tries += 1
                    if write.tries >= self._max_tries:
                        self._dropped[DropReason.RETRIES_EXHAUSTED] += 1
                        self._logger.warning(
                            "event recorder %s: giving up on an event after %d attempts: %s",
                            self._component,
                            write.tries,
                            write.correlation.occurrence.describe(),
                        )
                    else:
                        self._requeue_locked(key, write)
                        retry_in = self._retry_delay
                        if write.tries == 1:
                            retry_in *= random.random()
                        else:
                            retry_in = jittered(retry_in, 0.25)
                if not self._pending and not self._in_flight:
                    self._overflowing = False
                self._cond.notify_all()
            if retry_in > 0.0:
                self._clock.wait(self._stop_event, retry_in)
        with self._cond:
            self._dropped[DropReason.STOPPED] += len(self._pending)
            self._pending.clear()
            self._cond.notify_all()
        self._logger.debug("event recorder %s: stopped", self._component)

    def _requeue_locked(self, key: tuple[object, ...], write: _Write) -> None:
        """Put a write that failed back at the head of the buffer, merged into
        a newer write of its series if one arrived meanwhile."""
        newer = self._pending.get(key)
        if newer is not None:
            newer.create = newer.create or write.create
            newer.tries = max(newer.tries, write.tries)
        else:
            self._pending[key] = write
        self._pending.move_to_end(key, last=False)

    def _patch(self, api: str, correlation: Correlation) -> None:
        self._transport.request(
            "PATCH",
            event_path(api, correlation.occurrence.namespace, correlation.name),
            body=series_patch(correlation, api),
            content_type=MERGE_PATCH,
            read_timeout=self._timeout,
            aborter=self._aborter,
        )

    def _write(self, write: _Write) -> _Outcome:
        """One attempt to write ``write`` (no lock held)."""
        correlation = write.correlation
        occurrence = correlation.occurrence
        try:
            api = self._api_version or self._discover()
            if not write.create:
                try:
                    self._patch(api, correlation)
                    return _Outcome.WRITTEN
                except NotFoundError:
                    pass  # gone (expired, or never created): create it whole
            try:
                self._transport.request(
                    "POST",
                    event_path(api, occurrence.namespace),
                    body=event_body(correlation, api, host=self._host),
                    read_timeout=self._timeout,
                    aborter=self._aborter,
                )
            except AlreadyExistsError:
                # An earlier attempt got through after all (its answer was
                # lost): bring that Event up to date.
                write.create = False
                if correlation.count > 1:
                    self._patch(api, correlation)
                return _Outcome.WRITTEN
            write.create = False
            return _Outcome.WRITTEN
        except TooManyRequestsError:
            return _Outcome.RETRY
        except ApiError as error:
            if error.status >= 500:
                return _Outcome.RETRY
            self._logger.log(
                logging.DEBUG if _namespace_terminating(error) else logging.WARNING,
                "event recorder %s: the server refused an event (%s %s), not retrying: %s",
                self._component,
                error.status,
                error.reason,
                occurrence.describe(),
            )
            return _Outcome.REJECTED
        except (OSError, urllib3.exceptions.HTTPError) as error:
            self._logger.debug(
                "event recorder %s: writing an event failed (%s), will retry",
                self._component,
                type(error).__name__,
            )
            return _Outcome.RETRY

    def _discover(self) -> str:
        api = discover_events_api(self._transport, self._timeout, self._aborter)
        with self._cond:
            self._api_version = api
        self._logger.info("event recorder %s: writing Events to %s", self._component, api)
        return api
