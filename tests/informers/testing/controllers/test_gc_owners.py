"""The garbage collector for owners of any kind: ConfigMaps, custom
resources, Deployments with children other than ReplicaSets; background,
foreground and orphan deletion (also through ``kubectl delete --cascade``);
dangling owner uids; namespace deletion not held up."""

from __future__ import annotations

from typing import Any

from controllers_helpers import Cluster
from kubernetes import client
from test_controllers_kubectl import Kubectl, env, kubectl_path  # noqa: F401 - fixtures

from informers.wire.resources import CONFIGMAPS, NAMESPACES, SECRETS, SERVICES, Resource
from tests.helpers import crd

WIDGETS = Resource("example.com", "v1", "widgets", "Widget")


def ref(owner: Any, *, block: bool = False) -> dict[str, Any]:
    meta = owner["metadata"] if isinstance(owner, dict) else owner.metadata.to_dict()
    kind = owner.get("kind") if isinstance(owner, dict) else owner.kind
    api_version = owner.get("apiVersion") if isinstance(owner, dict) else owner.api_version
    out = {"apiVersion": api_version, "kind": kind, "name": meta["name"], "uid": meta["uid"]}
    if block:
        out["blockOwnerDeletion"] = True
    return out


def configmap(name: str, *owners: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def install_widgets(api: client.ApiClient) -> client.CustomObjectsApi:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd())
    return client.CustomObjectsApi(api)


def widget(name: str, *owners: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owners:
        meta["ownerReferences"] = list(owners)
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta}


def names(items: list[dict[str, Any]]) -> set[str]:
    return {o["metadata"]["name"] for o in items}


def test_a_configmap_owner_takes_its_dependents_along(cluster: Cluster) -> None:
    core = client.CoreV1Api(cluster.client)
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    core.create_namespaced_config_map("default", configmap("child", ref(owner)))
    core.create_namespaced_secret(
        "default",
        {"metadata": {"name": "s", "ownerReferences": [ref(owner)]}, "data": {}},
    )
    cluster.until(CONFIGMAPS, lambda cms: {"owner", "child"} <= names(cms))
    core.delete_namespaced_config_map("owner", "default")
    cluster.until(CONFIGMAPS, lambda cms: not {"owner", "child"} & names(cms))
    cluster.until(SECRETS, lambda ss: "s" not in names(ss))


def test_a_dangling_owner_uid_is_collected_and_a_live_one_kept(cluster: Cluster) -> None:
    core = client.CoreV1Api(cluster.client)
    owner = core.create_namespaced_config_map("default", configmap("owner"))
    stale = {**ref(owner), "uid": "00000000-0000-0000-0000-000000000000"}
    core.create_namespaced_config_map("default", configmap("dangling", stale))
    core.create_namespaced_config_map("default", configmap("mixed", stale, ref(owner)))
    (mixed,) = [
        cm
        for cm in cluster.until(
            CONFIGMAPS,
            lambda cms: (
                "dangling" not in names(cms)
                and any(
                    c["metadata"]["name"] == "mixed" and len(c["metadata"]["ownerReferences"]) == 1
                    for c in cms
                )
            ),
        )
        if cm["metadata"]["name"] == "mixed"
    ]
    assert mixed["metadata"]["ownerReferences"][0]["uid"] == owner.metadata.uid


def test_a_custom_resource_owns_and_is_owned(cluster: Cluster) -> None:
    widgets = install_widgets(cluster.client)
    core = client.CoreV1Api(cluster.client)
    w = widgets.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w")
    )
    core.create_namespaced_config_map("default", configmap("of-widget", ref(w)))
    holder = core.create_namespaced_config_map("default", configmap("holder"))
    widgets.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("owned", ref(holder))
    )
    cluster.until(WIDGETS, lambda ws: names(ws) == {"w", "owned"})
    widgets.delete_namespaced_custom_object("example.com", "v1", "default", "widgets", "w")
    cluster.until(CONFIGMAPS, lambda cms: "of-widget" not in names(cms))
    core.delete_namespaced_config_map("holder", "default")
    cluster.until(WIDGETS, lambda ws: not ws)


def test_a_deployment_takes_children_of_any_kind(cluster: Cluster) -> None:
    apps = client.AppsV1Api(cluster.client)
    core = client.CoreV1Api(cluster.client)
    d = apps.create_namespaced_deployment(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        },
    )
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d.metadata.uid}
    core.create_namespaced_config_map("default", configmap("web-config", owner))
    core.create_namespaced_service(
        "default",
        {
            "metadata": {"name": "web", "ownerReferences": [owner]},
            "spec": {"ports": [{"port": 80}]},
        },
    )
    apps.delete_namespaced_deployment("web", "default")
    cluster.until(CONFIGMAPS, lambda cms: "web-config" not in names(cms))
    cluster.until(SERVICES, lambda ss: "web" not in names(ss))


def test_kubectl_cascade_foreground_and_orphan_for_configmap_and_cr_owners(
    env: tuple[Kubectl, Cluster],  # noqa: F811
) -> None:
    kubectl, cluster = env
    core = client.CoreV1Api(cluster.client)
    widgets = install_widgets(cluster.client)
    owner = core.create_namespaced_config_map("default", configmap("fg"))
    core.create_namespaced_config_map("default", configmap("fg-child", ref(owner, block=True)))
    out = kubectl("delete", "configmap", "fg", "--cascade=foreground", "--timeout=60s")
    assert 'configmap "fg" deleted' in out
    assert not {"fg", "fg-child"} & names(cluster.until(CONFIGMAPS, lambda cms: True))

    w = widgets.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w")
    )
    core.create_namespaced_config_map("default", configmap("kept", ref(w, block=True)))
    out = kubectl("delete", "widgets", "w", "--cascade=orphan", "--timeout=60s")
    assert 'widget.example.com "w" deleted' in out
    kept = [c for c in cluster.objects(CONFIGMAPS) if c["metadata"]["name"] == "kept"]
    assert kept
    cluster.until(
        CONFIGMAPS,
        lambda cms: any(
            c["metadata"]["name"] == "kept" and not c["metadata"].get("ownerReferences")
            for c in cms
        ),
    )

    w2 = widgets.create_namespaced_custom_object(
        "example.com", "v1", "default", "widgets", widget("w2")
    )
    core.create_namespaced_config_map("default", configmap("w2-child", ref(w2, block=True)))
    kubectl("delete", "widgets", "w2", "--cascade=foreground", "--timeout=60s")
    assert "w2-child" not in names(cluster.objects(CONFIGMAPS))


def test_namespace_deletion_is_not_held_by_gc_finalizers(cluster: Cluster) -> None:
    core = client.CoreV1Api(cluster.client)
    widgets = install_widgets(cluster.client)
    core.create_namespace({"metadata": {"name": "team"}})
    owner = core.create_namespaced_config_map("team", configmap("owner"))
    core.create_namespaced_config_map("team", configmap("child", ref(owner, block=True)))
    widgets.create_namespaced_custom_object("example.com", "v1", "team", "widgets", widget("w"))
    core.delete_namespaced_config_map("owner", "team", propagation_policy="Foreground")
    widgets.delete_namespaced_custom_object(
        "example.com", "v1", "team", "widgets", "w", propagation_policy="Orphan"
    )
    core.delete_namespace("team")
    cluster.until(NAMESPACES, lambda nss: "team" not in names(nss), namespace=None)


def test_a_namespace_goes_even_with_gc_finalizers_on_kinds_the_gc_does_not_watch(
    cluster: Cluster,
) -> None:
    core = client.CoreV1Api(cluster.client)
    coordination = client.CoordinationV1Api(cluster.client)
    core.create_namespace({"metadata": {"name": "team"}})
    coordination.create_namespaced_lease("team", {"metadata": {"name": "l"}, "spec": {}})
    coordination.delete_namespaced_lease("l", "team", propagation_policy="Foreground")
    assert coordination.read_namespaced_lease("l", "team").metadata.finalizers == [
        "foregroundDeletion"
    ]
    core.delete_namespace("team")
    cluster.until(NAMESPACES, lambda nss: "team" not in names(nss), namespace=None)


def test_a_namespace_empties_kinds_defined_after_the_controller_started(
    cluster: Cluster,
) -> None:
    core = client.CoreV1Api(cluster.client)
    core.create_namespace({"metadata": {"name": "early"}})
    core.delete_namespace("early")  # the namespace controller discovers the kinds
    cluster.until(NAMESPACES, lambda nss: "early" not in names(nss), namespace=None)
    widgets = install_widgets(cluster.client)
    core.create_namespace({"metadata": {"name": "team"}})
    widgets.create_namespaced_custom_object("example.com", "v1", "team", "widgets", widget("w"))
    core.delete_namespace("team")
    cluster.until(NAMESPACES, lambda nss: "team" not in names(nss), namespace=None)
    assert cluster.objects(WIDGETS, namespace="team") == []
