"""Where the verbs call field validation: :func:`decode_checked` (POST,
PUT) and :func:`check_patched` (PATCH); both return the response headers
to add (``Warning``). Thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._body import decode_body
from informers.testing.apiserver._exchange import JSON, Request
from informers.testing.apiserver._schema.fieldcheck import (
    check_object,
    decode_json,
    validation_directive,
    warning_header,
)
from informers.testing.apiserver._schema.kinds import kind_type
from informers.wire.resources import Resource

__all__ = ["check_patched", "decode_checked"]

_JSON_TYPES = frozenset({JSON, "application/yaml", "*/*", ""})


def decode_checked(
    request: Request, resource: Resource, options_kind: str = "CreateOptions"
) -> tuple[Any, dict[str, str]]:
    """The request's body decoded (as :func:`~._body.decode_body`) and
    field-checked under its ``fieldValidation``: ``(object, headers)``,
    the headers carrying the warnings. 400 for a type mismatch or, under
    ``Strict``, an unknown or duplicate field; 422 for a bad directive
    (``options_kind`` names the options in its message)."""
    directive = validation_directive(request.param("fieldValidation"), options_kind)
    ftype = kind_type(resource)
    if ftype.kind != "struct":
        return decode_body(request), {}
    content_type = (request.header("Content-Type") or JSON).split(";")[0].strip().lower()
    if content_type in _JSON_TYPES:
        try:
            obj, duplicates = decode_json(request.body)
        except ValueError:
            return decode_body(request), {}  # raises decode_body's own 400
    else:
        obj, duplicates = decode_body(request), None
    return obj, warning_header(check_object(resource, ftype, obj, directive, duplicates))


def check_patched(request: Request, resource: Resource, patched: Any) -> dict[str, str]:
    """Field-check the result of a patch under the request's
    ``fieldValidation`` (unknown fields dropped in place unless
    ``Strict``); returns the headers carrying the warnings."""
    directive = validation_directive(request.param("fieldValidation"), "PatchOptions")
    ftype = kind_type(resource)
    if ftype.kind != "struct":
        return {}
    return warning_header(check_object(resource, ftype, patched, directive))
