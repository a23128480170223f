"""The reconcile context: what a running reconcile can ask about its call.

A :class:`~informers.toolkit.runtime.Controller` makes a :class:`ReconcileContext`
for every reconcile call and makes it the worker thread's
:func:`current_context` for the length of the call::

    def reconcile(request):
        ctx = current_context()
        for step in steps:
            if ctx.cancelled():          # shutting down, or past the deadline
                return Result(requeue=True)
            do(step)

It carries:

* a **stop event**, set when the controller stops (:meth:`Controller.stop
  <informers.toolkit.runtime.Controller.stop>`; a controller run under leader
  election is stopped when leadership is lost, so the event is set then too);
* a **deadline**, when the controller has a ``reconcile_timeout`` (off by
  default): the clock time by which the call should have returned;
* a **write ledger** (:class:`~informers.toolkit.runtime.writes.WriteLedger`):
  the writes the call made through a :class:`~informers.toolkit.client.Client`,
  which the controller waits for before it reconciles the same request again
  (read-your-writes; see :mod:`informers.toolkit.runtime.writes`).

Neither interrupts anything: **a thread cannot be killed**. A reconcile that
ignores its context runs to its end; past its deadline the controller logs
one WARNING for it and counts it (``controller_runtime_reconcile_timeouts_total``),
and the worker, the request (no other worker gets it meanwhile) and the
reconcile's own resources stay taken until it returns. At
:meth:`~informers.toolkit.runtime.Controller.stop` a reconcile still running after
the stop's timeout is logged by thread name and left behind (the worker is a
daemon thread). So a reconcile that can block for long should wait through
:meth:`ReconcileContext.wait` or pass :meth:`ReconcileContext.remaining` as
the timeout of what it calls.

Thread-safety: a context is made by its worker and read from any thread;
its stop event is shared by every context of one controller.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from informers.toolkit.runtime.writes import WriteLedger
from informers.util.clock import Clock

__all__ = ["ReconcileContext", "current_context"]


class ReconcileContext:
    """One reconcile call's stop event and deadline (see the module docs).

    :param requests: what the call reconciles (one request, or a batch's).
    :param stop: set when the call should give up: the controller stops.
    :param deadline: the clock time the call should end by, or ``None``.
    :param clock: the controller's clock (the deadline's and ``wait``'s).
    :param writes: the call's write ledger (default: a new, empty one).
    """

    __slots__ = ("_clock", "deadline", "requests", "stop", "writes")

    def __init__(
        self,
        requests: Sequence[Any],
        stop: threading.Event,
        deadline: float | None,
        clock: Clock,
        writes: WriteLedger | None = None,
    ) -> None:
        self.requests = tuple(requests)
        self.writes = WriteLedger() if writes is None else writes
        self.stop = stop
        self.deadline = deadline
        self._clock = clock

    @property
    def request(self) -> Any:
        """The request of the call (a batch's first)."""
        return self.requests[0]

    def remaining(self) -> float | None:
        """Seconds until the deadline (``0.0`` once past it); ``None``: no
        deadline."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self._clock.now())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.deadline is not None and self._clock.now() >= self.deadline

    def cancelled(self) -> bool:
        """Whether the call should give up: the stop event is set or the
        deadline has passed."""
        return self.stop.is_set() or self.expired()

    def wait(self, seconds: float | None) -> bool:
        """Block up to ``seconds`` (``None``: no limit), and no longer than
        the deadline, or until the stop event is set. Returns
        :meth:`cancelled` -- ``True`` when the call should give up. An
        interruptible ``sleep`` for a reconcile."""
        remaining = self.remaining()
        if remaining is not None:
            seconds = remaining if seconds is None else min(seconds, remaining)
        if seconds is None or seconds > 0:
            self._clock.wait(self.stop, seconds)
        return self.cancelled()

    def __repr__(self) -> str:
        return (
            f"<ReconcileContext {', '.join(map(str, self.requests))} "
            f"stopped={self.stop.is_set()} deadline={self.deadline}>"
        )


_local = threading.local()


def current_context() -> ReconcileContext | None:
    """The context of the reconcile running on this thread (a controller's
    worker), or ``None`` outside a reconcile."""
    context: ReconcileContext | None = getattr(_local, "context", None)
    return context


def _set_current(context: ReconcileContext | None) -> None:
    """Make ``context`` this thread's current one (the controller's worker,
    around each reconcile call)."""
    _local.context = context
