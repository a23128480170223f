"""Tables of valid and invalid objects per kind, created through the
official ``kubernetes`` client: each invalid one is refused with the status
code, reason and causes (field and message) the real API server sends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import urllib3
from kubernetes import client

from informers.testing import ApiServer

IMAGE = "nginx:1.25"
CONTAINERS = [{"name": "web", "image": IMAGE}]
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": CONTAINERS}}
JOB_TEMPLATE = {"spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}
SELECTOR = {"matchLabels": LABELS}


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS, **spec}}


def workload(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "w"}, "spec": {"selector": SELECTOR, "template": TEMPLATE, **spec}}


def service(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}], **spec}}


def creator(api: client.ApiClient, kind: str) -> Callable[[str, dict[str, Any]], Any]:
    core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
    coordination = client.CoordinationV1Api(api)
    return {
        "Pod": core.create_namespaced_pod,
        "Service": core.create_namespaced_service,
        "ConfigMap": core.create_namespaced_config_map,
        "Secret": core.create_namespaced_secret,
        "Deployment": apps.create_namespaced_deployment,
        "ReplicaSet": apps.create_namespaced_replica_set,
        "StatefulSet": apps.create_namespaced_stateful_set,
        "DaemonSet": apps.create_namespaced_daemon_set,
        "Job": batch.create_namespaced_job,
        "CronJob": batch.create_namespaced_cron_job,
        "Lease": coordination.create_namespaced_lease,
    }[kind]


VALID: list[tuple[str, dict[str, Any]]] = [
    ("Pod", pod()),
    ("Pod", pod(restartPolicy="OnFailure", containers=[*CONTAINERS, {"name": "b", "image": "x"}])),
    ("Deployment", workload(replicas=0)),
    ("ReplicaSet", workload()),
    ("StatefulSet", workload()),
    ("DaemonSet", workload()),
    ("Job", {"metadata": {"name": "j"}, "spec": {"template": JOB_TEMPLATE}}),
    (
        "CronJob",
        {
            "metadata": {"name": "c"},
            "spec": {
                "schedule": "*/5 * * * mon-fri",
                "jobTemplate": {"spec": {"template": JOB_TEMPLATE}},
            },
        },
    ),
    (
        "CronJob",
        {
            "metadata": {"name": "d"},
            "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        },
    ),
    (
        "Service",
        service(type="NodePort", ports=[{"port": 80, "name": "a"}, {"port": 443, "name": "b"}]),
    ),
    (
        "Service",
        {
            "metadata": {"name": "x"},
            "spec": {"type": "ExternalName", "externalName": "example.com"},
        },
    ),
    (
        "ConfigMap",
        {
            "metadata": {"name": "c", "labels": {"example.com/a-b_c.d": "v.1"}},
            "data": {"a.b-c_D": "x"},
        },
    ),
    (
        "Secret",
        {
            "metadata": {"name": "t"},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "YQ==", "tls.key": "Yg=="},
        },
    ),
    ("Lease", {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 15}}),
]

_LABEL_KEY = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character"
)
_NO_MATCH = (
    'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'
)
_TYPES = '"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'
_PORT_80 = (
    'core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, '
    'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
)

#: (id, kind, body, [(field, message)]) -- every cause, in order.
INVALID: list[tuple[str, str, dict[str, Any], list[tuple[str, str]]]] = [
    ("pod-no-containers", "Pod", pod(containers=[]), [("spec.containers", "Required value")]),
    (
        "pod-no-image",
        "Pod",
        pod(containers=[{"name": "web"}]),
        [("spec.containers[0].image", "Required value")],
    ),
    (
        "pod-duplicate-names",
        "Pod",
        pod(containers=[*CONTAINERS, {"name": "web", "image": IMAGE}]),
        [("spec.containers[1].name", 'Duplicate value: "web"')],
    ),
    (
        "pod-restart-policy",
        "Pod",
        pod(restartPolicy="Sometimes"),
        [
            (
                "spec.restartPolicy",
                'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            )
        ],
    ),
    (
        "pod-bad-label-key",
        "Pod",
        {**pod(), "metadata": {"name": "p", "labels": {"Bad Key": "x"}}},
        [("metadata.labels", f'Invalid value: "Bad Key": {_LABEL_KEY}')],
    ),
    (
        "pod-port-range",
        "Pod",
        pod(containers=[{**CONTAINERS[0], "ports": [{"containerPort": 70000}]}]),
        [
            (
                "spec.containers[0].ports[0].containerPort",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            )
        ],
    ),
    (
        "pod-requests-over-limits",
        "Pod",
        pod(
            containers=[
                {**CONTAINERS[0], "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}
            ]
        ),
        [
            (
                "spec.containers[0].resources.requests",
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
    ),
    (
        "deployment-mismatch",
        "Deployment",
        workload(selector={"matchLabels": {"app": "db"}}),
        [
            (
                "spec.template.metadata.labels",
                _NO_MATCH,
            )
        ],
    ),
    (
        "deployment-no-selector",
        "Deployment",
        {"metadata": {"name": "w"}, "spec": {"template": TEMPLATE}},
        [
            ("spec.selector", "Required value"),
            (
                "spec.template.metadata.labels",
                _NO_MATCH,
            ),
        ],
    ),
    (
        "deployment-negative",
        "Deployment",
        workload(replicas=-1),
        [("spec.replicas", "Invalid value: -1: must be greater than or equal to 0")],
    ),
    (
        "replicaset-restart",
        "ReplicaSet",
        workload(template={**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}),
        [
            (
                "spec.template.spec.restartPolicy",
                'Unsupported value: "Never": supported values: "Always"',
            )
        ],
    ),
    (
        "statefulset-no-selector",
        "StatefulSet",
        {"metadata": {"name": "w"}, "spec": {"template": TEMPLATE}},
        [
            ("spec.selector", "Required value"),
            ("spec.template.metadata.labels", "`selector` does not match template `labels`"),
        ],
    ),
    (
        "daemonset-mismatch",
        "DaemonSet",
        workload(selector={"matchLabels": {"x": "y"}}),
        [("spec.template.metadata.labels", "`selector` does not match template `labels`")],
    ),
    (
        "job-restart-always",
        "Job",
        {"metadata": {"name": "j"}, "spec": {"template": {"spec": {"containers": CONTAINERS}}}},
        [
            (
                "spec.template.spec.restartPolicy",
                'Unsupported value: "Always": supported values: "OnFailure", "Never"',
            )
        ],
    ),
    (
        "cronjob-schedule",
        "CronJob",
        {
            "metadata": {"name": "c"},
            "spec": {"schedule": "61 * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        },
        [
            (
                "spec.schedule",
                'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
            )
        ],
    ),
    (
        "cronjob-fields",
        "CronJob",
        {
            "metadata": {"name": "c"},
            "spec": {"schedule": "often", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
        },
        [("spec.schedule", 'Invalid value: "often": expected exactly 5 fields, found 1: [often]')],
    ),
    (
        "service-type",
        "Service",
        service(type="Foo"),
        [
            (
                "spec.type",
                f'Unsupported value: "Foo": supported values: {_TYPES}',
            )
        ],
    ),
    (
        "service-port",
        "Service",
        service(ports=[{"port": 0}]),
        [("spec.ports[0].port", "Invalid value: 0: must be between 1 and 65535, inclusive")],
    ),
    (
        "service-duplicate-port",
        "Service",
        service(ports=[{"port": 80, "name": "a"}, {"port": 80, "name": "b"}]),
        [
            (
                "spec.ports[1]",
                f"Duplicate value: {_PORT_80}",
            )
        ],
    ),
    (
        "service-unnamed-ports",
        "Service",
        service(ports=[{"port": 80}, {"port": 81}]),
        [("spec.ports[0].name", "Required value"), ("spec.ports[1].name", "Required value")],
    ),
    (
        "service-ip-range",
        "Service",
        service(clusterIP="1.2.3.4"),
        [("spec.clusterIPs", "is not in the valid range")],
    ),
    (
        "configmap-too-big",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"a": "x" * (1024 * 1024 + 1)}},
        [("[]", "Too long: must have at most 1048576 bytes")],
    ),
    (
        "configmap-key",
        "ConfigMap",
        {"metadata": {"name": "c"}, "data": {"a b": "x"}},
        [
            (
                "data[a b]",
                'Invalid value: "a b": a valid config key must consist of alphanumeric characters',
            )
        ],
    ),
    (
        "secret-tls",
        "Secret",
        {"metadata": {"name": "t"}, "type": "kubernetes.io/tls", "data": {}},
        [("data[tls.crt]", "Required value"), ("data[tls.key]", "Required value")],
    ),
    (
        "lease-duration",
        "Lease",
        {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}},
        [("spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0")],
    ),
    (
        "name",
        "ConfigMap",
        {"metadata": {"name": "Bad_Name"}},
        [("metadata.name", 'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain')],
    ),
    (
        "service-name",
        "Service",
        {**service(), "metadata": {"name": "1abc"}},
        [("metadata.name", "a DNS-1035 label must consist of")],
    ),
    (
        "annotations-too-big",
        "ConfigMap",
        {"metadata": {"name": "c", "annotations": {"a": "x" * 262144}}},
        [("metadata.annotations", "Too long: must have at most 262144 bytes")],
    ),
]


#: Where a body the client's own models refuse (a required field missing)
#: is POSTed as raw JSON.
PATHS = {"Deployment": "apis/apps/v1", "StatefulSet": "apis/apps/v1"}


def _refusal(server: ApiServer, api: client.ApiClient, ns: str, kind: str, body: Any) -> Any:
    """(code, Status) of a create the server refuses."""
    if kind in PATHS and "selector" not in body["spec"]:
        plural = kind.lower() + "s"
        http = urllib3.PoolManager()
        try:
            response = http.request(
                "POST",
                f"{server.url}/{PATHS[kind]}/namespaces/{ns}/{plural}",
                body=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
                timeout=10,
            )
        finally:
            http.clear()
        return response.status, json.loads(response.data)
    with pytest.raises(client.ApiException) as err:
        creator(api, kind)(ns, body)
    return err.value.status, json.loads(err.value.body)


@pytest.mark.parametrize(
    ("kind", "body"), VALID, ids=[f"{k}-{i}" for i, (k, _) in enumerate(VALID)]
)
def test_valid_objects_are_created(
    api: client.ApiClient, ns: str, kind: str, body: dict[str, Any]
) -> None:
    made = creator(api, kind)(ns, body)
    assert made.metadata.name == body["metadata"]["name"]


@pytest.mark.parametrize("case", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_objects_are_refused_with_the_real_causes(
    server: ApiServer, api: client.ApiClient, ns: str, case: tuple[Any, ...]
) -> None:
    kind, body, causes = case
    code, status = _refusal(server, api, ns, kind, body)
    assert code == 422
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == kind
    got = [(c["field"], c["message"]) for c in status["details"]["causes"]]
    assert len(got) == len(causes), got
    for (field, message), (want_field, want) in zip(got, causes, strict=True):
        assert field == want_field
        assert want in message, message
    qualified = kind if "group" not in status["details"] else f"{kind}.{status['details']['group']}"
    assert status["message"].startswith(f'{qualified} "{body["metadata"]["name"]}" is invalid: ')


def test_a_dry_run_validates_too(api: client.ApiClient, ns: str) -> None:
    with pytest.raises(client.ApiException) as err:
        client.CoreV1Api(api).create_namespaced_pod(ns, pod(containers=[]), dry_run="All")
    assert err.value.status == 422


def test_validation_can_be_switched_off(server: ApiServer, api: client.ApiClient, ns: str) -> None:
    server.validation = False
    made = client.CoreV1Api(api).create_namespaced_pod(ns, pod(containers=[]))
    assert made.metadata.name == "p"
    server.validation = True
    assert server.validation
