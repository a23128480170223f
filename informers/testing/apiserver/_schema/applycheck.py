"""The typed check of a server-side apply configuration, as
structured-merge-diff converts it before merging: a field the kind does not
declare, or a value of the wrong shape, fails the whole apply whatever
``fieldValidation`` says, with the paths written as structured-merge-diff
writes them (``.spec.template.spec.containers[name="app"].imagee``).

The real server answers such an apply with a 500 whose Status has no
reason (``Error from server: failed to create typed patch object
(apps/v1, Kind=Deployment): .spec.foo: field not declared in schema``).
Built-in kinds only; pure functions, thread-safe.
"""

from __future__ import annotations

import json
from typing import Any

from informers.testing.apiserver._apply.schema import model_schema
from informers.testing.apiserver._schema.fieldcheck import is_clean
from informers.testing.apiserver._schema.kinds import kind_type
from informers.testing.apiserver._schema.types import FieldType
from informers.testing.apiserver._status import StatusError
from informers.wire.resources import Resource

__all__ = ["check_apply"]

_NUMERIC = "expected numeric (int or float), got"


def _go_type(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _key_value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value).lower()


def _item_path(item: Any, index: int, keys: tuple[str, ...]) -> str:
    if keys and isinstance(item, dict) and all(k in item for k in keys):
        return "[" + ",".join(f"{k}={_key_value(item[k])}" for k in keys) + "]"
    return f"[{index}]"


def _scalar_error(value: Any, ftype: FieldType) -> str | None:
    kind = ftype.kind
    if kind in ("string", "time", "bytes") and not isinstance(value, str):
        return f"expected string, got &value.valueUnstructured{{Value:{_key_value(value)}}}"
    if kind in ("integer", "number") and (
        isinstance(value, bool) or not isinstance(value, (int, float))
    ):
        return f"{_NUMERIC} {_go_type(value)}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"expected boolean, got {_key_value(value)}"
    if kind in ("quantity", "int-or-string") and isinstance(value, (dict, list)):
        return f"expected scalar, got {_go_type(value)}"
    return None


def _walk(node: Any, ftype: FieldType, path: str, errors: list[str]) -> None:
    if node is None:
        return
    kind = ftype.kind
    if kind == "struct":
        if not isinstance(node, dict):
            errors.append(f"{path}: expected map, got {_go_type(node)}")
            return
        fields = ftype.fields()
        merge = model_schema(ftype.model)
        for key, value in node.items():
            sub = fields.get(key)
            if sub is None:
                if not (path == "" and key in ("apiVersion", "kind")):
                    errors.append(f"{path}.{key}: field not declared in schema")
                continue
            if sub.kind == "list" and isinstance(value, list):
                keys = merge.field(key).keys
                element = sub.element()
                for index, item in enumerate(value):
                    _walk(item, element, f"{path}.{key}{_item_path(item, index, keys)}", errors)
                continue
            _walk(value, sub, f"{path}.{key}", errors)
        return
    if kind == "list":
        if not isinstance(node, list):
            errors.append(f"{path}: expected list, got {_go_type(node)}")
            return
        for index, item in enumerate(node):
            _walk(item, ftype.element(), f"{path}[{index}]", errors)
        return
    if kind == "map":
        if not isinstance(node, dict):
            errors.append(f"{path}: expected map, got {_go_type(node)}")
            return
        for key, value in node.items():
            _walk(value, ftype.element(), f"{path}.{key}", errors)
        return
    if kind == "any":
        return
    if kind != "list" and isinstance(node, list):
        errors.append(f"{path}: expected {kind}, got {_go_type(node)}")
        return
    problem = _scalar_error(node, ftype)
    if problem is not None:
        errors.append(f"{path}: {problem}")


def check_apply(resource: Resource, config: Any) -> None:
    """Refuse an apply configuration of a built-in kind that declares
    fields the kind does not have or gives a field a value of the wrong
    shape (500, no reason, as the server answers); custom resources pass."""
    ftype = kind_type(resource)
    if ftype.kind != "struct" or not isinstance(config, dict):
        return
    if is_clean(config, ftype):
        return
    errors: list[str] = []
    _walk(config, ftype, "", errors)
    if not errors:
        return
    detail = errors[0] if len(errors) == 1 else "\n".join(["errors:", *(f"  {e}" for e in errors)])
    gvk = f"{resource.group_version}, Kind={resource.kind}"
    if not resource.group:
        gvk = f"/{gvk}"
    error = StatusError(500, "", f"failed to create typed patch object ({gvk}): {detail}")
    error.body.pop("reason", None)
    raise error
