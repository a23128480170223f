"""Keys, index functions and accessors for raw Kubernetes objects.

Objects are the parsed JSON of the API: plain ``dict`` trees, exactly as
``json.loads`` returns them. Nothing in this module converts or copies an
object; every function only reads ``metadata``. Objects held by a cache are
shared between threads and consumers and are **read-only by contract**.

A *key* identifies an object inside one kind: ``"namespace/name"`` for a
namespaced object, ``"name"`` for a cluster-scoped one (the same keys client-go
uses). :func:`meta_namespace_key` makes it, :func:`split_meta_namespace_key`
takes it apart again, and :func:`meta_namespace_keys` keys many objects at
once (the relist path of the queue and the store).

When a delete was missed (a watch broke and the relist no longer shows the
object) the cache is told with a :class:`DeletedFinalStateUnknown` tombstone
that carries the key and the last state it knew; key such objects with
:func:`deletion_handling_meta_namespace_key`. Every other function here
refuses a tombstone with :class:`~informers.ObjectKeyError` rather than
guess: read ``tombstone.obj`` for the last known state.

As a convenience for typed objects kept in a user's own store, the functions
here also read attribute-style objects (``obj.metadata.name``, as the
``kubernetes`` client models have); the informer itself only ever handles dicts.

Every function here is pure and thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from informers.errors import ObjectKeyError
from informers.wire.fastpath import object_key, object_keys, resource_version

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "IndexFunc",
    "Indexers",
    "KeyFunc",
    "KubeObject",
    "deletion_handling_meta_namespace_key",
    "get_labels",
    "get_name",
    "get_namespace",
    "get_resource_version",
    "get_uid",
    "meta_namespace_key",
    "meta_namespace_keys",
    "namespace_index",
    "split_meta_namespace_key",
]

#: A raw API object: the parsed JSON, shared read-only.
KubeObject: TypeAlias = dict[str, Any]

#: Computes the store key of an object; raises :class:`~informers.ObjectKeyError`
#: when the object has no usable key.
KeyFunc: TypeAlias = Callable[[Any], str]

#: Computes the values an object is indexed under (zero, one or several strings).
IndexFunc: TypeAlias = Callable[[Any], list[str]]

#: Index functions by index name.
Indexers: TypeAlias = Mapping[str, IndexFunc]

#: Name of the index :func:`namespace_index` is usually registered under.
NAMESPACE_INDEX = "namespace"

_EMPTY_LABELS: Mapping[str, str] = {}


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Tombstone for an object that was deleted while the watch was not looking.

    ``key`` is the object's store key; ``obj`` is the last state the cache
    knew, which may be stale. Its ``repr`` shows the key only, so logging a
    tombstone never prints the object (it may be a Secret).
    """

    key: str
    obj: Any = field(repr=False)


def _metadata(obj: Any) -> Any:
    """The metadata of a dict or attribute-style object, or ``None``."""
    if isinstance(obj, Mapping):
        return obj.get("metadata")
    if isinstance(obj, DeletedFinalStateUnknown):
        raise ObjectKeyError(
            f"object is a DeletedFinalStateUnknown tombstone for {obj.key!r}; "
            "key it with deletion_handling_meta_namespace_key"
        )
    return getattr(obj, "metadata", None)


def _field(metadata: Any, json_name: str, attr_name: str) -> Any:
    if isinstance(metadata, Mapping):
        return metadata.get(json_name)
    return getattr(metadata, attr_name, None)


def _string(obj: Any, json_name: str, attr_name: str) -> str:
    metadata = _metadata(obj)
    if metadata is None:
        return ""
    value = _field(metadata, json_name, attr_name)
    return value if isinstance(value, str) else ""


def get_name(obj: Any) -> str:
    """``metadata.name``; raises :class:`~informers.ObjectKeyError` naming what
    is missing when there is no non-empty string name."""
    metadata = _metadata(obj)
    if metadata is None:
        raise ObjectKeyError(f"object of type {type(obj).__name__} has no metadata")
    name = _field(metadata, "name", "name")
    if name is None or name == "":
        raise ObjectKeyError("object has no metadata.name")
    if not isinstance(name, str):
        raise ObjectKeyError(f"object metadata.name is a {type(name).__name__}, not a string")
    return name


def get_namespace(obj: Any) -> str:
    """``metadata.namespace``, or ``""`` (cluster-scoped or unset)."""
    return _string(obj, "namespace", "namespace")


def get_resource_version(obj: Any) -> str:
    """``metadata.resourceVersion``, or ``""``."""
    rv = resource_version(obj)  # decoded JSON: the informer asks this of every event
    return rv if rv is not None else _string(obj, "resourceVersion", "resource_version")


def get_uid(obj: Any) -> str:
    """``metadata.uid``, or ``""``."""
    return _string(obj, "uid", "uid")


def get_labels(obj: Any) -> Mapping[str, str]:
    """``metadata.labels`` (the object's own mapping, not a copy: do not
    mutate it), or an empty mapping."""
    metadata = _metadata(obj)
    if metadata is None:
        return _EMPTY_LABELS
    labels = _field(metadata, "labels", "labels")
    return labels if isinstance(labels, Mapping) else _EMPTY_LABELS


def meta_namespace_key(obj: Any) -> str:
    """The store key of ``obj``: ``"namespace/name"``, or ``"name"`` when the
    object has no namespace (cluster-scoped).

    Raises :class:`~informers.ObjectKeyError` when ``metadata.name`` is missing
    or not a string (the message says which), and for a tombstone (use
    :func:`deletion_handling_meta_namespace_key` for those).
    """
    key = object_key(obj)  # decoded JSON: the common case
    if key is not None:
        return key
    name = get_name(obj)
    namespace = _field(_metadata(obj), "namespace", "namespace")
    if namespace is None or namespace == "":
        return name
    if not isinstance(namespace, str):
        raise ObjectKeyError(
            f"object metadata.namespace is a {type(namespace).__name__}, not a string"
        )
    return f"{namespace}/{name}"


def meta_namespace_keys(objs: Iterable[Any], key_func: KeyFunc = meta_namespace_key) -> list[str]:
    """The keys of ``objs``, in order: ``[key_func(obj) for obj in objs]``.

    The key of a plain ``dict`` object whose ``metadata`` is a dict with a
    non-empty string ``name`` and a string (or absent) ``namespace`` -- every
    object the API sends -- is made inline, without a call per object
    (:func:`informers.wire.fastpath.object_keys`). ``key_func`` is
    called for every other object, and must agree with
    :func:`meta_namespace_key` on plain-dict objects
    (:func:`meta_namespace_key` and :func:`deletion_handling_meta_namespace_key`
    do). What ``key_func`` raises propagates.
    """
    return object_keys(objs, key_func)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """Split a key made by :func:`meta_namespace_key` into ``(namespace, name)``;
    the namespace is ``""`` for a cluster-scoped key.

    Raises :class:`~informers.ObjectKeyError` for a key with more than one
    ``/`` or an empty part.
    """
    if not isinstance(key, str):
        raise ObjectKeyError(f"key must be a string, not {type(key).__name__}")
    namespace, slash, name = key.partition("/")
    if not slash:
        if not key:
            raise ObjectKeyError("key is empty")
        return "", key
    if not namespace or not name or "/" in name:
        raise ObjectKeyError(f"unexpected key format: {key!r}")
    return namespace, name


def deletion_handling_meta_namespace_key(obj: Any) -> str:
    """Like :func:`meta_namespace_key`, but a :class:`DeletedFinalStateUnknown`
    is keyed by the key it carries."""
    if isinstance(obj, DeletedFinalStateUnknown):
        return obj.key
    return meta_namespace_key(obj)


def namespace_index(obj: Any) -> list[str]:
    """Index function: the object's namespace (``""`` for cluster-scoped
    objects, which are all indexed under the empty value)."""
    return [get_namespace(obj)]
