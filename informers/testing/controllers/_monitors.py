"""The garbage collector's view of custom resources: one informer per kind a
CustomResourceDefinition defines, started when the CRD appears and stopped
when it goes, as the real collector's graph builder follows discovery.

:class:`CustomResourceMonitors` is a controller source: it follows a CRD
informer and gives each custom resource kind an informer (with the owner-uid
index) and an :class:`~informers.toolkit.runtime.InformerSource` feeding the
collector's queue. Thread-safe: one lock guards the table of monitors; no
informer is started or stopped while holding it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from informers.cache.handlers import ResourceEventHandlerFuncs
from informers.cache.informer import SharedIndexInformer
from informers.errors import InformerStateError
from informers.rest.listwatch import HTTPListerWatcher
from informers.toolkit.runtime import InformerSource, Sink
from informers.toolkit.runtime.mapping import MapFunc
from informers.wire.objects import DeletedFinalStateUnknown
from informers.wire.resources import Resource

__all__ = ["CustomResourceMonitors", "crd_resource"]

log = logging.getLogger(__name__)


def crd_resource(crd: Mapping[str, Any]) -> Resource | None:
    """The resource the GC watches for ``crd``: its storage version (else the
    first served one); None for an incomplete CRD."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or () if isinstance(v, Mapping)]
    chosen = next((v for v in versions if v.get("storage")), None) or next(
        (v for v in versions if v.get("served", True)), None
    )
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if chosen is None or not group or not plural or not kind:
        return None
    return Resource(
        str(group),
        str(chosen.get("name")),
        str(plural),
        str(kind),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
    )


class CustomResourceMonitors:
    """A source whose informers follow the CRDs (see the module docstring).

    :param api_client: the ``kubernetes`` ApiClient the informers list and watch with.
    :param crds: an informer of CustomResourceDefinitions (started by the caller).
    :param map_func: the collector's map function for a resource.
    :param indexers: the indexers each new informer gets.
    """

    def __init__(
        self,
        api_client: Any,
        crds: SharedIndexInformer,
        map_func: Callable[[Resource], MapFunc],
        indexers: Mapping[str, Callable[[Any], list[str]]],
    ) -> None:
        self._client = api_client
        self._crds = crds
        self._map_func = map_func
        self._indexers = dict(indexers)
        self._lock = threading.Lock()
        # Guarded by _lock.
        self._monitors: dict[tuple[str, str], tuple[Resource, SharedIndexInformer, InformerSource]]
        self._monitors = {}
        self._sink: Sink | None = None
        self._registration: Any = None
        self._stopped = False

    @property
    def name(self) -> str:
        return "gc custom resources"

    def informers(self) -> dict[Resource, SharedIndexInformer]:
        """The informer of each custom resource kind watched now."""
        with self._lock:
            return {res: inf for res, inf, _ in self._monitors.values()}

    def start(self, sink: Sink) -> None:
        with self._lock:
            if self._sink is not None or self._stopped:
                raise InformerStateError(f"{self.name}: started twice or after stop")
            self._sink = sink
        handler = ResourceEventHandlerFuncs(
            self._ensure, lambda _, new: self._ensure(new), self._drop
        )
        registration = self._crds.add_event_handler(handler)
        if self._keep(registration):  # stop() ran meanwhile
            registration.remove()

    def _keep(self, registration: Any) -> bool:
        with self._lock:
            self._registration = registration
            return self._stopped

    def _sources(self) -> list[InformerSource]:
        with self._lock:
            return [source for _, _, source in self._monitors.values()]

    def has_synced(self) -> bool:
        with self._lock:
            registration = self._registration
        if registration is None or not registration.has_synced():
            return False
        return all(source.has_synced() for source in self._sources())

    def wait_synced(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            registration = self._registration
        if registration is None or not registration.wait_synced(timeout):
            return False
        for source in self._sources():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not source.wait_synced(left):
                return False
        return True

    def wait_idle(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            registration = self._registration
        if registration is not None and not registration.wait_idle(timeout):
            return False
        for source in self._sources():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not source.wait_idle(left):
                return False
        return True

    def stop(self, timeout: float | None = None) -> None:
        with self._lock:
            self._stopped = True
            registration, self._registration = self._registration, None
            monitors = list(self._monitors.values())
            self._monitors.clear()
        if registration is not None:
            registration.remove()
        for _, informer, source in monitors:
            source.stop(timeout)
            informer.stop()

    # ------------------------------------------------------------ CRD events

    def _ensure(self, crd: Any) -> None:
        resource = crd_resource(crd)
        if resource is None:
            return
        key = (resource.group, resource.plural)
        with self._lock:
            current = self._monitors.get(key)
            if self._stopped or (current is not None and current[0] == resource):
                return
            sink = self._sink
        if current is not None:  # its version changed
            self._stop_monitor(key)
        assert sink is not None
        informer = SharedIndexInformer(
            HTTPListerWatcher(self._client, resource),
            indexers=self._indexers,
            name=f"gc {resource}",
        )
        source = InformerSource(informer, map_func=self._map_func(resource), name=f"gc {resource}")
        with self._lock:
            if self._stopped or key in self._monitors:
                return
            self._monitors[key] = (resource, informer, source)
        source.start(sink)
        informer.start()
        log.info("gc: watching %s", resource)

    def _drop(self, crd: Any) -> None:
        target = crd.obj if isinstance(crd, DeletedFinalStateUnknown) else crd
        resource = crd_resource(target)
        if resource is not None:
            self._stop_monitor((resource.group, resource.plural))

    def _stop_monitor(self, key: tuple[str, str]) -> None:
        with self._lock:
            found = self._monitors.pop(key, None)
        if found is not None:
            _, informer, source = found
            source.stop()
            informer.stop()
            log.info("gc: no longer watching %s", found[0])
