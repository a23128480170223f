"""The one exception tree of kube-informers.

Every error the library raises on purpose derives from :class:`InformersError`,
so ``except InformersError`` catches all of them and nothing else. Where an
error is also naturally a built-in kind (a bad key is a :class:`ValueError`,
an unknown index is a :class:`LookupError`) it derives from that too, so code
written against the built-ins keeps working::

    InformersError
    ├── ObjectKeyError            (ValueError)   an object has no usable key
    ├── SelectorParseError        (ValueError)   a label/field selector does not parse
    ├── IndexerError
    │   ├── UnknownIndexError     (LookupError)  no index of that name
    │   ├── IndexConflictError    (ValueError)   an index of that name exists already
    │   └── IndexFunctionError                   an index function raised (names index and key)
    ├── FIFOClosedError                          pop() on a closed, drained queue
    ├── ApiError                                 the API server answered with a Status
    │   ├── ExpiredError                         410 Gone / Expired (too old RV, continue)
    │   ├── TooManyRequestsError                 429, with ``retry_after``
    │   └── ResourceVersionTooLargeError         504 for a RV in the future
    ├── WatchDecodeError                         a watch line that is not a valid event
    ├── WatchStalledError         (TimeoutError) an open watch went silent; re-watched
    ├── UnknownResourceError      (LookupError)  no resource of that name (lists close matches)
    ├── InformerStateError        (RuntimeError) wrong call for the state (e.g. after start)
    └── CacheSyncTimeoutError     (TimeoutError) caches not synced in time; names which

Errors raised inside user callbacks (handlers, index functions, transforms) are
never swallowed silently: they are either re-raised wrapped in one of the
errors above (with ``__cause__`` set) or logged with the kind and key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ApiError",
    "CacheSyncTimeoutError",
    "ExpiredError",
    "FIFOClosedError",
    "IndexConflictError",
    "IndexFunctionError",
    "IndexerError",
    "InformerStateError",
    "InformersError",
    "ObjectKeyError",
    "ResourceVersionTooLargeError",
    "SelectorParseError",
    "TooManyRequestsError",
    "UnknownIndexError",
    "UnknownResourceError",
    "WatchDecodeError",
    "WatchStalledError",
    "permanent_failure_hint",
]


class InformersError(Exception):
    """Base class of every error raised by kube-informers."""


class ObjectKeyError(InformersError, ValueError):
    """An object lacks what its key is made of (``metadata.name``), or a key
    string cannot be split. The message names what is missing."""


class SelectorParseError(InformersError, ValueError):
    """A label or field selector string does not parse; the message shows where."""


class IndexerError(InformersError):
    """Base class of the errors raised by an :class:`~informers.store.Indexer`."""


class UnknownIndexError(IndexerError, LookupError):
    """No index of the given name is registered."""

    def __init__(self, index_name: str) -> None:
        super().__init__(f"index {index_name!r} does not exist")
        self.index_name = index_name

    def __str__(self) -> str:  # LookupError would quote the whole message
        return str(self.args[0])


class IndexConflictError(IndexerError, ValueError):
    """An index of the given name is registered already."""

    def __init__(self, index_names: Sequence[str]) -> None:
        names = ", ".join(repr(n) for n in index_names)
        super().__init__(f"indexer conflict: index {names} already exists")
        self.index_names = tuple(index_names)


class IndexFunctionError(IndexerError):
    """An index function raised (or returned something that is not a list of
    strings) for an object. The store was left unchanged; ``__cause__`` holds
    the original error."""

    def __init__(self, index_name: str, key: str, message: str) -> None:
        super().__init__(f"index {index_name!r} failed for object {key!r}: {message}")
        self.index_name = index_name
        self.key = key


class FIFOClosedError(InformersError):
    """The delta queue was closed; nothing more will be popped."""


class ApiError(InformersError):
    """The API server answered with an error ``Status``.

    ``status`` is the HTTP code, ``reason`` the Status reason (``"NotFound"``,
    ``"Expired"``, ...), ``body`` the parsed Status object when there was one.
    ``retry_after`` is the ``Retry-After`` delay in seconds, when given.
    """

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        *,
        body: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body: Mapping[str, Any] = body or {}
        self.retry_after = retry_after


class ExpiredError(ApiError):
    """410 Gone: the requested resource version or continue token is too old."""


class TooManyRequestsError(ApiError):
    """429 Too Many Requests; wait ``retry_after`` seconds before retrying."""


class ResourceVersionTooLargeError(ApiError):
    """The requested resource version is newer than the server's (504 Timeout
    with cause ``ResourceVersionTooLarge``)."""


class WatchDecodeError(InformersError):
    """A watch stream carried a line that is not a valid watch event."""


class UnknownResourceError(InformersError, LookupError):
    """No resource of that name is known locally or served by the server.

    ``name`` is what was asked for; ``suggestions`` lists close matches
    (plural, ``plural.group``, short names) in order of likeness, possibly
    empty. The message names both.
    """

    def __init__(self, name: str, suggestions: Sequence[str] = (), detail: str = "") -> None:
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        extra = f" ({detail})" if detail else ""
        super().__init__(f"unknown resource {name!r}{extra}{hint}")
        self.name = name
        self.suggestions = tuple(suggestions)


class WatchStalledError(InformersError, TimeoutError):
    """An open watch delivered nothing at all, not even a bookmark, for the
    reflector's ``watch_progress_timeout``; the reflector stopped it and
    re-watched from the last resource version (reported, never raised)."""


class InformerStateError(InformersError, RuntimeError):
    """A call that is not valid in the component's current state, such as
    setting a transform after the informer started."""


class CacheSyncTimeoutError(InformersError, TimeoutError):
    """Caches did not sync before the deadline; ``not_synced`` names them."""

    def __init__(self, not_synced: Mapping[str, str]) -> None:
        detail = "; ".join(f"{name}: {why}" for name, why in sorted(not_synced.items()))
        super().__init__(f"caches not synced: {detail}")
        self.not_synced = dict(not_synced)


#: What to check, by HTTP status, when a list or watch keeps failing the same
#: way: these rarely heal by themselves (a CRD installed later, or an RBAC rule
#: fixed, does heal them, so the reflector keeps retrying).
_HINTS = {
    400: "the server refused the request as invalid: check the label and field selectors",
    401: "the server refused the credentials: check the kubeconfig's user, token or certificate",
    403: "access is forbidden: the RBAC rules must allow list and watch on {resource}",
    404: (
        "the server does not serve {resource}: is it the right group and version, "
        "or is its CustomResourceDefinition not installed yet?"
    ),
    405: "the server does not allow list or watch on {resource}",
}


def permanent_failure_hint(error: BaseException, resource: str = "the resource") -> str | None:
    """What to check when ``error`` is a failure that does not heal by
    itself (400, 401, 403, 404, 405 from the API server), or ``None`` for a
    passing one (5xx, 429, 410, a broken connection). ``resource`` names the
    resource in the hint. Pure."""
    status = getattr(error, "status", None)
    if not isinstance(error, ApiError) or not isinstance(status, int):
        return None
    hint = _HINTS.get(status)
    return hint.format(resource=resource) if hint is not None else None
