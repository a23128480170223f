"""The one exception tree of kube-informers, and the mapping from the API
server's error responses onto it.

Every error the library raises on purpose derives from :class:`InformersError`,
so ``except InformersError`` catches all of them and nothing else. Where an
error is also naturally a built-in kind (a bad key is a :class:`ValueError`,
an unknown index is a :class:`LookupError`) it derives from that too, so an
``except`` of the built-in kind catches it as well::

    InformersError
    ├── ObjectKeyError            (ValueError)   an object has no usable key
    ├── SelectorParseError        (ValueError)   a label/field selector does not parse
    ├── IndexerError
    │   ├── UnknownIndexError     (LookupError)  no index of that name
    │   ├── IndexConflictError    (ValueError)   an index of that name exists already
    │   ├── IndexFunctionError                   an index function raised (names index and key)
    │   └── ObjectEncodeError     (TypeError)    the compact store cannot encode an object
    ├── FIFOClosedError                          pop() on a closed, drained queue
    ├── ChannelClosedError                       put on a closed channel; get on a
    │                                            closed and drained one
    ├── ChannelTimeoutError       (TimeoutError)
    │   ├── ChannelFullError                     put timed out on a full channel
    │   └── ChannelEmptyError                    get timed out on an empty channel
    ├── ApiError                                 the API server answered with an error (a Status)
    │   ├── BadRequestError                      400 BadRequest
    │   ├── UnauthorizedError                    401 Unauthorized (no or bad credentials)
    │   ├── ForbiddenError                       403 Forbidden (not allowed by RBAC)
    │   ├── NotFoundError                        404 NotFound
    │   ├── ConflictError                        409 Conflict (stale resourceVersion on update)
    │   │   └── AlreadyExistsError               409 AlreadyExists (create of an existing name)
    │   ├── ExpiredError                         410 Gone / Expired (too old RV, continue)
    │   ├── InvalidError                         422 Invalid (the object fails validation)
    │   ├── TooManyRequestsError                 429, with ``retry_after``
    │   └── ResourceVersionTooLargeError         504 for a RV in the future
    ├── WatchDecodeError                         a watch line that is not a valid event
    ├── WatchStalledError         (TimeoutError) an open watch went silent; re-watched
    ├── UnknownResourceError      (LookupError)  no resource of that name (lists close matches)
    ├── InformerStateError        (RuntimeError) wrong call for the state (e.g. after start)
    ├── CacheSyncTimeoutError     (TimeoutError) caches not synced in time; names which
    ├── ObjectReferenceError      (ValueError)   an object lacks what a reference to it needs
    ├── OwnerReferenceError       (ValueError)   an owner reference that may not be set
    │   └── AlreadyOwnedError                    another controller owns the object already
    ├── InvalidConditionError     (ValueError)   a status condition without type or valid status
    └── InvalidEventError         (ValueError)   an Event of an unknown type or without reason

Errors raised inside user callbacks (handlers, index functions, transforms) are
never swallowed silently: they are either re-raised wrapped in one of the
errors above (with ``__cause__`` set) or logged with the kind and key.

Transport failures are not in the tree: a refused or reset connection, a
timeout, propagate as the ``urllib3`` / :class:`OSError` exceptions they are
(:func:`is_connection_refused` classifies them), and an aborted request raises
:class:`ConnectionAbortedError` (see :class:`informers.rest.transport.RequestAborter`).

From responses to errors: :func:`error_from_response` turns a non-2xx HTTP
response (status, headers, body) into the :class:`ApiError` subclass above,
reading the ``Status`` object of the body when there is one and the
``Retry-After`` header (:func:`parse_retry_after`); :func:`error_from_status`
does the same for a ``Status`` object alone (the object of a watch ``ERROR``
event). Every response the transport
(:class:`informers.rest.transport.ApiClientTransport`) receives outside 2xx is
raised through them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AlreadyExistsError",
    "AlreadyOwnedError",
    "ApiError",
    "BadRequestError",
    "CacheSyncTimeoutError",
    "ChannelClosedError",
    "ChannelEmptyError",
    "ChannelFullError",
    "ChannelTimeoutError",
    "ConflictError",
    "ExpiredError",
    "FIFOClosedError",
    "ForbiddenError",
    "IndexConflictError",
    "IndexFunctionError",
    "IndexerError",
    "InformerStateError",
    "InformersError",
    "InvalidConditionError",
    "InvalidError",
    "InvalidEventError",
    "NotFoundError",
    "ObjectEncodeError",
    "ObjectKeyError",
    "ObjectReferenceError",
    "OwnerReferenceError",
    "ResourceVersionTooLargeError",
    "SelectorParseError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnknownIndexError",
    "UnknownResourceError",
    "WatchDecodeError",
    "WatchStalledError",
    "permanent_failure_hint",
    "error_from_response",
    "error_from_status",
    "is_connection_refused",
    "parse_retry_after",
]


class InformersError(Exception):
    """Base class of every error raised by kube-informers."""


class ObjectKeyError(InformersError, ValueError):
    """An object lacks what its key is made of (``metadata.name``), or a key
    string cannot be split. The message names what is missing."""


class SelectorParseError(InformersError, ValueError):
    """A label or field selector string does not parse; the message shows where."""


class IndexerError(InformersError):
    """Base class of the errors raised by an :class:`~informers.cache.store.Indexer`."""


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


class ObjectEncodeError(IndexerError, TypeError):
    """An object cannot be encoded by a :class:`~informers.cache.compact.store.CompactStore`'s
    codec (it is not a JSON document: a value of another type, a key that is
    not a string, an integer out of the codec's range). The store was left
    unchanged; ``__cause__`` holds the codec's error."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"object {key!r} cannot be encoded: {message}")
        self.key = key


class FIFOClosedError(InformersError):
    """The delta queue was closed; nothing more will be popped."""


class ChannelClosedError(InformersError):
    """The channel is closed: nothing may be put into it, and once its queued
    items are drained nothing more will come out of it."""


class ChannelTimeoutError(InformersError, TimeoutError):
    """A channel operation did not complete before its timeout."""


class ChannelFullError(ChannelTimeoutError):
    """``put`` timed out because the bounded channel stayed full."""


class ChannelEmptyError(ChannelTimeoutError):
    """``get`` timed out because the channel stayed empty."""


class ApiError(InformersError):
    """The API server answered with an error ``Status``.

    ``status`` is the HTTP code, ``reason`` the Status reason (``"NotFound"``,
    ``"Expired"``, ...), ``body`` the parsed Status object when there was one.
    ``retry_after`` is the ``Retry-After`` delay in seconds, when given.
    Raised as the most specific subclass that fits (see the tree above and
    :func:`error_from_status`); a plain :class:`ApiError` is any other error
    (500 InternalError, 503 ServiceUnavailable, ...).
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

    @property
    def causes(self) -> list[Mapping[str, Any]]:
        """The Status's ``details.causes``: for an :class:`InvalidError`, one
        per failing field (``{"reason": ..., "message": ..., "field": ...}``);
        empty when the server gave none."""
        details = self.body.get("details")
        causes = details.get("causes") if isinstance(details, Mapping) else None
        if not isinstance(causes, list):
            return []
        return [c for c in causes if isinstance(c, Mapping)]


class BadRequestError(ApiError):
    """400 BadRequest: the request itself is malformed (a selector or query
    parameter the server refuses, a body that does not decode)."""


class UnauthorizedError(ApiError):
    """401 Unauthorized: no credentials, or credentials the server rejects."""


class ForbiddenError(ApiError):
    """403 Forbidden: the credentials are not allowed this request (RBAC)."""


class NotFoundError(ApiError):
    """404 NotFound: the object, its namespace, or the resource does not exist."""


class ConflictError(ApiError):
    """409 Conflict: the request conflicts with the object's current state,
    typically an update whose ``metadata.resourceVersion`` is stale (re-read
    and retry). ``except ConflictError`` also catches its subclass
    :class:`AlreadyExistsError`, the other 409."""


class AlreadyExistsError(ConflictError):
    """409 AlreadyExists: a create of a name that exists already."""


class InvalidError(ApiError):
    """422 Invalid: the object fails validation; ``body["details"]["causes"]``
    names the fields."""


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


class ObjectReferenceError(InformersError, ValueError):
    """An object cannot be referred to: it lacks ``apiVersion``, ``kind``
    (objects listed from the API server carry neither: pass the resource),
    ``metadata.name`` or, for an owner reference, ``metadata.uid``. The
    message names what is missing."""


class OwnerReferenceError(InformersError, ValueError):
    """An owner reference that the API server's garbage collector would not
    honour: an owner in another namespace, or a namespaced owner of a
    cluster-scoped object; or a reference to remove that is not there."""


class AlreadyOwnedError(OwnerReferenceError):
    """The object already has a controller, and it is another object.

    ``owner`` is that controller's owner reference (a dict), ``object_key``
    the object's ``namespace/name``."""

    def __init__(self, object_key: str, owner: Mapping[str, Any]) -> None:
        super().__init__(
            f"object {object_key!r} is already owned by another {owner.get('kind', '?')} "
            f"controller {owner.get('name', '?')!r}"
        )
        self.object_key = object_key
        self.owner: Mapping[str, Any] = owner


class InvalidConditionError(InformersError, ValueError):
    """A status condition without a ``type``, or whose ``status`` is not one
    of ``"True"``, ``"False"``, ``"Unknown"``."""


class InvalidEventError(InformersError, ValueError):
    """An Event that the API server would refuse: a type other than
    ``"Normal"`` or ``"Warning"``, or an empty reason."""


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


# --------------------------------------------------------------------------- responses to errors

#: The subclass of each Status reason (``metav1.StatusReason``) that has one.
_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequestError,
    "Unauthorized": UnauthorizedError,
    "Forbidden": ForbiddenError,
    "NotFound": NotFoundError,
    "Conflict": ConflictError,
    "AlreadyExists": AlreadyExistsError,
    "Invalid": InvalidError,
}
#: The subclass of each HTTP code, used when the reason is not a known one.
_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: InvalidError,
}
#: Every reason ``metav1.StatusReason`` defines: a known reason decides the
#: class by itself, an unknown one (or none) leaves it to the HTTP code, as
#: client-go's ``errors.IsNotFound`` and friends do.
_KNOWN_REASONS = frozenset(
    {
        *_BY_REASON,
        "Gone",
        "Expired",
        "TooManyRequests",
        "ServerTimeout",
        "StoreReadError",
        "Timeout",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "ServiceUnavailable",
    }
)


def parse_retry_after(value: str | None) -> float | None:
    """The delay of a ``Retry-After`` header in seconds (never negative), or
    ``None`` when it is absent or an HTTP date (rare from kube-apiserver: the
    caller falls back to its own backoff)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)


def error_from_status(
    status: Mapping[str, Any] | None,
    http_status: int = 0,
    *,
    retry_after: float | None = None,
    text: str = "",
) -> ApiError:
    """The :class:`ApiError` subclass for a ``Status`` object (or, when the
    body was not a Status, for the HTTP code ``http_status`` and ``text``).

    The Status ``code`` wins over ``http_status``. In order: 410 or reason
    ``Expired``/``Gone`` is :class:`ExpiredError`; 429 or ``TooManyRequests``
    :class:`TooManyRequestsError`; a ``ResourceVersionTooLarge`` cause (or
    message) :class:`ResourceVersionTooLargeError`; then a known reason picks
    its class (``AlreadyExists``, ``Conflict``, ``NotFound``, ...), and only
    an unknown reason falls back to the code (404, 409, ...). ``retry_after``
    defaults to the Status ``details.retryAfterSeconds``. Never raises.
    """
    body: Mapping[str, Any] = status or {}
    code = body.get("code") if isinstance(body.get("code"), int) else None
    code = code or http_status
    reason = str(body.get("reason") or "")
    message = str(body.get("message") or text.strip())
    details = body.get("details")
    causes = details.get("causes") if isinstance(details, Mapping) else None
    cause_types = (
        {str(c.get("reason", "")) for c in causes if isinstance(c, Mapping)}
        if isinstance(causes, list)
        else set()
    )
    if isinstance(details, Mapping) and retry_after is None:
        secs = details.get("retryAfterSeconds")
        if isinstance(secs, int | float) and secs > 0:
            retry_after = float(secs)
    cls: type[ApiError] = ApiError
    if code == 410 or reason in ("Expired", "Gone"):
        cls = ExpiredError
    elif code == 429 or reason == "TooManyRequests":
        cls = TooManyRequestsError
    elif "ResourceVersionTooLarge" in cause_types or "too large resource version" in (
        message.lower()
    ):
        cls = ResourceVersionTooLargeError
    elif reason in _KNOWN_REASONS:
        cls = _BY_REASON.get(reason, ApiError)
    else:
        cls = _BY_CODE.get(code, ApiError)
    return cls(code, reason, message, body=body, retry_after=retry_after)


def error_from_response(status: int, headers: Mapping[str, str], data: bytes) -> ApiError:
    """The :class:`ApiError` subclass for an HTTP response outside 2xx:
    ``status`` its code, ``headers`` its headers (``Retry-After`` is read),
    ``data`` its whole body. A JSON ``Status`` body is read as
    :func:`error_from_status` reads it; any other body (the plain-text 429 of
    the server's flow control, a proxy's HTML page) gives the code and the
    first 500 characters of the text. Never raises."""
    retry_after = parse_retry_after(headers.get("Retry-After"))
    text = data.decode("utf-8", "replace")
    parsed: Any = None
    try:
        parsed = json.loads(data) if data else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        return error_from_status(parsed, status, retry_after=retry_after)
    return error_from_status(None, status, retry_after=retry_after, text=text[:500])


def is_connection_refused(exc: BaseException) -> bool:
    """Whether a transport exception means the server refused the connection.

    Looks through urllib3's wrappers (their ``reason``) and the exception
    chain (``__cause__``, ``__context__``) for a :class:`ConnectionRefusedError`
    or its message. Never raises.
    """
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, ConnectionRefusedError):
            return True
        if "Connection refused" in str(e) or "Errno 111" in str(e):
            return True
        stack.extend([e.__cause__, e.__context__, getattr(e, "reason", None)])
    return False
