"""The object writes of the emulated API server: create, update (PUT, the
status and finalize subresources), scale, delete (finalizers, propagation
policies, namespaces and their contents, CustomResourceDefinitions) and
delete-collection.

Each write checks its preconditions, builds the new state with the rules of
:mod:`._rules`, stores it in the :class:`History`, logs its event and hands
it to the watchers, all in one step. :class:`ObjectWrites` is not
thread-safe and has no lock: :class:`Storage` calls every method under its
one lock and wakes its waiters afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypedDict, Unpack

from informers.testing.apiserver import _events_view, _rules, _status, _validation
from informers.testing.apiserver._apply import record_update
from informers.testing.apiserver._apply.operations import Target
from informers.testing.apiserver._crd import admit as crd_admit
from informers.testing.apiserver._crd import crd_name, read_defaults
from informers.testing.apiserver._filtering import Predicate
from informers.testing.apiserver._graceful import grace_period, terminating
from informers.testing.apiserver._history import History, KindLog, key_range
from informers.testing.apiserver._stored import ADDED, DELETED, MODIFIED, Event, Stored, object_key
from informers.testing.apiserver._watch import WatchHub
from informers.wire.resources import CUSTOMRESOURCEDEFINITIONS, NAMESPACES, SERVICES, Resource

__all__ = ["DeleteOptions", "ObjectWrites", "UpdateOptions"]


class UpdateOptions(TypedDict, total=False):
    """The keyword options of :meth:`ObjectWrites.update`."""

    subresource: str
    keep_status: bool
    dry_run: bool
    manager: str | None
    managed_subresource: str
    managed_fields: list[dict[str, Any]] | None


class DeleteOptions(TypedDict, total=False):
    """The keyword options of :meth:`ObjectWrites.delete`."""

    precondition_uid: str
    precondition_rv: str
    dry_run: bool
    add_finalizers: Sequence[str]
    namespace_lifecycle: bool
    graceful: bool
    grace_seconds: int | None


class ObjectWrites:
    """Every write to the stored objects (see the module docstring)."""

    def __init__(
        self, history: History, watches: WatchHub, target: Callable[[Resource], Target]
    ) -> None:
        #: The field-management description of a resource, for managedFields.
        self._target = target
        self._history = history
        self._watches = watches
        self._services = _validation.ServiceAllocators()
        #: Validate and convert built-in kinds (see :mod:`._validation`).
        self.validation = True
        #: Record ordinary writes in ``managedFields`` (off: as without a manager).
        self.field_management = True

    def unregister(self, group: str, plural: str) -> None:
        """Stop serving every version of ``plural.group``: its objects are
        dropped and its watches end."""
        kind = self._history.unregister(group, plural)
        if kind is not None:
            self._watches.remove_kind(kind)

    def _publish(self, kind: KindLog, event: Event) -> None:
        """Log ``event`` (already applied to ``kind.objects``) and hand it to
        ``kind``'s watchers."""
        self._history.append(kind, event)
        self._watches.publish(kind, event)
        _events_view.mirror(self._history, self._watches, kind, event)

    def create(
        self,
        resource: Resource,
        obj: Any,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> Stored:
        """A create (see :meth:`Storage.create`)."""
        meta = dict(_rules.body_metadata(obj))
        ns = _rules.object_namespace(resource, namespace, meta)
        name = meta.get("name") or ""
        generate = meta.get("generateName") or ""
        if not isinstance(name, str) or not isinstance(generate, str):
            raise _status.bad_request("metadata.name and generateName must be strings")
        if not name and not generate:
            raise _status.invalid(
                resource.group,
                resource.kind,
                "",
                [
                    (
                        "metadata.name",
                        "FieldValueRequired",
                        "Required value: name or generateName is required",
                    )
                ],
            )
        history = self._history
        kind = history.kind(resource)
        if not name:
            name = _rules.generate_name(generate)
        _rules.validate_name(resource, name)
        ns_stored = history.kind(NAMESPACES).objects.get(object_key("", ns)) if ns else None
        if ns and ns_stored is None:
            raise _status.not_found(NAMESPACES, ns)
        if ns_stored is not None:
            _validation.check_namespace_open(resource, ns_stored.obj, name)
        key = object_key(ns, name)
        if key in kind.objects:
            raise _status.already_exists(resource, name)
        rv = history.rv + 1
        new = _rules.new_object(resource, kind.builtin, obj, meta, namespace=ns, name=name, rv=rv)
        if not kind.builtin:
            new = crd_admit(self._crd_of(resource), resource, new, creating=True)
        if self.validation and kind.builtin:
            new = _validation.convert(resource, new)
        problems: list[tuple[str, str, str]] = []
        allocated = self._services.on_create(new, problems) if self._is_service(kind) else None
        if self.validation or problems:
            _validation.validate_create(resource, kind.builtin, new, problems)
        if not self.field_management:
            manager = None
        record_update(None, new, manager=manager, target=self._target(resource))
        if dry_run:  # validated and built, not stored
            del new["metadata"]["resourceVersion"]
            return Stored(new, key, history.rv, kind.builtin)
        if allocated is not None:
            allocated()
        history.rv = rv
        if resource == CUSTOMRESOURCEDEFINITIONS:
            self._register_crd(new)
        stored = Stored(new, key, rv, kind.builtin)
        kind.put(stored)
        self._publish(kind, Event(rv, ADDED, stored, None))
        return stored

    @staticmethod
    def _is_service(kind: KindLog) -> bool:
        return kind.builtin and kind.resource == SERVICES

    def _crd_of(self, resource: Resource) -> dict[str, Any] | None:
        """The stored CustomResourceDefinition of ``resource``, if any."""
        crds = self._history.find(CUSTOMRESOURCEDEFINITIONS)
        stored = None if crds is None else crds.objects.get(crd_name(resource))
        return None if stored is None else stored.obj

    def _register_crd(self, crd: dict[str, Any]) -> None:
        """Serve what ``crd`` defines, and fill in its status (in place);
        stored objects get the defaults of its (new) schemas, as reads from
        storage would apply them."""
        resources, status_sub, status = _rules.crd_resources(crd)
        for res in resources:
            kind = self._history.register(res)
            kind.status_subresource = kind.status_subresource or status_sub
        crd["status"] = status
        if resources:
            kind = self._history.kind(resources[0])
            for key, stored in list(kind.objects.items()):
                defaulted = read_defaults(crd, stored.obj)
                if defaulted is not stored.obj:
                    kind.put(Stored(defaulted, key, stored.rv, kind.builtin))

    def update(
        self,
        resource: Resource,
        obj: Any,
        namespace: str | None = None,
        name: str | None = None,
        *,
        subresource: str = "",
        keep_status: bool = False,
        dry_run: bool = False,
        manager: str | None = None,
        managed_subresource: str = "",
        managed_fields: list[dict[str, Any]] | None = None,
    ) -> Stored:
        """An update (see :meth:`Storage.update`)."""
        meta = _rules.body_metadata(obj)
        body_name = meta.get("name") or ""
        if name is None:
            name = body_name
        elif body_name and body_name != name:
            raise _status.bad_request("the name of the object does not match the name on the URL")
        ns = _rules.object_namespace(resource, namespace, meta)
        if not name:
            raise _status.bad_request("name is required for an update")
        history = self._history
        kind = history.kind(resource)
        key = object_key(ns, name)
        old = kind.objects.get(key)
        if old is None:
            raise _status.not_found(resource, name)
        want_rv = meta.get("resourceVersion") or ""
        if want_rv and str(want_rv) != old.obj["metadata"]["resourceVersion"]:
            raise _status.conflict(resource, name)
        want_uid = meta.get("uid") or ""
        if want_uid and want_uid != old.obj["metadata"]["uid"]:
            raise _rules.precondition_failed(resource, name, "UID", want_uid, old.obj["metadata"])
        new = _rules.merge_update(
            resource,
            kind.builtin,
            old=old.obj,
            obj=obj,
            meta=meta,
            subresource=subresource,
            keep_status=keep_status,
        )
        problems: list[tuple[str, str, str]] = []
        allocated = None
        if self._is_service(kind) and subresource != "status":
            allocated = self._services.on_update(new, old.obj, problems)
        if self.validation or problems:
            if kind.builtin and self.validation:
                new = _validation.convert(resource, new)
            _validation.validate_update(
                resource, kind.builtin, new, old.obj, subresource=subresource, extra=problems
            )
        if not kind.builtin:
            new = crd_admit(self._crd_of(resource), resource, new)
        record_update(
            old.obj,
            new,
            manager=manager if self.field_management else None,
            target=self._target(resource),
            subresource=managed_subresource or subresource,
            entries=managed_fields,
        )
        if _rules.same_content(new, old.obj):
            return old
        if dry_run:
            return Stored(new, key, old.rv, kind.builtin)
        if allocated is not None:
            allocated()
        history.rv += 1
        rv = history.rv
        new["metadata"]["resourceVersion"] = str(rv)
        if resource == CUSTOMRESOURCEDEFINITIONS:
            self._register_crd(new)
        stored = Stored(new, key, rv, kind.builtin)
        if (
            new["metadata"].get("deletionTimestamp")
            and not new["metadata"].get("finalizers")
            and not _rules.awaits_finalize(resource, new)
        ):
            kind.remove(key)
            self._publish(kind, Event(rv, DELETED, stored, old))
            self._after_delete(resource, new)
        else:
            kind.put(stored)
            self._publish(kind, Event(rv, MODIFIED, stored, old))
        return stored

    def delete(
        self,
        resource: Resource,
        name: str,
        namespace: str | None = None,
        *,
        precondition_uid: str = "",
        precondition_rv: str = "",
        dry_run: bool = False,
        add_finalizers: Sequence[str] = (),
        namespace_lifecycle: bool = False,
        graceful: bool = False,
        grace_seconds: int | None = None,
    ) -> tuple[Stored, bool]:
        """A delete (see :meth:`Storage.delete`)."""
        kind = self._history.kind(resource)
        key = object_key(namespace or "" if resource.namespaced else "", name)
        old = kind.objects.get(key)
        if old is None:
            raise _status.not_found(resource, name)
        if resource == NAMESPACES:
            _validation.check_namespace_delete(resource, name)
        old_meta = old.obj["metadata"]
        if precondition_uid and precondition_uid != old_meta["uid"]:
            raise _rules.precondition_failed(resource, name, "UID", precondition_uid, old_meta)
        if precondition_rv and precondition_rv != old_meta["resourceVersion"]:
            raise _rules.precondition_failed(
                resource, name, "ResourceVersion", precondition_rv, old_meta
            )
        if dry_run:
            return old, not old_meta.get("finalizers")
        if resource == NAMESPACES and namespace_lifecycle:
            if (old.obj.get("spec") or {}).get("finalizers"):
                return self._mark_deleted(kind, old, terminating=True)
        elif resource == NAMESPACES:
            self._delete_namespace_contents(name)
        if add_finalizers and not old_meta.get("deletionTimestamp"):
            # Not an event of its own: the deletion that follows publishes it.
            added = _rules.with_finalizers(old.obj, add_finalizers)
            if added is not None:
                old = Stored(added, old.key, old.rv, kind.builtin)
        if graceful and kind.builtin and resource.kind == "Pod":
            grace = grace_period(old.obj, grace_seconds)
            if grace > 0 or (old_meta.get("deletionTimestamp") and old_meta.get("finalizers")):
                return self._terminate(kind, old, grace)
        return self._delete(kind, old)

    def _terminate(self, kind: KindLog, old: Stored, grace: int) -> tuple[Stored, bool]:
        """Start (or shorten) a pod's graceful deletion."""
        new = terminating(old.obj, grace, self._history.rv + 1)
        if new is None:
            return old, False
        self._history.rv += 1
        stored = Stored(new, old.key, self._history.rv, kind.builtin)
        kind.put(stored)
        self._publish(kind, Event(stored.rv, MODIFIED, stored, old))
        return stored, False

    def _mark_deleted(
        self, kind: KindLog, old: Stored, *, terminating: bool
    ) -> tuple[Stored, bool]:
        """Set ``deletionTimestamp`` (once) on an object that must wait for
        its finalizers (``terminating``: a Namespace for its controller)."""
        if old.obj["metadata"].get("deletionTimestamp"):
            return old, False
        self._history.rv += 1
        rv = self._history.rv
        new = _rules.deletion_marked(old.obj, rv, terminating=terminating)
        stored = Stored(new, old.key, rv, kind.builtin)
        kind.put(stored)
        self._publish(kind, Event(rv, MODIFIED, stored, old))
        return stored, False

    def _delete(self, kind: KindLog, old: Stored) -> tuple[Stored, bool]:
        if old.obj["metadata"].get("finalizers"):
            return self._mark_deleted(kind, old, terminating=False)
        self._history.rv += 1
        final = old.with_rv(self._history.rv)
        kind.remove(old.key)
        self._publish(kind, Event(final.rv, DELETED, final, old))
        self._after_delete(kind.resource, final.obj)
        return final, True

    def _after_delete(self, resource: Resource, obj: dict[str, Any]) -> None:
        if resource == SERVICES:
            self._services.release(obj)
        if resource == CUSTOMRESOURCEDEFINITIONS:
            # Its custom resources go first (finalizers or not), each with a
            # DELETED event its watchers still receive; then the endpoints.
            spec = obj.get("spec") or {}
            group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
            for kind in self._history.kinds():
                if (kind.resource.group, kind.resource.plural) == (group, plural):
                    for key in list(kind.keys()):
                        self._history.rv += 1
                        last = kind.objects[key]
                        final = last.with_rv(self._history.rv)
                        kind.remove(key)
                        self._publish(kind, Event(final.rv, DELETED, final, last))
            self.unregister(group, plural)

    def _delete_namespace_contents(self, namespace: str) -> None:
        # What the namespace controller would do, done at once.
        prefix = namespace + "/"
        for kind in self._history.kinds():
            if not kind.resource.namespaced:
                continue
            for key in [k for k in kind.objects if k.startswith(prefix)]:
                self._delete(kind, kind.objects[key])

    def delete_collection(
        self,
        resource: Resource,
        namespace: str | None,
        predicate: Predicate | None,
        **options: Unpack[DeleteOptions],
    ) -> list[Stored]:
        """A delete of a collection (see :meth:`Storage.delete_collection`):
        each matching object is deleted as a DELETE of it with ``options``
        would (a pod with a grace period stays, Terminating)."""
        kind = self._history.kind(resource)
        keys = list(key_range(kind.keys(), namespace, None))
        out = []
        for key in keys:
            old = kind.objects.get(key)
            if old is None or (predicate is not None and not predicate(old.obj)):
                continue
            if resource == NAMESPACES:
                self._delete_namespace_contents(old.obj["metadata"]["name"])
                out.append(self._delete(kind, old)[0])
                continue
            meta = old.obj["metadata"]
            out.append(self.delete(resource, meta["name"], meta.get("namespace"), **options)[0])
        return out
