"""What one informer of a factory caches: per-kind options (controller-runtime's
``ByObject``) and the key that tells two differently scoped informers of one
kind apart.

:class:`InformerOptions` is what
:meth:`SharedInformerFactory.for_resource
<informers.cache.factory.SharedInformerFactory.for_resource>` takes besides
the resource: the namespaces, server-side label and field selectors,
metadata-only, transform, store and resync period. The factory fills what is
unset from its own defaults, and keys each informer by the resource and the
options in effect (:class:`InformerKey`): two requests with the same options
share an informer, two with different options get two -- never one that
silently ignores the other's options. An informer with the factory's
defaults is keyed by its :class:`~informers.wire.resources.Resource` alone,
as before.

Removal: :meth:`SharedInformerFactory.remove
<informers.cache.factory.SharedInformerFactory.remove>` stops an informer
and then calls the optional ``on_removed()`` hook of each of its handlers
(once per handler, after the handler returned from its last event):
:func:`notify_removed`. A handler's registration reports
``is_stopped()`` from then on. Pure values and functions; thread-safe.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from informers.cache.compact import CompactStore, JSONCodec, ZstdCodec
from informers.cache.compact._compressor import default_backend
from informers.cache.fifo import TransformFunc
from informers.cache.protocols import StoreFactory
from informers.errors import IndexFunctionError
from informers.wire.objects import Indexers
from informers.wire.resources import Resource

if TYPE_CHECKING:
    from informers.cache.protocols import InformerStore

__all__ = [
    "METADATA_HOT_OBJECTS",
    "InformerKey",
    "InformerOptions",
    "ScopeOptions",
    "metadata_store",
    "notify_removed",
]

log = logging.getLogger(__name__)

#: The hot set (decoded objects kept) of :func:`metadata_store`'s store: a
#: metadata-only object decodes in a few microseconds, so few are kept.
METADATA_HOT_OBJECTS = 1_000


class ScopeOptions(TypedDict, total=False):
    """The keywords of :meth:`SharedInformerFactory.for_resource
    <informers.cache.factory.SharedInformerFactory.for_resource>` besides
    ``namespaces`` (see :class:`InformerOptions` for each)."""

    label_selector: str
    field_selector: str
    metadata_only: bool
    managed_fields: bool | None
    transform: TransformFunc | None
    store: StoreFactory | None
    resync: float | None


def metadata_store(
    *, indexers: Indexers, on_index_error: Callable[[IndexFunctionError], None]
) -> InformerStore:
    """The cache a metadata-only informer gets when neither the request nor
    the factory names a store (a :class:`~informers.cache.protocols.StoreFactory`):
    a :class:`~informers.cache.compact.store.CompactStore` keeping each object
    as zstd-compressed JSON (:class:`~informers.cache.compact.codecs.ZstdCodec`,
    its dictionary learned from the first object: a stripped pod's metadata
    of about 620 bytes takes about 185, for about 2 us per write) -- or, without
    the ``zstandard`` package (the ``fast`` extra), as plain JSON
    (:class:`~informers.cache.compact.codecs.JSONCodec`) -- with a hot set of
    :data:`METADATA_HOT_OBJECTS`. Handlers, transforms and reads get dicts,
    as with the default store."""
    codec = ZstdCodec() if default_backend() == "zstd" else JSONCodec()
    return CompactStore(
        indexers=indexers,
        on_index_error=on_index_error,
        codec=codec,
        hot_objects=METADATA_HOT_OBJECTS,
    )


@dataclass(frozen=True, slots=True)
class InformerOptions:
    """The options of one informer (hashable; callables compare by identity).

    :param namespaces: watch these namespaces only, one list and watch each
        behind one informer (:class:`~informers.cache.multinamespace.MultiNamespaceInformer`),
        sorted, without repeats; ``None``: the factory's namespace (or all).
    :param label_selector: server-side label selector (``"app=web"``).
    :param field_selector: server-side field selector (``"spec.nodeName=n1"``).
    :param metadata_only: cache ``PartialObjectMetadata`` objects only
        (:mod:`informers.wire.partial`).
    :param managed_fields: keep ``metadata.managedFields``; when false they
        are dropped before the transform runs
        (:func:`~informers.cache.transforms.strip_managed_fields`). The
        factory's default: false for metadata-only informers, true otherwise.
    :param transform: applied to every object before it is cached.
    :param store: builds the cache (a :class:`~informers.cache.protocols.StoreFactory`).
    :param resync: the default resync period of the informer's handlers, seconds.
    """

    namespaces: tuple[str, ...] | None = None
    label_selector: str = ""
    field_selector: str = ""
    metadata_only: bool = False
    managed_fields: bool = True
    transform: TransformFunc | None = None
    store: StoreFactory | None = None
    resync: float = 0.0

    def describe(self) -> str:
        """A short text of the options that narrow or shape the cache, for
        names and logs: ``"metadata-only; namespaces a,b; labels app=web"``
        (``""`` when none)."""
        parts = []
        if self.metadata_only:
            parts.append("metadata-only")
        if self.managed_fields == self.metadata_only:  # not the default of the kind of cache
            parts.append("managed fields" if self.managed_fields else "no managed fields")
        if self.namespaces is not None:
            parts.append(f"namespaces {','.join(self.namespaces)}")
        if self.label_selector:
            parts.append(f"labels {self.label_selector}")
        if self.field_selector:
            parts.append(f"fields {self.field_selector}")
        if self.transform is not None:
            parts.append(f"transform {getattr(self.transform, '__name__', 'custom')}")
        if self.store is not None and self.store is not metadata_store:
            parts.append(f"store {getattr(self.store, '__name__', 'custom')}")
        if self.resync:
            parts.append(f"resync {self.resync:g}s")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class InformerKey:
    """Which informer of a factory: a resource and the options in effect.
    Its text (``str()``) names the informer in logs, thread names and the
    factory's sync reports: ``"secrets[metadata-only; labels app=web]"``."""

    resource: Resource
    options: InformerOptions

    def __str__(self) -> str:
        described = self.options.describe()
        return f"{self.resource}[{described}]" if described else str(self.resource)


def notify_removed(handlers: Iterable[Any]) -> None:
    """Call the ``on_removed()`` hook of each handler that has one, once per
    handler (by identity); one that raises is logged and the others still
    called."""
    seen: set[int] = set()
    for handler in handlers:
        if id(handler) in seen:
            continue
        seen.add(id(handler))
        hook = getattr(handler, "on_removed", None)
        if not callable(hook):
            continue
        try:
            hook()
        except Exception:
            log.exception("handler %s raised in on_removed", type(handler).__name__)
