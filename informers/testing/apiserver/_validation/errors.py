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

__all__ = ["Cause", "FieldErrors", "go_map", "go_quote", "go_strings", "go_value"]

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
