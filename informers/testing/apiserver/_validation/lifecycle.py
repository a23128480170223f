"""Server rules outside the validators: the NamespaceLifecycle admission
plugin (no creates in a Terminating namespace, the system namespaces cannot
be deleted), a body whose kind or apiVersion is not the URL's, the status a
create drops, and the Service cluster IP allocator.

Functions are pure and thread-safe; :class:`ServiceIPs` is not thread-safe
(storage calls it under its lock).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._validation.core import valid_ip
from informers.testing.apiserver._validation.errors import go_strings
from informers.wire.resources import Resource

__all__ = [
    "IMMORTAL_NAMESPACES",
    "ServiceIPs",
    "check_body_kind",
    "check_namespace_delete",
    "check_namespace_open",
    "drop_create_status",
]

#: Namespaces the NamespaceLifecycle plugin never lets go.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
_SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")


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


class ServiceIPs:
    """Cluster IPs from 10.96.0.0/12, each held by at most one Service;
    released when the Service is deleted. Not thread-safe."""

    def __init__(self) -> None:
        self._next = 10
        self._used: dict[str, str] = {}  # ip -> namespace/name

    def assign(
        self, service: dict[str, Any], dry_run: bool, problems: list[tuple[str, str, str]]
    ) -> None:
        """Give ``service`` (changed in place) a free cluster IP unless it
        asks for one (which must be free and in range: else a cause goes to
        ``problems``) or is headless or an ExternalName Service."""
        spec = service.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return
        asked = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
        if asked == "None":
            return
        if asked:
            if not valid_ip(str(asked)):
                return  # validation reports it
            shown = go_strings([asked])
            ip = ipaddress.ip_address(str(asked))
            if ip not in _SERVICE_RANGE:
                problems.append(
                    (
                        "spec.clusterIPs",
                        "FieldValueInvalid",
                        f"Invalid value: {shown}: failed to allocate IP {asked}: the provided "
                        f"IP ({asked}) is not in the valid range. The range of valid IPs is "
                        f"{_SERVICE_RANGE}",
                    )
                )
                return
            if str(asked) in self._used:
                problems.append(
                    (
                        "spec.clusterIPs",
                        "FieldValueInvalid",
                        f"Invalid value: {shown}: failed to allocate IP {asked}: provided IP "
                        "is already allocated",
                    )
                )
                return
            chosen = str(asked)
        else:
            chosen = self._free()
        if not dry_run:
            self._used[chosen] = self._owner(service)
        service["spec"] = {
            **spec,
            "clusterIP": chosen,
            "clusterIPs": spec.get("clusterIPs") or [chosen],
        }

    def _free(self) -> str:
        base = int(_SERVICE_RANGE.network_address)
        size = _SERVICE_RANGE.num_addresses
        for _ in range(size):
            n = self._next
            self._next = self._next + 1 if self._next + 1 < size - 1 else 1
            if n % 256 == 0:
                continue
            ip = str(ipaddress.ip_address(base + n))
            if ip not in self._used:
                return ip
        raise _status.internal_error("range is full")

    @staticmethod
    def _owner(service: dict[str, Any]) -> str:
        meta = service.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    def release(self, service: dict[str, Any]) -> None:
        """Free the cluster IPs of a deleted Service."""
        spec = service.get("spec")
        if not isinstance(spec, dict):
            return
        owner = self._owner(service)
        for ip in {spec.get("clusterIP"), *(spec.get("clusterIPs") or ())}:
            if ip and self._used.get(str(ip)) == owner:
                del self._used[str(ip)]
