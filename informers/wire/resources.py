"""Descriptions of API resources: which group, version and plural name a kind is
served under, whether it is namespaced, and the URL paths that follow.

:class:`Resource` is shared by the informer side (the lister-watcher builds its
URLs from it) and by the API server emulator (which serves exactly these).
``BUILTIN_RESOURCES`` lists the kinds a fresh cluster serves that this project
knows by name; custom resources are described with :class:`Resource` directly.

All values here are immutable and safe to share between threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "BUILTIN_RESOURCES",
    "CONFIGMAPS",
    "CRONJOBS",
    "CUSTOMRESOURCEDEFINITIONS",
    "DAEMONSETS",
    "DEPLOYMENTS",
    "ENDPOINTS",
    "ENDPOINTSLICES",
    "EVENTS",
    "INGRESSES",
    "JOBS",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PERSISTENTVOLUMECLAIMS",
    "PODS",
    "REPLICASETS",
    "REPLICATIONCONTROLLERS",
    "SECRETS",
    "SERVICEACCOUNTS",
    "SERVICES",
    "STATEFULSETS",
    "Resource",
    "builtin_names",
    "find_builtin",
]

_ALL_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


@dataclass(frozen=True, slots=True)
class Resource:
    """One API resource: a kind served at ``group/version`` under ``plural``.

    ``group`` is ``""`` for the core group. ``singular`` defaults to the
    lower-cased kind. Instances are immutable and hashable.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _ALL_VERBS
    categories: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.singular:
            object.__setattr__(self, "singular", self.kind.lower())

    @property
    def group_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` field objects of this kind carry (= group_version)."""
        return self.group_version

    @property
    def list_kind(self) -> str:
        """The ``kind`` of a list of these objects, e.g. ``"PodList"``."""
        return f"{self.kind}List"

    @property
    def api_prefix(self) -> str:
        """``/api/v1`` for the core group, ``/apis/<group>/<version>`` otherwise."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """The URL path of the collection, across namespaces when ``namespace``
        is ``None`` (or always, for cluster-scoped kinds)."""
        if self.namespaced and namespace:
            return f"{self.api_prefix}/namespaces/{namespace}/{self.plural}"
        return f"{self.api_prefix}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        """The URL path of one object."""
        return f"{self.collection_path(namespace)}/{name}"

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _core(
    plural: str, kind: str, *, namespaced: bool = True, short: tuple[str, ...] = ()
) -> Resource:
    return Resource("", "v1", plural, kind, namespaced=namespaced, short_names=short)


#: Namespaces (core v1, cluster-scoped; short name ``ns``).
NAMESPACES = _core("namespaces", "Namespace", namespaced=False, short=("ns",))
#: Pods (core v1; short name ``po``).
PODS = _core("pods", "Pod", short=("po",))
#: Services (core v1; ``svc``).
SERVICES = _core("services", "Service", short=("svc",))
#: Endpoints (core v1; ``ep``).
ENDPOINTS = _core("endpoints", "Endpoints", short=("ep",))
#: ConfigMaps (core v1; ``cm``).
CONFIGMAPS = _core("configmaps", "ConfigMap", short=("cm",))
#: Secrets (core v1).
SECRETS = _core("secrets", "Secret")
#: ServiceAccounts (core v1; ``sa``).
SERVICEACCOUNTS = _core("serviceaccounts", "ServiceAccount", short=("sa",))
#: Nodes (core v1, cluster-scoped; ``no``).
NODES = _core("nodes", "Node", namespaced=False, short=("no",))
#: Events (core v1; ``ev``).
EVENTS = _core("events", "Event", short=("ev",))
#: ReplicationControllers (core v1; ``rc``).
REPLICATIONCONTROLLERS = _core("replicationcontrollers", "ReplicationController", short=("rc",))
#: PersistentVolumeClaims (core v1; ``pvc``).
PERSISTENTVOLUMECLAIMS = _core("persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",))

#: Deployments (apps/v1; ``deploy``).
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", short_names=("deploy",))
#: ReplicaSets (apps/v1; ``rs``).
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", short_names=("rs",))
#: DaemonSets (apps/v1; ``ds``).
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", short_names=("ds",))
#: StatefulSets (apps/v1; ``sts``).
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet", short_names=("sts",))
#: Jobs (batch/v1).
JOBS = Resource("batch", "v1", "jobs", "Job")
#: CronJobs (batch/v1; ``cj``).
CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob", short_names=("cj",))
#: Leases (coordination.k8s.io/v1), the leader-election and shard locks.
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
#: EndpointSlices (discovery.k8s.io/v1).
ENDPOINTSLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
#: Ingresses (networking.k8s.io/v1; ``ing``).
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", "Ingress", short_names=("ing",))
#: CustomResourceDefinitions (apiextensions.k8s.io/v1, cluster-scoped; ``crd``).
CUSTOMRESOURCEDEFINITIONS = Resource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    namespaced=False,
    short_names=("crd", "crds"),
)

#: Every built-in kind this project knows by name, in discovery order.
BUILTIN_RESOURCES: tuple[Resource, ...] = (
    NAMESPACES,
    PODS,
    SERVICES,
    ENDPOINTS,
    CONFIGMAPS,
    SECRETS,
    SERVICEACCOUNTS,
    NODES,
    EVENTS,
    REPLICATIONCONTROLLERS,
    PERSISTENTVOLUMECLAIMS,
    DEPLOYMENTS,
    REPLICASETS,
    DAEMONSETS,
    STATEFULSETS,
    JOBS,
    CRONJOBS,
    LEASES,
    ENDPOINTSLICES,
    INGRESSES,
    CUSTOMRESOURCEDEFINITIONS,
)


def find_builtin(name: str) -> Resource | None:
    """Look a built-in resource up by plural, singular, short name or kind
    (case-insensitive for kinds), optionally qualified by group
    (``"deployments.apps"``). Returns ``None`` when nothing matches."""
    plain, _, group = name.partition(".")
    for res in BUILTIN_RESOURCES:
        if group and res.group != group:
            continue
        if plain in (res.plural, res.singular) or plain in res.short_names:
            return res
        if plain.lower() == res.kind.lower():
            return res
    return None


def builtin_names() -> list[str]:
    """Every name :func:`find_builtin` resolves: plurals, ``plural.group``,
    singulars, short names and kinds (for suggestions when a name is unknown)."""
    names: list[str] = []
    for res in BUILTIN_RESOURCES:
        names.extend((res.plural, str(res), res.singular, res.kind, *res.short_names))
    return list(dict.fromkeys(names))
