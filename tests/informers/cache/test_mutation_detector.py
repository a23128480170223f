"""The cache mutation detector (issue 30 item 14): opt-in, it reports the key
and the handler or reconcile that changed a cached object."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from test_informer_emulator import client, make_informer

from informers.cache.compact import CompactStore
from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.cache.listers import Lister
from informers.cache.mutation import ENVIRONMENT_VARIABLE, CacheMutation, detection_enabled
from informers.rest.listwatch import HTTPListerWatcher
from informers.testing import ApiServer
from informers.toolkit.runtime import Controller, InformerSource, Request
from informers.wire.resources import PODS
from tests.helpers import new_pod

__all__ = ["client"]  # the fixture, imported from the emulator tests


def test_off_by_default_on_by_option_or_environment(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert make_informer(client).mutation_detector is None
    on = SharedIndexInformer(HTTPListerWatcher(client, PODS), detect_mutations=True)
    assert on.mutation_detector is not None
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "true")
    assert detection_enabled()
    assert SharedIndexInformer(HTTPListerWatcher(client, PODS)).mutation_detector is not None
    assert not detection_enabled(False)
    # a store that decodes a new object per read cannot be mutated: not checked
    compact = SharedIndexInformer(HTTPListerWatcher(client, PODS), store=CompactStore)
    assert compact.mutation_detector is None


def _informer(client: Any) -> SharedIndexInformer:
    return SharedIndexInformer(HTTPListerWatcher(client, PODS), name="pods", detect_mutations=True)


def test_a_handler_that_mutates_is_named(
    api_server: ApiServer, client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def label_it(obj: Any) -> None:
        obj["metadata"].setdefault("labels", {})["seen"] = "yes"  # the mistake

    def only_read(obj: Any) -> None:
        assert obj["metadata"]["name"]

    api_server.create(PODS, new_pod("a"))
    informer = _informer(client)
    bad = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=label_it))
    good = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=only_read))
    with caplog.at_level(logging.ERROR, "informers.cache.mutation"):
        informer.start()
        try:
            assert bad.wait_synced(10)
            assert good.wait_synced(10)
            assert bad.wait_idle(10)
        finally:
            informer.stop()
    detector = informer.mutation_detector
    assert detector is not None
    culprit = "handler test_a_handler_that_mutates_is_named.<locals>.label_it (add)"
    assert detector.mutations == [CacheMutation("pods", "default/a", culprit)]
    (record,) = caplog.records
    assert "default/a" in record.getMessage()
    assert culprit in record.getMessage()


def test_a_reconcile_that_mutates_is_named(api_server: ApiServer, client: Any) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.create(PODS, new_pod("b"))
    informer = _informer(client)
    lister = Lister(informer.get_indexer())

    def reconcile(request: Request) -> None:
        pod = lister.get(request.name, request.namespace)
        if pod is not None and request.name == "b":
            pod["spec"]["nodeName"] = "changed"  # the mistake

    informer.start()
    controller = Controller("scheduler", reconcile, [InformerSource(informer)])
    try:
        controller.start()
        assert controller.wait_idle(10)
    finally:
        controller.stop()
        informer.stop()
    detector = informer.mutation_detector
    assert detector is not None
    assert detector.mutations == [
        CacheMutation("pods", "default/b", "reconcile of controller scheduler for default/b")
    ]
    assert detector.check("a later check") == []  # reported once


def test_the_handlers_optional_hooks_pass_through(api_server: ApiServer, client: Any) -> None:
    from informers.cache.mutation import CacheMutationDetector, MutationCheckingHandler

    synced: list[bool] = []

    class WithHook:
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
            pass

        def on_update(self, old: Any, new: Any) -> None:
            pass

        def on_delete(self, obj: Any) -> None:
            pass

        def on_synced(self) -> None:
            synced.append(True)

    wrapped = MutationCheckingHandler(WithHook(), CacheMutationDetector("x", list))
    assert getattr(wrapped, "on_relist_begin", None) is None  # the handler has none
    informer = _informer(client)
    registration = informer.add_event_handler(WithHook())
    informer.start()
    try:
        assert registration.wait_synced(10)
        assert registration.wait_idle(10)
    finally:
        informer.stop()
    assert synced == [True]
