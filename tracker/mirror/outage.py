"""How a database outage is logged: once when it starts, once when it ends.

While the database cannot be reached every transaction fails, and a mirror
retries each failed write with backoff: logging each failure would print
thousands of lines for a few seconds of outage. :class:`OutageLog` turns
them into

* one WARNING when the first retryable failure
  (:class:`~tracker.errors.DatabaseUnavailableError`) arrives: what failed
  and why;
* one DEBUG line with the traceback per *distinct* error during the outage
  (the same type and reason, whatever the operation: the same error), for
  ``--verbose``;
* one INFO line when a transaction succeeds again: how long it lasted, how
  many operations failed, how many distinct errors.

Every line goes to the logger ``tracker.mirror.outage`` (:data:`LOGGER_NAME`),
so that a program can show it on its own (the ``kube-informers mirror``
command shows it by default). Failures that are not outages (a refused
write) are logged at WARNING each, as before. Thread-safe: one lock guards
the outage's counters; logging happens outside it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from tracker.errors import MirrorDatabaseError

__all__ = ["LOGGER_NAME", "OutageLog"]

#: The logger every outage line goes to.
LOGGER_NAME = "tracker.mirror.outage"

log = logging.getLogger(LOGGER_NAME)


class OutageLog:
    """The outage state of one database (see the module documentation).

    :meth:`failed` is called with every failed transaction's typed error,
    :meth:`succeeded` after every committed one. ``clock`` gives seconds
    (monotonic) for the outage's length.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        # Guarded by _lock: None while the database is up; else when the
        # outage started, and its failures and distinct errors so far.
        self._since: float | None = None
        self._failures = 0
        self._distinct: set[tuple[str, str]] = set()

    @property
    def in_outage(self) -> bool:
        """Whether the last transaction failed with a retryable error."""
        with self._lock:
            return self._since is not None

    def _down(self) -> bool:
        return self._since is not None

    def failed(self, error: MirrorDatabaseError) -> None:
        """Record a failed transaction. A non-retryable error is logged at
        WARNING on its own; a retryable one starts (or continues) the outage."""
        if not error.retryable:
            log.warning("mirror database: %s", error)
            return
        signature = (type(error).__name__, error.reason)  # not the operation: its key varies
        with self._lock:
            started = self._since is None
            if started:
                self._since = self._clock()
                self._failures = 0
                self._distinct = set()
            self._failures += 1
            new = signature not in self._distinct
            self._distinct.add(signature)
        if started:
            log.warning(
                "mirror database: unavailable: %s; retrying with backoff "
                "(one line when it is back)",
                error,
            )
        if new:
            log.debug("mirror database: error during the outage: %s", error, exc_info=error)

    def succeeded(self) -> None:
        """Record a committed transaction: ends an outage (logged at INFO)."""
        if not self._down():  # the common case, without the lock (a stale read only delays)
            return
        with self._lock:
            since, self._since = self._since, None
            failures, distinct = self._failures, len(self._distinct)
        if since is None:  # another thread ended it
            return
        log.info(
            "mirror database: available again after %.1f s; %d operation(s) failed "
            "meanwhile (%d distinct error(s)) and are retried",
            self._clock() - since,
            failures,
            distinct,
        )
