"""Defaulting: the fields a real API server fills in when a client leaves them
out, for the built-in kinds users look at most.

A real server runs its defaulting functions on every object it decodes, on
create and on update alike, so a stored object always carries them and a PUT
of the original manifest changes nothing. The emulator does the same through
:func:`apply_defaults`. Only fields users notice are covered (``kubectl get
-o yaml``, ``describe`` and the Table columns show them):

- Secret ``type: Opaque``.
- Pod spec (also every pod template of a workload): ``restartPolicy: Always``,
  ``dnsPolicy: ClusterFirst``, ``schedulerName: default-scheduler``,
  ``terminationGracePeriodSeconds: 30``; per container (and init container)
  ``imagePullPolicy`` (``Always`` for ``:latest`` or an untagged image, else
  ``IfNotPresent``) and ports' ``protocol: TCP``. A Pod itself (not a
  template) also gets ``serviceAccountName: default`` (what the
  ServiceAccount admission plugin sets) and resource requests defaulting to
  the limits. Left out on purpose, though a real server fills them: the empty
  ``securityContext``/``resources`` objects, ``terminationMessagePath``/
  ``Policy``, ``enableServiceLinks`` and the deprecated ``serviceAccount``:
  nobody reads them, and every stored pod would carry them (bigger lists,
  more objects for a client's garbage collector).
- Pod status on create, when none is given: ``phase: Pending`` and the
  ``qosClass`` computed from the containers' resources.
- Service: ``type: ClusterIP``, ``sessionAffinity: None``,
  ``internalTrafficPolicy: Cluster``, ``ipFamilies: [IPv4]``,
  ``ipFamilyPolicy: SingleStack`` (not for ExternalName), ports'
  ``protocol: TCP`` and ``targetPort`` (the port). The cluster IP is allocated
  by the storage, which holds the counter; node ports are not allocated.
- Deployment: ``replicas: 1``, ``strategy`` RollingUpdate 25%/25%,
  ``revisionHistoryLimit: 10``, ``progressDeadlineSeconds: 600``.
  ReplicaSet and ReplicationController: ``replicas: 1`` (a
  ReplicationController also takes its selector and labels from its
  template's labels). StatefulSet: ``replicas: 1``,
  ``podManagementPolicy: OrderedReady``, ``updateStrategy`` RollingUpdate with
  ``partition: 0``, ``revisionHistoryLimit: 10``. DaemonSet: ``updateStrategy``
  RollingUpdate (``maxUnavailable: 1``, ``maxSurge: 0``),
  ``revisionHistoryLimit: 10``.
- Job: ``parallelism``/``completions`` 1 (when both are unset),
  ``backoffLimit: 6``, ``completionMode: NonIndexed``, ``suspend: false``.
  CronJob: ``concurrencyPolicy: Allow``, ``suspend: false``,
  ``successfulJobsHistoryLimit: 3``, ``failedJobsHistoryLimit: 1``.

Custom resources and kinds not listed are left as they are. Objects are not
validated here: a field of an unexpected type is left alone, never an error.
Pure functions (the input is never mutated; changed parts are copied);
thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers.resources import (
    CRONJOBS,
    DAEMONSETS,
    DEPLOYMENTS,
    JOBS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    SECRETS,
    SERVICES,
    STATEFULSETS,
    Resource,
)

__all__ = ["apply_defaults", "image_pull_policy", "pod_qos_class"]

_Obj = dict[str, Any]


def _sub(obj: _Obj, key: str) -> _Obj | None:
    """A copy of ``obj[key]`` stored back into ``obj`` (created when absent),
    or None when it holds something other than an object."""
    value = obj.get(key)
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return None
    copy = dict(value)
    obj[key] = copy
    return copy


def _each(obj: _Obj, key: str, fill: Callable[[_Obj], None]) -> None:
    """Apply ``fill`` to a copy of every object in the list ``obj[key]``."""
    items = obj.get(key)
    if not isinstance(items, list):
        return
    out = []
    for item in items:
        if isinstance(item, dict):
            copy = dict(item)
            fill(copy)
            out.append(copy)
        else:
            out.append(item)
    obj[key] = out


def image_pull_policy(image: Any) -> str:
    """``Always`` for an untagged or ``:latest`` image, else ``IfNotPresent``
    (an image pinned by digest counts as tagged)."""
    if not isinstance(image, str) or "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def _port(port: _Obj) -> None:
    port.setdefault("protocol", "TCP")


def _container(container: _Obj) -> None:
    container.setdefault("imagePullPolicy", image_pull_policy(container.get("image")))
    _each(container, "ports", _port)


def _pod_container(container: _Obj) -> None:
    """What only a Pod's containers get (not a template's): requests default
    to the limits."""
    resources = container.get("resources")
    if isinstance(resources, dict):
        limits = resources.get("limits")
        requests = resources.get("requests")
        if isinstance(limits, dict) and limits and (requests is None or isinstance(requests, dict)):
            merged = dict(limits)
            merged.update(requests or {})
            if merged != requests:
                container["resources"] = {**resources, "requests": merged}


def _pod_spec(spec: _Obj) -> None:
    """Defaults of every pod spec, a workload's template included."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    _each(spec, "containers", _container)
    _each(spec, "initContainers", _container)


def _template(spec: _Obj) -> None:
    template = _sub(spec, "template")
    if template is None:
        return
    pod_spec = _sub(template, "spec")
    if pod_spec is not None:
        _pod_spec(pod_spec)


def _resources_of(container: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    resources = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(resources, dict):
        return {}, {}
    requests, limits = resources.get("requests"), resources.get("limits")
    return (
        requests if isinstance(requests, dict) else {},
        limits if isinstance(limits, dict) else {},
    )


def pod_qos_class(pod: _Obj) -> str:
    """``BestEffort`` (no cpu/memory requests or limits anywhere),
    ``Guaranteed`` (every container limits cpu and memory, with requests equal
    to the limits) or ``Burstable``."""
    spec = pod.get("spec")
    containers: list[Any] = []
    if isinstance(spec, dict):
        for key in ("containers", "initContainers"):
            value = spec.get(key)
            if isinstance(value, list):
                containers.extend(value)
    tracked = ("cpu", "memory")
    any_set = False
    guaranteed = bool(containers)
    for container in containers:
        requests, limits = _resources_of(container)
        if any(r in requests or r in limits for r in tracked):
            any_set = True
        for r in tracked:
            if r not in limits or requests.get(r, limits[r]) != limits[r]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _pod(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is not None:
        _pod_spec(spec)
        # The ServiceAccount admission plugin's part (without the token volume).
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
        _each(spec, "containers", _pod_container)
        _each(spec, "initContainers", _pod_container)
    if creating and not obj.get("status"):
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(obj)}


def _service_port(port: _Obj) -> None:
    port.setdefault("protocol", "TCP")
    if "targetPort" not in port and "port" in port:
        port["targetPort"] = port["port"]


def _service(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    _each(spec, "ports", _service_port)


def _rolling(spec: _Obj, key: str, rolling: _Obj) -> None:
    strategy = _sub(spec, key)
    if strategy is None:
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        update = _sub(strategy, "rollingUpdate")
        if update is not None:
            for field, value in rolling.items():
                update.setdefault(field, value)


def _deployment(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    _rolling(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def _replica_set(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    _template(spec)


def _replication_controller(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    labels = (template.get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        meta = obj.get("metadata")
        if isinstance(meta, dict) and not meta.get("labels"):
            obj["metadata"] = {**meta, "labels": dict(labels)}
    _template(spec)


def _stateful_set(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    _rolling(spec, "updateStrategy", {"partition": 0})
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _daemon_set(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    _rolling(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _job_spec(spec: _Obj) -> None:
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    _template(spec)


def _job(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is not None:
        _job_spec(spec)


def _cron_job(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    template = _sub(spec, "jobTemplate")
    if template is not None:
        job_spec = _sub(template, "spec")
        if job_spec is not None:
            _job_spec(job_spec)


def _secret(obj: _Obj, creating: bool) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


_DEFAULTERS: dict[Resource, Callable[[_Obj, bool], None]] = {
    SECRETS: _secret,
    PODS: _pod,
    SERVICES: _service,
    DEPLOYMENTS: _deployment,
    REPLICASETS: _replica_set,
    REPLICATIONCONTROLLERS: _replication_controller,
    STATEFULSETS: _stateful_set,
    DAEMONSETS: _daemon_set,
    JOBS: _job,
    CRONJOBS: _cron_job,
}


def apply_defaults(resource: Resource, obj: _Obj, *, creating: bool) -> _Obj:
    """``obj`` with the server's defaults filled in (see the module
    docstring); ``obj`` itself is not changed. ``creating`` adds what only a
    create fills (a Pod's initial status)."""
    defaulter = _DEFAULTERS.get(resource)
    if defaulter is None:
        return obj
    out = dict(obj)
    defaulter(out, creating)
    return out
