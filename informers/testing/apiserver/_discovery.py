"""Discovery documents: what ``/version``, ``/api``, ``/api/v1``, ``/apis`` and
``/apis/<group>/<version>`` answer.

kubectl reads these before almost every command to map kinds and short names
to URLs. They are plain JSON (``APIVersions``, ``APIGroupList``,
``APIResourceList``); kubectl asks for aggregated discovery first and falls
back to these when the answer's ``Content-Type`` is ``application/json``.

Every function is a pure function of its arguments (the served resources are
passed in), so documents always match what the server serves, custom
resources included. Thread-safe.
"""

from __future__ import annotations

import base64
import hashlib
import platform
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any

from informers.testing.apiserver._rules import NO_STATUS_SUBRESOURCE
from informers.testing.apiserver._scale import SCALABLE
from informers.wire.resources import BUILTIN_RESOURCES, Resource

__all__ = [
    "SERVER_GIT_VERSION",
    "core_versions_document",
    "group_document",
    "group_list_document",
    "resource_entry",
    "resource_list_document",
    "version_document",
    "version_sort_key",
]

#: The Kubernetes version the emulator claims to be (it follows the 1.32 API).
SERVER_MAJOR, SERVER_MINOR = "1", "32"
SERVER_GIT_VERSION = f"v{SERVER_MAJOR}.{SERVER_MINOR}.0+kube-informers"

#: Built-in resources in the ``all`` category (``kubectl get all``), used
#: when a :class:`Resource` declares no categories of its own.
_ALL_CATEGORY = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "replicationcontrollers"),
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
        ("apps", "statefulsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
    }
)

_MACHINES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def version_document() -> dict[str, Any]:
    """The ``/version`` answer (``version.Info``)."""
    machine = platform.machine().lower()
    python = ".".join(str(part) for part in sys.version_info[:3])
    return {
        "major": SERVER_MAJOR,
        "minor": SERVER_MINOR,
        "gitVersion": SERVER_GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": f"python{python}",
        "compiler": "kube-informers",
        "platform": f"{sys.platform}/{_MACHINES.get(machine, machine)}",
    }


def core_versions_document() -> dict[str, Any]:
    """The ``/api`` answer (``APIVersions``): the core group serves ``v1``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [],
    }


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_sort_key(version: str) -> tuple[int, int, int, str]:
    """Sort key putting the preferred API version first, as Kubernetes does:
    GA before beta before alpha, higher numbers first, then anything that is
    not of the ``vN[alpha|betaM]`` form, alphabetically."""
    match = _VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


def _groups(resources: Iterable[Resource]) -> list[dict[str, Any]]:
    """Every non-core group serving at least one of ``resources``, in order
    of first appearance, as an ``APIGroup`` without kind and apiVersion."""
    versions_by_group: dict[str, list[str]] = {}
    for res in resources:
        if not res.group:
            continue
        versions = versions_by_group.setdefault(res.group, [])
        if res.version not in versions:
            versions.append(res.version)
    groups = []
    for group, versions in versions_by_group.items():
        ordered = sorted(versions, key=version_sort_key)
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered]
        groups.append({"name": group, "versions": entries, "preferredVersion": entries[0]})
    return groups


def group_list_document(resources: Iterable[Resource]) -> dict[str, Any]:
    """The ``/apis`` answer (``APIGroupList``): every non-core group serving at
    least one of ``resources``, in order of first appearance, each with its
    versions (preferred first) and ``preferredVersion``."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": _groups(resources)}


def group_document(group: str, resources: Iterable[Resource]) -> dict[str, Any] | None:
    """The ``/apis/<group>`` answer (``APIGroup``), or None when ``group``
    serves none of ``resources`` (the server answers 404)."""
    for found in _groups(res for res in resources if res.group == group):
        return {"kind": "APIGroup", "apiVersion": "v1", **found}
    return None


_BUILTIN_KEYS = frozenset((r.group, r.version, r.plural) for r in BUILTIN_RESOURCES)


def _has_status_subresource(res: Resource) -> bool:
    """Built-in kinds with a spec/status split serve ``<plural>/status`` (the
    same rule the storage applies); custom resources are listed without."""
    builtin = (res.group, res.version, res.plural) in _BUILTIN_KEYS
    return builtin and res.kind not in NO_STATUS_SUBRESOURCE


def _storage_version_hash(res: Resource) -> str:
    digest = hashlib.sha256(f"{res.group}/{res.version}/{res.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def resource_entry(res: Resource) -> dict[str, Any]:
    """The ``APIResource`` of ``res`` in an ``APIResourceList``."""
    entry: dict[str, Any] = {
        "name": res.plural,
        "singularName": res.singular,
        "namespaced": res.namespaced,
        "kind": res.kind,
        "verbs": list(res.verbs),
    }
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    categories = list(res.categories)
    if not categories and (res.group, res.plural) in _ALL_CATEGORY:
        categories = ["all"]
    if categories:
        entry["categories"] = categories
    entry["storageVersionHash"] = _storage_version_hash(res)
    return entry


def resource_list_document(
    group_version: str,
    resources: Iterable[Resource],
    has_status: Callable[[Resource], bool] | None = None,
    scalable: Callable[[Resource], bool] | None = None,
) -> dict[str, Any] | None:
    """The ``/api/v1`` or ``/apis/<group>/<version>`` answer
    (``APIResourceList``) for ``group_version`` (``"v1"``, ``"apps/v1"``), or
    ``None`` when none of ``resources`` is served there (the server answers
    404). Kinds with a status subresource (``has_status``; without it, the
    built-in kinds that have one) also list ``<plural>/status``; those
    ``scalable`` says (without it, the built-in ones below) ``<plural>/scale``;
    deployments, replicasets, statefulsets and replicationcontrollers list
    ``<plural>/scale`` (an ``autoscaling/v1`` Scale). ``has_status`` and
    ``scalable`` (for custom resources, whose CRD says) replace those rules."""
    entries: dict[str, dict[str, Any]] = {}
    for res in resources:
        if res.group_version == group_version and res.plural not in entries:
            entries[res.plural] = resource_entry(res)
            if (has_status or _has_status_subresource)(res):
                entries[f"{res.plural}/status"] = {
                    "name": f"{res.plural}/status",
                    "singularName": "",
                    "namespaced": res.namespaced,
                    "kind": res.kind,
                    "verbs": ["get", "patch", "update"],
                }
            if (scalable or SCALABLE.__contains__)(res):
                entries[f"{res.plural}/scale"] = {
                    "name": f"{res.plural}/scale",
                    "singularName": "",
                    "namespaced": res.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
    if not entries:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": list(entries.values()),
    }
