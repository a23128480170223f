"""Validation of a value against a structural ``openAPIV3Schema``, worded as
the API server words it: apiextensions-apiserver turns kube-openapi's errors
into field errors (``Invalid value: "string": spec.size in body must be of
type integer: "string"``, ``Required value``, ``Unsupported value: ...:
supported values: ...``, ``Too long: may not be more than N bytes``,
``Too many: N: must have at most M items``). Paths are dotted as kube-openapi
writes them (array indices as ``.0``); at the root ``apiVersion``, ``kind``
and ``metadata`` are not checked here.

:func:`compile_schema` turns a schema into a tree of :class:`Validator`
nodes once (the attributes read up front), so a write checks its object
without looking anything up in the schema; :func:`validate` compiles and
checks in one call. Validators are immutable; everything here is thread-safe.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Cause", "Validator", "compile_schema", "show", "validate"]

#: ``(field path, reason, message)`` as :func:`._status.invalid` takes them.
Cause = tuple[str, str, str]

_ROOT_KEEP = frozenset({"apiVersion", "kind", "metadata"})
_JSON_TYPE = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


def show(value: Any) -> str:
    """A value as a Go field error prints it (strings quoted)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _is_integer(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return True
    return kind is float and math.isfinite(value) and value == int(value)


def _is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_array(value: Any) -> bool:
    return type(value) is list


def _is_string(value: Any) -> bool:
    return type(value) is str


def _is_boolean(value: Any) -> bool:
    return type(value) is bool


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": _is_object,
    "array": _is_array,
    "string": _is_string,
    "integer": _is_integer,
    "number": _is_number,
    "boolean": _is_boolean,
}


def _number(value: Any) -> str:
    return show(value) if isinstance(value, int | float) else str(value)


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _num(value: Any) -> float | None:
    return value if _is_number(value) else None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _invalid(path: str, value: Any, message: str) -> Cause:
    where = path or "<nil>"
    return (path, "FieldValueInvalid", f"Invalid value: {show(value)}: {where} in body {message}")


class Validator:
    """One compiled schema node (see the module docstring)."""

    __slots__ = (
        "check_type",
        "embedded",
        "enum",
        "exclusive_max",
        "exclusive_min",
        "extra",
        "int_or_string",
        "items",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "multiple_of",
        "nullable",
        "pattern",
        "pattern_text",
        "props",
        "required",
        "type",
        "unique",
    )

    def __init__(self, schema: dict[str, Any]) -> None:
        kind = schema.get("type")
        self.type = kind if isinstance(kind, str) else ""
        self.check_type = _TYPE_CHECKS.get(self.type)
        self.nullable = bool(schema.get("nullable"))
        self.int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
        enum = schema.get("enum")
        self.enum = list(enum) if isinstance(enum, list) and enum else None
        self.minimum = _num(schema.get("minimum"))
        self.maximum = _num(schema.get("maximum"))
        self.exclusive_min = bool(schema.get("exclusiveMinimum"))
        self.exclusive_max = bool(schema.get("exclusiveMaximum"))
        step = _num(schema.get("multipleOf"))
        self.multiple_of = step if step is not None and step > 0 else None
        self.max_length = _int(schema.get("maxLength"))
        self.min_length = _int(schema.get("minLength"))
        text = schema.get("pattern")
        self.pattern_text = text if isinstance(text, str) else ""
        try:
            self.pattern = re.compile(text) if isinstance(text, str) else None
        except re.error:
            self.pattern = None
        self.max_items = _int(schema.get("maxItems"))
        self.min_items = _int(schema.get("minItems"))
        self.unique = bool(schema.get("uniqueItems"))
        items = schema.get("items")
        self.items = Validator(items) if isinstance(items, dict) else None
        required = schema.get("required")
        self.required = (
            tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else ()
        )
        self.embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        self.max_props = _int(schema.get("maxProperties"))
        self.min_props = _int(schema.get("minProperties"))
        props = schema.get("properties")
        self.props = {
            name: Validator(sub)
            for name, sub in (props.items() if isinstance(props, dict) else ())
            if isinstance(sub, dict)
        }
        extra = schema.get("additionalProperties")
        self.extra = Validator(extra) if isinstance(extra, dict) else None

    def validate(self, value: Any, *, root: bool = True) -> list[Cause]:
        """Every violation by ``value``, in document order."""
        out: list[Cause] = []
        self.check(value, "", out, root)
        return out

    def _type_error(self, path: str, value: Any, wanted: str = "") -> Cause:
        actual = _type_name(value)
        where = path or "<nil>"
        return (
            path,
            "FieldValueTypeInvalid",
            f'Invalid value: "{actual}": {where} in body must be of type '
            f'{wanted or self.type}: "{actual}"',
        )

    def check(self, value: Any, path: str, out: list[Cause], root: bool = False) -> None:
        """Append the violations of ``value`` (at ``path``) to ``out``."""
        if value is None:
            if not self.nullable and self.type:
                out.append(self._type_error(path, value))
            return
        if self.int_or_string:
            if not (_is_integer(value) or type(value) is str):
                out.append(self._type_error(path, value, "integer,string"))
                return
        elif self.check_type is not None and not self.check_type(value):
            out.append(self._type_error(path, value))
            return
        if self.enum is not None and value not in self.enum:
            supported = ", ".join(show(v) for v in self.enum)
            out.append(
                (
                    path,
                    "FieldValueNotSupported",
                    f"Unsupported value: {show(value)}: supported values: {supported}",
                )
            )
        kind = type(value)
        if kind is dict:
            self._object(value, path, out, root)
        elif kind is str:
            self._string(value, path, out)
        elif kind is list:
            self._array(value, path, out)
        elif kind is int or kind is float:
            self._bounds(value, path, out)

    def _bounds(self, value: float, path: str, out: list[Cause]) -> None:
        low = self.minimum
        if low is not None:
            if self.exclusive_min and value <= low:
                out.append(_invalid(path, value, f"should be greater than {_number(low)}"))
            elif value < low:
                message = f"should be greater than or equal to {_number(low)}"
                out.append(_invalid(path, value, message))
        high = self.maximum
        if high is not None:
            if self.exclusive_max and value >= high:
                out.append(_invalid(path, value, f"should be less than {_number(high)}"))
            elif value > high:
                out.append(
                    _invalid(path, value, f"should be less than or equal to {_number(high)}")
                )
        step = self.multiple_of
        if step is not None and not _is_integer(value / step):
            out.append(_invalid(path, value, f"should be a multiple of {_number(step)}"))

    def _string(self, value: str, path: str, out: list[Cause]) -> None:
        longest = self.max_length
        if longest is not None and len(value) > longest:
            message = f"Too long: may not be more than {longest} bytes"
            out.append((path, "FieldValueTooLong", message))
        shortest = self.min_length
        if shortest is not None and len(value) < shortest:
            out.append(_invalid(path, value, f"should be at least {shortest} chars long"))
        if self.pattern is not None and self.pattern.search(value) is None:
            out.append(_invalid(path, value, f"should match '{self.pattern_text}'"))

    def _array(self, value: list[Any], path: str, out: list[Cause]) -> None:
        most = self.max_items
        if most is not None and len(value) > most:
            message = f"Too many: {len(value)}: must have at most {most} items"
            out.append((path, "FieldValueTooMany", message))
        least = self.min_items
        if least is not None and len(value) < least:
            out.append(_invalid(path, value, f"should have at least {least} items"))
        if self.unique:
            seen: set[str] = set()
            for item in value:
                text = json.dumps(item, sort_keys=True)
                if text in seen:
                    out.append(_invalid(path, value, "shouldn't contain duplicates"))
                    break
                seen.add(text)
        items = self.items
        if items is not None:
            prefix = f"{path}." if path else ""
            for i, item in enumerate(value):
                items.check(item, f"{prefix}{i}", out)

    def _object(self, value: dict[str, Any], path: str, out: list[Cause], root: bool) -> None:
        for name in self.required:
            if name not in value:
                out.append((_join(path, name), "FieldValueRequired", "Required value"))
        if self.embedded:
            for name in ("apiVersion", "kind"):
                if not value.get(name):
                    message = "Required value: must not be empty"
                    out.append((_join(path, name), "FieldValueRequired", message))
        if self.max_props is not None and len(value) > self.max_props:
            message = f"Too many: {len(value)}: must have at most {self.max_props} items"
            out.append((path, "FieldValueTooMany", message))
        if self.min_props is not None and len(value) < self.min_props:
            out.append(_invalid(path, value, f"should have at least {self.min_props} properties"))
        props, extra = self.props, self.extra
        prefix = f"{path}." if path else ""
        for name, item in value.items():
            if root and name in _ROOT_KEEP:
                continue
            sub = props.get(name)
            if sub is None:
                sub = extra
            if sub is not None:
                sub.check(item, prefix + name, out)


def compile_schema(schema: dict[str, Any]) -> Validator:
    """The validator of ``schema`` (compile once, validate many times)."""
    return Validator(schema)


def validate(schema: Any, value: Any, *, root: bool = True) -> list[Cause]:
    """Every violation of ``schema`` by ``value``, in document order."""
    if not isinstance(schema, dict):
        return []
    return Validator(schema).validate(value, root=root)
