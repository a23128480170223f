"""Errors of the reconcile runtime.

:class:`TerminalError` is what a reconcile raises when retrying cannot help
(an invalid spec, a permanent refusal): the controller logs it, forgets the
request and does not requeue it. Every other exception a reconcile raises is
retried with the rate limiter's backoff.

It derives from :class:`~informers.errors.InformersError`::

    InformersError
    └── TerminalError      a reconcile failure that must not be retried
"""

from __future__ import annotations

from informers.errors import InformersError

__all__ = ["TerminalError", "is_terminal"]


class TerminalError(InformersError):
    """A reconcile failure that retrying cannot fix; it is not requeued.

    ``TerminalError(cause)`` wraps an exception (kept as ``cause`` and as
    ``__cause__``, so the traceback shows it) or a message string::

        raise TerminalError(ValueError("spec.replicas is negative"))
        raise TerminalError("spec.replicas is negative")

    An exception raised ``from`` a :class:`TerminalError` (anywhere in its
    ``__cause__`` chain) counts as terminal too, as Go's ``errors.Is`` sees
    through wrapping.
    """

    def __init__(self, cause: BaseException | str) -> None:
        if isinstance(cause, BaseException):
            super().__init__(f"terminal error: {cause}")
            self.cause: BaseException | None = cause
            self.__cause__ = cause
        else:
            super().__init__(f"terminal error: {cause}")
            self.cause = None


def is_terminal(error: BaseException) -> bool:
    """Whether ``error`` is a :class:`TerminalError` or was raised ``from``
    one (following ``__cause__``, never ``__context__``). Pure."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, TerminalError):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False
