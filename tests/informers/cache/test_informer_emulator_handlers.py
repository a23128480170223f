"""Handler-side behaviour of the informer over real HTTP against the emulator:
late handlers, handler removal, resync and transforms (the same behaviours are
unit-tested over the fake lister-watcher in test_informer.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_informer_emulator import FAST, converge, fast_backoff, make_informer

from informers.cache.informer import SharedIndexInformer
from informers.rest.listwatch import HTTPListerWatcher
from informers.testing import ApiServer, FakeClock
from informers.wire.objects import meta_namespace_key
from informers.wire.resources import PODS
from tests.helpers import Recorder, new_pod


class Log(Recorder):
    """Event log of one handler: (event, key, initial?)."""

    def added(self, obj: Any, is_in_initial_list: bool) -> tuple[Any, ...]:
        return ("add", meta_namespace_key(obj), is_in_initial_list)

    def updated(self, old: Any, new: Any) -> tuple[Any, ...]:
        return ("update", meta_namespace_key(new), False)

    def deleted(self, obj: Any) -> tuple[Any, ...]:
        return ("delete", getattr(obj, "key", None) or meta_namespace_key(obj), False)


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


def test_late_handler_gets_current_contents_first_then_live_events(
    api_server: ApiServer, client: Any
) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.create(PODS, new_pod("b"))
    informer = make_informer(client)
    early = Log()
    informer.add_event_handler(early)
    informer.start()
    try:
        assert informer.wait_synced(20)
        api_server.delete(PODS, "a", "default")
        converge(informer, api_server)
        late = Log()
        registration = informer.add_event_handler(late)
        assert registration.wait_synced(20)
        api_server.create(PODS, new_pod("c"))
        converge(informer, api_server)
        assert registration.wait_idle(20)
        assert late.snapshot() == [("add", "default/b", True), ("add", "default/c", False)]
        assert early.snapshot()[-1] == ("add", "default/c", False)
    finally:
        informer.stop()


def test_removed_handler_receives_nothing_more(api_server: ApiServer, client: Any) -> None:
    informer = make_informer(client)
    kept, removed = Log(), Log()
    informer.add_event_handler(kept)
    registration = informer.add_event_handler(removed)
    informer.start()
    try:
        assert informer.wait_synced(20)
        api_server.create(PODS, new_pod("a"))
        converge(informer, api_server)
        assert registration.wait_idle(20)
        registration.remove()
        api_server.create(PODS, new_pod("b"))
        converge(informer, api_server)
        assert informer.registrations()
        assert registration not in informer.registrations()
        assert removed.snapshot() == [("add", "default/a", False)]
        assert kept.snapshot() == [("add", "default/a", False), ("add", "default/b", False)]
    finally:
        informer.stop()


def test_resync_replays_the_cache_without_relisting(api_server: ApiServer, client: Any) -> None:
    api_server.create(PODS, new_pod("a"))
    api_server.create(PODS, new_pod("b"))
    clock = FakeClock()
    lists: list[object] = []

    class CountingLW(HTTPListerWatcher):
        def list(self, options: Any) -> dict[str, Any]:
            lists.append(options)
            return super().list(options)

    informer = SharedIndexInformer(
        CountingLW(client, PODS),
        name="pods",
        reflector_config=FAST,
        backoff=fast_backoff(),
        clock=clock,
        resync_period=30,
    )
    resynced, quiet = Log(), Log()
    informer.add_event_handler(resynced)
    quiet_registration = informer.add_event_handler(quiet, resync_period=0)
    informer.start()
    try:
        assert informer.wait_synced(20)
        assert quiet_registration.wait_synced(20)
        clock.advance(30)
        assert informer.wait_idle(20)
        events = resynced.snapshot()
        assert sorted(events[2:]) == [
            ("update", "default/a", False),
            ("update", "default/b", False),
        ]
        assert len(quiet.snapshot()) == 2
        assert len(lists) == 1  # resync replays the cache; it never lists again
    finally:
        informer.stop()


def test_transform_runs_once_at_ingest_before_caching(api_server: ApiServer, client: Any) -> None:
    api_server.create(PODS, {**new_pod("a"), "status": {"phase": "Running", "big": "x" * 1000}})
    calls: list[str] = []

    def strip_status(obj: Any) -> Any:
        calls.append(meta_namespace_key(obj))
        return {key: value for key, value in obj.items() if key != "status"}

    informer = make_informer(client)
    informer.set_transform(strip_status)
    seen = Log()
    informer.add_event_handler(seen)
    informer.start()
    try:
        assert informer.wait_synced(20)
        api_server.create(PODS, new_pod("b"))
        converge(informer, api_server)
        assert all("status" not in obj for obj in informer.get_store().list())
        assert calls == ["default/a", "default/b"]  # once per object, at ingest
        with pytest.raises(Exception, match="start"):
            informer.set_transform(None)
    finally:
        informer.stop()
