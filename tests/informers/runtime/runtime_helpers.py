"""Helpers shared by the runtime tests (imported by name: the test
directories are not packages)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from informers.runtime import Request


class RecordingSink:
    """A sink that records what sources push; ``wait_for`` blocks on a condition."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.items: list[Request] = []

    def add(self, item: Request) -> None:
        with self.cond:
            self.items.append(item)
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[list[Request]], bool], timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.items), timeout)

    def snapshot(self) -> list[Request]:
        with self.cond:
            return list(self.items)


def pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}, "spec": {}}
