"""A Kubernetes API server emulator over real HTTP, with fault injection.

:class:`ApiServer` serves the kinds of a fresh cluster (and custom resources)
on ``127.0.0.1`` with the resource-version, list, watch and error semantics of
the real API server, so the official ``kubernetes`` client, kubectl and this
project's informers talk to it unchanged. Its Python-side methods read and
write objects without HTTP and inject faults (compaction, dropped or stalled
watches, failing requests, slow lists, a server restart).

Optionally it serves HTTPS (``tls=``: a :class:`TLSConfig` or an
:class:`ssl.SSLContext`; :func:`generate_self_signed` makes a throw-away pair
with ``openssl``) and requires bearer tokens (``tokens=``, with an optional
``authorizer`` deciding each :class:`Access`), answering 401 and 403 the way a
real server with anonymous authentication off does. It binds to loopback
unless told otherwise, and logs a WARNING when it is not.

Thread-safety: every public method may be called from any thread while the
server runs. Objects returned are fresh copies owned by the caller.
"""

from __future__ import annotations

import json
import logging
import os
import ssl
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from informers.testing.apiserver._faults import FaultState
from informers.testing.apiserver._fields import object_fields, supported_fields
from informers.testing.apiserver._kubeconfig import DEFAULT_NAME, DUMMY_TOKEN, write_kubeconfig
from informers.testing.apiserver._security import (
    Access,
    Authorizer,
    Security,
    is_loopback_address,
    warn_if_exposed,
)
from informers.testing.apiserver._server import HTTPServer
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._tls import SecurityConfigError, TLSConfig, generate_self_signed
from informers.wire.resources import Resource, find_builtin

__all__ = [
    "Access",
    "ApiServer",
    "ApiServerError",
    "Authorizer",
    "SecurityConfigError",
    "TLSConfig",
    "generate_self_signed",
    "is_loopback_address",
    "object_fields",
    "supported_fields",
]

log = logging.getLogger(__name__)

_WATCH_LIST_MODES = ("on", "off", "no-end-bookmark")


class ApiServerError(Exception):
    """A Python-side call on :class:`ApiServer` failed the way the HTTP request
    would: ``code`` is the HTTP status and ``status`` the ``Status`` object."""

    def __init__(self, code: int, status: dict[str, Any]) -> None:
        super().__init__(f"{code} {status.get('reason', '')}: {status.get('message', '')}")
        self.code = code
        self.status = status
        self.reason = str(status.get("reason", ""))


def _default_ns(resource: Resource, namespace: str | None) -> str | None:
    return (namespace or "default") if resource.namespaced else None


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


class ApiServer:
    """The emulated API server. Use as a context manager or call
    :meth:`start` / :meth:`stop` (which joins every thread it started).

    Every method is thread-safe. Only :meth:`stop` blocks (until the
    connection threads are joined); the Python-side object API and the fault
    switches return at once. Each connection is served by its own thread,
    named ``apiserver-conn-N``; the accept loop runs in ``apiserver-<port>``.

    Parameters:
        host, port: where to listen (port 0 picks a free port).
        bookmark_interval: seconds between periodic BOOKMARK events.
        history_window: events kept per kind; watches and exact lists older
            than the window get 410 Expired.
        watch_buffer_size: events buffered per watch; a consumer that falls
            further behind is disconnected.
        max_body_bytes: larger request bodies are answered with 413.
        rv_wait_seconds: how long a list or watch for a future resourceVersion
            waits before the 504 (the real server waits 3 s).
        heartbeat: how often an idle watch checks whether its client went away.
        tls: serve HTTPS with this :class:`TLSConfig` (its files are read
            here, once: :class:`SecurityConfigError` if they are unusable) or
            server-side :class:`ssl.SSLContext` (then :meth:`configuration`
            cannot know the CA: clients verify against the system's CAs unless
            told otherwise). None (the default) serves plain HTTP.
        sharded_list_and_watch: serve ``shardSelector`` on list and watch
            (server-side sharding, KEP-5866: alpha in Kubernetes 1.36 behind
            the ``ShardedListAndWatch`` feature gate, off by default). Off,
            the parameter is ignored, as by a server without the gate: every
            object is sent and no list carries ``metadata.shardInfo``. On,
            only the objects whose hash falls in the selector's ranges are
            listed and watched, each list echoes the selector in
            ``metadata.shardInfo.selector``, and a malformed selector is
            answered with 400 BadRequest (see
            :mod:`informers.toolkit.sharding.selector`). Also settable later
            (:attr:`sharded_list_and_watch`).
        tokens: bearer token → user name. None (the default) turns
            authentication off, as before; otherwise every request needs one
            of the tokens (401 Unauthorized without), and :meth:`api_client`
            sends the first.
        authorizer: with ``tokens``, called with the :class:`Access` of every
            resource request (from connection threads, no lock held); False
            answers 403 Forbidden. None allows every authenticated user
            everything.

    Host names are bound as given; a non-loopback address logs one WARNING
    (tests should never bind one).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        bookmark_interval: float = 60.0,
        history_window: int = 100_000,
        watch_buffer_size: int = 10_000,
        max_body_bytes: int = 3 * 1024 * 1024,
        rv_wait_seconds: float = 3.0,
        heartbeat: float = 0.1,
        tls: TLSConfig | ssl.SSLContext | None = None,
        tokens: Mapping[str, str] | None = None,
        authorizer: Authorizer | None = None,
        sharded_list_and_watch: bool = False,
    ) -> None:
        self._host = host
        self._port = port
        self._ssl_context: ssl.SSLContext | None = None
        self._ca_pem: bytes | None = None
        self._ca_file: Path | None = None
        if isinstance(tls, TLSConfig):
            self._ssl_context = tls.server_context()
            self._ca_pem = tls.ca_pem()
            self._ca_file = tls.trust_file
        elif isinstance(tls, ssl.SSLContext):
            self._ssl_context = tls
        elif tls is not None:
            raise SecurityConfigError(
                f"tls must be a TLSConfig or an ssl.SSLContext, not {type(tls).__name__}"
            )
        if authorizer is not None and tokens is None:
            raise SecurityConfigError("an authorizer needs tokens to know who is asking")
        self._security = Security(tokens, authorizer) if tokens is not None else None
        self._storage = Storage(history_window=history_window)
        self._settings = Settings(
            bookmark_interval=bookmark_interval,
            watch_buffer_size=watch_buffer_size,
            max_body_bytes=max_body_bytes,
            rv_wait_seconds=rv_wait_seconds,
            heartbeat=heartbeat,
        )
        self._settings.sharded_list_and_watch = bool(sharded_list_and_watch)
        self._faults = FaultState()
        self._lock = threading.Lock()  # guards _http and _thread
        self._stopping = threading.Event()
        self._http: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> ApiServer:
        """Bind and serve in a background thread; returns ``self``."""
        with self._lock:
            if self._http is not None:
                return self
            self._stopping.clear()
            self._storage.reopen()
            http = HTTPServer(
                (self._host, self._port),
                self._storage,
                self._settings,
                self._faults,
                self._stopping,
                ssl_context=self._ssl_context,
                security=self._security,
            )
            self._port = http.server_address[1]
            warn_if_exposed(str(http.server_address[0]), authenticated=self._security is not None)
            thread = threading.Thread(
                target=http.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"apiserver-{self._port}",
                daemon=True,
            )
            self._http, self._thread = http, thread
        thread.start()
        log.info("API server emulator listening on %s", self.url)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving: end every watch, close every connection and join
        every thread (up to ``timeout`` seconds). Stored objects are kept, so
        :meth:`start` serves them again on the same port."""
        with self._lock:
            http, thread = self._http, self._thread
            self._http = self._thread = None
        if http is None or thread is None:
            return
        self._stopping.set()
        self._storage.close()
        http.shutdown()
        thread.join(timeout)
        http.server_close()
        for conn in http.close_connections():
            conn.join(timeout)
        log.info("API server emulator on port %s stopped", self._port)

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def restart(self) -> None:
        """Behave like an API server restart: every watch stream ends and every
        open connection is closed; stored state and the port are kept."""
        self._storage.end_watches("restart")
        with self._lock:
            http = self._http
        if http is not None:
            http.close_connections()

    @property
    def url(self) -> str:
        """``http://host:port``, or ``https://`` with TLS (the port is known
        once started)."""
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://{self._host}:{self._port}"

    @property
    def port(self) -> int:
        return self._port

    @property
    def ca_pem(self) -> bytes | None:
        """The PEM of the CA clients verify this server with (from the
        :class:`TLSConfig`); None without TLS or with a bare SSLContext."""
        return self._ca_pem

    def configuration(self, *, token: str | None = None) -> Any:
        """A ``kubernetes.client.Configuration`` pointing at this server: with
        TLS it verifies the server against the configured CA file; with
        tokens it sends ``token`` (default: the first configured one)."""
        from kubernetes import client  # noqa: PLC0415 - optional heavy import

        config = client.Configuration()
        config.host = self.url
        if self._ca_file is not None:
            config.ssl_ca_cert = os.fspath(self._ca_file)
        bearer = token
        if bearer is None and self._security is not None:
            bearer = self._security.default_token
        if bearer is not None:
            # The entry every supported client (31 to 37) reads.
            config.api_key = {"authorization": f"Bearer {bearer}"}
        return config

    def api_client(self, *, token: str | None = None) -> Any:
        """A new ``kubernetes.client.ApiClient`` for this server (see
        :meth:`configuration`); the caller must ``close()`` it."""
        from kubernetes import client  # noqa: PLC0415 - optional heavy import

        return client.ApiClient(self.configuration(token=token))

    def write_kubeconfig(
        self,
        path: str | os.PathLike[str],
        *,
        token: str | None = None,
        namespace: str | None = None,
        name: str = DEFAULT_NAME,
    ) -> Path:
        """Write a kubeconfig for this (started) server to ``path`` (mode
        0600) and return it: its URL, the CA as ``certificate-authority-data``
        when known, and ``token`` (default: the first configured token, else
        a dummy one)."""
        bearer = token
        if bearer is None:
            bearer = self._security.default_token if self._security is not None else DUMMY_TOKEN
        return write_kubeconfig(
            path, self.url, name=name, namespace=namespace, token=bearer, ca_pem=self._ca_pem
        )

    # ------------------------------------------------------- object access

    def _resource(self, resource: Resource | str) -> Resource:
        if isinstance(resource, Resource):
            return resource
        found = find_builtin(resource)
        if found is None:
            for res in self._storage.resources():
                if resource in (res.plural, f"{res.plural}.{res.group}", res.kind):
                    return res
            raise ValueError(f"unknown resource {resource!r}")
        return found

    @staticmethod
    def _call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except StatusError as error:
            raise ApiServerError(error.code, error.body) from None

    def register_resource(self, resource: Resource, *, status_subresource: bool = False) -> None:
        """Serve a custom resource (as creating its CRD would)."""
        self._storage.register_resource(resource, status_subresource=status_subresource)

    def resources(self) -> list[Resource]:
        """Every served resource."""
        return self._storage.resources()

    @property
    def resource_version(self) -> int:
        """The current global resourceVersion."""
        return self._storage.resource_version

    def create(
        self, resource: Resource | str, obj: dict[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        """Create an object as a POST would; returns the stored object."""
        res = self._resource(resource)
        stored = self._call(self._storage.create, res, _copy(obj), namespace)
        return dict(json.loads(stored.full_json))

    def create_many(
        self,
        resource: Resource | str,
        objects: Iterable[dict[str, Any]],
        namespace: str | None = None,
    ) -> int:
        """Create many objects fast (benchmark and fixture setup): the dicts
        are taken over without a copy, so the caller must not touch them
        afterwards, and nothing is returned but the resourceVersion after the
        last one. Each object's JSON is computed here, so lists are served
        from cached bytes. Stops at the first invalid object
        (:class:`ApiServerError`)."""
        res = self._resource(resource)
        create = self._storage.create
        for obj in objects:
            # Serialised now, so the first list is served from cached bytes.
            _ = self._call(create, res, obj, namespace).full_json
        return self._storage.resource_version

    def get(
        self, resource: Resource | str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        """The stored object; :class:`ApiServerError` (404) when missing.
        Namespaced kinds default to the ``default`` namespace."""
        res = self._resource(resource)
        stored = self._call(self._storage.get, res, name, _default_ns(res, namespace))
        return dict(json.loads(stored.full_json))

    def update(self, resource: Resource | str, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace an object as a PUT would (status included); an RV in
        ``obj`` must match (409 otherwise)."""
        res = self._resource(resource)
        stored = self._call(self._storage.update, res, _copy(obj))
        return dict(json.loads(stored.full_json))

    def delete(
        self, resource: Resource | str, name: str, namespace: str | None = None
    ) -> dict[str, Any]:
        """Delete an object; returns its final state (with finalizers: the
        object marked for deletion)."""
        res = self._resource(resource)
        stored, _ = self._call(self._storage.delete, res, name, _default_ns(res, namespace))
        return dict(json.loads(stored.full_json))

    def list_objects(
        self, resource: Resource | str, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """Every current object of the kind (in one namespace if given), ordered
        by ``namespace/name``."""
        res = self._resource(resource)
        result = self._call(
            self._storage.list_page,
            res,
            namespace,
            exact_rv=None,
            limit=0,
            start_after=None,
            predicate=None,
        )
        return [dict(json.loads(s.full_json)) for s in result.items]

    # --------------------------------------------------------------- faults

    def compact(self, rv: int | None = None) -> int:
        """Drop history up to ``rv`` (default: now). Watches and exact lists
        from an older RV, and older continue tokens, get 410. Returns the
        compacted RV."""
        return self._storage.compact(rv)

    @property
    def history_window(self) -> int:
        """Events kept per kind (older ones are dropped as by compaction)."""
        return self._storage.history_window

    @history_window.setter
    def history_window(self, value: int) -> None:
        self._storage.history_window = max(0, int(value))

    def drop_watches(self, mid_line: bool = False) -> None:
        """Cut every open watch stream without a clean end (optionally after
        half an event line)."""
        self._storage.end_watches("drop-mid-line" if mid_line else "drop")

    def stall_watches(self, seconds: float) -> None:
        """Send no watch bytes for ``seconds`` (connections stay open; events
        pile up in the per-watch buffers and may overflow them). 0 resumes."""
        self._storage.stall(seconds)

    def silence_watches(self) -> int:
        """The watches open now go silent for good, like a half-dead
        connection or a proxy that swallows data: they stay open and send
        nothing more, not even bookmarks, until the client gives up on them.
        Watches opened later are unaffected. Returns how many went silent."""
        return self._storage.silence()

    def fail_next(
        self,
        n: int,
        status: int,
        retry_after: int | None = None,
        path_prefix: str | None = None,
        *,
        plain_text: bool = False,
        header: tuple[str, str] | None = None,
    ) -> None:
        """Answer the next ``n`` requests (whose path starts with
        ``path_prefix``, if given) with HTTP ``status`` and a ``Status`` body;
        429 carries ``Retry-After`` (default 1). ``plain_text`` sends the
        text/plain form that API priority and fairness uses. ``header``
        (``(name, value)``) limits the fault to requests carrying that header
        value (name case-insensitive), so one client can be targeted; set it
        with ``api_client.set_default_header(name, value)``."""
        self._faults.add_failure(n, status, retry_after, path_prefix, plain_text, header=header)

    def delay_next(
        self,
        n: int,
        seconds: float,
        path_prefix: str | None = None,
        *,
        header: tuple[str, str] | None = None,
    ) -> None:
        """Hold the next ``n`` matching requests back for ``seconds`` before
        serving them normally: a slow server, not a failing one. A client
        that times out meanwhile has still sent its request, and a write is
        applied when the delay ends. ``path_prefix`` and ``header`` select
        requests as for :meth:`fail_next`; a delayed request that also
        matches a :meth:`fail_next` fault fails after the delay."""
        self._faults.add_delay(n, float(seconds), path_prefix, header)

    def replay_events_from(self, rv: int, count: int = 1) -> None:
        """Make the next ``count`` watches (a buggy server) ignore their
        requested RV and send every event after ``rv`` again."""
        self._faults.add_replay(rv, count)

    def clear_faults(self) -> None:
        """Forget pending ``fail_next``, ``delay_next`` and
        ``replay_events_from`` faults and end a stall."""
        self._faults.clear()
        self._storage.stall(0)

    @property
    def list_latency(self) -> float:
        """Seconds every list waits before it is served."""
        return self._settings.list_latency

    @list_latency.setter
    def list_latency(self, seconds: float) -> None:
        self._settings.list_latency = max(0.0, float(seconds))

    @property
    def watch_list_mode(self) -> str:
        """Watch-list (``sendInitialEvents``) support: ``"on"``, ``"off"``
        (422, as a server without the feature) or ``"no-end-bookmark"``
        (initial events but never the end bookmark)."""
        return self._settings.watch_list_mode

    @watch_list_mode.setter
    def watch_list_mode(self, mode: str) -> None:
        if mode not in _WATCH_LIST_MODES:
            raise ValueError(f"watch_list_mode must be one of {_WATCH_LIST_MODES}, not {mode!r}")
        self._settings.watch_list_mode = mode

    @property
    def sharded_list_and_watch(self) -> bool:
        """Whether ``shardSelector`` is honoured (the ``ShardedListAndWatch``
        feature gate, alpha; see the constructor). Applies to requests made
        afterwards; an open watch keeps the filter it started with."""
        return self._settings.sharded_list_and_watch

    @sharded_list_and_watch.setter
    def sharded_list_and_watch(self, enabled: bool) -> None:
        self._settings.sharded_list_and_watch = bool(enabled)

    @property
    def validation(self) -> bool:
        """Whether writes of built-in kinds are validated (422 Invalid, as a
        real server refuses them) and converted (Secret ``stringData``,
        canonical quantities and times); on by default. Off serves
        benchmarks that compare against the cost without it."""
        return self._storage.validation

    @validation.setter
    def validation(self, enabled: bool) -> None:
        self._storage.validation = bool(enabled)

    @property
    def field_management(self) -> bool:
        """Whether creates, updates and patches record their field manager
        in ``managedFields`` (server-side apply always does); on by default.
        Off serves benchmarks that compare against the cost without it."""
        return self._storage.field_management

    @field_management.setter
    def field_management(self, enabled: bool) -> None:
        self._storage.field_management = bool(enabled)

    @property
    def watch_buffer_size(self) -> int:
        """Events buffered per watch before a slow consumer is disconnected
        (applies to watches opened afterwards)."""
        return self._settings.watch_buffer_size

    @watch_buffer_size.setter
    def watch_buffer_size(self, size: int) -> None:
        self._settings.watch_buffer_size = max(1, int(size))

    @property
    def bookmark_interval(self) -> float:
        """Seconds between periodic bookmarks (watches opened afterwards)."""
        return self._settings.bookmark_interval

    @bookmark_interval.setter
    def bookmark_interval(self, seconds: float) -> None:
        self._settings.bookmark_interval = float(seconds)

    @property
    def rv_wait_seconds(self) -> float:
        """How long a request for a future resourceVersion waits before 504."""
        return self._settings.rv_wait_seconds

    @rv_wait_seconds.setter
    def rv_wait_seconds(self, seconds: float) -> None:
        self._settings.rv_wait_seconds = float(seconds)

    @property
    def deletion_lifecycle(self) -> bool:
        """Whether deletions wait for controllers, as on a real cluster (off by
        default; :class:`~informers.testing.controllers.ControllerManager`
        turns it on while it runs). On: a DELETE with ``propagationPolicy``
        ``Foreground`` or ``Orphan`` adds the ``foregroundDeletion`` or
        ``orphan`` finalizer for the garbage collector, and a Namespace goes
        ``Terminating`` until its ``spec.finalizers`` are emptied through
        ``namespaces/<name>/finalize``. Off: the policy is ignored and a
        namespace's contents are deleted with it at once."""
        return self._settings.deletion_lifecycle

    @deletion_lifecycle.setter
    def deletion_lifecycle(self, on: bool) -> None:
        self._settings.deletion_lifecycle = bool(on)

    @property
    def pod_termination_delay(self) -> float:
        """Seconds the simulated kubelet (the controller manager's
        pod-lifecycle controller, read when it starts) lets a pod stay
        Terminating before it ends it (at most its grace period; default
        0.1). While the deletion lifecycle is on, a DELETE of a pod running on
        a node only starts its graceful deletion."""
        return self._settings.pod_termination_delay

    @pod_termination_delay.setter
    def pod_termination_delay(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("pod_termination_delay must be >= 0")
        self._settings.pod_termination_delay = float(seconds)

    def watch_count(self) -> int:
        """Number of watch streams open now."""
        return self._storage.watch_count()

    def wait_for_watch_count(self, count: int, timeout: float = 10.0) -> bool:
        """Block until exactly ``count`` watch streams are open (True), or
        ``timeout`` seconds have passed (False): a test's way to know its
        client's watch is open, or that the server noticed a client leave."""
        return self._storage.wait_watch_count(count, timeout)
