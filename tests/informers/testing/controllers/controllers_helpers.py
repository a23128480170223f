"""Waiting on the emulator's state through an informer (events, never sleeps)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.cache.informer import ResourceEventHandlerFuncs
from informers.testing import ApiServer
from informers.testing.controllers import ControllerManager
from informers.wire.resources import Resource

WAIT = 30.0


class Cluster:
    """The server, its controllers, a kubernetes ApiClient and ``until``:
    block until a check over a kind's objects holds, re-checking on every
    event of that kind (an informer of the test's own)."""

    def __init__(self, server: ApiServer, manager: ControllerManager) -> None:
        self.server = server
        self.manager = manager
        self.client = server.api_client()
        self._factory = SharedInformerFactory(self.client)
        self._changed = threading.Condition()
        self._watched: set[Resource] = set()

    def _poke(self, *_: Any) -> None:
        with self._changed:
            self._changed.notify_all()

    def objects(
        self, resource: Resource, namespace: str | None = "default"
    ) -> list[dict[str, Any]]:
        informer = self._factory.for_resource(resource)
        if resource not in self._watched:
            self._watched.add(resource)
            informer.add_event_handler(
                ResourceEventHandlerFuncs(self._poke, lambda o, n: self._poke(), self._poke)
            )
            self._factory.start()
            assert informer.wait_synced(WAIT)
        items = informer.get_indexer().list()
        if namespace is not None and resource.namespaced:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        return sorted(items, key=lambda o: o["metadata"]["name"])

    def until(
        self,
        resource: Resource,
        check: Callable[[list[dict[str, Any]]], bool],
        namespace: str | None = "default",
        timeout: float = WAIT,
    ) -> list[dict[str, Any]]:
        """The objects once ``check(objects)`` holds; fails after ``timeout``."""
        self.objects(resource, namespace)
        with self._changed:
            ok = self._changed.wait_for(lambda: check(self.objects(resource, namespace)), timeout)
        items = self.objects(resource, namespace)
        assert ok, f"{resource}: condition not reached in {timeout} s; have {_summary(items)}"
        return items

    def close(self) -> None:
        self._factory.shutdown()
        self.client.close()


def _summary(items: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(o["metadata"]["name"], o.get("status")) for o in items]
