"""How server-side apply sees the shape of an object: which nodes are
scalars, structs, maps or lists, and how each list and map merges.

Built-in kinds take their field names and types from the installed
``kubernetes`` client's models (``openapi_types`` and ``attribute_map`` of
``V1Deployment``, ``V1PodSpec``, ...), read through the emulator's one
schema source (:mod:`.._schema.types`, :mod:`.._schema.kinds`). What the models do not say -- the
``x-kubernetes-list-type`` / ``-list-map-keys`` / ``-map-type`` markers the
Kubernetes types carry -- is listed here by hand, from the ``+listType``,
``+listMapKey``, ``+structType`` and ``+mapType`` markers of k8s.io/api and
apimachinery. A list without a marker is atomic, as the server treats it.

Custom resources take the same facts from the ``openAPIV3Schema`` of their
CustomResourceDefinition; a kind with no schema (or a
``x-kubernetes-preserve-unknown-fields`` subtree) is *deduced*: objects are
granular maps, lists atomic, everything else a scalar.

Schemas are immutable and cached; every function here is thread-safe.
"""

from __future__ import annotations

import functools
from typing import Any

from informers.testing.apiserver._schema.kinds import model_name
from informers.testing.apiserver._schema.types import model_class, split_type

__all__ = [
    "DEDUCED",
    "Schema",
    "for_kind",
    "from_openapi",
    "model_schema",
]

_SCALAR_TYPES = frozenset({"str", "int", "bool", "float", "datetime", "date", "bytes"})

#: (model, JSON field) -> key fields of an associative list (+listType=map).
_LIST_MAPS: dict[tuple[str, str], tuple[str, ...]] = {
    ("V1ObjectMeta", "ownerReferences"): ("uid",),
    ("V1PodSpec", "containers"): ("name",),
    ("V1PodSpec", "initContainers"): ("name",),
    ("V1PodSpec", "ephemeralContainers"): ("name",),
    ("V1PodSpec", "volumes"): ("name",),
    ("V1PodSpec", "imagePullSecrets"): ("name",),
    ("V1PodSpec", "hostAliases"): ("ip",),
    ("V1PodSpec", "topologySpreadConstraints"): ("topologyKey", "whenUnsatisfiable"),
    ("V1PodSpec", "schedulingGates"): ("name",),
    ("V1PodSpec", "resourceClaims"): ("name",),
    ("V1Container", "ports"): ("containerPort", "protocol"),
    ("V1Container", "env"): ("name",),
    ("V1Container", "volumeMounts"): ("mountPath",),
    ("V1Container", "volumeDevices"): ("devicePath",),
    ("V1EphemeralContainer", "ports"): ("containerPort", "protocol"),
    ("V1EphemeralContainer", "env"): ("name",),
    ("V1EphemeralContainer", "volumeMounts"): ("mountPath",),
    ("V1EphemeralContainer", "volumeDevices"): ("devicePath",),
    ("V1ResourceRequirements", "claims"): ("name",),
    ("V1ContainerStatus", "volumeMounts"): ("mountPath",),
    ("V1ContainerStatus", "allocatedResourcesStatus"): ("name",),
    ("V1ResourceStatus", "resources"): ("resourceID",),
    ("V1PodStatus", "conditions"): ("type",),
    ("V1PodStatus", "podIPs"): ("ip",),
    ("V1PodStatus", "resourceClaimStatuses"): ("name",),
    ("V1ServiceSpec", "ports"): ("port", "protocol"),
    ("V1ServiceStatus", "conditions"): ("type",),
    ("V1ServiceAccount", "secrets"): ("name",),
    ("V1NodeStatus", "conditions"): ("type",),
    ("V1NodeStatus", "addresses"): ("type",),
    ("V1NamespaceStatus", "conditions"): ("type",),
    ("V1ComponentStatus", "conditions"): ("type",),
    ("V1PersistentVolumeClaimStatus", "conditions"): ("type",),
    ("V1ReplicationControllerStatus", "conditions"): ("type",),
    ("V1DeploymentStatus", "conditions"): ("type",),
    ("V1ReplicaSetStatus", "conditions"): ("type",),
    ("V1StatefulSetStatus", "conditions"): ("type",),
    ("V1DaemonSetStatus", "conditions"): ("type",),
    ("V1PodDisruptionBudgetStatus", "conditions"): ("type",),
    ("V2HorizontalPodAutoscalerStatus", "conditions"): ("type",),
    ("V1CustomResourceDefinitionStatus", "conditions"): ("type",),
    ("V1APIServiceStatus", "conditions"): ("type",),
    ("V1ServiceCIDRStatus", "conditions"): ("type",),
}

#: (model, JSON field) of lists of scalars merged as sets (+listType=set).
_LIST_SETS: frozenset[tuple[str, str]] = frozenset(
    {
        ("V1ObjectMeta", "finalizers"),
        ("V1NodeSpec", "podCIDRs"),
        ("V1Endpoint", "addresses"),
        ("V1UncountedTerminatedPods", "succeeded"),
        ("V1UncountedTerminatedPods", "failed"),
        ("V1PodFailurePolicyOnExitCodesRequirement", "values"),
    }
)

#: Structs owned and replaced as one value (+structType=atomic).
_ATOMIC_STRUCTS: frozenset[str] = frozenset(
    {
        "V1LabelSelector",
        "V1OwnerReference",
        "V1ObjectReference",
        "V1LocalObjectReference",
        "V1TypedLocalObjectReference",
        "V1SecretReference",
        "V1ObjectFieldSelector",
        "V1ResourceFieldSelector",
        "V1ConfigMapKeySelector",
        "V1SecretKeySelector",
        "V1FileKeySelector",
        "V1NodeSelector",
        "V1NodeSelectorTerm",
        "V1TopologySelectorTerm",
        "V1ScopeSelector",
        "V1EndpointAddress",
        "CoreV1EndpointPort",
        "DiscoveryV1EndpointPort",
        "RbacV1Subject",
        "V1RoleRef",
        "V1ServiceBackendPort",
    }
)

#: (model, JSON field) of maps replaced as one value (+mapType=atomic).
_ATOMIC_MAPS: frozenset[tuple[str, str]] = frozenset(
    {
        ("V1PodSpec", "nodeSelector"),
        ("V1ServiceSpec", "selector"),
        ("V1ReplicationControllerSpec", "selector"),
    }
)

#: (model, key field) -> the default the server fills in when an item omits it.
_KEY_DEFAULTS: dict[tuple[str, str], Any] = {
    ("V1ContainerPort", "protocol"): "TCP",
    ("V1ServicePort", "protocol"): "TCP",
}


class Schema:
    """One node of an object's type.

    ``kind`` is ``"scalar"``, ``"struct"`` (declared fields), ``"map"``
    (string keys, one element type), ``"list"`` or ``"untyped"`` (deduced
    from the value). ``atomic`` marks a struct, map or list that is owned
    and replaced as one value. Lists have ``list_type`` ``"atomic"``,
    ``"set"`` or ``"map"`` and, for ``"map"``, their ``keys`` (with
    ``key_defaults`` for keys the server defaults).
    """

    __slots__ = (
        "_element",
        "_fields",
        "atomic",
        "key_defaults",
        "keys",
        "kind",
        "list_type",
    )

    def __init__(
        self,
        kind: str,
        *,
        atomic: bool = False,
        fields: Any = None,
        element: Any = None,
        list_type: str = "atomic",
        keys: tuple[str, ...] = (),
        key_defaults: dict[str, Any] | None = None,
    ) -> None:
        self.kind = kind
        self.atomic = atomic or (kind == "list" and list_type == "atomic")
        #: dict of field -> Schema, or a zero-argument callable returning one
        self._fields = fields
        #: Schema, or a zero-argument callable returning one
        self._element = element
        self.list_type = list_type
        self.keys = keys
        self.key_defaults = key_defaults or {}

    def fields(self) -> dict[str, Schema]:
        """Declared fields of a struct (empty for other kinds)."""
        found = self._fields
        if callable(found):
            found = self._fields = found()
        return found or {}

    def field(self, name: str) -> Schema:
        """The schema of field / entry ``name`` (deduced when undeclared)."""
        if self.kind == "map":
            return self.element()
        if self.kind == "struct":
            return self.fields().get(name, DEDUCED)
        return DEDUCED

    def declares(self, name: str) -> bool:
        """True when ``name`` is a declared field of a struct."""
        return self.kind == "struct" and name in self.fields()

    def element(self) -> Schema:
        """The schema of a list item or map value."""
        found = self._element
        if callable(found):
            found = self._element = found()
        return found if isinstance(found, Schema) else DEDUCED

    def __repr__(self) -> str:
        return f"Schema({self.kind}, atomic={self.atomic}, list_type={self.list_type})"


#: The schema of anything untyped: see the module docstring.
DEDUCED = Schema("untyped")
_SCALAR = Schema("scalar")


def _type_schema(type_name: str, owner: str = "", json_name: str = "") -> Schema:
    """The schema of a model attribute type string (``List[V1Container]``,
    ``Dict[str, str]``, ``V1PodSpec``, ``str``, ``object``; or the older
    clients' ``list[...]`` / ``dict(str, ...)``)."""
    container, inner = split_type(type_name)
    if container:
        if container == "list":
            keys = _LIST_MAPS.get((owner, json_name))
            if keys is not None:
                defaults = {
                    k: _KEY_DEFAULTS[(inner, k)] for k in keys if (inner, k) in _KEY_DEFAULTS
                }
                return Schema(
                    "list",
                    element=lambda: _type_schema(inner),
                    list_type="map",
                    keys=keys,
                    key_defaults=defaults,
                )
            if (owner, json_name) in _LIST_SETS:
                return Schema("list", element=_SCALAR, list_type="set")
            return Schema("list", element=lambda: _type_schema(inner))
        return Schema(
            "map",
            atomic=(owner, json_name) in _ATOMIC_MAPS,
            element=lambda: _type_schema(inner),
        )
    type_name = inner
    if type_name in _SCALAR_TYPES:
        return _SCALAR
    if type_name == "object":
        return DEDUCED
    return model_schema(type_name)


@functools.cache
def model_schema(model: str) -> Schema:
    """The schema of the ``kubernetes`` client model class ``model``
    (``"V1Deployment"``); :data:`DEDUCED` for an unknown model."""
    cls = model_class(model)
    if cls is None:
        return DEDUCED
    types, names = cls.openapi_types, cls.attribute_map

    def build() -> dict[str, Schema]:
        return {
            names[attr]: _type_schema(type_name, model, names[attr])
            for attr, type_name in types.items()
            if attr in names
        }

    return Schema("struct", atomic=model in _ATOMIC_STRUCTS, fields=build)


def for_kind(group: str, version: str, kind: str) -> Schema:
    """The schema of a built-in kind; :data:`DEDUCED` when the installed
    client has no model for it (custom resources use :func:`from_openapi`)."""
    name = model_name(group, version, kind)
    return DEDUCED if name is None else model_schema(name)


# ----------------------------------------------------------------- OpenAPI v3

_OBJECT_META = "V1ObjectMeta"


def from_openapi(node: Any, *, root: bool = True) -> Schema:
    """The schema an ``openAPIV3Schema`` (structural, as in a CRD) describes.
    At the root, ``metadata`` is always an ObjectMeta and ``apiVersion`` /
    ``kind`` are scalars."""
    if not isinstance(node, dict) or node.get("x-kubernetes-preserve-unknown-fields"):
        if not root:
            return DEDUCED
        node = node if isinstance(node, dict) else {}
    if node.get("x-kubernetes-int-or-string"):
        return _SCALAR
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        list_type = node.get("x-kubernetes-list-type") or "atomic"
        keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
        if list_type == "map" and keys:
            defaults: dict[str, Any] = {}
            props = items.get("properties") if isinstance(items, dict) else None
            if isinstance(props, dict):
                for k in keys:
                    sub = props.get(k)
                    if isinstance(sub, dict) and "default" in sub:
                        defaults[k] = sub["default"]
            return Schema(
                "list",
                element=lambda: from_openapi(items, root=False),
                list_type="map",
                keys=keys,
                key_defaults=defaults,
            )
        if list_type == "set":
            return Schema("list", element=_SCALAR, list_type="set")
        return Schema("list", element=lambda: from_openapi(items, root=False))
    props = node.get("properties")
    atomic = node.get("x-kubernetes-map-type") == "atomic"
    if isinstance(props, dict) or root:
        # a struct; undeclared fields (all of them without a schema) are deduced
        declared = dict(props) if isinstance(props, dict) else {}

        def build() -> dict[str, Schema]:
            out = {name: from_openapi(sub, root=False) for name, sub in declared.items()}
            if root:
                out["metadata"] = model_schema(_OBJECT_META)
                out["apiVersion"] = _SCALAR
                out["kind"] = _SCALAR
            return out

        return Schema("struct", atomic=atomic, fields=build)
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return Schema("map", atomic=atomic, element=lambda: from_openapi(extra, root=False))
        return Schema("map", atomic=True, element=DEDUCED) if atomic else DEDUCED
    return _SCALAR
