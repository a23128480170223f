"""Field validation of a write's body against its kind's type, as the API
server's decoder does it.

The ``fieldValidation`` query parameter decides what an unknown or
duplicate field does: ``Strict`` answers 400 naming every one
(``strict decoding error: unknown field "spec.foo", duplicate field
"metadata.name"``); ``Warn`` (the default) drops unknown fields and answers
a ``Warning`` header per field (``299 - "unknown field \\"spec.foo\\""``);
``Ignore`` drops them silently. A value of the wrong JSON type is always
400, worded as Go's JSON decoder words it (``json: cannot unmarshal string
into Go struct field DeploymentSpec.spec.replicas of type int32``), inside
the server's ``<Kind> in version "<v>" cannot be handled as a <Kind>: ``.

Only built-in kinds with a client model are checked; custom resources and
untyped (``object``) fields pass as they are. Duplicate keys are only
visible in the raw body: :func:`decode_json` marks the objects that had
them. Pure functions; thread-safe.
"""

from __future__ import annotations

import json
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._schema.types import FieldType
from informers.testing.apiserver._status import StatusError
from informers.wire.resources import Resource

__all__ = [
    "IGNORE",
    "STRICT",
    "WARN",
    "Duplicates",
    "FieldProblems",
    "check_object",
    "decode_json",
    "is_clean",
    "validation_directive",
    "warning_header",
]

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
_DIRECTIVES = (IGNORE, STRICT, WARN)

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


#: id() of each decoded object that repeated keys -> those keys, in
#: order of first repetition (the last value won, as in Go).
Duplicates = dict[int, list[str]]


def decode_json(body: bytes | str) -> tuple[Any, Duplicates]:
    """``body`` parsed as JSON, and the objects in it that repeated a key
    (for :func:`check_object`; valid while the parsed objects live).
    Raises ``ValueError`` as :func:`json.loads`."""
    duplicates: Duplicates = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            repeated: list[str] = []
            for key, _ in items:
                if key in seen and key not in repeated:
                    repeated.append(key)
                seen.add(key)
            duplicates[id(out)] = repeated
        return out

    return json.loads(body, object_pairs_hook=pairs), duplicates


def validation_directive(value: str | None, options_kind: str = "CreateOptions") -> str:
    """The directive of a ``fieldValidation`` query value: empty is
    ``Warn``; anything but the three directives is 422, as the server's
    options validation answers it."""
    if not value:
        return WARN
    if value not in _DIRECTIVES:
        raise _status.invalid(
            "meta.k8s.io",
            options_kind,
            "",
            [
                (
                    "fieldValidation",
                    "FieldValueNotSupported",
                    f'Unsupported value: "{value}": supported values: '
                    + ", ".join(f'"{d}"' for d in _DIRECTIVES),
                )
            ],
        )
    return value


def warning_header(messages: list[str]) -> dict[str, str]:
    """The ``Warning`` response header carrying ``messages`` (one
    comma-separated header, as HTTP allows for repeated ones); empty
    without messages."""
    if not messages:
        return {}
    parts = []
    for message in messages:
        escaped = message.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'299 - "{escaped}"')
    return {"Warning": ", ".join(parts)}


def _json_kind(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object"


class FieldProblems:
    """What a check found: ``unknown`` and ``duplicate`` field paths (in
    document order, list items as ``[i]``) and the dicts and keys to drop."""

    __slots__ = ("drops", "duplicates", "messages")

    def __init__(self, duplicates: Duplicates | None) -> None:
        self.duplicates = duplicates
        #: strict decoding messages: 'unknown field "x"', 'duplicate field "y"'
        self.messages: list[str] = []
        #: (object, key) of each unknown field
        self.drops: list[tuple[dict[str, Any], str]] = []


class _TypeMismatchError(Exception):
    def __init__(self, value: Any, struct: str, path: str, go: str, literal: str = "") -> None:
        kind = _json_kind(value)
        shown = f"{kind} {literal}" if literal else kind
        super().__init__(
            f"json: cannot unmarshal {shown} into Go struct field {struct}.{path} of type {go}"
        )


def _number_literal(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _check_scalar(value: Any, ftype: FieldType, struct: str, path: str) -> None:
    kind = ftype.kind
    if kind in ("string", "time", "bytes"):
        ok = isinstance(value, str)
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _TypeMismatchError(value, struct, path, ftype.go)
        low, high = _INT64 if ftype.go == "int64" else _INT32
        if isinstance(value, float) or not low <= value <= high:
            raise _TypeMismatchError(value, struct, path, ftype.go, _number_literal(value))
        return
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "quantity":
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
    elif kind == "int-or-string":
        ok = isinstance(value, (str, int)) and not isinstance(value, bool)
    else:  # any
        ok = True
    if not ok:
        raise _TypeMismatchError(value, struct, path, ftype.go)


def _walk(  # noqa: PLR0917 - the recursion carries its position
    node: Any,
    ftype: FieldType,
    struct: str,
    path: str,
    shown: str,
    problems: FieldProblems,
) -> None:
    """Check ``node`` against ``ftype``. ``struct`` is the Go name of the
    innermost struct, ``path`` the JSON path without list indices (as Go's
    type errors name it) and ``shown`` the path with them (as unknown
    fields are named)."""
    if node is None:
        return
    kind = ftype.kind
    if kind == "struct":
        if not isinstance(node, dict):
            raise _TypeMismatchError(node, struct, path, ftype.go)
        fields = ftype.fields()
        inner = ftype.struct
        prefix = f"{path}." if path else ""
        shown_prefix = f"{shown}." if shown else ""
        repeated = problems.duplicates.get(id(node)) if problems.duplicates else None
        if repeated:
            for key in repeated:
                problems.messages.append(f'duplicate field "{shown_prefix}{key}"')
        for key, value in node.items():
            sub = fields.get(key)
            if sub is None:
                problems.messages.append(f'unknown field "{shown_prefix}{key}"')
                problems.drops.append((node, key))
                continue
            if value is not None and sub.kind != "any":
                _walk(value, sub, inner, prefix + key, shown_prefix + key, problems)
        return
    if kind == "list":
        if not isinstance(node, list):
            raise _TypeMismatchError(node, struct, path, ftype.go)
        element = ftype.element()
        if element.kind == "any":
            return
        for index, item in enumerate(node):
            _walk(item, element, struct, path, f"{shown}[{index}]", problems)
        return
    if kind == "map":
        if not isinstance(node, dict):
            raise _TypeMismatchError(node, struct, path, ftype.go)
        element = ftype.element()
        if element.kind == "any":
            return
        for key, value in node.items():
            _walk(value, element, struct, path, f"{shown}.{key}", problems)
        return
    _check_scalar(node, ftype, struct, path)


_STRINGS = frozenset({"string", "time", "bytes"})


def is_clean(obj: Any, kind_type: FieldType) -> bool:
    """Whether the object ``obj`` matches its ``kind_type`` with nothing to
    report (no unknown field, no wrong type); builds no paths."""
    return _clean(obj, kind_type, top=True)


def _clean(node: Any, ftype: FieldType, *, top: bool = False) -> bool:
    """Whether ``node`` matches ``ftype`` with nothing to report: a fast
    walk that builds no paths (:func:`_walk` then finds what is wrong).
    ``top``: the object itself, where ``apiVersion`` and ``kind`` are
    allowed."""
    kind = ftype.kind
    if kind == "struct":
        if type(node) is not dict:
            return False
        fields = ftype.fields()
        for key, value in node.items():
            sub = fields.get(key)
            if sub is None:
                if top and key in ("apiVersion", "kind"):
                    continue
                return False
            if value is not None and sub.kind != "any" and not _clean(value, sub):
                return False
        return True
    if kind == "list":
        if type(node) is not list:
            return False
        element = ftype.element()
        if element.kind == "any":
            return True
        return all(item is None or _clean(item, element) for item in node)
    if kind == "map":
        if type(node) is not dict:
            return False
        element = ftype.element()
        if element.kind == "any":
            return True
        return all(value is None or _clean(value, element) for value in node.values())
    if kind in _STRINGS:
        return type(node) is str
    if kind == "integer":
        low, high = _INT64 if ftype.go == "int64" else _INT32
        return type(node) is int and low <= node <= high
    if kind == "boolean":
        return type(node) is bool
    if kind == "number" or kind == "quantity":  # noqa: PLR1714 - distinct kinds
        return type(node) in (int, float) or (kind == "quantity" and type(node) is str)
    if kind == "int-or-string":
        return type(node) in (int, str)
    return True


def _handled_as(resource: Resource, obj: dict[str, Any]) -> str:
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    body_kind = kind if isinstance(kind, str) and kind else resource.kind
    version = resource.version
    if isinstance(api_version, str) and api_version:
        version = api_version.rsplit("/", 1)[-1]
    return f'{body_kind} in version "{version}" cannot be handled as a {resource.kind}: '


def check_object(
    resource: Resource,
    kind_type: FieldType,
    obj: Any,
    directive: str,
    duplicates: Duplicates | None = None,
) -> list[str]:
    """Check ``obj`` (a decoded body of ``resource``, whose type is
    ``kind_type``) under ``directive``, with the ``duplicates`` that
    :func:`decode_json` found; returns the warnings to send.
    Unknown fields are removed from ``obj`` in place (Warn, Ignore).
    Raises :class:`StatusError` 400 for a type mismatch, and under
    ``Strict`` for any unknown or duplicate field."""
    if kind_type.kind != "struct" or not isinstance(obj, dict):
        return []
    if not duplicates and _clean(obj, kind_type, top=True):
        return []  # the common case: nothing to report, no paths built
    problems = FieldProblems(duplicates)
    struct = kind_type.struct
    try:
        fields = kind_type.fields()
        for key in duplicates.get(id(obj), ()) if duplicates else ():
            problems.messages.append(f'duplicate field "{key}"')
        for key, value in obj.items():
            sub = fields.get(key)
            if sub is None:
                if key not in ("apiVersion", "kind"):
                    problems.messages.append(f'unknown field "{key}"')
                    problems.drops.append((obj, key))
                continue
            if value is not None and sub.kind != "any":
                _walk(value, sub, struct, key, key, problems)
    except _TypeMismatchError as exc:
        raise StatusError(400, "BadRequest", _handled_as(resource, obj) + str(exc)) from None
    if not problems.messages:
        return []
    if directive == STRICT:
        raise StatusError(
            400,
            "BadRequest",
            _handled_as(resource, obj) + "strict decoding error: " + ", ".join(problems.messages),
        )
    for holder, key in problems.drops:
        holder.pop(key, None)
    return [] if directive == IGNORE else problems.messages
