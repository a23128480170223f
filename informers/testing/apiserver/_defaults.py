"""Defaulting: the fields a real API server fills in when a client leaves them
out, and the ``status`` stanzas it always sends.

A real server runs its defaulting functions on every object it decodes, on
create and on update alike (and again when it reads the object back from
storage), so a stored object always carries them and a PUT of the original
manifest changes nothing. Its JSON also always holds the struct-valued fields
of the Go types (``status``, ``spec``, ``loadBalancer``, ...) and the scalar
fields without ``omitempty`` (a ReplicaSet's ``status.replicas: 0``). The
emulator does the same through :func:`apply_defaults`, for every built-in
kind it serves, checked against k8s.io/kubernetes ``pkg/apis/*/v1/defaults.go``,
the registry strategies and k8s.io/api's JSON tags (Kubernetes 1.32):

==========================  ==================================================
kind                        filled in
==========================  ==================================================
Namespace                   (by the storage) label ``kubernetes.io/metadata.name``,
                            ``spec.finalizers: [kubernetes]``, ``status.phase: Active``
Pod                         pod spec defaults (below); ``serviceAccountName: default``
                            (the ServiceAccount admission plugin); requests default
                            to limits; on create without a status
                            ``status: {phase: Pending, qosClass: ...}``
                            (else at least ``status: {}``)
Service                     ``type: ClusterIP``, ``sessionAffinity: None`` (ClientIP:
                            ``sessionAffinityConfig.clientIP.timeoutSeconds: 10800``),
                            ``internalTrafficPolicy: Cluster``, ``ipFamilies: [IPv4]``,
                            ``ipFamilyPolicy: SingleStack`` (not for ExternalName),
                            ``externalTrafficPolicy: Cluster`` (NodePort, LoadBalancer,
                            external IPs), ``allocateLoadBalancerNodePorts: true``
                            (LoadBalancer), ports' ``protocol: TCP`` and
                            ``targetPort``; ``status: {loadBalancer: {}}``. The
                            storage allocates ``clusterIP``/``clusterIPs``.
Endpoints                   ports' ``protocol: TCP``
EndpointSlice               ports' ``name: ""`` and ``protocol: TCP``; each endpoint's
                            ``conditions: {}``
Event                       ``involvedObject: {}``, ``source: {}``, ``eventTime``,
                            ``firstTimestamp``, ``lastTimestamp`` (null),
                            ``reportingComponent``/``reportingInstance`` (``""``)
Node                        ``spec: {}``; ``status.daemonEndpoints.kubeletEndpoint.Port: 0``,
                            ``status.nodeInfo`` (its ten strings, ``""``),
                            ``allocatable`` from ``capacity``
PersistentVolumeClaim       ``spec.volumeMode: Filesystem``, ``status.phase: Pending``
ReplicationController       ``replicas: 1``, selector and labels from the template's
                            labels; ``status.replicas: 0``
Secret                      ``type: Opaque``
ConfigMap, ServiceAccount   nothing (their JSON has no struct fields)
Deployment                  ``replicas: 1``, RollingUpdate 25%/25%,
                            ``revisionHistoryLimit: 10``,
                            ``progressDeadlineSeconds: 600``; ``status: {}``
ReplicaSet                  ``replicas: 1``; ``status.replicas: 0``
StatefulSet                 ``replicas: 1``, ``podManagementPolicy: OrderedReady``,
                            RollingUpdate with ``partition: 0``,
                            ``revisionHistoryLimit: 10``,
                            ``persistentVolumeClaimRetentionPolicy`` Retain/Retain;
                            ``status: {replicas: 0, availableReplicas: 0}``
DaemonSet                   RollingUpdate (``maxUnavailable: 1``, ``maxSurge: 0``),
                            ``revisionHistoryLimit: 10``; ``status`` with the four
                            counters the type always sends, 0
Job                         ``parallelism``/``completions`` 1 (both unset),
                            ``backoffLimit: 6``, ``completionMode: NonIndexed``,
                            ``suspend: false``, ``manualSelector: false``,
                            ``podReplacementPolicy`` (TerminatingOrFailed, or Failed
                            with a podFailurePolicy); on create the generated
                            selector and template labels (``controller-uid``,
                            ``job-name`` and their ``batch.kubernetes.io/`` forms);
                            labels from the template; ``status: {}``
CronJob                     ``concurrencyPolicy: Allow``, ``suspend: false``,
                            ``successfulJobsHistoryLimit: 3``,
                            ``failedJobsHistoryLimit: 1``; the job template's pod
                            template only (the Job defaults apply to Jobs, not to
                            templates); ``status: {}``
Lease                       ``spec: {}``
Ingress                     ``spec: {}``; ``status: {loadBalancer: {}}``
==========================  ==================================================

Pod spec defaults (a Pod's and every workload template's): ``restartPolicy:
Always``, ``dnsPolicy: ClusterFirst``, ``schedulerName: default-scheduler``,
``terminationGracePeriodSeconds: 30``; per container (and init container)
``imagePullPolicy`` (``Always`` for ``:latest`` or an untagged image, else
``IfNotPresent``), ports' ``protocol: TCP``, probes' ``timeoutSeconds: 1``,
``periodSeconds: 10``, ``successThreshold: 1``, ``failureThreshold: 3`` and
``httpGet`` ``path: /``/``scheme: HTTP``, env ``fieldRef.apiVersion: v1``;
volumes without a source become ``emptyDir: {}``, secret, configMap,
downwardAPI and projected volumes get ``defaultMode: 420``, hostPath ``type:
""``, token projections ``expirationSeconds: 3600``.

Left out on purpose, though a real server fills them: a Pod's empty
``securityContext``/``resources`` objects, ``terminationMessagePath``/
``Policy``, ``enableServiceLinks``, ``priority``/``preemptionPolicy``, the
default tolerations and the service-account token volume, the deprecated
``serviceAccount``, and templates' ``metadata.creationTimestamp: null``:
nobody reads them, and every stored pod would carry them (bigger lists, more
objects for a client's garbage collector). Node ports are not allocated. An
EndpointSlice without endpoints keeps what was written, where a real server
answers ``endpoints: null`` (which the Python client's model rejects). A
status given on create is kept here: a POST drops it first (see
:mod:`._validation`), the Python-side create keeps it to set a test up.

Custom resources are left as they are. Objects are not validated here: a
field of an unexpected type is left alone, never an error. Pure functions
(the input is never mutated; changed parts are copied); thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from informers.wire.resources import (
    CRONJOBS,
    DAEMONSETS,
    DEPLOYMENTS,
    ENDPOINTS,
    ENDPOINTSLICES,
    EVENTS,
    INGRESSES,
    JOBS,
    LEASES,
    NODES,
    PERSISTENTVOLUMECLAIMS,
    PODS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    SECRETS,
    SERVICES,
    STATEFULSETS,
    Resource,
)

__all__ = ["DEFAULTED_RESOURCES", "apply_defaults", "image_pull_policy", "pod_qos_class"]

_Obj = dict[str, Any]

#: Mode bits of secret, configMap, downwardAPI and projected volumes (0644).
_DEFAULT_MODE = 0o644
#: The job labels the server generates (legacy and ``batch.kubernetes.io/`` forms).
_JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
_CONTROLLER_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_NODE_INFO_FIELDS = (
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)


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


def _existing(obj: _Obj, key: str) -> _Obj | None:
    """Like :func:`_sub`, but only when ``obj[key]`` is already an object."""
    return _sub(obj, key) if isinstance(obj.get(key), dict) else None


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


def _fill(obj: _Obj, key: str, fields: _Obj) -> None:
    """``obj[key]`` made an object (when absent) holding at least ``fields``
    (a null counts as absent, as Go decodes it to the zero value)."""
    sub = _sub(obj, key)
    if sub is not None:
        for field, value in fields.items():
            if sub.get(field) is None:
                sub[field] = value


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


def _http_get(action: _Obj) -> None:
    if not action.get("path"):
        action["path"] = "/"
    if not action.get("scheme"):
        action["scheme"] = "HTTP"


def _probe(probe: _Obj) -> None:
    for field, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(field):
            probe[field] = value
    action = _existing(probe, "httpGet")
    if action is not None:
        _http_get(action)


def _field_ref(holder: _Obj) -> None:
    """``fieldRef.apiVersion: v1`` inside an env ``valueFrom`` or a downward
    API item."""
    ref = _existing(holder, "fieldRef")
    if ref is not None and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _env(var: _Obj) -> None:
    source = _existing(var, "valueFrom")
    if source is not None:
        _field_ref(source)


def _container(container: _Obj) -> None:
    container.setdefault("imagePullPolicy", image_pull_policy(container.get("image")))
    _each(container, "ports", _port)
    _each(container, "env", _env)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _existing(container, key)
        if probe is not None:
            _probe(probe)


def _default_mode(source: _Obj) -> None:
    if source.get("defaultMode") is None:
        source["defaultMode"] = _DEFAULT_MODE


def _projection(projection: _Obj) -> None:
    token = _existing(projection, "serviceAccountToken")
    if token is not None and token.get("expirationSeconds") is None:
        token["expirationSeconds"] = 3600
    downward = _existing(projection, "downwardAPI")
    if downward is not None:
        _each(downward, "items", _field_ref)


def _volume(volume: _Obj) -> None:
    if not any(key != "name" for key in volume):
        volume["emptyDir"] = {}
        return
    for key in ("secret", "configMap", "downwardAPI"):
        source = _existing(volume, key)
        if source is not None:
            _default_mode(source)
            if key == "downwardAPI":
                _each(source, "items", _field_ref)
    projected = _existing(volume, "projected")
    if projected is not None:
        _default_mode(projected)
        _each(projected, "sources", _projection)
    host_path = _existing(volume, "hostPath")
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""


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
    _each(spec, "volumes", _volume)


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
    else:
        _sub(obj, "status")


def _service_port(port: _Obj) -> None:
    port.setdefault("protocol", "TCP")
    if port.get("targetPort") in (None, 0, "") and "port" in port:
        port["targetPort"] = port["port"]


def _service(obj: _Obj, creating: bool) -> None:
    _fill(obj, "status", {"loadBalancer": {}})
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    kind = spec["type"]
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig")
        client_ip = config.get("clientIP") if isinstance(config, dict) else None
        if not isinstance(client_ip, dict) or client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    if kind != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    if kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
    external = kind in ("NodePort", "LoadBalancer") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )
    if external and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    _each(spec, "ports", _service_port)


def _endpoints(obj: _Obj, creating: bool) -> None:
    def subset(item: _Obj) -> None:
        _each(item, "ports", _port)

    _each(obj, "subsets", subset)


def _slice_port(port: _Obj) -> None:
    if port.get("name") is None:
        port["name"] = ""
    if port.get("protocol") is None:
        port["protocol"] = "TCP"


def _slice_endpoint(endpoint: _Obj) -> None:
    _sub(endpoint, "conditions")


def _endpoint_slice(obj: _Obj, creating: bool) -> None:
    _each(obj, "ports", _slice_port)
    _each(obj, "endpoints", _slice_endpoint)


def _event(obj: _Obj, creating: bool) -> None:
    _sub(obj, "involvedObject")
    _sub(obj, "source")
    for field in ("firstTimestamp", "lastTimestamp", "eventTime"):
        obj.setdefault(field, None)
    for field in ("reportingComponent", "reportingInstance"):
        if obj.get(field) is None:
            obj[field] = ""


def _node(obj: _Obj, creating: bool) -> None:
    _sub(obj, "spec")
    status = _sub(obj, "status")
    if status is None:
        return
    endpoints = _sub(status, "daemonEndpoints")
    if endpoints is not None:
        _fill(endpoints, "kubeletEndpoint", {"Port": 0})
    info = _sub(status, "nodeInfo")
    if info is not None:
        for field in _NODE_INFO_FIELDS:
            if info.get(field) is None:
                info[field] = ""
    if status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


def _persistent_volume_claim(obj: _Obj, creating: bool) -> None:
    spec = _sub(obj, "spec")
    if spec is not None and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    status = _sub(obj, "status")
    if status is not None and not status.get("phase"):
        status["phase"] = "Pending"


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
    _sub(obj, "status")
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    _rolling(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def _replica_set(obj: _Obj, creating: bool) -> None:
    _fill(obj, "status", {"replicas": 0})
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    _template(spec)


def _replication_controller(obj: _Obj, creating: bool) -> None:
    _fill(obj, "status", {"replicas": 0})
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
    _fill(obj, "status", {"replicas": 0, "availableReplicas": 0})
    spec = _sub(obj, "spec")
    if spec is None:
        return
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = _sub(spec, "updateStrategy")
    if strategy is not None:
        if not strategy.get("type"):
            # Only a defaulted type brings a defaulted rollingUpdate along.
            strategy["type"] = "RollingUpdate"
            _sub(strategy, "rollingUpdate")
        update = _existing(strategy, "rollingUpdate")
        if strategy["type"] == "RollingUpdate" and update is not None:
            update.setdefault("partition", 0)
    retention = _sub(spec, "persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        for field in ("whenDeleted", "whenScaled"):
            if not retention.get(field):
                retention[field] = "Retain"
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _daemon_set(obj: _Obj, creating: bool) -> None:
    _fill(
        obj,
        "status",
        {
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        },
    )
    spec = _sub(obj, "spec")
    if spec is None:
        return
    _rolling(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _template_labels(spec: _Obj) -> dict[str, Any] | None:
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return dict(labels) if isinstance(labels, dict) else None


def _job_labels_from_template(obj: _Obj, labels: dict[str, Any] | None) -> None:
    meta = obj.get("metadata")
    if labels is not None and isinstance(meta, dict) and not meta.get("labels"):
        obj["metadata"] = {**meta, "labels": labels}


def _generate_job_selector(obj: _Obj, spec: _Obj) -> None:
    """What the Job strategy adds on create unless ``manualSelector``: the
    job's name and uid as template labels, and a selector on the uid."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    template = _sub(spec, "template")
    template_meta = _sub(template, "metadata") if template is not None else None
    labels = _sub(template_meta, "labels") if template_meta is not None else None
    if labels is None:
        return
    selector = _sub(spec, "selector")
    match = _sub(selector, "matchLabels") if selector is not None else None
    if match is None:
        return
    for label in _JOB_NAME_LABELS:
        labels.setdefault(label, name)
    for label in _CONTROLLER_UID_LABELS:
        labels.setdefault(label, uid)
    match.setdefault(_CONTROLLER_UID_LABELS[1], uid)


def _job(obj: _Obj, creating: bool) -> None:
    _sub(obj, "status")
    spec = _sub(obj, "spec")
    if spec is None:
        return
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2**31 - 1 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:
        failure_policy = spec.get("podFailurePolicy") is not None
        spec["podReplacementPolicy"] = "Failed" if failure_policy else "TerminatingOrFailed"
    # As the server: labels come from the template as the client sent it;
    # without any, from the template with the generated labels (the object
    # is defaulted again when read back from storage).
    _job_labels_from_template(obj, _template_labels(spec))
    if creating and spec.get("manualSelector") is not True:
        _generate_job_selector(obj, spec)
        _job_labels_from_template(obj, _template_labels(spec))
    spec.setdefault("manualSelector", False)
    _template(spec)


def _cron_job(obj: _Obj, creating: bool) -> None:
    _sub(obj, "status")
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
            _template(job_spec)


def _secret(obj: _Obj, creating: bool) -> None:
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _lease(obj: _Obj, creating: bool) -> None:
    _sub(obj, "spec")


def _ingress(obj: _Obj, creating: bool) -> None:
    _sub(obj, "spec")
    _fill(obj, "status", {"loadBalancer": {}})


_DEFAULTERS: dict[Resource, Callable[[_Obj, bool], None]] = {
    SECRETS: _secret,
    PODS: _pod,
    SERVICES: _service,
    ENDPOINTS: _endpoints,
    ENDPOINTSLICES: _endpoint_slice,
    EVENTS: _event,
    NODES: _node,
    PERSISTENTVOLUMECLAIMS: _persistent_volume_claim,
    DEPLOYMENTS: _deployment,
    REPLICASETS: _replica_set,
    REPLICATIONCONTROLLERS: _replication_controller,
    STATEFULSETS: _stateful_set,
    DAEMONSETS: _daemon_set,
    JOBS: _job,
    CRONJOBS: _cron_job,
    LEASES: _lease,
    INGRESSES: _ingress,
}

#: Every kind :func:`apply_defaults` changes (Namespaces are filled in by the
#: storage; ConfigMaps and ServiceAccounts have nothing to fill).
DEFAULTED_RESOURCES: frozenset[Resource] = frozenset(_DEFAULTERS)


def apply_defaults(resource: Resource, obj: _Obj, *, creating: bool) -> _Obj:
    """``obj`` with the server's defaults filled in (see the module
    docstring); ``obj`` itself is not changed. ``creating`` adds what only a
    create fills (a Pod's initial status, a Job's generated selector; the
    storage has set ``metadata.uid`` by then)."""
    defaulter = _DEFAULTERS.get(resource)
    if defaulter is None:
        return obj
    out = dict(obj)
    defaulter(out, creating)
    return out
