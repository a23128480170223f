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


# --------------------------------------------------------------- the walker


def default(schema: Any, value: Any) -> Any:
    """``value`` with the schema's defaults filled in (a new value)."""
    if not isinstance(schema, dict):
        return value
    return _walk(schema, copy.deepcopy(value), fill=True, drop=False)


def prune(schema: Any, value: Any, *, root: bool = True) -> Any:
    """``value`` without the fields ``schema`` does not declare (a new value;
    see the module docstring). ``root``: ``value`` is a whole object."""
    if not isinstance(schema, dict):
        return copy.deepcopy(value)
    return _walk(schema, copy.deepcopy(value), fill=False, drop=True, root=root)


def default_and_prune(schema: Any, value: Any) -> Any:
    """``prune(schema, default(schema, value))`` in one pass (what a write
    does): a new value, sharing only what the schema preserves unknown with
    ``value`` (never mutated)."""
    if not isinstance(schema, dict):
        return value
    return _walk(schema, value, fill=True, drop=True, root=True)


def _walk(schema: dict[str, Any], value: Any, *, fill: bool, drop: bool, root: bool = False) -> Any:
    """One pass over ``value`` by ``schema``: defaults filled in (``fill``),
    undeclared fields and non-nullable nulls dropped (``drop``). Builds new
    containers; leaves (and what is kept unknown) are shared with ``value``."""
    if isinstance(value, dict):
        props = _props(schema)
        extra = _additional(schema)
        keep_unknown = not drop or _preserves(schema)
        embedded = root or bool(schema.get("x-kubernetes-embedded-resource"))
        out: dict[str, Any] = {}
        for name, item in value.items():
            sub = props.get(name)
            if embedded and name in _ROOT_KEEP and not isinstance(sub, dict):
                out[name] = item
            elif isinstance(sub, dict):
                if item is None and not sub.get("nullable"):
                    if drop or (fill and "default" in sub):
                        continue  # pruned, or defaulted below
                    out[name] = item
                    continue
                out[name] = _walk(sub, item, fill=fill, drop=drop)
            elif extra is not None and not props:
                out[name] = _walk(extra, item, fill=fill, drop=drop)
            elif keep_unknown:
                out[name] = item
        if fill:
            for name, sub in props.items():
                if name not in out and isinstance(sub, dict) and "default" in sub:
                    fresh = copy.deepcopy(sub["default"])
                    out[name] = _walk(sub, fresh, fill=fill, drop=drop)
        return out
    if isinstance(value, list):
        items = _items(schema)
        if items is None:
            return value
        out_list = []
        for item in value:
            filled = item
            if fill and item is None and "default" in items and not items.get("nullable"):
                filled = copy.deepcopy(items["default"])
            out_list.append(_walk(items, filled, fill=fill, drop=drop))
        return out_list
    return value
