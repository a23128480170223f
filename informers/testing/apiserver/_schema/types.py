"""The types of built-in kinds, read from the installed ``kubernetes``
client's models.

Every model class (``V1Deployment``, ``V1PodSpec``, ...) carries
``openapi_types`` (attribute -> type string: ``"V1PodSpec"``,
``"List[V1Container]"`` or ``"list[V1Container]"``, ``"Dict[str, str]"`` or
``"dict(str, str)"``, ``"int"``, ``"datetime"``, ``"object"``) and
``attribute_map`` (attribute -> JSON name). :func:`model_type` turns a model
into a tree of :class:`FieldType` nodes keyed by JSON name, built lazily and
cached, so a kind costs nothing until its first write.

What the models do not say is kept in three small tables: which integers
are ``int64`` in Go (the rest are ``int32``), which strings are
``resource.Quantity`` (they also take JSON numbers) and which untyped
``object`` fields are ``intstr.IntOrString``.

Everything here is immutable once built and thread-safe (``functools.cache``
may build a node twice under a race; both results are equal).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import kubernetes.client.models as _models

__all__ = [
    "ANY",
    "FieldType",
    "go_struct_name",
    "model_class",
    "model_type",
    "split_type",
]

#: JSON names of Go ``int64`` fields (every other integer is ``int32``).
_INT64_FIELDS = frozenset(
    {
        "generation",
        "observedGeneration",
        "deletionGracePeriodSeconds",
        "activeDeadlineSeconds",
        "terminationGracePeriodSeconds",
        "startingDeadlineSeconds",
        "tolerationSeconds",
        "expirationSeconds",
        "gracePeriodSeconds",
        "runAsUser",
        "runAsGroup",
        "fsGroup",
        "supplementalGroups",
        "uid",
        "gid",
    }
)
#: (model, JSON name) of ``int32`` fields whose name is ``int64`` elsewhere.
_INT32_EXCEPTIONS = frozenset({("V1CertificateSigningRequestSpec", "expirationSeconds")})
#: JSON names of ``resource.Quantity`` fields (strings or maps of them).
_QUANTITY_FIELDS = frozenset(
    {
        "limits",
        "requests",
        "hard",
        "used",
        "capacity",
        "allocatable",
        "allocatedResources",
        "default",
        "defaultRequest",
        "max",
        "min",
        "maxLimitRequestRatio",
        "sizeLimit",
        "overhead",
        "podFixed",
        "maximumVolumeSize",
        "storage",
    }
)
#: JSON names of the untyped (``object``) fields that are ``intstr.IntOrString``.
_INT_OR_STRING_FIELDS = frozenset(
    {"port", "targetPort", "maxSurge", "maxUnavailable", "minAvailable"}
)

_MODEL_NAME = re.compile(r"^(?:[A-Z][a-z]+)?(v\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)$", re.IGNORECASE)
_LIST = re.compile(r"^[Ll]ist\[(.+)\]$")
_DICT = re.compile(r"^(?:Dict\[str, (.+)\]|dict\(str, (.+)\))$")


class FieldType:
    """One node of a kind's type.

    ``kind`` is ``"struct"`` (declared ``fields``), ``"list"`` or ``"map"``
    (of ``element``), or a scalar: ``"string"``, ``"integer"``,
    ``"number"``, ``"boolean"``, ``"time"`` (an RFC 3339 string),
    ``"bytes"`` (base64 string), ``"quantity"`` (string or number),
    ``"int-or-string"`` or ``"any"`` (not checked). ``go`` is the Go type
    as the API server's JSON decoder names it in errors (``int32``,
    ``v1.PodSpec``, ``[]v1.Container``, ``map[string]string``); ``model``
    the client's model class name of a struct; ``description`` the field's
    documentation where the client carries it.
    """

    __slots__ = ("_element", "_fields", "description", "go", "kind", "model", "struct")

    def __init__(
        self,
        kind: str,
        go: str,
        *,
        model: str = "",
        fields: Any = None,
        element: Any = None,
        description: str = "",
    ) -> None:
        self.kind = kind
        self.go = go
        self.model = model
        #: the Go struct's name (``PodSpec``) of a struct, else ""
        self.struct = go_struct_name(model)[1] if model else ""
        self._fields = fields
        self._element = element
        self.description = description

    def fields(self) -> dict[str, FieldType]:
        """The declared fields of a struct, by JSON name (empty otherwise)."""
        found = self._fields
        if callable(found):
            found = self._fields = found()
        return found or {}

    def element(self) -> FieldType:
        """The type of a list's items or a map's values (:data:`ANY` otherwise)."""
        found = self._element
        if callable(found):
            found = self._element = found()
        return found if isinstance(found, FieldType) else ANY

    def with_description(self, description: str) -> FieldType:
        """This type documented as one particular field."""
        if not description or description == self.description:
            return self
        return FieldType(
            self.kind,
            self.go,
            model=self.model,
            fields=self._fields,
            element=self._element,
            description=description,
        )

    def __repr__(self) -> str:
        return f"FieldType({self.kind}, {self.go})"


#: Anything: not checked.
ANY = FieldType("any", "interface {}")

_SCALARS: dict[str, tuple[str, str]] = {
    "str": ("string", "string"),
    "bool": ("boolean", "bool"),
    "float": ("number", "float64"),
    "datetime": ("time", "v1.Time"),
    "date": ("time", "v1.Time"),
    "bytes": ("bytes", "[]uint8"),
}


def model_class(name: str) -> Any:
    """The client's model class ``name`` (``"V1PodSpec"``), or None."""
    cls = getattr(_models, name, None)
    return cls if isinstance(getattr(cls, "openapi_types", None), dict) else None


def go_struct_name(model: str) -> tuple[str, str]:
    """``(package, struct)`` of a model class name as Go names it:
    ``V1PodSpec`` -> ``("v1", "PodSpec")``, ``CoreV1EndpointPort`` ->
    ``("v1", "EndpointPort")``."""
    match = _MODEL_NAME.match(model)
    if match is None:
        return "v1", model
    return match.group(1).lower(), match.group(2)


def _scalar(type_name: str, json_name: str, owner: str) -> FieldType | None:
    if type_name == "int":
        wide = json_name in _INT64_FIELDS and (owner, json_name) not in _INT32_EXCEPTIONS
        go = "int64" if wide else "int32"
        return FieldType("integer", go)
    if type_name == "str" and json_name in _QUANTITY_FIELDS:
        return FieldType("quantity", "resource.Quantity")
    found = _SCALARS.get(type_name)
    if found is not None:
        return FieldType(found[0], found[1])
    if type_name == "object":
        if json_name in _INT_OR_STRING_FIELDS:
            return FieldType("int-or-string", "intstr.IntOrString")
        return ANY
    return None


def split_type(type_name: str) -> tuple[str, str]:
    """A model's type string taken apart, in either client generation's
    spelling: ``("list", inner)`` for ``List[X]`` / ``list[X]``,
    ``("map", inner)`` for ``Dict[str, X]`` / ``dict(str, X)``, else
    ``("", type_name)`` (a scalar, ``object`` or a model name)."""
    type_name = type_name.strip()
    match = _LIST.match(type_name)
    if match is not None:
        return "list", match.group(1).strip()
    match = _DICT.match(type_name)
    if match is not None:
        return "map", (match.group(1) or match.group(2)).strip()
    return "", type_name


def _type_of(type_name: str, json_name: str, owner: str) -> FieldType:
    """The type a model's type string names (``json_name`` is the field's
    JSON name in model ``owner``, which decide the Go width of integers and
    the quantities)."""
    container, type_name = split_type(type_name)
    if container == "list":
        inner = _type_of(type_name, json_name, owner)
        return FieldType("list", f"[]{inner.go}", element=inner)
    if container == "map":
        inner = _type_of(type_name, json_name, owner)
        return FieldType("map", f"map[string]{inner.go}", element=inner)
    scalar = _scalar(type_name, json_name, owner)
    if scalar is not None:
        return scalar
    return model_type(type_name)


def _descriptions(cls: Any) -> dict[str, str]:
    """attribute -> documentation, from pydantic fields (clients 35+) or
    the properties' docstrings (older clients)."""
    out: dict[str, str] = {}
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict):
        for attr, info in model_fields.items():
            text = getattr(info, "description", None)
            if isinstance(text, str):
                out[attr] = text
        return out
    for attr in getattr(cls, "openapi_types", {}):
        prop = getattr(cls, attr, None)
        doc = getattr(prop, "__doc__", None) if isinstance(prop, property) else None
        if isinstance(doc, str):
            lines = [line.strip() for line in doc.strip().splitlines()]
            text = " ".join(line for line in lines[1:] if line and not line.startswith(":"))
            out[attr] = text
    return out


@functools.cache
def model_type(model: str) -> FieldType:
    """The type of the client model class ``model`` (``"V1Deployment"``):
    a struct whose fields are built on first use; :data:`ANY` when the
    installed client has no such model."""
    cls = model_class(model)
    if cls is None:
        return ANY
    package, struct = go_struct_name(model)

    def build() -> dict[str, FieldType]:
        names: dict[str, str] = cls.attribute_map
        docs = _descriptions(cls)
        out: dict[str, FieldType] = {}
        for attr, type_name in cls.openapi_types.items():
            json_name = names.get(attr)
            if json_name is None:
                continue
            found = _type_of(type_name, json_name, model)
            out[json_name] = found.with_description(docs.get(attr, ""))
        return out

    doc = " ".join((cls.__doc__ or "").split("Attributes:")[0].split())
    doc = doc.removesuffix(
        "NOTE: This class is auto generated by OpenAPI Generator. "
        "Ref: https://openapi-generator.tech Do not edit the class manually."
    )
    return FieldType(
        "struct", f"{package}.{struct}", model=model, fields=build, description=doc.strip()
    )
