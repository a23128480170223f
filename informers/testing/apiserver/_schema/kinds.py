"""The built-in kinds the emulator serves beyond
:data:`informers.wire.resources.BUILTIN_RESOURCES`, and what the models and
the real registry say about every built-in kind.

The list of kinds, their plurals, scopes, short names and categories is
what discovery reports for a Kubernetes 1.32 cluster (the models do not
carry it); their fields come from the client's models
(:func:`kind_type`), and whether a kind has a ``status`` subresource from
whether its model has a ``status`` field. Immutable; thread-safe.
"""

from __future__ import annotations

import functools

from informers.testing.apiserver._schema.types import ANY, FieldType, model_class, model_type
from informers.wire.resources import BUILTIN_RESOURCES, Resource

__all__ = [
    "ALL_BUILTINS",
    "EXTRA_RESOURCES",
    "RETURNS_OBJECT_ON_DELETE",
    "has_status",
    "is_builtin",
    "kind_type",
    "model_name",
]


def _res(
    group: str,
    version: str,
    plural: str,
    kind: str,
    *,
    namespaced: bool = True,
    short: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
) -> Resource:
    return Resource(
        group,
        version,
        plural,
        kind,
        namespaced=namespaced,
        short_names=short,
        categories=categories,
    )


_API_EXTENSIONS = ("api-extensions",)

#: Served built-in kinds not in ``BUILTIN_RESOURCES``, in discovery order.
EXTRA_RESOURCES: tuple[Resource, ...] = (
    _res("", "v1", "limitranges", "LimitRange", short=("limits",)),
    _res("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short=("pv",)),
    _res("", "v1", "podtemplates", "PodTemplate"),
    _res("", "v1", "resourcequotas", "ResourceQuota", short=("quota",)),
    _res(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        namespaced=False,
        categories=_API_EXTENSIONS,
    ),
    _res(
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        namespaced=False,
        categories=_API_EXTENSIONS,
    ),
    _res(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
        namespaced=False,
        categories=_API_EXTENSIONS,
    ),
    _res(
        "admissionregistration.k8s.io",
        "v1",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
        namespaced=False,
        categories=_API_EXTENSIONS,
    ),
    _res(
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        "APIService",
        namespaced=False,
        categories=_API_EXTENSIONS,
    ),
    _res("apps", "v1", "controllerrevisions", "ControllerRevision"),
    _res(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        short=("hpa",),
        categories=("all",),
    ),
    _res(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        short=("hpa",),
        categories=("all",),
    ),
    _res(
        "certificates.k8s.io",
        "v1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        namespaced=False,
        short=("csr",),
    ),
    _res("events.k8s.io", "v1", "events", "Event", short=("ev",)),
    _res("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "FlowSchema", namespaced=False),
    _res(
        "flowcontrol.apiserver.k8s.io",
        "v1",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        namespaced=False,
    ),
    _res("networking.k8s.io", "v1", "ingressclasses", "IngressClass", namespaced=False),
    _res("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", short=("netpol",)),
    _res("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", namespaced=False),
    _res("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", short=("pdb",)),
    _res(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
    _res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    _res("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    _res("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    _res(
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        namespaced=False,
        short=("pc",),
    ),
    _res("storage.k8s.io", "v1", "csidrivers", "CSIDriver", namespaced=False),
    _res("storage.k8s.io", "v1", "csinodes", "CSINode", namespaced=False),
    _res("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"),
    _res("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, short=("sc",)),
    _res("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", namespaced=False),
)

#: Every built-in kind served.
ALL_BUILTINS: tuple[Resource, ...] = BUILTIN_RESOURCES + EXTRA_RESOURCES
_BUILTIN_KEYS = frozenset((r.group, r.version, r.plural) for r in ALL_BUILTINS)

#: Kinds whose registry storage returns the deleted object
#: (``ReturnDeletedObject``, or a Delete of its own for Namespaces) rather
#: than a ``Status`` (k8s.io/kubernetes ``pkg/registry``, 1.32).
RETURNS_OBJECT_ON_DELETE = frozenset(
    {
        ("", "pods"),
        ("", "podtemplates"),
        ("", "limitranges"),
        ("", "resourcequotas"),
        ("", "serviceaccounts"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "services"),
        ("", "namespaces"),
        ("storage.k8s.io", "storageclasses"),
    }
)


def is_builtin(resource: Resource) -> bool:
    """Whether ``resource`` is one of the built-in kinds (not a custom resource)."""
    return (resource.group, resource.version, resource.plural) in _BUILTIN_KEYS


@functools.cache
def model_name(group: str, version: str, kind: str) -> str | None:
    """The client's model class of a kind (``V1Deployment``,
    ``CoreV1Event``, ``EventsV1Event``, ``V2HorizontalPodAutoscaler``), or
    None when the installed client has none."""
    ver = version[:1].upper() + version[1:]
    prefix = "Core" if not group else group.split(".", maxsplit=1)[0].capitalize()
    for name in (f"{prefix}{ver}{kind}", f"{ver}{kind}"):
        if model_class(name) is not None:
            return name
    return None


def kind_type(resource: Resource) -> FieldType:
    """The type of a built-in kind's objects; :data:`~.types.ANY` for custom
    resources and kinds the installed client has no model for."""
    if not is_builtin(resource):
        return ANY
    name = model_name(resource.group, resource.version, resource.kind)
    return ANY if name is None else model_type(name)


def has_status(resource: Resource) -> bool:
    """Whether a built-in kind has a ``status`` subresource: its model has
    a ``status`` field (Events, ConfigMaps, RBAC, ... have none)."""
    found = kind_type(resource)
    return found.kind == "struct" and "status" in found.fields()
