"""The write verbs of the main resource and its ``status`` subresource:
create (POST) and replace (PUT), with ``dryRun``."""

from __future__ import annotations

import logging
from typing import Any

from informers.testing.apiserver import _validation
from informers.testing.apiserver._exchange import Reply, Request, dry_run, field_manager
from informers.testing.apiserver._schema.hooks import decode_checked
from informers.testing.apiserver._storage import Storage
from informers.wire.resources import Resource

__all__ = ["WriteVerbs"]

log = logging.getLogger("informers.testing.apiserver")


class WriteVerbs:
    """POST and PUT. Stateless apart from storage; called from every
    connection thread at once."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def create(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None
    ) -> None:
        """POST to a collection: 201 with the stored object."""
        dry = dry_run(request)
        obj, headers = self._checked_body(request, resource, create=True)
        stored = self._storage.create(
            resource, obj, namespace, dry_run=dry, manager=field_manager(request)
        )
        log.debug("created %s %s rv=%s", resource, stored.key, stored.rv)
        reply.send(201, stored.full_json, headers=headers)

    def _checked_body(
        self, request: Request, resource: Resource, *, create: bool
    ) -> tuple[Any, dict[str, str]]:
        """The request's body after field validation, and the headers its
        answer carries (warnings); 400 when it names another kind than the
        URL. A create drops the status of a kind with a status subresource."""
        if create:
            obj, headers = decode_checked(request, resource)
        else:
            obj, headers = decode_checked(request, resource, "UpdateOptions")
        storage = self._storage
        builtin = storage.is_builtin(resource)
        _validation.check_body_kind(resource, obj, builtin=builtin)
        if create:
            obj = _validation.drop_create_status(
                obj, status_subresource=storage.has_status_subresource(resource), kind=resource.kind
            )
        return obj, headers

    def replace(
        self,
        reply: Reply,
        request: Request,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        subresource: str,
    ) -> None:
        """PUT of an object (``subresource`` "") or of its status."""
        obj, headers = self._checked_body(request, resource, create=False)
        self.store(
            reply,
            resource,
            namespace,
            name,
            obj,
            subresource=subresource,
            dry=dry_run(request),
            manager=field_manager(request),
            headers=headers,
        )

    def store(
        self,
        reply: Reply,
        resource: Resource,
        namespace: str | None,
        name: str,
        obj: Any,
        *,
        subresource: str,
        dry: bool,
        manager: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Store ``obj`` as the new state of the object (or its status) and
        answer with it (and ``headers``): the main resource of a kind with a status subresource
        keeps the stored status."""
        storage = self._storage
        keep = not subresource and storage.has_status_subresource(resource)
        stored = storage.update(
            resource,
            obj,
            namespace,
            name,
            subresource=subresource,
            keep_status=keep,
            dry_run=dry,
            manager=manager,
        )
        reply.send(200, stored.full_json, headers=headers)
