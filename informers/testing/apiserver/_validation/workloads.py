"""Validation of the workload kinds (k8s.io/kubernetes ``pkg/apis/apps/validation``
and ``pkg/apis/batch/validation``): Deployment, ReplicaSet, StatefulSet,
DaemonSet, Job and CronJob -- replicas not negative, a selector that
matches the template's labels, the template's pod spec and restart policy;
on update, the selector (and a Job's template, a StatefulSet's fixed
fields) immutable.

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver._validation import selectors
from informers.testing.apiserver._validation.cron import schedule_error
from informers.testing.apiserver._validation.errors import FieldErrors, go_map, go_value
from informers.testing.apiserver._validation.pods import validate_template

__all__ = [
    "cron_job",
    "daemon_set",
    "deployment",
    "job",
    "job_update",
    "replica_set",
    "selector_update",
    "stateful_set",
    "stateful_set_update",
]

_NONNEGATIVE = "must be greater than or equal to 0"
_NO_MATCH = "`selector` does not match template `labels`"


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _nonnegative(errs: FieldErrors, spec: dict[str, Any], path: str, *keys: str) -> None:
    for key in keys:
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.invalid(f"{path}.{key}", value, _NONNEGATIVE)


def _template_labels(spec: dict[str, Any]) -> Any:
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    return meta.get("labels") if isinstance(meta, dict) else None


def _template_spec(spec: dict[str, Any]) -> dict[str, Any]:
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    return pod if isinstance(pod, dict) else {}


def _selector(errs: FieldErrors, spec: dict[str, Any], kind: str, *, required: bool) -> None:
    """The selector is present (``required``), valid, not empty, and
    matches the template's labels."""
    selector = spec.get("selector")
    if selector is None and required:
        errs.required("spec.selector", "")
    usable = selectors.validate_selector(errs, "spec.selector", selector)
    if usable and selectors.empty(selector):
        errs.invalid(
            "spec.selector",
            None,
            f"empty selector is invalid for {kind}",
            shown=selectors.render(selector),
        )
    if usable and selectors.empty(selector):
        return
    labels = _template_labels(spec)
    if not selectors.matches(selector, labels):
        errs.invalid(
            "spec.template.metadata.labels",
            None,
            _NO_MATCH,
            shown=go_map(labels if isinstance(labels, dict) else None),
        )


def _always_restart(errs: FieldErrors, spec: dict[str, Any], kind: str) -> None:
    pod = _template_spec(spec)
    restart = pod.get("restartPolicy", "Always")
    if restart != "Always":
        errs.not_supported("spec.template.spec.restartPolicy", restart, ("Always",))
    deadline = pod.get("activeDeadlineSeconds")
    if deadline is not None:
        errs.invalid(
            "spec.template.spec.activeDeadlineSeconds",
            deadline,
            f"activeDeadlineSeconds in {kind} is not Supported",
        )


def _strategy(errs: FieldErrors, spec: dict[str, Any]) -> None:
    strategy = spec.get("strategy")
    if not isinstance(strategy, dict):
        return
    kind = strategy.get("type", "RollingUpdate")
    if kind not in ("Recreate", "RollingUpdate"):
        errs.not_supported("spec.strategy.type", kind, ("Recreate", "RollingUpdate"))
    elif kind == "Recreate" and strategy.get("rollingUpdate") is not None:
        errs.forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )


def deployment(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateDeploymentSpec``."""
    spec = _spec(obj)
    _nonnegative(errs, spec, "spec", "replicas")
    _selector(errs, spec, "deployment", required=True)
    validate_template(errs, "spec.template", spec.get("template"))
    _always_restart(errs, spec, "ReplicaSet")
    _strategy(errs, spec)
    _nonnegative(errs, spec, "spec", "minReadySeconds", "revisionHistoryLimit")
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        _nonnegative(errs, spec, "spec", "progressDeadlineSeconds")
        if deadline <= int(spec.get("minReadySeconds") or 0):
            errs.invalid(
                "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
            )


def replica_set(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateReplicaSetSpec`` (its message says "deployment", as the real one)."""
    spec = _spec(obj)
    _nonnegative(errs, spec, "spec", "replicas", "minReadySeconds")
    _selector(errs, spec, "deployment", required=True)
    validate_template(errs, "spec.template", spec.get("template"))
    _always_restart(errs, spec, "ReplicaSet")


def stateful_set(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateStatefulSetSpec``."""
    spec = _spec(obj)
    policy = spec.get("podManagementPolicy", "OrderedReady")
    if policy not in ("OrderedReady", "Parallel"):
        errs.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
    strategy = spec.get("updateStrategy")
    if isinstance(strategy, dict):
        kind = strategy.get("type", "RollingUpdate")
        if kind not in ("RollingUpdate", "OnDelete"):
            errs.not_supported("spec.updateStrategy.type", kind, ("OnDelete", "RollingUpdate"))
    _nonnegative(errs, spec, "spec", "replicas", "minReadySeconds")
    _selector(errs, spec, "statefulset", required=True)
    validate_template(errs, "spec.template", spec.get("template"))
    pod = _template_spec(spec)
    restart = pod.get("restartPolicy", "Always")
    if restart != "Always":
        errs.not_supported("spec.template.spec.restartPolicy", restart, ("Always",))
    if pod.get("activeDeadlineSeconds") is not None:
        errs.forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in StatefulSet is not Supported",
        )


#: StatefulSet spec fields an update may change.
_STS_MUTABLE = frozenset(
    {
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    }
)


def stateful_set_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """``ValidateStatefulSetUpdate``: only the mutable spec fields change."""
    new_spec, old_spec = _spec(new), _spec(old)
    fixed = {k: v for k, v in new_spec.items() if k not in _STS_MUTABLE}
    if fixed != {k: v for k, v in old_spec.items() if k not in _STS_MUTABLE}:
        errs.forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
            "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden",
        )


def daemon_set(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateDaemonSetSpec``."""
    spec = _spec(obj)
    selector = spec.get("selector")
    selectors.validate_selector(errs, "spec.selector", selector)
    labels = _template_labels(spec)
    if not selectors.matches(selector, labels):
        errs.invalid(
            "spec.template.metadata.labels",
            None,
            _NO_MATCH,
            shown=go_map(labels if isinstance(labels, dict) else None),
        )
    if isinstance(selector, dict) and selectors.empty(selector):
        errs.invalid(
            "spec.selector",
            None,
            "empty selector is invalid for daemonset",
            shown=selectors.render(selector),
        )
    validate_template(errs, "spec.template", spec.get("template"))
    _always_restart(errs, spec, "DaemonSet")
    _nonnegative(errs, spec, "spec", "minReadySeconds", "revisionHistoryLimit")


def selector_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """apps/v1 and batch/v1: ``spec.selector`` is immutable."""
    selector = _spec(new).get("selector")
    if selector != _spec(old).get("selector"):
        errs.immutable("spec.selector", None, shown=selectors.render(selector))


def _job_spec(errs: FieldErrors, spec: dict[str, Any], path: str) -> None:
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit"):
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.invalid(f"{path}.{key}", value, _NONNEGATIVE)
    mode = spec.get("completionMode", "NonIndexed")
    if mode not in ("NonIndexed", "Indexed"):
        errs.not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed"))
    template = spec.get("template")
    validate_template(errs, f"{path}.template", template)
    pod = _template_spec(spec)
    restart = pod.get("restartPolicy", "Always")
    if restart not in ("OnFailure", "Never"):
        errs.not_supported(f"{path}.template.spec.restartPolicy", restart, ("OnFailure", "Never"))


def job(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateJob``: the spec, a selector (generated unless
    ``manualSelector``) that matches the template's labels, and a
    restartPolicy of OnFailure or Never."""
    spec = _spec(obj)
    selector = spec.get("selector")
    if selector is None:
        errs.required("spec.selector", "")
    elif selectors.validate_selector(errs, "spec.selector", selector):
        labels = _template_labels(spec)
        if not selectors.matches(selector, labels):
            errs.invalid(
                "spec.template.metadata.labels",
                None,
                _NO_MATCH,
                shown=go_map(labels if isinstance(labels, dict) else None),
            )
    _job_spec(errs, spec, "spec")


#: Template fields a suspended Job that never started may change.
_SCHEDULING = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def job_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """``ValidateJobSpecUpdate``: selector, completions, completionMode,
    podFailurePolicy and the template immutable (the scheduling directives
    and template labels may change while the Job is suspended and never
    started)."""
    new_spec, old_spec = _spec(new), _spec(old)
    for key in ("completions", "completionMode", "podFailurePolicy"):
        if new_spec.get(key) != old_spec.get(key):
            errs.immutable(f"spec.{key}", new_spec.get(key))
    selector_update(errs, new, old)
    new_template, old_template = new_spec.get("template"), old_spec.get("template")
    started = isinstance(old.get("status"), dict) and old["status"].get("startTime")
    if old_spec.get("suspend") and not started:
        new_template = _without_scheduling(new_template)
        old_template = _without_scheduling(old_template)
    if new_template != old_template:
        errs.immutable("spec.template", None, shown="core.PodTemplateSpec{...}")


def _without_scheduling(template: Any) -> Any:
    if not isinstance(template, dict):
        return template
    meta = dict(template.get("metadata") or {})
    for key in ("labels", "annotations"):
        meta.pop(key, None)
    spec = {k: v for k, v in (template.get("spec") or {}).items() if k not in _SCHEDULING}
    return {**template, "metadata": meta, "spec": spec}


def cron_job(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateCronJobSpec``: a schedule cron can parse (no ``TZ`` in it),
    a concurrency policy, the job template."""
    spec = _spec(obj)
    schedule = spec.get("schedule")
    if not schedule:
        errs.required("spec.schedule", "")
    elif isinstance(schedule, str):
        problem = schedule_error(schedule)
        if problem:
            errs.invalid("spec.schedule", schedule, problem)
        if "TZ" in schedule:
            errs.invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            )
    policy = spec.get("concurrencyPolicy", "Allow")
    if not policy:
        errs.required("spec.concurrencyPolicy", "")
    elif policy not in ("Allow", "Forbid", "Replace"):
        errs.not_supported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace"))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.invalid(f"spec.{key}", value, _NONNEGATIVE)
    job_template = spec.get("jobTemplate")
    job_spec = job_template.get("spec") if isinstance(job_template, dict) else None
    if not isinstance(job_spec, dict):
        errs.required("spec.jobTemplate.spec.template.spec.containers", "")
        return
    _job_spec(errs, job_spec, "spec.jobTemplate.spec")
    if job_spec.get("selector") is not None:
        errs.invalid(
            "spec.jobTemplate.spec.selector",
            None,
            "`selector` will be auto-generated",
            shown=selectors.render(job_spec.get("selector")),
        )
    if job_spec.get("manualSelector") is True:
        errs.not_supported("spec.jobTemplate.spec.manualSelector", go_value(True), ("nil", "false"))
