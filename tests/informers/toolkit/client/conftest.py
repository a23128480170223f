"""Fixtures of the client tests: an API client on a fresh emulator, a
namespace, a custom resource served with a status subresource, and a started
informer factory (shut down afterwards)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from informers import SharedInformerFactory
from informers.testing import ApiServer
from informers.toolkit.client import Client
from informers.wire.resources import Resource

WIDGETS = Resource("example.com", "v1", "widgets", "Widget", short_names=("wd",))


@pytest.fixture
def api(api_server: ApiServer) -> Iterator[Any]:
    api_client = api_server.api_client()
    yield api_client
    api_client.close()


@pytest.fixture
def ns(api_server: ApiServer) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    api_server.create("namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def widgets(api_server: ApiServer) -> Resource:
    api_server.register_resource(WIDGETS, status_subresource=True)
    return WIDGETS


@pytest.fixture
def live(api: Any) -> Client:
    return Client(api)


@pytest.fixture
def factory(api: Any) -> Iterator[SharedInformerFactory]:
    made = SharedInformerFactory(api)
    yield made
    made.shutdown()
