"""Structural ``openAPIV3Schema`` semantics for custom resources: defaulting,
pruning and validation, the three steps the API server applies to a custom
resource between decoding it and storing it (and defaulting again when it
reads one back).

* :func:`default` fills each missing property that declares a ``default``
  (a ``null`` in a non-nullable property counts as missing), in objects that
  exist, array items and ``additionalProperties`` values included.
* :func:`prune` drops every property the schema does not declare, except
  under ``x-kubernetes-preserve-unknown-fields: true``; an
  ``x-kubernetes-embedded-resource`` keeps ``apiVersion``, ``kind`` and
  ``metadata``; ``null`` in a non-nullable property is dropped.
* :func:`validate` returns one :data:`Cause` per violation, worded as
  apiextensions-apiserver converts kube-openapi's errors into field errors
  (``spec.size: Invalid value: "string": spec.size in body must be of type
  integer: "string"``, ``Required value``, ``Unsupported value``,
  ``Too long``, ``Too many``).

Paths are dotted as kube-openapi writes them (array indices as ``.0``). At
the root, ``apiVersion``, ``kind`` and ``metadata`` are the server's business
and neither pruned nor validated here.

Pure functions over JSON values; inputs are never mutated; thread-safe.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from typing import Any

__all__ = ["Cause", "default", "prune", "validate"]

#: ``(field path, reason, message)`` as :func:`._status.invalid` takes them.
Cause = tuple[str, str, str]

_ROOT_KEEP = ("apiVersion", "kind", "metadata")
_JSON_TYPE = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _additional(schema: dict[str, Any]) -> dict[str, Any] | None:
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _items(schema: dict[str, Any]) -> dict[str, Any] | None:
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def _preserves(schema: dict[str, Any]) -> bool:
    return bool(
        schema.get("x-kubernetes-preserve-unknown-fields")
        or schema.get("additionalProperties") is True
    )


# -------------------------------------------------------------- defaulting


def default(schema: Any, value: Any) -> Any:
    """``value`` with the schema's defaults filled in (a new value)."""
    if not isinstance(schema, dict):
        return value
    return _default(schema, copy.deepcopy(value))


def _default(schema: dict[str, Any], value: Any) -> Any:
    if isinstance(value, dict):
        props = _props(schema)
        for name, sub in props.items():
            if not isinstance(sub, dict):
                continue
            missing = name not in value or (value[name] is None and not sub.get("nullable"))
            if missing and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
        for name, item in list(value.items()):
            sub = props.get(name)
            if isinstance(sub, dict):
                value[name] = _default(sub, item)
            else:
                extra = _additional(schema)
                if extra is not None and not props:
                    value[name] = _default(extra, item)
    elif isinstance(value, list):
        items = _items(schema)
        if items is not None:
            for i, item in enumerate(value):
                if item is None and "default" in items and not items.get("nullable"):
                    value[i] = copy.deepcopy(items["default"])
                value[i] = _default(items, value[i])
    return value


# ----------------------------------------------------------------- pruning


def prune(schema: Any, value: Any, *, root: bool = True) -> Any:
    """``value`` without the fields ``schema`` does not declare (a new value;
    see the module docstring). ``root``: ``value`` is a whole object."""
    if not isinstance(schema, dict):
        return copy.deepcopy(value)
    return _prune(schema, value, root=root)


def _prune(schema: dict[str, Any], value: Any, *, root: bool = False) -> Any:
    if isinstance(value, dict):
        props = _props(schema)
        extra = _additional(schema)
        keep_unknown = _preserves(schema)
        embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
        out: dict[str, Any] = {}
        for name, item in value.items():
            sub = props.get(name)
            if embedded and name in _ROOT_KEEP and not isinstance(sub, dict):
                out[name] = copy.deepcopy(item)
            elif isinstance(sub, dict):
                if item is None and not sub.get("nullable"):
                    continue
                out[name] = _prune(sub, item)
            elif extra is not None and not props:
                out[name] = _prune(extra, item)
            elif keep_unknown:
                out[name] = copy.deepcopy(item)
        return out
    if isinstance(value, list):
        items = _items(schema)
        if items is None:
            return copy.deepcopy(value)
        return [_prune(items, item) for item in value]
    return value


# -------------------------------------------------------------- validation


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value == int(value)


def _has_type(kind: str, value: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return _is_integer(value)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


def show(value: Any) -> str:
    """A value as a Go field error prints it (strings quoted)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == int(value) and math.isfinite(value):
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _number(value: Any) -> str:
    return show(value) if isinstance(value, int | float) else str(value)


@functools.lru_cache(maxsize=256)
def _pattern(text: str) -> re.Pattern[str] | None:
    try:
        return re.compile(text)
    except re.error:
        return None


def validate(schema: Any, value: Any, *, root: bool = True) -> list[Cause]:
    """Every violation of ``schema`` by ``value``, in document order."""
    if not isinstance(schema, dict):
        return []
    causes: list[Cause] = []
    _validate(schema, value, "", causes, root=root)
    return causes


def _invalid(path: str, value: Any, message: str) -> Cause:
    where = path or "<nil>"
    return (path, "FieldValueInvalid", f"Invalid value: {show(value)}: {where} in body {message}")


def _validate(
    schema: dict[str, Any], value: Any, path: str, out: list[Cause], *, root: bool = False
) -> None:
    if value is None:
        if not schema.get("nullable") and schema.get("type"):
            out.append(_type_error(schema, path, value))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (_is_integer(value) or isinstance(value, str)):
            out.append(_type_error(schema, path, value, "integer,string"))
            return
    else:
        kind = schema.get("type")
        if isinstance(kind, str) and kind and not _has_type(kind, value):
            out.append(_type_error(schema, path, value))
            return
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        supported = ", ".join(show(v) for v in enum)
        out.append(
            (
                path,
                "FieldValueNotSupported",
                f"Unsupported value: {show(value)}: supported values: {supported}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        _bounds(schema, value, path, out)
    elif isinstance(value, str):
        _string(schema, value, path, out)
    elif isinstance(value, list):
        _array(schema, value, path, out)
    elif isinstance(value, dict):
        _object(schema, value, path, out, root=root)


def _type_error(schema: dict[str, Any], path: str, value: Any, kind: str = "") -> Cause:
    wanted = kind or str(schema.get("type") or "")
    actual = _type_name(value)
    where = path or "<nil>"
    return (
        path,
        "FieldValueTypeInvalid",
        f'Invalid value: "{actual}": {where} in body must be of type {wanted}: "{actual}"',
    )


def _bounds(schema: dict[str, Any], value: float, path: str, out: list[Cause]) -> None:
    low = schema.get("minimum")
    if isinstance(low, int | float):
        if schema.get("exclusiveMinimum") and value <= low:
            out.append(_invalid(path, value, f"should be greater than {_number(low)}"))
        elif value < low:
            out.append(_invalid(path, value, f"should be greater than or equal to {_number(low)}"))
    high = schema.get("maximum")
    if isinstance(high, int | float):
        if schema.get("exclusiveMaximum") and value >= high:
            out.append(_invalid(path, value, f"should be less than {_number(high)}"))
        elif value > high:
            out.append(_invalid(path, value, f"should be less than or equal to {_number(high)}"))
    step = schema.get("multipleOf")
    if isinstance(step, int | float) and step > 0 and not _is_integer(value / step):
        out.append(_invalid(path, value, f"should be a multiple of {_number(step)}"))


def _string(schema: dict[str, Any], value: str, path: str, out: list[Cause]) -> None:
    longest = schema.get("maxLength")
    if isinstance(longest, int) and len(value) > longest:
        out.append(
            (
                path,
                "FieldValueTooLong",
                f"Too long: may not be more than {longest} bytes",
            )
        )
    shortest = schema.get("minLength")
    if isinstance(shortest, int) and len(value) < shortest:
        out.append(_invalid(path, value, f"should be at least {shortest} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        compiled = _pattern(pattern)
        if compiled is not None and compiled.search(value) is None:
            out.append(_invalid(path, value, f"should match '{pattern}'"))


def _array(schema: dict[str, Any], value: list[Any], path: str, out: list[Cause]) -> None:
    most = schema.get("maxItems")
    if isinstance(most, int) and len(value) > most:
        out.append(
            (path, "FieldValueTooMany", f"Too many: {len(value)}: must have at most {most} items")
        )
    least = schema.get("minItems")
    if isinstance(least, int) and len(value) < least:
        out.append(_invalid(path, value, f"should have at least {least} items"))
    if schema.get("uniqueItems"):
        seen: set[str] = set()
        for item in value:
            text = json.dumps(item, sort_keys=True)
            if text in seen:
                out.append(_invalid(path, value, "shouldn't contain duplicates"))
                break
            seen.add(text)
    items = _items(schema)
    if items is not None:
        for i, item in enumerate(value):
            _validate(items, item, f"{path}.{i}" if path else str(i), out)


def _object(
    schema: dict[str, Any], value: dict[str, Any], path: str, out: list[Cause], *, root: bool
) -> None:
    required = schema.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in value:
                out.append((_join(path, name), "FieldValueRequired", "Required value"))
    if schema.get("x-kubernetes-embedded-resource"):
        for name in ("apiVersion", "kind"):
            if not value.get(name):
                out.append(
                    (_join(path, name), "FieldValueRequired", "Required value: must not be empty")
                )
    for name, count in (("maxProperties", 1), ("minProperties", -1)):
        limit = schema.get(name)
        if not isinstance(limit, int):
            continue
        if count > 0 and len(value) > limit:
            out.append(
                (
                    path,
                    "FieldValueTooMany",
                    f"Too many: {len(value)}: must have at most {limit} items",
                )
            )
        elif count < 0 and len(value) < limit:
            out.append(_invalid(path, value, f"should have at least {limit} properties"))
    props = _props(schema)
    extra = _additional(schema)
    for name, item in value.items():
        if root and name in _ROOT_KEEP:
            continue
        sub = props.get(name)
        if isinstance(sub, dict):
            _validate(sub, item, _join(path, name), out)
        elif extra is not None:
            _validate(extra, item, _join(path, name), out)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
