"""Silent stalls against the emulator: a watch that stays open but delivers
nothing (a half-dead connection) is given up by the progress watchdog and
re-watched from the last resource version, long before the server's own
timeout would end it."""

from __future__ import annotations

import threading
from typing import Any

from test_informer_emulator import client, converge, make_informer

from informers.errors import WatchStalledError
from informers.testing import ApiServer
from informers.wire.resources import PODS
from tests.helpers import new_pod as pod

__all__ = ["client"]  # the fixture, imported from the emulator tests


def test_a_half_dead_watch_is_replaced_and_the_cache_converges(
    api_server: ApiServer, client: Any
) -> None:
    api_server.create(PODS, pod("before"))
    informer = make_informer(client, watch_progress_timeout=0.4, min_watch_timeout=3600)
    stalled = threading.Event()
    errors: list[BaseException] = []

    def on_error(_reflector: object, error: BaseException) -> None:
        errors.append(error)
        if isinstance(error, WatchStalledError):
            stalled.set()

    informer.set_watch_error_handler(on_error)
    informer.start()
    try:
        assert informer.wait_synced(10)
        assert api_server.wait_for_watch_count(1, 10)
        assert api_server.silence_watches() == 1  # the informer's watch goes dark
        api_server.create(PODS, pod("during"))  # held back on the silent watch
        assert stalled.wait(10)
        converge(informer, api_server)  # through the new watch, without a relist
        assert informer.get_store().get_by_key("default/during") is not None
        assert all(isinstance(e, WatchStalledError) for e in errors)
    finally:
        informer.stop()
