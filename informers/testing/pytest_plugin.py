"""pytest fixtures for testing against the API server emulator.

Enable with ``pytest_plugins = ["informers.testing.pytest_plugin"]`` in a
``conftest.py``. ``api_server`` is a fresh, started :class:`ApiServer` per
test, stopped (every thread joined) afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from informers.testing.apiserver import ApiServer

__all__ = ["api_server"]


@pytest.fixture
def api_server() -> Iterator[ApiServer]:
    """A running :class:`ApiServer` on a free local port, stopped after the test."""
    with ApiServer() as server:
        yield server
