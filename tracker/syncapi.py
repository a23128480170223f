"""The syncapi contract: how a controller mirrors one Kubernetes kind into
something else (a database table, a search index, a file tree).

It has three parts:

* :class:`ObjectKey`, the ``(namespace, name)`` a sync is driven by.
* :class:`Syncer`, what a mirror of one kind provides: a fresh object of its
  type, the event sources that push keys, ``sync``, ``delete`` and ``diff``.
* :func:`diff`, the pure function at the heart of ``Syncer.diff()``: given a
  complete Kubernetes list and a snapshot of the mirrored rows, which keys need
  attention.

How a controller drives a :class:`Syncer` (the reconciler of
:mod:`tracker.mirror` does exactly this):

* Each key is read **live** from the API server (an uncached GET). When the
  server says NotFound (404), ``delete(key)`` is called; any other read error
  requeues the key with backoff and deletes nothing. When the object is found
  (including a terminating object, whose ``deletionTimestamp`` is set),
  ``sync(obj)`` is called. Errors from either requeue the key with backoff.
* The sources run in order (each pushes its initial state before the next
  starts), then a periodic ``diff()`` pushes the keys it returns, then the
  workers start.

A mirror may write an informer's *relist* straight from the list instead of
reading each key again: a complete list is the server's answer for every key
at its resourceVersion (present objects as they are, absent keys gone).
:mod:`tracker.mirror.controller` does so, in bounded transactions, and keeps
the live read for every other event; its docstring says how the two paths
stay consistent.

Everything here is pure and thread-safe: :func:`diff` reads its inputs and
builds a new list; it never mutates them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from informers.errors import ObjectKeyError
from informers.wire.objects import get_name, get_namespace, get_uid
from tracker.errors import (
    ComparisonError,
    DiffError,
    IncompleteListError,
    InvalidListItemError,
    ObjectKeyParseError,
)

if TYPE_CHECKING:
    from informers.cache.factory import SharedInformerFactory

__all__ = ["MatchFunc", "ObjectKey", "RowKeyFunc", "Syncer", "diff"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ObjectKey:
    """The key of one object of a kind: its namespace (``""`` for a
    cluster-scoped object) and its name. Immutable and hashable.

    ``str(key)`` is ``"namespace/name"``, and ``"/name"`` for a cluster-scoped
    object, as the Go original (``types.NamespacedName``) prints it;
    :attr:`store_key` is the informers' cache key (``"name"`` for a
    cluster-scoped object). :meth:`parse` reads all three forms.

    Neither part may contain ``/`` (the string form would be ambiguous) and the
    name must not be empty: :class:`~tracker.errors.ObjectKeyParseError`
    otherwise (a :class:`ValueError`).
    """

    namespace: str
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.namespace, str) or not isinstance(self.name, str):
            raise ObjectKeyParseError("namespace and name must be strings")
        if not self.name:
            raise ObjectKeyParseError("an object key needs a name")
        if "/" in self.namespace or "/" in self.name:
            raise ObjectKeyParseError(f"namespace and name may not contain '/': {self!s}")

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def store_key(self) -> str:
        """The informers' cache key: ``"namespace/name"``, or ``"name"`` when
        cluster-scoped (see :func:`informers.wire.objects.meta_namespace_key`)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def parse(cls, key: str) -> ObjectKey:
        """Read ``"namespace/name"``, ``"/name"`` or ``"name"`` (the last two
        are cluster-scoped). Raises :class:`~tracker.errors.ObjectKeyParseError`
        for an empty string, an empty name or more than one ``/``."""
        if not isinstance(key, str):
            raise ObjectKeyParseError(f"an object key must be a string, not {type(key).__name__}")
        namespace, slash, name = key.partition("/")
        if not slash:
            namespace, name = "", key
        if not name or "/" in name:
            raise ObjectKeyParseError(f"not an object key: {key!r}")
        return cls(namespace, name)

    @classmethod
    def of(cls, obj: Any) -> ObjectKey:
        """The key of a raw object (``metadata.namespace`` / ``metadata.name``)
        or of an attribute-style one. Raises :class:`~informers.ObjectKeyError`
        when it has no name."""
        return cls(get_namespace(obj), get_name(obj))


#: ``matches(obj, row)``: does the mirrored ``row`` already reflect ``obj``?
MatchFunc = Callable[[Any, Any], bool]

#: ``key(row)``: the key of the object a row mirrors (an :class:`ObjectKey`,
#: or a key string :meth:`ObjectKey.parse` reads).
RowKeyFunc = Callable[[Any], "ObjectKey | str"]


@runtime_checkable
class Syncer(Protocol[T]):
    """What a mirror of one kind provides to the controller that drives it.

    Implementations must be thread-safe: the controller calls ``sync`` and
    ``delete`` from several workers at once (never for the same key at once)
    and ``diff`` from its periodic source.
    """

    def new_object(self) -> T:
        """A fresh, empty object of the kind's type (what a GET decodes into)."""
        ...

    def sources(self, factory: SharedInformerFactory) -> Sequence[Any]:
        """The event sources that push keys for the kind, plus those of any
        parent kind whose changes must re-sync rows. The controller starts
        them in this order; each pushes its initial state before the next
        starts."""
        ...

    def sync(self, obj: T) -> None:
        """Write ``obj`` (the object as the API server returned it just now,
        terminating objects included). Idempotent: syncing an object whose
        row is current writes nothing. Raises to have the key retried."""
        ...

    def delete(self, key: ObjectKey) -> None:
        """Remove what mirrors ``key``. Called only after the API server
        confirmed the key is absent (404). Idempotent."""
        ...

    def diff(self) -> list[ObjectKey]:
        """Every key that needs attention: snapshot the rows first, then take
        a complete list from the API server, then :func:`diff` them. Performs
        no writes. Raises (and returns nothing) when the list fails or is
        incomplete."""
        ...


def _items_and_token(objects: Any, continue_token: str | None) -> tuple[Sequence[Any], str]:
    """The items to walk and the continue token, from either a list response
    (a mapping with ``items`` and ``metadata.continue``) or a sequence."""
    token = continue_token or ""
    if isinstance(objects, Mapping):
        items = objects.get("items")
        if items is None:
            items = []
        if not isinstance(items, Sequence) or isinstance(items, str | bytes):
            raise DiffError(f"the list's items are a {type(items).__name__}, not a list")
        metadata = objects.get("metadata")
        if isinstance(metadata, Mapping):
            listed = metadata.get("continue")
            if isinstance(listed, str) and listed:
                token = token or listed
        return items, token
    if isinstance(objects, str | bytes) or not isinstance(objects, Iterable):
        raise DiffError(f"objects must be a list of items, not a {type(objects).__name__}")
    if not isinstance(objects, Sequence):
        objects = list(objects)
    return objects, token


def _describe_key(item: Any) -> str:
    try:
        return str(ObjectKey.of(item))
    except (ObjectKeyError, ObjectKeyParseError):
        return ""


def _row_key(key: RowKeyFunc, row: Any, uid: str) -> ObjectKey:
    try:
        found = key(row)
        return found if isinstance(found, ObjectKey) else ObjectKey.parse(found)
    except Exception as error:  # a user callback: its failure is reported, typed
        raise DiffError(
            f"the key of the row of uid {uid!r} failed: {type(error).__name__}"
        ) from error


def diff(
    objects: Any,
    rows: Mapping[str, R],
    matches: Callable[[Any, R], bool],
    key: Callable[[R], ObjectKey | str],
    *,
    continue_token: str | None = None,
    item_type: type | tuple[type, ...] = Mapping,
) -> list[ObjectKey]:
    """The keys that need attention, given a complete list of a kind and a
    snapshot of the rows mirroring it.

    :param objects: the live objects, in list order: a sequence of items, or a
        list response (a mapping with ``items``, whose ``metadata.continue`` is
        read as the continue token).
    :param rows: the mirrored rows, keyed by the UID of the object each
        mirrors.
    :param matches: ``matches(obj, row)`` is true when ``row`` already
        reflects ``obj``. Called only for objects that have a row.
    :param key: ``key(row)``, the key of the object a row mirrors.
    :param continue_token: the list's continue token, when ``objects`` is a
        bare sequence.
    :param item_type: what every item must be an instance of (default: a
        mapping, the raw objects the informers keep).

    The rules, exactly:

    1. A list with a continue token (either given or in the response) is one
       page of a longer list: :class:`~tracker.errors.IncompleteListError`,
       before anything is compared.
    2. The list is walked in order. An item that is not an ``item_type``, has
       no ``metadata.uid`` or has no name raises
       :class:`~tracker.errors.InvalidListItemError` (with its index). An
       object with no row, or whose row does not match, yields its key.
       ``matches`` raising fails the whole diff with
       :class:`~tracker.errors.ComparisonError` (``__cause__`` set).
    3. Then every row whose UID is not among the live objects yields
       ``key(row)`` (a ``key`` failure is a :class:`~tracker.errors.DiffError`),
       sorted by the string ``namespace/name``.
    4. A key is yielded once: a later occurrence (an orphan row whose object
       was recreated under the same name with a new UID, two stale rows of the
       same key) is skipped. Live objects come first, in list order; orphans
       after them.

    Nothing is returned when anything fails (the result is built whole before
    it is returned), and neither input is mutated. Pure and thread-safe, as
    long as nobody mutates the inputs meanwhile.
    """
    items, token = _items_and_token(objects, continue_token)
    if token:
        raise IncompleteListError(token)

    result: list[ObjectKey] = []
    seen: set[ObjectKey] = set()
    live: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, item_type):
            reason = f"is a {type(item).__name__}, not the kind's type"
            raise InvalidListItemError(index, "", reason)
        uid = get_uid(item)
        if not uid:
            raise InvalidListItemError(index, _describe_key(item), "has no metadata.uid")
        try:
            object_key = ObjectKey.of(item)
        except (ObjectKeyError, ObjectKeyParseError) as error:
            raise InvalidListItemError(index, "", str(error)) from error
        live.add(uid)
        if uid in rows:
            row = rows[uid]
            try:
                same = bool(matches(item, row))
            except Exception as error:  # a user callback: the whole diff fails, typed
                raise ComparisonError(str(object_key), type(error).__name__) from error
            if same:
                continue
        if object_key not in seen:
            seen.add(object_key)
            result.append(object_key)

    orphans = [_row_key(key, row, uid) for uid, row in rows.items() if uid not in live]
    orphans.sort(key=str)
    for orphan in orphans:
        if orphan not in seen:
            seen.add(orphan)
            result.append(orphan)
    return result
