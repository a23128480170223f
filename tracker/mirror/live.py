"""Uncached reads from the API server, as the syncapi reconciler needs them:
one object by key (a GET) and a complete list of a kind, both raw JSON.

:class:`LiveReader` borrows configuration, credentials, TLS and the
connection pool from a :class:`kubernetes.client.ApiClient`; nothing is
deserialised into models. A GET answers the object, or ``None`` only when the
server says the object does not exist: HTTP 404 **with** a ``Status`` whose
reason is ``NotFound``. Any other failure raises, so a reconciler never
deletes a row on a read error: a non-2xx answer is an
:class:`~informers.errors.ApiError` (:class:`~informers.errors.TooManyRequestsError`
for 429, with ``retry_after``, and so on), a transport failure propagates as
the ``urllib3`` / ``OSError`` exception it is.

Metadata-only (``metadata_only=True``): the GET and the list ask for
``PartialObjectMetadata`` (:mod:`informers.wire.partial`), as a
metadata-only informer does, and an object a server sent whole is cut down to
that form; ``managedFields`` are kept, as the server sends them.

Thread-safe: one reader may serve every worker at once.
"""

from __future__ import annotations

import logging
from typing import Any

from informers.errors import ApiError, error_from_status
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.wire import _json
from informers.wire.partial import PARTIAL_OBJECT_ACCEPT, as_partial_object_metadata
from informers.wire.resources import Resource
from tracker.syncapi import ObjectKey

__all__ = ["GET_TIMEOUT", "LiveReader"]

log = logging.getLogger(__name__)

#: Seconds to connect and to read one object.
GET_TIMEOUT = (30.0, 60.0)


def _status_object(data: bytes) -> dict[str, Any] | None:
    try:
        parsed = _json.loads(data) if data else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) and parsed.get("kind") == "Status" else None


class LiveReader:
    """Reads one kind straight from the API server.

    :param api_client: a :class:`kubernetes.client.ApiClient` (the caller
        keeps it and closes it).
    :param resource: the kind.
    :param namespace: list one namespace only (``None``: all).
    :param metadata_only: read ``PartialObjectMetadata`` objects (see the
        module docstring).
    """

    def __init__(
        self,
        api_client: Any,
        resource: Resource,
        namespace: str | None = None,
        *,
        metadata_only: bool = False,
    ) -> None:
        self.api_client = api_client
        self.resource = resource
        self.namespace = namespace
        self.metadata_only = metadata_only
        self._lister = HTTPListerWatcher(
            api_client, resource, namespace, metadata_only=metadata_only
        )

    def __repr__(self) -> str:
        meta = ", metadata only" if self.metadata_only else ""
        return f"LiveReader({self.resource}{meta})"

    def list(self) -> dict[str, Any]:
        """A complete list of the kind (one request, no paging, the most recent
        state: a consistent read), as the server sent it."""
        return self._lister.list(ListOptions())

    def get(self, key: ObjectKey) -> dict[str, Any] | None:
        """The object of ``key`` as the server has it now, or ``None`` when the
        server answers NotFound. Raises for every other failure (see the
        module docstring)."""
        namespace = key.namespace if self.resource.namespaced else None
        path = self.resource.object_path(key.name, namespace)
        status, headers, data = self._get(path)
        if 200 <= status <= 299:
            try:
                parsed = _json.loads(data)
            except ValueError:
                raise ApiError(
                    status, "", f"{self.resource} {key}: the answer is not JSON"
                ) from None
            if not isinstance(parsed, dict):
                raise ApiError(status, "", f"{self.resource} {key}: the answer is not an object")
            return as_partial_object_metadata(parsed) if self.metadata_only else parsed
        body = _status_object(data)
        if status == 404 and body is not None and body.get("reason") == "NotFound":
            log.debug("%s %s: not found", self.resource, key)
            return None
        retry_after = headers.get("Retry-After") if hasattr(headers, "get") else None
        try:
            delay = float(retry_after) if retry_after else None
        except ValueError:
            delay = None
        text = "" if body is not None else data[:200].decode("utf-8", "replace")
        raise error_from_status(body, status, retry_after=delay, text=text)

    def _get(self, path: str) -> tuple[int, Any, bytes]:
        """(status, headers, body) of a GET of ``path`` through the client."""
        client = self.api_client
        headers = {"Accept": PARTIAL_OBJECT_ACCEPT if self.metadata_only else "application/json"}
        serialize = getattr(client, "param_serialize", None)
        if serialize is not None:  # kubernetes >= 37: call_api does not raise on a status
            method, url, header_params, _body, _post = serialize(
                "GET", path, header_params=headers, auth_settings=["BearerToken"]
            )
            response = client.call_api(
                method, url, header_params=header_params, _request_timeout=GET_TIMEOUT
            )
            response.read()
            return int(response.status), response.getheaders(), bytes(response.data or b"")
        from kubernetes.client.exceptions import ApiException  # noqa: PLC0415 - 31 to 36

        try:
            raw = client.call_api(
                path,
                "GET",
                header_params=headers,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=GET_TIMEOUT,
            )
        except ApiException as error:
            body = error.body if isinstance(error.body, bytes) else str(error.body or "").encode()
            return int(error.status or 0), error.headers or {}, body
        return int(raw.status), raw.headers, bytes(raw.data or b"")
