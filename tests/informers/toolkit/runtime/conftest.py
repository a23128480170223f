"""Shared fixtures of the runtime tests: a recording sink, an API client on
the emulator and informers over it with short backoffs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from runtime_helpers import RecordingSink

from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import ReflectorConfig
from informers.rest.listwatch import HTTPListerWatcher
from informers.testing import ApiServer
from informers.util.backoff import ExponentialBackoff
from informers.wire.resources import PODS, Resource


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def client(api_server: ApiServer) -> Iterator[Any]:
    c = api_server.api_client()
    yield c
    c.close()


@pytest.fixture
def make_informer(client: Any) -> Iterator[Callable[..., SharedIndexInformer]]:
    """Builds informers over the emulator (stopped after the test)."""
    made: list[SharedIndexInformer] = []

    def make(resource: Resource = PODS, **kwargs: Any) -> SharedIndexInformer:
        informer = SharedIndexInformer(
            HTTPListerWatcher(client, resource),
            name=resource.plural,
            reflector_config=ReflectorConfig(
                description=resource.plural, min_watch_timeout=30, watch_list_deadline=1.0
            ),
            backoff=ExponentialBackoff(initial=0.01, cap=0.05),
            **kwargs,
        )
        made.append(informer)
        return informer

    yield make
    for informer in made:
        informer.stop()
