"""SharedInformerFactory and discovery against the emulator."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from informers.cache.factory import SharedInformerFactory
from informers.cache.informer import ResourceEventHandlerFuncs
from informers.cache.reflector import ReflectorConfig
from informers.errors import (
    ApiError,
    CacheSyncTimeoutError,
    InformerStateError,
    UnknownResourceError,
)
from informers.rest.listwatch import ListOptions, discover_resource
from informers.testing import ApiServer
from informers.wire.resources import CONFIGMAPS, DEPLOYMENTS, PODS, Resource
from tests.helpers import POD_SPEC


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def test_factory_shares_informers_and_syncs(api_server: ApiServer, client: Any) -> None:
    api_server.create(
        PODS, {"metadata": {"name": "a", "labels": {"app": "web"}}, "spec": dict(POD_SPEC)}
    )
    api_server.create(CONFIGMAPS, {"metadata": {"name": "c"}})
    factory = SharedInformerFactory(client)
    try:
        pods = factory.pods()
        assert factory.for_resource(PODS) is pods
        cms = factory.configmaps()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10)
        assert [p["metadata"]["name"] for p in factory.lister(PODS).list("app=web")] == ["a"]
        assert factory.lister(CONFIGMAPS).namespace("default").get("c") is not None
        assert cms.has_synced()
        # an informer requested after start is started by the next start()
        deployments = factory.deployments()
        assert not deployments.has_synced()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10)
    finally:
        factory.shutdown()
    assert all(i.is_stopped() for i in factory.informers().values())
    with pytest.raises(InformerStateError):
        factory.pods()


def test_factory_namespace_tweak_and_transform(api_server: ApiServer, client: Any) -> None:
    api_server.create(
        PODS, {"metadata": {"name": "a", "labels": {"keep": "yes"}}, "spec": dict(POD_SPEC)}
    )
    api_server.create(PODS, {"metadata": {"name": "b"}, "spec": dict(POD_SPEC)})
    api_server.create(
        PODS, {"metadata": {"name": "k", "namespace": "kube-system"}, "spec": dict(POD_SPEC)}
    )

    def tweak(options: ListOptions) -> ListOptions:
        return replace(options, label_selector="keep=yes")

    def strip(obj: Any) -> Any:
        return {"metadata": obj["metadata"], "stripped": True}

    factory = SharedInformerFactory(
        client, namespace="default", tweak_list_options=tweak, transform=strip
    )
    try:
        pods = factory.pods()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10)
        objs = pods.get_store().list()
        assert [o["metadata"]["name"] for o in objs] == ["a"]
        assert objs[0]["stripped"]
    finally:
        factory.shutdown()


def test_wait_for_cache_sync_says_why(api_server: ApiServer, client: Any) -> None:
    api_server.fail_next(1000, 403, path_prefix="/api/v1/pods")
    reported = threading.Event()
    factory = SharedInformerFactory(client)
    try:
        pods = factory.pods()
        pods.set_watch_error_handler(lambda r, e: reported.set())
        factory.start()
        assert reported.wait(10)
        with pytest.raises(CacheSyncTimeoutError) as raised:
            factory.wait_for_cache_sync(timeout=0.2)
        not_synced = raised.value.not_synced
        assert list(not_synced) == ["pods"]  # keyed by the short name
        assert "403" in not_synced["pods"]
        assert "403" in str(raised.value)
        assert factory.unsynced() == not_synced  # the report, without waiting
    finally:
        api_server.clear_faults()
        factory.shutdown()


def test_handlers_on_factory_informer(api_server: ApiServer, client: Any) -> None:
    api_server.create(PODS, {"metadata": {"name": "a"}, "spec": dict(POD_SPEC)})
    seen: list[str] = []
    factory = SharedInformerFactory(client, reflector_config=None)
    try:
        reg = factory.pods().add_event_handler(
            ResourceEventHandlerFuncs(add_func=lambda o: seen.append(o["metadata"]["name"]))
        )
        factory.start()
        assert reg.wait_synced(10)
        assert seen == ["a"]
    finally:
        factory.shutdown()


def test_discovery_against_the_emulator(api_server: ApiServer, client: Any) -> None:
    assert discover_resource(client, "po").plural == "pods"
    deploy = discover_resource(client, "deployments.apps")
    assert (deploy.group, deploy.version, deploy.kind) == ("apps", "v1", "Deployment")
    assert discover_resource(client, "deploy") == deploy
    crd = Resource("example.com", "v1", "widgets", "Widget", namespaced=False)
    api_server.register_resource(crd)
    found = discover_resource(client, "widgets.example.com")
    assert (found.group, found.version, found.kind, found.namespaced) == (
        "example.com",
        "v1",
        "Widget",
        False,
    )
    with pytest.raises(ApiError):
        discover_resource(client, "nothings")
    assert DEPLOYMENTS.plural == deploy.plural


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("pods", PODS),
        ("pod", PODS),
        ("po", PODS),
        ("Pod", PODS),
        ("deployments.apps", DEPLOYMENTS),
        ("deploy", DEPLOYMENTS),
        (PODS, PODS),
    ],
)
def test_for_resource_accepts_what_kubectl_accepts(
    client: Any, name: str | Resource, expected: Resource
) -> None:
    factory = SharedInformerFactory(client)
    try:
        assert factory.for_resource(name) is factory.for_resource(expected)
        assert factory.lister(name) is not None
    finally:
        factory.shutdown()


def test_for_resource_discovers_custom_resources(api_server: ApiServer, client: Any) -> None:
    widgets = Resource("example.com", "v1", "widgets", "Widget", short_names=("wd",))
    api_server.register_resource(widgets)
    api_server.create(widgets, {"metadata": {"name": "w1"}, "spec": {}})
    factory = SharedInformerFactory(client)
    try:
        informer = factory.for_resource("widgets.example.com")
        assert factory.for_resource("wd") is informer  # same resource, one informer
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10)
        assert [o["metadata"]["name"] for o in informer.get_store().list()] == ["w1"]
    finally:
        factory.shutdown()


def test_unknown_resource_names_close_matches(client: Any) -> None:
    factory = SharedInformerFactory(client)
    try:
        with pytest.raises(UnknownResourceError, match=r"did you mean .*'pods'") as info:
            factory.for_resource("podz")
        assert info.value.name == "podz"
        assert "pods" in info.value.suggestions
        assert isinstance(info.value, LookupError)
        with pytest.raises(UnknownResourceError, match="unknown resource 'zzzzqqq'") as info:
            factory.for_resource("zzzzqqq")
        assert info.value.suggestions == ()
        assert "did you mean" not in str(info.value)
        with pytest.raises(UnknownResourceError):
            factory.for_resource("")
    finally:
        factory.shutdown()


NOTHINGS = Resource("example.com", "v1", "nothings", "Nothing")


def test_a_failure_that_cannot_heal_is_reported_once_with_what_to_check(
    api_server: ApiServer, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    factory = SharedInformerFactory(client, reflector_config=ReflectorConfig(min_watch_timeout=30))
    retried = threading.Event()
    try:
        informer = factory.for_resource(NOTHINGS)
        informer.set_watch_error_handler(
            lambda r, e: retried.set() if len(r.errors()) >= 3 else None
        )
        with caplog.at_level(logging.WARNING, logger="informers"):
            factory.start()
            assert retried.wait(30)  # still retrying: a CRD may be installed later
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1
        message = errors[0].getMessage()
        assert "nothings.example.com" in message
        assert "CustomResourceDefinition" in message
        assert "Resource(" not in message  # the short name, not a repr
        not_synced = factory.unsynced(timeout=0.1)
        assert list(not_synced) == ["nothings.example.com"]
        assert "does not serve nothings.example.com" in not_synced["nothings.example.com"]
        assert not informer.is_stopped()
    finally:
        factory.shutdown()


def test_fail_fast_stops_an_informer_that_cannot_heal(api_server: ApiServer, client: Any) -> None:
    api_server.create(PODS, {"metadata": {"name": "a"}, "spec": dict(POD_SPEC)})
    factory = SharedInformerFactory(client, fail_fast=True)
    try:
        pods = factory.pods()
        nothings = factory.for_resource(NOTHINGS)
        factory.start()
        # No timeout: returns as soon as the 404 is seen (a wait that did not
        # fail fast would block until the test's own timeout).
        with pytest.raises(CacheSyncTimeoutError) as raised:
            factory.wait_for_cache_sync(timeout=None)
        not_synced = raised.value.not_synced
        assert list(not_synced) == ["nothings.example.com"]
        assert not_synced["nothings.example.com"].startswith("failed, stopped: 404")
        assert nothings.is_stopped()
        assert pods.has_synced()
        reflector = nothings.reflector
        assert reflector is not None
        assert reflector.permanent_error() is not None
    finally:
        factory.shutdown()


def test_wait_for_cache_sync_is_the_gate(api_server: ApiServer, client: Any) -> None:
    # One contract with informers.wait_for_cache_sync (issue 30 item 3): a
    # user's ``if not factory.wait_for_cache_sync(...): fail()`` works.
    api_server.create(PODS, {"metadata": {"name": "a"}, "spec": dict(POD_SPEC)})
    factory = SharedInformerFactory(client)
    try:
        factory.pods()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=10) is True
        assert factory.unsynced() == {}
    finally:
        factory.shutdown()


def test_wait_for_cache_sync_returns_false_on_stop(api_server: ApiServer, client: Any) -> None:
    api_server.fail_next(1000, 500, path_prefix="/api/v1/pods")
    factory = SharedInformerFactory(client)
    stop = threading.Event()
    stop.set()
    try:
        factory.pods()
        factory.start()
        assert factory.wait_for_cache_sync(timeout=None, stop=stop) is False
    finally:
        api_server.clear_faults()
        factory.shutdown()
