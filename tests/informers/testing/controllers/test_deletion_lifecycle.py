"""The emulator's deletion lifecycle switch, without controllers: what the
garbage collector and the namespace controller are handed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from informers.errors import ApiError
from informers.testing import ApiServer
from informers.testing.controllers import JsonApi
from informers.wire.resources import CONFIGMAPS, NAMESPACES


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer() as api:
        yield api


def names(server: ApiServer, resource: Any, namespace: str | None = None) -> set[str]:
    return {o["metadata"]["name"] for o in server.list_objects(resource, namespace=namespace)}


def test_off_by_default_the_policy_is_ignored(server: ApiServer) -> None:
    assert server.deletion_lifecycle is False
    server.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "default"}})
    with server.api_client() as api_client:
        client.CoreV1Api(api_client).delete_namespaced_config_map(
            "c", "default", propagation_policy="Foreground"
        )
    assert "c" not in names(server, CONFIGMAPS, "default")


@pytest.mark.parametrize(
    ("policy", "finalizer"), [("Foreground", "foregroundDeletion"), ("Orphan", "orphan")]
)
def test_a_policy_adds_its_finalizer(server: ApiServer, policy: str, finalizer: str) -> None:
    server.deletion_lifecycle = True
    server.create(
        CONFIGMAPS, {"metadata": {"name": "c", "namespace": "default", "finalizers": ["x/keep"]}}
    )
    with server.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        answer = core.delete_namespaced_config_map("c", "default", propagation_policy=policy)
        assert answer["metadata"]["finalizers"] == ["x/keep", finalizer]
        assert answer["metadata"]["deletionTimestamp"]
        core.patch_namespaced_config_map("c", "default", {"metadata": {"finalizers": None}})
    assert "c" not in names(server, CONFIGMAPS, "default")


def test_background_adds_nothing(server: ApiServer) -> None:
    server.deletion_lifecycle = True
    server.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "default"}})
    with server.api_client() as api_client:
        client.CoreV1Api(api_client).delete_namespaced_config_map(
            "c", "default", propagation_policy="Background"
        )
    assert "c" not in names(server, CONFIGMAPS, "default")


def test_a_namespace_terminates_until_finalized(server: ApiServer) -> None:
    server.deletion_lifecycle = True
    server.create(NAMESPACES, {"metadata": {"name": "team"}})
    server.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "team"}})
    with server.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        core.delete_namespace("team")
        ns = server.get(NAMESPACES, "team")
        assert ns["status"]["phase"] == "Terminating"
        assert ns["metadata"]["deletionTimestamp"]
        assert names(server, CONFIGMAPS, "team") == {"c"}  # left to the controller
        core.delete_namespace("team")  # again: still terminating, nothing new
        assert (
            server.get(NAMESPACES, "team")["metadata"]["resourceVersion"]
            == ns["metadata"]["resourceVersion"]
        )
        body = {"metadata": {"name": "team"}, "spec": {"finalizers": []}}
        done = core.replace_namespace_finalize("team", body)
        assert done.spec.finalizers in (None, [])
    assert "team" not in names(server, NAMESPACES)


def test_finalize_answers_only_put(server: ApiServer) -> None:
    with server.api_client() as api_client, pytest.raises(ApiError) as info:
        JsonApi(api_client).request("GET", "/api/v1/namespaces/default/finalize")
    assert info.value.status == 405
