"""The cache mutation detector: an opt-in debug mode that reports code
changing the objects of an informer's cache.

Cached objects are shared, not copied: a lister's ``get``, an index lookup
and every handler receive the cache's own dicts, and writing to one changes
the cache (and what selectors and indexes then see) -- as in client-go.
client-go offers a detector for that mistake (``KUBE_CACHE_MUTATION_DETECTOR``);
this is its counterpart. Turn it on per informer
(``SharedIndexInformer(..., detect_mutations=True)``) or for every informer
of the process with the environment variable
:data:`ENVIRONMENT_VARIABLE` (``KUBE_CACHE_MUTATION_DETECTOR=true``, as
client-go; read when an informer is made).

What it checks, and whom it names:

* each **handler** call: the objects a notification hands to the handler
  are deep-copied before the call and compared after it; a difference is
  reported with the handler (its class, or the function of a
  :class:`~informers.cache.handlers.ResourceEventHandlerFuncs`), the event
  and the object's key;
* each **reconcile** of a :class:`~informers.toolkit.runtime.Controller`
  whose sources watch an informer with the detector on: the whole cache is
  compared with its copies before and after the call, and a difference is
  reported with the controller and the request (anything else changing the
  cache during that reconcile is blamed on it too);
* :meth:`CacheMutationDetector.check`, when you call it (for instance at the
  end of a test), names what you tell it.

A mutation is logged at ERROR (the key, the culprit, never the object) and
kept in :attr:`CacheMutationDetector.mutations`; the copy is then refreshed,
so one change is reported once. It costs a deep copy of every object handed
to a handler and two passes over the cache per reconcile: a debug mode, not
for production. Only stores that share their objects are checked (the
default :class:`~informers.cache.store.Indexer`); a store that decodes a new
object for each read (:class:`~informers.cache.compact.CompactStore`) cannot
be mutated this way and is not checked. Thread-safe: one lock guards the
copies and the report.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from informers.wire.objects import DeletedFinalStateUnknown, deletion_handling_meta_namespace_key

__all__ = [
    "ENVIRONMENT_VARIABLE",
    "CacheMutation",
    "CacheMutationDetector",
    "MutationCheckingHandler",
    "detection_enabled",
    "detectors_of",
    "guard_calls",
]

log = logging.getLogger(__name__)

#: The environment variable that turns the detector on for every informer
#: made afterwards (``1``, ``t``, ``true``; client-go's name).
ENVIRONMENT_VARIABLE = "KUBE_CACHE_MUTATION_DETECTOR"

#: At most this many mutations are kept in :attr:`CacheMutationDetector.mutations`.
MAX_KEPT = 1000

F = TypeVar("F", bound=Callable[..., Any])


def detection_enabled(option: bool | None = None) -> bool:
    """``option`` when given, else whether :data:`ENVIRONMENT_VARIABLE` says
    true (``1``, ``t``, ``true``, any case)."""
    if option is not None:
        return option
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() in ("1", "t", "true")


@dataclass(frozen=True, slots=True)
class CacheMutation:
    """One reported mutation: the informer, the object's key, and who
    changed it (``"handler PodLogger (update)"``, ``"reconcile of controller
    web for default/a"``)."""

    informer: str
    key: str
    culprit: str


def _key(obj: Any) -> str:
    try:
        return deletion_handling_meta_namespace_key(obj)
    except Exception:  # noqa: BLE001 - only for a report
        return f"a {type(obj).__name__}"


class CacheMutationDetector:
    """The copies of one informer's cached objects, and the mutations found.

    :param informer: its name, for reports.
    :param objects: returns the cached objects themselves (the store's
        ``list``).
    """

    def __init__(self, informer: str, objects: Callable[[], list[Any]]) -> None:
        self.informer = informer
        self._objects = objects
        self._lock = threading.Lock()
        # Guarded by _lock: id(obj) -> (obj, its deep copy when recorded)
        # (the reference keeps the id from being reused), and the report.
        self._copies: dict[int, tuple[Any, Any]] = {}
        self._mutations: list[CacheMutation] = []

    @property
    def mutations(self) -> list[CacheMutation]:
        """The mutations reported so far (the last :data:`MAX_KEPT`), oldest first."""
        with self._lock:
            return list(self._mutations)

    def report(self, obj: Any, culprit: str) -> None:
        """Log (ERROR) and keep that ``culprit`` changed the cached ``obj``."""
        mutation = CacheMutation(self.informer, _key(obj), culprit)
        with self._lock:
            self._mutations = [*self._mutations[-(MAX_KEPT - 1) :], mutation]
        log.error(
            "cache mutation detected: %s changed the cached object %s of informer %s; cached "
            "objects are shared with every reader: copy one (copy.deepcopy) before changing it",
            culprit,
            mutation.key,
            self.informer,
        )

    def snapshot(self) -> None:
        """Copy every cached object not copied yet (and forget those no
        longer cached)."""
        objects = self._objects()
        with self._lock:
            old = self._copies
        fresh: dict[int, tuple[Any, Any]] = {}
        for obj in objects:
            entry = old.get(id(obj))
            fresh[id(obj)] = entry if entry is not None and entry[0] is obj else _copied(obj)
        with self._lock:
            self._copies = fresh

    def check(self, culprit: str) -> list[CacheMutation]:
        """Compare every cached object copied by :meth:`snapshot` with its
        copy; report each that changed as changed by ``culprit`` (and copy it
        again). Returns what it reported."""
        with self._lock:
            copies = dict(self._copies)
        found: list[CacheMutation] = []
        for obj in self._objects():
            entry = copies.get(id(obj))
            if entry is None or entry[0] is not obj or obj == entry[1]:
                continue
            self.report(obj, culprit)
            found.append(CacheMutation(self.informer, _key(obj), culprit))
            with self._lock:
                self._copies[id(obj)] = _copied(obj)
        return found


def _copied(obj: Any) -> tuple[Any, Any]:
    return obj, copy.deepcopy(obj)


def _name(func: Any) -> str:
    return str(getattr(func, "__qualname__", None) or type(func).__name__)


class MutationCheckingHandler:
    """Wraps an event handler: the objects of each notification are
    deep-copied before the call and compared after it; a difference is
    reported to ``detector`` naming the handler and the event. Calls pass
    through otherwise (exceptions included), and so do the optional hooks
    (``on_relist_begin``, ``on_relist_end``, ``on_synced``): the wrapper has
    exactly those the handler has."""

    _HOOKS = frozenset({"on_relist_begin", "on_relist_end", "on_synced"})

    def __init__(self, handler: Any, detector: CacheMutationDetector) -> None:
        self.handler = handler
        self._detector = detector

    def __getattr__(self, name: str) -> Any:
        # Only for what normal lookup does not find: the handler's optional hooks.
        if name in MutationCheckingHandler._HOOKS:
            return getattr(self.__dict__["handler"], name)
        raise AttributeError(name)

    def _culprit(self, event: str, attribute: str) -> str:
        func = getattr(self.handler, attribute, None)
        if func is not None and hasattr(self.handler, "add_func"):  # ResourceEventHandlerFuncs
            return f"handler {_name(func)} ({event})"
        return f"handler {type(self.handler).__name__} ({event})"

    def _call(
        self, event: str, attribute: str, call: Callable[[], None], objs: Sequence[Any]
    ) -> None:
        targets = [o.obj if isinstance(o, DeletedFinalStateUnknown) else o for o in objs]
        before = [copy.deepcopy(o) for o in targets]
        try:
            call()
        finally:
            for obj, copied in zip(targets, before, strict=True):
                if isinstance(obj, Mapping) and obj != copied:
                    self._detector.report(obj, self._culprit(event, attribute))

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._call("add", "add_func", lambda: self.handler.on_add(obj, is_in_initial_list), [obj])

    def on_update(self, old: Any, new: Any) -> None:
        targets = [old, new] if old is not new else [new]
        self._call("update", "update_func", lambda: self.handler.on_update(old, new), targets)

    def on_delete(self, obj: Any) -> None:
        self._call("delete", "delete_func", lambda: self.handler.on_delete(obj), [obj])


def guard_calls(
    func: F, detectors: Sequence[CacheMutationDetector], culprit: Callable[..., str]
) -> F:
    """``func`` wrapped so that every cache of ``detectors`` is snapshotted
    before each call and checked after it, a change blamed on
    ``culprit(*args)``; ``func`` itself when there are no detectors."""
    if not detectors:
        return func

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        for detector in detectors:
            detector.snapshot()
        try:
            return func(*args, **kwargs)
        finally:
            who = culprit(*args)
            for detector in detectors:
                detector.check(who)

    return guarded  # type: ignore[return-value]


def detectors_of(sources: Iterable[Any]) -> list[CacheMutationDetector]:
    """The detectors of the informers of ``sources`` (anything with an
    ``informer`` attribute, as an informer source has), each once."""
    found: list[CacheMutationDetector] = []
    for source in sources:
        detector = getattr(getattr(source, "informer", None), "mutation_detector", None)
        if isinstance(detector, CacheMutationDetector) and detector not in found:
            found.append(detector)
    return found
