"""The plain-dict fast paths: decoded JSON recognised by its exact types.

Objects reach the cache as ``json.loads`` (or orjson) made them: exact
``dict`` trees with ``str`` leaves. The general code that reads them
(:mod:`informers.wire.objects`' accessors, label selectors, the reflector's
event checks) accepts any mapping and attribute-style objects too, and pays
for that with ``isinstance`` checks and calls on every object. Every function
here recognises the plain shape with ``type(x) is ...`` tests and answers for
it what the general code answers; for anything else it answers ``None`` (the
caller then takes its general path), or calls the general form it was given.

The contract of each function is equality with its general form, for every
input, including odd ones (dict subclasses, other mappings, ``str``
subclasses, values of the wrong type, tombstones): a property test holds
each to it (``tests/informers/wire/test_fastpath.py``). A fast path never
raises where the general form would not, and never raises a different
error: it declines instead.

The loops over many objects (:func:`object_keys`, :func:`in_namespace`, the
label filters) are written out, with the recognition inline, because one call
per object is what they save.

Everything here is pure and thread-safe; nothing blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "WATCH_EVENT_TYPES",
    "LabelTest",
    "in_namespace",
    "label_filter",
    "label_filter_both",
    "label_filter_equals",
    "labels_matcher",
    "named_items",
    "object_key",
    "object_keys",
    "resource_version",
    "watch_event",
]

#: A label test compiled for a plain ``dict`` of labels.
LabelTest = Callable[[dict[str, Any]], bool]

#: The watch event types :func:`watch_event` recognises (``ERROR`` is not one).
WATCH_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})

#: What a missing ``metadata.labels`` reads as; never mutated.
_NO_LABELS: dict[str, str] = {}


# --------------------------------------------------------------------------- keys


def object_key(obj: Any) -> str | None:
    """The store key of a plain object, or ``None``.

    For a ``dict`` whose ``metadata`` is a ``dict`` with a non-empty ``str``
    ``name`` and a ``str``, absent or ``None`` ``namespace``:
    ``"namespace/name"``, or ``"name"`` when the namespace is absent or empty,
    which is what :func:`~informers.wire.objects.meta_namespace_key` answers.
    An object of another type answers through its type's ``__object_key__``
    method, when it has one (:class:`~informers.wire.raw.RawObject` reads its
    metadata record): the key, or ``None`` to leave it to the general path.
    ``None`` for anything else."""
    if type(obj) is dict:
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            name = metadata.get("name")
            if type(name) is str and name:
                namespace = metadata.get("namespace")
                if type(namespace) is str and namespace:
                    return f"{namespace}/{name}"
                if namespace is None or namespace == "":
                    return name
        return None
    own = getattr(type(obj), "__object_key__", None)
    return None if own is None else own(obj)


def object_keys(objs: Iterable[Any], general: Callable[[Any], str]) -> list[str]:
    """``[general(obj) for obj in objs]``, with the key of each object
    :func:`object_key` recognises made inline instead (so ``general`` must
    agree with :func:`object_key` where that answers). What ``general``
    raises propagates."""
    keys: list[str] = []
    append = keys.append
    for obj in objs:
        if type(obj) is dict:
            metadata = obj.get("metadata")
            if type(metadata) is dict:
                name = metadata.get("name")
                if type(name) is str and name:
                    namespace = metadata.get("namespace")
                    if type(namespace) is str and namespace:
                        append(f"{namespace}/{name}")
                        continue
                    if namespace is None or namespace == "":
                        append(name)
                        continue
        append(general(obj))
    return keys


def resource_version(obj: Any) -> str | None:
    """``metadata.resourceVersion`` of a ``dict`` whose ``metadata`` is a
    ``dict`` holding it as a ``str``; ``None`` for anything else (what
    :func:`~informers.wire.objects.get_resource_version` answers for a plain
    object)."""
    if type(obj) is dict:
        metadata = obj.get("metadata")
        if type(metadata) is dict:
            rv = metadata.get("resourceVersion")
            if type(rv) is str:
                return rv
    return None


def in_namespace(
    objects: Iterable[Any], namespace: str, general: Callable[[Any], str]
) -> list[Any]:
    """``[o for o in objects if general(o) == namespace]``, with
    ``general`` (:func:`~informers.wire.objects.get_namespace`) read inline for a
    ``dict`` whose ``metadata`` is a ``dict`` holding a ``str`` namespace."""
    out: list[Any] = []
    keep = out.append
    for obj in objects:
        if type(obj) is dict:
            metadata = obj.get("metadata")
            if type(metadata) is dict:
                value = metadata.get("namespace")
                if type(value) is str:
                    if value == namespace:
                        keep(obj)
                    continue
        if general(obj) == namespace:
            keep(obj)
    return out


# --------------------------------------------------------------------------- labels


def labels_matcher(
    test: LabelTest, general: Callable[[Mapping[str, str]], bool]
) -> Callable[[Mapping[str, str]], bool]:
    """A matcher that runs ``test`` on a plain ``dict`` of labels and
    ``general`` on any other mapping; ``test`` must answer what ``general``
    answers for every ``dict``."""

    def match(labels: Mapping[str, str]) -> bool:
        if type(labels) is dict:
            return test(labels)
        return general(labels)

    return match


# The three filters below read get_labels inline for a dict object with dict
# metadata: labels that are a dict (or missing, which get_labels reads as {})
# go to the dict test; anything else (None, attribute-style objects, other
# mappings, tombstones, which raise) takes ``general``, the whole check.


def label_filter(
    test: LabelTest, general: Callable[[Any], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    """A filter keeping, in order, the objects for which ``general`` (a label
    selector's match of :func:`~informers.wire.objects.get_labels`) holds, with
    ``test`` run directly on the labels of a plain object; ``test`` must
    answer what ``general`` answers for such an object."""

    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if test(labels):
                            keep(obj)
                        continue
            if general(obj):
                keep(obj)
        return out

    return select


def label_filter_both(
    first: LabelTest, second: LabelTest, general: Callable[[Any], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    """:func:`label_filter` of ``first(labels) and second(labels)``, both
    called from the loop (one call per object fewer)."""

    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if first(labels) and second(labels):
                            keep(obj)
                        continue
            if general(obj):
                keep(obj)
        return out

    return select


def label_filter_equals(
    key: str, value: str, general: Callable[[Any], bool]
) -> Callable[[Iterable[Any]], list[Any]]:
    """:func:`label_filter` of the commonest selector, one ``key=value``, with
    the test written out (no call per plain object)."""

    def select(objects: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        keep = out.append
        for obj in objects:
            if type(obj) is dict:
                metadata = obj.get("metadata")
                if type(metadata) is dict:
                    labels = metadata.get("labels", _NO_LABELS)
                    if type(labels) is dict:
                        if value == labels.get(key):
                            keep(obj)
                        continue
            if general(obj):
                keep(obj)
        return out

    return select


# --------------------------------------------------------------------------- the reflector's input


def named_items(items: Sequence[Any]) -> bool:
    """True when every item is a ``dict`` whose ``metadata`` is a ``dict``
    with a ``str`` ``name`` and a ``str``, absent or ``None`` ``namespace``
    (every item of a list the API sends); False means "check them the
    general way" (the reflector's check of a list's items), not that one is
    invalid."""
    for item in items:
        if type(item) is not dict:
            return False
        meta = item.get("metadata")
        if type(meta) is not dict or type(meta.get("name")) is not str:
            return False
        namespace = meta.get("namespace")
        if namespace is not None and type(namespace) is not str:
            return False
    return True


def watch_event(event: object) -> tuple[str, dict[str, Any], str] | None:
    """``(type, object, resourceVersion)`` of a well-formed watch event of
    plain decoded JSON, or ``None``.

    Well-formed: a ``dict`` with a ``type`` in :data:`WATCH_EVENT_TYPES` and
    an ``object`` that is a ``dict`` whose ``metadata`` is a ``dict`` with a
    ``str`` ``resourceVersion``; a ``BOOKMARK``'s is non-empty, and any other
    event's object has a non-empty ``str`` ``name`` and a ``str``, absent or
    ``None`` ``namespace``. The reflector's :func:`~informers.cache.reflector.step`
    takes such an event as valid, with this type, object and resource
    version; ``None`` (an ``ERROR`` event, a malformed one, another type of
    value) leaves the decision to it."""
    if type(event) is not dict:
        return None
    etype = event.get("type")
    obj = event.get("object")
    if type(obj) is not dict or type(etype) is not str or etype not in WATCH_EVENT_TYPES:
        return None
    meta = obj.get("metadata")
    if type(meta) is not dict:
        return None
    rv = meta.get("resourceVersion")
    if type(rv) is not str:
        return None
    if etype == "BOOKMARK":
        if not rv:
            return None
    else:
        name = meta.get("name")
        if type(name) is not str or not name:
            return None
        namespace = meta.get("namespace")
        if namespace is not None and type(namespace) is not str:
            return None
    return etype, obj, rv
