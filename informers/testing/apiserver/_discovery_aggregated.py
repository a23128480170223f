"""Aggregated discovery (``apidiscovery.k8s.io/v2``): what ``/api`` and
``/apis`` answer to a client that asks for an ``APIGroupDiscoveryList``.

kubectl 1.26 and later ask for it first (``Accept: application/json;
g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList, ...,
application/json``) and, given it, map every kind from this one document:
each group with its versions (preferred first), each resource with its
scope, singular name, verbs, short names, categories, response kind and
subresources (``status``; ``scale`` as an ``autoscaling/v1`` Scale).
Without the parameter in ``Accept`` the plain documents of
:mod:`._discovery` are served.

Pure functions of the served resources; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from informers.testing.apiserver._discovery import resource_entry, version_sort_key
from informers.wire.resources import Resource

__all__ = ["CONTENT_TYPE", "crd_scale_keys", "discovery_document", "wants_aggregated"]

#: The media type of an aggregated discovery answer.
CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

_SUBRESOURCE_VERBS = ["get", "patch", "update"]


def wants_aggregated(accept: str) -> bool:
    """Whether an ``Accept`` header offers aggregated discovery v2."""
    for offer in accept.split(","):
        params = {
            key.strip().lower(): value.strip()
            for key, _, value in (part.partition("=") for part in offer.split(";")[1:])
        }
        if (
            params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") == "v2"
            and params.get("as") == "APIGroupDiscoveryList"
        ):
            return True
    return False


def crd_scale_keys(crds: Iterable[dict[str, Any]]) -> frozenset[tuple[str, str, str]]:
    """``(group, version, plural)`` of every custom resource version whose
    CustomResourceDefinition declares a ``scale`` subresource."""
    found: set[tuple[str, str, str]] = set()
    for crd in crds:
        spec = crd.get("spec")
        if not isinstance(spec, dict):
            continue
        group, names = spec.get("group"), spec.get("names")
        plural = names.get("plural") if isinstance(names, dict) else None
        for version in spec.get("versions") or ():
            if not isinstance(version, dict):
                continue
            subresources = version.get("subresources")
            if isinstance(subresources, dict) and "scale" in subresources:
                found.add((str(group), str(version.get("name")), str(plural)))
    return frozenset(found)


def _resource(
    res: Resource, has_status: Callable[[Resource], bool], scalable: Callable[[Resource], bool]
) -> dict[str, Any]:
    entry = resource_entry(res)
    out: dict[str, Any] = {
        "resource": res.plural,
        "responseKind": {"group": res.group, "version": res.version, "kind": res.kind},
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular,
        "verbs": entry["verbs"],
    }
    if "shortNames" in entry:
        out["shortNames"] = entry["shortNames"]
    if "categories" in entry:
        out["categories"] = entry["categories"]
    subresources = []
    if has_status(res):
        subresources.append(
            {
                "subresource": "status",
                "responseKind": out["responseKind"],
                "verbs": _SUBRESOURCE_VERBS,
            }
        )
    if scalable(res):
        subresources.append(
            {
                "subresource": "scale",
                "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "verbs": _SUBRESOURCE_VERBS,
            }
        )
    if subresources:
        out["subresources"] = subresources
    return out


def discovery_document(
    core: bool,
    resources: Iterable[Resource],
    has_status: Callable[[Resource], bool],
    scalable: Callable[[Resource], bool],
) -> dict[str, Any]:
    """The ``APIGroupDiscoveryList`` of ``/api`` (``core``: the legacy
    group ``""``) or ``/apis`` (every other group, in order of first
    appearance)."""
    groups: dict[str, dict[str, dict[str, Resource]]] = {}
    for res in resources:
        if (res.group == "") != core:
            continue
        versions = groups.setdefault(res.group, {})
        versions.setdefault(res.version, {}).setdefault(res.plural, res)
    items = []
    for group, versions in groups.items():
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [
                    {
                        "version": version,
                        "resources": [
                            _resource(res, has_status, scalable)
                            for res in versions[version].values()
                        ],
                        "freshness": "Current",
                    }
                    for version in sorted(versions, key=version_sort_key)
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }
