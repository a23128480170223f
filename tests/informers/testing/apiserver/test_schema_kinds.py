"""Every built-in kind the client's models cover is served with plain
storage: discovery (legacy and through kubectl) names them with their scope,
short names and subresources, ``GET /apis/<group>`` answers, and each can be
created, read and deleted, DELETE answering as the real registry does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client, utils

from informers.testing.apiserver import ApiServer
from informers.testing.apiserver._schema.kinds import (
    ALL_BUILTINS,
    EXTRA_RESOURCES,
    RETURNS_OBJECT_ON_DELETE,
    has_status,
)
from informers.wire.resources import Resource
from tests.helpers import crd

KUBECTL = shutil.which("kubectl")

_SELECTOR = {"matchLabels": {"app": "web"}}
_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]

#: A valid body (beyond metadata) for each served kind, by plural.
BODIES: dict[str, dict[str, Any]] = {
    "limitranges": {"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}},
    "persistentvolumes": {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/pv"},
        }
    },
    "podtemplates": {"template": _TEMPLATE},
    "resourcequotas": {"spec": {"hard": {"pods": "10"}}},
    "mutatingwebhookconfigurations": {},
    "validatingwebhookconfigurations": {},
    "validatingadmissionpolicies": {
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["deployments"],
                    }
                ]
            },
            "validations": [{"expression": "object.spec.replicas <= 5"}],
        }
    },
    "validatingadmissionpolicybindings": {
        "spec": {"policyName": "p", "validationActions": ["Deny"]}
    },
    "apiservices": {
        "spec": {
            "group": "metrics.example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
            "service": {"namespace": "default", "name": "metrics"},
            "insecureSkipTLSVerify": True,
        }
    },
    "controllerrevisions": {"revision": 1, "data": {"spec": {}}},
    "horizontalpodautoscalers": {
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1,
            "maxReplicas": 3,
        }
    },
    "certificatesigningrequests": {
        "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
            "signerName": "example.com/signer",
            "usages": ["digital signature"],
        }
    },
    "events": {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Scaled",
        "reason": "Scaled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
    },
    "flowschemas": {
        "spec": {
            "priorityLevelConfiguration": {"name": "global-default"},
            "matchingPrecedence": 500,
        }
    },
    "prioritylevelconfigurations": {
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5}}
    },
    "ingressclasses": {"spec": {"controller": "example.com/ingress"}},
    "networkpolicies": {"spec": {"podSelector": {}, "policyTypes": ["Ingress"]}},
    "runtimeclasses": {"handler": "runc"},
    "poddisruptionbudgets": {"spec": {"minAvailable": 1, "selector": _SELECTOR}},
    "clusterrolebindings": {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"}],
    },
    "clusterroles": {"rules": _RULES},
    "rolebindings": {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}],
    },
    "roles": {"rules": _RULES},
    "priorityclasses": {"value": 1000, "description": "high"},
    "csidrivers": {"spec": {"attachRequired": False}},
    "csinodes": {"spec": {"drivers": []}},
    "csistoragecapacities": {"storageClassName": "fast", "capacity": "10Gi"},
    "storageclasses": {"provisioner": "example.com/disk"},
    "volumeattachments": {
        "spec": {
            "attacher": "example.com/disk",
            "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv-1"},
        }
    },
}


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def _object(res: Resource, name: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": {"name": name},
    }
    body.update(json.loads(json.dumps(BODIES[res.plural])))
    return body


def test_every_extra_kind_has_a_body() -> None:
    assert {res.plural for res in EXTRA_RESOURCES} == set(BODIES)


@pytest.mark.parametrize("res", EXTRA_RESOURCES, ids=lambda r: f"{r.plural}.{r.group}/{r.version}")
def test_create_get_delete_each_kind(
    server: ApiServer, http: urllib3.PoolManager, res: Resource
) -> None:
    collection = f"{server.url}{res.collection_path('default')}"
    created = http.request(
        "POST",
        f"{collection}?fieldValidation=Strict",
        body=json.dumps(_object(res, "one")).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert created.status == 201, created.data
    assert "Warning" not in created.headers
    got = http.request("GET", f"{collection}/one")
    assert got.status == 200
    obj = json.loads(got.data)
    assert (obj["kind"], obj["apiVersion"]) == (res.kind, res.api_version)
    listed = json.loads(http.request("GET", collection).data)
    assert listed["kind"] == res.list_kind
    assert [item["metadata"]["name"] for item in listed["items"]] == ["one"]
    deleted = http.request("DELETE", f"{collection}/one")
    assert deleted.status == 200
    answer = json.loads(deleted.data)
    if (res.group, res.plural) in RETURNS_OBJECT_ON_DELETE:
        assert answer["kind"] == res.kind
    else:
        assert answer["kind"] == "Status"
        assert answer["status"] == "Success"
        assert answer["details"]["name"] == "one"
        assert deleted.data.endswith(b"}\n")
    assert http.request("GET", f"{collection}/one").status == 404


def test_get_group_answers_the_api_group(server: ApiServer, http: urllib3.PoolManager) -> None:
    groups = {res.group for res in ALL_BUILTINS if res.group}
    for group in groups:
        response = http.request("GET", f"{server.url}/apis/{group}")
        assert response.status == 200, group
        document = json.loads(response.data)
        assert document["kind"] == "APIGroup"
        assert document["name"] == group
        assert document["preferredVersion"]["groupVersion"].startswith(group + "/")
    autoscaling = json.loads(http.request("GET", f"{server.url}/apis/autoscaling").data)
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]
    assert http.request("GET", f"{server.url}/apis/nothing.example.com").status == 404


def test_discovery_names_status_subresources(server: ApiServer, http: urllib3.PoolManager) -> None:
    for res in EXTRA_RESOURCES:
        document = json.loads(http.request("GET", f"{server.url}{res.api_prefix}").data)
        names = {entry["name"]: entry for entry in document["resources"]}
        entry = names[res.plural]
        assert entry["namespaced"] is res.namespaced
        assert entry.get("shortNames", []) == list(res.short_names)
        assert (f"{res.plural}/status" in names) is has_status(res), res


def test_custom_resource_status_subresource_is_discovered(
    server: ApiServer, http: urllib3.PoolManager
) -> None:
    server.register_resource(
        Resource("example.com", "v1", "widgets", "Widget"), status_subresource=True
    )
    document = json.loads(http.request("GET", f"{server.url}/apis/example.com/v1").data)
    assert [r["name"] for r in document["resources"]] == ["widgets", "widgets/status"]


def test_service_delete_answers_the_service(server: ApiServer) -> None:
    api = server.api_client()
    try:
        core = client.CoreV1Api(api)
        core.create_namespaced_service(
            "default",
            {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}},
        )
        deleted = core.delete_namespaced_service("web", "default")
        assert isinstance(deleted, client.V1Service)
        assert deleted.metadata.name == "web"
        assert deleted.spec.ports[0].port == 80
        core.create_namespaced_config_map("default", {"metadata": {"name": "c"}})
        answer = core.delete_namespaced_config_map("c", "default")
        # Typed V1Status or a plain dict, depending on the client's version.
        status = answer.status if isinstance(answer, client.V1Status) else answer["status"]
        assert status == "Success"
    finally:
        api.close()


def test_delete_held_by_finalizers_answers_the_object(
    server: ApiServer, http: urllib3.PoolManager
) -> None:
    server.create("configmaps", {"metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    response = http.request("DELETE", f"{server.url}/api/v1/namespaces/default/configmaps/held")
    assert response.status == 200
    answer = json.loads(response.data)
    assert answer["kind"] == "ConfigMap"
    assert answer["metadata"]["deletionTimestamp"]


def test_error_body_bytes(server: ApiServer, http: urllib3.PoolManager) -> None:
    response = http.request("GET", f"{server.url}/api/v1/namespaces/default/configmaps/none")
    assert response.status == 404
    assert response.data == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"none\\" not found","reason":"NotFound",'
        b'"details":{"name":"none","kind":"configmaps"},"code":404}\n'
    )
    server.create("configmaps", {"metadata": {"name": "dup"}})
    again = http.request(
        "POST",
        f"{server.url}/api/v1/namespaces/default/configmaps",
        body=b'{"metadata":{"name":"dup"}}',
        headers={"Content-Type": "application/json"},
    )
    assert again.data.endswith(b'"code":409}\n')
    assert list(json.loads(again.data)) == [
        "kind",
        "apiVersion",
        "metadata",
        "status",
        "message",
        "reason",
        "details",
        "code",
    ]


def test_create_from_yaml(server: ApiServer, tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    docs = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "app"}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "app"},
            "rules": _RULES,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "app"},
            **BODIES["rolebindings"],
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "app"},
            **BODIES["poddisruptionbudgets"],
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "app"},
            **BODIES["priorityclasses"],
        },
    ]
    manifest.write_text("\n---\n".join(json.dumps(doc) for doc in docs))
    api = server.api_client()
    try:
        created = utils.create_from_yaml(api, str(manifest), namespace="default")
    finally:
        api.close()
    assert len(created) == len(docs)
    assert server.get("roles", "app")["rules"] == _RULES
    assert server.get("poddisruptionbudgets", "app")["spec"]["minAvailable"] == 1
    assert server.get("priorityclasses", "app")["value"] == 1000


@pytest.fixture
def kubectl(server: ApiServer, tmp_path: Path) -> Any:
    if KUBECTL is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the kubectl tests")
        pytest.skip("kubectl is not on PATH")
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(tmp_path / "c")}

    def run(*args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [str(KUBECTL), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout

    return run


@pytest.mark.kubectl
def test_kubectl_api_resources_lists_every_kind(kubectl: Any) -> None:
    lines = kubectl("api-resources", "--no-headers", "-o", "wide").splitlines()
    names = {line.split()[0] for line in lines}
    assert {res.plural for res in ALL_BUILTINS} <= names
    by_name = {line.split()[0]: line.split() for line in lines}
    assert by_name["poddisruptionbudgets"][1:4] == ["pdb", "policy/v1", "true"]
    assert by_name["clusterroles"][1:3] == ["rbac.authorization.k8s.io/v1", "false"]


@pytest.mark.kubectl
@pytest.mark.parametrize(
    "plural", ["roles", "clusterrolebindings", "poddisruptionbudgets", "storageclasses"]
)
def test_kubectl_create_get_delete(kubectl: Any, plural: str) -> None:
    res = next(r for r in EXTRA_RESOURCES if r.plural == plural)
    kubectl("create", "-f", "-", stdin=json.dumps(_object(res, "k")))
    got = json.loads(kubectl("get", f"{res.plural}.{res.group}", "k", "-o", "json"))
    assert got["kind"] == res.kind
    assert "deleted" in kubectl("delete", f"{res.plural}.{res.group}", "k")


#: Imperative creates (kubectl sends these as protobuf) and what they store.
IMPERATIVE = [
    (
        ("create", "role", "r", "--verb=get,list", "--resource=pods", "--resource-name=x"),
        "roles.rbac.authorization.k8s.io/r",
        {
            "rules": [
                {
                    "apiGroups": [""],
                    "resourceNames": ["x"],
                    "resources": ["pods"],
                    "verbs": ["get", "list"],
                }
            ]
        },
    ),
    (
        ("create", "clusterrole", "agg", "--aggregation-rule=a=b"),
        "clusterroles.rbac.authorization.k8s.io/agg",
        {"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}},
    ),
    (
        ("create", "rolebinding", "rb", "--role=r", "--serviceaccount=default:default"),
        "rolebindings.rbac.authorization.k8s.io/rb",
        {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}],
        },
    ),
    (
        ("create", "clusterrolebinding", "crb", "--clusterrole=c", "--user=al"),
        "clusterrolebindings.rbac.authorization.k8s.io/crb",
        {
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "c",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "al"}],
        },
    ),
    (
        ("create", "priorityclass", "lo", "--value=-5", "--preemption-policy=Never"),
        "priorityclasses.scheduling.k8s.io/lo",
        {"value": -5, "preemptionPolicy": "Never"},
    ),
    (
        ("create", "pdb", "p", "--selector=a=b", "--max-unavailable=50%"),
        "poddisruptionbudgets.policy/p",
        {"spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"a": "b"}}}},
    ),
    (
        ("create", "quota", "q", "--hard=pods=10,cpu=1.5", "--scopes=BestEffort"),
        "resourcequotas/q",
        {"spec": {"hard": {"cpu": "1500m", "pods": "10"}, "scopes": ["BestEffort"]}},
    ),
]


@pytest.mark.kubectl
@pytest.mark.parametrize(("args", "name", "fields"), IMPERATIVE, ids=lambda v: str(v)[:30])
def test_kubectl_imperative_create(
    kubectl: Any, args: tuple[str, ...], name: str, fields: dict[str, Any]
) -> None:
    kubectl(*args)
    got = json.loads(kubectl("get", name, "-o", "json"))
    for key, value in fields.items():
        assert got[key] == value


_AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_aggregated_discovery(server: ApiServer, http: urllib3.PoolManager) -> None:
    server.register_resource(
        Resource("example.com", "v1", "widgets", "Widget", short_names=("wd",)),
        status_subresource=True,
    )
    documents = []
    for path in ("/api", "/apis"):
        response = http.request(
            "GET", f"{server.url}{path}", headers={"Accept": f"{_AGGREGATED},application/json"}
        )
        assert response.headers["Content-Type"] == _AGGREGATED
        document = json.loads(response.data)
        assert document["kind"] == "APIGroupDiscoveryList"
        assert document["apiVersion"] == "apidiscovery.k8s.io/v2"
        documents.append(document)
    assert [item["metadata"]["name"] for item in documents[0]["items"]] == [""]
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for document in documents:
        for item in document["items"]:
            for version in item["versions"]:
                for entry in version["resources"]:
                    found[(item["metadata"]["name"], version["version"], entry["resource"])] = entry
    for res in ALL_BUILTINS:
        entry = found[(res.group, res.version, res.plural)]
        assert entry["scope"] == ("Namespaced" if res.namespaced else "Cluster")
        assert entry["responseKind"]["kind"] == res.kind
        assert entry.get("shortNames", []) == list(res.short_names)
    subresources = {s["subresource"] for s in found[("apps", "v1", "deployments")]["subresources"]}
    assert subresources == {"status", "scale"}
    widget = found[("example.com", "v1", "widgets")]
    assert widget["shortNames"] == ["wd"]
    assert [s["subresource"] for s in widget["subresources"]] == ["status"]
    assert "subresources" not in found[("rbac.authorization.k8s.io", "v1", "roles")]
    autoscaling = next(i for i in documents[1]["items"] if i["metadata"]["name"] == "autoscaling")
    assert [v["version"] for v in autoscaling["versions"]] == ["v2", "v1"]


def test_core_and_events_k8s_io_events_are_one_storage(
    server: ApiServer, http: urllib3.PoolManager
) -> None:
    core = server.create(
        "events",
        {
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
            "reason": "Started",
            "message": "started",
            "type": "Normal",
            "count": 2,
        },
        "default",
    )
    v1_url = f"{server.url}/apis/events.k8s.io/v1/namespaces/default/events"
    seen = json.loads(http.request("GET", f"{v1_url}/e1").data)
    assert seen["apiVersion"] == "events.k8s.io/v1"
    assert seen["note"] == "started"
    assert seen["regarding"]["name"] == "web"
    assert seen["deprecatedCount"] == 2
    assert seen["metadata"]["uid"] == core["metadata"]["uid"]
    assert seen["metadata"]["resourceVersion"] == core["metadata"]["resourceVersion"]
    created = http.request(
        "POST",
        v1_url,
        body=json.dumps({"metadata": {"name": "e2"}, **BODIES["events"]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert created.status == 201
    as_core = server.get("events", "e2", "default")
    assert as_core["involvedObject"]["name"] == "p"
    assert as_core["reportingComponent"] == "example.com/ctl"
    assert as_core["action"] == "Scaled"
    assert http.request("DELETE", f"{v1_url}/e2").status == 200
    assert [e["metadata"]["name"] for e in server.list_objects("events", "default")] == ["e1"]


def test_custom_resource_subresources_are_discovered_from_the_crd(
    server: ApiServer, http: urllib3.PoolManager
) -> None:
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    server.create(
        "customresourcedefinitions",
        crd("gadgets", "Gadget", subresources={"status": {}, "scale": scale}),
    )
    legacy = json.loads(http.request("GET", f"{server.url}/apis/example.com/v1").data)
    assert [r["name"] for r in legacy["resources"]] == [
        "gadgets",
        "gadgets/status",
        "gadgets/scale",
    ]
    aggregated = json.loads(
        http.request("GET", f"{server.url}/apis", headers={"Accept": _AGGREGATED}).data
    )
    (item,) = [i for i in aggregated["items"] if i["metadata"]["name"] == "example.com"]
    (entry,) = item["versions"][0]["resources"]
    assert [s["subresource"] for s in entry["subresources"]] == ["status", "scale"]


def test_create_from_yaml_with_apply(server: ApiServer) -> None:
    docs = [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "app"},
            "rules": _RULES,
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "app"},
            **BODIES["poddisruptionbudgets"],
        },
    ]
    api = server.api_client()
    try:
        utils.create_from_yaml(api, yaml_objects=docs, namespace="default", apply=True)
        docs[0]["rules"] = [{**_RULES[0], "verbs": ["get", "list"]}]
        utils.create_from_yaml(api, yaml_objects=docs, namespace="default", apply=True)
    finally:
        api.close()
    role = server.get("roles", "app")
    assert role["rules"][0]["verbs"] == ["get", "list"]
    assert [e["operation"] for e in role["metadata"]["managedFields"]] == ["Apply"]
    assert server.get("poddisruptionbudgets", "app")["spec"]["minAvailable"] == 1
