"""Fixtures for the emulator's conformance tests: a fresh server per test
(fast future-RV waits), a real ``kubernetes`` ApiClient closed afterwards, and
a helper reading raw watch events."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from apiserver_helpers import RawWatch
from kubernetes import client

from informers.testing import ApiServer


@pytest.fixture
def server() -> Iterator[ApiServer]:
    with ApiServer(rv_wait_seconds=0.2) as srv:
        yield srv


@pytest.fixture
def api(server: ApiServer) -> Iterator[client.ApiClient]:
    api_client = server.api_client()
    yield api_client
    api_client.close()


@pytest.fixture
def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


@pytest.fixture
def apps(api: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api)


@pytest.fixture
def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


@pytest.fixture
def ns(server: ApiServer) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    server.create("namespaces", {"metadata": {"name": name}})
    return name


@pytest.fixture
def raw_watch() -> Iterator[Callable[..., RawWatch]]:
    opened: list[RawWatch] = []

    def open_watch(call: Callable[..., Any], *args: Any, **kwargs: Any) -> RawWatch:
        kwargs.setdefault("timeout_seconds", 5)
        kwargs.setdefault("_request_timeout", 10)
        response = call(*args, watch=True, _preload_content=False, **kwargs)
        stream = RawWatch(response)
        opened.append(stream)
        return stream

    yield open_watch
    for stream in opened:
        stream.close()
