"""Project-wide test fixtures.

``no_leaked_threads`` is autouse: a test that leaves any thread it started still
running (daemon or not) fails. Threads get a short grace period to finish the
join their owner already asked for; waiting is done with ``Thread.join``, never
a sleep.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["informers.testing.pytest_plugin"]

# CI runs every property and state-machine test with at least 200 examples;
# a developer's run is lighter unless HYPOTHESIS_PROFILE says otherwise.
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

#: How long a test's threads may take to finish after the test body returned.
THREAD_GRACE_SECONDS = 5.0


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE_SECONDS
    leaked = []
    for thread in threading.enumerate():
        if thread in before or thread is threading.current_thread():
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            leaked.append(thread)
    if leaked:
        names = ", ".join(f"{t.name} (daemon={t.daemon})" for t in leaked)
        pytest.fail(f"test left threads running: {names}", pytrace=False)
