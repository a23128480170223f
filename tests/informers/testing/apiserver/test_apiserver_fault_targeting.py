"""Faults aimed at one client (``header=``) and slow answers (``delay_next``),
observed through the real kubernetes client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
import urllib3
from apiserver_helpers import RawWatch, names
from kubernetes import client

from informers.testing import ApiServer
from tests.helpers import configmap


@pytest.fixture
def tagged(server: ApiServer) -> Iterator[client.CoreV1Api]:
    """A second client whose requests carry ``X-Client: tagged``, without
    urllib3 retries (so a timeout is seen as it is)."""
    config = server.configuration()
    config.retries = False
    api = client.ApiClient(config)
    api.set_default_header("X-Client", "tagged")
    yield client.CoreV1Api(api)
    api.close()


def test_fail_next_with_a_header_fails_only_that_client(
    server: ApiServer, core: client.CoreV1Api, tagged: client.CoreV1Api, ns: str
) -> None:
    server.fail_next(2, 503, header=("x-client", "tagged"))  # the name is case-insensitive
    core.list_namespaced_config_map(ns)  # untagged: not affected, nothing consumed
    for _ in range(2):
        with pytest.raises(client.ApiException) as err:
            tagged.list_namespaced_config_map(ns)
        assert err.value.status == 503
    tagged.list_namespaced_config_map(ns)  # both counts used up


def test_a_header_value_must_match_exactly(
    server: ApiServer, tagged: client.CoreV1Api, ns: str
) -> None:
    server.fail_next(1, 500, header=("X-Client", "other"))
    tagged.list_namespaced_config_map(ns)
    server.clear_faults()


def test_delay_next_holds_the_request_back_then_serves_it(
    server: ApiServer, tagged: client.CoreV1Api, ns: str
) -> None:
    server.delay_next(1, 0.3, header=("X-Client", "tagged"))
    started = time.monotonic()
    tagged.create_namespaced_config_map(ns, configmap("a"))
    assert time.monotonic() - started >= 0.25
    started = time.monotonic()
    tagged.read_namespaced_config_map("a", ns)  # only one request was delayed
    assert time.monotonic() - started < 0.25


def test_a_delayed_write_is_applied_after_the_client_gave_up(
    server: ApiServer,
    core: client.CoreV1Api,
    tagged: client.CoreV1Api,
    ns: str,
    raw_watch: Callable[..., RawWatch],
) -> None:
    stream = raw_watch(
        core.list_namespaced_config_map, ns, resource_version=str(server.resource_version)
    )
    server.delay_next(1, 0.5, path_prefix=f"/api/v1/namespaces/{ns}/configmaps")
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        tagged.create_namespaced_config_map(ns, configmap("late"), _request_timeout=0.1)
    assert names(stream.take(1)) == [("ADDED", "late")]  # the server went on with it


def test_a_delayed_request_matching_a_failure_fails_after_the_delay(
    server: ApiServer, tagged: client.CoreV1Api, ns: str
) -> None:
    server.delay_next(1, 0.2, header=("X-Client", "tagged"))
    server.fail_next(1, 500, header=("X-Client", "tagged"))
    started = time.monotonic()
    with pytest.raises(client.ApiException) as err:
        tagged.list_namespaced_config_map(ns)
    assert err.value.status == 500
    assert time.monotonic() - started >= 0.15


def test_clear_faults_forgets_delays(server: ApiServer, tagged: client.CoreV1Api, ns: str) -> None:
    server.delay_next(5, 30.0)
    server.clear_faults()
    started = time.monotonic()
    tagged.list_namespaced_config_map(ns)
    assert time.monotonic() - started < 5
