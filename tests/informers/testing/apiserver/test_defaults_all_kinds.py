"""What a real API server returns for a freshly created minimal object of
every kind the emulator serves: spec defaults and the ``status`` stanzas the
Go types always serialise. One table row per kind, POSTed over HTTP and read
back; expected values are those of kube-apiserver 1.32 (see the docstring of
``informers/testing/apiserver/_defaults.py`` for what is left out on
purpose)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client

from informers.testing import ApiServer
from informers.testing.apiserver._defaults import DEFAULTED_RESOURCES, apply_defaults
from informers.wire.resources import BUILTIN_RESOURCES, JOBS, SERVICES, Resource


class _Anything:
    """Equal to any value (a server-allocated IP or uid)."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Anything()

CONTAINER = {"name": "web", "image": "nginx:1.25"}
DEFAULTED_CONTAINER = {**CONTAINER, "imagePullPolicy": "IfNotPresent"}
POD_SPEC_DEFAULTS = {
    "restartPolicy": "Always",
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 30,
}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [CONTAINER]}}
DEFAULTED_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [DEFAULTED_CONTAINER], **POD_SPEC_DEFAULTS},
}
SELECTOR = {"matchLabels": {"app": "web"}}
JOB_POD = {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}
DEFAULTED_JOB_POD_SPEC = {
    **POD_SPEC_DEFAULTS,
    "containers": [DEFAULTED_CONTAINER],
    "restartPolicy": "Never",
}
JOB_LABELS = {
    "batch.kubernetes.io/controller-uid": ANY,
    "batch.kubernetes.io/job-name": "w",
    "controller-uid": ANY,
    "job-name": "w",
}

#: plural → (the minimal body, besides its name; what the server returns
#: besides ``metadata``; the labels it sets, or None to leave them alone)
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]] = {
    "namespaces": (
        {},
        {"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
        {"kubernetes.io/metadata.name": "w"},
    ),
    "pods": (
        {"spec": {"containers": [CONTAINER]}},
        {
            "spec": {
                "containers": [DEFAULTED_CONTAINER],
                **POD_SPEC_DEFAULTS,
                "serviceAccountName": "default",
            },
            "status": {"phase": "Pending", "qosClass": "BestEffort"},
        },
        None,
    ),
    "services": (
        {"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
        {
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster",
                "clusterIP": ANY,
                "clusterIPs": ANY,
            },
            "status": {"loadBalancer": {}},
        },
        None,
    ),
    "endpoints": (
        {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]},
        {
            "subsets": [
                {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}]}
            ]
        },
        None,
    ),
    "configmaps": ({"data": {"a": "1"}}, {"data": {"a": "1"}}, None),
    "secrets": ({"data": {"a": "MQ=="}}, {"data": {"a": "MQ=="}, "type": "Opaque"}, None),
    "serviceaccounts": ({}, {}, None),
    "nodes": (
        {},
        {
            "spec": {},
            "status": {
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
                "nodeInfo": {
                    "machineID": "",
                    "systemUUID": "",
                    "bootID": "",
                    "kernelVersion": "",
                    "osImage": "",
                    "containerRuntimeVersion": "",
                    "kubeletVersion": "",
                    "kubeProxyVersion": "",
                    "operatingSystem": "",
                    "architecture": "",
                },
            },
        },
        None,
    ),
    "events": (
        {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Started", "message": "m"},
        {
            "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "Started",
            "message": "m",
            "source": {},
            "firstTimestamp": None,
            "lastTimestamp": None,
            "eventTime": None,
            "reportingComponent": "",
            "reportingInstance": "",
        },
        None,
    ),
    "replicationcontrollers": (
        {"spec": {"template": TEMPLATE}},
        {
            "spec": {"replicas": 1, "selector": {"app": "web"}, "template": DEFAULTED_TEMPLATE},
            "status": {"replicas": 0},
        },
        {"app": "web"},
    ),
    "persistentvolumeclaims": (
        {
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            }
        },
        {
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        },
        None,
    ),
    "deployments": (
        {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
        {
            "spec": {
                "selector": SELECTOR,
                "template": DEFAULTED_TEMPLATE,
                "replicas": 1,
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {},
        },
        None,
    ),
    "replicasets": (
        {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
        {
            "spec": {"selector": SELECTOR, "template": DEFAULTED_TEMPLATE, "replicas": 1},
            "status": {"replicas": 0},
        },
        None,
    ),
    "daemonsets": (
        {"spec": {"selector": SELECTOR, "template": TEMPLATE}},
        {
            "spec": {
                "selector": SELECTOR,
                "template": DEFAULTED_TEMPLATE,
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
            },
            "status": {
                "currentNumberScheduled": 0,
                "numberMisscheduled": 0,
                "desiredNumberScheduled": 0,
                "numberReady": 0,
            },
        },
        None,
    ),
    "statefulsets": (
        {"spec": {"selector": SELECTOR, "serviceName": "web", "template": TEMPLATE}},
        {
            "spec": {
                "selector": SELECTOR,
                "serviceName": "web",
                "template": DEFAULTED_TEMPLATE,
                "replicas": 1,
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {
                    "whenDeleted": "Retain",
                    "whenScaled": "Retain",
                },
            },
            "status": {"replicas": 0, "availableReplicas": 0},
        },
        None,
    ),
    "jobs": (
        {"spec": {"template": JOB_POD}},
        {
            "spec": {
                "template": {"metadata": {"labels": JOB_LABELS}, "spec": DEFAULTED_JOB_POD_SPEC},
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": ANY}},
                "completions": 1,
                "parallelism": 1,
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "suspend": False,
                "podReplacementPolicy": "TerminatingOrFailed",
                "manualSelector": False,
            },
            "status": {},
        },
        JOB_LABELS,
    ),
    "cronjobs": (
        {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": JOB_POD}}}},
        {
            "spec": {
                "schedule": "*/5 * * * *",
                # the Job defaults are not applied to a template
                "jobTemplate": {"spec": {"template": {"spec": DEFAULTED_JOB_POD_SPEC}}},
                "concurrencyPolicy": "Allow",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
            },
            "status": {},
        },
        None,
    ),
    "leases": ({}, {"spec": {}}, None),
    "endpointslices": (
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}],
            "ports": [{"port": 80}],
        },
        {
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {}}],
            "ports": [{"port": 80, "name": "", "protocol": "TCP"}],
        },
        None,
    ),
    "ingresses": (
        {"spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}},
        {
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
            "status": {"loadBalancer": {}},
        },
        None,
    ),
}

SERVED = {r.plural: r for r in BUILTIN_RESOURCES if r.plural != "customresourcedefinitions"}


def test_the_table_covers_every_served_builtin_kind() -> None:
    assert set(CASES) == set(SERVED)


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager()
    yield pool
    pool.clear()


def _collection_url(server: ApiServer, resource: Resource, namespace: str) -> str:
    prefix = f"/api/{resource.version}" if not resource.group else f"/apis/{resource.group_version}"
    scope = f"/namespaces/{namespace}" if resource.namespaced else ""
    return f"{server.url}{prefix}{scope}/{resource.plural}"


def _request(http: urllib3.PoolManager, method: str, url: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    response = http.request(method, url, body=data, headers={"Content-Type": "application/json"})
    assert response.status in (200, 201), response.data
    return json.loads(response.data)


def _without_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion", "metadata")}


@pytest.mark.parametrize("plural", sorted(CASES))
def test_a_minimal_object_comes_back_as_from_a_real_server(
    server: ApiServer, http: urllib3.PoolManager, ns: str, plural: str
) -> None:
    resource = SERVED[plural]
    body, expected, labels = CASES[plural]
    manifest = {"metadata": {"name": "w"}, **copy.deepcopy(body)}
    url = _collection_url(server, resource, ns)
    made = _request(http, "POST", url, manifest)
    assert (made["kind"], made["apiVersion"]) == (resource.kind, resource.api_version)
    assert _without_metadata(made) == expected
    if labels is not None:
        assert made["metadata"]["labels"] == labels
    else:
        assert "labels" not in made["metadata"]
    read = _request(http, "GET", f"{url}/w")
    assert read == made
    if resource == JOBS:  # a PUT without the generated selector would change it
        return
    # The manifest PUT back unchanged changes nothing (defaults are no change).
    again = _request(http, "PUT", f"{url}/w", manifest)
    assert again["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


def test_a_job_selects_its_pods_by_its_uid(server: ApiServer, ns: str) -> None:
    made = server.create(JOBS, {"metadata": {"name": "w"}, "spec": {"template": JOB_POD}}, ns)
    uid = made["metadata"]["uid"]
    assert made["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = made["spec"]["template"]["metadata"]["labels"]
    assert labels["controller-uid"] == labels["batch.kubernetes.io/controller-uid"] == uid
    manual = server.create(
        JOBS,
        {
            "metadata": {"name": "m", "labels": {"team": "a"}},
            "spec": {
                "manualSelector": True,
                "selector": SELECTOR,
                "template": {**JOB_POD, "metadata": {"labels": {"app": "web"}}},
            },
        },
        ns,
    )
    assert manual["spec"]["selector"] == SELECTOR
    assert manual["spec"]["template"]["metadata"]["labels"] == {"app": "web"}
    assert manual["metadata"]["labels"] == {"team": "a"}
    # A user's template labels become the job's labels (without the generated ones).
    labelled = server.create(
        JOBS,
        {"metadata": {"name": "l"}, "spec": {"template": {**TEMPLATE, "spec": JOB_POD["spec"]}}},
        ns,
    )
    assert labelled["metadata"]["labels"] == {"app": "web"}
    with_policy = server.create(
        JOBS,
        {"metadata": {"name": "p"}, "spec": {"template": JOB_POD, "podFailurePolicy": {}}},
        ns,
    )
    assert with_policy["spec"]["podReplacementPolicy"] == "Failed"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"type": "NodePort", "ports": [{"port": 80}]},
            {"externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster"},
        ),
        (
            {"type": "LoadBalancer", "ports": [{"port": 80}]},
            {"externalTrafficPolicy": "Cluster", "allocateLoadBalancerNodePorts": True},
        ),
        (
            {"ports": [{"port": 80}], "externalIPs": ["192.0.2.1"]},
            {"externalTrafficPolicy": "Cluster"},
        ),
        (
            {"ports": [{"port": 80}], "sessionAffinity": "ClientIP"},
            {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}},
        ),
        (
            {"type": "ExternalName", "externalName": "example.com"},
            {"sessionAffinity": "None", "type": "ExternalName"},
        ),
    ],
)
def test_service_defaults_by_type(
    server: ApiServer, ns: str, spec: dict[str, Any], expected: dict[str, Any]
) -> None:
    made = server.create(SERVICES, {"metadata": {"name": "s"}, "spec": spec}, ns)
    for field, value in expected.items():
        assert made["spec"][field] == value, field
    assert made["status"] == {"loadBalancer": {}}
    if spec.get("type") == "ExternalName":
        assert not {"ipFamilies", "internalTrafficPolicy", "clusterIP"} & set(made["spec"])


def test_pod_spec_defaults_for_probes_volumes_and_env(server: ApiServer, ns: str) -> None:
    container = {
        **CONTAINER,
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 5},
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }
    volumes = [
        {"name": "scratch"},
        {"name": "cfg", "configMap": {"name": "c"}},
        {"name": "sec", "secret": {"secretName": "s", "defaultMode": 0o400}},
        {"name": "host", "hostPath": {"path": "/tmp"}},
        {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
    ]
    made = server.create(
        "pods",
        {"metadata": {"name": "p"}, "spec": {"containers": [container], "volumes": volumes}},
        ns,
    )
    got = made["spec"]["containers"][0]
    assert got["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert got["readinessProbe"]["periodSeconds"] == 5
    assert got["env"][0]["valueFrom"]["fieldRef"] == {
        "fieldPath": "spec.nodeName",
        "apiVersion": "v1",
    }
    by_name = {v["name"]: v for v in made["spec"]["volumes"]}
    assert by_name["scratch"] == {"name": "scratch", "emptyDir": {}}
    assert by_name["cfg"]["configMap"]["defaultMode"] == 420
    assert by_name["sec"]["secret"]["defaultMode"] == 0o400  # kept as written
    assert by_name["host"]["hostPath"]["type"] == ""
    projected = by_name["token"]["projected"]
    assert projected["defaultMode"] == 420
    assert projected["sources"][0]["serviceAccountToken"]["expirationSeconds"] == 3600


def test_status_counters_are_there_even_when_a_status_is_written(
    server: ApiServer, ns: str
) -> None:
    made = server.create(
        "replicasets",
        {"metadata": {"name": "r"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}},
        ns,
    )
    made["status"] = {"readyReplicas": 2}
    stored = server.update("replicasets", made)
    assert stored["status"] == {"readyReplicas": 2, "replicas": 0}
    node = server.create("nodes", {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}})
    assert node["status"]["allocatable"] == {"cpu": "4"}  # as the real server defaults it


def test_the_python_client_reads_every_kind_with_its_status(
    api: client.ApiClient, server: ApiServer, ns: str
) -> None:
    """The models of the official client accept what the emulator sends (the
    issue that started the audit: a Service read back without any status)."""
    core = client.CoreV1Api(api)
    for plural in ("services", "nodes", "events", "persistentvolumeclaims", "pods"):
        body, _, _ = CASES[plural]
        server.create(plural, {"metadata": {"name": "w"}, **copy.deepcopy(body)}, ns)
    service = core.read_namespaced_service("w", ns)
    assert service.status.load_balancer is not None
    assert service.status.load_balancer.ingress is None
    node = core.read_node("w")
    assert node.status.daemon_endpoints.kubelet_endpoint.port == 0
    assert node.status.node_info.kubelet_version == ""
    event = core.read_namespaced_event("w", ns)
    assert event.first_timestamp is None
    assert event.reporting_component == ""
    assert core.read_namespaced_persistent_volume_claim("w", ns).status.phase == "Pending"
    assert core.read_namespaced_pod("w", ns).status.qos_class == "BestEffort"
    for plural in ("endpointslices", "ingresses", "leases", "statefulsets", "daemonsets"):
        body, _, _ = CASES[plural]
        server.create(plural, {"metadata": {"name": "w"}, **copy.deepcopy(body)}, ns)
    assert (
        client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(ns).items[0].ports[0].name == ""
    )
    ingress = client.NetworkingV1Api(api).read_namespaced_ingress("w", ns)
    assert ingress.status.load_balancer is not None
    assert client.CoordinationV1Api(api).read_namespaced_lease("w", ns).spec is not None
    apps = client.AppsV1Api(api)
    assert apps.read_namespaced_stateful_set("w", ns).status.available_replicas == 0
    assert apps.read_namespaced_daemon_set("w", ns).status.number_ready == 0


_leaf = st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=3)
_KEYS = [
    "spec",
    "status",
    "template",
    "containers",
    "volumes",
    "ports",
    "endpoints",
    "subsets",
    "type",
    "selector",
    "metadata",
    "labels",
    "uid",
    "name",
    "livenessProbe",
    "httpGet",
    "jobTemplate",
    "updateStrategy",
    "rollingUpdate",
    "daemonEndpoints",
    "nodeInfo",
    "capacity",
    "sessionAffinity",
    "manualSelector",
]
_json = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=14,
)


@given(
    st.sampled_from(sorted(DEFAULTED_RESOURCES, key=str)),
    st.dictionaries(
        st.sampled_from(["spec", "status", "metadata", "type", "ports"]), _json, max_size=4
    ),
    st.booleans(),
)
def test_every_defaulter_never_fails_never_mutates_and_is_idempotent(
    resource: Resource, obj: dict[str, Any], creating: bool
) -> None:
    before = copy.deepcopy(obj)
    once = apply_defaults(resource, obj, creating=creating)
    assert obj == before
    assert apply_defaults(resource, once, creating=False) == once
