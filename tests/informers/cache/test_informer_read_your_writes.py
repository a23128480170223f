"""Read-your-writes: after a client write, wait (on events, not by polling)
until the informer's store has applied it, and until one handler has been
handed it."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from test_informer_emulator import client, make_informer

from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.testing import ApiServer
from informers.wire.resources import PODS
from tests.helpers import new_pod as pod

__all__ = ["client"]  # the fixture, imported from the emulator tests


def test_the_store_has_what_a_write_returned(api_server: ApiServer, client: Any) -> None:
    informer = make_informer(client)
    informer.start()
    try:
        assert informer.wait_synced(10)
        for n in range(20):
            written = api_server.create(PODS, pod(f"p{n}"))
            assert informer.wait_for_resource_version(written, timeout=10)
            cached = informer.get_store().get_by_key(f"default/p{n}")
            assert cached is not None
            assert cached["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
        assert int(informer.applied_resource_version()) >= int(
            written["metadata"]["resourceVersion"]
        )
        updated = api_server.update(
            PODS, {**written, "spec": {**written["spec"], "nodeName": "n1"}}
        )
        assert informer.wait_for_resource_version(updated["metadata"]["resourceVersion"], 10)
        assert informer.get_store().get_by_key("default/p19")["spec"]["nodeName"] == "n1"
    finally:
        informer.stop()


def test_a_handler_has_been_handed_the_write(api_server: ApiServer, client: Any) -> None:
    informer = make_informer(client)
    seen: list[str] = []
    release = threading.Event()

    def slow_add(obj: Any) -> None:
        if obj["metadata"]["name"] == "later":
            release.wait(10)  # a later event keeps this handler busy
        seen.append(obj["metadata"]["name"])

    registration = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=slow_add))
    informer.start()
    try:
        assert registration.wait_synced(10)
        first = api_server.create(PODS, pod("first"))
        assert informer.wait_for_resource_version(first, 10, handler=registration)
        assert seen == ["first"]
        api_server.create(PODS, pod("later"))
        # a write the handler is still busy with does not count as handed
        assert not informer.wait_for_resource_version(
            api_server.resource_version, 0.2, handler=registration
        )
        release.set()
        assert informer.wait_for_resource_version(
            api_server.resource_version, 10, handler=registration
        )
        assert seen == ["first", "later"]
    finally:
        release.set()
        informer.stop()


def test_the_official_clients_models_are_targets(api_server: ApiServer, client: Any) -> None:
    # What CoreV1Api returns is a V1Pod model, not a dict: it is waited for,
    # never skipped (issue 30 item 2).
    from kubernetes import client as k8s

    informer = make_informer(client)
    informer.start()
    try:
        assert informer.wait_synced(10)
        body = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name="model"),
            spec=k8s.V1PodSpec(containers=[k8s.V1Container(name="main", image="example")]),
        )
        created = k8s.CoreV1Api(client).create_namespaced_pod("default", body)
        assert isinstance(created, k8s.V1Pod)
        assert informer.wait_for_resource_version(created, timeout=10)
        cached = informer.get_store().get_by_key("default/model")
        assert cached is not None
        assert cached["metadata"]["resourceVersion"] == created.metadata.resource_version
        # a model of a write still to come is waited for, not skipped
        ahead = k8s.V1Pod(metadata=k8s.V1ObjectMeta(resource_version=str(10**12)))
        assert not informer.wait_for_resource_version(ahead, timeout=0.1)
    finally:
        informer.stop()


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("not-a-number", ValueError),
        ({"metadata": {}}, ValueError),
        ({"kind": "Pod"}, TypeError),
        (object(), TypeError),
        (b"12", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_bad_targets_raise(
    api_server: ApiServer, client: Any, target: object, error: type[Exception]
) -> None:
    informer = make_informer(client)
    with pytest.raises(error):
        informer.wait_for_resource_version(target, 1)


def test_a_stopped_informer(api_server: ApiServer, client: Any) -> None:
    informer = make_informer(client)
    informer.start()
    assert informer.wait_synced(10)
    informer.stop()
    assert not informer.wait_for_resource_version(10**12, 1)  # stopped: returns at once
