"""Routing: from a request's method and path to the verb that serves it.

Every request is, in order: authenticated (when tokens are set), held back
or failed by an injected fault, authorized, then routed: the endpoints
beside the resources (discovery, OpenAPI, health), then
``/api/<version>/...`` and ``/apis/<group>/<version>/...`` resource paths
(collection or object, namespaced or not, ``watch`` prefixes, and the
``status``, ``scale`` and ``finalize`` subresources) to the verb objects.
"""

from __future__ import annotations

import logging
import threading
import urllib.parse

from informers.testing.apiserver import _scale, _status
from informers.testing.apiserver._crd.views import scale_paths as crd_scale_paths
from informers.testing.apiserver._exchange import Headers, Reply, Request
from informers.testing.apiserver._faults import FaultState, send_failure
from informers.testing.apiserver._security import Security, request_access, unauthorized
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._subresources import Subresources
from informers.testing.apiserver._verbs_delete import DeleteVerbs
from informers.testing.apiserver._verbs_meta import MetaEndpoints
from informers.testing.apiserver._verbs_patch import PatchVerb
from informers.testing.apiserver._verbs_read import ReadVerbs
from informers.testing.apiserver._verbs_watch import WatchVerb
from informers.testing.apiserver._verbs_write import WriteVerbs
from informers.wire.resources import NAMESPACES

__all__ = ["Router"]

log = logging.getLogger("informers.testing.apiserver")


class Router:
    """Routes each request to its verb. Holds no state of its own beyond
    its collaborators; called from every connection thread at once.
    ``stopping`` ends injected delays when the server stops; ``security``
    None turns authentication off."""

    def __init__(
        self,
        storage: Storage,
        settings: Settings,
        faults: FaultState,
        stopping: threading.Event,
        security: Security | None,
    ) -> None:
        self._storage = storage
        self._faults = faults
        self._stopping = stopping
        self._security = security
        self._meta = MetaEndpoints(storage)
        self._read = ReadVerbs(storage, settings, stopping)
        self._watch = WatchVerb(storage, settings, faults)
        self._write = WriteVerbs(storage)
        self._patch = PatchVerb(storage, self._write)
        self._delete = DeleteVerbs(storage, settings)
        self._subresources = Subresources(storage)

    def route(self, reply: Reply, method: str, target: str, headers: Headers, body: bytes) -> None:
        """Serve the request for ``target`` (path and query) whose ``body``
        has been read. Raises :class:`StatusError` to answer with a Status."""
        parsed = urllib.parse.urlsplit(target)
        path = parsed.path.rstrip("/") or "/"
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        security = self._security
        user = ""
        if security is not None:
            # The header is read here and nowhere else, and never logged.
            found = security.authenticate(headers.get("Authorization"))
            if found is None:
                log.debug("unauthenticated request %s %s", method, path)
                raise unauthorized()
            user = found
        delay = self._faults.take_delay(path, headers)
        if delay > 0:
            self._stopping.wait(delay)
        failure = self._faults.take_failure(path, headers)
        if failure is not None:
            send_failure(reply, *failure)
            return
        if security is not None:
            access = request_access(user, method, path, query)
            if access is not None:
                security.authorize(access)
        request = Request(method, path, query, headers, body)
        if self._meta.serve(reply, request):
            return
        segments = [urllib.parse.unquote(s) for s in path.strip("/").split("/")]
        if segments[0] == "api" and len(segments) >= 2:
            group, version, rest = "", segments[1], segments[2:]
        elif segments[0] == "apis" and len(segments) >= 3:
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            raise _status.no_such_route()
        if rest and rest[0] == "watch":
            rest = rest[1:]
            request.query["watch"] = ["true"]
        self._route_resource(reply, request, group, version, rest)

    def _route_resource(
        self, reply: Reply, request: Request, group: str, version: str, rest: list[str]
    ) -> None:
        storage = self._storage
        namespace: str | None = None
        plural = rest[0] if rest else ""
        tail = rest[1:]
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = storage.lookup(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, plural, tail = rest[1], rest[2], rest[3:]
        resource = storage.lookup(group, version, plural)
        if resource is None or len(tail) > 2:
            raise _status.no_such_route()
        if not resource.namespaced and namespace is not None:
            raise _status.no_such_route()
        name = tail[0] if tail else None
        subresource = tail[1] if len(tail) > 1 else ""
        if subresource == "scale" and (
            resource in _scale.SCALABLE or crd_scale_paths(storage, resource) is not None
        ):
            if name is None or (resource.namespaced and namespace is None):
                raise _status.no_such_route()
            self._subresources.scale(reply, request, resource, namespace or "", name)
            return
        if subresource == "finalize" and resource == NAMESPACES and name is not None:
            self._subresources.finalize_namespace(reply, request, name)
            return
        if subresource and (
            subresource != "status" or not storage.has_status_subresource(resource)
        ):
            raise _status.no_such_route()
        method = request.method
        if name is None:
            if method == "GET":
                if request.flag("watch"):
                    self._watch.watch(reply, request, resource, namespace)
                else:
                    self._read.list(reply, request, resource, namespace)
            elif method == "POST":
                if resource.namespaced and namespace is None:
                    raise _status.method_not_allowed()
                self._write.create(reply, request, resource, namespace)
            elif method == "DELETE":
                self._delete.delete_collection(reply, request, resource, namespace)
            else:
                raise _status.method_not_allowed()
            return
        if resource.namespaced and namespace is None:
            raise _status.no_such_route()
        if method == "GET":
            self._read.get(reply, request, resource, namespace, name)
        elif method == "PUT":
            self._write.replace(reply, request, resource, namespace, name, subresource=subresource)
        elif method == "PATCH":
            self._patch.patch(reply, request, resource, namespace, name, subresource=subresource)
        elif method == "DELETE":
            self._delete.delete(reply, request, resource, namespace, name)
        else:
            raise _status.method_not_allowed()
