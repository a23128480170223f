"""The client a reconcile writes back with: every verb on any kind, plain
dicts in and out, reads from the shared informers' caches, and
read-your-writes.

:class:`Client` talks to the API server over the same raw
:class:`~informers.rest.transport.Transport` the informers use (no generated
models on the path) and raises the typed errors of :mod:`informers.errors`
(:class:`~informers.errors.NotFoundError`, :class:`~informers.errors.ConflictError`
-- a stale update, or a server-side apply conflict whose message names the
other field manager --, :class:`~informers.errors.AlreadyExistsError`,
:class:`~informers.errors.InvalidError` with the field causes in
:attr:`~informers.errors.ApiError.causes`, ...). Transport failures propagate
as the ``urllib3`` / :class:`OSError` exceptions they are. Every request has
a read timeout (``timeout``, default 30 s) and the transport's connect
timeout.

**Reads.** ``get`` and ``list`` answer from the factory's informer when the
factory has one for the kind, it has synced, and it watches the namespace
asked for; otherwise (or with ``live=True``) they ask the server. Objects from
a cache are the cache's own, shared and read-only (copy one before changing
it: :func:`copy.deepcopy`); objects from the server are the caller's. The
informer holds what it watches: a factory with ``tweak_list_options`` that
filters serves only the objects it lets through.

**Read-your-writes.** The client records the resourceVersion the server
answered to every write (not dry runs) of a kind a factory informer caches:

* a cached ``get`` of a key written through this client waits until the
  informer has applied that write (at most ``catch_up_timeout`` seconds;
  after that it reads live) -- and a cached ``list`` of the kind waits for
  the kind's latest write;
* a write made inside a reconcile is also recorded in the reconcile's
  :class:`~informers.toolkit.runtime.writes.WriteLedger`, so the
  :class:`~informers.toolkit.runtime.Controller` holds the next reconcile of
  the same request back until the caches reflect it.

``read_your_writes=False`` turns both off. A delete the server answers with
a ``Status`` (most kinds, when nothing holds the object) carries no
resourceVersion, so it is not waited for: a cached read may still show the
deleted object until its watch event arrives.

**Kinds** are named as kubectl names them (``"configmaps"``, ``"cm"``,
``"deploy"``, ``"widgets.example.com"``) or given as a
:class:`~informers.wire.resources.Resource`; names that are not built in are
resolved through the server's discovery documents once and remembered. The
verbs that take an object (``create``, ``update``, ``apply``...) find its kind
from its ``apiVersion`` and ``kind``.

**Objects in** are dicts or the official client's models (converted with
``ApiClient.sanitize_for_serialization``); they are never changed.
**Objects out** are dicts; ``get`` and ``list`` return the official client's
models with ``model=`` (``model=V1Pod``), memoised per uid and
resourceVersion.

Thread-safe: one client serves every worker of every controller.
"""

from __future__ import annotations

import builtins
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from informers.cache.informer import SharedIndexInformer
from informers.errors import NotFoundError, ObjectKeyError
from informers.rest.discovery import resolve_resource
from informers.rest.models import to_dict
from informers.rest.transport import Transport, as_transport
from informers.toolkit._logcontext import context_logger
from informers.toolkit.client._cache import CachedKind
from informers.toolkit.client._typed import ModelMemo
from informers.toolkit.runtime.context import current_context
from informers.wire.objects import NAMESPACE_INDEX
from informers.wire.resources import BUILTIN_RESOURCES, Resource, find_builtin
from informers.wire.selectors import FieldSelector, LabelSelector

if TYPE_CHECKING:
    from informers.cache.factory import SharedInformerFactory

__all__ = [
    "APPLY_PATCH",
    "DEFAULT_CATCH_UP_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "PATCH_TYPES",
    "Client",
    "PatchType",
    "PropagationPolicy",
]

log = context_logger(logging.getLogger(__name__))

#: Read timeout (seconds) of every request of a client that names none.
DEFAULT_TIMEOUT = 30.0
#: Seconds a cached read waits for the informer to catch up with a write.
DEFAULT_CATCH_UP_TIMEOUT = 10.0
#: The media type of a server-side apply.
APPLY_PATCH = "application/apply-patch+yaml"
#: The patch types of :meth:`Client.patch` and their media types.
PATCH_TYPES: Mapping[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": APPLY_PATCH,
}

#: A patch type of :meth:`Client.patch`.
PatchType: TypeAlias = Literal["merge", "json", "strategic", "apply"]
#: A delete's ``propagationPolicy``.
PropagationPolicy: TypeAlias = Literal["Orphan", "Background", "Foreground"]

_CLUSTER = ""
# The version prefix of a kubernetes model's class name: V1, V2beta1...
_MODEL_VERSION = re.compile(r"^V\d+(?:(?:alpha|beta)\d+)?")


def _not_found(res: Resource, name: str) -> NotFoundError:
    return NotFoundError(
        404,
        "NotFound",
        f'{res} "{name}" not found',
        body={"reason": "NotFound", "details": {"name": name, "kind": res.plural}},
    )


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


class Client:
    """Reads and writes any kind (see the module documentation).

    :param api_client: a :class:`kubernetes.client.ApiClient` (or a
        :class:`~informers.rest.transport.Transport`); the caller closes it.
    :param factory: the informers to read from (``None``: every read is live).
    :param timeout: read timeout (seconds) of every request.
    :param read_your_writes: record writes so that cached reads and the next
        reconcile wait for the cache to reflect them.
    :param catch_up_timeout: how long (seconds) a cached read, or the next
        reconcile, waits for that.
    :param field_manager: the ``fieldManager`` of writes that name none
        (``None``: the server's default; :meth:`apply` always names one).
    """

    def __init__(
        self,
        api_client: Any,
        *,
        factory: SharedInformerFactory | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        read_your_writes: bool = True,
        catch_up_timeout: float = DEFAULT_CATCH_UP_TIMEOUT,
        field_manager: str | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0, not {timeout!r}")
        self._api_client = api_client
        self._transport: Transport = as_transport(api_client)
        self._factory = factory
        self._timeout = float(timeout)
        self._ryw = read_your_writes
        self._catch_up = float(catch_up_timeout)
        self._field_manager = field_manager
        self._models = ModelMemo()
        self._lock = threading.Lock()
        # Written under _lock, read without it (a dict's get is atomic): names
        # resolved, kinds of objects resolved, the factory's caches by the
        # name or Resource they were asked by and by Resource.
        self._names: dict[str, Resource] = {}
        self._kinds: dict[tuple[str, str], Resource] = {}
        self._by_arg: dict[Resource | str, CachedKind] = {}
        self._by_res: dict[Resource, CachedKind] = {}
        # The store lookups of the kinds a get can read at once: synced, no
        # write of ours not read back. (A key of a namespace the factory
        # does not watch is in no store: such a get misses and reads live.)
        self._fast: dict[Resource | str, Callable[[str], Any]] = {}

    @property
    def factory(self) -> SharedInformerFactory | None:
        """The informers reads are served from."""
        return self._factory

    @property
    def transport(self) -> Transport:
        """The raw transport every request goes through."""
        return self._transport

    def __repr__(self) -> str:
        return f"<Client {self._transport!r} cached={self._factory is not None}>"

    # ------------------------------------------------------------------ kinds

    def resolve(self, resource: Resource | str) -> Resource:
        """The :class:`Resource` a kubectl name means (see
        :func:`~informers.rest.discovery.resolve_resource`); remembered.
        Raises :class:`~informers.errors.UnknownResourceError`."""
        if isinstance(resource, Resource):
            return resource
        found = self._names.get(resource)
        if found is not None:
            return found
        found = resolve_resource(self._transport, resource)
        with self._lock:
            self._names[resource] = found
        return found

    def resource_of(self, obj: Mapping[str, Any]) -> Resource:
        """The :class:`Resource` of an object, from its ``apiVersion`` and
        ``kind`` (built in, or through discovery; remembered). Raises
        :class:`~informers.errors.ObjectKeyError` when it lacks either,
        :class:`~informers.errors.UnknownResourceError` when the server does
        not serve it."""
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        if not api_version or not kind:
            raise ObjectKeyError("the object needs apiVersion and kind (or pass resource=)")
        found = self._kinds.get((api_version, kind))
        if found is not None:
            return found
        group, _, version = api_version.rpartition("/")
        for builtin in BUILTIN_RESOURCES:
            if builtin.kind == kind and builtin.group == group:
                found = builtin
                break
        else:
            found = resolve_resource(self._transport, f"{kind}.{group}" if group else kind)
        if found.version != version:
            found = replace(found, version=version)
        with self._lock:
            self._kinds[(api_version, kind)] = found
        return found

    def _body(self, obj: Any) -> dict[str, Any]:
        """``obj`` as a dict; a built-in kind's model that does not say its
        ``apiVersion`` and ``kind`` gets them from its class (``V1Pod``)."""
        body = to_dict(obj, self._api_client)
        if body is not obj and not (body.get("apiVersion") and body.get("kind")):
            kind = _MODEL_VERSION.sub("", type(obj).__name__)
            found = find_builtin(kind)
            if found is not None and found.kind == kind:
                body.setdefault("apiVersion", found.api_version)
                body.setdefault("kind", kind)
        return body

    def _about(
        self,
        obj: Any,
        resource: Resource | str | None,
        namespace: str | None,
        subresource: str | None,
        what: str = "",
    ) -> tuple[dict[str, Any], Resource, str, str]:
        """``obj`` as a dict, its resource, namespace ("" for cluster-scoped)
        and the path of a request about it: its collection's when
        ``subresource`` is ``None`` (a create), else the object's own plus
        ``subresource``; ``what`` names the request in the error raised when
        the object has no ``metadata.name``. ``namespace`` is used when the
        object names none."""
        body = self._body(obj)
        res = self.resource_of(body) if resource is None else self.resolve(resource)
        meta = _metadata(body)
        ns = str(meta.get("namespace") or namespace or "") if res.namespaced else _CLUSTER
        if res.namespaced and not ns:
            raise ObjectKeyError(f"a namespaced {res.kind} needs metadata.namespace")
        if subresource is None:
            return body, res, ns, res.collection_path(ns or None)
        name = str(meta.get("name") or "")
        if not name:
            raise ObjectKeyError(f"{what} needs metadata.name")
        return body, res, ns, res.object_path(name, ns or None) + subresource

    def _named(
        self, resource: Resource | str, name: str, namespace: str | None, what: str = ""
    ) -> tuple[Resource, str, str]:
        """The resource, namespace ("" for cluster-scoped) and path of the
        object ``name``; ``what`` (when given) names the request in the
        error raised when a namespaced kind comes without ``namespace``."""
        res = self.resolve(resource)
        ns = (namespace or "") if res.namespaced else _CLUSTER
        if what and res.namespaced and not ns:
            raise ObjectKeyError(f"{what} of a namespaced {res.kind} needs namespace=")
        return res, ns, res.object_path(name, ns or None)

    # ------------------------------------------------------------------ cache

    def _cached(self, resource: Resource | str) -> CachedKind | None:
        """The factory's cache of ``resource`` (synced or not), or ``None``;
        remembered under the name it was asked by."""
        found = self._by_arg.get(resource)
        if found is not None or self._factory is None:
            return found
        res = self.resolve(resource)
        found = self._by_res.get(res)
        if found is None:
            # The factory's own informer of the kind (keyed by the Resource);
            # a scoped one (namespaces, selectors, metadata-only) never serves reads.
            informer = self._factory.informers().get(res)
            if not isinstance(informer, SharedIndexInformer):
                return None
            with self._lock:
                found = self._by_res.get(res)
                if found is None:
                    found = self._by_res[res] = CachedKind(res, informer, self._factory.namespace)
        with self._lock:
            self._by_arg[resource] = found
            found.args.append(resource)
            self._refresh_locked(found)
        return found

    def _refresh_locked(self, cached: CachedKind) -> None:
        """Put ``cached``'s names into, or take them out of, the fast path."""
        if cached.synced and not cached.written:
            for arg in cached.args:
                self._fast[arg] = cached.indexer.get_by_key
        else:
            for arg in cached.args:
                self._fast.pop(arg, None)

    def _record(self, res: Resource, namespace: str, obj: Any) -> None:
        """Remember a write's resourceVersion for read-your-writes."""
        if not self._ryw or not isinstance(obj, Mapping):
            return
        meta = _metadata(obj)
        version = str(meta.get("resourceVersion") or "")
        if not version.isdigit():
            return
        cached = self._cached(res)
        if cached is None:
            return
        name = str(meta.get("name") or "")
        with self._lock:
            cached.record(f"{namespace}/{name}" if namespace else name, version)
            self._refresh_locked(cached)
        context = current_context()
        if context is not None:
            context.writes.record(cached.informer, version, self._catch_up)

    def _converted(self, obj: Any, model: type[Any] | None) -> Any:
        return obj if model is None else self._models.convert(obj, model)

    # ------------------------------------------------------------------ reads

    def get(
        self,
        resource: Resource | str,
        name: str,
        *,
        namespace: str | None = None,
        live: bool = False,
        model: type[Any] | None = None,
    ) -> Any:
        """The object ``name`` (in ``namespace`` for namespaced kinds), from
        the cache when it serves the kind (see the module documentation),
        else from the server. Raises :class:`~informers.errors.NotFoundError`
        when there is none. Blocks on HTTP for a live read, and up to the
        catch-up timeout when this client wrote the object and the cache
        has not caught up yet."""
        if not live and model is None:
            # The common case first: a synced cache, no write of ours to wait
            # for, the object there. (Anything else takes the long way.)
            try:
                found = self._fast[resource](f"{namespace}/{name}" if namespace else name)
            except KeyError:  # not a kind of the fast path
                found = None
            if found is not None:
                return found
        cached = None if live else self._cached(resource)
        if cached is not None and (cached.synced or self._check_synced(cached)):
            ns = (namespace or "") if cached.namespaced else _CLUSTER
            if not cached.watched or ns == cached.watched:
                key = f"{ns}/{name}" if ns else name
                if not cached.written or self._read_back(cached, key):
                    found = cached.indexer.get_by_key(key)
                    if cached.written:
                        self._caught_up_with_all(cached)
                    if found is None:
                        raise _not_found(cached.resource, name)
                    return found if model is None else self._models.convert(found, model)
                log.debug(
                    "cache of %s behind a write of %s: reading live",
                    cached.resource,
                    key,
                    extra={"kind": str(cached.resource), "key": key},
                )
        path = self._named(resource, name, namespace)[2]
        obj = self._transport.request("GET", path, read_timeout=self._timeout).json()
        return self._converted(obj, model)

    def _read_back(self, cached: CachedKind, key: str) -> bool:
        """Whether the cache has applied this client's last write of ``key``
        (waiting for it up to the catch-up timeout); forgets the write once
        it has."""
        version = cached.written.get(key)
        if version is None:
            return True
        if not cached.informer.wait_for_resource_version(version, self._catch_up):
            return False
        with self._lock:
            cached.forget(key, version)
            self._refresh_locked(cached)
        return True

    def _check_synced(self, cached: CachedKind) -> bool:
        if not cached.check_synced():
            return False
        with self._lock:
            self._refresh_locked(cached)
        return True

    def _caught_up_with_all(self, cached: CachedKind) -> None:
        """Forget every write of ``cached`` once its informer has applied the
        latest (never waits), so that its reads take the fast path again."""
        highest = cached.highest
        if cached.informer.wait_for_resource_version(str(highest), 0.0):
            with self._lock:
                if cached.highest == highest:
                    cached.written.clear()
                    self._refresh_locked(cached)

    def list(
        self,
        resource: Resource | str,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        live: bool = False,
        model: type[Any] | None = None,
    ) -> builtins.list[Any]:
        """The objects of a kind (in ``namespace``, or in every namespace),
        matching the selectors: from the cache when it serves the kind and
        the field selector names only ``metadata.name`` and
        ``metadata.namespace``, else from the server. Raises
        :class:`~informers.errors.SelectorParseError` for a selector the
        cache cannot parse."""
        res = self.resolve(resource)
        ns = (namespace or "") if res.namespaced else _CLUSTER
        fields = FieldSelector.parse(field_selector) if field_selector else None
        cacheable = fields is None or all(
            r.field in ("metadata.name", "metadata.namespace") for r in fields.requirements
        )
        cached = None if live or not cacheable else self._cached(res)
        if cached is not None and not (
            (cached.synced or cached.check_synced())
            and (not cached.watched or ns == cached.watched)
            and (
                cached.highest < 0
                or cached.informer.wait_for_resource_version(str(cached.highest), self._catch_up)
            )
        ):
            cached = None  # not synced, another namespace, or behind our writes: read live
        if cached is not None:
            items = self._from_cache(cached.informer, ns, label_selector, fields)
        else:
            items = self._list_live(res, ns, label_selector, field_selector)
        if model is None:
            return items
        return [self._models.convert(item, model) for item in items]

    @staticmethod
    def _from_cache(
        informer: SharedIndexInformer,
        namespace: str,
        label_selector: str | None,
        fields: FieldSelector | None,
    ) -> builtins.list[Any]:
        store = informer.get_indexer()
        if namespace and NAMESPACE_INDEX in store.get_indexers():
            items = store.by_index(NAMESPACE_INDEX, namespace)
        elif namespace:
            items = [o for o in store.list() if _metadata(o).get("namespace") == namespace]
        else:
            items = store.list()
        if label_selector:
            items = LabelSelector.parse(label_selector).filter(items)
        if fields is not None and not fields.empty:
            items = [
                o
                for o in items
                if fields.matches(
                    {
                        "metadata.name": str(_metadata(o).get("name") or ""),
                        "metadata.namespace": str(_metadata(o).get("namespace") or ""),
                    }
                )
            ]
        return list(items)

    def _list_live(
        self,
        res: Resource,
        namespace: str,
        label_selector: str | None,
        field_selector: str | None,
    ) -> builtins.list[Any]:
        query: list[tuple[str, str]] = []
        if label_selector:
            query.append(("labelSelector", label_selector))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        path = res.collection_path(namespace or None)
        body = self._transport.request("GET", path, query=query, read_timeout=self._timeout)
        items: builtins.list[Any] = body.json().get("items") or []
        for item in items:  # list items come without their type, as in a watch they do not
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return items

    # ------------------------------------------------------------------ writes

    def _send(
        self,
        method: str,
        res: Resource,
        namespace: str,
        path: str,
        body: object,
        *,
        dry_run: bool,
        field_manager: str | None,
        force: bool | None = None,
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        """One write (query: ``dryRun``, ``fieldManager`` -- ``field_manager``
        or the client's --, ``force``); its answer, recorded for
        read-your-writes unless it was a dry run."""
        query: list[tuple[str, str]] = []
        if dry_run:
            query.append(("dryRun", "All"))
        manager = field_manager or self._field_manager
        if manager and method != "DELETE":  # DeleteOptions has no fieldManager
            query.append(("fieldManager", manager))
        if force:
            query.append(("force", "true"))
        response = self._transport.request(
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            read_timeout=self._timeout,
        )
        answer: dict[str, Any] = response.json() if response.data else {}
        if not dry_run:
            self._record(res, namespace, answer)
        return answer

    def create(
        self,
        obj: Any,
        *,
        resource: Resource | str | None = None,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Create ``obj`` (a dict or a model; ``metadata.generateName`` works);
        the object as stored. ``namespace`` is used when the object names
        none. Raises :class:`~informers.errors.AlreadyExistsError`,
        :class:`~informers.errors.InvalidError`..."""
        body, res, ns, path = self._about(obj, resource, namespace, None)
        return self._send("POST", res, ns, path, body, dry_run=dry_run, field_manager=field_manager)

    def update(
        self,
        obj: Any,
        *,
        resource: Resource | str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Replace ``obj`` (PUT; its ``metadata.resourceVersion``, when set,
        must be the stored one: :class:`~informers.errors.ConflictError`
        otherwise); the object as stored. The status is not changed by an
        update of a kind with a status subresource: :meth:`update_status`."""
        body, res, ns, path = self._about(obj, resource, None, "", "an update")
        return self._send("PUT", res, ns, path, body, dry_run=dry_run, field_manager=field_manager)

    def update_status(
        self,
        obj: Any,
        *,
        resource: Resource | str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Replace ``obj``'s status (PUT of the ``status`` subresource); as
        :meth:`update`."""
        body, res, ns, path = self._about(obj, resource, None, "/status", "an update")
        return self._send("PUT", res, ns, path, body, dry_run=dry_run, field_manager=field_manager)

    def patch(
        self,
        resource: Resource | str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> dict[str, Any]:
        """Patch the object ``name``: ``patch_type`` ``"merge"`` (JSON merge
        patch, a dict), ``"json"`` (JSON patch, a list of operations),
        ``"strategic"`` (strategic merge patch, built-in kinds only) or
        ``"apply"`` (prefer :meth:`apply`). ``patch`` may also be bytes.
        Returns the patched object."""
        res, ns, path = self._named(resource, name, namespace, "a patch")
        return self._patch(res, ns, path, patch, patch_type, dry_run, field_manager, force)

    def patch_status(
        self,
        resource: Resource | str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Patch the ``status`` subresource; as :meth:`patch`."""
        res, ns, path = self._named(resource, name, namespace, "a patch")
        return self._patch(res, ns, path + "/status", patch, patch_type, dry_run, field_manager)

    def _patch(  # noqa: PLR0917 - the private form of patch()'s arguments
        self,
        res: Resource,
        namespace: str,
        path: str,
        patch: Any,
        patch_type: str,
        dry_run: bool,
        field_manager: str | None,
        force: bool | None = None,
    ) -> dict[str, Any]:
        media_type = PATCH_TYPES.get(patch_type)
        if media_type is None:
            raise ValueError(f"patch_type is one of {sorted(PATCH_TYPES)}, not {patch_type!r}")
        body = patch if isinstance(patch, bytes | list) else to_dict(patch, self._api_client)
        return self._send(
            "PATCH",
            res,
            namespace,
            path,
            body,
            dry_run=dry_run,
            field_manager=field_manager,
            force=force,
            content_type=media_type,
        )

    def apply(
        self,
        obj: Any,
        *,
        field_manager: str,
        force: bool = False,
        resource: Resource | str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (its fields are what ``field_manager``
        wants set; it needs ``apiVersion``, ``kind`` and
        ``metadata.name``). Creates the object when missing. A field another
        manager owns with another value raises
        :class:`~informers.errors.ConflictError` (its message names that
        manager) unless ``force``. Returns the object as stored."""
        return self._apply(obj, field_manager, force, resource, dry_run, "")

    def apply_status(
        self,
        obj: Any,
        *,
        field_manager: str,
        force: bool = False,
        resource: Resource | str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj``'s status (the ``status`` subresource);
        as :meth:`apply`."""
        return self._apply(obj, field_manager, force, resource, dry_run, "/status")

    def _apply(  # noqa: PLR0917 - the private form of apply()'s arguments
        self,
        obj: Any,
        field_manager: str,
        force: bool,
        resource: Resource | str | None,
        dry_run: bool,
        subresource: str,
    ) -> dict[str, Any]:
        if not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        body, res, ns, path = self._about(obj, resource, None, subresource, "an applied object")
        return self._send(
            "PATCH",
            res,
            ns,
            path,
            body,
            dry_run=dry_run,
            field_manager=field_manager,
            force=force,
            content_type=APPLY_PATCH,
        )

    def delete(
        self,
        resource: Resource | str,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete the object ``name``. ``propagation_policy`` says what
        happens to its dependents (``"Orphan"``, ``"Background"``,
        ``"Foreground"``); ``uid`` and ``resource_version`` are preconditions
        (:class:`~informers.errors.ConflictError` when the stored object
        differs); ``grace_period_seconds`` as for ``kubectl delete``.
        Returns the server's answer: the object (marked for deletion when
        finalizers hold it) or a ``Status``. Raises
        :class:`~informers.errors.NotFoundError` when it is gone already."""
        res, ns, path = self._named(resource, name, namespace, "a delete")
        options: dict[str, Any] = {}
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = int(grace_period_seconds)
        preconditions = {
            k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v
        }
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            options["dryRun"] = ["All"]
        # Without options, no body (as the official client sends): the server's defaults.
        body = {"apiVersion": "v1", "kind": "DeleteOptions", **options} if options else None
        return self._send("DELETE", res, ns, path, body, dry_run=dry_run, field_manager=None)
