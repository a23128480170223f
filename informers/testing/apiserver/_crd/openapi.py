"""OpenAPI schemas of custom resources, as the apiextensions server
publishes them: every served version of a CustomResourceDefinition with an
``openAPIV3Schema`` gets a schema named by its reversed group, version and
kind (``com.example.v1.Widget``) and one for its list (``...WidgetList``),
each with ``x-kubernetes-group-version-kind``, in ``components.schemas`` of
its group-version's ``/openapi/v3`` document and in the ``definitions`` of
``/openapi/v2``. That is what ``kubectl explain widgets.spec`` reads.

The CRD's schema is taken as written, with ``apiVersion``, ``kind`` and
``metadata`` described as for built-in kinds (``metadata`` refers to
``ObjectMeta``); the swagger 2.0 form drops what 2.0 cannot say
(``nullable``, ``oneOf``/``anyOf``/``not``) as the server's conversion does.

Pure functions of stored CRDs; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from informers.testing.apiserver._crd.definition import version_schema
from informers.testing.apiserver._schema.openapi import meta_schemas, schema_name
from informers.testing.apiserver._schema.types import model_type

__all__ = ["crd_definitions", "crd_v3_schemas", "rest_friendly_name"]

#: What swagger 2.0 cannot express, dropped from the v2 form.
_NOT_IN_V2 = ("nullable", "oneOf", "anyOf", "not")


def rest_friendly_name(group: str, version: str, kind: str) -> str:
    """``com.example.v1.Widget`` for ``example.com/v1`` ``Widget``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _served(
    crds: Iterable[dict[str, Any]],
) -> Iterable[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(group, version, names, schema) of each served version with a schema."""
    for crd in crds:
        spec = crd.get("spec") or {}
        group, names = str(spec.get("group") or ""), spec.get("names") or {}
        if not group or not names.get("kind"):
            continue
        for entry in spec.get("versions") or []:
            if not isinstance(entry, dict) or not entry.get("served", True):
                continue
            version = str(entry.get("name") or "")
            schema = version_schema(crd, version)
            if version and schema is not None:
                yield group, version, names, schema


def _ref(model: str, v3: bool) -> dict[str, Any]:
    prefix = "#/components/schemas/" if v3 else "#/definitions/"
    ref = {"$ref": prefix + schema_name(model)}
    return {"allOf": [ref]} if v3 else ref


def _standard(field: str, list_kind: bool) -> str:
    """The description a built-in kind's ``apiVersion``/``kind``/``metadata`` has."""
    model = "V1ConfigMapList" if list_kind else "V1ConfigMap"
    return model_type(model).fields()[field].description


def _for_v2(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _for_v2(v) for k, v in node.items() if k not in _NOT_IN_V2}
    if isinstance(node, list):
        return [_for_v2(v) for v in node]
    return node


def _pair(
    group: str, version: str, names: dict[str, Any], schema: dict[str, Any], v3: bool
) -> dict[str, dict[str, Any]]:
    kind = str(names["kind"])
    list_kind = str(names.get("listKind") or f"{kind}List")
    name = rest_friendly_name(group, version, kind)
    props = dict(schema.get("properties") or {})
    props["apiVersion"] = {"type": "string", "description": _standard("apiVersion", False)}
    props["kind"] = {"type": "string", "description": _standard("kind", False)}
    props["metadata"] = {**_ref("V1ObjectMeta", v3), "description": _standard("metadata", False)}
    item = {
        **schema,
        "type": "object",
        "properties": props,
        "x-kubernetes-group-version-kind": [{"group": group, "kind": kind, "version": version}],
    }
    items_ref = {"$ref": ("#/components/schemas/" if v3 else "#/definitions/") + name}
    listing = {
        "description": f"{list_kind} is a list of {kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": _standard("apiVersion", True)},
            "items": {
                "type": "array",
                "description": f"List of {names.get('plural', kind.lower())}. More info: "
                "https://git.k8s.io/community/contributors/devel/api-conventions.md",
                "items": items_ref,
            },
            "kind": {"type": "string", "description": _standard("kind", True)},
            "metadata": {**_ref("V1ListMeta", v3), "description": _standard("metadata", True)},
        },
        "x-kubernetes-group-version-kind": [
            {"group": group, "kind": list_kind, "version": version}
        ],
    }
    if not v3:
        item = _for_v2(item)
    return {name: item, rest_friendly_name(group, version, list_kind): listing}


def crd_v3_schemas(crds: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """group-version (``example.com/v1``) -> the ``components.schemas``
    its ``/openapi/v3`` document adds for custom resources (with the meta
    types they refer to)."""
    out: dict[str, dict[str, Any]] = {}
    for group, version, names, schema in _served(crds):
        schemas = out.setdefault(f"{group}/{version}", dict(meta_schemas(v3=True)))
        schemas.update(_pair(group, version, names, schema, v3=True))
    return out


def crd_definitions(crds: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The swagger 2.0 ``definitions`` of every served custom resource."""
    out: dict[str, Any] = {}
    for group, version, names, schema in _served(crds):
        out.update(_pair(group, version, names, schema, v3=False))
    if out:
        out.update(meta_schemas(v3=False))
    return out
