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
* :func:`validate` (:mod:`.validator`) returns one :data:`Cause` per
  violation, worded as apiextensions-apiserver converts kube-openapi's
  errors into field errors (``spec.size: Invalid value: "string": spec.size
  in body must be of type integer: "string"``, ``Required value``,
  ``Unsupported value``, ``Too long``, ``Too many``).

Paths are dotted as kube-openapi writes them (array indices as ``.0``). At
the root, ``apiVersion``, ``kind`` and ``metadata`` are the server's business
and neither pruned nor validated here.

Pure functions over JSON values; inputs are never mutated; thread-safe.
"""

from __future__ import annotations

import copy
from typing import Any

from informers.testing.apiserver._crd.validator import Cause, validate

__all__ = ["Cause", "default", "default_and_prune", "prune", "validate"]

_ROOT_KEEP = ("apiVersion", "kind", "metadata")


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


# ------------------------------------------------- both, in one pass


def default_and_prune(schema: Any, value: Any) -> Any:
    """``prune(schema, default(schema, value))`` in one pass (what a write
    does): a new value, sharing only what the schema preserves unknown with
    ``value`` (never mutated)."""
    if not isinstance(schema, dict):
        return value
    return _both(schema, value, root=True)


def _both(schema: dict[str, Any], value: Any, *, root: bool = False) -> Any:
    if isinstance(value, dict):
        props = _props(schema)
        extra = _additional(schema)
        keep_unknown = _preserves(schema)
        embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
        out: dict[str, Any] = {}
        for name, item in value.items():
            sub = props.get(name)
            if embedded and name in _ROOT_KEEP and not isinstance(sub, dict):
                out[name] = item
            elif isinstance(sub, dict):
                if item is None and not sub.get("nullable"):
                    continue  # pruned, and maybe defaulted below
                out[name] = _both(sub, item)
            elif extra is not None and not props:
                out[name] = _both(extra, item)
            elif keep_unknown:
                out[name] = item
        for name, sub in props.items():
            if name not in out and isinstance(sub, dict) and "default" in sub:
                given = sub["default"]
                fresh = copy.deepcopy(given) if isinstance(given, dict | list) else given
                out[name] = _both(sub, fresh)
        return out
    if isinstance(value, list):
        items = _items(schema)
        if items is None:
            return value
        out_list = []
        for item in value:
            filled = item
            if item is None and "default" in items and not items.get("nullable"):
                filled = copy.deepcopy(items["default"])
            out_list.append(_both(items, filled))
        return out_list
    return value
