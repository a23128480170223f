"""The Controller: sources → rate-limited workqueue → reconcile workers.

A synchronous port of controller-runtime's controller loop. Sources push
:class:`~informers.toolkit.runtime.Request`\\ s into a
:class:`~informers.toolkit.workqueue.RateLimitingQueue`; ``workers`` threads take
them out one at a time and call ``reconcile(request)``. The queue hands a
request to one worker at a time, so **no request is ever reconciled by two
workers at once**, and a request added while it is being reconciled is
reconciled once more afterwards.

What happens after a reconcile (controller-runtime's rules):

* returns ``None`` or ``Result()``: ``forget`` (its backoff starts over);
  counted as ``result="success"``.
* returns ``Result(requeue_after=s)``: ``forget``, then ``add_after(request, s)``;
  ``"requeue_after"``.
* returns ``Result(requeue=True)``: ``add_rate_limited`` (the backoff grows);
  ``"requeue"``.
* raises an exception: ``add_rate_limited``, logged at WARNING with the
  traceback; ``"error"``.
* raises a :class:`~informers.toolkit.runtime.TerminalError` (or an exception raised
  ``from`` one): ``forget``, not requeued, logged at ERROR; ``"error"``, and
  the terminal errors counter.
* returns anything else: as an exception (a :class:`TypeError`).

Logs name the controller and the request's key, never an object.

Lifecycle: :meth:`Controller.start` starts the sources **in order**, each
pushing its initial state before the next starts (an informer source: its
handler synced, i.e. every object of the informer's initial list is in the
queue), waiting up to ``sync_timeout`` seconds for each; then it starts the
workers. A source that does not sync in time fails the start with
:class:`~informers.errors.CacheSyncTimeoutError` naming it (and saying when
its informer is not started). **The controller never starts an informer**:
informers are shared, their owner (you, or a
:class:`~informers.cache.factory.SharedInformerFactory`) starts and stops them.
:meth:`Controller.stop` stops the sources (no new requests), shuts the queue
down, lets the reconciles in progress finish (requests still queued are
dropped, not reconciled) and joins the workers. :meth:`Controller.wait_idle`
is the deterministic idle point for tests.

Threads: ``reconcile-<name>-<n>`` (the workers) plus the sources' own.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from informers.errors import CacheSyncTimeoutError, InformerStateError, ObjectKeyError
from informers.toolkit.runtime.context import ReconcileContext, _set_current, current_context
from informers.toolkit.runtime.errors import is_terminal
from informers.toolkit.runtime.metrics import (
    RESULT_ERROR,
    RESULT_REQUEUE,
    RESULT_REQUEUE_AFTER,
    RESULT_SUCCESS,
    ControllerMetrics,
    ControllerMetricsProvider,
    NoopControllerMetricsProvider,
)
from informers.toolkit.runtime.request import Request, Result
from informers.toolkit.runtime.sources import HandlerSource, Source, coerce_request
from informers.toolkit.runtime.writes import WriteBarrier
from informers.toolkit.workqueue import (
    DEFAULT_MAX_WAIT,
    MetricsProvider,
    PriorityQueue,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)
from informers.util.clock import REAL_CLOCK, Clock, TimerHandle

__all__ = ["BatchReconcileFunc", "Controller", "ReconcileFunc"]

log = logging.getLogger(__name__)

#: What a controller calls for each request.
ReconcileFunc: TypeAlias = Callable[[Request], Result | None]

#: What a controller with ``max_batch > 1`` calls for two or more requests a
#: worker drained at once: one outcome per request, in order -- a result
#: (``None`` or a :class:`Result`) or the exception its reconcile failed with.
BatchReconcileFunc: TypeAlias = Callable[
    [Sequence[Request]], Sequence["Result | BaseException | None"]
]

_NEW, _STARTING, _RUNNING, _STOPPING, _STOPPED = "new", "starting", "running", "stopping", "stopped"


class _RecordingLimiter:
    """The rate limiter the queue is given: the user's limiter, plus telling
    the controller when each rate-limited requeue will be due (for
    :meth:`Controller.wait_idle`). The queue calls it outside its lock."""

    def __init__(self, inner: RateLimiter[Request], record: Callable[[Request, float], None]):
        self._inner = inner
        self._record = record

    def when(self, item: Request) -> float:
        delay = self._inner.when(item)
        self._record(item, delay)
        return delay

    def forget(self, item: Request) -> None:
        self._inner.forget(item)

    def num_requeues(self, item: Request) -> int:
        return self._inner.num_requeues(item)


def _validate_name(name: Any) -> str:
    if not isinstance(name, str):
        raise ValueError(f"controller name must be a string, not {type(name).__name__}")
    if not name:
        raise ValueError("controller name must not be empty")
    if any(c.isspace() for c in name):
        raise ValueError(f"controller name must not contain whitespace: {name!r}")
    return name


def _validate_sources(sources: Any) -> tuple[Source, ...]:
    if sources is None or isinstance(sources, str | bytes) or not isinstance(sources, Sequence):
        raise ValueError("sources must be a non-empty sequence of sources")
    if not sources:
        raise ValueError("a controller needs at least one source")
    for source in sources:
        if not isinstance(source, Source):
            raise TypeError(
                f"{type(source).__name__} is not a source (needs name, start, has_synced, "
                "wait_synced, wait_idle and stop)"
            )
    if len({id(s) for s in sources}) != len(sources):
        raise ValueError("the same source is given twice")
    return tuple(sources)


class Controller:
    """Reconciles requests from ``sources`` with ``workers`` threads.

    :param name: names the controller in logs, thread names, metrics
        (``controller`` label) and the queue; non-empty, no whitespace.
    :param reconcile: ``reconcile(request) -> Result | None``, called on a
        worker thread; it may block (a worker per blocked reconcile) and
        should read current state from a cache rather than trust the event.
    :param sources: started in this order (see the module docs); at least one.
    :param workers: reconciles running at once (controller-runtime's
        ``MaxConcurrentReconciles``), at least 1.
    :param rate_limiter: decides the delays of ``add_rate_limited``
        (default :func:`~informers.toolkit.workqueue.default_controller_rate_limiter`
        on ``clock``).
    :param clock: times requeues, backoffs and the reconcile histogram
        (tests inject a :class:`~informers.testing.fake.FakeClock`). Timeouts
        of :meth:`start`, :meth:`stop` and :meth:`wait_idle` are real seconds.
    :param sync_timeout: how long :meth:`start` waits for each source to push
        its initial state (``None``: as long as it takes).
    :param metrics: a :class:`~informers.toolkit.runtime.ControllerMetricsProvider`
        (default: none), e.g.
        :class:`~informers.toolkit.runtime.prometheus.PrometheusControllerMetrics`.
    :param queue_metrics: the workqueue's
        :class:`~informers.toolkit.workqueue.MetricsProvider` (``workqueue_*``
        metrics, labelled with ``name``).
    :param reconcile_batch: with ``max_batch > 1``: a worker that takes a
        request also takes, without waiting, up to ``max_batch - 1`` more
        that are queued, and hands two or more to
        ``reconcile_batch(requests)`` (one alone still goes to ``reconcile``).
        It answers one outcome per request, in order (a result, or the
        exception that request failed with); each outcome is applied to its
        request exactly as a single reconcile's would be. When
        ``reconcile_batch`` itself raises, every request of the batch failed
        with that error. The requests of a batch are distinct and held by
        that worker until the call returns (no other worker gets them).
    :param max_batch: the most requests one worker takes at once (default 1:
        no batching); more than 1 needs ``reconcile_batch``.
    :param priority_queue: use a :class:`~informers.toolkit.workqueue.PriorityQueue`
        (default: a :class:`~informers.toolkit.workqueue.RateLimitingQueue`): informer
        sources then add the requests of their initial list and of resyncs
        with low priority and those of every other event with high priority,
        so events are reconciled first while a large list drains; a requeue
        keeps the priority its request was handed out with. Requests added
        by other sources, or by hand with ``queue.add(request)``, are high.
    :param priority_max_wait: with ``priority_queue``: the queue's
        ``max_wait``, how long a low-priority request waits at most before
        newer events stop overtaking it (seconds, default
        :data:`~informers.toolkit.workqueue.DEFAULT_MAX_WAIT`).
    :param reconcile_timeout: seconds (of ``clock``) a reconcile call should
        take at most (default ``None``: no limit). It is the deadline of the
        call's :class:`~informers.toolkit.runtime.ReconcileContext`
        (:func:`~informers.toolkit.runtime.current_context`); a call still running
        past it is logged at WARNING and counted
        (``controller_runtime_reconcile_timeouts_total``) but not stopped: a
        thread cannot be killed, so it runs on, keeping its worker and its
        request, until it returns.

    Every reconcile call can reach its context through
    :func:`~informers.toolkit.runtime.current_context`: the deadline, and a stop
    event set when :meth:`stop` begins (so also when a leader-elected
    controller is stopped because leadership was lost).

    Raises :class:`ValueError` for an empty name or one with whitespace, a
    missing or non-callable reconcile, no sources, ``workers < 1`` or a
    negative ``sync_timeout``; :class:`TypeError` for an object that is not
    a source. A controller runs once: start, then stop. Every method is
    thread-safe.
    """

    def __init__(
        self,
        name: str,
        reconcile: ReconcileFunc,
        sources: Sequence[Source],
        *,
        workers: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        clock: Clock = REAL_CLOCK,
        sync_timeout: float | None = 60.0,
        metrics: ControllerMetricsProvider | None = None,
        queue_metrics: MetricsProvider | None = None,
        reconcile_batch: BatchReconcileFunc | None = None,
        max_batch: int = 1,
        priority_queue: bool = False,
        priority_max_wait: float = DEFAULT_MAX_WAIT,
        reconcile_timeout: float | None = None,
    ) -> None:
        self._name = _validate_name(name)
        if reconcile_timeout is not None and (
            isinstance(reconcile_timeout, bool)
            or not isinstance(reconcile_timeout, int | float)
            or not math.isfinite(reconcile_timeout)
            or reconcile_timeout <= 0
        ):
            raise ValueError(
                f"reconcile_timeout must be None or finite and > 0, not {reconcile_timeout!r}"
            )
        self._reconcile_timeout = reconcile_timeout
        # Set when stop() begins: every reconcile context's stop event.
        self._stop_event = threading.Event()
        # The writes each reconcile made, held against the next one (read-your-writes).
        self._writes = WriteBarrier()
        if isinstance(max_batch, bool) or not isinstance(max_batch, int):
            raise TypeError(f"max_batch must be an int, not {type(max_batch).__name__}")
        if max_batch < 1:
            raise ValueError(f"controller {name}: max_batch must be at least 1, not {max_batch}")
        if max_batch > 1 and not callable(reconcile_batch):
            raise ValueError(f"controller {name}: max_batch > 1 needs a reconcile_batch function")
        self._reconcile_batch = reconcile_batch if max_batch > 1 else None
        self._max_batch = max_batch
        if reconcile is None:
            raise ValueError(f"controller {name}: no reconcile function given")
        if not callable(reconcile):
            raise ValueError(
                f"controller {name}: reconcile must be callable, not {type(reconcile).__name__}"
            )
        self._sources = _validate_sources(sources)
        if isinstance(workers, bool) or not isinstance(workers, int):
            raise TypeError(f"workers must be an int, not {type(workers).__name__}")
        if workers < 1:
            raise ValueError(f"controller {name}: workers must be at least 1, not {workers}")
        if sync_timeout is not None and (math.isnan(sync_timeout) or sync_timeout < 0):
            raise ValueError(f"sync_timeout must be None or >= 0, not {sync_timeout!r}")
        self._reconcile = reconcile
        self._workers = workers
        self._clock = clock
        self._sync_timeout = sync_timeout
        self._rate_limiter: RateLimiter[Request] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=clock)
        )
        limiter = _RecordingLimiter(self._rate_limiter, self._record_delay)
        self._queue: RateLimitingQueue[Request]
        if priority_queue:
            self._queue = PriorityQueue(
                limiter, name=name, clock=clock, metrics=queue_metrics, max_wait=priority_max_wait
            )
        else:
            self._queue = RateLimitingQueue(limiter, name=name, clock=clock, metrics=queue_metrics)
        self._metrics = ControllerMetrics.create(metrics or NoopControllerMetricsProvider(), name)
        self._metrics.max_concurrent_reconciles.set_function(lambda: float(workers))
        # The gauge holds the controller weakly: a registry outlives controllers.
        ref = weakref.ref(self)

        def active_workers() -> float:
            controller = ref()
            return 0.0 if controller is None else controller._active_workers()

        self._metrics.active_workers.set_function(active_workers)

        self._cond = threading.Condition()
        # Guarded by _cond:
        # _state goes new → starting → running → stopping → stopped (start
        # may also go starting → stopping/stopped); never back.
        self._state = _NEW
        self._threads: list[threading.Thread] = []
        self._live_workers = 0  # worker threads inside their loop
        self._launching = False  # start() is starting the worker threads
        self._in_flight = 0  # requests handed out by the queue and not done yet
        self._generation = 0  # +1 at every hand-out and every done (wait_idle's witness)
        # request -> the earliest time a requeue this controller asked the queue
        # for is due; removed when a worker gets the request at or after it.
        self._due: dict[Request, float] = {}

    # ------------------------------------------------------------------ info

    @property
    def name(self) -> str:
        """The controller's name."""
        return self._name

    @property
    def queue(self) -> RateLimitingQueue[Request]:
        """The workqueue (a :class:`~informers.toolkit.workqueue.PriorityQueue` with
        ``priority_queue``). Adding requests to it by hand is fine
        (``queue.add(Request(...))``); its ``rate_limiter`` wraps the
        controller's (:attr:`rate_limiter`)."""
        return self._queue

    @property
    def stop_event(self) -> threading.Event:
        """Set when :meth:`stop` begins; every reconcile context's stop event."""
        return self._stop_event

    @property
    def rate_limiter(self) -> RateLimiter[Request]:
        """The rate limiter deciding the backoff of failed requests."""
        return self._rate_limiter

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources, in start order."""
        return self._sources

    @property
    def write_barrier(self) -> WriteBarrier:
        """Holds each reconcile back until the caches reflect the writes the
        previous reconcile of its request made (read-your-writes)."""
        return self._writes

    @property
    def workers(self) -> int:
        """How many reconciles may run at once."""
        return self._workers

    def is_running(self) -> bool:
        """Whether the workers were started and :meth:`stop` was not called."""
        with self._cond:
            return self._state == _RUNNING

    def _active_workers(self) -> float:
        with self._cond:
            return float(self._in_flight)

    def __repr__(self) -> str:
        with self._cond:
            state = self._state
        return f"<Controller {self._name} {state}>"

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the sources in order, each pushing its initial state before
        the next starts, then the workers; returns once the workers run.

        Blocks while sources sync (each up to ``sync_timeout`` seconds).
        Raises :class:`~informers.errors.CacheSyncTimeoutError` naming the
        source that did not sync (everything started so far is stopped again,
        and the controller is stopped), :class:`~informers.errors.InformerStateError`
        when started before or stopped, and whatever a source's ``start``
        raises (after the same clean-up). A :meth:`stop` from another thread
        while sources sync makes ``start`` return early without workers.
        """
        with self._cond:
            if self._state != _NEW:
                raise InformerStateError(f"controller {self._name}: already {self._state}")
            self._state = _STARTING
        log.info("controller %s: starting %d source(s)", self._name, len(self._sources))
        started: list[Source] = []
        try:
            for source in self._sources:
                if self._stop_requested():
                    break
                source.start(self._queue)
                started.append(source)
                if not source.wait_synced(self._sync_timeout) and not self._stop_requested():
                    raise CacheSyncTimeoutError({source.name: self._not_synced_reason(source)})
                log.info("controller %s: source %s synced", self._name, source.name)
        except InformerStateError:
            if self._stop_requested():  # a source stopped by a concurrent stop()
                log.info("controller %s: stopped while starting", self._name)
                return
            log.error("controller %s: start failed; stopping what was started", self._name)
            self._abort_start(started)
            raise
        except BaseException:
            log.error("controller %s: start failed; stopping what was started", self._name)
            self._abort_start(started)
            raise
        with self._cond:
            if self._state != _STARTING:  # stop() was called meanwhile; it cleans up
                log.info("controller %s: stopped while starting", self._name)
                return
            self._state = _RUNNING
            threads = [
                threading.Thread(
                    target=self._worker, name=f"reconcile-{self._name}-{n}", daemon=True
                )
                for n in range(self._workers)
            ]
            self._threads = threads
            self._live_workers = len(threads)
            self._launching = True
        try:
            for thread in threads:
                thread.start()
        finally:
            with self._cond:
                self._launching = False
                self._cond.notify_all()
        log.info("controller %s: started %d worker(s)", self._name, self._workers)

    def _stop_requested(self) -> bool:
        with self._cond:
            return self._state != _STARTING

    def _not_synced_reason(self, source: Source) -> str:
        timeout = "ever" if self._sync_timeout is None else f"{self._sync_timeout} s"
        reason = f"initial state not pushed after {timeout}"
        if isinstance(source, HandlerSource) and not source.informer_started():
            reason += " (the informer is not started: start it, or its factory, first)"
        return reason

    def _abort_start(self, started: list[Source]) -> None:
        self._stop_event.set()
        for source in reversed(started):
            try:
                source.stop(5.0)
            except Exception:
                log.exception("controller %s: stopping source %s failed", self._name, source.name)
        self._queue.shutdown()
        with self._cond:
            self._state = _STOPPED
            self._due.clear()
            self._cond.notify_all()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop: the sources first (no new requests), then the queue (the
        reconciles in progress finish; queued requests are dropped), then
        join every worker. ``timeout`` (real seconds, ``None``: no limit)
        bounds the whole stop; a worker still in a reconcile after it is
        logged at WARNING by name and left to finish on its own (a thread
        cannot be killed). Idempotent: a second call waits for the first to
        finish (up to its own ``timeout``). Also stops a controller never
        started. Called from a reconcile, it does not wait for that
        reconcile (it cannot) but stops everything else."""
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        me = threading.current_thread()
        with self._cond:
            if self._state in (_STOPPING, _STOPPED):
                # Another stop() is under way: wait for it (not from a worker,
                # which that stop() is waiting for).
                if me not in self._threads:
                    self._cond.wait_for(lambda: self._state == _STOPPED, remaining())
                return
            was = self._state
            self._state = _STOPPING
            self._cond.notify_all()
            self._stop_event.set()
            # start() may be starting the workers right now (stop() called
            # from the first reconcile): wait until they all run, to join them.
            self._cond.wait_for(lambda: not self._launching, remaining())
            threads = list(self._threads)
        log.info("controller %s: stopping", self._name)
        if was != _NEW:
            for source in reversed(self._sources):
                try:
                    source.stop(remaining())
                except Exception:
                    log.exception(
                        "controller %s: stopping source %s failed", self._name, source.name
                    )
        # Workers keep taking what is queued (and skip it: stopping) until the
        # queue is empty, then get() answers shutdown and they return. Joining
        # them is the drain, bounded in real seconds whatever the clock.
        self._queue.shutdown()
        for thread in threads:
            if thread is not me:
                thread.join(remaining())
        alive = [t.name for t in threads if t.is_alive() and t is not me]
        if alive:
            log.warning(
                "controller %s: worker(s) still reconciling after %s s: %s",
                self._name,
                timeout,
                ", ".join(alive),
            )
        with self._cond:
            self._state = _STOPPED
            self._due.clear()
            self._cond.notify_all()
        log.info("controller %s: stopped", self._name)

    def run(self, stop: threading.Event) -> None:
        """:meth:`start`, block until ``stop`` is set, then :meth:`stop`
        (also when ``start`` raises)."""
        try:
            self.start()
            stop.wait()
        finally:
            self.stop()

    # ------------------------------------------------------------------ idle point

    def wait_idle(self, timeout: float | None = 10.0) -> bool:
        """Block until the controller is idle; ``timeout`` in real seconds.

        Idle means, at one moment: every source is idle (an informer source:
        its handler has handled every event delivered to it), no request is
        queued, no reconcile is running, every worker waits in the queue's
        ``get``, and no requeue this controller asked for (``requeue_after``,
        ``requeue`` or an error's backoff) is due at ``clock.now()`` without
        having been handed to a worker since. Requeues due later do not
        count: with a FakeClock, advance it and call ``wait_idle`` again to
        see them reconciled. Delayed adds you made on :attr:`queue` yourself
        count as busy until they fire. Returns False on timeout, e.g. when
        requests are queued and the workers are not started. Events still on
        their way from the server may make the controller busy again.
        """
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        while True:
            for source in self._sources:
                if not source.wait_idle(remaining()):
                    return False
            with self._cond:
                if not self._cond.wait_for(lambda: self._in_flight == 0, remaining()):
                    return False
                seen = self._generation
                workers = self._live_workers
            if workers and not self._queue.wait_for_waiters(workers, remaining()):
                return False
            queued = len(self._queue)
            delayed = self._queue.num_delayed()
            waiting = self._queue.waiters()
            now = self._clock.now()
            with self._cond:
                # Every worker waited in get() (so held nothing) before the
                # queue was seen empty, and none has taken anything since
                # (the generation did not move), so at that moment nothing
                # was queued or in progress.
                steady = (
                    self._generation == seen
                    and self._in_flight == 0
                    and waiting >= self._live_workers
                )
                not_due = sum(1 for due in self._due.values() if due > now)
                if steady and queued == 0 and delayed <= not_due:
                    return True
                if self._generation == seen and not self._cond.wait_for(
                    functools.partial(self._moved_since_locked, seen), remaining()
                ):
                    return False
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def _moved_since_locked(self, seen: int) -> bool:
        return self._generation != seen

    # ------------------------------------------------------------------ workers

    def _record_delay(self, request: Request, delay: float) -> None:
        """A requeue of ``request`` after ``delay`` seconds was asked for."""
        if delay <= 0:
            return
        due = self._clock.now() + delay
        with self._cond:
            if self._state in (_STOPPING, _STOPPED):
                return
            current = self._due.get(request)
            if current is None or due < current:
                self._due[request] = due

    def _worker(self) -> None:
        try:
            while True:
                item, shutdown = self._queue.get()
                if shutdown:
                    return
                if item is None:  # only a get() with a timeout answers this
                    continue
                items = [item]
                if self._reconcile_batch is not None:
                    while len(items) < self._max_batch:
                        more, _ = self._queue.get(0.0)  # what is queued now; never waits
                        if more is None:
                            break
                        items.append(more)
                now = self._clock.now()
                with self._cond:
                    self._in_flight += len(items)
                    self._generation += 1
                    skip = self._state in (_STOPPING, _STOPPED)
                    for taken in items:
                        if isinstance(taken, Request):
                            due = self._due.get(taken)
                            if due is not None and due <= now:
                                del self._due[taken]
                try:
                    if skip:
                        pass
                    elif len(items) == 1:
                        self._handle(item)
                    else:
                        self._handle_batch(items)
                finally:
                    for taken in items:
                        self._queue.done(taken)
                    with self._cond:
                        self._in_flight -= len(items)
                        self._generation += 1
                        self._cond.notify_all()
        finally:
            with self._cond:
                self._live_workers -= 1
                self._cond.notify_all()

    def _requests(self, items: Sequence[Any]) -> list[Request]:
        """The requests among ``items``; anything else is logged and dropped."""
        requests = []
        for item in items:
            try:
                requests.append(coerce_request(item))
            except (TypeError, ObjectKeyError) as error:
                log.error(
                    "controller %s: dropping a queue item that is not a request: %s",
                    self._name,
                    error,
                )
                self._queue.forget(item)
        return requests

    def _handle_batch(self, items: Sequence[Any]) -> None:
        """Reconcile several queue items with one ``reconcile_batch`` call and
        apply each one's outcome to the queue."""
        batch = self._reconcile_batch
        assert batch is not None
        requests = self._requests(items)
        if not requests:
            return
        started = self._clock.now()
        outcomes: Sequence[Result | BaseException | None]
        deadline = self._enter(requests, started)
        try:
            self._writes.hold(requests)  # read-your-writes (runtime.writes)
            outcomes = batch(requests)
            if len(outcomes) != len(requests):
                raise TypeError(
                    f"reconcile_batch answered {len(outcomes)} outcome(s) for "
                    f"{len(requests)} request(s)"
                )
        except Exception as error:  # noqa: BLE001 - every request fails with it; _finish logs
            outcomes = [error] * len(requests)
        finally:
            self._exit(deadline)
        for request, outcome in zip(requests, outcomes, strict=True):
            if isinstance(outcome, Exception):
                self._finish(request, started, None, outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                self._finish(request, started, outcome, None)

    def _handle(self, item: Any) -> None:
        """Reconcile one queue item and apply the result to the queue."""
        requests = self._requests([item])
        if not requests:
            return
        request = requests[0]
        started = self._clock.now()
        deadline = self._enter(requests, started)
        failure: Exception | None = None
        result = None
        try:
            self._writes.hold(requests)  # read-your-writes (runtime.writes)
            result = self._reconcile(request)
        except Exception as error:  # noqa: BLE001 - requeued or dropped, and logged, by _finish
            failure = error
        finally:
            self._exit(deadline)
        self._finish(request, started, result, failure)

    def _enter(self, requests: Sequence[Request], started: float) -> TimerHandle | None:
        """Before a reconcile call: make its context this thread's current
        one and, with a ``reconcile_timeout``, arm the timer that reports an
        overrun; answers that timer (for :meth:`_exit`)."""
        timeout = self._reconcile_timeout
        deadline = None if timeout is None else started + timeout
        _set_current(ReconcileContext(requests, self._stop_event, deadline, self._clock))
        if timeout is None:
            return None
        return self._clock.call_later(
            timeout,
            functools.partial(self._overrun, tuple(requests), timeout),
            f"reconcile-{self._name}-deadline",
        )

    def _exit(self, timer: TimerHandle | None) -> None:
        """After a reconcile call: keep its writes for the next call of its
        requests; no current context, no overrun report."""
        self._writes.keep(current_context())
        _set_current(None)
        if timer is not None:
            timer.cancel()

    def _overrun(self, requests: tuple[Request, ...], timeout: float) -> None:
        """Timer callback: a reconcile call is still running at its deadline."""
        self._metrics.reconcile_timeouts.inc()
        log.warning(
            "controller %s: reconcile of %s still running after its %s s timeout; it cannot "
            "be stopped and keeps its worker until it returns",
            self._name,
            ", ".join(map(str, requests)),
            timeout,
        )

    def _finish(
        self, request: Request, started: float, result: Any, error: Exception | None
    ) -> None:
        """Apply one request's outcome (``result``, or the ``error`` its
        reconcile raised) to the queue and the metrics."""
        metrics = self._metrics
        if error is None and result is not None and not isinstance(result, Result):
            error = TypeError(f"reconcile returned a {type(result).__name__}, not a Result or None")
        if error is not None:
            metrics.reconcile_time.observe(max(0.0, self._clock.now() - started))
            metrics.reconcile_errors.inc()
            metrics.reconcile_total[RESULT_ERROR].inc()
            if is_terminal(error):
                metrics.terminal_reconcile_errors.inc()
                self._queue.forget(request)
                log.error(
                    "controller %s: reconcile of %s failed with a terminal error; not requeued",
                    self._name,
                    request,
                    exc_info=error,
                )
            else:
                self._queue.add_rate_limited(request)
                log.warning(
                    "controller %s: reconcile of %s failed (%d time(s) in a row); requeued "
                    "with backoff",
                    self._name,
                    request,
                    self._queue.num_requeues(request),
                    exc_info=error,
                )
            return
        metrics.reconcile_time.observe(max(0.0, self._clock.now() - started))
        if result is not None and result.requeue_after:
            self._queue.forget(request)
            self._record_delay(request, result.requeue_after)
            self._queue.add_after(request, result.requeue_after)
            metrics.reconcile_total[RESULT_REQUEUE_AFTER].inc()
            log.debug(
                "controller %s: %s reconciled; again in %s s",
                self._name,
                request,
                result.requeue_after,
            )
        elif result is not None and result.requeue:
            self._queue.add_rate_limited(request)
            metrics.reconcile_total[RESULT_REQUEUE].inc()
            log.debug("controller %s: %s reconciled; requeued with backoff", self._name, request)
        else:
            self._queue.forget(request)
            metrics.reconcile_total[RESULT_SUCCESS].inc()
            log.debug("controller %s: %s reconciled", self._name, request)
