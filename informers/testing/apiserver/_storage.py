"""The emulator's storage: every kind's objects, one global resourceVersion, a
per-kind event log with a window, compaction, the state at an older RV, and
the watchers fed from the log.

:class:`Storage` composes the parts and owns the one lock: objects and
history (:mod:`._history`), the writes (:mod:`._writes`, with the rules they
apply to an object in :mod:`._rules`), watch fan-out (:mod:`._watch`) and
server-side filtering (:mod:`._filtering`). The parts have no lock of their
own.

Thread-safety: one :class:`threading.Condition` (``Storage._cond``) guards
everything here, including each watcher's buffer. Writers ``notify_all``
after every change, so watch threads and lists waiting for a future RV wake
up. No user code runs under the lock (selector predicates are the emulator's
own).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any, Unpack

from informers.testing.apiserver import _status
from informers.testing.apiserver._apply import endpoint as _endpoint
from informers.testing.apiserver._crd.jsonpath import set_path
from informers.testing.apiserver._filtering import Predicate, as_seen
from informers.testing.apiserver._history import History, ListOptions, ListResult, key_range
from informers.testing.apiserver._schema import kinds as _kinds
from informers.testing.apiserver._stored import ADDED, Stored, object_key
from informers.testing.apiserver._watch import Watcher, WatchHub
from informers.testing.apiserver._writes import DeleteOptions, ObjectWrites, UpdateOptions
from informers.wire.resources import BUILTIN_RESOURCES, NAMESPACES, SERVICEACCOUNTS, Resource

__all__ = ["Storage"]


class Storage:
    """All objects of the emulated cluster. See the module docstring."""

    def __init__(self, history_window: int = 100_000) -> None:
        self._cond = threading.Condition()
        # All guarded by _cond.
        self._history = History(history_window)
        self._watches = WatchHub()
        self._writes = ObjectWrites(
            self._history, self._watches, lambda resource: _endpoint.target(self, resource)
        )
        self._closed = False
        for res in BUILTIN_RESOURCES:
            self._history.register(res, builtin=True)
        for res in _kinds.EXTRA_RESOURCES:
            kind = self._history.register(res, builtin=True)
            kind.status_subresource = _kinds.has_status(res)
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.create(NAMESPACES, {"metadata": {"name": ns}})
        self.create(SERVICEACCOUNTS, {"metadata": {"name": "default"}}, "default")

    # ----------------------------------------------------------- resources

    def register_resource(self, resource: Resource, *, status_subresource: bool = False) -> None:
        """Serve ``resource`` (a custom resource) from now on; idempotent."""
        with self._cond:
            kind = self._history.register(resource)
            kind.status_subresource = kind.status_subresource or status_subresource

    def unregister_resource(self, group: str, plural: str) -> None:
        """Stop serving every version of ``plural.group``; drops its objects
        and ends its watches."""
        with self._writing() as writes:
            writes.unregister(group, plural)

    def resources(self) -> list[Resource]:
        """Every served resource (one per served version)."""
        with self._cond:
            return self._history.resources()

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        with self._cond:
            return self._history.lookup(group, version, plural)

    def is_builtin(self, resource: Resource) -> bool:
        """Whether ``resource`` is a built-in kind (not a custom resource)."""
        with self._cond:
            kind = self._history.find(resource)
            return kind is not None and kind.builtin

    @property
    def validation(self) -> bool:
        """Whether writes of built-in kinds are validated and converted
        (see :mod:`._validation`); on by default."""
        with self._cond:
            return self._writes.validation

    @validation.setter
    def validation(self, value: bool) -> None:
        with self._cond:
            self._writes.validation = bool(value)

    @property
    def field_management(self) -> bool:
        """Whether creates and updates record their field manager in
        ``managedFields``; on by default. Off, every write is recorded as
        one without a manager (the object keeps the entries it has)."""
        with self._cond:
            return self._writes.field_management

    @field_management.setter
    def field_management(self, value: bool) -> None:
        with self._cond:
            self._writes.field_management = bool(value)

    def has_status_subresource(self, resource: Resource) -> bool:
        with self._cond:
            kind = self._history.find(resource)
            return kind is not None and kind.status_subresource

    # ------------------------------------------------------------------ RVs

    @property
    def history_window(self) -> int:
        """Events kept per kind (older ones are dropped as by compaction)."""
        with self._cond:
            return self._history.window

    @history_window.setter
    def history_window(self, value: int) -> None:
        with self._cond:
            self._history.window = value

    @property
    def resource_version(self) -> int:
        with self._cond:
            return self._history.rv

    @property
    def compacted_rv(self) -> int:
        with self._cond:
            return self._history.compacted

    def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until the global RV reaches ``rv``."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._history.rv >= rv or self._closed, timeout
            ) and (self._history.rv >= rv)

    def compact(self, rv: int | None = None) -> int:
        """Drop history up to ``rv`` (default: the current RV); returns it."""
        with self._cond:
            return self._history.compact(rv)

    def close(self) -> None:
        """End every watch and wake every waiter (server shutdown)."""
        with self._cond:
            self._closed = True
            self.end_watches("stopped")

    def reopen(self) -> None:
        """Accept watches and waits again after :meth:`close` (server restart)."""
        with self._cond:
            self._closed = False

    def end_watches(self, reason: str) -> None:
        """End every open watch with ``reason`` (see :class:`Watcher`)."""
        with self._cond:
            self._watches.end_all(reason)
            self._cond.notify_all()

    # ---------------------------------------------------------------- writes

    @contextlib.contextmanager
    def _writing(self) -> Iterator[ObjectWrites]:
        """The writes, under the lock; waiters are woken afterwards."""
        with self._cond:
            try:
                yield self._writes
            finally:
                self._cond.notify_all()

    def create(
        self,
        resource: Resource,
        obj: Any,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> Stored:
        """Store a new object. ``obj`` is owned by the storage afterwards.
        ``dry_run`` validates and answers without storing. ``manager``
        (a field manager) records the create in ``managedFields``; without
        one, the object keeps the managedFields it was sent with.

        ``namespace`` (from the request path) must agree with
        ``metadata.namespace`` when both are given.
        """
        with self._writing() as writes:
            return writes.create(resource, obj, namespace, dry_run=dry_run, manager=manager)

    def get(self, resource: Resource, name: str, namespace: str | None = None) -> Stored:
        with self._cond:
            kind = self._history.kind(resource)
            stored = kind.objects.get(object_key(namespace or "", name))
            if stored is None:
                raise _status.not_found(resource, name)
            return stored

    def update(
        self,
        resource: Resource,
        obj: Any,
        namespace: str | None = None,
        name: str | None = None,
        **options: Unpack[UpdateOptions],
    ) -> Stored:
        """Replace an object (PUT). An empty ``metadata.resourceVersion`` makes it
        unconditional; a stale one is a 409 Conflict. ``subresource="status"``
        writes only the status; ``keep_status`` keeps the stored status (a PUT to
        the main resource of a kind with a status subresource). ``manager``
        records the write in ``managedFields`` (as a write through
        ``managed_subresource`` when given, else ``subresource``);
        ``managed_fields`` are stored as they are instead (server-side apply
        computed them)."""
        with self._writing() as writes:
            return writes.update(resource, obj, namespace, name, **options)

    def scale(
        self,
        resource: Resource,
        name: str,
        namespace: str | None,
        replicas: int,
        resource_version: str = "",
        *,
        dry_run: bool = False,
        manager: str | None = None,
        replicas_path: str = ".spec.replicas",
    ) -> Stored:
        """Set ``spec.replicas`` (or the field at ``replicas_path``, a
        custom resource's ``specReplicasPath``) of an object (a write to its
        ``scale`` subresource), keeping everything else. A non-empty
        ``resource_version`` must be the object's (else 409 Conflict).
        ``manager`` records the write as one through ``scale``."""
        with self._writing() as writes:
            kind = self._history.kind(resource)
            old = kind.objects.get(object_key(namespace or "", name))
            if old is None:
                raise _status.not_found(resource, name)
            if resource_version and resource_version != old.obj["metadata"]["resourceVersion"]:
                raise _status.conflict(resource, name)
            obj = set_path(old.obj, replicas_path, replicas)
            return writes.update(
                resource,
                obj,
                namespace,
                name,
                keep_status=kind.status_subresource,
                dry_run=dry_run,
                manager=manager,
                managed_subresource="scale",
            )

    def delete(
        self,
        resource: Resource,
        name: str,
        namespace: str | None = None,
        **options: Unpack[DeleteOptions],
    ) -> tuple[Stored, bool]:
        """Delete an object: ``(final state, deleted)``. With finalizers it only
        sets ``deletionTimestamp`` (``deleted`` is False). ``dry_run`` checks
        and answers without deleting.

        ``add_finalizers`` (``foregroundDeletion`` or ``orphan``, from a
        ``propagationPolicy``) are added first, so the object waits for the
        garbage collector. With ``namespace_lifecycle`` a Namespace whose
        ``spec.finalizers`` is not empty is only marked (``deletionTimestamp``,
        ``phase: Terminating``) for the namespace controller to empty and
        finalize; without it the namespace's contents are deleted at once.
        ``graceful`` (a Pod, while the deletion lifecycle is on) starts a
        graceful deletion of ``grace_seconds`` (None: the pod's own) instead
        (see :mod:`._graceful`)."""
        with self._writing() as writes:
            return writes.delete(resource, name, namespace, **options)

    def delete_collection(
        self,
        resource: Resource,
        namespace: str | None,
        predicate: Predicate | None,
        **options: Unpack[DeleteOptions],
    ) -> list[Stored]:
        """Delete every (matching) object of the collection, each as
        :meth:`delete` with ``options`` would; returns the final states."""
        with self._writing() as writes:
            return writes.delete_collection(resource, namespace, predicate, **options)

    # ------------------------------------------------------------------ reads

    def list_page(
        self, resource: Resource, namespace: str | None, **options: Unpack[ListOptions]
    ) -> ListResult:
        """One list page. ``exact_rv`` None means the current state; otherwise
        the state at that RV (410 when compacted, 504 is the caller's job).
        ``limit`` 0 means everything; ``start_after`` is the key a continued
        list resumes after; ``predicate`` filters."""
        with self._cond:
            return self._history.list_page(resource, namespace, **options)

    def check_continue(self, resource: Resource, rv: int, start: str) -> None:
        """410 with an inconsistent-continue token when ``rv`` was compacted."""
        with self._cond:
            self._history.check_continue(resource, rv, start)

    # ---------------------------------------------------------------- watches

    def open_watch(
        self,
        resource: Resource,
        namespace: str | None,
        predicate: Predicate | None,
        *,
        from_rv: int | None,
        initial: bool,
        capacity: int,
    ) -> tuple[Watcher, list[tuple[str, Stored]], int]:
        """Register a watcher: ``(watcher, initial events, start RV)``.

        ``initial``: synthetic ADDED for every current object, then changes.
        ``from_rv`` N: events with rv > N (410 StatusError when too old;
        a future N waits). Neither: changes after the current RV.
        """
        with self._cond:
            history = self._history
            kind = history.kind(resource)
            if self._closed:
                raise _status.StatusError(503, "ServiceUnavailable", "the server is shutting down")
            first: list[tuple[str, Stored]] = []
            if initial:
                start = history.rv
                for key in key_range(kind.keys(), namespace, None):
                    stored = kind.objects[key]
                    if predicate is None or predicate(stored.obj):
                        first.append((ADDED, stored))
            elif from_rv is not None:
                floor = history.floor(kind)
                if from_rv < floor:
                    raise _status.expired(f"too old resource version: {from_rv} ({floor})")
                start = from_rv
                for event in history.events_after(kind, from_rv):
                    item = as_seen(event, namespace, predicate)
                    if item is not None:
                        first.append(item)
            else:
                start = history.rv
            watcher = Watcher(kind, namespace, predicate, capacity, max(start, history.rv))
            self._watches.add(watcher)
            self._cond.notify_all()  # wait_watch_count waiters
            return watcher, first, start

    def next_batch(self, watcher: Watcher, timeout: float) -> tuple[list[tuple[str, Stored]], int]:
        """Wait up to ``timeout`` for events: ``(events, RV all events up to
        which were delivered)``. Returns early, with no events, when the
        watcher ended (see ``watcher.end``). While stalled (:meth:`stall`) it
        returns nothing: events stay buffered (and may overflow); the RV is
        then -1 (no bookmark may be sent)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                now = time.monotonic()
                events, rv, until = self._watches.poll(watcher, now, deadline, self._history.rv)
                if until is None:
                    return events, rv
                self._cond.wait(until - now)

    def stall(self, seconds: float) -> None:
        """Hold every watch's events back for ``seconds`` (0 ends a stall)."""
        with self._cond:
            self._watches.stall_until = time.monotonic() + seconds if seconds > 0 else 0.0
            self._cond.notify_all()

    def silence(self) -> int:
        """Make every open watch send nothing more, for good (events stay
        buffered, no bookmarks); later watches are unaffected. Returns how
        many watches went silent."""
        with self._cond:
            count = self._watches.silence()
            self._cond.notify_all()
            return count

    def close_watch(self, watcher: Watcher) -> None:
        with self._cond:
            self._watches.discard(watcher)
            self._cond.notify_all()  # wait_watch_count waiters

    def wait_watch_count(self, count: int, timeout: float) -> bool:
        """Block until exactly ``count`` watches are open (True) or ``timeout``
        seconds pass (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._watches.count() == count, timeout)

    def notify(self) -> None:
        """Wake every waiter (after a fault setting changed)."""
        with self._cond:
            self._cond.notify_all()

    def watch_count(self) -> int:
        with self._cond:
            return self._watches.count()
