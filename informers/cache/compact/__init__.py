"""The compact storage option: a cache that keeps its objects encoded.

A parsed Kubernetes object costs about five times its JSON in Python dicts
(a 2 KB pod takes about 10 KB), so a cache of a million pods needs about
10 GB. :class:`CompactStore` keeps each object as bytes instead -- by default
zlib-compressed JSON, with a preset dictionary of the words Kubernetes
objects are made of (:data:`KUBERNETES_DICTIONARY`) -- and decodes it when it
is read. A bounded LRU (:class:`cachetools.LRUCache`) keeps the decoded form
of the objects read or written most recently (the *hot* objects), so repeated
reads of the same objects cost a dict lookup, not a decode.

Indexes are computed from the decoded object once, when it arrives (the index
functions never run on a read), and map index values to keys exactly as the
default :class:`~informers.cache.store.Indexer` does: ``by_index`` is a dict lookup
plus, for each matching key, a hot-object lookup or a decode.

It speaks the :class:`~informers.cache.store.Indexer`'s whole contract, the keyed
layer the informer writes through included (``upsert``, ``delete_key``,
``replace_items``, ``get_many``, ``key_of``), so an informer, listers and
trackers use it unchanged::

    informer = SharedIndexInformer(lw, store=CompactStore)
    factory = SharedInformerFactory(api_client, store=CompactStore)
    # tuned: functools.partial(CompactStore, hot_objects=50_000, codec=JSONCodec())

The objects it returns are the hot object (the very dict that was written, or
the one decoded last) or a freshly decoded dict. Either way they are
**read-only**, as with the default store: a hot object mutated in place would
be seen changed by every later reader, and is never re-indexed. Unlike the
default store, two reads of the same key may return equal but distinct dicts
(the object left the hot set in between).

Codecs (:class:`Codec`): :class:`ZlibCodec` (the default), :class:`JSONCodec`
(plain JSON bytes: orjson when installed, else :mod:`json`) and
:class:`MsgpackCodec` (only when the optional ``msgpack`` package is
installed). A codec must give back an object equal to the one it encoded for
every JSON document (dicts with string keys, lists, strings, integers,
floats, booleans, ``None``); tuples come back as lists. An object it cannot
encode raises :class:`~informers.ObjectEncodeError` and changes nothing.

Through an informer, a list never exists decoded in full: the store offers
list buffers (:meth:`CompactStore.new_list_buffer`, see
:mod:`informers.cache.listbuffer`), so the reflector keeps each page of a list as
it arrives transformed, encoded and indexed, the relist carries that
:class:`EncodedList`, the store adopts it without encoding again
(:meth:`CompactStore.replace_prepared`), and each notification of it decodes
its object only when a handler receives it. The informer also pages such
lists (:attr:`ReflectorConfig.paginate_lists
<informers.cache.reflector.ReflectorConfig.paginate_lists>`: a list at
resourceVersion 0 comes in one response), so the parsed objects alive at once
are about one page (500) plus what slow handlers have not consumed yet. For
a list, encoding and the index functions then run on the reflector's thread
as pages arrive (an index function's failure is still reported on the
informer loop's thread, when the list is applied).

What costs more than with the default store: every write encodes the object
(on the informer's loop thread); a read of an object that is not hot decodes
it; ``list()``, ``get_many`` and resyncs decode every object that is not hot
(without caching them, so a scan never evicts the hot set); a relist drops the
hot set; ``add_indexers`` decodes every object once. Measured figures and
when to choose it: the Performance guide ("Compact storage").

Thread-safety: every method may be called from any thread. One lock guards
the encoded objects, the hot set (the LRU and its lock-free mirror, see
:class:`CompactStore`) and the indexes; encoding, decoding, key and index
functions run outside it. Readers get lists they own and never see a
half-applied write or relist.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import importlib
import json
import logging
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from cachetools import LRUCache

from informers.cache.listbuffer import Deferred, PreparedList
from informers.cache.store import checked_index_values, checked_key, compute_index_values
from informers.errors import (
    IndexConflictError,
    IndexFunctionError,
    ObjectEncodeError,
    ObjectKeyError,
    UnknownIndexError,
)
from informers.wire import _json
from informers.wire.objects import (
    Indexers,
    IndexFunc,
    KeyFunc,
    deletion_handling_meta_namespace_key,
    get_resource_version,
    meta_namespace_key,
    meta_namespace_keys,
)

if TYPE_CHECKING:
    from informers.cache.store import IndexedStore

try:
    import orjson
except ImportError:  # the ``fast`` extra is optional
    orjson = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_HOT_OBJECTS",
    "KUBERNETES_DICTIONARY",
    "Codec",
    "CompactStore",
    "EncodedList",
    "JSONCodec",
    "MsgpackCodec",
    "ZlibCodec",
    "available_codecs",
]

logger = logging.getLogger(__name__)

#: How many decoded objects a :class:`CompactStore` keeps by default (about
#: 100 MB of 2 KB pods).
DEFAULT_HOT_OBJECTS = 10_000

# ---------------------------------------------------------------------------- codecs


@runtime_checkable
class Codec(Protocol):
    """How a :class:`CompactStore` turns an object into bytes and back.

    ``decode(encode(obj)) == obj`` for every JSON document ``obj``. ``encode``
    raises :class:`TypeError` or :class:`ValueError` for an object it cannot
    encode (the store turns that into :class:`~informers.ObjectEncodeError`).
    Both must be thread-safe (they run outside the store's lock, from any
    thread) and must not touch the store.
    """

    #: A short name for tables and logs (``"zlib"``, ``"json"``, ``"msgpack"``).
    name: str

    def encode(self, obj: Any) -> bytes:
        """The bytes of ``obj``."""

    def decode(self, data: bytes) -> Any:
        """A new object equal to the one ``data`` was encoded from."""


def _stdlib_dumps(obj: Any) -> bytes:
    # ASCII output: a lone surrogate (which UTF-8 cannot carry) is written as
    # an escape and read back as it was; NaN and infinities as json writes them.
    return json.dumps(obj, separators=(",", ":"), allow_nan=True).encode("ascii")


def _json_dumps(obj: Any) -> bytes:
    """Compact JSON bytes of ``obj``: orjson when installed, falling back to
    :mod:`json` for what orjson refuses (integers beyond 64 bits, lone
    surrogates); :class:`TypeError`/:class:`ValueError` for what neither
    encodes."""
    if orjson is not None:
        try:
            return orjson.dumps(obj)
        except TypeError as err:
            if "key must be str" in str(err):
                raise  # not a JSON document: json.dumps would change the key
    return _stdlib_dumps(obj)


class JSONCodec:
    """Plain JSON bytes (orjson when installed, else :mod:`json`), parsed back
    by the parser every list and watch body goes through
    (:mod:`informers.wire._json`: orjson with the standard parser's results).

    The largest encoding (about the object's size on the wire) and the
    cheapest to decode. One caveat: NaN and infinities, which are not JSON and
    which no API server sends, come back as ``None`` when orjson encoded them.
    """

    name = "json"

    def encode(self, obj: Any) -> bytes:
        """Compact JSON bytes of ``obj``."""
        return _json_dumps(obj)

    def decode(self, data: bytes) -> Any:
        """The object parsed from ``data``."""
        return _json.loads(data)

    def __repr__(self) -> str:
        return "JSONCodec()"


def _dictionary_objects() -> list[dict[str, Any]]:
    """Made-up objects written with the field names and values Kubernetes
    objects repeat (no real object's data): the preset dictionary's text."""
    t = "2026-01-01T00:00:00Z"
    condition = {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
    meta = {
        "name": "name",
        "generateName": "name-",
        "namespace": "default",
        "uid": "00000000-0000-4000-8000-000000000000",
        "resourceVersion": "1",
        "generation": 1,
        "creationTimestamp": t,
        "deletionTimestamp": t,
        "labels": {
            "app": "app",
            "app.kubernetes.io/name": "app",
            "app.kubernetes.io/instance": "app",
            "app.kubernetes.io/component": "app",
            "app.kubernetes.io/part-of": "app",
            "app.kubernetes.io/managed-by": "Helm",
            "pod-template-hash": "0",
            "controller-revision-hash": "0",
            "tier": "backend",
        },
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "name",
                "uid": "00000000-0000-4000-8000-000000000000",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "finalizers": ["kubernetes.io/pvc-protection"],
    }
    container = {
        "name": "app",
        "image": "registry.example.com/app:latest",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c"],
        "args": ["--port=8080"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NAMESPACE", "value": "default"},
        ],
        "resources": {
            "limits": {"cpu": "500m", "memory": "512Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"},
        },
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "timeoutSeconds": 1,
            "periodSeconds": 10,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        "volumeMounts": [
            {
                "name": "kube-api-access",
                "readOnly": True,
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            }
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "volumes": [
                {
                    "name": "kube-api-access",
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                        ],
                        "defaultMode": 420,
                    },
                }
            ],
            "containers": [container],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "nodeName": "node",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {**condition, "type": kind}
                for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": "10.0.0.1",
            "hostIPs": [{"ip": "10.0.0.1"}],
            "podIP": "10.0.0.1",
            "podIPs": [{"ip": "10.0.0.1"}],
            "startTime": t,
            "containerStatuses": [
                {
                    "name": "app",
                    "state": {"running": {"startedAt": t}},
                    "lastState": {},
                    "ready": True,
                    "restartCount": 0,
                    "image": "registry.example.com/app:latest",
                    "imageID": "registry.example.com/app@sha256:0",
                    "containerID": "containerd://0",
                    "started": True,
                }
            ],
            "qosClass": "Burstable",
        },
    }
    workload = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "app"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
        "status": {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": t,
                    "lastTransitionTime": t,
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                }
            ],
        },
    }
    others = {
        "apiVersion": "v1",
        "kind": "Service",
        "spec": {
            "type": "ClusterIP",
            "clusterIP": "10.0.0.1",
            "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}],
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        },
        "data": {},
        "type": "Opaque",
        "reason": "Created",
        "involvedObject": {"kind": "Pod", "fieldPath": "spec.containers{app}"},
    }
    # The most common text last: zlib reaches the dictionary's end cheapest.
    return [others, workload, pod]


#: zlib's preset dictionary for Kubernetes objects: the JSON of made-up
#: objects written with the field names and values real objects repeat (pods
#: above all). It shrinks a pod's compressed size to about a third of what
#: zlib reaches alone. Fixed for a process: every blob depends on it.
KUBERNETES_DICTIONARY: bytes = b"".join(_stdlib_dumps(obj) for obj in _dictionary_objects())


class ZlibCodec:
    """JSON bytes compressed with :mod:`zlib` (the default codec).

    :param level: zlib's level (1 fastest .. 9 smallest; the default 6).
    :param dictionary: zlib's preset dictionary (``zdict``); default
        :data:`KUBERNETES_DICTIONARY`. ``b""`` compresses with none. A
        dictionary of objects like the ones cached shrinks them most (see
        :meth:`with_samples`).

    About a third to a sixth of the JSON's size, for one decompression more
    per decode than :class:`JSONCodec`. Thread-safe (every call uses its own
    zlib stream).
    """

    name = "zlib"

    def __init__(self, level: int = 6, dictionary: bytes = KUBERNETES_DICTIONARY) -> None:
        if not -1 <= level <= 9:
            raise ValueError(f"zlib level must be -1..9, not {level}")
        if not isinstance(dictionary, bytes):
            raise TypeError("the dictionary must be bytes")
        self.level = level
        # zlib uses at most the last 32 KiB of a dictionary.
        self.dictionary = dictionary[-32768:]

    @classmethod
    def with_samples(cls, samples: Iterable[Any], level: int = 6) -> ZlibCodec:
        """A codec whose preset dictionary is :data:`KUBERNETES_DICTIONARY`
        followed by the JSON of ``samples`` (a few objects like the ones to be
        cached, e.g. a first page of a list; the last 32 KiB count)."""
        text = b"".join(_json_dumps(obj) for obj in samples)
        return cls(level, KUBERNETES_DICTIONARY + text)

    def encode(self, obj: Any) -> bytes:
        """The compressed JSON of ``obj``."""
        data = _json_dumps(obj)
        if not self.dictionary:
            return zlib.compress(data, self.level)
        stream = zlib.compressobj(
            self.level, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, self.dictionary
        )
        return stream.compress(data) + stream.flush()

    def decode(self, data: bytes) -> Any:
        """The object decompressed and parsed from ``data``."""
        if not self.dictionary:
            return _json.loads(zlib.decompress(data))
        stream = zlib.decompressobj(zlib.MAX_WBITS, self.dictionary)
        return _json.loads(stream.decompress(data) + stream.flush())

    def __repr__(self) -> str:
        kind = "none" if not self.dictionary else f"{len(self.dictionary)} bytes"
        return f"ZlibCodec(level={self.level}, dictionary={kind})"


class MsgpackCodec:
    """MessagePack (the optional ``msgpack`` package; it is not a dependency
    of kube-informers: install it yourself, or the ``bench`` extra).

    About 85% of the JSON's size. Integers beyond 64 bits do not encode
    (:class:`~informers.ObjectEncodeError`). Constructing it without msgpack
    installed raises :class:`ImportError`.
    """

    name = "msgpack"

    def __init__(self) -> None:
        msgpack = importlib.import_module("msgpack")  # optional: typed as Any
        self._packb = msgpack.packb
        self._unpackb = msgpack.unpackb

    def encode(self, obj: Any) -> bytes:
        """The MessagePack bytes of ``obj``."""
        try:
            data: bytes = self._packb(obj, use_bin_type=True, strict_types=False)
        except OverflowError as err:
            raise ValueError(str(err)) from err
        return data

    def decode(self, data: bytes) -> Any:
        """The object unpacked from ``data``."""
        return self._unpackb(data, raw=False, strict_map_key=False)

    def __repr__(self) -> str:
        return "MsgpackCodec()"


def available_codecs() -> dict[str, Codec]:
    """One instance of each codec usable here, by name: ``zlib``, ``json``,
    and ``msgpack`` when that package is installed."""
    codecs: dict[str, Codec] = {"zlib": ZlibCodec(), "json": JSONCodec()}
    with contextlib.suppress(ImportError):
        codecs["msgpack"] = MsgpackCodec()
    return codecs


# ---------------------------------------------------------------------------- the store

_Values: TypeAlias = tuple[str, ...]
#: value -> keys indexed under it (a dict used as an insertion-ordered set).
_Index: TypeAlias = dict[str, dict[str, None]]
_NO_VALUES: _Values = ()
_MISSING: Any = object()
#: add_indexers' rounds outside the lock before the last stragglers are
#: indexed under it (as the default store does).
_ADD_INDEXERS_ROUNDS = 5
_BATCH_KEY_FUNCS: tuple[KeyFunc, ...] = (meta_namespace_key, deletion_handling_meta_namespace_key)


class _HotObjects(LRUCache[str, Any]):
    """The LRU of decoded objects; every eviction also leaves ``mirror``
    (a plain dict with the same keys and values, read without the LRU's
    per-call overhead). Not thread-safe: used under the store's lock only."""

    def __init__(self, maxsize: int, mirror: dict[str, Any]) -> None:
        super().__init__(maxsize)
        self.mirror = mirror

    def popitem(self) -> tuple[str, Any]:
        key, value = super().popitem()
        del self.mirror[key]
        return key, value


class _Unencodable:
    """A buffered object the codec could not encode: kept as it is, so that
    adopting the list raises :class:`~informers.ObjectEncodeError` as
    :meth:`CompactStore.replace_items` would, changing nothing."""

    __slots__ = ("error", "obj")

    def __init__(self, obj: Any, error: Exception) -> None:
        self.obj = obj
        self.error = error


class EncodedList(PreparedList):
    """A complete list kept as a :class:`CompactStore` keeps objects: the
    blobs and the index values computed when each item arrived (see
    :meth:`CompactStore.new_list_buffer`). Made only by the store's list
    buffer; adopted, not re-encoded, by :meth:`CompactStore.replace_prepared`.
    Items read from it are decoded on every read. Immutable."""

    __slots__ = ("_blobs", "_decode", "_keys", "_rvs", "errors", "names", "store", "values")

    def __init__(
        self,
        store: CompactStore,
        *,
        keys: tuple[str, ...],
        blobs: builtins.list[bytes | _Unencodable],
        values: builtins.list[tuple[_Values, ...]],
        rvs: builtins.list[str],
        names: tuple[str, ...],
        errors: builtins.list[IndexFunctionError],
    ) -> None:
        self.store = store
        self._keys = keys
        self._blobs = blobs
        #: Per item, its values in each index of ``names`` (same order).
        self.values = values
        self._rvs = rvs
        #: The indexes the values were computed for.
        self.names = names
        #: Index function failures met while buffering (reported on adoption).
        self.errors = errors
        self._decode = store.codec.decode

    @property
    def keys(self) -> tuple[str, ...]:
        """The store key of every item, in list order."""
        return self._keys

    @property
    def blobs(self) -> builtins.list[bytes | _Unencodable]:
        """The encoded items (an unencodable one kept as it was)."""
        return self._blobs

    def decode(self, index: int) -> Any:
        """Item ``index``, decoded."""
        blob = self._blobs[index]
        return blob.obj if isinstance(blob, _Unencodable) else self._decode(blob)

    def deferred(self, index: int) -> Deferred:
        """Item ``index``, decoded on first use."""
        blob = self._blobs[index]
        if type(blob) is _Unencodable:
            return Deferred.ready(blob.obj)
        return Deferred(self._decode, blob)

    def resource_version(self, index: int) -> str:
        """Item ``index``'s resource version (kept when it arrived)."""
        return self._rvs[index]


class _CompactListBuffer:
    """A :class:`~informers.cache.listbuffer.ListBuffer` of a :class:`CompactStore`:
    each item is transformed, keyed, encoded and indexed as it is put, and
    only the blob, the index values and the resource version are kept.
    Used by one thread (the reflector's)."""

    def __init__(self, store: CompactStore, transform: Callable[[Any], Any] | None) -> None:
        self._store = store
        self._transform = transform
        self._indexers = store._indexers  # a snapshot (replaced, never mutated)
        self._names = tuple(self._indexers)
        self._encode = store.codec.encode
        # Parallel lists, in list order; a discarded item leaves None in _keys.
        self._positions: dict[str, int] = {}  # the reflector's key -> position
        self._keys: builtins.list[str | None] = []
        self._blobs: builtins.list[bytes | _Unencodable | None] = []
        self._values: builtins.list[tuple[_Values, ...]] = []
        self._rvs: builtins.list[str] = []
        self._discarded = 0
        self._errors: builtins.list[IndexFunctionError] = []
        # One shared tuple per single index value (as the store keeps them).
        self._singles: dict[str, _Values] = {}

    def __len__(self) -> int:
        return len(self._positions)

    def put(self, key: str, obj: Any) -> None:
        """Put one object under the reflector's ``key``."""
        self.put_many((key,), (obj,))

    def put_many(self, keys: Sequence[str], objects: Sequence[Any]) -> None:
        """Put ``objects[i]`` under ``keys[i]`` (the reflector's keys)."""
        transform = self._transform
        objs = [transform(obj) for obj in objects] if transform is not None else objects
        store = self._store
        if store._key_func in _BATCH_KEY_FUNCS:
            store_keys = meta_namespace_keys(objs, store.key_of)
        else:
            store_keys = [store.key_of(obj) for obj in objs]
        encode, indexers, names = self._encode, self._indexers, self._names
        singles, errors = self._singles, self._errors.append
        positions = self._positions
        for bkey, store_key, obj in zip(keys, store_keys, objs, strict=True):
            key = bkey if store_key == bkey else store_key  # one string for both
            blob: bytes | _Unencodable
            try:
                blob = encode(obj)
            except (TypeError, ValueError) as err:
                blob = _Unencodable(obj, err)
            computed = compute_index_values(indexers, key, obj, errors)
            values = []
            for name in names:
                value = computed[name]
                if len(value) == 1:
                    value = singles.setdefault(value[0], value)
                values.append(value)
            rv = get_resource_version(obj)
            pos = positions.get(bkey)
            if pos is None:
                positions[bkey] = len(self._keys)
                self._keys.append(key)
                self._blobs.append(blob)
                self._values.append(tuple(values))
                self._rvs.append(rv)
            else:
                self._keys[pos] = key
                self._blobs[pos] = blob
                self._values[pos] = tuple(values)
                self._rvs[pos] = rv

    def discard(self, key: str) -> None:
        """Forget the object under the reflector's ``key``."""
        pos = self._positions.pop(key, None)
        if pos is not None:
            self._keys[pos] = None
            self._blobs[pos] = None
            self._discarded += 1

    def finish(self) -> EncodedList:
        """The collected list; the buffer is empty afterwards."""
        keys, blobs, values, rvs = self._keys, self._blobs, self._values, self._rvs
        if self._discarded:
            kept = [i for i, key in enumerate(keys) if key is not None]
            keys = [keys[i] for i in kept]
            blobs = [blobs[i] for i in kept]
            values = [values[i] for i in kept]
            rvs = [rvs[i] for i in kept]
        prepared = EncodedList(
            self._store,
            keys=tuple(keys),  # type: ignore[arg-type]  # discarded ones (None) are gone
            blobs=blobs,  # type: ignore[arg-type]
            values=values,
            rvs=rvs,
            names=self._names,
            errors=self._errors,
        )
        self._positions, self._keys, self._blobs, self._values, self._rvs = {}, [], [], [], []
        self._discarded, self._errors, self._singles = 0, [], {}
        return prepared


class CompactStore:
    """An :class:`~informers.cache.store.IndexedStore` that keeps objects encoded,
    with an LRU of decoded hot objects and indexes computed at ingest.

    :param key_func: the key of an object (default
        :func:`~informers.meta_namespace_key`).
    :param indexers: initial indexes (name -> index function).
    :param on_index_error: as for :class:`~informers.cache.store.Indexer`: an
        object an index function fails on is stored anyway, in no value of
        that index, and the error is reported (outside the lock).
    :param codec: how objects are encoded (default :class:`ZlibCodec`).
    :param hot_objects: how many decoded objects the LRU keeps (default
        :data:`DEFAULT_HOT_OBJECTS`; 0 keeps none and decodes every read).

    Contract: everything :class:`~informers.cache.store.Indexer` promises (atomic
    writes and relists, lists the caller owns, read-only objects, key and
    index functions outside the lock, errors leaving the store unchanged,
    :class:`~informers.UnknownIndexError` and
    :class:`~informers.IndexConflictError`), except object identity: reads
    return the hot object or a freshly decoded equal one. An object the codec
    cannot encode raises :class:`~informers.ObjectEncodeError` (for
    :meth:`replace`: before anything changes).

    The hot set: a write (:meth:`add`, :meth:`update`, :meth:`upsert`) makes
    its object hot; a read of one object or of an index value
    (:meth:`get`, :meth:`get_by_key`, :meth:`by_index`, :meth:`index`)
    makes the objects it returns hot, decoding those that were not;
    :meth:`list`, :meth:`get_many` and :meth:`add_indexers` decode without
    caching; a relist (:meth:`replace`, :meth:`replace_items`) empties it.
    The LRU is a :class:`cachetools.LRUCache`; reads find hot objects in a
    plain dict mirror of it and record the keys they used, which the LRU is
    told about (in order, so it evicts exactly the least recently used)
    before its next insertion. Within one read, the objects that were hot
    count as used before those it decoded are inserted.
    """

    def __init__(
        self,
        key_func: KeyFunc = meta_namespace_key,
        indexers: Indexers | None = None,
        *,
        on_index_error: Callable[[IndexFunctionError], None] | None = None,
        codec: Codec | None = None,
        hot_objects: int = DEFAULT_HOT_OBJECTS,
    ) -> None:
        if hot_objects < 0:
            raise ValueError(f"hot_objects must be >= 0, not {hot_objects}")
        # Never change after construction:
        self._key_func = key_func
        self._on_index_error = on_index_error
        self._codec: Codec = codec if codec is not None else ZlibCodec()
        self._encode = self._codec.encode
        self._decode = self._codec.decode
        self._hot_size = hot_objects
        #: reads recorded before the LRU is told (bounds the list).
        self._touch_limit = max(1024, hot_objects)
        self._lock = threading.Lock()
        # --- guarded by _lock ----------------------------------------------
        # key -> encoded object.
        self._blobs: dict[str, bytes] = {}
        # key -> decoded object, for the hot keys: always exactly the keys
        # and values of _lru (a subset of _blobs' keys, each decoding to the
        # blob stored now).
        self._hot: dict[str, Any] = {}
        self._lru = _HotObjects(hot_objects, self._hot) if hot_objects else None
        # The reads of hot objects since the LRU was last told, in order: a
        # key, or (index name, value) for a by_index that found every object
        # hot (one entry per call, whatever the number of matches). Replayed
        # into the LRU before anything changes the keys or the indexes, and
        # so before any insertion (eviction order is exact LRU: an index
        # value resolves to the keys it had when it was read), and when it
        # reaches _touch_limit.
        self._touched: list[str | tuple[str, str]] = []
        # Index name -> function. Replaced, never mutated, when indexes are
        # added (a reference read without the lock is a consistent snapshot).
        self._indexers: dict[str, IndexFunc] = {}
        # Index name -> value -> keys. Invariants: never an empty key set;
        # key in _indices[n][v]  <=>  v in _values[n][key].
        self._indices: dict[str, _Index] = {}
        # Index name -> key -> its values (keys with no value are absent).
        self._values: dict[str, dict[str, _Values]] = {}
        # Index name -> value -> the one-value tuple (value,) every key
        # indexed under that value alone shares (one tuple and one string
        # per distinct value, not per object). Holds exactly the values of
        # _indices[n] that some key holds alone.
        self._singles: dict[str, dict[str, _Values]] = {}
        # --------------------------------------------------------------------
        if indexers:
            self.add_indexers(indexers)

    @property
    def codec(self) -> Codec:
        """The codec objects are kept in."""
        return self._codec

    @property
    def hot_objects(self) -> int:
        """The LRU's bound (decoded objects kept at most)."""
        return self._hot_size

    def __repr__(self) -> str:
        with self._lock:
            count, hot, names = len(self._blobs), len(self._hot), sorted(self._indexers)
        return f"<CompactStore ({self._codec.name}): {count} objects, {hot} hot, indexes {names}>"

    def __len__(self) -> int:
        with self._lock:
            return len(self._blobs)

    def stats(self) -> dict[str, int]:
        """``objects``, ``hot`` (decoded objects held) and ``encoded_bytes``
        (the sum of the encoded objects' lengths), read under one lock."""
        with self._lock:
            return {
                "objects": len(self._blobs),
                "hot": len(self._hot),
                "encoded_bytes": sum(map(len, self._blobs.values())),
            }

    def hot_keys(self) -> builtins.list[str]:
        """The keys of the hot objects, least recently used first (for
        inspection and tests: the LRU is brought up to date first)."""
        with self._lock:
            self._tell_lru_locked()
            if self._lru is None:
                return []
            # Evicting from a copy tells the order without touching the LRU.
            order = copy.copy(self._lru)
            order.mirror = {}  # the copy's evictions must not touch _hot
            keys: builtins.list[str] = []
            while order:
                key, _ = LRUCache.popitem(order)
                keys.append(key)
            return keys

    # ------------------------------------------------------------------ keys

    @property
    def key_func(self) -> KeyFunc:
        """The key function this store keys objects with (never changes)."""
        return self._key_func

    def key_of(self, obj: Any) -> str:
        """The key of ``obj`` under this store's key function; raises
        :class:`~informers.ObjectKeyError` as :meth:`Indexer.key_of
        <informers.cache.store.Indexer.key_of>` does. Takes no lock."""
        return checked_key(self._key_func, obj)

    def _encode_one(self, key: str, obj: Any) -> bytes:
        try:
            return self._encode(obj)
        except (TypeError, ValueError) as err:
            raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err

    # ------------------------------------------------------------ hot set (locked)

    def _tell_lru_locked(self) -> None:
        """Replay the recorded reads into the LRU, each entry once, in order
        of its last use (so the order is what per-read updates would give)."""
        touched = self._touched
        lru = self._lru
        if not touched or lru is None:
            touched.clear()
            return
        indices = self._indices
        for entry in reversed(dict.fromkeys(reversed(touched))):
            if isinstance(entry, str):
                if entry in lru:
                    lru[entry]  # reading moves the key to most recently used
                continue
            name, value = entry
            for key in indices[name].get(value, ()):
                if key in lru:
                    lru[key]
        touched.clear()

    def _make_hot_locked(self, key: str, obj: Any) -> None:
        lru = self._lru
        if lru is None:
            return
        if self._touched:
            self._tell_lru_locked()
        lru[key] = obj  # may evict (and drop from the mirror) the LRU key
        self._hot[key] = obj

    def _drop_hot_locked(self, key: str) -> None:
        if key in self._hot:
            assert self._lru is not None
            del self._lru[key]
            del self._hot[key]

    def _touch_locked(self, keys: Iterable[str]) -> None:
        touched = self._touched
        touched.extend(keys)
        if len(touched) >= self._touch_limit:
            self._tell_lru_locked()

    # ------------------------------------------------------------------ index upkeep

    def _intern_locked(self, name: str, values: _Values) -> _Values:
        """The shared tuple for a single value (new values get one)."""
        if len(values) != 1:
            return values
        singles = self._singles[name]
        shared = singles.get(values[0])
        if shared is None:
            singles[values[0]] = shared = values
        return shared

    def _reindex_locked(self, name: str, key: str, old: _Values, new: _Values) -> None:
        index = self._indices[name]
        if len(old) > 1 or len(new) > 1:
            old_set, new_set = frozenset(old), frozenset(new)
            old = tuple(v for v in old if v not in new_set)
            new = tuple(v for v in new if v not in old_set)
        for value in old:
            keys = index[value]
            del keys[key]
            if not keys:
                del index[value]
                self._singles[name].pop(value, None)
        for value in new:
            present = index.get(value)
            if present is None:
                index[value] = {key: None}
            else:
                present[key] = None

    def _set_values_locked(self, key: str, computed: Mapping[str, _Values]) -> None:
        for name, new in computed.items():
            values = self._values[name]
            old = values.get(key, _NO_VALUES)
            if old == new:
                continue
            if new:
                values[key] = self._intern_locked(name, new)
            else:
                del values[key]
            self._reindex_locked(name, key, old, new)

    def _unindex_locked(self, key: str) -> None:
        for name, values in self._values.items():
            gone = values.pop(key, _NO_VALUES)
            if gone:
                self._reindex_locked(name, key, gone, _NO_VALUES)

    # ------------------------------------------------------------------ writes

    def upsert(self, key: str, obj: Any) -> Any | None:
        """Store ``obj`` under ``key`` (and make it hot); return the object it
        replaced (``None`` for a new key), read in the same lock acquisition
        as the write (decoded after it, outside the lock, if it was not hot).

        Encoding and the index functions run first, outside the lock.
        """
        blob = self._encode_one(key, obj)
        while True:
            indexers = self._indexers
            computed = compute_index_values(indexers, key, obj, self._on_index_error)
            with self._lock:
                if self._indexers is indexers:
                    old_hot = self._hot.get(key, _MISSING)
                    old_blob = self._blobs.get(key)
                    self._blobs[key] = blob
                    if self._touched:  # before the indexes change
                        self._tell_lru_locked()
                    self._set_values_locked(key, computed)
                    self._make_hot_locked(key, obj)
                    break
        if old_hot is not _MISSING:
            return old_hot
        return None if old_blob is None else self._decode(old_blob)

    def delete_key(self, key: str) -> Any | None:
        """Remove the object under ``key`` and return it (``None``, and nothing
        changes, for an unknown key). Runs no user code under the lock."""
        found = self._remove(key)
        if found is None:
            return None
        hot, blob = found
        return hot if hot is not _MISSING else self._decode(blob)

    def _remove(self, key: str) -> tuple[Any, bytes] | None:
        with self._lock:
            blob = self._blobs.pop(key, None)
            if blob is None:
                return None
            hot = self._hot.get(key, _MISSING)
            self._drop_hot_locked(key)
            self._unindex_locked(key)
            return hot, blob

    def replace_items(self, items: dict[str, Any], resource_version: str = "") -> None:
        """Make ``items`` (key -> object) the whole content, atomically; the
        hot set starts empty. Encoding and indexing run outside the lock; if
        a codec or (without ``on_index_error``) an index function fails,
        nothing changes. ``resource_version`` only goes into a debug log."""
        on_error = self._on_index_error
        encode = self._encode
        blobs: dict[str, bytes] = {}
        for key, obj in items.items():
            try:
                blobs[key] = encode(obj)
            except (TypeError, ValueError) as err:
                raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err
        while True:
            indexers = self._indexers
            computed = [
                (key, compute_index_values(indexers, key, obj, on_error))
                for key, obj in items.items()
            ]
            with self._lock:
                if self._indexers is not indexers:
                    continue  # indexes were added meanwhile: compute those too
                self._blobs = blobs
                self._hot.clear()
                self._touched.clear()
                if self._lru is not None:
                    self._lru = _HotObjects(self._hot_size, self._hot)
                self._indices = {name: {} for name in indexers}
                self._values = {name: {} for name in indexers}
                self._singles = {name: {} for name in indexers}
                for key, values in computed:
                    self._set_values_locked(key, values)
                break
        logger.debug(
            "compact store replaced: %d objects at resourceVersion %s",
            len(blobs),
            resource_version,
        )

    def new_list_buffer(
        self, transform: Callable[[Any], Any] | None = None
    ) -> _CompactListBuffer | None:
        """A :class:`~informers.cache.listbuffer.ListBuffer` that keeps a list the
        way this store keeps objects: each item, as it is put, goes through
        ``transform``, is keyed, encoded and indexed, and only its blob,
        index values and resource version are kept, so a list being
        collected never exists decoded in full. Its
        :meth:`~informers.cache.listbuffer.ListBuffer.finish` gives an
        :class:`EncodedList` for :meth:`replace_prepared`. The informer
        collects its lists in these (see :mod:`informers.cache.listbuffer`).
        The buffer is used by one thread; making it takes no lock."""
        return _CompactListBuffer(self, transform)

    def replace_prepared(
        self, prepared: EncodedList, resource_version: str = ""
    ) -> Callable[[str], Deferred | None]:
        """Make the objects of ``prepared`` (a list collected by one of this
        store's list buffers) the whole content, atomically, adopting its
        blobs and index values as they are (later duplicates win, as in
        :meth:`replace_items`; the hot set starts empty).

        Returns ``previous(key)``: what was stored under ``key`` before, as a
        :class:`~informers.cache.listbuffer.Deferred` (decoded on first use, from
        the replaced blob) or ``None`` -- what the relist's notifications are
        made of. Nothing is decoded here unless indexes were added after
        the list began (their functions then run on each object, decoded
        once, outside the lock). An item the codec could not encode raises
        :class:`~informers.ObjectEncodeError`, and an index function failure
        (without ``on_index_error``) :class:`~informers.IndexFunctionError`,
        changing nothing; with ``on_index_error``, the failures met while
        the list was collected are reported to it here, on the caller's
        thread."""
        if prepared.store is not self:
            raise ValueError("replace_prepared takes a list prepared by this store's buffer")
        keys, blobs = prepared.keys, prepared.blobs
        for key, blob in zip(keys, blobs, strict=True):
            if type(blob) is _Unencodable:
                err = blob.error
                raise ObjectEncodeError(key, f"{type(err).__name__}: {err}") from err
        on_error = self._on_index_error
        if prepared.errors:
            if on_error is None:
                raise prepared.errors[0]
            for error in prepared.errors:
                on_error(error)
        new_blobs: dict[str, bytes] = dict(zip(keys, blobs, strict=True))  # type: ignore[arg-type]
        # Each key once, at its first position, with its last item's values.
        if len(new_blobs) == len(keys):
            order: Iterable[tuple[str, int]] = zip(keys, range(len(keys)), strict=True)
        else:
            order = {key: i for i, key in enumerate(keys)}.items()
        rows = builtins.list(order)
        while True:
            indexers = self._indexers
            built = self._build_indexes(prepared, rows, indexers)
            with self._lock:
                if self._indexers is not indexers:
                    continue  # indexes were added meanwhile: build those too
                old_blobs, old_hot = self._blobs, self._hot
                self._blobs = new_blobs
                self._hot = {}
                self._touched.clear()
                if self._lru is not None:
                    self._lru = _HotObjects(self._hot_size, self._hot)
                self._indices, self._values, self._singles = built
                break
        logger.debug(
            "compact store replaced from a prepared list: %d objects at resourceVersion %s",
            len(new_blobs),
            resource_version,
        )
        decode = self._decode

        def previous(key: str) -> Deferred | None:
            hot = old_hot.get(key, _MISSING)
            if hot is not _MISSING:
                return Deferred.ready(hot)
            blob = old_blobs.get(key)
            return None if blob is None else Deferred(decode, blob)

        return previous

    def _build_indexes(
        self,
        prepared: EncodedList,
        rows: builtins.list[tuple[str, int]],
        indexers: Mapping[str, IndexFunc],
    ) -> tuple[dict[str, _Index], dict[str, dict[str, _Values]], dict[str, dict[str, _Values]]]:
        """Fresh ``_indices``, ``_values`` and ``_singles`` for the keys of
        ``rows`` (key, position in ``prepared``), built without the lock from
        the values computed at collection; indexes the list was not indexed
        for are computed here, decoding each object once."""
        columns: dict[str, builtins.list[_Values]] = {}
        position = {name: j for j, name in enumerate(prepared.names)}
        values_of = prepared.values
        for name in indexers:
            j = position.get(name)
            if j is not None:
                columns[name] = [values_of[i][j] for _, i in rows]
        extra = {name: func for name, func in indexers.items() if name not in position}
        if extra:
            computed = [
                compute_index_values(extra, key, prepared.decode(i), self._on_index_error)
                for key, i in rows
            ]
            for name in extra:
                columns[name] = [c[name] for c in computed]
        indices: dict[str, _Index] = {}
        values: dict[str, dict[str, _Values]] = {}
        singles: dict[str, dict[str, _Values]] = {}
        for name in indexers:
            index: _Index = {}
            by_key: dict[str, _Values] = {}
            shared: dict[str, _Values] = {}
            for (key, _), computed_vals in zip(rows, columns[name], strict=True):
                if not computed_vals:
                    continue
                vals = computed_vals
                if len(vals) == 1:
                    value = vals[0]
                    vals = shared.setdefault(value, vals)
                    present = index.get(value)
                    if present is None:
                        index[value] = {key: None}
                    else:
                        present[key] = None
                else:
                    for value in vals:
                        present = index.get(value)
                        if present is None:
                            index[value] = {key: None}
                        else:
                            present[key] = None
                by_key[key] = vals
            indices[name], values[name], singles[name] = index, by_key, shared
        return indices, values, singles

    def add(self, obj: Any) -> None:
        """Store ``obj`` under its key, replacing any object with that key."""
        key = self.key_of(obj)
        self._store_new(key, obj)

    def update(self, obj: Any) -> None:
        """Store ``obj`` under its key (identical to :meth:`add`)."""
        key = self.key_of(obj)
        self._store_new(key, obj)

    def _store_new(self, key: str, obj: Any) -> None:
        # upsert without decoding the object replaced.
        blob = self._encode_one(key, obj)
        while True:
            indexers = self._indexers
            computed = compute_index_values(indexers, key, obj, self._on_index_error)
            with self._lock:
                if self._indexers is indexers:
                    self._blobs[key] = blob
                    if self._touched:  # before the indexes change
                        self._tell_lru_locked()
                    self._set_values_locked(key, computed)
                    self._make_hot_locked(key, obj)
                    return

    def delete(self, obj: Any) -> None:
        """Remove the object with the key of ``obj``; an unknown key is a no-op."""
        self._remove(self.key_of(obj))

    def replace(self, objects: Iterable[Any], resource_version: str) -> None:
        """Make ``objects`` the whole content, atomically (later duplicates
        win); if a key, index or codec call fails nothing changes. A list
        prepared by this store's buffer (what a
        :class:`~informers.cache.reflector.Reflector` writing to this store hands
        over) is adopted as :meth:`replace_prepared` does."""
        if isinstance(objects, EncodedList) and objects.store is self:
            self.replace_prepared(objects, resource_version)
            return
        objs = objects if isinstance(objects, builtins.list) else builtins.list(objects)
        if self._key_func in _BATCH_KEY_FUNCS:
            keys = meta_namespace_keys(objs, self.key_of)
        else:
            keys = [self.key_of(obj) for obj in objs]
        self.replace_items(dict(zip(keys, objs, strict=True)), resource_version)

    def resync(self) -> None:
        """Does nothing: this store keeps no state that needs resyncing."""

    def add_indexers(self, indexers: Indexers) -> None:
        """Register more indexes and index the stored objects (each decoded
        once, outside the lock; objects written meanwhile are indexed again,
        and after a few such rounds under constant writes the last ones are
        indexed holding the lock, as the default store does). Raises
        :class:`~informers.IndexConflictError` or
        :class:`~informers.IndexFunctionError` registering nothing."""
        new = dict(indexers)
        for name, func in new.items():
            if not isinstance(name, str):
                raise TypeError(f"index names must be str, not {type(name).__name__}")
            if not callable(func):
                raise TypeError(f"index function for {name!r} is not callable")
        if not new:
            return
        with self._lock:
            self._check_conflict_locked(new)
            pending = dict(self._blobs)
        done: dict[str, tuple[bytes, dict[str, _Values]]] = {}
        rounds = 0
        while True:
            for key, blob in pending.items():
                done[key] = (blob, compute_index_values(new, key, self._decode(blob)))
            rounds += 1
            with self._lock:
                self._check_conflict_locked(new)
                blobs = self._blobs
                for key in [k for k in done if k not in blobs]:
                    del done[key]
                pending = {k: b for k, b in blobs.items() if k not in done or done[k][0] is not b}
                if pending and rounds >= _ADD_INDEXERS_ROUNDS:
                    logger.debug("add_indexers: indexing %d objects under the lock", len(pending))
                    for key, blob in pending.items():
                        done[key] = (blob, compute_index_values(new, key, self._decode(blob)))
                    pending = {}
                if not pending:
                    self._indexers = {**self._indexers, **new}
                    for name in new:
                        self._indices[name] = {}
                        self._values[name] = {}
                        self._singles[name] = {}
                    for key, (_, computed) in done.items():
                        self._set_values_locked(key, computed)
                    return

    def _check_conflict_locked(self, new: Mapping[str, IndexFunc]) -> None:
        conflicts = sorted(name for name in new if name in self._indexers)
        if conflicts:
            raise IndexConflictError(conflicts)

    # ------------------------------------------------------------------ reads

    def _snapshot_locked(
        self, keys: Iterable[str], *, cache: bool
    ) -> builtins.list[tuple[str, Any, bytes | None]]:
        """``(key, hot object or _MISSING, blob or None)`` for each key, read
        under the lock the caller holds; with ``cache``, the hot keys count as
        used."""
        hot, blobs = self._hot, self._blobs
        snapshot = [(key, hot.get(key, _MISSING), blobs.get(key)) for key in keys]
        if cache and self._lru is not None:
            self._touch_locked([key for key, obj, _ in snapshot if obj is not _MISSING])
        return snapshot

    def _materialise(
        self, snapshot: builtins.list[tuple[str, Any, bytes | None]], *, cache: bool
    ) -> builtins.list[Any]:
        """The snapshot's objects (``None`` for a key that had no blob): hot
        ones as they are, the rest decoded here, outside the lock, and made
        hot with ``cache`` if unchanged since."""
        decode = self._decode
        out = [
            obj if obj is not _MISSING else (None if blob is None else decode(blob))
            for _, obj, blob in snapshot
        ]
        if cache and self._lru is not None:
            decoded = [
                (key, blob, got)
                for (key, obj, blob), got in zip(snapshot, out, strict=True)
                if obj is _MISSING and blob is not None
            ]
            if decoded:
                with self._lock:
                    blobs, hot = self._blobs, self._hot
                    for key, blob, got in decoded:
                        if blobs.get(key) is blob and key not in hot:
                            self._make_hot_locked(key, got)
        return out

    def get_by_key(self, key: str) -> Any | None:
        """The object stored under ``key`` (made hot), or ``None``."""
        lock = self._lock
        lock.acquire()
        try:
            # (A stored None is never found here: it is decoded below.)
            obj = self._hot.get(key)
            if obj is not None:
                touched = self._touched
                touched.append(key)
                if len(touched) >= self._touch_limit:
                    self._tell_lru_locked()
                return obj
            blob = self._blobs.get(key)
        finally:
            lock.release()
        if blob is None:
            return None
        obj = self._decode(blob)
        if self._lru is not None:
            with self._lock:
                if self._blobs.get(key) is blob and key not in self._hot:
                    self._make_hot_locked(key, obj)
        return obj

    def get(self, obj: Any) -> Any | None:
        """The stored object with the key of ``obj``, or ``None``."""
        return self.get_by_key(self.key_of(obj))

    def get_many(self, keys: Iterable[str]) -> builtins.list[Any | None]:
        """``[get_by_key(k) for k in keys]`` from one snapshot (``None`` for
        each unknown key); decodes without making the objects hot."""
        with self._lock:
            snapshot = self._snapshot_locked(keys, cache=False)
        return self._materialise(snapshot, cache=False)

    def list(self) -> builtins.list[Any]:
        """All objects, in a new list (no guaranteed order); objects that are
        not hot are decoded, not made hot (a scan keeps the hot set)."""
        with self._lock:
            hot = self._hot
            snapshot = [(hot.get(key, _MISSING), blob) for key, blob in self._blobs.items()]
        decode = self._decode
        return [decode(blob) if obj is _MISSING else obj for obj, blob in snapshot]

    def list_keys(self) -> builtins.list[str]:
        """All keys, in a new list (no guaranteed order)."""
        with self._lock:
            return builtins.list(self._blobs)

    def resync_items(self) -> builtins.list[Deferred]:
        """Every object, as a :class:`~informers.cache.listbuffer.Deferred`
        decoded on first use outside the lock (a hot one is ready), from one
        snapshot: what an informer's resync hands its handlers. Decodes
        nothing and leaves the hot set as it is."""
        with self._lock:
            hot = self._hot
            snapshot = [(hot.get(key, _MISSING), blob) for key, blob in self._blobs.items()]
        decode = self._decode
        return [
            Deferred(decode, blob) if obj is _MISSING else Deferred.ready(obj)
            for obj, blob in snapshot
        ]

    def by_index(self, index_name: str, indexed_value: str) -> builtins.list[Any]:
        """The objects indexed under ``indexed_value`` in ``index_name`` (made
        hot), in a new list, in the order their keys entered that value."""
        lock = self._lock
        lock.acquire()
        try:
            index = self._indices.get(index_name)
            if index is None:
                raise UnknownIndexError(index_name)
            keys = index.get(indexed_value)
            if keys is None:
                return []
            hot = self._hot
            touched = self._touched
            if len(keys) == 1:
                for key in keys:
                    obj = hot.get(key, _MISSING)
                    if obj is not _MISSING:
                        touched.append(key)
                        if len(touched) >= self._touch_limit:
                            self._tell_lru_locked()
                        return [obj]
            try:
                out = [hot[key] for key in keys]
            except KeyError:
                # Some are not hot: the whole result from this snapshot,
                # decoded after the lock is released.
                snapshot = self._snapshot_locked(keys, cache=True)
            else:
                touched.append((index_name, indexed_value))
                if len(touched) >= self._touch_limit:
                    self._tell_lru_locked()
                return out
        finally:
            lock.release()
        return self._materialise(snapshot, cache=True)

    def index_keys(self, index_name: str, indexed_value: str) -> builtins.list[str]:
        """The keys of the objects indexed under ``indexed_value``, in a new list."""
        with self._lock:
            index = self._indices.get(index_name)
            if index is None:
                raise UnknownIndexError(index_name)
            return builtins.list(index.get(indexed_value, ()))

    def _describe(self, obj: Any) -> str:
        """How an error message names ``obj``: its key, or ``<no key>``."""
        try:
            return self.key_of(obj)
        except ObjectKeyError:
            return "<no key>"

    def index(self, index_name: str, obj: Any) -> builtins.list[Any]:
        """The stored objects sharing at least one value with ``obj`` in
        ``index_name`` (each once); the index function runs on ``obj``
        outside the lock."""
        func = self._indexers.get(index_name)
        if func is None:
            raise UnknownIndexError(index_name)
        wanted = checked_index_values(index_name, func, obj, self._describe)
        with self._lock:
            index = self._indices[index_name]
            keys: dict[str, None] = {}
            for value in wanted:
                keys.update(index.get(value, {}))
            snapshot = self._snapshot_locked(keys, cache=True)
        return self._materialise(snapshot, cache=True)

    def list_index_func_values(self, index_name: str) -> builtins.list[str]:
        """Every value at least one object is indexed under in ``index_name``."""
        with self._lock:
            index = self._indices.get(index_name)
            if index is None:
                raise UnknownIndexError(index_name)
            return builtins.list(index)

    def get_indexers(self) -> dict[str, IndexFunc]:
        """The registered index functions by name, in a new dict."""
        return dict(self._indexers)


if TYPE_CHECKING:
    _protocol_check: IndexedStore = CompactStore()
