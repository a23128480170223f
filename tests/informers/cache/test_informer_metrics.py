"""The informer metrics against the emulator: every documented informer_*
name is exposed after a sync, relists are counted by cause (initial, a 410
Gone after compaction, a failed watch) and a silenced watch is counted as a
watchdog firing without a relist; a handler's backlog, lag and sampled
latency follow what it has not handled yet."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from test_informer_emulator import client, converge, make_informer

from informers.cache.factory import SharedInformerFactory
from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.cache.metrics import (
    SAMPLE_EVERY,
    default_informer_metrics,
    set_default_informer_metrics,
)
from informers.cache.prometheus import PrometheusInformerMetrics, install_informer_metrics
from informers.cache.registration import SharedProcessor, UpdateNotification
from informers.cache.wait import wait_for_cache_sync
from informers.errors import WatchStalledError
from informers.testing import ApiServer
from informers.util.clock import REAL_CLOCK
from informers.wire.resources import CONFIGMAPS, PODS
from tests.helpers import new_pod

__all__ = ["client"]  # the fixture, imported from the emulator tests

DOCS = Path(__file__).resolve().parents[3] / "docs" / "guide" / "metrics.rst"


def documented_names() -> list[str]:
    """The names of the metrics table in docs/guide/metrics.rst."""
    return re.findall(r"^   \* - ``([a-z_]+)``$", DOCS.read_text(), flags=re.MULTILINE)


def exposed(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the registry's exposition text, by name and labels."""
    text = generate_latest(registry).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    """One sample, read from a full scrape (as a Prometheus server reads)."""
    key = (name, tuple(sorted({"resource": "pods", **labels}.items())))
    return exposed(registry).get(key, 0.0)


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def started(client: Any, registry: CollectorRegistry, **config: Any) -> SharedIndexInformer:
    informer = make_informer(client, **config)
    informer._metrics = PrometheusInformerMetrics(registry)
    return informer


def test_every_documented_informer_name_is_exposed_after_a_sync(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    api_server.create(PODS, new_pod("a"))
    informer = started(client, registry)
    informer.add_event_handler(ResourceEventHandlerFuncs())
    informer.start()
    try:
        assert informer.wait_synced(10)
        api_server.create(PODS, new_pod("b"))
        converge(informer, api_server)
        assert informer.wait_idle(10)
        names = {name for name, _ in exposed(registry)}
        documented = [n for n in documented_names() if n.startswith("informer_")]
        assert len(documented) == 9
        missing = [n for n in documented if n not in names and f"{n}_count" not in names]
        assert not missing
        assert value(registry, "informer_cache_objects") == 2.0
        assert value(registry, "informer_relists_total", cause="initial") == 1.0
        assert value(registry, "informer_list_requests_total", result="success") >= 1.0
        assert value(registry, "informer_watch_requests_total", result="success") >= 1.0
        handler = {"handler": "listener-pods-1"}
        assert value(registry, "informer_handler_latency_seconds_count", **handler) >= 1.0
        assert value(registry, "informer_handler_backlog", **handler) == 0.0
        assert value(registry, "informer_handler_lag_seconds", **handler) == 0.0
        assert 0.0 <= value(registry, "informer_last_event_age_seconds") < 60.0
    finally:
        informer.stop()


def test_a_410_after_compaction_relists_as_expired(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    informer = started(client, registry)
    informer.start()
    try:
        assert informer.wait_synced(10)
        api_server.create(PODS, new_pod("seen"))  # the watch delivers an event
        converge(informer, api_server)
        api_server.stall_watches(30)
        api_server.create(PODS, new_pod("missed"))
        api_server.compact()  # the watch's resourceVersion is gone
        api_server.drop_watches()
        api_server.stall_watches(0)
        converge(informer, api_server)
        assert value(registry, "informer_relists_total", cause="expired") >= 1.0
        assert value(registry, "informer_relists_total", cause="initial") == 1.0
        # The re-watch from the compacted resourceVersion was answered (HTTP
        # 200) with a 410 ERROR event, as kube-apiserver does: a successful
        # request, then an expired relist.
        assert value(registry, "informer_watch_requests_total", result="success") >= 2.0
    finally:
        informer.stop()


def test_a_failed_watch_relists_as_watch_error(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    informer = started(client, registry)
    informer.start()
    try:
        assert informer.wait_synced(10)
        api_server.create(PODS, new_pod("seen"))  # a watch with events: not "very short"
        converge(informer, api_server)
        api_server.fail_next(1, 500)  # the next request: the re-watch
        api_server.drop_watches()
        api_server.create(PODS, new_pod("after"))
        converge(informer, api_server)
        assert value(registry, "informer_watch_requests_total", result="error") == 1.0
        assert value(registry, "informer_relists_total", cause="watch_error") == 1.0
        assert value(registry, "informer_relists_total", cause="initial") == 1.0
        assert value(registry, "informer_relists_total", cause="expired") == 0.0
    finally:
        informer.stop()


@pytest.mark.parametrize(
    ("bound", "relisted"),
    [(0.4, True), (1.2, False)],
    ids=["very-short-watch-relists", "re-watch-without-list"],
)
def test_a_silenced_watch_fires_the_watchdog(
    api_server: ApiServer, client: Any, registry: CollectorRegistry, bound: float, relisted: bool
) -> None:
    """A stall is re-watched from the last resourceVersion; only a stalled
    watch under a second old (a "very short" watch, which the machine
    relists) is followed by a list, counted with the cause ``watchdog``."""
    informer = started(client, registry, watch_progress_timeout=bound, min_watch_timeout=3600)
    stalled = threading.Event()

    def on_error(_reflector: object, error: BaseException) -> None:
        if isinstance(error, WatchStalledError):
            stalled.set()

    informer.set_watch_error_handler(on_error)
    informer.start()
    try:
        assert informer.wait_synced(10)
        assert api_server.wait_for_watch_count(1, 10)
        assert api_server.silence_watches() == 1
        api_server.create(PODS, new_pod("during"))
        assert stalled.wait(10)
        converge(informer, api_server)
        assert value(registry, "informer_watchdog_firings_total") >= 1.0
        assert value(registry, "informer_relists_total", cause="initial") == 1.0
        assert (value(registry, "informer_relists_total", cause="watchdog") >= 1.0) is relisted
        assert value(registry, "informer_relists_total", cause="watch_error") == 0.0
    finally:
        informer.stop()


def test_a_busy_handler_shows_backlog_lag_and_latency(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    informer = started(client, registry)
    release = threading.Event()
    entered = threading.Event()

    def on_add(obj: Any) -> None:
        if obj["metadata"]["name"].startswith("slow"):
            entered.set()
            release.wait(10)

    reg = informer.add_event_handler(ResourceEventHandlerFuncs(add_func=on_add))
    handler = {"handler": reg.name}
    informer.start()
    try:
        assert informer.wait_synced(10)
        api_server.create(PODS, new_pod("slow"))
        assert entered.wait(10)  # the handler is busy from now on
        api_server.create(PODS, new_pod("queued-1"))
        assert informer.wait_for_resource_version(api_server.create(PODS, new_pod("queued-2")))
        assert value(registry, "informer_handler_backlog", **handler) >= 2.0
        # That scrape found a backlog: the next event carries a probe, and
        # the probe waits behind the busy handler.
        assert informer.wait_for_resource_version(api_server.create(PODS, new_pod("queued-3")))
        first = value(registry, "informer_handler_lag_seconds", **handler)
        second = value(registry, "informer_handler_lag_seconds", **handler)
        assert 0.0 < first <= second  # the probe's age grows while it waits
        release.set()
        assert reg.wait_idle(10)
        assert value(registry, "informer_handler_backlog", **handler) == 0.0
        assert value(registry, "informer_handler_lag_seconds", **handler) == 0.0
        assert value(registry, "informer_handler_latency_seconds_count", **handler) >= 2.0
    finally:
        release.set()
        informer.stop()


def test_install_makes_the_default_for_informers_started_afterwards(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    previous = default_informer_metrics()
    try:
        provider = install_informer_metrics(registry)
        assert default_informer_metrics() is provider
        assert install_informer_metrics(registry).registry is registry  # families shared
        informer = make_informer(client)
        informer.start()
        try:
            assert informer.wait_synced(10)
            assert value(registry, "informer_relists_total", cause="initial") == 1.0
        finally:
            informer.stop()
    finally:
        set_default_informer_metrics(previous)


def test_without_metrics_nothing_is_probed(api_server: ApiServer, client: Any) -> None:
    informer = make_informer(client)
    reg = informer.add_event_handler(ResourceEventHandlerFuncs())
    informer.start()
    try:
        assert informer.wait_synced(10)
        for i in range(3):
            api_server.create(PODS, new_pod(f"p{i}"))
        converge(informer, api_server)
        assert informer.wait_idle(10)
        assert reg.handed_out == 4  # the synced marker and three adds: no probe
        assert reg.lag() == 0.0
    finally:
        informer.stop()


def test_the_docs_table_lists_exactly_the_exposed_names() -> None:
    """docs/guide/metrics.rst's table and the names every provider of the
    project registers agree, both ways."""
    from informers.toolkit.leaderelection.prometheus import PrometheusLeaderMetrics
    from informers.toolkit.runtime.prometheus import PrometheusControllerMetrics
    from informers.toolkit.sharding.prometheus import PrometheusShardingMetrics
    from informers.toolkit.workqueue.prometheus import PrometheusMetricsProvider

    registry = CollectorRegistry()
    PrometheusInformerMetrics(registry)
    PrometheusMetricsProvider(registry)
    PrometheusControllerMetrics(registry)
    PrometheusLeaderMetrics(registry)
    PrometheusShardingMetrics(registry)
    names = set()
    for family in registry.collect():
        names.add(f"{family.name}_total" if family.type == "counter" else family.name)
    documented = documented_names()
    assert len(documented) == len(set(documented))
    assert set(documented) == names


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.sampled_from(["event", "event", "event", "scrape", "sync"]), max_size=200))
def test_latency_probes_are_invisible_to_handlers_and_bounded(ops: list[str]) -> None:
    """Whatever the order of events, resyncs and scrapes: the handler gets
    exactly its notifications, in order; every probe is observed once; at
    most one probe in SAMPLE_EVERY notifications plus one per scrape that
    found a backlog (and the first); an idle handler has no backlog, no lag."""
    processor = SharedProcessor("pods", REAL_CLOCK, lambda: None)
    got: list[object] = []
    reg = processor.add(ResourceEventHandlerFuncs(update_func=lambda _o, new: got.append(new)), 0)
    observed: list[float] = []  # (list.append is atomic)
    histogram = SimpleNamespace(observe=observed.append)
    processor.enable_metrics(lambda _reg: histogram)
    processor.start()
    sent: list[object] = []
    requests = 0
    try:
        for i, op in enumerate(ops):
            if op == "scrape":
                if reg.pending():
                    processor.request_probe()
                    requests += 1
                assert reg.lag() >= 0.0
            else:
                processor.distribute(UpdateNotification(i, i), is_sync=op == "sync")
                if op == "event":
                    sent.append(i)
        assert reg.wait_idle(10)
    finally:
        processor.stop(10)
    assert got == sent  # (a resync update reaches only handlers due: none here)
    # Every probe put was delivered and observed once, and only probes were added.
    assert reg.handed_out == len(sent) + len(observed)
    distributed = sum(op != "scrape" for op in ops)
    assert len(observed) <= 1 + distributed // SAMPLE_EVERY + requests
    assert all(v >= 0.0 for v in observed)
    assert reg.pending() == 0
    assert reg.lag() == 0.0


def test_a_factory_gives_its_informers_the_provider(
    api_server: ApiServer, client: Any, registry: CollectorRegistry
) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "default"}})
    factory = SharedInformerFactory(client, metrics=PrometheusInformerMetrics(registry))
    factory.pods()
    factory.configmaps()
    factory.start()
    try:
        assert wait_for_cache_sync(*factory.informers().values(), timeout=10)
        assert value(registry, "informer_cache_objects") == 1.0
        objects = exposed(registry)
        assert objects[("informer_cache_objects", (("resource", "configmaps"),))] >= 1.0
    finally:
        factory.shutdown()
