"""Discovery and OpenAPI documents, and the kubeconfig writer (pure functions,
no server)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._discovery import (
    core_versions_document,
    group_list_document,
    resource_list_document,
    version_document,
    version_sort_key,
)
from informers.testing.apiserver._kubeconfig import DUMMY_TOKEN, write_kubeconfig
from informers.testing.apiserver._openapi import openapi_v3_document, openapi_v3_index
from informers.wire.resources import BUILTIN_RESOURCES, CONFIGMAPS, DEPLOYMENTS, PODS, Resource

WIDGETS_V1 = Resource("example.com", "v1", "widgets", "Widget", short_names=("wd",))
WIDGETS_V2BETA1 = Resource("example.com", "v2beta1", "widgets", "Widget")
GADGETS = Resource("example.com", "v1", "gadgets", "Gadget", namespaced=False, categories=("toys",))
SERVED = (*BUILTIN_RESOURCES, WIDGETS_V2BETA1, WIDGETS_V1, GADGETS)


def test_version_document() -> None:
    doc = version_document()
    assert (doc["major"], doc["minor"]) == ("1", "32")
    assert doc["gitVersion"].startswith("v1.32.")
    assert "/" in doc["platform"]


def test_core_versions() -> None:
    assert core_versions_document()["versions"] == ["v1"]
    assert core_versions_document()["kind"] == "APIVersions"


def test_group_list_lists_every_group_with_its_preferred_version() -> None:
    doc = group_list_document(SERVED)
    assert doc["kind"] == "APIGroupList"
    groups = {g["name"]: g for g in doc["groups"]}
    assert "" not in groups
    assert set(groups) == {r.group for r in SERVED if r.group}
    example = groups["example.com"]
    assert [v["version"] for v in example["versions"]] == ["v1", "v2beta1"]
    assert example["preferredVersion"] == {"groupVersion": "example.com/v1", "version": "v1"}


def test_every_listed_group_version_resolves() -> None:
    for group in group_list_document(SERVED)["groups"]:
        for version in group["versions"]:
            doc = resource_list_document(version["groupVersion"], SERVED)
            assert doc is not None
            assert doc["groupVersion"] == version["groupVersion"]
            assert openapi_v3_document(version["groupVersion"], SERVED) is not None
    assert resource_list_document("v1", SERVED) is not None


def test_resource_list_entries() -> None:
    doc = resource_list_document("v1", SERVED)
    assert doc is not None
    assert doc["kind"] == "APIResourceList"
    pods = next(r for r in doc["resources"] if r["name"] == "pods")
    assert pods["singularName"] == "pod"
    assert pods["namespaced"] is True
    assert pods["kind"] == "Pod"
    assert pods["shortNames"] == ["po"]
    assert pods["categories"] == ["all"]
    assert set(pods["verbs"]) >= {"get", "list", "watch", "create", "patch", "delete"}
    namespaces = next(r for r in doc["resources"] if r["name"] == "namespaces")
    assert namespaces["namespaced"] is False
    assert "categories" not in namespaces
    secrets = next(r for r in doc["resources"] if r["name"] == "secrets")
    assert "shortNames" not in secrets


def test_custom_resources_in_their_group_version() -> None:
    doc = resource_list_document("example.com/v1", SERVED)
    assert doc is not None
    by_name = {r["name"]: r for r in doc["resources"]}
    assert set(by_name) == {"widgets", "gadgets"}
    assert by_name["gadgets"]["categories"] == ["toys"]
    assert by_name["widgets"]["shortNames"] == ["wd"]


def test_unknown_group_version_is_none() -> None:
    assert resource_list_document("nope/v1", SERVED) is None
    assert resource_list_document("v2", SERVED) is None
    assert openapi_v3_document("nope/v1", SERVED) is None


@given(st.lists(st.from_regex(r"v[1-9](?:(alpha|beta)[1-9])?", fullmatch=True), min_size=1))
def test_preferred_version_is_the_most_stable(versions: list[str]) -> None:
    served = [Resource("g.example", v, "things", "Thing") for v in versions]
    (group,) = group_list_document(served)["groups"]
    preferred = group["preferredVersion"]["version"]
    stable = [v for v in versions if v[1:].isdigit()]
    if stable:
        assert preferred == max(stable, key=lambda v: int(v[1:]))
    assert [v["version"] for v in group["versions"]] == sorted(set(versions), key=version_sort_key)


# ------------------------------------------------------------------ OpenAPI


def test_openapi_index_points_at_every_group_version() -> None:
    index = openapi_v3_index(SERVED)
    keys = set(index["paths"])
    assert {"api/v1", "apis/apps/v1", "apis/example.com/v1", "apis/example.com/v2beta1"} <= keys
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")


def test_openapi_hash_changes_with_the_document() -> None:
    before = openapi_v3_index(BUILTIN_RESOURCES)["paths"]
    after = openapi_v3_index(SERVED)["paths"]
    assert before["api/v1"] == after["api/v1"]
    assert openapi_v3_index([WIDGETS_V1])["paths"] != openapi_v3_index([GADGETS])["paths"]


def _patch_operations(doc: dict, kind: str) -> list[dict]:
    return [
        item["patch"]
        for item in doc["paths"].values()
        if "patch" in item and item["patch"]["x-kubernetes-group-version-kind"]["kind"] == kind
    ]


def test_every_kind_has_a_patch_operation_taking_field_validation() -> None:
    # This is what kubectl's --validate=strict looks for (QueryParamVerifierV3).
    for res in SERVED:
        doc = openapi_v3_document(res.group_version, SERVED)
        assert doc is not None
        operations = _patch_operations(doc, res.kind)
        assert operations, res
        for op in operations:
            gvk = op["x-kubernetes-group-version-kind"]
            assert gvk == {"group": res.group, "version": res.version, "kind": res.kind}
            assert "fieldValidation" in {p["name"] for p in op["parameters"]}


def test_openapi_paths_follow_the_resource_urls() -> None:
    doc = openapi_v3_document("apps/v1", SERVED)
    assert doc is not None
    assert f"{DEPLOYMENTS.api_prefix}/namespaces/{{namespace}}/deployments/{{name}}" in doc["paths"]
    core = openapi_v3_document("v1", SERVED)
    assert core is not None
    assert "/api/v1/namespaces/{name}" in core["paths"]
    assert f"{PODS.api_prefix}/namespaces/{{namespace}}/pods" in core["paths"]
    assert f"{CONFIGMAPS.api_prefix}/namespaces/{{namespace}}/configmaps/{{name}}" in core["paths"]


# ---------------------------------------------------------------- kubeconfig


def test_kubeconfig_is_valid_yaml_with_a_current_context(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "sub" / "config", "http://127.0.0.1:1234", namespace="ns")
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "kube-informers"
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == "http://127.0.0.1:1234"
    (user,) = config["users"]
    assert user["user"]["token"] == DUMMY_TOKEN
    (context,) = config["contexts"]
    assert context["context"] == {
        "cluster": "kube-informers",
        "user": "kube-informers",
        "namespace": "ns",
    }
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_kubeconfig_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("old")
    write_kubeconfig(path, "http://127.0.0.1:1")
    assert yaml.safe_load(path.read_text())["kind"] == "Config"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config"]


def test_status_subresources_of_built_in_kinds() -> None:
    core = resource_list_document("v1", SERVED)
    assert core is not None
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["pods/status"]["kind"] == "Pod"
    assert "configmaps/status" not in by_name
    apps = resource_list_document("apps/v1", SERVED)
    assert apps is not None
    assert "deployments/status" in {r["name"] for r in apps["resources"]}
    custom = resource_list_document("example.com/v1", SERVED)
    assert custom is not None
    assert all("/" not in r["name"] for r in custom["resources"])
