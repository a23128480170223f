"""Raw JSON requests through a ``kubernetes.client.ApiClient``: what the
built-in controllers write with.

The controllers read from informers' caches and write through
:class:`JsonApi`: plain dicts in, plain dicts out, the client's
configuration (host, TLS, token) used as it is. A failed request raises the
:class:`~informers.errors.ApiError` its Status names (404 as
:class:`NotFoundError`, 409 as :class:`ConflictError`). Thread-safe as far
as the ApiClient is (its connection pool is).
"""

from __future__ import annotations

import json
from typing import Any

from informers.errors import ApiError
from informers.rest.listwatch import error_from_status
from informers.wire.resources import Resource

__all__ = ["ConflictError", "JsonApi", "NotFoundError"]

#: Seconds a write may take before it fails.
REQUEST_TIMEOUT = 30.0


class NotFoundError(ApiError):
    """The object (or its namespace) does not exist (HTTP 404)."""


class ConflictError(ApiError):
    """A stale resourceVersion or an existing name (HTTP 409)."""


def _error(status: int, data: bytes) -> ApiError:
    try:
        body = json.loads(data) if data else None
    except ValueError:
        body = None
    status_obj = body if isinstance(body, dict) and body.get("kind") == "Status" else None
    text = "" if status_obj is not None else data[:200].decode("utf-8", "replace")
    error = error_from_status(status_obj, status, text=text)
    if error.status == 404:
        return NotFoundError(404, error.reason, error.message, body=error.body)
    if error.status == 409:
        return ConflictError(409, error.reason, error.message, body=error.body)
    return error


class JsonApi:
    """JSON requests to the server behind ``api_client`` (the caller keeps
    and closes the client). Every method blocks on one HTTP request."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        query: list[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """Send ``body`` (JSON-encoded) to ``path``; the decoded answer.
        Raises :class:`~informers.errors.ApiError` for an error status."""
        client = self.api_client
        headers = {"Accept": "application/json", "Content-Type": content_type}
        payload = None if body is None else json.dumps(body)
        serialize = getattr(client, "param_serialize", None)
        if serialize is not None:  # kubernetes >= 37: call_api does not raise
            m, url, header_params, serialized, _p = serialize(
                method,
                path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = client.call_api(
                m,
                url,
                header_params=header_params,
                body=serialized,
                _request_timeout=REQUEST_TIMEOUT,
            )
            response.read()
            status, data = int(response.status), bytes(response.data or b"")
        else:  # pragma: no cover - kubernetes 31 to 36
            from kubernetes.client.exceptions import ApiException  # noqa: PLC0415

            try:
                raw = client.call_api(
                    path,
                    method,
                    query_params=query or [],
                    header_params=headers,
                    body=payload,
                    auth_settings=["BearerToken"],
                    _preload_content=False,
                    _return_http_data_only=True,
                    _request_timeout=REQUEST_TIMEOUT,
                )
                status, data = int(raw.status), bytes(raw.data or b"")
            except ApiException as exc:
                raw_body = exc.body if isinstance(exc.body, bytes) else str(exc.body or "").encode()
                status, data = int(exc.status or 0), raw_body
        if status >= 400:
            raise _error(status, data)
        parsed = json.loads(data) if data else {}
        return parsed if isinstance(parsed, dict) else {}

    # -------------------------------------------------------- conveniences

    def create(self, resource: Resource, namespace: str | None, obj: Any) -> dict[str, Any]:
        """POST ``obj`` into ``resource``'s collection."""
        return self.request("POST", resource.collection_path(namespace), obj)

    def get(self, resource: Resource, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The live object, or ``None`` when it does not exist."""
        try:
            return self.request("GET", resource.object_path(name, namespace))
        except NotFoundError:
            return None

    def update(
        self, resource: Resource, obj: dict[str, Any], subresource: str = ""
    ) -> dict[str, Any]:
        """PUT ``obj`` (its resourceVersion is the precondition)."""
        meta = obj["metadata"]
        path = resource.object_path(meta["name"], meta.get("namespace"))
        return self.request("PUT", f"{path}/{subresource}" if subresource else path, obj)

    def patch_status(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        status: Any,
        *,
        resource_version: str = "",
    ) -> dict[str, Any]:
        """Merge-patch ``status`` into the object's status subresource; with
        ``resource_version``, only onto that version (else
        :class:`ConflictError`: the caller's view is stale)."""
        path = resource.object_path(name, namespace) + "/status"
        body: dict[str, Any] = {"status": status}
        if resource_version:
            body["metadata"] = {"resourceVersion": resource_version}
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def patch(
        self, resource: Resource, namespace: str | None, name: str, patch: Any
    ) -> dict[str, Any]:
        """Merge-patch the object."""
        return self.request(
            "PATCH",
            resource.object_path(name, namespace),
            patch,
            content_type="application/merge-patch+json",
        )

    def delete(
        self,
        resource: Resource,
        namespace: str | None,
        name: str,
        *,
        propagation: str = "",
        uid: str = "",
        resource_version: str = "",
        grace_period: int | None = None,
    ) -> bool:
        """DELETE the object; ``False`` when it was gone already. ``uid`` and
        ``resource_version`` are preconditions (:class:`ConflictError` when
        the name now holds another object, or the object changed since the
        caller read it). ``grace_period`` is the DeleteOptions'
        ``gracePeriodSeconds`` (0: a pod goes at once)."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            options["propagationPolicy"] = propagation
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        preconditions: dict[str, str] = {}
        if uid:
            preconditions["uid"] = uid
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        if preconditions:
            options["preconditions"] = preconditions
        try:
            self.request("DELETE", resource.object_path(name, namespace), options)
        except NotFoundError:
            return False
        return True
