"""What the API server refuses, and what it changes on the way in: the
validation of built-in kinds (422 Invalid, with causes worded as the real
server words them), immutable fields, and the server rules around them.

The storage calls in here under its lock, with the object it is about to
store (defaults applied):

- :func:`convert` -- the decoder's part: Secret ``stringData``, base64,
  canonical quantities and times (400 when it cannot decode);
- :func:`validate_create` / :func:`validate_update` -- ``ObjectMeta`` for
  every kind, then the kind's own rules (Pod, Deployment, ReplicaSet,
  StatefulSet, DaemonSet, Job, CronJob, Service, ConfigMap, Secret, Lease,
  Role, ClusterRole, RoleBinding, ClusterRoleBinding); on update also the
  immutable fields;
- :mod:`.lifecycle` -- namespace lifecycle (403), body kind (400), the
  status a create drops;
- :mod:`.allocators` -- the cluster IPs and node ports of Services.

Validation can be switched off per storage (``Storage.validation``), for
benchmarks that compare against the cost without it. Pure functions;
thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers.testing.apiserver._validation import core, pods, rbac, workloads
from informers.testing.apiserver._validation.allocators import ServiceAllocators
from informers.testing.apiserver._validation.convert import convert
from informers.testing.apiserver._validation.errors import Cause, FieldErrors
from informers.testing.apiserver._validation.lifecycle import (
    check_body_kind,
    check_namespace_delete,
    check_namespace_open,
    drop_create_status,
)
from informers.testing.apiserver._validation.meta import (
    name_errors,
    validate_meta,
    validate_meta_update,
)
from informers.wire.resources import Resource

__all__ = [
    "ServiceAllocators",
    "check_body_kind",
    "check_namespace_delete",
    "check_namespace_open",
    "convert",
    "drop_create_status",
    "raise_extra",
    "validate_create",
    "validate_name",
    "validate_update",
]

_Check = Callable[[FieldErrors, dict[str, Any]], None]
_UpdateCheck = Callable[[FieldErrors, dict[str, Any], dict[str, Any]], None]


def _pod(errs: FieldErrors, obj: dict[str, Any]) -> None:
    pods.validate_pod_spec(errs, "spec", obj.get("spec"))


def _pod_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    pods.validate_pod_update(errs, new.get("spec"), old.get("spec"))


#: (group, kind) -> (rules of every write, extra rules of an update)
_KINDS: dict[tuple[str, str], tuple[_Check | None, _UpdateCheck | None]] = {
    ("", "Pod"): (_pod, _pod_update),
    ("", "Service"): (core.service, core.service_update),
    ("", "ConfigMap"): (core.config_map, core.config_map_update),
    ("", "Secret"): (core.secret, core.secret_update),
    ("apps", "Deployment"): (workloads.deployment, workloads.selector_update),
    ("apps", "ReplicaSet"): (workloads.replica_set, workloads.selector_update),
    ("apps", "DaemonSet"): (workloads.daemon_set, workloads.selector_update),
    ("apps", "StatefulSet"): (workloads.stateful_set, workloads.stateful_set_update),
    ("batch", "Job"): (workloads.job, workloads.job_update),
    ("batch", "CronJob"): (workloads.cron_job, None),
    ("coordination.k8s.io", "Lease"): (core.lease, None),
    ("rbac.authorization.k8s.io", "Role"): (rbac.role, None),
    ("rbac.authorization.k8s.io", "ClusterRole"): (rbac.cluster_role, None),
    ("rbac.authorization.k8s.io", "RoleBinding"): (rbac.role_binding, rbac.binding_update),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        rbac.cluster_role_binding,
        rbac.binding_update,
    ),
}


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def validate_name(resource: Resource, name: str) -> None:
    """422 Invalid unless ``name`` follows the kind's name rule."""
    errs = FieldErrors()
    for msg in name_errors(resource, name):
        errs.invalid("metadata.name", name, msg)
    errs.raise_invalid(resource.group, resource.kind, name)


def errors_on_create(resource: Resource, builtin: bool, obj: dict[str, Any]) -> FieldErrors:
    """Every cause a create of ``obj`` is refused for (none: valid)."""
    errs = FieldErrors()
    validate_meta(errs, obj.get("metadata") or {}, resource)
    if builtin:
        check, _ = _KINDS.get((resource.group, resource.kind), (None, None))
        if check is not None:
            check(errs, obj)
    return errs


def validate_create(
    resource: Resource,
    builtin: bool,
    obj: dict[str, Any],
    extra: list[Cause] | None = None,
) -> None:
    """422 Invalid when ``obj`` may not be created. ``extra``: causes the
    caller's allocators found (a taken cluster IP or node port), reported
    alone, as the real storage allocates before it validates."""
    if extra:
        raise_extra(resource, obj, extra)
    errs = errors_on_create(resource, builtin, obj)
    errs.raise_invalid(resource.group, resource.kind, _name(obj))


def raise_extra(resource: Resource, obj: dict[str, Any], extra: list[Cause]) -> None:
    """422 Invalid with ``extra`` as the causes, if there is any."""
    errs = FieldErrors()
    for cause in extra:
        errs.add(*cause)
    errs.raise_invalid(resource.group, resource.kind, _name(obj))


def validate_update(
    resource: Resource,
    builtin: bool,
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    subresource: str = "",
    extra: list[Cause] | None = None,
) -> None:
    """422 Invalid when ``old`` may not become ``new``: the metadata rules
    (no new finalizers while deleting), and -- unless only the status was
    written -- the kind's rules and immutable fields. ``extra``: as for
    :func:`validate_create`."""
    if extra:
        raise_extra(resource, new, extra)
    errs = FieldErrors()
    validate_meta_update(errs, new.get("metadata") or {}, old.get("metadata") or {})
    if builtin and subresource != "status":
        check, update = _KINDS.get((resource.group, resource.kind), (None, None))
        if check is not None:
            check(errs, new)
        if update is not None:
            update(errs, new, old)
    errs.raise_invalid(resource.group, resource.kind, _name(new))
