"""The patch verb (JSON patch, merge patch, strategic merge patch) of an
object or its ``status``, and the patch step shared with the ``scale``
subresource. Server-side apply (``application/apply-patch+yaml``) of an
object or its status goes to :mod:`informers.testing.apiserver._apply`."""

from __future__ import annotations

import json
from typing import Any

from informers.testing.apiserver import _patch, _status
from informers.testing.apiserver._apply import endpoint as _endpoint
from informers.testing.apiserver._exchange import Reply, Request, dry_run, field_manager
from informers.testing.apiserver._schema.hooks import check_patched
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._verbs_write import WriteVerbs
from informers.wire.resources import Resource

__all__ = ["PatchVerb", "apply_request_patch", "patch_type"]


def patch_type(request: Request) -> str:
    """The request's patch media type; 415 for server-side apply (a verb
    that serves apply answers it before asking)."""
    content_type = request.header("Content-Type")
    if content_type.split(";")[0].strip().lower() == _endpoint.APPLY_PATCH:
        raise StatusError(
            415,
            "UnsupportedMediaType",
            "server-side apply to the scale subresource is not supported by the "
            "emulator: apply spec.replicas to the object",
        )
    return content_type


def apply_request_patch(
    current: dict[str, Any], request: Request, content_type: str, resource: Resource
) -> dict[str, Any]:
    """``current`` with the request's patch of ``content_type`` (from
    :func:`patch_type`) applied; the patch's own status when it fails."""
    try:
        return _patch.apply_patch(current, request.body, content_type, resource)
    except _patch.PatchError as exc:
        reason = _status.REASONS.get(exc.status, "BadRequest")
        raise StatusError(exc.status, reason, exc.message) from None


class PatchVerb:
    """PATCH of an object or its status: the patched object is stored as
    ``writes`` stores a PUT. Stateless apart from its collaborators; called
    from every connection thread at once."""

    def __init__(self, storage: Storage, writes: WriteVerbs) -> None:
        self._storage = storage
        self._writes = writes

    def patch(
        self,
        reply: Reply,
        request: Request,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        subresource: str,
    ) -> None:
        """Apply the patch to the stored object and store the result. A
        patch applies to the state it was computed from: only a
        ``metadata.resourceVersion`` the patch itself sets is a precondition."""
        dry = dry_run(request)
        media_type = request.header("Content-Type").split(";")[0].strip().lower()
        force = request.flag("force")
        _endpoint.check_patch_options(media_type, request.param("fieldManager"), force)
        if media_type == _endpoint.APPLY_PATCH:
            code, applied = _endpoint.apply_request(
                self._storage,
                resource,
                namespace,
                name,
                subresource=subresource,
                body=request.body,
                manager=field_manager(request),
                force=bool(force),
                dry_run=dry,
            )
            reply.send(code, applied.full_json)
            return
        content_type = patch_type(request)
        # As the real server's guaranteed update: a patch without a
        # resourceVersion of its own is re-applied to the newer state when a
        # concurrent write won the race (bounded, then the 409 stands).
        for attempt in range(_PATCH_ATTEMPTS):
            try:
                self._patch_once(
                    reply,
                    request,
                    resource,
                    namespace,
                    name,
                    subresource=subresource,
                    dry=dry,
                    content_type=content_type,
                )
                return
            except StatusError as error:
                if error.code != 409 or attempt == _PATCH_ATTEMPTS - 1 or _sent_rv(request):
                    raise

    def _patch_once(
        self,
        reply: Reply,
        request: Request,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        subresource: str,
        dry: bool,
        content_type: str,
    ) -> None:
        """Apply a non-apply patch once to the current state and store it."""
        current = self._storage.get(resource, name, namespace)
        patched = apply_request_patch(current.obj, request, content_type, resource)
        meta = patched.get("metadata")
        if not isinstance(meta, dict):
            raise _status.bad_request("the patched object has no metadata")
        sent_rv = _sent_rv(request)
        meta = dict(meta)
        meta["resourceVersion"] = sent_rv or current.obj["metadata"]["resourceVersion"]
        patched = dict(patched)
        patched["metadata"] = meta
        headers = check_patched(request, resource, patched)
        self._writes.store(
            reply,
            resource,
            namespace,
            name,
            patched,
            subresource=subresource,
            dry=dry,
            manager=field_manager(request),
            headers=headers,
        )


#: How often a patch is re-applied after losing a race to another write.
_PATCH_ATTEMPTS = 16


def _sent_rv(request: Request) -> str:
    """The ``metadata.resourceVersion`` a patch body sets itself (a
    precondition), or ``""``."""
    try:
        sent = json.loads(request.body)
    except ValueError:
        return ""
    if not isinstance(sent, dict) or not isinstance(sent.get("metadata"), dict):
        return ""
    return str(sent["metadata"].get("resourceVersion") or "")
