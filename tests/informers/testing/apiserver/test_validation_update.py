"""Immutable fields and the server rules around writes, through the official
client (and kubectl): what an update may not change, Secret ``stringData``,
base64, canonical quantities, status on create, finalizers while deleting,
namespace lifecycle, and bodies of another kind."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from kubernetes import client

from informers.testing import ApiServer
from informers.wire.resources import CONFIGMAPS, NAMESPACES, PODS

CONTAINERS = [{"name": "web", "image": "nginx:1.25"}]
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": CONTAINERS}}


def _refused(call: Any, *args: Any, code: int = 422, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as err:
        call(*args, **kwargs)
    assert err.value.status == code, err.value.body
    status: dict[str, Any] = json.loads(err.value.body)
    return status


def _causes(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in status["details"]["causes"]]


def test_pod_spec_is_immutable_but_the_image(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_pod(ns, {"metadata": {"name": "p"}, "spec": {"containers": CONTAINERS}})
    patched = core.patch_namespaced_pod(
        "p", ns, {"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}
    )
    assert patched.spec.containers[0].image == "nginx:1.26"
    status = _refused(core.patch_namespaced_pod, "p", ns, {"spec": {"restartPolicy": "Never"}})
    [(field, message)] = _causes(status)
    assert field == "spec"
    assert message.startswith(
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    )


def test_deployment_selector_is_immutable(apps: client.AppsV1Api, ns: str) -> None:
    body = {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE},
    }
    apps.create_namespaced_deployment(ns, body)
    new_labels = {"app": "web", "v": "2"}
    patch = {
        "spec": {
            "selector": {"matchLabels": new_labels},
            "template": {"metadata": {"labels": new_labels}},
        }
    }
    status = _refused(apps.patch_namespaced_deployment, "d", ns, patch)
    assert _causes(status) == [
        (
            "spec.selector",
            "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: web,v: 2,},"
            "MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable",
        )
    ]
    scaled = apps.patch_namespaced_deployment("d", ns, {"spec": {"replicas": 5}})
    assert scaled.spec.replicas == 5


def test_job_template_is_immutable(api: client.ApiClient, ns: str) -> None:
    batch = client.BatchV1Api(api)
    template = {"spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}
    batch.create_namespaced_job(ns, {"metadata": {"name": "j"}, "spec": {"template": template}})
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "x"}]}}}}
    status = _refused(batch.patch_namespaced_job, "j", ns, patch)
    [(field, message)] = _causes(status)
    assert field == "spec.template"
    assert message.endswith(": field is immutable")


def test_service_cluster_ips_are_unique_and_immutable(core: client.CoreV1Api, ns: str) -> None:
    first = core.create_namespaced_service(
        ns, {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}}
    )
    second = core.create_namespaced_service(
        ns, {"metadata": {"name": "b"}, "spec": {"ports": [{"port": 80}]}}
    )
    assert first.spec.cluster_ip != second.spec.cluster_ip
    taken = {
        "metadata": {"name": "c"},
        "spec": {"ports": [{"port": 80}], "clusterIP": first.spec.cluster_ip},
    }
    status = _refused(core.create_namespaced_service, ns, taken)
    assert _causes(status) == [
        (
            "spec.clusterIPs",
            f'Invalid value: []string{{"{first.spec.cluster_ip}"}}: failed to allocate IP '
            f"{first.spec.cluster_ip}: provided IP is already allocated",
        )
    ]
    status = _refused(core.patch_namespaced_service, "a", ns, {"spec": {"clusterIP": "10.96.9.9"}})
    assert _causes(status) == [
        ("spec.clusterIPs[0]", 'Invalid value: []string{"10.96.9.9"}: may not change once set')
    ]
    core.delete_namespaced_service("a", ns, _preload_content=False)  # its address is free again
    reused = core.create_namespaced_service(ns, taken)
    assert reused.spec.cluster_ip == first.spec.cluster_ip


def test_immutable_configmaps_and_secrets(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_config_map(
        ns, {"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True}
    )
    status = _refused(core.patch_namespaced_config_map, "c", ns, {"data": {"a": "2"}})
    assert _causes(status) == [("data", "Forbidden: field is immutable when `immutable` is set")]
    core.create_namespaced_secret(ns, {"metadata": {"name": "s"}, "data": {}})
    status = _refused(core.patch_namespaced_secret, "s", ns, {"type": "kubernetes.io/tls"})
    assert ("type", 'Invalid value: "kubernetes.io/tls": field is immutable') in _causes(status)


def test_string_data_is_merged_into_data_and_bad_base64_refused(
    core: client.CoreV1Api, ns: str
) -> None:
    made = core.create_namespaced_secret(
        ns,
        {"metadata": {"name": "s"}, "data": {"a": "eA==", "b": "eA=="}, "stringData": {"b": "hi"}},
    )
    assert made.data == {"a": "eA==", "b": "aGk="}
    assert made.string_data is None
    status = _refused(
        core.create_namespaced_secret,
        ns,
        {"metadata": {"name": "t"}, "data": {"a": "ab!c"}},
        code=400,
    )
    assert status["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2'
    )


def test_quantities_come_back_canonical(core: client.CoreV1Api, ns: str) -> None:
    resources = {
        "limits": {"cpu": "0.5", "memory": "1Gi"},
        "requests": {"cpu": "100m", "memory": "1024Mi"},
    }
    body = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{**CONTAINERS[0], "resources": resources}]},
    }
    made = core.create_namespaced_pod(ns, body)
    got = made.spec.containers[0].resources
    assert got.limits == {"cpu": "500m", "memory": "1Gi"}
    assert got.requests == {"cpu": "100m", "memory": "1Gi"}
    bad = {
        "metadata": {"name": "q"},
        "spec": {"containers": [{**CONTAINERS[0], "resources": {"limits": {"cpu": "lots"}}}]},
    }
    status = _refused(core.create_namespaced_pod, ns, bad, code=400)
    assert "quantities must match the regular expression" in status["message"]


def test_status_sent_on_create_is_dropped(core: client.CoreV1Api, ns: str) -> None:
    body = {
        "metadata": {"name": "p"},
        "spec": {"containers": CONTAINERS},
        "status": {"phase": "Failed"},
    }
    assert core.create_namespaced_pod(ns, body).status.phase == "Pending"


def test_no_new_finalizers_while_deleting_and_generation_bumps(
    server: ApiServer, apps: client.AppsV1Api, ns: str
) -> None:
    body = {
        "metadata": {"name": "d", "finalizers": ["example.com/hold"]},
        "spec": {"selector": {"matchLabels": LABELS}, "template": TEMPLATE},
    }
    made = apps.create_namespaced_deployment(ns, body)
    assert made.metadata.generation == 1
    apps.delete_namespaced_deployment("d", ns)
    held = apps.read_namespaced_deployment("d", ns)
    assert held.metadata.deletion_timestamp is not None
    assert held.metadata.generation == 2
    patch = {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}
    status = _refused(apps.patch_namespaced_deployment, "d", ns, patch)
    assert _causes(status) == [
        (
            "metadata.finalizers",
            "Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"example.com/more"}',
        )
    ]
    apps.patch_namespaced_deployment("d", ns, {"metadata": {"finalizers": None}})
    assert not [d for d in server.list_objects("deployments", ns)]


def test_system_namespaces_cannot_be_deleted(core: client.CoreV1Api) -> None:
    for name in ("default", "kube-system", "kube-public"):
        status = _refused(core.delete_namespace, name, code=403)
        assert (
            status["message"]
            == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        )
        assert status["reason"] == "Forbidden"


def test_no_creates_in_a_terminating_namespace(server: ApiServer, core: client.CoreV1Api) -> None:
    server.deletion_lifecycle = True
    server.create(NAMESPACES, {"metadata": {"name": "going"}})
    core.delete_namespace("going")
    status = _refused(
        core.create_namespaced_config_map, "going", {"metadata": {"name": "c"}}, code=403
    )
    assert status["message"] == (
        'configmaps "c" is forbidden: unable to create new content in namespace going '
        "because it is being terminated"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "NamespaceTerminating",
            "message": "namespace going is being terminated",
            "field": "metadata.namespace",
        }
    ]


def test_a_body_of_another_kind_is_a_bad_request(core: client.CoreV1Api, ns: str) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    status = _refused(core.create_namespaced_config_map, ns, secret, code=400)
    assert status["message"].startswith('Secret in version "v1" cannot be handled as a ConfigMap')
    deployment = {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    status = _refused(core.create_namespaced_config_map, ns, deployment, code=400)
    assert status["message"] == (
        "the API version in the data (apps/v1) does not match the expected API version (v1)"
    )


def test_python_side_writes_are_validated(server: ApiServer, ns: str) -> None:
    from informers.testing import ApiServerError

    with pytest.raises(ApiServerError) as err:
        server.create(PODS, {"metadata": {"name": "p"}, "spec": {}}, ns)
    assert err.value.code == 422
    made = server.create(CONFIGMAPS, {"metadata": {"name": "c"}}, ns)
    assert made["metadata"]["name"] == "c"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_kubectl_sees_the_refusals(server: ApiServer, tmp_path: Any) -> None:
    kubeconfig = server.write_kubeconfig(tmp_path / "config")

    def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["kubectl", f"--kubeconfig={kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    done = kubectl("create", "deployment", "web", "--image=nginx", "--replicas=-1")
    assert done.returncode != 0
    assert (
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    ) in done.stderr
    done = kubectl("delete", "namespace", "kube-system")
    assert 'namespaces "kube-system" is forbidden: this namespace may not be deleted' in done.stderr
    manifest = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "a"}]},
        }
    )
    done = kubectl("apply", "-f", "-", stdin=manifest)
    assert done.returncode != 0
    assert "spec.containers[0].image: Required value" in done.stderr


def test_a_node_keeps_the_status_it_is_created_with(core: client.CoreV1Api) -> None:
    body = {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4", "memory": "8192Mi"}}}
    made = core.create_node(body)
    assert made.status.capacity == {"cpu": "4", "memory": "8Gi"}
