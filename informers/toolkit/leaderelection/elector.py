"""The election loop: :class:`LeaderElector`, and
:func:`run_with_leader_election` to run a controller only while leading.

A :class:`LeaderElector` is client-go's ``LeaderElector`` on threads:
:meth:`~LeaderElector.run` tries to acquire the Lease every retry period
(jittered), then renews it every retry period until either a renew deadline
passes without a successful renewal (leadership lost) or its stop event is
set. One run is one term at most: like client-go's ``Run`` it returns once
leadership ends, and the usual reaction is to exit the process (or make a new
elector).

Timing of a leader that stops renewing (``LD`` lease duration, ``RD`` renew
deadline, measured from the start of its last successful renewal, ``s``):

* the leader's own deadline is ``s + RD``; a watchdog thread ends the term at
  that moment even if a renewal request is still in flight, setting the stop
  event handed to ``on_started_leading``;
* every other candidate saw that renewal at some time ``>= s`` and waits a
  further ``LD`` by its own clock, so nobody takes over before ``s + LD``;
* the leader's work therefore has ``LD - RD`` (the config's
  :attr:`~informers.toolkit.leaderelection.LeaderElectionConfig.stop_margin`) to
  stop. :func:`run_with_leader_election` passes what is left of that margin
  to the controller's ``stop``; the elector logs a warning when
  ``on_started_leading`` takes longer.

This holds while the candidates' clocks run at the same rate; the timestamps
in the Lease are never compared with local time.

Differences from client-go:

* ``on_stopped_leading`` is called only by an elector that led, after
  ``on_started_leading`` returned (client-go calls ``OnStoppedLeading`` when
  ``Run`` returns, even if it never led, and does not wait for
  ``OnStartedLeading``).
* ``on_new_leader`` is called for non-empty holders only (a released Lease is
  not a new leader), in order, on one notifier thread.
* The renew deadline is enforced by a watchdog on the clock, not by
  cancelling the request (Python cannot cancel a blocking request).
* A candidate waiting for an expiry wakes exactly when the observed record
  expires if that comes before its next jittered retry.
* Expiry waits the longer of the candidate's own lease duration and the
  holder's ``leaseDurationSeconds`` (client-go uses the holder's only).
* With ``release_on_cancel``, the Lease is released after the work stopped
  and ``on_stopped_leading`` returned, also when leadership was lost by the
  deadline (the release is conditional on the last resourceVersion, so it
  can only clear a record this candidate still holds).
* :meth:`LeaderElector.is_leader` is true only during a term (client-go's
  ``IsLeader`` compares the last observed holder, which stays true after a
  lost deadline); :meth:`Candidate.holds_lease
  <informers.toolkit.leaderelection.Candidate.holds_lease>` is client-go's meaning.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from informers.errors import InformerStateError
from informers.toolkit._logcontext import context_logger
from informers.toolkit.leaderelection.candidate import Candidate
from informers.toolkit.leaderelection.config import JITTER_FACTOR, LeaderElectionConfig
from informers.toolkit.leaderelection.metrics import NOOP_LEADER_METRICS, LeaderMetrics
from informers.util.backoff import jittered
from informers.util.clock import REAL_CLOCK, Clock

__all__ = ["LeaderElector", "Runnable", "run_with_leader_election"]

log = context_logger(logging.getLogger(__name__))


@runtime_checkable
class Runnable(Protocol):
    """Something to run only while leading, such as
    ``informers.toolkit.runtime.Controller``: ``start()`` returns at once (the work
    runs on its own threads), ``stop(timeout)`` stops it, waiting at most
    ``timeout`` seconds, and joins its threads."""

    def start(self) -> None: ...

    def stop(self, timeout: float | None = None) -> object: ...


def _no_work(stop: threading.Event) -> None:
    """The ``on_started_leading`` of an elector made by
    :func:`run_with_leader_election` from a config (no thread is started)."""


class _Term:
    """One period of leadership. ``leader_stop`` and ``changed`` are events;
    the other fields are guarded by the owning elector's lock.

    Invariant: once ``ended`` is true it stays true, ``leader_stop`` is set
    and ``deadline`` no longer moves.
    """

    def __init__(self, deadline: float) -> None:
        self.leader_stop = threading.Event()  # handed to on_started_leading
        self.changed = threading.Event()  # wakes the watchdog (deadline moved, or ended)
        self.deadline = deadline  # guarded: local time the term ends without a renewal
        self.ended = False  # guarded
        self.ended_at = 0.0  # guarded: local time the term ended
        self.reason = ""  # guarded: why it ended


class _Worker:
    """A named thread running one leading-time callable; ``done`` is set
    when it returned (or raised, which is logged)."""

    def __init__(self, name: str, target: Callable[[], None], what: str) -> None:
        self.done = threading.Event()
        self.what = what
        self._target = target
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)

    def _main(self) -> None:
        try:
            self._target()
        except Exception:
            log.exception("%s raised", self.what)
        finally:
            self.done.set()


class _Notifier:
    """Calls ``on_new_leader`` in order on its own named thread, so a slow
    callback never delays a renewal."""

    def __init__(self, callback: Callable[[str], None], name: str) -> None:
        self._callback = callback
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def put(self, identity: str) -> None:
        self._queue.put(identity)

    def close(self) -> None:
        """Deliver what is queued, then end and join the thread."""
        self._queue.put(None)
        self._thread.join()

    def _main(self) -> None:
        while (identity := self._queue.get()) is not None:
            try:
                self._callback(identity)
            except Exception:
                log.exception("on_new_leader(%r) raised", identity)


class LeaderElector:
    """Leader election for one identity on one Lease (see the module
    docstring for the protocol, its timing and the differences from
    client-go).

    Callbacks:

    ``on_started_leading(stop_event)``
        runs on its own thread (``leader-elector-<name>[<identity>]-leading``) once the
        Lease is acquired. ``stop_event`` is set when leadership is lost or
        the elector stops; the callback must then stop its work within the
        config's ``stop_margin`` and return.
    ``on_stopped_leading()``
        called on the elector's thread once a term ended and
        ``on_started_leading`` returned; only if this elector led.
    ``on_new_leader(identity)``
        called, in order, on a notifier thread (``leader-elector-<name>[<identity>]-notify``)
        whenever the observed holder changes to another non-empty identity,
        including this elector's own.

    Exceptions raised by callbacks are logged, never propagated.
    ``metrics`` receives the leader gauge and the slow-path counter
    (:mod:`informers.toolkit.leaderelection.metrics`); ``rng`` draws the retry jitter.

    Thread-safety: :meth:`is_leader`, :meth:`get_leader`, :meth:`start`,
    :meth:`stop` and :meth:`join` may be called from any thread. One run at a
    time: :meth:`run` raises :class:`~informers.errors.InformerStateError` if
    a run is in progress. One lock guards the run flag, the current term and
    the started thread; callbacks and requests run outside it.
    """

    def __init__(
        self,
        config: LeaderElectionConfig,
        *,
        on_started_leading: Callable[[threading.Event], None],
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        clock: Clock = REAL_CLOCK,
        metrics: LeaderMetrics = NOOP_LEADER_METRICS,
        rng: random.Random | None = None,
    ) -> None:
        if not callable(on_started_leading):
            raise TypeError("on_started_leading must be callable")
        self._config = config
        self._name = config.election_name
        #: Threads are named ``leader-elector-<name>[<identity>]`` (plus a suffix).
        self._thread_name = f"leader-elector-{self._name}[{config.identity}]"
        self._logger = context_logger(log.logger, election=self._name, identity=config.identity)
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock = clock
        self._metrics = metrics
        self._rng = rng
        self._candidate = Candidate(config, clock=clock, metrics=metrics)
        self._lock = threading.Lock()
        self._running = False  # guarded by _lock: a run() is in progress
        self._term: _Term | None = None  # guarded by _lock: the current term, if any
        self._thread: threading.Thread | None = None  # guarded by _lock: start()'s thread
        self._stop_event = threading.Event()  # guarded by _lock (replaced by start())
        self._done = threading.Event()  # guarded by _lock (replaced by start())
        # Set by retry_now() (and stop()): a run begun by start() waits on it
        # between acquisition attempts. Thread-safe on its own.
        self._nudge = threading.Event()
        # Used by the running thread only:
        self._reported = ""  # the last holder passed to on_new_leader
        self._notifier: _Notifier | None = None
        metrics.leader_off(self._name)

    # ------------------------------------------------------------- queries

    @property
    def config(self) -> LeaderElectionConfig:
        return self._config

    @property
    def candidate(self) -> Candidate:
        """The candidate this elector drives (its observation of the record)."""
        return self._candidate

    @property
    def name(self) -> str:
        """The election's name (config ``name`` or the Lease's ``namespace/name``)."""
        return self._name

    def is_leader(self) -> bool:
        """True from the moment the Lease was acquired until leadership was
        lost or the elector stopped (the moment the leader's stop event is set)."""
        with self._lock:
            term = self._term
            return term is not None and not term.ended

    def get_leader(self) -> str:
        """The holder of the last observed record (empty when none was seen)."""
        return self._candidate.leader()

    # ------------------------------------------------------------- running

    def run(self, stop: threading.Event) -> None:
        """Elect until ``stop`` is set or one term of leadership ended.

        Blocks: acquires (an attempt every ``retry_period``, jittered by
        :data:`~informers.toolkit.leaderelection.JITTER_FACTOR`), then leads and
        renews until the renew deadline passes without a successful renewal
        or ``stop`` is set; then waits for ``on_started_leading`` to return,
        calls ``on_stopped_leading`` and, with ``release_on_cancel``,
        releases the Lease. Returns when all of that is done and every
        thread it started is joined.
        """
        self._run(stop, None, None)

    def start(self) -> None:
        """Run on a new thread named ``leader-elector-<name>[<identity>]``; stop it with
        :meth:`stop`. Raises :class:`~informers.errors.InformerStateError`
        if started and not yet ended."""
        with self._lock:
            if self._thread is not None and not self._done.is_set():
                raise InformerStateError(f"leader elector {self._name} is already started")
            stop, done = threading.Event(), threading.Event()
            thread = threading.Thread(
                target=self._main,
                args=(stop, done),
                name=self._thread_name,
                daemon=True,
            )
            self._stop_event, self._done, self._thread = stop, done, thread
        thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread :meth:`start` began and wait up to ``timeout``
        seconds (``None``: no limit) for it to end; True when it ended.
        Idempotent; True at once if never started."""
        with self._lock:
            stop = self._stop_event if self._thread is not None else None
        if stop is not None:
            stop.set()
            self._nudge.set()
        return self.join(timeout)

    def retry_now(self) -> None:
        """Make the next acquisition attempt of a run begun by :meth:`start`
        happen now rather than after the retry period (e.g. a watch saw the
        Lease released). No effect while leading, or on :meth:`run` with a
        stop event of the caller's. Never blocks; thread-safe."""
        self._nudge.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the thread :meth:`start` began
        to end (it ends by itself once a term of leadership ends); True when
        it ended or was never started."""
        with self._lock:
            thread, done = self._thread, self._done
        if thread is None:
            return True
        if not done.wait(timeout):
            return False
        thread.join()
        return True

    def _main(self, stop: threading.Event, done: threading.Event) -> None:
        try:
            self.run(stop)
        except Exception:
            self._logger.exception("leader elector %s failed", self._name)
        finally:
            done.set()

    # --------------------------------------------------------------- terms

    def _run(
        self,
        stop: threading.Event,
        controller: Runnable | None,
        errors: list[BaseException] | None,
    ) -> None:
        with self._lock:
            if self._running:
                raise InformerStateError(f"leader elector {self._name} is running already")
            self._running = True
        if self._on_new_leader is not None:
            self._notifier = _Notifier(self._on_new_leader, f"{self._thread_name}-notify")
        try:
            acquired_at = self._acquire(stop)
            if acquired_at is not None:
                self._lead(stop, acquired_at, controller, errors)
        finally:
            notifier, self._notifier = self._notifier, None
            if notifier is not None:
                notifier.close()
            with self._lock:
                self._running = False

    def _acquire(self, stop: threading.Event) -> float | None:
        """Attempt until acquired (the local time the winning attempt
        started) or ``stop`` is set (``None``)."""
        config, candidate = self._config, self._candidate
        self._logger.info("%s is trying to acquire lease %s", config.identity, self._name)
        while not stop.is_set():
            started = self._clock.now()
            acquired = candidate.try_acquire_or_renew()
            self._report_leader()
            if acquired:
                return started
            delay = jittered(config.retry_period, JITTER_FACTOR, self._rng)
            expiry, now = candidate.expires_at(), self._clock.now()
            if expiry is not None and now < expiry < now + delay:
                delay = expiry - now  # try exactly when the holder's record expires
            with self._lock:
                # start()'s own stop event comes with the nudge (stop() sets both).
                nudge = self._nudge if stop is self._stop_event else None
            if nudge is None:
                if self._clock.wait(stop, delay):
                    break
                continue
            self._clock.wait(nudge, delay)
            nudge.clear()  # a nudge from before this point is served by the next attempt
        return None

    def _lead(
        self,
        stop: threading.Event,
        acquired_at: float,
        controller: Runnable | None,
        errors: list[BaseException] | None,
    ) -> None:
        config = self._config
        term = _Term(acquired_at + config.renew_deadline)
        with self._lock:
            self._term = term
        self._metrics.leader_on(self._name)
        self._logger.info("%s started leading %s", config.identity, self._name)
        watchdog = threading.Thread(
            target=self._watch,
            args=(term,),
            name=f"{self._thread_name}-watchdog",
            daemon=True,
        )
        watchdog.start()
        workers: list[_Worker] = []
        if self._on_started_leading is not _no_work:
            callback = self._on_started_leading
            workers.append(
                _Worker(
                    f"{self._thread_name}-leading",
                    lambda: callback(term.leader_stop),
                    "on_started_leading",
                )
            )
        if controller is not None:
            sink: list[BaseException] = errors if errors is not None else []
            workers.append(
                _Worker(
                    f"{self._thread_name}-controller",
                    lambda: self._drive(controller, term, sink),
                    "the controller",
                )
            )
        try:
            for worker in workers:
                worker.thread.start()
            self._renew(stop, term)
        finally:
            self._end_term(term, "the elector was stopped")  # no-op if it ended already
            term.changed.set()
            watchdog.join()
            self._await(workers, term)
            with self._lock:
                self._term = None
            if self._on_stopped_leading is not None:
                try:
                    self._on_stopped_leading()
                except Exception:
                    self._logger.exception("on_stopped_leading raised")
            if config.release_on_cancel:
                self._candidate.release()

    def _renew(self, stop: threading.Event, term: _Term) -> None:
        """Renew every retry period until the term ends (deadline, or ended
        elsewhere) or ``stop`` is set."""
        config, candidate = self._config, self._candidate
        while True:
            with self._lock:
                if term.ended:
                    return
                deadline = term.deadline
            now = self._clock.now()
            if now >= deadline:
                self._end_term(term, self._deadline_reason())
                return
            if self._clock.wait(stop, min(config.retry_period, deadline - now)):
                return
            if self._ended(term):  # the watchdog, or the controller, ended it
                return
            started = self._clock.now()
            if started >= deadline:
                self._end_term(term, self._deadline_reason())
                return
            renewed = candidate.try_acquire_or_renew(timeout=deadline - started)
            self._report_leader()
            if renewed:
                with self._lock:
                    if not term.ended:
                        term.deadline = started + config.renew_deadline
                term.changed.set()

    def _watch(self, term: _Term) -> None:
        """The watchdog: end the term when its deadline passes, even while
        the renewing thread is blocked in a request."""
        try:
            while True:
                term.changed.clear()
                with self._lock:
                    if term.ended:
                        return
                    deadline = term.deadline
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    self._end_term(term, self._deadline_reason())
                    return
                self._clock.wait(term.changed, remaining)
        except Exception:
            self._logger.exception("the renew-deadline watchdog of %s failed", self._name)
            self._end_term(term, "the renew-deadline watchdog failed")

    def _ended(self, term: _Term) -> bool:
        with self._lock:
            return term.ended

    def _deadline_reason(self) -> str:
        return f"no renewal succeeded within the renew deadline ({self._config.renew_deadline}s)"

    def _end_term(self, term: _Term, reason: str) -> None:
        """End ``term`` (idempotent): not leading from now on."""
        now = self._clock.now()
        with self._lock:
            if term.ended:
                return
            term.ended, term.ended_at, term.reason = True, now, reason
        term.leader_stop.set()
        self._metrics.leader_off(self._name)
        self._logger.info("%s stopped leading %s: %s", self._config.identity, self._name, reason)

    def _await(self, workers: list[_Worker], term: _Term) -> None:
        """Wait for the leading-time threads; warn when one outlives the
        stop margin (another candidate may lead by then)."""
        with self._lock:
            until = term.ended_at + self._config.stop_margin
        for worker in workers:
            if not self._clock.wait(worker.done, max(0.0, until - self._clock.now())):
                self._logger.warning(
                    "%s of %s has not returned within the stop margin (%.3gs) after "
                    "leadership ended; another candidate may be leading already",
                    worker.what,
                    self._name,
                    self._config.stop_margin,
                )
                self._clock.wait(worker.done, None)
            worker.thread.join()

    def _drive(self, controller: Runnable, term: _Term, errors: list[BaseException]) -> None:
        """Run ``controller`` for the term: start it, and stop it within
        what is left of the stop margin once the term ends."""
        try:
            controller.start()
        except Exception as exc:
            self._logger.exception(
                "the controller of %s failed to start; giving up leadership", self._name
            )
            errors.append(exc)
            self._end_term(term, "the controller failed to start")
            return
        self._clock.wait(term.leader_stop, None)
        with self._lock:
            left = term.ended_at + self._config.stop_margin - self._clock.now()
        try:
            controller.stop(max(0.0, left))
        except Exception as exc:
            self._logger.exception("the controller of %s failed to stop", self._name)
            errors.append(exc)

    def _report_leader(self) -> None:
        leader = self._candidate.leader()
        if not leader or leader == self._reported:
            return
        self._reported = leader
        self._logger.info("lease %s: the leader is now %s", self._name, leader)
        if self._notifier is not None:
            self._notifier.put(leader)


def run_with_leader_election(
    controller: Runnable,
    elector: LeaderElector | LeaderElectionConfig,
    *,
    stop: threading.Event,
) -> None:
    """Run ``controller`` only while leading; block until ``stop`` is set
    or leadership ended.

    ``elector`` is a :class:`LeaderElector` (its own callbacks run too) or a
    :class:`~informers.toolkit.leaderelection.LeaderElectionConfig` (an elector is
    made for it, on the real clock). Once the Lease is acquired,
    ``controller.start()`` runs on a thread named
    ``leader-elector-<name>[<identity>]-controller``; when leadership is lost (renew
    deadline) or ``stop`` is set, ``controller.stop(timeout)`` is called
    with what is left of ``lease_duration - renew_deadline`` since
    leadership ended, so the controller has stopped before any other
    candidate can acquire the Lease -- provided it honours the timeout. The
    release (``release_on_cancel``) and ``on_stopped_leading`` come after it.

    A controller whose ``start()`` raises ends leadership at once. What
    ``start()`` or ``stop()`` raised is re-raised here once the election
    ended (and every thread is joined). One term at most: after a lost
    lease this returns, and a new controller (and usually a new process)
    is needed to lead again.
    """
    if isinstance(elector, LeaderElectionConfig):
        elector = LeaderElector(elector, on_started_leading=_no_work)
    errors: list[BaseException] = []
    elector._run(stop, controller, errors)
    if errors:
        raise errors[0]
