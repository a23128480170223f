"""Field errors as k8s.io/apimachinery's ``field`` package words them, and
Go's ``%#v``/``%q`` rendering of the values they quote.

A :class:`FieldErrors` collects ``(field, reason, message)`` causes in the
order the real validators report them; :meth:`FieldErrors.raise_invalid`
turns them into the 422 ``Invalid`` Status (duplicates dropped, as
``ToAggregate`` does). Plain values; not shared between threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from informers.testing.apiserver import _status

__all__ = [
    "Cause",
    "FieldErrors",
    "go_json_error",
    "go_map",
    "go_quote",
    "go_strings",
    "go_value",
]

#: ``(field, reason, message)`` as :func:`._status.invalid` takes it.
Cause = tuple[str, str, str]


def go_quote(text: str) -> str:
    """``text`` as Go's ``%q`` prints it (close enough: JSON string escapes)."""
    return json.dumps(text, ensure_ascii=False)


def go_map(values: Mapping[str, Any] | None) -> str:
    """A ``map[string]string`` as ``%#v`` prints it (keys sorted)."""
    if values is None:
        return "map[string]string(nil)"
    inner = ", ".join(f"{go_quote(k)}:{go_quote(str(values[k]))}" for k in sorted(values))
    return "map[string]string{" + inner + "}"


def go_strings(values: Iterable[Any] | None) -> str:
    """A ``[]string`` as ``%#v`` prints it."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def go_value(value: Any) -> str:
    """A scalar (or string map/list) as the ``field`` package prints a bad
    value: strings quoted, numbers and booleans plain, null as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return go_map(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return go_strings(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


_JSON_KINDS = {str: "string", bool: "bool", int: "number", float: "number", list: "array"}


def _quote_char(char: str) -> str:
    """A byte as the ``encoding/json`` scanner quotes it in its errors."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    return "'" + json.dumps(char)[1:-1] + "'"


def _container_at(text: str, pos: int) -> str:
    """``{`` or ``[``: the innermost container open at ``pos`` (``""``: none)."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def go_json_error(raw: bytes) -> str | None:
    """What Go's ``json.Unmarshal`` of ``raw`` into a
    ``map[string]interface{}`` says (None: it decodes): its syntax errors
    (``invalid character 'x' looking for beginning of value``, ``unexpected
    end of JSON input``) and type errors, closely enough for the usual
    mistakes."""
    text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated"):
            return "unexpected end of JSON input"
        char = _quote_char(text[exc.pos])
        if exc.msg.startswith("Invalid control character"):
            return f"invalid character {char} in string literal"
        if exc.msg.startswith("Invalid \\escape"):
            return f"invalid character {_quote_char(text[exc.pos + 1])} in string escape code"
        where = {
            "Expecting property name enclosed in double quotes": (
                "looking for beginning of object key string"
            ),
            "Expecting ':' delimiter": "after object key",
            "Extra data": "after top-level value",
        }.get(exc.msg)
        if where is None and exc.msg == "Expecting ',' delimiter":
            inside = _container_at(text, exc.pos)
            where = "after array element" if inside == "[" else "after object key:value pair"
        return f"invalid character {char} {where or 'looking for beginning of value'}"
    if value is None or isinstance(value, dict):
        return None
    kind = _JSON_KINDS.get(type(value), "value")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


class FieldErrors:
    """The causes one validation found, in order."""

    __slots__ = ("causes",)

    def __init__(self) -> None:
        self.causes: list[Cause] = []

    def __bool__(self) -> bool:
        return bool(self.causes)

    def add(self, field: str, reason: str, message: str) -> None:
        cause = (field, reason, message)
        if cause not in self.causes:
            self.causes.append(cause)

    def required(self, field: str, detail: str = "") -> None:
        msg = "Required value" + (f": {detail}" if detail else "")
        self.add(field, "FieldValueRequired", msg)

    def invalid(self, field: str, value: Any, detail: str, *, shown: str | None = None) -> None:
        """``Invalid value: <value>: detail``; ``shown`` is the value already
        rendered (a Go struct, say) when :func:`go_value` cannot render it."""
        rendered = shown if shown is not None else go_value(value)
        msg = f"Invalid value: {rendered}" + (f": {detail}" if detail else "")
        self.add(field, "FieldValueInvalid", msg)

    def not_supported(self, field: str, value: Any, supported: Iterable[str]) -> None:
        quoted = ", ".join(go_quote(s) for s in supported)
        detail = f": supported values: {quoted}" if quoted else ""
        self.add(field, "FieldValueNotSupported", f"Unsupported value: {go_value(value)}{detail}")

    def duplicate(self, field: str, value: Any, *, shown: str | None = None) -> None:
        rendered = shown if shown is not None else go_value(value)
        self.add(field, "FieldValueDuplicate", f"Duplicate value: {rendered}")

    def forbidden(self, field: str, detail: str) -> None:
        self.add(field, "FieldValueForbidden", "Forbidden" + (f": {detail}" if detail else ""))

    def too_long(self, field: str, limit: int) -> None:
        self.add(field, "FieldValueTooLong", f"Too long: must have at most {limit} bytes")

    def immutable(self, field: str, value: Any, *, shown: str | None = None) -> None:
        """``ValidateImmutableField``: the new value, then ``field is immutable``."""
        self.invalid(field, value, "field is immutable", shown=shown)

    def raise_invalid(self, group: str, kind: str, name: str) -> None:
        """422 Invalid with every cause, if there is any."""
        if self.causes:
            raise _status.invalid(group, kind, name, self.causes)
