"""One informer over several namespaces: a list and a watch per namespace
behind the interface of one informer (controller-runtime's multi-namespace
cache).

:class:`MultiNamespaceInformer` runs one
:class:`~informers.cache.informer.SharedIndexInformer` per namespace (each
with its own reflector, so a watch that breaks, or a relist, in one
namespace never disturbs the others) and shows them as one:

* one cache view (:class:`MultiNamespaceStore`): ``list()``, the indexes and
  the lister read the union; keys are ``namespace/name``, unique because every
  object lives in exactly one of the namespaces;
* one set of handlers: :meth:`MultiNamespaceInformer.add_event_handler`
  registers a handler on every namespace's informer and serialises its calls
  (it is never called from two threads at once, as with one informer); its
  ``on_synced`` hook runs once, when every namespace's registration synced.
  The relist hooks (``on_relist_begin`` / ``on_relist_end``) are not
  forwarded: a relist of one namespace arrives as its plain adds, updates and
  deletes (a transaction per namespace would interleave with the other
  namespaces' events);
* synced once every namespace has synced.

Thread-safe. Lifecycle as :class:`~informers.cache.informer.SharedIndexInformer`:
configure, :meth:`~MultiNamespaceInformer.start`,
:meth:`~MultiNamespaceInformer.stop` (joins every namespace's threads).
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from informers.cache.fifo import TransformFunc
from informers.cache.handlers import ResourceEventHandler
from informers.cache.informer import SharedIndexInformer
from informers.cache.protocols import InformerStore
from informers.cache.reflector import Reflector, WatchErrorHandler
from informers.cache.registration import ResourceEventHandlerRegistration
from informers.errors import InformerStateError
from informers.util.clock import REAL_CLOCK
from informers.wire.objects import (
    NAMESPACE_INDEX,
    Indexers,
    IndexFunc,
    get_namespace,
    meta_namespace_key,
)

__all__ = ["MultiNamespaceInformer", "MultiNamespaceRegistration", "MultiNamespaceStore"]


class MultiNamespaceStore:
    """A read-only view of several namespaces' caches as one indexed store.

    Reads go to the namespace a key or an object names, or to every cache
    (``list``, ``by_index``...), returning new lists of the shared, read-only
    objects. Writes raise :class:`TypeError`: each namespace's informer
    writes its own cache. Thread-safe as the caches it reads.
    """

    def __init__(self, stores: Mapping[str, InformerStore]) -> None:
        self._stores = dict(stores)

    def _of_key(self, key: str) -> InformerStore | None:
        namespace, slash, _ = key.partition("/")
        return self._stores.get(namespace) if slash else None

    def __len__(self) -> int:
        return sum(len(s) for s in self._stores.values())

    def key_of(self, obj: Any) -> str:
        return meta_namespace_key(obj)

    def list(self) -> builtins.list[Any]:
        return [obj for store in self._stores.values() for obj in store.list()]

    def list_keys(self) -> builtins.list[str]:
        return [key for store in self._stores.values() for key in store.list_keys()]

    def get(self, obj: Any) -> Any | None:
        return self.get_by_key(meta_namespace_key(obj))

    def get_by_key(self, key: str) -> Any | None:
        store = self._of_key(key)
        return store.get_by_key(key) if store is not None else None

    def get_many(self, keys: Iterable[str]) -> builtins.list[Any | None]:
        return [self.get_by_key(key) for key in keys]

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        return [o for store in self._stores.values() for o in store.index(index_name, obj)]

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        if index_name == NAMESPACE_INDEX:
            store = self._stores.get(indexed_value)
            return store.by_index(index_name, indexed_value) if store is not None else []
        return [
            o for store in self._stores.values() for o in store.by_index(index_name, indexed_value)
        ]

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        return [
            k
            for store in self._stores.values()
            for k in store.index_keys(index_name, indexed_value)
        ]

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        values: dict[str, None] = {}
        for store in self._stores.values():
            values.update(dict.fromkeys(store.list_index_func_values(index_name)))
        return builtins.list(values)

    def get_indexers(self) -> dict[str, IndexFunc]:
        for store in self._stores.values():
            return store.get_indexers()
        return {}

    def add_indexers(self, indexers: Indexers) -> None:
        for store in self._stores.values():
            store.add_indexers(indexers)

    def _read_only(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError("a multi-namespace cache is read-only: its informers write it")

    add = update = delete = replace = resync = _read_only
    upsert = delete_key = replace_items = _read_only


class _Serialized:
    """One user handler behind the registrations of every namespace: calls
    are serialised by one lock; ``on_synced`` once all namespaces synced."""

    def __init__(self, handler: ResourceEventHandler, namespaces: int) -> None:
        self._handler = handler
        self._lock = threading.Lock()
        self._unsynced = namespaces  # guarded by _lock
        self._on_synced: Callable[[], object] | None = getattr(handler, "on_synced", None)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self._lock:
            self._handler.on_add(obj, is_in_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        with self._lock:
            self._handler.on_update(old, new)

    def on_delete(self, obj: Any) -> None:
        with self._lock:
            self._handler.on_delete(obj)

    def on_synced(self) -> None:
        with self._lock:
            self._unsynced -= 1
            if self._unsynced == 0 and self._on_synced is not None:
                self._on_synced()

    def on_removed(self) -> None:
        hook = getattr(self._handler, "on_removed", None)
        if callable(hook):
            with self._lock:
                hook()


class MultiNamespaceRegistration:
    """A handler's registrations on every namespace's informer, as one:
    synced when all are, removed together. Thread-safe."""

    def __init__(
        self, handler: ResourceEventHandler, parts: Mapping[str, ResourceEventHandlerRegistration]
    ) -> None:
        self.handler = handler
        self._parts = dict(parts)

    @property
    def registrations(self) -> dict[str, ResourceEventHandlerRegistration]:
        """Each namespace's registration."""
        return dict(self._parts)

    def has_synced(self) -> bool:
        return all(r.has_synced() for r in self._parts.values())

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until every namespace's registration synced, one stopped,
        or ``timeout`` real seconds passed; returns :meth:`has_synced`."""
        deadline = None if timeout is None else REAL_CLOCK.now() + timeout
        for reg in self._parts.values():
            left = None if deadline is None else max(0.0, deadline - REAL_CLOCK.now())
            if not reg.wait_synced(left):
                return False
        return True

    def is_stopped(self) -> bool:
        return any(r.is_stopped() for r in self._parts.values())

    def pending(self) -> int:
        return sum(r.pending() for r in self._parts.values())

    def wait_idle(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else REAL_CLOCK.now() + timeout
        for reg in self._parts.values():
            left = None if deadline is None else max(0.0, deadline - REAL_CLOCK.now())
            if not reg.wait_idle(left):
                return False
        return True

    def remove(self) -> None:
        """Remove the handler from every namespace (see
        :meth:`ResourceEventHandlerRegistration.remove
        <informers.cache.registration.ResourceEventHandlerRegistration.remove>`)."""
        for reg in self._parts.values():
            reg.remove()

    def __repr__(self) -> str:
        return f"<MultiNamespaceRegistration of {len(self._parts)} namespaces>"


class MultiNamespaceInformer:
    """One informer over ``namespaces`` (see the module documentation).

    :param make: builds the informer of one namespace (called once per
        namespace, here).
    :param namespaces: at least one; duplicates are dropped.
    :param name: for logs (default ``"<first informer's name>"``).
    """

    def __init__(
        self,
        make: Callable[[str], SharedIndexInformer],
        namespaces: Iterable[str],
        *,
        name: str = "",
    ) -> None:
        ordered = list(dict.fromkeys(namespaces))
        if not ordered or any(not isinstance(n, str) or not n for n in ordered):
            raise ValueError(f"namespaces must be non-empty names, got {ordered!r}")
        self._informers = {ns: make(ns) for ns in ordered}
        first = next(iter(self._informers.values()))
        self.name = name or first.name
        self._store = MultiNamespaceStore(
            {ns: i.get_indexer() for ns, i in self._informers.items()}
        )

    def __repr__(self) -> str:
        return f"<MultiNamespaceInformer {self.name} in {', '.join(self._informers)}>"

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces, in the order given."""
        return tuple(self._informers)

    @property
    def informers(self) -> dict[str, SharedIndexInformer]:
        """Each namespace's informer."""
        return dict(self._informers)

    # ------------------------------------------------------------------ configuration

    def add_event_handler(
        self,
        handler: ResourceEventHandler,
        resync_period: float | None = None,
        *,
        deliver_existing: bool = True,
    ) -> MultiNamespaceRegistration:
        """Register ``handler`` with every namespace (as
        :meth:`SharedIndexInformer.add_event_handler
        <informers.cache.informer.SharedIndexInformer.add_event_handler>`);
        its calls are serialised, ``on_synced`` runs once."""
        wrapped = _Serialized(handler, len(self._informers))
        parts: dict[str, ResourceEventHandlerRegistration] = {}
        try:
            for ns, informer in self._informers.items():
                parts[ns] = informer.add_event_handler(
                    wrapped, resync_period, deliver_existing=deliver_existing
                )
        except InformerStateError:
            for reg in parts.values():
                reg.remove()
            raise
        return MultiNamespaceRegistration(handler, parts)

    def add_indexers(self, indexers: Indexers) -> None:
        """Add indexes to every namespace's cache."""
        for informer in self._informers.values():
            informer.add_indexers(indexers)

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Set the transform of every namespace's informer."""
        for informer in self._informers.values():
            informer.set_transform(transform)

    def set_watch_error_handler(self, handler: WatchErrorHandler | None) -> None:
        """Set the watch error handler of every namespace's informer."""
        for informer in self._informers.values():
            informer.set_watch_error_handler(handler)

    # ------------------------------------------------------------------ reading

    def get_store(self) -> MultiNamespaceStore:
        """The union of the namespaces' caches (read-only)."""
        return self._store

    def get_indexer(self) -> MultiNamespaceStore:
        """Same as :meth:`get_store`."""
        return self._store

    def has_synced(self) -> bool:
        """Whether every namespace has synced."""
        return all(i.has_synced() for i in self._informers.values())

    def wait_synced(self, timeout: float | None = None) -> bool:
        """Block until every namespace synced, one stopped, or ``timeout``
        real seconds; returns :meth:`has_synced`."""
        deadline = None if timeout is None else REAL_CLOCK.now() + timeout
        for informer in self._informers.values():
            left = None if deadline is None else max(0.0, deadline - REAL_CLOCK.now())
            if not informer.wait_synced(left):
                return False
        return True

    @property
    def reflector(self) -> Reflector | None:
        """The reflector of the first namespace not synced yet (else of the
        first namespace); ``None`` before start."""
        informers = list(self._informers.values())
        pending = [i for i in informers if not i.has_synced()]
        return (pending or informers)[0].reflector

    def registrations(self) -> list[ResourceEventHandlerRegistration]:
        """Every namespace's registrations."""
        return [r for i in self._informers.values() for r in i.registrations()]

    def is_stopped(self) -> bool:
        return any(i.is_stopped() for i in self._informers.values())

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Every namespace's :meth:`SharedIndexInformer.wait_idle
        <informers.cache.informer.SharedIndexInformer.wait_idle>`, within
        ``timeout`` real seconds in all."""
        deadline = REAL_CLOCK.now() + timeout
        return all(
            i.wait_idle(max(0.0, deadline - REAL_CLOCK.now())) for i in self._informers.values()
        )

    def wait_for_resource_version(self, target: Mapping[str, Any], timeout: float = 10.0) -> bool:
        """Read-your-writes for object ``target``: waits on the informer of
        its namespace (False for another namespace)."""
        informer = self._informers.get(get_namespace(target))
        return informer is not None and informer.wait_for_resource_version(target, timeout)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start every namespace's informer; if one refuses (stopped), the
        ones started here are stopped again and the error raised."""
        started: list[SharedIndexInformer] = []
        try:
            for informer in self._informers.values():
                informer.start()
                started.append(informer)
        except InformerStateError:
            for informer in started:
                informer.stop()
            raise

    def run(self, stop: threading.Event) -> None:
        """Start, block until ``stop`` is set, then :meth:`stop`."""
        self.start()
        try:
            stop.wait()
        finally:
            self.stop()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop every namespace's informer, one after the other (each as
        :meth:`SharedIndexInformer.stop
        <informers.cache.informer.SharedIndexInformer.stop>`: its requests
        in flight are aborted, its threads joined). Idempotent."""
        for informer in self._informers.values():
            informer.stop(timeout)
