"""SharedInformerFactory: one shared informer per resource and options over
one API client.

Informers are created on first request (:meth:`SharedInformerFactory.for_resource`
or a helper such as :meth:`~SharedInformerFactory.pods`), started together by
:meth:`~SharedInformerFactory.start` (later requests are started by the next
``start()``), removed one by one by :meth:`~SharedInformerFactory.remove`, and
stopped and joined by :meth:`~SharedInformerFactory.shutdown`. Per-kind
options (namespaces, selectors, metadata-only, transform, store, resync) key
their own informers (:mod:`informers.cache.scope`). Thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import Any, Unpack, cast, overload

from informers.cache.fifo import TransformFunc
from informers.cache.informer import SharedIndexInformer
from informers.cache.listers import Lister
from informers.cache.metrics import InformerMetricsProvider
from informers.cache.multinamespace import MultiNamespaceInformer
from informers.cache.protocols import StoreFactory
from informers.cache.reflector import ReflectorConfig
from informers.cache.scope import (
    InformerKey,
    InformerOptions,
    ScopeOptions,
    metadata_store,
    notify_removed,
)
from informers.cache.transforms import chain, strip_managed_fields
from informers.cache.wait import pending_after_wait
from informers.errors import (
    CacheSyncTimeoutError,
    InformerStateError,
    permanent_failure_hint,
)
from informers.rest.discovery import resolve_resource
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.util.clock import REAL_CLOCK, Clock
from informers.wire import resources as _res
from informers.wire.objects import NAMESPACE_INDEX, namespace_index
from informers.wire.resources import Resource

log = logging.getLogger(__name__)

__all__ = ["SharedInformerFactory"]

#: An informer the factory makes: one per namespace set, or one over them all.
AnyInformer = SharedIndexInformer | MultiNamespaceInformer


def _synced_or_failed(informer: AnyInformer) -> bool:
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
        retrying it with backoff; :meth:`wait_for_cache_sync` then raises
        at once, naming it. Off by default, as in client-go: a CRD installed later heals
        a 404.
    :param transform: set on every informer (see
        :meth:`SharedIndexInformer.set_transform`).
    :param store: builds every informer's cache (see
        :class:`~informers.cache.protocols.StoreFactory`; default the dict-based
        :class:`~informers.cache.store.Indexer`). ``store=CompactStore`` keeps
        objects encoded (:mod:`informers.cache.compact`); pair it with
        ``transform=strip_managed_fields`` for the smallest cache.
    :param metrics: every informer's metrics provider (see
        :mod:`informers.cache.metrics`; default: the process-wide one when
        each informer starts, none unless installed).
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
        metrics: InformerMetricsProvider | None = None,
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
        self._metrics = metrics
        self._lock = threading.Lock()
        # Guarded by _lock:
        # Keyed by the Resource for the factory's defaults, else by InformerKey.
        self._informers: dict[Resource | InformerKey, AnyInformer] = {}
        self._started: set[Resource | InformerKey] = set()
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

    @overload
    def for_resource(
        self,
        resource: Resource | str,
        *,
        namespaces: None = None,
        **options: Unpack[ScopeOptions],
    ) -> SharedIndexInformer: ...

    @overload
    def for_resource(
        self,
        resource: Resource | str,
        *,
        namespaces: Iterable[str],
        **options: Unpack[ScopeOptions],
    ) -> MultiNamespaceInformer: ...

    def for_resource(
        self,
        resource: Resource | str,
        *,
        namespaces: Iterable[str] | None = None,
        **options: Unpack[ScopeOptions],
    ) -> AnyInformer:
        """The shared informer of ``resource`` with these options (created on
        first call): a :class:`Resource` or a name as :meth:`resolve` reads it.

        The options (controller-runtime's ``ByObject``,
        :class:`~informers.cache.scope.ScopeOptions`) apply to this
        informer alone; unset ones take the factory's:

        :param namespaces: watch these namespaces (one list and watch each,
            behind one :class:`~informers.cache.multinamespace.MultiNamespaceInformer`);
            default the factory's ``namespace``. A set: order and repeats do
            not matter. Refused (:class:`ValueError`) for a cluster-scoped kind.
        :param label_selector: server-side label selector, e.g. ``"app=web"``.
        :param field_selector: server-side field selector, e.g.
            ``"spec.nodeName=node-1"``.
        :param metadata_only: cache ``PartialObjectMetadata`` objects (names,
            labels, annotations, owners: no spec or status;
            :mod:`informers.wire.partial`).
        :param managed_fields: keep ``metadata.managedFields`` (default: kept
            for whole objects, dropped for metadata-only ones -- see
            :mod:`informers.cache.scope` for why).
        :param transform: applied to each object before it is cached
            (default the factory's), after managed fields were dropped.
        :param store: builds the cache (default the factory's; for a
            metadata-only informer when the factory names none,
            :func:`~informers.cache.scope.metadata_store`: a
            :class:`~informers.cache.compact.raw.RawStore`).
        :param resync: default resync period of its handlers (default the
            factory's ``resync_period``).

        Informers are keyed by the resource and the options in effect
        (:class:`~informers.cache.scope.InformerKey`): the same options give
        the same informer, different ones a different informer. Selectors
        combine with the factory's ``tweak_list_options``, which runs last.
        """
        resource = self.resolve(resource)
        key, in_effect = self._key(resource, namespaces, options)
        with self._lock:
            if self._shut_down:
                raise InformerStateError("the factory was shut down")
            informer = self._informers.get(key)
            if informer is None:
                informer = self._build(resource, key, in_effect)
                self._informers[key] = informer
            return informer

    def _key(
        self, resource: Resource, namespaces: Iterable[str] | None, options: ScopeOptions
    ) -> tuple[Resource | InformerKey, InformerOptions]:
        """The key and the options in effect of a request (see :meth:`for_resource`)."""
        if namespaces is not None:
            if isinstance(namespaces, str):
                raise TypeError("namespaces= takes a list of names, not one string")
            if not resource.namespaced:
                raise ValueError(f"{resource} is cluster-scoped: it has no namespaces")
        unknown = set(options) - set(ScopeOptions.__annotations__)
        if unknown:
            raise TypeError(f"unknown informer options: {', '.join(sorted(unknown))}")
        metadata_only = options.get("metadata_only", False)
        managed_fields = options.get("managed_fields")
        store = options.get("store")
        if store is None:
            store = self._store if self._store is not None or not metadata_only else metadata_store
        transform, resync = options.get("transform"), options.get("resync")
        in_effect = InformerOptions(
            namespaces=tuple(sorted(set(namespaces))) if namespaces is not None else None,
            label_selector=options.get("label_selector", ""),
            field_selector=options.get("field_selector", ""),
            metadata_only=metadata_only,
            managed_fields=not metadata_only if managed_fields is None else managed_fields,
            transform=self._transform if transform is None else transform,
            store=store,
            resync=self._resync if resync is None else resync,
        )
        defaults = InformerOptions(
            transform=self._transform, store=self._store, resync=self._resync
        )
        return (resource if in_effect == defaults else InformerKey(resource, in_effect)), in_effect

    def _build(
        self, resource: Resource, key: Resource | InformerKey, options: InformerOptions
    ) -> AnyInformer:
        name = str(key)

        def make(namespace: str | None) -> SharedIndexInformer:
            lw = HTTPListerWatcher(
                self._client,
                resource,
                namespace,
                label_selector=options.label_selector,
                field_selector=options.field_selector,
                tweak_list_options=self._tweak,
                metadata_only=options.metadata_only,
            )
            full = f"{name}@{namespace}" if options.namespaces is not None else name
            config = self._config or ReflectorConfig()
            informer = SharedIndexInformer(
                lw,
                indexers={NAMESPACE_INDEX: namespace_index} if resource.namespaced else None,
                resync_period=options.resync,
                name=full,
                reflector_config=replace(config, description=full),
                clock=self._clock,
                store=options.store,
                metrics=self._metrics,
            )
            transform = options.transform
            if not options.managed_fields:
                transform = (
                    strip_managed_fields
                    if transform is None
                    else chain(strip_managed_fields, transform)
                )
            if transform is not None:
                informer.set_transform(transform)
            return informer

        if options.namespaces is None:
            return make(self.namespace)
        return MultiNamespaceInformer(make, options.namespaces, name=name)

    def lister(self, resource: Resource | str, **options: Any) -> Lister:
        """A lister over the cache of the shared informer that
        :meth:`for_resource` gives for ``resource`` and ``options``."""
        return Lister(self.for_resource(resource, **options).get_indexer())

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

    def informers(self) -> dict[Resource | InformerKey, AnyInformer]:
        """Every informer created so far and not removed: keyed by its
        :class:`Resource` when it has the factory's options, else by its
        :class:`~informers.cache.scope.InformerKey`."""
        with self._lock:
            return dict(self._informers)

    def remove(self, informer: AnyInformer | Resource | str, **options: Any) -> bool:
        """Remove an informer: stop it, join its threads, then tell its
        handlers; the factory stays ready (a later :meth:`for_resource` of
        the same kind and options builds and -- at the next :meth:`start` --
        starts a new informer, as after a CRD was reinstalled).

        ``informer`` is the informer itself, or a resource (a
        :class:`Resource` or a name) with the options it was requested with
        (see :meth:`for_resource`). A name is first matched against the
        informers the factory holds, so a custom resource whose CRD is gone
        (discovery no longer knows it) can still be removed.

        Handlers are told by their optional ``on_removed()`` hook, called
        once per handler after it returned from its last event (on this
        thread; see :func:`~informers.cache.scope.notify_removed`); each
        registration reports ``is_stopped()`` from then on. The informer's
        own ``has_synced()`` keeps its last value, as after ``stop()``.
        Called on a thread the library runs user code on (a handler), the
        threads are not joined (see :meth:`SharedIndexInformer.stop`) and
        the hooks run at once. Returns whether an informer was removed.
        """
        with self._lock:
            key = self._key_of(informer, options)
            if key is None or key not in self._informers:
                return False
            found = self._informers.pop(key)
            self._started.discard(key)
        handlers = [r.handler for r in found.registrations()]
        found.stop()
        notify_removed(handlers)
        log.info("%s: informer removed", key)
        return True

    def _key_of(
        self, informer: AnyInformer | Resource | str, options: dict[str, Any]
    ) -> Resource | InformerKey | None:
        """The key of ``informer`` among the held ones (under the lock; a
        name no held informer answers to is resolved as :meth:`resolve`
        does, outside it)."""
        if isinstance(informer, SharedIndexInformer | MultiNamespaceInformer):
            return next((k for k, held in self._informers.items() if held is informer), None)
        resource: Resource | None = informer if isinstance(informer, Resource) else None
        if resource is None:
            name = str(informer).strip()
            held = {k.resource if isinstance(k, InformerKey) else k for k in self._informers}
            named = [r for r in held if name in _names(r)]
            resource = named[0] if len(named) == 1 else _res.find_builtin(name)
            if resource is None:
                return None
        namespaces = options.pop("namespaces", None)
        return self._key(resource, namespaces, cast(ScopeOptions, options))[0]

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

    def wait_for_cache_sync(
        self, timeout: float | None = None, stop: threading.Event | None = None
    ) -> bool:
        """The gate, with the contract of :func:`informers.wait_for_cache_sync`:
        block until every started informer synced and return True; return
        False when ``stop`` is set first.

        Raises :class:`~informers.errors.CacheSyncTimeoutError` when
        ``timeout`` seconds pass first, or at once when an informer can never
        sync (it stopped, or with ``fail_fast`` its list failed in a way that
        does not heal, and it was stopped): its ``not_synced`` maps each such
        resource's short name (``"pods"``, ``"deployments.apps"``) to why, as
        :meth:`unsynced` does, with what to check for a permanent failure.
        ``timeout=None`` waits without limit.
        """
        not_synced = self._wait_unsynced(timeout, stop)
        if not_synced is None:
            return False
        if not_synced:
            raise CacheSyncTimeoutError(not_synced)
        return True

    def unsynced(self, timeout: float | None = 0.0) -> dict[str, str]:
        """A report rather than a gate (client-go's ``factory.WaitForCacheSync``):
        wait up to ``timeout`` seconds (default: not at all; ``None``: without
        limit) for every started informer to sync, or to stop, then return the
        ones that are not synced, keyed by the resource's short name, with why
        (the last error, the permanent-failure hint, ``"stopped"``); empty when
        all synced. Never raises on a timeout."""
        not_synced = self._wait_unsynced(timeout, None)
        assert not_synced is not None  # no stop event: never cut short
        return not_synced

    def _wait_unsynced(
        self, timeout: float | None, stop: threading.Event | None
    ) -> dict[str, str] | None:
        """Wait as :meth:`unsynced` does (``None`` when ``stop`` was set first)."""
        with self._lock:
            started = [(r, self._informers[r]) for r in self._started]
        checks: list[Any] = [i for _, i in started]
        if self._fail_fast:
            # A failure that does not heal ends the wait for that informer.
            checks = [partial(_synced_or_failed, i) for i in checks]
        # Real time, like the informers' own ``wait_synced``: a fake clock given to
        # the factory drives resyncs and backoff, not this caller's patience.
        if pending_after_wait(checks, timeout, stop) is None:
            return None
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


def _names(resource: Resource) -> set[str]:
    """The names a held resource answers to in :meth:`SharedInformerFactory.remove`."""
    return {
        str(resource),
        resource.plural,
        resource.kind,
        resource.kind.lower(),
        resource.singular,
    }
