"""Shared test helpers: builders of plain-dict objects, and an event handler
that records what it is told.

Not a test module. Import it as ``from tests.helpers import pod, Recorder``:
pytest puts the repository root on ``sys.path`` (``pythonpath`` in
pyproject.toml), and ``tests`` is a namespace package (it has no
``__init__.py``).

The builders leave out what they are not given (no empty ``labels`` unless
a builder says it always sets them), so a test that compares objects sees
exactly the fields it asked for. Each call returns new dicts; nothing is
shared between two results.

:class:`Recorder` is safe to call from any thread (an informer's listener
threads call it) and its waits block on a condition, never in a sleep.
"""

from __future__ import annotations

import copy
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from informers.cache.informer import SharedIndexInformer
from informers.errors import ChannelEmptyError
from informers.rest.listwatch import ListOptions
from informers.testing.fake import FakeListerWatcher, FakeWatch
from informers.wire import _json
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.wire.raw import RawObject
from informers.wire.resources import Resource

__all__ = [
    "POD_SPEC",
    "WAIT",
    "WIDGETS",
    "WIDGET_CRD",
    "HookedRecorder",
    "RawFakeListerWatcher",
    "Recorder",
    "SilentServer",
    "api_pod",
    "configmap",
    "count_decodes",
    "crd",
    "drain",
    "install_widgets",
    "new_pod",
    "obj",
    "pod",
    "settle",
]

#: Seconds a test waits, by default, for something another thread does.
WAIT = 5.0

#: A namespaced custom resource that keeps any field: the kind of
#: :data:`WIDGET_CRD` (create it with :func:`install_widgets`).
WIDGETS = Resource("example.com", "v1", "widgets", "Widget")
#: The CustomResourceDefinition of :data:`WIDGETS` (a fresh copy each time
#: through :func:`install_widgets`; do not mutate this one).
WIDGET_CRD: Mapping[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


class _Creates(Protocol):
    def create(self, resource: Any, obj: dict[str, Any], /) -> Any: ...


def install_widgets(server: _Creates) -> Resource:
    """Create :data:`WIDGET_CRD` on the emulator ``server``; returns :data:`WIDGETS`."""
    server.create("customresourcedefinitions", copy.deepcopy(dict(WIDGET_CRD)))
    return WIDGETS


def obj(
    name: str,
    namespace: str | None = None,
    rv: str | None = None,
    *,
    uid: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    owners: Iterable[Mapping[str, Any]] | None = None,
    generation: int | None = None,
    kind: str | None = None,
    api_version: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An object with ``metadata.name`` and whichever of ``namespace``,
    ``uid``, ``resourceVersion`` (``rv``), ``generation``, ``labels``,
    ``annotations`` and ``ownerReferences`` (``owners``) are given;
    ``apiVersion`` and ``kind`` when given; and ``fields`` as top-level fields
    (``spec={...}``, ``data={...}``), kept as given."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if uid is not None:
        metadata["uid"] = uid
    if rv is not None:
        metadata["resourceVersion"] = rv
    if generation is not None:
        metadata["generation"] = generation
    if labels is not None:
        metadata["labels"] = dict(labels)
    if annotations is not None:
        metadata["annotations"] = dict(annotations)
    if owners is not None:
        metadata["ownerReferences"] = [dict(owner) for owner in owners]
    out: dict[str, Any] = {}
    if api_version is not None:
        out["apiVersion"] = api_version
    if kind is not None:
        out["kind"] = kind
    out["metadata"] = metadata
    out.update(fields)
    return out


def pod(name: str, rv: str, *, ns: str = "ns", **labels: str) -> dict[str, Any]:
    """A pod as a cache holds it: name, namespace ``ns``, resourceVersion
    ``rv`` and ``labels`` (always set, empty when none are given); no spec.
    ``pod("a", "2", app="web")``."""
    return obj(name, ns, rv, labels=labels)


#: The smallest pod spec the API server accepts: one container with an image.
POD_SPEC: Mapping[str, Any] = {"containers": [{"name": "main", "image": "busybox"}]}


def new_pod(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    """A pod body to create on the emulator: name, namespace, ``labels``
    (always set, maybe empty) and the smallest valid spec (:data:`POD_SPEC`);
    the server sets the rest."""
    return obj(name, ns, labels=labels, spec=copy.deepcopy(dict(POD_SPEC)))


def api_pod(
    name: str,
    uid: str,
    rv: str = "1",
    *,
    namespace: str = "default",
    node: str = "n1",
    phase: str = "Running",
    spec: Mapping[str, Any] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """A scheduled pod as the API server returns it: ``apiVersion`` and
    ``kind``; metadata with ``uid`` and resourceVersion ``rv`` plus the
    ``metadata`` given (``labels={...}``, ``finalizers=[...]``);
    ``spec.nodeName`` ``node`` plus the fields of ``spec``; ``status.phase``."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": rv,
            **metadata,
        },
        "spec": {"nodeName": node, **(spec or {})},
        "status": {"phase": phase},
    }


def configmap(name: str, namespace: str | None = None, **data: str) -> dict[str, Any]:
    """A ConfigMap body: name, ``namespace`` when given, and ``data`` (always
    set, maybe empty); no kind, as a body the emulator fills in."""
    return obj(name, namespace, data=dict(data))


#: A CRD version schema that keeps whatever it is given.
OPEN_SCHEMA: Mapping[str, Any] = {
    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
}


def crd(
    plural: str = "widgets",
    kind: str = "Widget",
    *,
    group: str = "example.com",
    scope: str = "Namespaced",
    schema: Mapping[str, Any] | None = OPEN_SCHEMA,
    subresources: Mapping[str, Any] | None = None,
    **version: Any,
) -> dict[str, Any]:
    """A CustomResourceDefinition body for ``<plural>.<group>``, one served
    and stored version ``v1`` with ``schema`` (the version's ``schema``
    field: :data:`OPEN_SCHEMA` unless given; ``None`` leaves it out),
    ``subresources`` when given, and any other ``version`` fields (such as
    ``additionalPrinterColumns``)."""
    served: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if schema is not None:
        served["schema"] = copy.deepcopy(dict(schema))
    if subresources is not None:
        served["subresources"] = copy.deepcopy(dict(subresources))
    served.update(copy.deepcopy(version))
    singular = kind.lower()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": singular, "kind": kind},
            "versions": [served],
        },
    }


def count_decodes(monkeypatch: Any) -> list[Any]:
    """Count every full decode from now on: ``informers.wire._json.loads``
    is wrapped (through ``monkeypatch``, a pytest ``MonkeyPatch``) to append
    each input to the returned list before parsing it."""
    decodes: list[Any] = []
    exact = _json.loads

    def counting(data: Any) -> Any:
        decodes.append(data)
        return exact(data)

    monkeypatch.setattr(_json, "loads", counting)
    return decodes


class _Gettable(Protocol):
    def get(self, timeout: float | None = None) -> Any: ...


def drain(source: _Gettable) -> list[Any]:
    """Everything ``source`` (a channel or a bus subscription) holds now, in
    order, taken without waiting (``get(timeout=0)`` until it raises
    :class:`~informers.errors.ChannelEmptyError`)."""
    out = []
    while True:
        try:
            out.append(source.get(timeout=0))
        except ChannelEmptyError:
            return out


def settle(informer: SharedIndexInformer, rv: str, timeout: float = WAIT) -> None:
    """Wait until ``informer``'s reflector has applied resourceVersion ``rv``
    and the informer is idle (its handlers were handed everything); fail the
    test when that takes longer than ``timeout``."""
    reflector = informer.reflector
    assert reflector is not None
    assert reflector.wait_for(lambda s: s.mem.last_sync_rv == rv, timeout), reflector.state
    assert informer.wait_idle()


Event = tuple[Any, ...]


class Recorder:
    """An event handler that records each call it gets, in order.

    ``events`` holds one tuple per call, made by :meth:`added`,
    :meth:`updated` and :meth:`deleted`; by default::

        ("add", name, is_in_initial_list)
        ("update", name, the old object's resourceVersion)
        ("delete", name, False)  or  ("delete", tombstone key, True)

    A subclass records another form by overriding those three (they run
    under the lock: build the tuple, call nothing else). ``model`` maps each
    object's key to the object the events leave it at: the handler's view of
    the cache.

    Thread-safety: ``lock`` is a :class:`threading.Condition` guarding
    ``events`` and ``model``; hold it (``with rec.lock:``) to read them while
    handlers may still run, or take :meth:`snapshot`. :meth:`wait_for` and
    :meth:`wait_len` block on it until the events satisfy them.
    """

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.events: list[Event] = []  # guarded by lock
        self.model: dict[str, Any] = {}  # guarded by lock

    # -- the event handler

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self.lock:
            self.model[meta_namespace_key(obj)] = obj
            self._append_locked(self.added(obj, is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            self.model[meta_namespace_key(new)] = new
            self._append_locked(self.updated(old, new))

    def on_delete(self, obj: Any) -> None:
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        key = obj.key if tombstone else meta_namespace_key(obj)
        with self.lock:
            self.model.pop(key, None)
            self._append_locked(self.deleted(obj))

    # -- the recorded form

    def added(self, obj: Any, is_in_initial_list: bool) -> Event:
        """The tuple recorded for an add."""
        return ("add", obj["metadata"]["name"], is_in_initial_list)

    def updated(self, old: Any, new: Any) -> Event:
        """The tuple recorded for an update."""
        return ("update", new["metadata"]["name"], old["metadata"]["resourceVersion"])

    def deleted(self, obj: Any) -> Event:
        """The tuple recorded for a delete (``obj`` may be a tombstone)."""
        if isinstance(obj, DeletedFinalStateUnknown):
            return ("delete", obj.key, True)
        return ("delete", obj["metadata"]["name"], False)

    # -- reading and waiting

    def record(self, *event: Any) -> None:
        """Record ``event`` as one more tuple (for hooks of subclasses)."""
        with self.lock:
            self._append_locked(event)

    def snapshot(self) -> list[Event]:
        """A copy of the events recorded so far."""
        with self.lock:
            return list(self.events)

    def wait_for(self, predicate: Callable[[list[Event]], bool], timeout: float = WAIT) -> bool:
        """Block until ``predicate(events)`` holds (checked now and after each
        new event, under the lock); return whether it did within ``timeout``."""
        with self.lock:
            return self.lock.wait_for(lambda: predicate(self.events), timeout)

    def wait_len(self, count: int, timeout: float = WAIT) -> bool:
        """Block until at least ``count`` events were recorded."""
        return self.wait_for(lambda events: len(events) >= count, timeout)

    def _append_locked(self, event: Event) -> None:
        self.events.append(event)
        self.lock.notify_all()


class HookedRecorder(Recorder):
    """A :class:`Recorder` with the optional hooks too, recorded as
    ``("begin", rv)``, ``("end", rv)`` and ``("synced",)``. (A handler with
    these hooks gets a relist as one begin/end bracket: use the plain
    :class:`Recorder` where that must not happen.)"""

    def on_relist_begin(self, resource_version: str) -> None:
        self.record("begin", resource_version)

    def on_relist_end(self, resource_version: str) -> None:
        self.record("end", resource_version)

    def on_synced(self) -> None:
        self.record("synced")


class SilentServer:
    """A TCP listener on a free loopback port that accepts every connection
    and never sends a byte (an API server stuck before answering).
    :attr:`accepted` counts the connections; :meth:`wait_accepted` waits for
    a number of them. :meth:`close` stops it and closes them."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._cond = threading.Condition()
        self._conns: list[socket.socket] = []  # guarded by _cond
        self._thread = threading.Thread(target=self._accept, name="silent-server")
        self._thread.start()

    @property
    def accepted(self) -> int:
        """Connections accepted so far."""
        with self._cond:
            return len(self._conns)

    def wait_accepted(self, count: int = 1, timeout: float = WAIT) -> bool:
        """Wait until ``count`` connections were accepted; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._conns) >= count, timeout)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:  # closed by close()
                return
            with self._cond:
                self._conns.append(conn)
                self._cond.notify_all()

    def close(self) -> None:
        """Stop listening, join the thread, close the connections."""
        self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join()
        with self._cond:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()


class _RawWatch(FakeWatch):
    """Sends each object as its JSON bytes (a RawObject), as a lister-watcher
    decoding on demand does."""

    def send(self, event: Any) -> None:
        obj = event.get("object")
        if event.get("type") != "ERROR" and isinstance(obj, dict):
            event = {**event, "object": RawObject.from_object(obj)}
        super().send(event)


class RawFakeListerWatcher(FakeListerWatcher):
    """A :class:`~informers.testing.fake.FakeListerWatcher` whose lists and
    watch events carry :class:`~informers.wire.raw.RawObject` objects (the
    JSON bytes of the dicts it is given), as
    ``HTTPListerWatcher.decoding_on_demand()`` does."""

    def list(self, options: ListOptions) -> dict[str, Any]:
        result = super().list(options)
        result["items"] = [RawObject.from_object(obj) for obj in result["items"]]
        return result

    def watch(self, options: ListOptions) -> FakeWatch:
        self.script_watch(_RawWatch(options))
        return super().watch(options)
