"""A list the server never answers is abandoned after the lister-watcher's
read timeout and retried with backoff (issue 30 item 1)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
import urllib3
from kubernetes import client

from informers.cache.reflector.config import ReflectorConfig
from informers.cache.reflector.driver import BackoffManager, Reflector
from informers.cache.store import Indexer
from informers.rest.listwatch import LIST_READ_TIMEOUT, HTTPListerWatcher
from informers.wire.resources import PODS
from tests.helpers import WAIT, SilentServer


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def test_a_list_has_a_bounded_read_timeout() -> None:
    assert LIST_READ_TIMEOUT <= 120


def test_an_unanswered_list_is_abandoned_and_retried(silent: SilentServer) -> None:
    configuration = client.Configuration()
    configuration.host = silent.url
    errors: list[BaseException] = []
    retried = threading.Event()

    def on_error(_reflector: Reflector, error: BaseException) -> None:
        errors.append(error)
        if len(errors) >= 2:
            retried.set()

    with client.ApiClient(configuration) as api_client:
        lw = HTTPListerWatcher(api_client, PODS, list_read_timeout=0.2)
        reflector = Reflector(
            lw,
            Indexer(),
            config=ReflectorConfig(description="pods"),
            watch_error_handler=on_error,
            backoff=BackoffManager(0.01, 0.05, rng=random.Random(1)),
        )
        stop = threading.Event()
        thread = threading.Thread(target=reflector.run, args=(stop,), name="test-silent-list")
        thread.start()
        try:
            assert retried.wait(WAIT), errors
        finally:
            stop.set()
            thread.join(WAIT)
        assert not thread.is_alive()
    assert all(isinstance(error, urllib3.exceptions.ReadTimeoutError) for error in errors[:2])
    assert silent.accepted >= 2  # each retry is a new request
