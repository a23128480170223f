"""Resolving a resource name to a :class:`~informers.wire.resources.Resource` by
asking the API server's discovery documents, as ``kubectl get`` does.

Every call makes plain, uncached GETs through a
:class:`~informers.rest.transport.Transport` (a :class:`kubernetes.client.ApiClient`
is wrapped in an :class:`~informers.rest.transport.ApiClientTransport`) and blocks
on them; nothing here keeps state, so it is thread-safe.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from informers.errors import ApiError, NotFoundError, UnknownResourceError
from informers.rest.transport import Transport, as_transport
from informers.wire import resources as _res
from informers.wire.resources import Resource

__all__ = ["DISCOVERY_READ_TIMEOUT", "discover_resource", "resolve_resource"]

#: Read timeout (seconds) of each discovery request.
DISCOVERY_READ_TIMEOUT = 60.0


def _get_json(transport: Transport, path: str) -> Any:
    return transport.request("GET", path, read_timeout=DISCOVERY_READ_TIMEOUT).json()


def _match(entry: Mapping[str, Any], plain: str) -> bool:
    if "/" in str(entry.get("name", "")):
        return False  # a subresource
    names = {entry.get("name"), entry.get("singularName")} | set(entry.get("shortNames") or ())
    return plain in names or plain.lower() == str(entry.get("kind", "")).lower()


def _to_resource(group: str, version: str, entry: Mapping[str, Any]) -> Resource:
    return Resource(
        group,
        version,
        str(entry["name"]),
        str(entry.get("kind", "")),
        namespaced=bool(entry.get("namespaced", True)),
        singular=str(entry.get("singularName") or ""),
        short_names=tuple(entry.get("shortNames") or ()),
        verbs=tuple(entry.get("verbs") or ()),
        categories=tuple(entry.get("categories") or ()),
    )


def discover_resource(api_client: Any, name: str) -> Resource:
    """Resolve a resource name the way ``kubectl get`` does: ``"pods"``,
    ``"po"``, ``"Pod"``, ``"deployments.apps"``, ``"foos.example.com"``.

    ``api_client`` is a :class:`kubernetes.client.ApiClient` or a
    :class:`~informers.rest.transport.Transport`. Asks the server's discovery
    documents (``/api/v1``, ``/apis`` and the preferred version of each
    group); the core group wins for unqualified names. Raises
    :class:`~informers.errors.NotFoundError` (an
    :class:`~informers.errors.ApiError`, 404) when nothing matches, or the
    error of a failing discovery request. Blocks on HTTP.
    """
    transport = as_transport(api_client)
    plain, _, group = name.partition(".")
    if not plain:
        raise NotFoundError(404, "NotFound", f"empty resource name {name!r}")
    candidates: list[tuple[str, str]] = []  # (group, version)
    if not group:
        candidates.append(("", "v1"))
    groups = _get_json(transport, "/apis")
    for g in groups.get("groups") or ():
        gname = str(g.get("name", ""))
        if group and gname != group:
            continue
        preferred = (g.get("preferredVersion") or {}).get("version")
        versions = [str(v.get("version")) for v in g.get("versions") or ()]
        version = preferred or (versions[0] if versions else "")
        if version:
            candidates.append((gname, str(version)))
    for gname, version in candidates:
        prefix = f"/apis/{gname}/{version}" if gname else f"/api/{version}"
        try:
            doc = _get_json(transport, prefix)
        except ApiError as exc:
            if exc.status == 404:
                continue
            raise
        for entry in doc.get("resources") or ():
            if isinstance(entry, Mapping) and _match(entry, plain):
                return _to_resource(gname, version, entry)
    raise NotFoundError(404, "NotFound", f"the server does not serve a resource named {name!r}")


def resolve_resource(api_client: Any, resource: Resource | str) -> Resource:
    """The :class:`Resource` a name means, as kubectl reads names:
    ``"pods"``, ``"pod"``, ``"po"``, ``"Pod"``, ``"deployments.apps"``,
    ``"deploy"`` or a custom resource's ``"foos.example.com"`` (a
    :class:`Resource` is returned as it is).

    Built-in kinds resolve locally; other names through the server's
    discovery documents (:func:`discover_resource`; blocks on HTTP). Raises
    :class:`~informers.errors.UnknownResourceError` listing close matches
    when neither knows the name, or the discovery request's
    :class:`~informers.errors.ApiError` when the server cannot be asked.
    """
    if isinstance(resource, Resource):
        return resource
    if not isinstance(resource, str) or not resource.strip():
        raise UnknownResourceError(str(resource), detail="a resource is a name or a Resource")
    name = resource.strip()
    found = _res.find_builtin(name)
    if found is not None:
        return found
    try:
        return discover_resource(api_client, name)
    except ApiError as exc:
        if exc.status != 404:
            raise
    close = difflib.get_close_matches(name, _res.builtin_names(), n=3, cutoff=0.6)
    raise UnknownResourceError(name, close, detail="not built in, not served by the server")
