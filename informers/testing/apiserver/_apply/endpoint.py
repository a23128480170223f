"""The emulator's side of field management: the :class:`~.operations.Target`
of a served resource, and the ``application/apply-patch+yaml`` PATCH.

:func:`target` describes a resource from the storage's public methods (a
custom resource's schema comes from its CustomResourceDefinition).
:func:`apply_request` answers an apply PATCH: it reads the object, applies
the configuration and writes the result with the object's resourceVersion
as a precondition, retrying when a concurrent write got there first; an
apply to a missing object creates it. :func:`check_patch_options` refuses
the query parameters the server refuses.

Thread-safe: every call reads and writes through the storage's own lock.
"""

from __future__ import annotations

import importlib
import json
import threading
from typing import TYPE_CHECKING, Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._apply.managed import manager_name
from informers.testing.apiserver._apply.operations import (
    ApplyConflictError,
    ApplyError,
    Target,
    apply,
)
from informers.testing.apiserver._apply.schema import for_kind, from_openapi
from informers.testing.apiserver._schema.applycheck import check_apply
from informers.wire.resources import BUILTIN_RESOURCES, CUSTOMRESOURCEDEFINITIONS, Resource

if TYPE_CHECKING:
    from informers.testing.apiserver._storage import Storage
    from informers.testing.apiserver._stored import Stored

__all__ = [
    "APPLY_PATCH",
    "apply_request",
    "check_patch_options",
    "decode_configuration",
    "manager_name",
    "target",
]

APPLY_PATCH = "application/apply-patch+yaml"

#: Attempts before a contended apply gives up with the last conflict.
_ATTEMPTS = 10

_BUILTIN = frozenset((r.group, r.version, r.plural) for r in BUILTIN_RESOURCES)

_targets_lock = threading.Lock()
#: (group, version, plural, status subresource, CRD resourceVersion) -> Target
_targets: dict[tuple[str, str, str, bool, str], Target] = {}


#: PyYAML (a dependency of the kubernetes client; it ships no type hints)
_yaml: Any = importlib.import_module("yaml")
#: YAML as the server reads apply bodies: safe, and timestamps stay strings.
_Loader: Any = type("_Loader", (_yaml.SafeLoader,), {})
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def decode_configuration(body: bytes) -> Any:
    """The configuration of an apply body (JSON, or YAML); 400 when it is
    neither."""
    try:
        return json.loads(body)
    except ValueError:
        pass
    try:
        return _yaml.load(body, Loader=_Loader)
    except _yaml.YAMLError as exc:
        raise _status.bad_request(f"error decoding YAML: {exc}") from None


def check_patch_options(media_type: str, field_manager: str | None, force: bool | None) -> None:
    """422 for the PatchOptions the server refuses: an apply without
    ``fieldManager``, ``force`` on any other patch, a manager name over 128
    bytes."""
    causes: list[tuple[str, str, str]] = []
    if media_type == APPLY_PATCH:
        if not field_manager:
            causes.append(
                (
                    "fieldManager",
                    "FieldValueRequired",
                    "Required value: is required for apply patch",
                )
            )
    elif force is not None:
        causes.append(
            ("force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch")
        )
    if field_manager and len(field_manager.encode()) > 128:
        causes.append(("fieldManager", "FieldValueTooLong", "Too long: may not be longer than 128"))
    if causes:
        raise _status.invalid("meta.k8s.io", "PatchOptions", "", causes)


def _crd_schema(storage: Storage, resource: Resource) -> tuple[Any, str]:
    """The openAPIV3Schema of a custom resource's version and the CRD's
    uid and resourceVersion (``(None, "")`` when there is no CRD): servers
    share the cache, and two servers' CRDs may have the same RV."""
    try:
        crd = storage.get(CUSTOMRESOURCEDEFINITIONS, f"{resource.plural}.{resource.group}").obj
    except _status.StatusError:
        return None, ""
    for version in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(version, dict) and version.get("name") == resource.version:
            found = (version.get("schema") or {}).get("openAPIV3Schema")
            return found, f"{crd['metadata'].get('uid')}/{crd['metadata'].get('resourceVersion')}"
    return None, f"{crd['metadata'].get('uid')}/{crd['metadata'].get('resourceVersion')}"


def target(storage: Storage, resource: Resource) -> Target:
    """The field-management description of ``resource`` as served now."""
    status = storage.has_status_subresource(resource)
    builtin = (resource.group, resource.version, resource.plural) in _BUILTIN
    schema_doc, crd_rv = (None, "") if builtin else _crd_schema(storage, resource)
    cache_key = (resource.group, resource.version, resource.plural, status, crd_rv)
    with _targets_lock:
        found = _targets.get(cache_key)
    if found is not None:
        return found
    api_version = f"{resource.group}/{resource.version}" if resource.group else resource.version
    made = Target(
        schema=for_kind(resource.group, resource.version, resource.kind)
        if builtin
        else from_openapi(schema_doc),
        api_version=api_version,
        kind=resource.kind,
        status_subresource=status,
        builtin=builtin,
    )
    with _targets_lock:
        if len(_targets) > 1024:
            _targets.clear()
        _targets[cache_key] = made
    return made


def apply_request(
    storage: Storage,
    resource: Resource,
    namespace: str | None,
    name: str,
    *,
    subresource: str,
    body: bytes,
    manager: str,
    force: bool,
    dry_run: bool,
) -> tuple[int, Stored]:
    """Answer an apply PATCH; returns the HTTP code (201 when it created the
    object, else 200) and the stored object. Raises :class:`StatusError`
    (409 Conflict with one cause per conflicting field, 400 for a malformed
    configuration, 404 for ``/status`` of a missing object)."""
    config = decode_configuration(body)
    if not isinstance(config, dict):
        raise _status.bad_request("the apply configuration must be a YAML or JSON object")
    check_apply(resource, config)
    meta = config.get("metadata")
    if isinstance(meta, dict):
        sent_name = meta.get("name")
        if sent_name and sent_name != name:
            raise _status.bad_request("the name of the object does not match the name on the URL")
        sent_ns = meta.get("namespace")
        if sent_ns and namespace and sent_ns != namespace:
            raise _status.bad_request(
                "the namespace of the provided object does not match the namespace sent "
                "on the request"
            )
        sent_rv = str(meta.get("resourceVersion") or "")
    else:
        sent_rv = ""
    config = dict(config)
    config["metadata"] = {**(meta if isinstance(meta, dict) else {}), "name": name}
    if namespace:
        config["metadata"]["namespace"] = namespace
    info = target(storage, resource)
    error: _status.StatusError | None = None
    for _ in range(_ATTEMPTS):
        try:
            current: Stored | None = storage.get(resource, name, namespace)
        except _status.StatusError as exc:
            if exc.code != 404 or subresource:
                raise
            current = None
        try:
            result = apply(
                current.obj if current is not None else None,
                config,
                manager=manager,
                force=force,
                target=info,
                subresource=subresource,
            )
        except ApplyConflictError as exc:
            raise _status.StatusError(
                409, "Conflict", exc.message, {"causes": exc.causes()}
            ) from None
        except ApplyError as exc:
            raise _status.StatusError(
                exc.status, _status.REASONS.get(exc.status, "BadRequest"), exc.message
            ) from None
        try:
            if current is None:
                result["metadata"].pop("resourceVersion", None)
                return 201, storage.create(resource, result, namespace, dry_run=dry_run)
            if not sent_rv:
                result["metadata"]["resourceVersion"] = current.obj["metadata"]["resourceVersion"]
            return 200, storage.update(
                resource,
                result,
                namespace,
                name,
                subresource=subresource,
                keep_status=not subresource and info.status_subresource,
                dry_run=dry_run,
                managed_fields=result["metadata"].get("managedFields", []),
            )
        except _status.StatusError as exc:
            # lost a race with another write: read again and re-apply
            if (
                exc.code != 409
                or sent_rv
                or exc.body.get("reason") not in ("Conflict", "AlreadyExists")
            ):
                raise
            error = exc
    assert error is not None
    raise error
