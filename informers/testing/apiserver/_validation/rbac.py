"""Validation of rbac.authorization.k8s.io/v1 (k8s.io/kubernetes
``pkg/apis/rbac/validation``): Role and ClusterRole rules need verbs and,
for resources, API groups and resources; bindings need a ``roleRef`` to a
Role or ClusterRole (immutable once set) and well-formed subjects.

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._validation import names, selectors
from informers.testing.apiserver._validation.errors import FieldErrors, go_quote, go_strings

__all__ = ["binding_update", "cluster_role", "cluster_role_binding", "role", "role_binding"]

GROUP = "rbac.authorization.k8s.io"


def _rules(errs: FieldErrors, obj: dict[str, Any], *, namespaced: bool) -> None:
    rules = obj.get("rules") or []
    if not isinstance(rules, list):
        errs.invalid("rules", rules, "must be a list")
        return
    for i, rule in enumerate(rules):
        here = f"rules[{i}]"
        if not isinstance(rule, dict):
            errs.invalid(here, rule, "must be an object")
            continue
        if not rule.get("verbs"):
            errs.required(f"{here}.verbs", "verbs must contain at least one value")
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if namespaced:
                errs.invalid(
                    f"{here}.nonResourceURLs",
                    None,
                    "namespaced rules cannot apply to non-resource URLs",
                    shown=go_strings(urls),
                )
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                errs.invalid(
                    f"{here}.nonResourceURLs",
                    None,
                    "rules cannot apply to both regular resources and non-resource URLs",
                    shown=go_strings(urls),
                )
            continue
        if not rule.get("apiGroups"):
            errs.required(f"{here}.apiGroups", "resource rules must supply at least one api group")
        if not rule.get("resources"):
            errs.required(f"{here}.resources", "resource rules must supply at least one resource")


def role(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateRole``."""
    _rules(errs, obj, namespaced=True)


def cluster_role(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateClusterRole``: the rules, and an aggregation rule with selectors."""
    _rules(errs, obj, namespaced=False)
    aggregation = obj.get("aggregationRule")
    if aggregation is None:
        return
    found = aggregation.get("clusterRoleSelectors") if isinstance(aggregation, dict) else None
    if not found:
        errs.required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        )
        return
    for i, selector in enumerate(found):
        selectors.validate_selector(errs, f"aggregationRule.clusterRoleSelectors[{i}]", selector)


def _subjects(errs: FieldErrors, obj: dict[str, Any], *, namespaced: bool) -> None:
    for i, subject in enumerate(obj.get("subjects") or []):
        here = f"subjects[{i}]"
        if not isinstance(subject, dict):
            errs.invalid(here, subject, "must be an object")
            continue
        name, kind = subject.get("name") or "", subject.get("kind") or ""
        group = subject.get("apiGroup") or ""
        if not name:
            errs.required(f"{here}.name", "")
        if kind == "ServiceAccount":
            if name:
                for msg in names.dns1123_subdomain(str(name)):
                    errs.invalid(f"{here}.name", name, msg)
            if group:
                errs.not_supported(f"{here}.apiGroup", group, ("",))
            if not namespaced and not subject.get("namespace"):
                errs.required(f"{here}.namespace", "")
        elif kind in ("User", "Group"):
            if group not in ("", GROUP):  # "" is defaulted to the RBAC group
                errs.not_supported(f"{here}.apiGroup", group, (GROUP,))
        else:
            errs.not_supported(f"{here}.kind", kind, ("ServiceAccount", "User", "Group"))


def _role_ref(errs: FieldErrors, obj: dict[str, Any], kinds: tuple[str, ...]) -> None:
    ref = obj.get("roleRef")
    ref = ref if isinstance(ref, dict) else {}
    group = ref.get("apiGroup") or ""
    if group != GROUP:
        errs.not_supported("roleRef.apiGroup", group, (GROUP,))
    kind = ref.get("kind") or ""
    if kind not in kinds:
        errs.not_supported("roleRef.kind", kind, kinds)
    name = ref.get("name") or ""
    if not name:
        errs.required("roleRef.name", "")
    else:
        for msg in names.path_segment(str(name)):
            errs.invalid("roleRef.name", name, msg)


def role_binding(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateRoleBinding``."""
    _role_ref(errs, obj, ("Role", "ClusterRole"))
    _subjects(errs, obj, namespaced=True)


def cluster_role_binding(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateClusterRoleBinding``."""
    _role_ref(errs, obj, ("ClusterRole",))
    _subjects(errs, obj, namespaced=False)


def binding_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """A binding's ``roleRef`` cannot change."""
    ref, old_ref = new.get("roleRef") or {}, old.get("roleRef") or {}
    if ref != old_ref:
        shown = (
            f"rbac.RoleRef{{APIGroup:{go_quote(str(ref.get('apiGroup') or ''))}, "
            f"Kind:{go_quote(str(ref.get('kind') or ''))}, "
            f"Name:{go_quote(str(ref.get('name') or ''))}}}"
        )
        errs.invalid("roleRef", None, "cannot change roleRef", shown=shown)
