"""Protobuf schemas of the kinds kubectl's other imperative ``create``
commands send (``create role|clusterrole|rolebinding|clusterrolebinding|
priorityclass|poddisruptionbudget|quota``), from the field numbers of
k8s.io/api's ``generated.proto`` (rbac/v1, scheduling/v1, policy/v1,
core/v1). The body decoder hands them to :func:`._protobuf.decode_object`
beside its own table; the same rules apply (an unknown field with data is
refused).
Immutable; thread-safe."""

from __future__ import annotations

from informers.testing.apiserver._protobuf import (
    LABEL_SELECTOR,
    OBJECT_META,
    _b,
    _Field,
    _int64,
    _int_or_string,
    _m,
    _map,
    _Message,
    _message,
    _quantity,
    _rep,
    _s,
    _schema,
    _string,
)

__all__ = ["SCHEMAS"]


def _int32(wire: int, raw: object) -> int:
    """A Go ``int32`` (negative values arrive sign-extended to 64 bits)."""
    number = _int64(wire, raw)
    return number - (1 << 32) if number >= 1 << 31 else number


_POLICY_RULE = _schema(
    "PolicyRule",
    f1=_rep("verbs", _string),
    f2=_rep("apiGroups", _string),
    f3=_rep("resources", _string),
    f4=_rep("resourceNames", _string),
    f5=_rep("nonResourceURLs", _string),
)
_SUBJECT = _schema("Subject", f1=_s("kind"), f2=_s("apiGroup"), f3=_s("name"), f4=_s("namespace"))
_ROLE_REF = _schema("RoleRef", f1=_s("apiGroup"), f2=_s("kind"), f3=_s("name"))

ROLE = _schema("Role", f1=_m("metadata", OBJECT_META), f2=_rep("rules", _message(_POLICY_RULE)))
CLUSTER_ROLE = _schema(
    "ClusterRole",
    f1=_m("metadata", OBJECT_META),
    f2=_rep("rules", _message(_POLICY_RULE)),
    f3=_m(
        "aggregationRule",
        _schema("AggregationRule", f1=_rep("clusterRoleSelectors", _message(LABEL_SELECTOR))),
    ),
)
ROLE_BINDING = _schema(
    "RoleBinding",
    f1=_m("metadata", OBJECT_META),
    f2=_rep("subjects", _message(_SUBJECT)),
    f3=_m("roleRef", _ROLE_REF),
)
CLUSTER_ROLE_BINDING = _schema(
    "ClusterRoleBinding",
    f1=_m("metadata", OBJECT_META),
    f2=_rep("subjects", _message(_SUBJECT)),
    f3=_m("roleRef", _ROLE_REF),
)
PRIORITY_CLASS = _schema(
    "PriorityClass",
    f1=_m("metadata", OBJECT_META),
    f2=_Field("value", _int32, keep=True),
    f3=_b("globalDefault"),
    f4=_s("description"),
    f5=_s("preemptionPolicy", keep=True),
)
POD_DISRUPTION_BUDGET = _schema(
    "PodDisruptionBudget",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "PodDisruptionBudgetSpec",
            f1=_Field("minAvailable", _int_or_string, keep=True),
            f2=_m("selector", LABEL_SELECTOR, keep=True),
            f3=_Field("maxUnavailable", _int_or_string, keep=True),
            f4=_s("unhealthyPodEvictionPolicy", keep=True),
        ),
    ),
    f3=_m("status", _schema("PodDisruptionBudgetStatus")),
)
RESOURCE_QUOTA = _schema(
    "ResourceQuota",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "ResourceQuotaSpec",
            f1=_map("hard", _quantity),
            f2=_rep("scopes", _string),
            f3=_m(
                "scopeSelector",
                _schema(
                    "ScopeSelector",
                    f1=_rep(
                        "matchExpressions",
                        _message(
                            _schema(
                                "ScopedResourceSelectorRequirement",
                                f1=_s("scopeName"),
                                f2=_s("operator"),
                                f3=_rep("values", _string),
                            )
                        ),
                    ),
                ),
            ),
        ),
    ),
    f3=_m("status", _schema("ResourceQuotaStatus")),
)


#: (apiVersion, kind) -> message schema.
SCHEMAS: dict[tuple[str, str], _Message] = {
    ("rbac.authorization.k8s.io/v1", "Role"): ROLE,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): CLUSTER_ROLE,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ROLE_BINDING,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): CLUSTER_ROLE_BINDING,
    ("scheduling.k8s.io/v1", "PriorityClass"): PRIORITY_CLASS,
    ("policy/v1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET,
    ("v1", "ResourceQuota"): RESOURCE_QUOTA,
}
