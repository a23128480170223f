"""Server-side apply and field management for the API server emulator.

A pure engine, free of HTTP and storage: :mod:`.fieldpath` (field sets and
their ``FieldsV1`` form), :mod:`.schema` (how each kind's lists and maps
merge), :mod:`.merge` (field sets, comparison, merging and removal over JSON
values), :mod:`.managed` (``managedFields`` entries) and :mod:`.operations`
(:func:`record_update` for ordinary writes, :func:`apply` for server-side
apply). :func:`target_for` describes a served resource to them.

Private to the emulator: the names here may change without notice.
"""

from __future__ import annotations

from informers.testing.apiserver._apply.managed import manager_name
from informers.testing.apiserver._apply.operations import (
    ApplyConflictError,
    ApplyError,
    Target,
    apply,
    record_update,
)
from informers.testing.apiserver._apply.schema import for_kind, from_openapi

__all__ = [
    "APPLY_PATCH",
    "ApplyConflictError",
    "ApplyError",
    "Target",
    "apply",
    "manager_name",
    "record_update",
    "target_for",
]

#: The media type of a server-side apply PATCH body.
APPLY_PATCH = "application/apply-patch+yaml"


def target_for(
    group: str,
    version: str,
    kind: str,
    *,
    builtin: bool,
    status_subresource: bool,
    openapi_schema: object = None,
) -> Target:
    """The :class:`Target` of a served kind: built-in kinds use the client's
    models; custom resources the CRD's ``openAPIV3Schema`` (``None`` when it
    has none)."""
    api_version = f"{group}/{version}" if group else version
    schema = for_kind(group, version, kind) if builtin else from_openapi(openapi_schema)
    return Target(
        schema=schema,
        api_version=api_version,
        kind=kind,
        status_subresource=status_subresource,
        builtin=builtin,
    )
