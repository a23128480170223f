"""``Status`` objects as the real API server sends them, and the exception the
emulator's layers raise to answer a request with one.

Messages, reasons and ``details`` follow k8s.io/apimachinery's
``pkg/api/errors`` constructors, so clients that inspect them (kubectl, the
official client, our own reflector) see what a cluster would send.
"""

from __future__ import annotations

from typing import Any

from informers.wire.resources import Resource

__all__ = [
    "StatusError",
    "already_exists",
    "bad_request",
    "conflict",
    "expired",
    "internal_error",
    "invalid",
    "method_not_allowed",
    "no_such_route",
    "not_found",
    "resource_version_too_large",
    "status_body",
    "success",
    "too_many_requests",
]

#: Reason of each HTTP code the emulator answers with a Status.
REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_body(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A failure ``Status`` object (key order as the real server writes it)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


class StatusError(Exception):
    """Answer the current request with a failure ``Status``.

    ``body`` is the Status object; ``headers`` extra response headers (such as
    ``Retry-After``).
    """

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        continue_token: str | None = None,
    ) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.body = status_body(code, reason, message, details)
        if continue_token is not None:
            self.body["metadata"] = {"continue": continue_token}
        self.headers = dict(headers or {})


def _qualified(resource: Resource) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def _details(resource: Resource, name: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    return details


def not_found(resource: Resource, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f'{_qualified(resource)} "{name}" not found', _details(resource, name)
    )


def already_exists(resource: Resource, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{_qualified(resource)} "{name}" already exists',
        _details(resource, name),
    )


def conflict(resource: Resource, name: str, why: str | None = None) -> StatusError:
    why = why or (
        "the object has been modified; please apply your changes to the latest version "
        "and try again"
    )
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource)} "{name}": {why}',
        _details(resource, name),
    )


def invalid(group: str, kind: str, name: str, causes: list[tuple[str, str, str]]) -> StatusError:
    """422 Invalid; ``causes`` are ``(field, type, message)``, e.g.
    ``("metadata.name", "FieldValueInvalid", 'Invalid value: "x": ...')``."""
    qualified = f"{kind}.{group}" if group else kind
    joined = ", ".join(f"{field}: {message}" for field, _, message in causes)
    if len(causes) > 1:
        joined = f"[{joined}]"
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": reason, "message": message, "field": field} for field, reason, message in causes
    ]
    return StatusError(422, "Invalid", f'{qualified} "{name}" is invalid: {joined}', details)


def invalid_list_options(field: str, reason: str, message: str) -> StatusError:
    """422 for bad list/watch options, as ``ValidateListOptions`` reports them."""
    return invalid("meta.k8s.io", "ListOptions", "", [(field, reason, message)])


def no_such_route() -> StatusError:
    """404 for a path that names no served resource."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed() -> StatusError:
    return StatusError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        {},
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def expired(message: str, continue_token: str | None = None) -> StatusError:
    return StatusError(410, "Expired", message, continue_token=continue_token)


def internal_error(message: str) -> StatusError:
    return StatusError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def resource_version_too_large(requested: int, current: int) -> StatusError:
    return StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )


def too_many_requests(retry_after: int = 1) -> StatusError:
    return StatusError(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
        {"retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def success(resource: Resource, name: str, uid: str) -> dict[str, Any]:
    """The ``Status`` a DELETE of most kinds answers with."""
    details = _details(resource, name)
    details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
