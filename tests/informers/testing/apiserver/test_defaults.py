"""Server-side defaulting: the fields a real API server fills in on create
(and keeps on update), through the real client and as a pure function."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from apiserver_helpers import pod
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client

from informers.testing import ApiServer
from informers.testing.apiserver._defaults import apply_defaults, image_pull_policy, pod_qos_class
from informers.wire.resources import (
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

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
}
#: A Job's pods must not restart in place.
JOB_TEMPLATE = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}
SELECTOR = {"matchLabels": {"app": "web"}}


def test_secret_type_defaults_to_opaque(server: ApiServer, core: client.CoreV1Api, ns: str) -> None:
    made = core.create_namespaced_secret(ns, {"metadata": {"name": "s"}, "data": {}})
    assert made.type == "Opaque"
    typed = server.create(
        SECRETS,
        {
            "metadata": {"name": "t"},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"},
        },
        ns,
    )
    assert typed["type"] == "kubernetes.io/tls"


def test_pod_gets_pending_status_and_spec_defaults(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    made = core.create_namespaced_pod(ns, pod("p")).to_dict()
    assert made["status"]["phase"] == "Pending"
    assert made["status"]["qos_class"] == "BestEffort"
    spec = made["spec"]
    assert spec["restart_policy"] == "Always"
    assert spec["dns_policy"] == "ClusterFirst"
    assert spec["scheduler_name"] == "default-scheduler"
    assert spec["termination_grace_period_seconds"] == 30
    assert spec["service_account_name"] == "default"
    assert spec["containers"][0]["image_pull_policy"] == "Always"  # "busybox": no tag
    assert spec["containers"][0]["termination_message_policy"] is None  # left out on purpose
    running = server.create(
        PODS, {**pod("q"), "status": {"phase": "Running", "podIP": "10.0.0.9"}}, ns
    )
    assert running["status"] == {"phase": "Running", "podIP": "10.0.0.9"}  # kept as written


def test_service_defaults_and_a_stable_cluster_ip(
    server: ApiServer, core: client.CoreV1Api, ns: str
) -> None:
    body = {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    made = core.create_namespaced_service(ns, body)
    spec = made.spec
    assert (spec.type, spec.session_affinity) == ("ClusterIP", "None")
    assert spec.ports[0].protocol == "TCP"
    assert spec.ports[0].target_port == 80
    assert spec.cluster_ip.startswith("10.9")
    # (read raw: the client model names the field cluster_i_ps before kubernetes 36)
    assert server.get(SERVICES, "web", ns)["spec"]["clusterIPs"] == [spec.cluster_ip]
    other = core.create_namespaced_service(ns, {**body, "metadata": {"name": "other"}})
    assert other.spec.cluster_ip != spec.cluster_ip
    headless = server.create(
        SERVICES, {"metadata": {"name": "h"}, "spec": {"clusterIP": "None"}}, ns
    )
    assert headless["spec"]["clusterIP"] == "None"
    external = server.create(
        SERVICES,
        {"metadata": {"name": "e"}, "spec": {"type": "ExternalName", "externalName": "x.io"}},
        ns,
    )
    assert "clusterIP" not in external["spec"]
    # A PUT of the original manifest keeps the allocated IP and changes nothing.
    again = core.replace_namespaced_service("web", ns, body)
    assert again.spec.cluster_ip == spec.cluster_ip
    assert again.metadata.resource_version == made.metadata.resource_version


def test_deployment_defaults_and_put_of_the_manifest_is_a_no_op(
    apps: client.AppsV1Api, ns: str
) -> None:
    body = {
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
    }
    made = apps.create_namespaced_deployment(ns, body)
    assert made.spec.replicas == 1
    assert made.spec.strategy.type == "RollingUpdate"
    assert made.spec.strategy.rolling_update.max_surge == "25%"
    assert made.spec.revision_history_limit == 10
    assert made.spec.progress_deadline_seconds == 600
    template = made.spec.template.spec
    assert template.restart_policy == "Always"
    assert template.containers[0].image_pull_policy == "IfNotPresent"
    assert template.service_account_name is None  # admission sets it on pods only
    again = apps.replace_namespaced_deployment("web", ns, body)
    assert again.metadata.resource_version == made.metadata.resource_version
    assert again.metadata.generation == 1


@pytest.mark.parametrize(
    ("resource", "spec", "expected"),
    [
        (REPLICASETS, {"selector": SELECTOR, "template": TEMPLATE}, {"replicas": 1}),
        (
            STATEFULSETS,
            {"selector": SELECTOR, "template": TEMPLATE},
            {
                "replicas": 1,
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            },
        ),
        (
            DAEMONSETS,
            {"selector": SELECTOR, "template": TEMPLATE},
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
            },
        ),
        (
            REPLICATIONCONTROLLERS,
            {"template": TEMPLATE},
            {"replicas": 1, "selector": {"app": "web"}},
        ),
        (
            JOBS,
            {"template": JOB_TEMPLATE},
            {"completions": 1, "parallelism": 1, "backoffLimit": 6, "suspend": False},
        ),
        (
            CRONJOBS,
            {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}},
            {"concurrencyPolicy": "Allow", "successfulJobsHistoryLimit": 3},
        ),
    ],
)
def test_workload_defaults(
    server: ApiServer, ns: str, resource: Resource, spec: dict[str, Any], expected: dict[str, Any]
) -> None:
    made = server.create(resource, {"metadata": {"name": "w"}, "spec": spec}, ns)
    for field, value in expected.items():
        assert made["spec"][field] == value
    if resource == REPLICATIONCONTROLLERS:
        assert made["metadata"]["labels"] == {"app": "web"}


def test_custom_resources_and_other_kinds_are_not_defaulted(server: ApiServer, ns: str) -> None:
    lookalike = Resource("example.com", "v1", "deployments", "Deployment")
    server.register_resource(lookalike)
    made = server.create(lookalike, {"metadata": {"name": "d"}, "spec": {}}, ns)
    assert made["spec"] == {}
    cm = server.create("configmaps", {"metadata": {"name": "c"}}, ns)
    assert set(cm) == {"kind", "apiVersion", "metadata"}


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry:5000/team/app", "Always"),
        ("registry:5000/team/app:v2", "IfNotPresent"),
        ("nginx@sha256:abcd", "IfNotPresent"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def _with_resources(**resources: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "c", "resources": resources}]}}


def test_pod_qos_class() -> None:
    assert pod_qos_class(_with_resources()) == "BestEffort"
    assert pod_qos_class(_with_resources(requests={"cpu": "1"})) == "Burstable"
    full = {"cpu": "1", "memory": "1Gi"}
    assert pod_qos_class(_with_resources(limits=full)) == "Guaranteed"
    assert pod_qos_class(_with_resources(limits=full, requests={"cpu": "500m"})) == "Burstable"
    defaulted = apply_defaults(PODS, _with_resources(limits=full), creating=True)
    assert defaulted["spec"]["containers"][0]["resources"]["requests"] == full
    assert defaulted["status"]["qosClass"] == "Guaranteed"


DEFAULTED = [SECRETS, PODS, SERVICES, DEPLOYMENTS, REPLICASETS, REPLICATIONCONTROLLERS]
DEFAULTED += [STATEFULSETS, DAEMONSETS, JOBS, CRONJOBS]

_KEYS = [
    "spec",
    "status",
    "template",
    "containers",
    "ports",
    "resources",
    "limits",
    "requests",
    "type",
    "image",
    "clusterIP",
    "strategy",
    "metadata",
    "labels",
]
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(_KEYS),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(
    st.sampled_from(DEFAULTED),
    st.dictionaries(st.sampled_from(["spec", "status", "type", "metadata"]), _json, max_size=4),
    st.booleans(),
)
def test_defaults_never_fail_never_mutate_and_are_idempotent(
    resource: Resource, obj: dict[str, Any], creating: bool
) -> None:
    before = copy.deepcopy(obj)
    once = apply_defaults(resource, obj, creating=creating)
    assert obj == before
    assert apply_defaults(resource, once, creating=False) == once
