"""Discovery documents (minimal stand-in; the full version comes from the
``emulator-kubectl`` branch with the same signatures).

Pure functions: they build plain JSON documents from :class:`Resource` values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from informers.resources import Resource

__all__ = [
    "core_versions_document",
    "group_list_document",
    "resource_list_document",
    "version_document",
]


def version_document() -> dict[str, Any]:
    """``GET /version``."""
    return {
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0-kube-informers",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def core_versions_document() -> dict[str, Any]:
    """``GET /api``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def group_list_document(resources: Iterable[Resource]) -> dict[str, Any]:
    """``GET /apis``: every non-core group with its versions."""
    groups: dict[str, list[str]] = {}
    for res in resources:
        if res.group:
            versions = groups.setdefault(res.group, [])
            if res.version not in versions:
                versions.append(res.version)
    out = []
    for group, versions in groups.items():
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        out.append({"name": group, "versions": entries, "preferredVersion": entries[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": out}


def resource_list_document(
    group_version: str, resources: Iterable[Resource]
) -> dict[str, Any] | None:
    """``GET /api/v1`` or ``/apis/<group>/<version>``; None when nothing is
    served at that group version."""
    items = [
        {
            "name": res.plural,
            "singularName": res.singular,
            "namespaced": res.namespaced,
            "kind": res.kind,
            "verbs": list(res.verbs),
            **({"shortNames": list(res.short_names)} if res.short_names else {}),
        }
        for res in resources
        if res.group_version == group_version
    ]
    if not items:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": items,
    }
