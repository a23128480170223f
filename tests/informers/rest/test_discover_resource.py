"""informers.rest.discovery: resolving resource names from the server's discovery
documents, against crafted documents (a scripted server) and the emulator.

(Named for the function: testing/apiserver/test_discovery.py tests the
emulator's own discovery documents.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from scripted_http import Script, j, serve

from informers.errors import ApiError, NotFoundError
from informers.rest.discovery import discover_resource
from informers.rest.transport import ApiClientTransport
from informers.testing import ApiServer
from informers.wire.resources import CONFIGMAPS, DEPLOYMENTS, LEASES, PODS, Resource


@pytest.fixture
def server() -> Iterator[tuple[Script, Any]]:
    with serve() as running:
        yield running


def test_discovery_resolves_core_group_and_crds(server: tuple[Script, Any]) -> None:
    script, client = server
    script.responses["/apis"] = (
        200,
        {},
        [
            j(
                {
                    "groups": [
                        {
                            "name": "apps",
                            "preferredVersion": {"version": "v1"},
                            "versions": [{"version": "v1"}],
                        },
                        {"name": "example.com", "versions": [{"version": "v1beta1"}]},
                    ]
                }
            )
        ],
    )
    script.responses["/api/v1"] = (
        200,
        {},
        [
            j(
                {
                    "resources": [
                        {
                            "name": "pods",
                            "singularName": "pod",
                            "namespaced": True,
                            "kind": "Pod",
                            "shortNames": ["po"],
                        },
                        {"name": "pods/status", "namespaced": True, "kind": "Pod"},
                    ]
                }
            )
        ],
    )
    script.responses["/apis/apps/v1"] = (
        200,
        {},
        [j({"resources": [{"name": "deployments", "namespaced": True, "kind": "Deployment"}]})],
    )
    script.responses["/apis/example.com/v1beta1"] = (
        200,
        {},
        [
            j(
                {
                    "resources": [
                        {"name": "foos", "singularName": "foo", "namespaced": False, "kind": "Foo"}
                    ]
                }
            )
        ],
    )
    assert discover_resource(client, "po") == Resource(
        "", "v1", "pods", "Pod", singular="pod", short_names=("po",), verbs=()
    )
    assert discover_resource(client, "deployments.apps").kind == "Deployment"
    foo = discover_resource(client, "foo")
    assert (foo.group, foo.version, foo.plural, foo.namespaced) == (
        "example.com",
        "v1beta1",
        "foos",
        False,
    )
    with pytest.raises(ApiError) as info:
        discover_resource(client, "bars.example.com")
    assert info.value.status == 404


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pods", PODS),
        ("po", PODS),
        ("Pod", PODS),
        ("pod", PODS),
        ("configmaps", CONFIGMAPS),
        ("cm", CONFIGMAPS),
        ("deployments.apps", DEPLOYMENTS),
        ("deploy", DEPLOYMENTS),
        ("leases.coordination.k8s.io", LEASES),
    ],
)
def test_discovery_against_the_emulator(
    api_server: ApiServer, name: str, expected: Resource
) -> None:
    with api_server.api_client() as client:
        got = discover_resource(client, name)
    assert (got.group, got.version, got.plural, got.kind, got.namespaced) == (
        expected.group,
        expected.version,
        expected.plural,
        expected.kind,
        expected.namespaced,
    )


def test_discovery_through_a_transport_and_unknown_names(api_server: ApiServer) -> None:
    with api_server.api_client() as client:
        transport = ApiClientTransport(client)
        assert discover_resource(transport, "configmaps").kind == "ConfigMap"
        for name in ("nosuchthings", "pods.nosuch.group", ""):
            with pytest.raises(NotFoundError) as info:
                discover_resource(transport, name)
            assert isinstance(info.value, ApiError)
            assert info.value.status == 404
