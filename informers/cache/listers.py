"""Read-only listers over an informer's cache, with label selectors
evaluated client-side (same grammar as the API server, see
:mod:`informers.wire.selectors.labels`).

Listers read the :class:`~informers.cache.store.Indexer` under its lock and return
new lists of shared, read-only objects. They are cheap to create and
thread-safe. ``list()`` uses the ``namespace`` index when the cache has it.
A selector is matched outside the store's lock, over the snapshot the store
returned, with :meth:`LabelSelector.filter
<informers.wire.selectors.labels.LabelSelector.filter>` (compiled once per selector;
selector text is parsed once and cached, 256 most recent).
"""

from __future__ import annotations

import functools
from typing import Any

from informers.cache.protocols import IndexedStore
from informers.wire.fastpath import in_namespace
from informers.wire.objects import NAMESPACE_INDEX, get_labels, get_namespace
from informers.wire.selectors import LabelSelector

__all__ = ["Lister", "NamespaceLister", "Selector"]

#: A label selector as text (``"app=web,tier!=db"``) or parsed.
Selector = str | LabelSelector | None


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> LabelSelector:
    # Selectors are immutable values, so a parsed one can be shared; a parse
    # error is raised again on every call (lru_cache keeps only results).
    return LabelSelector.parse(text)


def _selector(selector: Selector) -> LabelSelector | None:
    if selector is None:
        return None
    if type(selector) is str:
        parsed = _parse(selector)
    elif isinstance(selector, str):  # a str subclass: not cached
        parsed = LabelSelector.parse(selector)
    else:
        parsed = selector
    return None if parsed.empty else parsed


def _filter(objects: list[Any], selector: Selector) -> list[Any]:
    """The objects whose labels match ``selector`` (``objects`` itself when it
    is empty)."""
    sel = _selector(selector)
    if sel is None:
        return objects
    if type(sel) is not LabelSelector:  # a subclass, or a duck-typed selector
        return [o for o in objects if sel.matches(get_labels(o))]
    return sel.filter(objects)


class Lister:
    """Lists and gets objects of one kind from a cache.

    For namespaced kinds use :meth:`namespace` (or pass ``namespace`` to
    :meth:`get`); ``get(name)`` alone looks up cluster-scoped objects.
    Raises :class:`~informers.errors.SelectorParseError` for a bad selector.
    """

    def __init__(self, indexer: IndexedStore) -> None:
        self._indexer = indexer

    def list(self, selector: Selector = None) -> list[Any]:
        """Every cached object matching ``selector`` (all when ``None``)."""
        return _filter(self._indexer.list(), selector)

    def get(self, name: str, namespace: str = "") -> Any | None:
        """The object named ``name`` (in ``namespace``), or ``None``."""
        return self._indexer.get_by_key(f"{namespace}/{name}" if namespace else name)

    def namespace(self, namespace: str) -> NamespaceLister:
        """A lister restricted to one namespace."""
        return NamespaceLister(self._indexer, namespace)

    by_namespace = namespace


class NamespaceLister:
    """Lists and gets objects of one namespace."""

    def __init__(self, indexer: IndexedStore, namespace: str) -> None:
        self._indexer = indexer
        self.namespace = namespace

    def list(self, selector: Selector = None) -> list[Any]:
        """The namespace's objects matching ``selector``."""
        if NAMESPACE_INDEX in self._indexer.get_indexers():
            objects = self._indexer.by_index(NAMESPACE_INDEX, self.namespace)
        else:
            objects = in_namespace(self._indexer.list(), self.namespace, get_namespace)
        return _filter(objects, selector)

    def get(self, name: str) -> Any | None:
        """The object ``namespace/name``, or ``None``."""
        return self._indexer.get_by_key(f"{self.namespace}/{name}")
