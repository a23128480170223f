"""Reading and writing the one Lease an election runs on.

:class:`ResourceLock` is what a :class:`~informers.toolkit.leaderelection.Candidate`
needs of a lock (client-go's ``resourcelock.Interface``, minus events);
:class:`LeaseLock` implements it on a ``coordination.k8s.io/v1`` Lease through
the ``kubernetes`` client's HTTP, with raw JSON bodies (no model conversion).

Optimistic concurrency is the whole safety of the protocol: an update is a
PUT carrying the ``resourceVersion`` the caller last read, and the server
answers 409 Conflict if anyone wrote since. A lock never retries or
overwrites on its own: a 409 is raised to the caller, who must read again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import urllib3

from informers.errors import ApiError
from informers.rest.listwatch import error_from_status
from informers.toolkit._logcontext import context_logger
from informers.toolkit.leaderelection.errors import (
    InvalidLeaseRecordError,
    LeaseLockError,
)
from informers.toolkit.leaderelection.record import LeaderElectionRecord
from informers.wire import _json

__all__ = ["LeaseLock", "LockState", "ResourceLock"]

log = context_logger(logging.getLogger(__name__))

#: The spec fields an election record owns (others, such as
#: ``preferredHolder``, are kept as they are on update).
_RECORD_FIELDS = (
    "holderIdentity",
    "leaseDurationSeconds",
    "acquireTime",
    "renewTime",
    "leaseTransitions",
)


class LockState(NamedTuple):
    """A Lease as read or written: the election ``record`` in its spec and
    the raw ``obj`` (the parsed JSON, read-only for the caller)."""

    record: LeaderElectionRecord
    obj: Mapping[str, Any]

    @property
    def resource_version(self) -> str:
        """``metadata.resourceVersion`` of the object (empty if absent)."""
        meta = self.obj.get("metadata")
        return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


@runtime_checkable
class ResourceLock(Protocol):
    """Where an election record lives. Every method blocks for one request
    (at most ``timeout`` seconds when given, else the lock's own default) and
    is thread-safe.

    Errors: :class:`~informers.errors.ApiError` for an answer of the server
    (``status`` 409 when someone else wrote first: read again, never
    overwrite), :class:`~informers.toolkit.leaderelection.LeaseLockError` when the
    request did not complete, :class:`~informers.toolkit.leaderelection.InvalidLeaseRecordError`
    for a Lease whose spec is not an election record.
    """

    def get(self, *, timeout: float | None = None) -> LockState | None:
        """The current record and object, or ``None`` when there is none (404)."""
        ...

    def create(self, record: LeaderElectionRecord, *, timeout: float | None = None) -> LockState:
        """Create the object holding ``record``; 409 if it exists already."""
        ...

    def update(
        self,
        record: LeaderElectionRecord,
        resource_version: str,
        *,
        timeout: float | None = None,
    ) -> LockState:
        """Write ``record`` if the object is still at ``resource_version``
        (409 otherwise); returns the object as written."""
        ...

    def describe(self) -> str:
        """``namespace/name`` of the object, for logs and thread names."""
        ...


class LeaseLock:
    """A :class:`ResourceLock` on the Lease ``namespace/name``, through the
    ``kubernetes`` client ``api_client`` (its host, credentials, TLS and
    connection pool).

    Requests go through ``kubernetes.client.CoordinationV1Api`` with
    ``_preload_content=False``: bodies are sent as plain dicts and answers
    parsed with the project's JSON parser, never converted to models. Each
    request has a total timeout of ``read_timeout`` seconds (or the smaller
    ``timeout`` a call passes); note that the client configuration's
    ``retries`` (urllib3's, three by default) may repeat a request that timed
    out, so one call can take longer. The elector's renew deadline does not
    depend on that: it is kept by the clock, not by the request.

    The lock remembers the last object it read or wrote, so an update keeps
    the object's labels, annotations, owner references and any spec fields
    that are not part of the election record; only the ``resourceVersion`` a
    caller passes decides what the update is conditional on.

    Thread-safe: one lock guards the remembered object; requests run outside it.
    """

    def __init__(
        self, api_client: Any, namespace: str, name: str, *, read_timeout: float = 10.0
    ) -> None:
        if not namespace or not name:
            raise ValueError("a LeaseLock needs a namespace and a name")
        if not read_timeout > 0:
            raise ValueError(f"read_timeout must be positive, got {read_timeout}")
        from kubernetes import client  # noqa: PLC0415 - heavy import, only when used

        self._api_client = api_client
        self._api: Any = client.CoordinationV1Api(api_client)
        self._api_exception: type[Exception] = client.ApiException
        self._namespace = namespace
        self._name = name
        self._read_timeout = float(read_timeout)
        self._lock = threading.Lock()
        #: The last object read or written (None before the first, or after a
        #: 404); guarded by _lock. Never mutated, only replaced.
        self._last: Mapping[str, Any] | None = None

    @property
    def namespace(self) -> str:
        return self._namespace

    @property
    def name(self) -> str:
        return self._name

    @property
    def read_timeout(self) -> float:
        """The default (and largest) total timeout of one request, in seconds."""
        return self._read_timeout

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    # ------------------------------------------------------------ requests

    def get(self, *, timeout: float | None = None) -> LockState | None:
        try:
            obj = self._send(
                "read",
                lambda t: self._api.read_namespaced_lease(
                    self._name, self._namespace, _preload_content=False, _request_timeout=t
                ),
                timeout,
            )
        except ApiError as err:
            if err.status == 404:
                with self._lock:
                    self._last = None
                return None
            raise
        return self._remember(obj)

    def create(self, record: LeaderElectionRecord, *, timeout: float | None = None) -> LockState:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": record.to_spec(),
        }
        obj = self._write("create", "POST", body, timeout)
        return self._remember(obj)

    def update(
        self,
        record: LeaderElectionRecord,
        resource_version: str,
        *,
        timeout: float | None = None,
    ) -> LockState:
        if not resource_version:
            # An update without a resourceVersion is unconditional: it would
            # overwrite whatever another candidate wrote.
            raise ValueError("update needs the resourceVersion last read (never unconditional)")
        with self._lock:
            last = self._last
        body = self._update_body(last, record, resource_version)
        obj = self._write("update", "PUT", body, timeout)
        return self._remember(obj)

    # ---------------------------------------------------------------- HTTP

    def _write(
        self, verb: str, method: str, body: dict[str, Any], timeout: float | None
    ) -> Mapping[str, Any]:
        """POST (create) or PUT (update) ``body`` as it is.

        ``kubernetes`` 37's generated methods validate a dict body into a
        ``V1Lease`` model and serialise that (rewriting ``MicroTime`` values
        as Python ``isoformat()``, dropping fields the model lacks), so with a
        client that has ``ApiClient.param_serialize`` the request is built
        with it and sent with ``ApiClient.call_api``; older clients (31 to
        36) send a dict body unchanged through the generated methods.
        """
        serialize = getattr(self._api_client, "param_serialize", None)
        if serialize is None:
            if method == "POST":
                return self._send(
                    verb,
                    lambda t: self._api.create_namespaced_lease(
                        self._namespace, body, _preload_content=False, _request_timeout=t
                    ),
                    timeout,
                )
            return self._send(
                verb,
                lambda t: self._api.replace_namespaced_lease(
                    self._name, self._namespace, body, _preload_content=False, _request_timeout=t
                ),
                timeout,
            )
        path = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        params = {"namespace": self._namespace}
        if method == "PUT":
            path += "/{name}"
            params["name"] = self._name
        request = serialize(
            method=method,
            resource_path=path,
            path_params=params,
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
        )
        return self._send(
            verb, lambda t: self._api_client.call_api(*request, _request_timeout=t), timeout
        )

    def _send(
        self, verb: str, call: Callable[[float], Any], timeout: float | None
    ) -> Mapping[str, Any]:
        """Make one request (``call(timeout)`` returns a urllib3 response or
        the client's ``RESTResponse`` with the body unread); the parsed
        object, or the error it maps to."""
        try:
            response = call(self._timeout(timeout))
            raw = getattr(response, "response", response)  # RESTResponse wraps urllib3's
            try:
                status = int(raw.status)
                data = raw.data
                headers = raw.headers
            finally:
                raw.release_conn()
        except self._api_exception as exc:
            if not getattr(exc, "status", 0):  # the client's wrapper of a TLS or proxy failure
                raise LeaseLockError(f"{verb} of lease {self.describe()} failed: {exc}") from exc
            raise self._api_error(
                getattr(exc, "status", 0), getattr(exc, "body", None), getattr(exc, "headers", None)
            ) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise LeaseLockError(f"{verb} of lease {self.describe()} failed: {exc}") from exc
        if not 200 <= status <= 299:
            raise self._api_error(status, data, headers)
        try:
            obj = _json.loads(data)
        except ValueError as exc:
            raise LeaseLockError(
                f"{verb} of lease {self.describe()}: the answer is not JSON ({exc})"
            ) from exc
        if not isinstance(obj, dict):
            raise LeaseLockError(f"{verb} of lease {self.describe()}: the answer is not an object")
        return obj

    # ------------------------------------------------------------- helpers

    def _update_body(
        self,
        last: Mapping[str, Any] | None,
        record: LeaderElectionRecord,
        resource_version: str,
    ) -> dict[str, Any]:
        """The PUT body: the remembered object (copied where changed) with
        the record's spec fields and ``resource_version``."""
        base: dict[str, Any] = dict(last) if last is not None else {}
        meta = base.get("metadata")
        metadata: dict[str, Any] = dict(meta) if isinstance(meta, Mapping) else {}
        metadata.update(
            name=self._name, namespace=self._namespace, resourceVersion=resource_version
        )
        old_spec = base.get("spec")
        spec: dict[str, Any] = dict(old_spec) if isinstance(old_spec, Mapping) else {}
        for field in _RECORD_FIELDS:
            spec.pop(field, None)
        spec.update(record.to_spec())
        base.update(apiVersion="coordination.k8s.io/v1", kind="Lease", metadata=metadata, spec=spec)
        return base

    def _remember(self, obj: Mapping[str, Any]) -> LockState:
        try:
            record = LeaderElectionRecord.from_spec(obj.get("spec"))
        except InvalidLeaseRecordError as exc:
            raise InvalidLeaseRecordError(f"lease {self.describe()}: {exc}") from exc
        with self._lock:
            self._last = obj
        return LockState(record, obj)

    def _timeout(self, timeout: float | None) -> float:
        if timeout is None:
            return self._read_timeout
        return max(0.001, min(float(timeout), self._read_timeout))

    def _api_error(self, status: Any, body: Any, headers: Any) -> ApiError:
        raw = body or b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        parsed: Any = None
        try:
            parsed = _json.loads(text) if text else None
        except ValueError:
            parsed = None
        retry_after: float | None = None
        try:
            value = headers.get("Retry-After") if headers is not None else None
            retry_after = float(value) if value else None
        except (AttributeError, TypeError, ValueError):
            retry_after = None
        return error_from_status(
            parsed if isinstance(parsed, Mapping) else None,
            int(status or 0),
            retry_after=retry_after,
            text=text,
        )
