"""SharedInformerFactory: one shared informer per resource over one API client.

Informers are created on first request (:meth:`SharedInformerFactory.for_resource`
or a helper such as :meth:`~SharedInformerFactory.pods`), started together by
:meth:`~SharedInformerFactory.start` (later requests are started by the next
``start()``), and stopped and joined by :meth:`~SharedInformerFactory.shutdown`.
Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from informers.cache.fifo import TransformFunc
from informers.cache.informer import SharedIndexInformer
from informers.cache.listers import Lister
from informers.cache.protocols import StoreFactory
from informers.cache.reflector import ReflectorConfig
from informers.cache.wait import pending_after_wait
from informers.errors import (
    InformerStateError,
    permanent_failure_hint,
)
from informers.rest.discovery import resolve_resource
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire import resources as _res
from informers.wire.objects import NAMESPACE_INDEX, namespace_index
from informers.wire.resources import Resource

__all__ = ["SharedInformerFactory"]


def _synced_or_failed(informer: SharedIndexInformer) -> bool:
    reflector = informer.reflector
    return (
        informer.has_synced()
        or informer.is_stopped()
        or (reflector is not None and reflector.permanent_error() is not None)
    )


class SharedInformerFactory:
    """Creates and owns shared informers.

    :param api_client: a :class:`kubernetes.client.ApiClient` (configuration,
        credentials and TLS come from it; the caller closes it).
    :param namespace: watch one namespace only (``None``: all).
    :param resync_period: default resync period of every informer (seconds).
    :param tweak_list_options: adjusts the options of every list and watch.
    :param fail_fast: stop an informer whose list keeps failing in a way that
        does not heal by itself (400, 401, 403, 404: a resource the server
        does not serve, a bad selector, credentials or RBAC), instead of
        retrying it with backoff; :meth:`wait_for_cache_sync` then reports it
        at once. Off by default, as in client-go: a CRD installed later heals
        a 404.
    :param transform: set on every informer (see
        :meth:`SharedIndexInformer.set_transform`).
    :param store: builds every informer's cache (see
        :class:`~informers.cache.protocols.StoreFactory`; default the dict-based
        :class:`~informers.cache.store.Indexer`). ``store=CompactStore`` keeps
        objects encoded (:mod:`informers.cache.compact`); pair it with
        ``transform=strip_managed_fields`` for the smallest cache.
    """

    def __init__(
        self,
        api_client: Any,
        namespace: str | None = None,
        resync_period: float = 0.0,
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        transform: TransformFunc | None = None,
        *,
        reflector_config: ReflectorConfig | None = None,
        clock: Clock = REAL_CLOCK,
        fail_fast: bool = False,
        store: StoreFactory | None = None,
    ) -> None:
        self._client = api_client
        self.namespace = namespace
        self._resync = resync_period
        self._tweak = tweak_list_options
        self._transform = transform
        self._config = reflector_config
        self._clock = clock
        self._fail_fast = fail_fast
        self._store = store
        self._lock = threading.Lock()
        # Guarded by _lock:
        self._informers: dict[Resource, SharedIndexInformer] = {}
        self._started: set[Resource] = set()
        self._shut_down = False

    def resolve(self, resource: Resource | str) -> Resource:
        """The :class:`Resource` a name means, as kubectl reads names:
        ``"pods"``, ``"pod"``, ``"po"``, ``"Pod"``, ``"deployments.apps"``,
        ``"deploy"`` or a custom resource's ``"foos.example.com"``.

        Built-in kinds resolve locally; other names through the server's
        discovery documents (blocks on HTTP). Raises
        :class:`~informers.errors.UnknownResourceError` listing close matches
        when neither knows the name, or the discovery request's
        :class:`~informers.errors.ApiError` when the server cannot be asked.
        """
        return resolve_resource(self._client, resource)

    def for_resource(self, resource: Resource | str) -> SharedIndexInformer:
        """The shared informer of ``resource`` (created on first call): a
        :class:`Resource` or a name as :meth:`resolve` reads it."""
        resource = self.resolve(resource)
        with self._lock:
            if self._shut_down:
                raise InformerStateError("the factory was shut down")
            informer = self._informers.get(resource)
            if informer is not None:
                return informer
            lw = HTTPListerWatcher(
                self._client, resource, self.namespace, tweak_list_options=self._tweak
            )
            name = str(resource)
            config = self._config or ReflectorConfig()
            informer = SharedIndexInformer(
                lw,
                indexers={NAMESPACE_INDEX: namespace_index} if resource.namespaced else None,
                resync_period=self._resync,
                name=name,
                reflector_config=replace(config, description=name),
                clock=self._clock,
                store=self._store,
            )
            if self._transform is not None:
                informer.set_transform(self._transform)
            self._informers[resource] = informer
            return informer

    def lister(self, resource: Resource | str) -> Lister:
        """A lister over the shared informer's cache."""
        return Lister(self.for_resource(resource).get_indexer())

    # helpers for common kinds
    def pods(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.PODS`."""
        return self.for_resource(_res.PODS)

    def services(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.SERVICES`."""
        return self.for_resource(_res.SERVICES)

    def configmaps(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.CONFIGMAPS`."""
        return self.for_resource(_res.CONFIGMAPS)

    def secrets(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.SECRETS`."""
        return self.for_resource(_res.SECRETS)

    def namespaces(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.NAMESPACES`."""
        return self.for_resource(_res.NAMESPACES)

    def nodes(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.NODES`."""
        return self.for_resource(_res.NODES)

    def deployments(self) -> SharedIndexInformer:
        """The shared informer of :data:`~informers.wire.resources.DEPLOYMENTS`."""
        return self.for_resource(_res.DEPLOYMENTS)

    def informers(self) -> dict[Resource, SharedIndexInformer]:
        """Every informer created so far."""
        with self._lock:
            return dict(self._informers)

    def start(self) -> None:
        """Start every informer not started yet.

        Raises :class:`~informers.errors.InformerStateError` once
        :meth:`shutdown` was called -- also when it is called while this
        runs: then no informer is left running (each informer's start and
        stop are atomic with respect to each other)."""
        with self._lock:
            if self._shut_down:
                raise InformerStateError("the factory was shut down")
            todo = [(r, i) for r, i in self._informers.items() if r not in self._started]
            self._started.update(r for r, _ in todo)
        for _, informer in todo:
            try:
                informer.start()
            except InformerStateError as exc:
                with self._lock:
                    shut_down = self._shut_down
                if shut_down:  # shutdown() stopped it first
                    raise InformerStateError("the factory was shut down") from exc
                raise

    def wait_for_cache_sync(self, timeout: float | None = None) -> dict[str, str]:
        """Block until every started informer synced (or stopped: at once)
        or ``timeout`` passed.

        Returns the informers that are not synced, keyed by the resource's
        short name (``"pods"``, ``"deployments.apps"``), with why (empty: all
        synced); never raises on a timeout. This is client-go's
        ``factory.WaitForCacheSync``, a report;
        :func:`informers.cache.wait.wait_for_cache_sync` is the gate that raises.
        """
        with self._lock:
            started = [(r, self._informers[r]) for r in self._started]
        checks: list[Any] = [i for _, i in started]
        if self._fail_fast:
            # A failure that does not heal ends the wait for that informer.
            checks = [partial(_synced_or_failed, i) for i in checks]
        # Real time, like the informers' own ``wait_synced``: a fake clock given to
        # the factory drives resyncs and backoff, not this caller's patience.
        pending_after_wait(checks, timeout)
        not_synced: dict[str, str] = {}
        for resource, informer in started:
            if informer.has_synced():
                continue
            reflector = informer.reflector
            errors = reflector.errors() if reflector else []
            why = f"last error: {errors[-1]}" if errors else "initial list not done"
            permanent = reflector.permanent_error() if reflector else None
            if permanent is not None:
                hint = permanent_failure_hint(permanent, str(resource))
                why = f"{why}; {hint}"
                if self._fail_fast:
                    informer.stop()
                    why = f"failed, stopped: {permanent}; {hint}"
            if informer.is_stopped() and permanent is None:
                why = "stopped"
            not_synced[str(resource)] = why
        return not_synced

    def shutdown(self) -> None:
        """Stop every informer and join all their threads. Idempotent."""
        with self._lock:
            self._shut_down = True
            informers = list(self._informers.values())
        for informer in informers:
            informer.stop()
