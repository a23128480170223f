"""A served CRD version's schema in the OpenAPI documents (v3 per
group-version, and v2), so that ``kubectl explain`` works for custom
resources as it does on a cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest
import urllib3
from kubernetes import client
from test_kubectl import Kubectl, kubectl, kubectl_path  # noqa: F401 - the fixtures

from informers.testing import ApiServer
from informers.testing.apiserver._crd.openapi import rest_friendly_name
from tests.helpers import crd

GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"
NAME = rest_friendly_name(GROUP, VERSION, "Widget")


def documented_crd() -> dict[str, Any]:
    spec = {
        "type": "object",
        "description": "What the widget should be.",
        "properties": {
            "count": {
                "type": "integer",
                "minimum": 0,
                "description": "How many widgets to build.",
            },
            "color": {"type": "string"},
            "note": {"type": "string", "nullable": True},
        },
    }
    schema = {
        "type": "object",
        "description": "Widget is a thing the example operator builds.",
        "properties": {"spec": spec, "status": {"type": "object"}},
    }
    return crd(PLURAL, "Widget", group=GROUP, schema={"openAPIV3Schema": schema})


def fetch(server: ApiServer, path: str) -> tuple[int, Any]:
    http = urllib3.PoolManager()
    try:
        response = http.request("GET", f"{server.url}{path}", timeout=10)
    finally:
        http.clear()
    return response.status, json.loads(response.data) if response.status == 200 else None


@pytest.fixture
def with_crd(api: client.ApiClient) -> None:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(documented_crd())


@pytest.mark.usefixtures("with_crd")
def test_the_v3_document_of_the_group_version_has_the_schemas(server: ApiServer) -> None:
    _, index = fetch(server, "/openapi/v3")
    url = index["paths"][f"apis/{GROUP}/{VERSION}"]["serverRelativeURL"]
    status, document = fetch(server, url)
    assert status == 200
    schemas = document["components"]["schemas"]
    widget = schemas[NAME]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "Widget", "version": VERSION}
    ]
    assert widget["description"] == "Widget is a thing the example operator builds."
    assert widget["properties"]["spec"]["properties"]["count"]["minimum"] == 0
    ref = widget["properties"]["metadata"]["allOf"][0]["$ref"]
    assert ref == "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert ref.rsplit("/", 1)[1] in schemas  # the document is self-contained
    listing = schemas[f"{NAME}List"]
    assert listing["properties"]["items"]["items"] == {"$ref": f"#/components/schemas/{NAME}"}
    assert listing["x-kubernetes-group-version-kind"][0]["kind"] == "WidgetList"


@pytest.mark.usefixtures("with_crd")
def test_the_v2_document_has_the_definitions(server: ApiServer) -> None:
    status, document = fetch(server, "/openapi/v2")
    assert status == 200
    widget = document["definitions"][NAME]
    assert widget["properties"]["metadata"]["$ref"] == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert "nullable" not in widget["properties"]["spec"]["properties"]["note"]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in document["definitions"]


def test_a_changed_or_deleted_crd_changes_the_documents(
    server: ApiServer, api: client.ApiClient
) -> None:
    extensions = client.ApiextensionsV1Api(api)
    extensions.create_custom_resource_definition(documented_crd())
    _, index = fetch(server, "/openapi/v3")
    before = index["paths"][f"apis/{GROUP}/{VERSION}"]["serverRelativeURL"]
    patch = [
        {
            "op": "add",
            "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size",
            "value": {"type": "string"},
        }
    ]
    extensions.patch_custom_resource_definition(f"{PLURAL}.{GROUP}", patch)
    _, index = fetch(server, "/openapi/v3")
    after = index["paths"][f"apis/{GROUP}/{VERSION}"]["serverRelativeURL"]
    assert after != before  # clients cache by the hash in the URL
    _, document = fetch(server, after)
    assert "size" in document["components"]["schemas"][NAME]["properties"]["spec"]["properties"]
    extensions.delete_custom_resource_definition(f"{PLURAL}.{GROUP}")
    _, index = fetch(server, "/openapi/v3")
    assert f"apis/{GROUP}/{VERSION}" not in index["paths"]
    _, document = fetch(server, "/openapi/v2")
    assert NAME not in document["definitions"]


@pytest.mark.usefixtures("with_crd")
def test_kubectl_explain_a_custom_resource(kubectl: Kubectl) -> None:  # noqa: F811
    top = kubectl.run("explain", PLURAL)
    assert "KIND:       Widget" in top
    assert f"VERSION:    {VERSION}" in top
    assert "Widget is a thing the example operator builds." in top
    assert "spec\t<Object>" in top
    assert "metadata\t<ObjectMeta>" in top
    spec = kubectl.run("explain", f"{PLURAL}.spec")
    assert "FIELD: spec <Object>" in spec
    assert "What the widget should be." in spec
    assert "count\t<integer>" in spec
    assert "How many widgets to build." in spec
    count = kubectl.run("explain", f"{PLURAL}.spec.count")
    assert "FIELD: count <integer>" in count
    recursive = kubectl.run("explain", PLURAL, "--recursive")
    assert "color\t<string>" in recursive
    meta = kubectl.run("explain", f"{PLURAL}.metadata.name")
    assert "FIELD: name <string>" in meta
