"""Server rules outside the validators: the NamespaceLifecycle admission
plugin (no creates in a Terminating namespace, the system namespaces cannot
be deleted), a body whose kind or apiVersion is not the URL's, the status a
create drops (the Service allocators are in :mod:`.allocators`).

Pure functions; thread-safe.
"""

from __future__ import annotations

from typing import Any

from informers.testing.apiserver import _status
from informers.wire.resources import Resource

__all__ = [
    "IMMORTAL_NAMESPACES",
    "check_body_kind",
    "check_namespace_delete",
    "check_namespace_open",
    "drop_create_status",
]

#: Namespaces the NamespaceLifecycle plugin never lets go.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def _forbidden(resource: Resource, name: str, why: str) -> _status.StatusError:
    qualified = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
    shown = f'{qualified} "{name}"' if name else qualified
    details: dict[str, Any] = {"name": name} if name else {}
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    return _status.StatusError(403, "Forbidden", f"{shown} is forbidden: {why}", details)


def check_namespace_open(resource: Resource, namespace: dict[str, Any], name: str) -> None:
    """403 Forbidden for a create into ``namespace`` while it is Terminating."""
    if (namespace.get("status") or {}).get("phase") != "Terminating":
        return
    ns = namespace["metadata"]["name"]
    error = _forbidden(
        resource,
        name,
        f"unable to create new content in namespace {ns} because it is being terminated",
    )
    error.body["details"]["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {ns} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    raise error


def check_namespace_delete(resource: Resource, name: str) -> None:
    """403 Forbidden for deleting ``default``, ``kube-system`` or ``kube-public``."""
    if name in IMMORTAL_NAMESPACES:
        raise _forbidden(resource, name, "this namespace may not be deleted")


def check_body_kind(resource: Resource, obj: Any, *, builtin: bool) -> None:
    """400 BadRequest when a body names another kind or API version than
    the URL it was sent to (as the decoder and the handler answer)."""
    if not isinstance(obj, dict):
        return
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if api_version and api_version != resource.api_version:
        group = str(api_version).rpartition("/")[0]
        if builtin and group == resource.group and kind and kind != resource.kind:
            pass  # the kind mismatch below says it
        else:
            raise _status.bad_request(
                f"the API version in the data ({api_version}) does not match the expected "
                f"API version ({resource.api_version})"
            )
    if kind and kind != resource.kind:
        version = str(api_version or resource.api_version).rpartition("/")[2]
        if builtin:
            detail = (
                f"converting (v1.{kind}) to ({_internal(resource)}.{resource.kind}): "
                "unknown conversion"
            )
        else:
            detail = f'expected kind "{resource.kind}", got "{kind}"'
        raise _status.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {resource.kind}: {detail}'
        )


def _internal(resource: Resource) -> str:
    """The Go package of a group's internal types (``core``, ``apps``...)."""
    return resource.group.split(".")[0] if resource.group else "core"


def drop_create_status(obj: Any, *, status_subresource: bool, kind: str) -> Any:
    """A POST body without its ``status`` when the kind has a status
    subresource (a create resets it; Nodes keep theirs)."""
    if not status_subresource or kind == "Node" or not isinstance(obj, dict):
        return obj
    if "status" not in obj:
        return obj
    return {k: v for k, v in obj.items() if k != "status"}
