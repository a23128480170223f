"""The errors of leader election, a branch of the one exception tree
(:mod:`informers.errors`)::

    InformersError
    ├── ApiError                                  the API server answered with a Status
    │                                             (``status`` 409: someone else wrote the Lease)
    └── LeaderElectionError
        ├── LeaderElectionConfigError (ValueError) durations out of order, no identity
        ├── LeaseLockError                         the Lease could not be read or written
        │                                          (connection, timeout, unparseable body)
        └── InvalidLeaseRecordError   (ValueError) a Lease spec that is not an election record

A :class:`~informers.toolkit.leaderelection.LeaseLock` raises :class:`ApiError` for
an answer of the server and :class:`LeaseLockError` for everything else that
kept a request from completing; the elector treats both as a failed attempt
and retries.
"""

from __future__ import annotations

from informers.errors import InformersError

__all__ = [
    "InvalidLeaseRecordError",
    "LeaderElectionConfigError",
    "LeaderElectionError",
    "LeaseLockError",
]


class LeaderElectionError(InformersError):
    """Base class of the errors raised by :mod:`informers.toolkit.leaderelection`."""


class LeaderElectionConfigError(LeaderElectionError, ValueError):
    """A :class:`~informers.toolkit.leaderelection.LeaderElectionConfig` whose values
    cannot elect safely; the message names the values."""


class LeaseLockError(LeaderElectionError):
    """A request for the Lease did not complete: the connection failed or
    timed out, or the answer was not a JSON object. ``__cause__`` holds the
    original error; the message names the Lease (``namespace/name``)."""


class InvalidLeaseRecordError(LeaderElectionError, ValueError):
    """A Lease ``spec`` that cannot be read as an election record (a field
    of the wrong type, a timestamp that does not parse). The elector never
    takes over a Lease it cannot read."""
