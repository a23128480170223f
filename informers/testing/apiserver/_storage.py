"""The emulator's storage: every kind's objects, one global resourceVersion, a
per-kind event log with a window, compaction, the state at an older RV, and the
watchers fed from the log.

Thread-safety: one :class:`threading.Condition` (``Storage._cond``) guards
everything here, including each watcher's buffer. Writers ``notify_all`` after
every change, so watch threads and lists waiting for a future RV wake up. No
user code runs under the lock (selector predicates are the emulator's own).

Stored objects are never mutated after they are stored: an update stores a new
dict. :class:`Stored` caches an object's JSON bytes, so a list is a join of
cached bytes and an event is serialised once for all watchers.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import collections
import dataclasses
import json
import re
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._apply import endpoint as _fields
from informers.testing.apiserver._apply import record_update
from informers.testing.apiserver._defaults import apply_defaults
from informers.wire.resources import (
    BUILTIN_RESOURCES,
    CUSTOMRESOURCEDEFINITIONS,
    NAMESPACES,
    SERVICEACCOUNTS,
    SERVICES,
    Resource,
)

__all__ = ["Event", "Predicate", "Storage", "Stored", "Watcher", "join_items"]

Predicate = Callable[[dict[str, Any]], bool]

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

#: Kinds whose ``metadata.generation`` the server does not maintain.
_NO_GENERATION = frozenset(
    {
        "Namespace",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Endpoints",
        "Event",
        "Node",
        "Lease",
        "EndpointSlice",
    }
)
#: Built-in kinds without a ``status`` subresource (a PUT writes their status).
NO_STATUS_SUBRESOURCE = frozenset(
    {
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Endpoints",
        "Event",
        "Lease",
        "EndpointSlice",
        "CustomResourceDefinition",
    }
)
#: Kinds whose name must be a DNS-1123 label rather than a subdomain.
_LABEL_NAMED = frozenset({"Namespace", "Service"})

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
    "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
    "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Stored:
    """One version of an object, with its JSON bytes cached.

    ``obj`` is never mutated; its first keys are ``kind`` and ``apiVersion``.
    ``full_json`` is its serialisation; :attr:`list_rest` is the part of it an
    item of a list response needs after the opening brace (built-in kinds drop
    ``kind``/``apiVersion`` from list items), as a view of ``full_json``, so a
    list is one join of cached bytes. Computing the cache twice from two
    threads is harmless (same bytes).
    """

    __slots__ = ("_full", "builtin", "key", "obj", "rv")

    def __init__(self, obj: dict[str, Any], key: str, rv: int, builtin: bool) -> None:
        self.obj = obj
        self.key = key
        self.rv = rv
        self.builtin = builtin
        self._full: bytes | None = None

    @property
    def full_json(self) -> bytes:
        if self._full is None:
            self._full = json.dumps(self.obj, separators=(",", ":")).encode()
        return self._full

    @property
    def list_rest(self) -> bytes | memoryview:
        """This object as a list item, without its opening ``{``."""
        full = self.full_json
        if self.builtin:
            prefix = _type_prefix(self.obj.get("kind"), self.obj.get("apiVersion"))
            if full.startswith(prefix):
                return memoryview(full)[len(prefix) :]
            trimmed = {k: v for k, v in self.obj.items() if k not in ("kind", "apiVersion")}
            return json.dumps(trimmed, separators=(",", ":")).encode()[1:]
        return memoryview(full)[1:]

    def with_rv(self, rv: int) -> Stored:
        """A copy whose ``metadata.resourceVersion`` is ``rv``."""
        obj = dict(self.obj)
        meta = dict(obj.get("metadata") or {})
        meta["resourceVersion"] = str(rv)
        obj["metadata"] = meta
        return Stored(obj, self.key, rv, self.builtin)


_PREFIXES: dict[tuple[Any, Any], bytes] = {}


def _type_prefix(kind: Any, api_version: Any) -> bytes:
    """``{"kind":"Pod","apiVersion":"v1",`` as ``json.dumps`` writes it."""
    prefix = _PREFIXES.get((kind, api_version))
    if prefix is None:
        text = json.dumps({"kind": kind, "apiVersion": api_version, "x": 0}, separators=(",", ":"))
        prefix = text[: -len('"x":0}')].encode()
        _PREFIXES[(kind, api_version)] = prefix
    return prefix


def join_items(items: list[Stored]) -> bytes:
    """The JSON array of ``items`` as list items."""
    if not items:
        return b"[]"
    return b"".join((b"[{", b",{".join([s.list_rest for s in items]), b"]"))


@dataclasses.dataclass(slots=True)
class Event:
    """One entry of a kind's event log. For DELETED, ``obj`` is the last state
    carrying the deletion's RV; ``prev`` is the state before the change
    (``None`` for ADDED)."""

    rv: int
    type: str
    obj: Stored
    prev: Stored | None


class Watcher:
    """One open watch. All fields are guarded by the storage lock.

    ``buffer`` holds ``(type, Stored)`` pairs not yet written; when it would
    exceed ``capacity`` the watcher ends with reason ``"overflow"``.
    ``end`` is ``None`` while the watch is open, else why it ended:
    ``"overflow"``, ``"drop"``, ``"drop-mid-line"``, ``"restart"``,
    ``"removed"`` (its kind went away) or ``"stopped"`` (server shutdown).
    """

    def __init__(
        self,
        kind: _Kind,
        namespace: str | None,
        predicate: Predicate | None,
        capacity: int,
        min_rv: int,
    ) -> None:
        self.kind = kind
        self.namespace = namespace
        self.predicate = predicate
        self.capacity = capacity
        self.min_rv = min_rv
        self.buffer: collections.deque[tuple[str, Stored]] = collections.deque()
        self.end: str | None = None
        #: Sends nothing more, ever (a half-dead connection): see ``silence``.
        self.silenced = False

    @property
    def resource(self) -> Resource:
        return self.kind.resource

    def offer_locked(self, event: Event) -> None:
        if self.end is not None or event.rv <= self.min_rv:
            return
        item = self.filter(event)
        if item is None:
            return
        if len(self.buffer) >= self.capacity:
            self.buffer.clear()
            self.end = "overflow"
            return
        self.buffer.append(item)

    def filter(self, event: Event) -> tuple[str, Stored] | None:
        """The event as this watcher sees it (selector transitions), or None."""
        if self.namespace is not None and not event.obj.key.startswith(self.namespace + "/"):
            return None
        pred = self.predicate
        if pred is None:
            return (event.type, event.obj)
        if event.type == ADDED:
            return (ADDED, event.obj) if pred(event.obj.obj) else None
        if event.type == DELETED:
            before = event.prev if event.prev is not None else event.obj
            return (DELETED, event.obj) if pred(before.obj) else None
        now_ok = pred(event.obj.obj)
        was_ok = event.prev is not None and pred(event.prev.obj)
        if now_ok and was_ok:
            return (MODIFIED, event.obj)
        if now_ok:
            return (ADDED, event.obj)
        if was_ok and event.prev is not None:
            return (DELETED, event.prev.with_rv(event.rv))
        return None


class _Kind:
    """Objects and event log of one resource (guarded by the storage lock)."""

    def __init__(self, resource: Resource, builtin: bool) -> None:
        self.resource = resource
        self.builtin = builtin
        self.objects: dict[str, Stored] = {}
        self.events: collections.deque[Event] = collections.deque()
        #: Events with rv <= floor were dropped by the window.
        self.window_floor = 0
        self.watchers: set[Watcher] = set()
        self.sorted_keys: list[str] | None = None
        #: (rv, state, sorted keys) of the last state reconstructed at an old RV.
        self.snapshot: tuple[int, dict[str, Stored], list[str]] | None = None
        self.status_subresource = builtin and resource.kind not in NO_STATUS_SUBRESOURCE

    def keys_locked(self) -> list[str]:
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.objects)
        return self.sorted_keys


def _resource_key(resource: Resource) -> tuple[str, str]:
    return (resource.group, resource.plural)


def object_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start key)`` of a continue token; 400 when it is not one of ours."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown version")
        rv, start = data["rv"], data["start"]
        if not isinstance(rv, int) or not isinstance(start, str):
            raise ValueError("bad fields")
    except (ValueError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
        raise _status.bad_request(f"continue key is not valid: {exc}") from None
    return rv, start


@dataclasses.dataclass(slots=True)
class ListResult:
    items: list[Stored]
    rv: int
    continue_token: str | None = None
    remaining: int | None = None


def _awaits_finalize(resource: Resource, obj: dict[str, Any]) -> bool:
    """A Terminating namespace stays until its ``spec.finalizers`` are empty."""
    return (
        resource == NAMESPACES
        and bool((obj.get("spec") or {}).get("finalizers"))
        and (obj.get("status") or {}).get("phase") == "Terminating"
    )


class Storage:
    """All objects of the emulated cluster. See the module docstring."""

    def __init__(self, history_window: int = 100_000) -> None:
        self._cond = threading.Condition()
        self.history_window = history_window
        self._rv = 1
        self._compacted = 0
        self._kinds: dict[tuple[str, str], _Kind] = {}
        #: (group, version, plural) -> resource
        self._served: dict[tuple[str, str, str], Resource] = {}
        self._closed = False
        self._stall_until = 0.0
        #: The next cluster IP to hand out (an offset into 10.96.0.0/12).
        self._next_cluster_ip = 10
        for res in BUILTIN_RESOURCES:
            self._register_locked(res, builtin=True)
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.create(NAMESPACES, {"metadata": {"name": ns}})
        self.create(SERVICEACCOUNTS, {"metadata": {"name": "default"}}, "default")

    # ----------------------------------------------------------- resources

    def _register_locked(self, resource: Resource, builtin: bool = False) -> _Kind:
        key = _resource_key(resource)
        kind = self._kinds.get(key)
        if kind is None:
            kind = _Kind(resource, builtin)
            self._kinds[key] = kind
        self._served[(resource.group, resource.version, resource.plural)] = resource
        return kind

    def register_resource(self, resource: Resource, *, status_subresource: bool = False) -> None:
        """Serve ``resource`` (a custom resource) from now on; idempotent."""
        with self._cond:
            kind = self._register_locked(resource)
            kind.status_subresource = kind.status_subresource or status_subresource

    def unregister_resource(self, group: str, plural: str) -> None:
        """Stop serving every version of ``plural.group``; drops its objects
        and ends its watches."""
        with self._cond:
            kind = self._kinds.pop((group, plural), None)
            for gvp in [k for k in self._served if k[0] == group and k[2] == plural]:
                del self._served[gvp]
            if kind is not None:
                for watcher in kind.watchers:
                    watcher.end = "removed"
                kind.watchers.clear()
            self._cond.notify_all()

    def resources(self) -> list[Resource]:
        """Every served resource (one per served version)."""
        with self._cond:
            return list(self._served.values())

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        with self._cond:
            return self._served.get((group, version, plural))

    def has_status_subresource(self, resource: Resource) -> bool:
        with self._cond:
            kind = self._kinds.get(_resource_key(resource))
            return kind is not None and kind.status_subresource

    def _kind_locked(self, resource: Resource) -> _Kind:
        kind = self._kinds.get(_resource_key(resource))
        if kind is None:
            raise _status.no_such_route()
        return kind

    # ------------------------------------------------------------------ RVs

    @property
    def resource_version(self) -> int:
        with self._cond:
            return self._rv

    @property
    def compacted_rv(self) -> int:
        with self._cond:
            return self._compacted

    def _floor_locked(self, kind: _Kind) -> int:
        return max(kind.window_floor, self._compacted)

    def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until the global RV reaches ``rv``."""
        with self._cond:
            return self._cond.wait_for(lambda: self._rv >= rv or self._closed, timeout) and (
                self._rv >= rv
            )

    def compact(self, rv: int | None = None) -> int:
        """Drop history up to ``rv`` (default: the current RV); returns it."""
        with self._cond:
            target = self._rv if rv is None else min(rv, self._rv)
            self._compacted = max(self._compacted, target)
            for kind in self._kinds.values():
                while kind.events and kind.events[0].rv <= self._compacted:
                    kind.events.popleft()
            return self._compacted

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
        with self._cond:
            for kind in self._kinds.values():
                for watcher in kind.watchers:
                    if watcher.end is None:
                        watcher.end = reason
            self._cond.notify_all()

    # ---------------------------------------------------------------- writes

    def _append_locked(self, kind: _Kind, event: Event) -> None:
        kind.events.append(event)
        while len(kind.events) > self.history_window:
            kind.window_floor = kind.events.popleft().rv
        for watcher in kind.watchers:
            watcher.offer_locked(event)
        self._cond.notify_all()

    def _validate_name(self, resource: Resource, name: str) -> None:
        if resource.kind in _LABEL_NAMED:
            ok, msg, limit = _DNS1123_LABEL.match(name), _LABEL_MSG, 63
        else:
            ok, msg, limit = _DNS1123_SUBDOMAIN.match(name), _SUBDOMAIN_MSG, 253
        if len(name) > limit:
            ok, msg = None, f"must be no more than {limit} characters"
        if not ok:
            raise _status.invalid(
                resource.group,
                resource.kind,
                name,
                [("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {msg}')],
            )

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
        if not isinstance(obj, dict):
            raise _status.bad_request("the request body must be a JSON object")
        meta = obj.get("metadata") if obj.get("metadata") is not None else {}
        if not isinstance(meta, dict):
            raise _status.bad_request("metadata must be a JSON object")
        meta = dict(meta)
        ns = _object_namespace(resource, namespace, meta)
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
        with self._cond:
            kind = self._kind_locked(resource)
            if not name:
                name = generate + "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))
            self._validate_name(resource, name)
            if ns and object_key("", ns) not in self._kinds[_resource_key(NAMESPACES)].objects:
                raise _status.not_found(NAMESPACES, ns)
            key = object_key(ns, name)
            if key in kind.objects:
                raise _status.already_exists(resource, name)
            self._rv += 1
            meta["name"] = name
            if ns:
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            meta["uid"] = str(uuid.uuid4())
            meta["resourceVersion"] = str(self._rv)
            meta["creationTimestamp"] = _now()
            meta.pop("deletionTimestamp", None)
            meta.pop("deletionGracePeriodSeconds", None)
            if kind.builtin and resource.kind in _NO_GENERATION:
                meta.pop("generation", None)
            else:
                meta["generation"] = 1
            new: dict[str, Any] = {
                "kind": resource.kind,
                "apiVersion": resource.api_version,
                "metadata": meta,
            }
            new.update((k, v) for k, v in obj.items() if k not in new)
            if kind.builtin:
                new = apply_defaults(resource, new, creating=True)
                meta = new["metadata"]
                if resource == SERVICES:
                    self._allocate_cluster_ip_locked(new, dry_run)
            if resource == NAMESPACES:
                self._fill_namespace(new)
            record_update(None, new, manager=manager, target=_fields.target(self, resource))
            if dry_run:  # validated and built, not stored
                self._rv -= 1
                del meta["resourceVersion"]
                return Stored(new, key, self._rv, kind.builtin)
            if resource == CUSTOMRESOURCEDEFINITIONS:
                self._register_crd_locked(new)
            stored = Stored(new, key, self._rv, kind.builtin)
            kind.objects[key] = stored
            kind.sorted_keys = None
            self._append_locked(kind, Event(self._rv, ADDED, stored, None))
            return stored

    def _allocate_cluster_ip_locked(self, service: dict[str, Any], dry_run: bool) -> None:
        """Give a Service without one a cluster IP (ExternalName and headless
        Services get none). Addresses are not reused."""
        spec = service.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        if not spec.get("clusterIP"):
            n = self._next_cluster_ip
            if n % 256 == 0:
                n += 1
            if not dry_run:
                self._next_cluster_ip = n + 1
            spec = dict(spec)
            spec["clusterIP"] = f"10.{96 + (n >> 16) % 16}.{(n >> 8) % 256}.{n % 256}"
            service["spec"] = spec
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            service["spec"] = {**spec, "clusterIPs": [spec["clusterIP"]]}

    @staticmethod
    def _fill_namespace(obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        labels = dict(meta.get("labels") or {})
        labels["kubernetes.io/metadata.name"] = meta["name"]
        meta["labels"] = labels
        spec = dict(obj.get("spec") or {})
        spec.setdefault("finalizers", ["kubernetes"])
        obj["spec"] = spec
        obj["status"] = {"phase": "Active"}

    def _register_crd_locked(self, crd: dict[str, Any]) -> None:
        try:
            spec = crd["spec"]
            names = spec["names"]
            group = spec["group"]
            versions = [v["name"] for v in spec["versions"] if v.get("served", True)]
            resources = [
                Resource(
                    group,
                    version,
                    names["plural"],
                    names["kind"],
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                    singular=names.get("singular", ""),
                    short_names=tuple(names.get("shortNames") or ()),
                    categories=tuple(names.get("categories") or ()),
                )
                for version in versions
            ]
            status_sub = any("status" in (v.get("subresources") or {}) for v in spec["versions"])
        except (KeyError, TypeError, AttributeError) as exc:
            raise _status.invalid(
                CUSTOMRESOURCEDEFINITIONS.group,
                CUSTOMRESOURCEDEFINITIONS.kind,
                str(crd["metadata"]["name"]),
                [("spec", "FieldValueRequired", f"Required value: {exc}")],
            ) from None
        for res in resources:
            kind = self._register_locked(res)
            kind.status_subresource = kind.status_subresource or status_sub
        crd["status"] = {
            "acceptedNames": dict(names),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
            ],
            "storedVersions": versions[:1],
        }

    def get(self, resource: Resource, name: str, namespace: str | None = None) -> Stored:
        with self._cond:
            kind = self._kind_locked(resource)
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
        *,
        subresource: str = "",
        keep_status: bool = False,
        dry_run: bool = False,
        manager: str | None = None,
        managed_subresource: str = "",
        managed_fields: list[dict[str, Any]] | None = None,
    ) -> Stored:
        """Replace an object (PUT). An empty ``metadata.resourceVersion`` makes it
        unconditional; a stale one is a 409 Conflict. ``subresource="status"``
        writes only the status; ``keep_status`` keeps the stored status (a PUT to
        the main resource of a kind with a status subresource). ``manager``
        records the write in ``managedFields`` (as a write through
        ``managed_subresource`` when given, else ``subresource``);
        ``managed_fields`` are stored as they are instead (server-side apply
        computed them)."""
        if not isinstance(obj, dict):
            raise _status.bad_request("the request body must be a JSON object")
        meta = obj.get("metadata") if obj.get("metadata") is not None else {}
        if not isinstance(meta, dict):
            raise _status.bad_request("metadata must be a JSON object")
        body_name = meta.get("name") or ""
        if name is None:
            name = body_name
        elif body_name and body_name != name:
            raise _status.bad_request("the name of the object does not match the name on the URL")
        ns = _object_namespace(resource, namespace, meta)
        if not name:
            raise _status.bad_request("name is required for an update")
        with self._cond:
            kind = self._kind_locked(resource)
            key = object_key(ns, name)
            old = kind.objects.get(key)
            if old is None:
                raise _status.not_found(resource, name)
            want_rv = meta.get("resourceVersion") or ""
            if want_rv and str(want_rv) != old.obj["metadata"]["resourceVersion"]:
                raise _status.conflict(resource, name)
            want_uid = meta.get("uid") or ""
            if want_uid and want_uid != old.obj["metadata"]["uid"]:
                raise _status.conflict(
                    resource,
                    name,
                    f"Precondition failed: UID in precondition: {want_uid}, "
                    f"UID in object meta: {old.obj['metadata']['uid']}",
                )
            new = self._merge_update_locked(
                kind=kind,
                old=old.obj,
                obj=obj,
                meta=meta,
                subresource=subresource,
                keep_status=keep_status,
            )
            record_update(
                old.obj,
                new,
                manager=manager,
                target=_fields.target(self, resource),
                subresource=managed_subresource or subresource,
                entries=managed_fields,
            )
            if _same_content(new, old.obj):
                return old
            if dry_run:
                return Stored(new, key, old.rv, kind.builtin)
            self._rv += 1
            new["metadata"]["resourceVersion"] = str(self._rv)
            if resource == CUSTOMRESOURCEDEFINITIONS:
                self._register_crd_locked(new)
            stored = Stored(new, key, self._rv, kind.builtin)
            if (
                new["metadata"].get("deletionTimestamp")
                and not new["metadata"].get("finalizers")
                and not _awaits_finalize(resource, new)
            ):
                del kind.objects[key]
                kind.sorted_keys = None
                self._append_locked(kind, Event(self._rv, DELETED, stored, old))
                self._after_delete_locked(resource, new)
            else:
                kind.objects[key] = stored
                self._append_locked(kind, Event(self._rv, MODIFIED, stored, old))
            return stored

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
    ) -> Stored:
        """Set ``spec.replicas`` of an object (a write to its ``scale``
        subresource), keeping everything else. A non-empty
        ``resource_version`` must be the object's (else 409 Conflict).
        ``manager`` records the write as one through ``scale``."""
        with self._cond:  # re-entrant: update() takes it again
            kind = self._kind_locked(resource)
            old = kind.objects.get(object_key(namespace or "", name))
            if old is None:
                raise _status.not_found(resource, name)
            if resource_version and resource_version != old.obj["metadata"]["resourceVersion"]:
                raise _status.conflict(resource, name)
            obj = dict(old.obj)
            spec = obj.get("spec")
            obj["spec"] = {**(spec if isinstance(spec, dict) else {}), "replicas": replicas}
            return self.update(
                resource,
                obj,
                namespace,
                name,
                keep_status=kind.status_subresource,
                dry_run=dry_run,
                manager=manager,
                managed_subresource="scale",
            )

    def _merge_update_locked(
        self,
        *,
        kind: _Kind,
        old: dict[str, Any],
        obj: dict[str, Any],
        meta: dict[str, Any],
        subresource: str,
        keep_status: bool,
    ) -> dict[str, Any]:
        old_meta = old["metadata"]
        if subresource == "status":
            new = dict(old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            new["metadata"] = dict(old_meta)
            return new
        new_meta = dict(meta)
        for field in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp"):
            if field in old_meta:
                new_meta[field] = old_meta[field]
            else:
                new_meta.pop(field, None)
        if "deletionGracePeriodSeconds" in old_meta:
            new_meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
        new = {"kind": old["kind"], "apiVersion": old["apiVersion"], "metadata": new_meta}
        new.update((k, v) for k, v in obj.items() if k not in new)
        if keep_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if kind.resource == NAMESPACES:
            # As the real server: the name label is defaulted on every write,
            # and the finalizers change only through the finalize subresource.
            labels = dict(new_meta.get("labels") or {})
            labels["kubernetes.io/metadata.name"] = old_meta["name"]
            new_meta["labels"] = labels
            old_spec: dict[str, Any] = old.get("spec") or {}
            sent = new.get("spec")
            new_spec: dict[str, Any] = dict(sent) if isinstance(sent, dict) else {}
            if (
                subresource != "finalize"
                and isinstance(old_spec, dict)
                and "finalizers" in old_spec
            ):
                new_spec["finalizers"] = old_spec["finalizers"]
            new["spec"] = new_spec
            new["status"] = old.get("status", {"phase": "Active"})
        if kind.builtin:  # before the generation check: defaults are no change
            if kind.resource == SERVICES:
                _keep_cluster_ip(new, old)
            new = apply_defaults(kind.resource, new, creating=False)
            new_meta = new["metadata"]
        if "generation" in old_meta:
            changed = _spec_part(new) != _spec_part(old)
            new_meta["generation"] = old_meta["generation"] + (1 if changed else 0)
        else:
            new_meta.pop("generation", None)
        return new

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
    ) -> tuple[Stored, bool]:
        """Delete an object: ``(final state, deleted)``. With finalizers it only
        sets ``deletionTimestamp`` (``deleted`` is False). ``dry_run`` checks
        and answers without deleting.

        ``add_finalizers`` (``foregroundDeletion`` or ``orphan``, from a
        ``propagationPolicy``) are added first, so the object waits for the
        garbage collector. With ``namespace_lifecycle`` a Namespace whose
        ``spec.finalizers`` is not empty is only marked (``deletionTimestamp``,
        ``phase: Terminating``) for the namespace controller to empty and
        finalize; without it the namespace's contents are deleted at once."""
        with self._cond:
            kind = self._kind_locked(resource)
            key = object_key(namespace or "" if resource.namespaced else "", name)
            old = kind.objects.get(key)
            if old is None:
                raise _status.not_found(resource, name)
            old_meta = old.obj["metadata"]
            if precondition_uid and precondition_uid != old_meta["uid"]:
                raise _status.conflict(
                    resource,
                    name,
                    f"Precondition failed: UID in precondition: {precondition_uid}, "
                    f"UID in object meta: {old_meta['uid']}",
                )
            if precondition_rv and precondition_rv != old_meta["resourceVersion"]:
                raise _status.conflict(
                    resource,
                    name,
                    f"Precondition failed: ResourceVersion in precondition: {precondition_rv}, "
                    f"ResourceVersion in object meta: {old_meta['resourceVersion']}",
                )
            if dry_run:
                return old, not old_meta.get("finalizers")
            if resource == NAMESPACES and namespace_lifecycle:
                if (old.obj.get("spec") or {}).get("finalizers"):
                    return self._mark_terminating_locked(kind, old)
            elif resource == NAMESPACES:
                self._delete_namespace_contents_locked(name)
            if add_finalizers and not old_meta.get("deletionTimestamp"):
                old = self._add_finalizers_locked(kind, old, add_finalizers)
            return self._delete_locked(kind, old)

    def _add_finalizers_locked(self, kind: _Kind, old: Stored, finalizers: Sequence[str]) -> Stored:
        # Not an event of its own: the deletion that follows publishes it.
        current = list(old.obj["metadata"].get("finalizers") or [])
        added = [f for f in finalizers if f not in current]
        if not added:
            return old
        new = dict(old.obj)
        new["metadata"] = {**old.obj["metadata"], "finalizers": current + added}
        return Stored(new, old.key, old.rv, kind.builtin)

    def _mark_terminating_locked(self, kind: _Kind, old: Stored) -> tuple[Stored, bool]:
        if old.obj["metadata"].get("deletionTimestamp"):
            return old, False
        self._rv += 1
        new = dict(old.obj)
        new["metadata"] = {
            **old.obj["metadata"],
            "deletionTimestamp": _now(),
            "deletionGracePeriodSeconds": 0,
            "resourceVersion": str(self._rv),
        }
        new["status"] = {**(old.obj.get("status") or {}), "phase": "Terminating"}
        stored = Stored(new, old.key, self._rv, kind.builtin)
        kind.objects[old.key] = stored
        self._append_locked(kind, Event(self._rv, MODIFIED, stored, old))
        return stored, False

    def _delete_locked(self, kind: _Kind, old: Stored) -> tuple[Stored, bool]:
        old_meta = old.obj["metadata"]
        if old_meta.get("finalizers"):
            if old_meta.get("deletionTimestamp"):
                return old, False
            self._rv += 1
            new = dict(old.obj)
            meta = dict(old_meta)
            meta["deletionTimestamp"] = _now()
            meta["deletionGracePeriodSeconds"] = 0
            meta["resourceVersion"] = str(self._rv)
            new["metadata"] = meta
            stored = Stored(new, old.key, self._rv, kind.builtin)
            kind.objects[old.key] = stored
            self._append_locked(kind, Event(self._rv, MODIFIED, stored, old))
            return stored, False
        self._rv += 1
        final = old.with_rv(self._rv)
        del kind.objects[old.key]
        kind.sorted_keys = None
        self._append_locked(kind, Event(self._rv, DELETED, final, old))
        self._after_delete_locked(kind.resource, final.obj)
        return final, True

    def _after_delete_locked(self, resource: Resource, obj: dict[str, Any]) -> None:
        if resource == CUSTOMRESOURCEDEFINITIONS:
            spec = obj.get("spec") or {}
            group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
            kind = self._kinds.pop((group, plural), None)
            for gvp in [k for k in self._served if k[0] == group and k[2] == plural]:
                del self._served[gvp]
            if kind is not None:
                for watcher in kind.watchers:
                    watcher.end = "removed"

    def _delete_namespace_contents_locked(self, namespace: str) -> None:
        # What the namespace controller would do, done at once.
        prefix = namespace + "/"
        for kind in list(self._kinds.values()):
            if not kind.resource.namespaced:
                continue
            for key in [k for k in kind.objects if k.startswith(prefix)]:
                self._delete_locked(kind, kind.objects[key])

    def delete_collection(
        self, resource: Resource, namespace: str | None, predicate: Predicate | None
    ) -> list[Stored]:
        """Delete every (matching) object of the collection; returns the final states."""
        with self._cond:
            kind = self._kind_locked(resource)
            keys = list(self._range_locked(kind.keys_locked(), namespace, None))
            out = []
            for key in keys:
                old = kind.objects[key]
                if predicate is not None and not predicate(old.obj):
                    continue
                if resource == NAMESPACES:
                    self._delete_namespace_contents_locked(old.obj["metadata"]["name"])
                out.append(self._delete_locked(kind, old)[0])
            return out

    # ------------------------------------------------------------------ reads

    @staticmethod
    def _range_locked(keys: list[str], namespace: str | None, after: str | None) -> list[str]:
        lo, hi = 0, len(keys)
        if namespace:
            lo = bisect.bisect_left(keys, namespace + "/")
            hi = bisect.bisect_left(keys, namespace + "0")  # "0" sorts right after "/"
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        return keys[lo:hi]

    def _state_at_locked(self, kind: _Kind, rv: int) -> tuple[dict[str, Stored], list[str]]:
        """Objects and sorted keys at ``rv`` (caller checked rv >= floor)."""
        if not kind.events or kind.events[-1].rv <= rv:
            return kind.objects, kind.keys_locked()
        if kind.snapshot is not None and kind.snapshot[0] == rv:
            return kind.snapshot[1], kind.snapshot[2]
        state = dict(kind.objects)
        for event in reversed(kind.events):
            if event.rv <= rv:
                break
            if event.prev is None:
                state.pop(event.obj.key, None)
            else:
                state[event.obj.key] = event.prev
        keys = sorted(state)
        kind.snapshot = (rv, state, keys)
        return state, keys

    def list_page(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        exact_rv: int | None,
        limit: int,
        start_after: str | None,
        predicate: Predicate | None,
    ) -> ListResult:
        """One list page. ``exact_rv`` None means the current state; otherwise
        the state at that RV (410 when compacted, 504 is the caller's job).
        ``limit`` 0 means everything."""
        with self._cond:
            kind = self._kind_locked(resource)
            if exact_rv is None:
                rv = self._rv
                objects, keys = kind.objects, kind.keys_locked()
            else:
                rv = exact_rv
                if rv < self._floor_locked(kind):
                    raise _status.expired("The resourceVersion for the provided list is too old.")
                objects, keys = self._state_at_locked(kind, rv)
            candidates = self._range_locked(keys, namespace, start_after)
            items: list[Stored] = []
            last_key = None
            scanned = 0
            for key in candidates:
                scanned += 1
                stored = objects[key]
                if predicate is not None and not predicate(stored.obj):
                    continue
                items.append(stored)
                last_key = key
                if limit and len(items) >= limit:
                    break
            result = ListResult(items, rv)
            if limit and len(items) >= limit and scanned < len(candidates):
                assert last_key is not None
                result.continue_token = encode_continue(rv, last_key)
                if predicate is None:
                    result.remaining = len(candidates) - scanned
            return result

    def check_continue(self, resource: Resource, rv: int, start: str) -> None:
        """410 with an inconsistent-continue token when ``rv`` was compacted."""
        with self._cond:
            kind = self._kind_locked(resource)
            if rv >= 0 and rv < self._floor_locked(kind):
                raise _status.expired(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter, or use "
                    "the continue token in this response to retrieve the remainder of the "
                    "results. Continuing with the provided token results in an inconsistent "
                    "list - objects that were created, modified, or deleted between the time "
                    "the first chunk was returned and now may show up in the list.",
                    continue_token=encode_continue(-1, start),
                )

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
            kind = self._kind_locked(resource)
            if self._closed:
                raise _status.StatusError(503, "ServiceUnavailable", "the server is shutting down")
            first: list[tuple[str, Stored]] = []
            if initial:
                start = self._rv
                for key in self._range_locked(kind.keys_locked(), namespace, None):
                    stored = kind.objects[key]
                    if predicate is None or predicate(stored.obj):
                        first.append((ADDED, stored))
            elif from_rv is not None:
                floor = self._floor_locked(kind)
                if from_rv < floor:
                    raise _status.expired(f"too old resource version: {from_rv} ({floor})")
                start = from_rv
                probe = Watcher(kind, namespace, predicate, capacity, start)
                replay = []
                for event in reversed(kind.events):
                    if event.rv <= from_rv:
                        break
                    replay.append(event)
                for event in reversed(replay):
                    item = probe.filter(event)
                    if item is not None:
                        first.append(item)
            else:
                start = self._rv
            watcher = Watcher(kind, namespace, predicate, capacity, max(start, self._rv))
            kind.watchers.add(watcher)
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
                if watcher.end is not None:
                    return [], self._rv
                stall = deadline if watcher.silenced else self._stall_until
                if now < stall:
                    if now >= deadline:
                        return [], -1
                    self._cond.wait(min(stall, deadline) - now)
                    continue
                if watcher.silenced:
                    return [], -1
                if watcher.buffer:
                    batch = list(watcher.buffer)
                    watcher.buffer.clear()
                    return batch, self._rv
                if now >= deadline:
                    return [], max(self._rv, watcher.min_rv)
                self._cond.wait(deadline - now)

    def stall(self, seconds: float) -> None:
        """Hold every watch's events back for ``seconds`` (0 ends a stall)."""
        with self._cond:
            self._stall_until = time.monotonic() + seconds if seconds > 0 else 0.0
            self._cond.notify_all()

    def silence(self) -> int:
        """Make every open watch send nothing more, for good (events stay
        buffered, no bookmarks); later watches are unaffected. Returns how
        many watches went silent."""
        with self._cond:
            count = 0
            for kind in self._kinds.values():
                for watcher in kind.watchers:
                    watcher.silenced = True
                    count += 1
            self._cond.notify_all()
            return count

    def close_watch(self, watcher: Watcher) -> None:
        with self._cond:
            watcher.kind.watchers.discard(watcher)
            if watcher.end is None:
                watcher.end = "closed"
            self._cond.notify_all()  # wait_watch_count waiters

    def wait_watch_count(self, count: int, timeout: float) -> bool:
        """Block until exactly ``count`` watches are open (True) or ``timeout``
        seconds pass (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._watch_count_locked() == count, timeout)

    def _watch_count_locked(self) -> int:
        return sum(len(kind.watchers) for kind in self._kinds.values())

    def notify(self) -> None:
        """Wake every waiter (after a fault setting changed)."""
        with self._cond:
            self._cond.notify_all()

    def watch_count(self) -> int:
        with self._cond:
            return self._watch_count_locked()


def _keep_cluster_ip(new: dict[str, Any], old: dict[str, Any]) -> None:
    """An update that leaves the cluster IP out keeps the allocated one (as the
    real server does)."""
    new_spec, old_spec = new.get("spec"), old.get("spec")
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict):
        return
    if new_spec.get("clusterIP") or not old_spec.get("clusterIP"):
        return
    if new_spec.get("type", "ClusterIP") == "ExternalName":
        return
    spec = dict(new_spec)
    spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = old_spec["clusterIPs"]
    new["spec"] = spec


def _object_namespace(resource: Resource, namespace: str | None, meta: dict[str, Any]) -> str:
    """The namespace an object is written to: the request's, else the body's,
    else ``default`` ("" for cluster-scoped kinds); 400 when the two differ."""
    if not resource.namespaced:
        return ""
    body_ns = meta.get("namespace") or ""
    if namespace and body_ns and body_ns != namespace:
        raise _status.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    return str(namespace or body_ns or "default")


def _spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _same_content(new: dict[str, Any], old: dict[str, Any]) -> bool:
    if {k: v for k, v in new.items() if k != "metadata"} != {
        k: v for k, v in old.items() if k != "metadata"
    }:
        return False
    a = {k: v for k, v in new["metadata"].items() if k != "resourceVersion"}
    b = {k: v for k, v in old["metadata"].items() if k != "resourceVersion"}
    return a == b
