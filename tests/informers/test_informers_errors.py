"""informers.errors: the exception tree (as drawn in its docstring) and the
mapping from Status bodies and HTTP responses to its ApiError subclasses.

(Named for the module's full path: tests/tracker/test_errors.py holds the
tracker's tree.)"""

from __future__ import annotations

import json
import re
from typing import Any

import kubernetes.client
import pytest
from hypothesis import given
from hypothesis import strategies as st

import informers
from informers import errors
from informers.errors import (
    AlreadyExistsError,
    ApiError,
    BadRequestError,
    ConflictError,
    ExpiredError,
    ForbiddenError,
    InformersError,
    InvalidError,
    NotFoundError,
    ResourceVersionTooLargeError,
    TooManyRequestsError,
    UnauthorizedError,
    error_from_response,
    error_from_status,
    is_connection_refused,
    parse_retry_after,
)
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.wire.resources import PODS

ERROR_CLASSES = [
    getattr(errors, name)
    for name in errors.__all__
    if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), Exception)
]


def test_error_from_status_event_object() -> None:
    err = error_from_status(
        {"code": 410, "reason": "Expired", "message": "too old resource version: 1 (5)"}
    )
    assert isinstance(err, ExpiredError)
    assert "too old" in err.message


def test_connection_refused_is_classified() -> None:
    config = kubernetes.client.Configuration()
    config.host = "http://127.0.0.1:9"
    config.retries = False
    client = kubernetes.client.ApiClient(config)
    with pytest.raises(Exception) as info:  # noqa: PT011 - urllib3's own types
        HTTPListerWatcher(client, PODS).list(ListOptions())
    client.close()
    assert is_connection_refused(info.value)
    assert not is_connection_refused(ValueError("x"))


def test_connection_refused_is_found_through_the_chain() -> None:
    outer = OSError("wrapped")
    outer.__cause__ = ConnectionRefusedError(111, "refused")
    assert is_connection_refused(outer)
    assert not is_connection_refused(ConnectionResetError(104, "reset"))


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_is_in_the_tree_and_drawn(cls: type[Exception]) -> None:
    assert issubclass(cls, InformersError)
    doc = errors.__doc__ or ""
    drawn = cls is InformersError or re.search(rf"[├└]── {cls.__name__}\b", doc)
    assert drawn, f"{cls.__name__} missing from the tree in informers.errors"


def test_the_drawing_shows_each_error_under_its_parent() -> None:
    # Each drawn name's parent is the nearest less indented name above it.
    doc = errors.__doc__ or ""
    lines = [ln for ln in doc.splitlines() if re.search(r"[├└]── \w+", ln)]
    stack: list[tuple[int, str]] = [(-1, "InformersError")]
    for line in lines:
        match = re.search(r"[├└]── (\w+)", line)
        assert match
        depth, name = match.start(), match.group(1)
        while stack[-1][0] >= depth:
            stack.pop()
        parent = getattr(errors, stack[-1][1])
        assert getattr(errors, name).__bases__[0] is parent, name
        stack.append((depth, name))


def test_every_api_error_is_exported_at_the_top_level() -> None:
    for cls in ERROR_CLASSES:
        assert getattr(informers, cls.__name__) is cls


def _status(code: int, reason: str, message: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
        **extra,
    }


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (_status(400, "BadRequest"), BadRequestError),
        (_status(401, "Unauthorized"), UnauthorizedError),
        (_status(403, "Forbidden"), ForbiddenError),
        (_status(404, "NotFound", 'configmaps "x" not found'), NotFoundError),
        (_status(409, "Conflict", "the object has been modified"), ConflictError),
        (_status(409, "AlreadyExists", 'leases "x" already exists'), AlreadyExistsError),
        (_status(410, "Expired"), ExpiredError),
        (_status(410, "Gone"), ExpiredError),
        (_status(422, "Invalid"), InvalidError),
        (_status(429, "TooManyRequests"), TooManyRequestsError),
        (_status(500, "InternalError"), ApiError),
        (_status(503, "ServiceUnavailable"), ApiError),
        # A known reason decides by itself; an unknown one leaves it to the code.
        (_status(404, "InternalError"), ApiError),
        (_status(404, "SomethingNew"), NotFoundError),
        (_status(409, ""), ConflictError),
        (
            _status(
                504, "Timeout", "x", details={"causes": [{"reason": "ResourceVersionTooLarge"}]}
            ),
            ResourceVersionTooLargeError,
        ),
    ],
)
def test_status_maps_to_its_class(status: dict[str, Any], cls: type[ApiError]) -> None:
    err = error_from_status(status)
    assert type(err) is cls
    assert err.status == status["code"]
    assert err.reason == status["reason"]
    assert err.body == status
    via_response = error_from_response(status["code"], {}, json.dumps(status).encode())
    assert type(via_response) is cls


def test_already_exists_is_a_conflict() -> None:
    assert issubclass(AlreadyExistsError, ConflictError)
    with pytest.raises(ConflictError):
        raise error_from_status(_status(409, "AlreadyExists"))


def test_response_without_a_status_body_maps_by_code() -> None:
    err = error_from_response(404, {}, b"<html>no such page</html>")
    assert type(err) is NotFoundError
    assert err.reason == ""
    assert "no such page" in err.message
    err = error_from_response(502, {}, b"x" * 2000)
    assert type(err) is ApiError
    assert len(err.message) == 500


def test_retry_after_comes_from_the_header_or_the_status_details() -> None:
    body = json.dumps(_status(429, "TooManyRequests")).encode()
    assert error_from_response(429, {"Retry-After": "4"}, body).retry_after == 4.0
    detailed = _status(429, "TooManyRequests", details={"retryAfterSeconds": 7})
    assert error_from_status(detailed).retry_after == 7.0
    both = error_from_response(429, {"Retry-After": "1"}, json.dumps(detailed).encode())
    assert both.retry_after == 1.0  # the header wins


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        (" 2.5 ", 2.5),
        ("-1", 0.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    status=st.dictionaries(
        st.sampled_from(["kind", "code", "reason", "message", "details", "status"]), _json_values
    )
    | st.none(),
    http_status=st.integers(0, 599),
)
def test_error_from_status_never_raises_and_keeps_the_code(
    status: dict[str, Any] | None, http_status: int
) -> None:
    err = error_from_status(status, http_status)
    assert isinstance(err, ApiError)
    code = (status or {}).get("code")
    expected = code if isinstance(code, int) and code else http_status
    assert err.status == expected


@given(st.integers(100, 599), st.binary(max_size=200), st.text(max_size=10) | st.none())
def test_error_from_response_never_raises(status: int, data: bytes, retry: str | None) -> None:
    headers = {"Retry-After": retry} if retry is not None else {}
    err = error_from_response(status, headers, data)
    assert isinstance(err, ApiError)
    assert err.retry_after is None or err.retry_after >= 0
