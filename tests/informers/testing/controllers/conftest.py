"""Fixtures: the emulator with its controllers (no delays)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from controllers_helpers import Cluster

from informers.testing import ApiServer
from informers.testing.controllers import ControllerManager


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with ApiServer() as server, ControllerManager(server, ready_delay=0, completion_delay=0) as m:
        c = Cluster(server, m)
        try:
            yield c
        finally:
            c.close()
