"""OpenAPI schemas of the built-in kinds, from the same model types the
field validation uses: ``components.schemas`` of the OpenAPI v3 documents
and ``definitions`` of the swagger 2.0 document (``/openapi/v2``).

Names follow the real server's form (``io.k8s.api.apps.v1.Deployment``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``): the last dotted part
is the Go type, which ``kubectl explain`` prints. Kinds carry
``x-kubernetes-group-version-kind``; lists the merge markers server-side
apply reads (``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``).

Documents are cached per set of kinds; callers must not change them.
Thread-safe.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from informers.testing.apiserver._apply.schema import model_schema as _apply_schema
from informers.testing.apiserver._discovery import SERVER_GIT_VERSION
from informers.testing.apiserver._exchange import Request
from informers.testing.apiserver._schema.kinds import ALL_BUILTINS, is_builtin, model_name
from informers.testing.apiserver._schema.types import FieldType, go_struct_name, model_type
from informers.testing.apiserver._status import StatusError
from informers.wire.resources import Resource

__all__ = [
    "definitions",
    "meta_schemas",
    "schema_name",
    "v2_document",
    "v2_openapi",
    "v3_schemas",
]

#: Models of k8s.io/apimachinery's meta/v1 package.
_META_TYPES = frozenset(
    {
        "V1ObjectMeta",
        "V1ListMeta",
        "V1LabelSelector",
        "V1LabelSelectorRequirement",
        "V1ManagedFieldsEntry",
        "V1OwnerReference",
        "V1Condition",
        "V1Status",
        "V1StatusDetails",
        "V1StatusCause",
        "V1DeleteOptions",
        "V1Preconditions",
    }
)
_PREFIX = re.compile(r"^([A-Z][a-z]+)?V\d")


@functools.cache
def _kind_models() -> dict[str, Resource]:
    """model name -> the (first) built-in resource it is the kind of."""
    out: dict[str, Resource] = {}
    for res in ALL_BUILTINS:
        name = model_name(res.group, res.version, res.kind)
        if name is not None:
            out.setdefault(name, res)
    return out


def schema_name(model: str) -> str:
    """The component / definition name of a model class."""
    version, struct = go_struct_name(model)
    if model in _META_TYPES:
        return f"io.k8s.apimachinery.pkg.apis.meta.{version}.{struct}"
    res = _kind_models().get(model)
    if res is not None:
        package = res.group.split(".", 1)[0] if res.group else "core"
        return f"io.k8s.api.{package}.{version}.{struct}"
    match = _PREFIX.match(model)
    if match is not None and match.group(1):
        return f"io.k8s.api.{match.group(1).lower()}.{version}.{struct}"
    return f"io.k8s.api.{_package_by_prefix(version, struct)}.{version}.{struct}"


@functools.cache
def _package_by_prefix(version: str, struct: str) -> str:
    """The package of a type that is not a kind: that of the kind whose
    name is the longest prefix of its own (``DeploymentSpec`` -> apps),
    else core."""
    best, package = 0, "core"
    for model, res in _kind_models().items():
        kind_version, kind = go_struct_name(model)
        if kind_version == version and struct.startswith(kind) and len(kind) > best:
            best = len(kind)
            package = res.group.split(".", 1)[0] if res.group else "core"
    return package


def _scalar(ftype: FieldType) -> dict[str, Any]:
    kind = ftype.kind
    if kind == "string":
        return {"type": "string"}
    if kind == "integer":
        return {"type": "integer", "format": ftype.go}
    if kind == "number":
        return {"type": "number", "format": "double"}
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "time":
        return {"type": "string", "format": "date-time"}
    if kind == "bytes":
        return {"type": "string", "format": "byte"}
    if kind == "quantity":
        return {"type": "string", "format": "quantity"}
    if kind == "int-or-string":
        return {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string": True}
    return {"type": "object"}


class _Builder:
    """Collects the named schemas a set of kinds reaches."""

    def __init__(self, ref_prefix: str, *, v3: bool) -> None:
        self.ref_prefix = ref_prefix
        self.v3 = v3
        self.named: dict[str, dict[str, Any]] = {}

    def node(self, ftype: FieldType, owner: str = "", field: str = "") -> dict[str, Any]:
        if ftype.kind == "struct":
            self.struct(ftype.model)
            ref = f"{self.ref_prefix}{schema_name(ftype.model)}"
            node: dict[str, Any] = {"allOf": [{"$ref": ref}]} if self.v3 else {"$ref": ref}
        elif ftype.kind == "list":
            node = {"type": "array", "items": self.node(ftype.element())}
            if owner:
                merge = _apply_schema(owner).field(field)
                if merge.kind == "list" and merge.list_type != "atomic":
                    node["x-kubernetes-list-type"] = merge.list_type
                    if merge.keys:
                        node["x-kubernetes-list-map-keys"] = list(merge.keys)
        elif ftype.kind == "map":
            node = {"type": "object", "additionalProperties": self.node(ftype.element())}
        else:
            node = _scalar(ftype)
        own = ftype.kind == "struct" and ftype.description == model_type(ftype.model).description
        if ftype.description and not own:
            node["description"] = ftype.description
        return node

    def struct(self, model: str) -> None:
        name = schema_name(model)
        if name in self.named:
            return
        out: dict[str, Any] = {"type": "object"}
        self.named[name] = out  # before the fields: types may recurse
        ftype = model_type(model)
        if ftype.description:
            out["description"] = ftype.description
        out["properties"] = {
            field: self.node(sub, model, field) for field, sub in ftype.fields().items()
        }
        res = _kind_models().get(model)
        if res is not None:
            gvks = [
                {"group": r.group, "kind": r.kind, "version": r.version}
                for r in ALL_BUILTINS
                if model_name(r.group, r.version, r.kind) == model
            ]
            out["x-kubernetes-group-version-kind"] = gvks


def _models_of(resources: Iterable[Resource]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for res in resources:
        if is_builtin(res):
            name = model_name(res.group, res.version, res.kind)
            if name is not None:
                found.setdefault(name, None)
    return tuple(found)


@functools.lru_cache(maxsize=64)
def _v3_for(models: tuple[str, ...]) -> dict[str, Any]:
    builder = _Builder("#/components/schemas/", v3=True)
    for model in models:
        builder.struct(model)
    return dict(sorted(builder.named.items()))


def v3_schemas(resources: Iterable[Resource]) -> dict[str, Any]:
    """``components.schemas`` of an OpenAPI v3 document serving
    ``resources``: their built-in kinds and every type they reach (custom
    resources are left out). Cached; do not change the result."""
    return _v3_for(_models_of(resources))


@functools.lru_cache(maxsize=8)
def _v2_for(models: tuple[str, ...]) -> dict[str, Any]:
    builder = _Builder("#/definitions/", v3=False)
    for model in models:
        builder.struct(model)
    return dict(sorted(builder.named.items()))


def meta_schemas(*, v3: bool) -> dict[str, Any]:
    """``ObjectMeta`` and ``ListMeta`` and the types they reach (what a
    custom resource's schemas refer to). Cached; do not change it."""
    models = ("V1ListMeta", "V1ObjectMeta")
    return _v3_for(models) if v3 else _v2_for(models)


def definitions(resources: Iterable[Resource]) -> dict[str, Any]:
    """Swagger 2.0 ``definitions`` of the built-in kinds among
    ``resources`` and every type they reach. Cached; do not change it."""
    return _v2_for(_models_of(resources))


def v2_document(
    resources: Iterable[Resource], version: str, custom: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``/openapi/v2`` answer: a swagger 2.0 document with the
    definitions of the built-in kinds served and the ``custom`` ones
    (custom resources'; paths left out)."""
    found = definitions(resources)
    if custom:
        found = dict(sorted({**found, **custom}.items()))
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": version},
        "paths": {},
        "definitions": found,
    }


def v2_openapi(
    request: Request, resources: Iterable[Resource], custom: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The ``/openapi/v2`` answer for ``request`` (``custom``: the custom
    resources' definitions): the JSON swagger document, or 406 when the
    client accepts only protobuf (kubectl asks for protobuf and, on 406,
    carries on without v2 as it did on 404)."""
    accept = request.header("Accept").lower()
    if accept and "json" not in accept and "*/*" not in accept:
        raise StatusError(
            406,
            "NotAcceptable",
            "only application/json is served for /openapi/v2",
        )
    return v2_document(resources, SERVER_GIT_VERSION.split("+", 1)[0], custom)
