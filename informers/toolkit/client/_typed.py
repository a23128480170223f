"""Typed reads of the client: raw objects as the official client's models
(``model=V1Pod``), memoised per (model, uid, resourceVersion) as the
trackers memoise theirs, so reading the same cached object twice converts it
once. Private: :class:`~informers.toolkit.client.Client` is the public face.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import cachetools

from informers.rest.models import is_kubernetes_model, model_deserializer
from informers.wire.objects import get_resource_version, get_uid

__all__ = ["DEFAULT_MODEL_CACHE_SIZE", "ModelMemo"]

#: How many converted objects a client keeps by default.
DEFAULT_MODEL_CACHE_SIZE = 4096


class ModelMemo:
    """Converts raw objects to kubernetes models and memoises the results in
    an LRU of ``size`` entries; objects without uid or resourceVersion are
    converted every time. Thread-safe (one lock around the LRU; conversions
    run outside it). A memoised model is shared: read-only by contract."""

    __slots__ = ("_cache", "_deserialize", "_lock")

    def __init__(self, size: int = DEFAULT_MODEL_CACHE_SIZE) -> None:
        self._lock = threading.Lock()
        self._cache: cachetools.LRUCache[tuple[type[Any], str, str], Any] = cachetools.LRUCache(
            maxsize=max(1, size)
        )
        self._deserialize: Any = None

    def convert(self, raw: Mapping[str, Any], model: type[Any]) -> Any:
        """``raw`` as an instance of ``model`` (a kubernetes model class);
        :class:`TypeError` for another class."""
        if not is_kubernetes_model(model):
            raise TypeError(f"model= takes an official kubernetes client model, not {model!r}")
        uid, version = get_uid(raw), get_resource_version(raw)
        key = (model, uid, version) if uid and version else None
        if key is not None:
            with self._lock:
                found = self._cache.get(key)
            if found is not None:
                return found
        deserialize = self._deserialize
        if deserialize is None:
            deserialize = self._deserialize = model_deserializer()
        converted = deserialize(raw, model)
        if key is not None:
            with self._lock:
                self._cache[key] = converted
        return converted
