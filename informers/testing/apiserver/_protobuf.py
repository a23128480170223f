"""Decoding of Kubernetes protobuf request bodies into JSON-shaped dicts.

kubectl 1.32 and later send the objects of their imperative ``create``
commands (``create namespace|configmap|secret|deployment|service|job|
cronjob|ingress|serviceaccount``) as ``application/vnd.kubernetes.protobuf``:
the four magic bytes ``k8s\\0`` and then a ``runtime.Unknown`` message::

    Unknown  { 1: TypeMeta {1: apiVersion, 2: kind}, 2: raw (the object's own
               encoding), 3: contentEncoding, 4: contentType }

:func:`decode_object` decodes the object with a table of message schemas
(field number -> JSON name and type) covering what those commands set:
``ObjectMeta``, ConfigMap, Secret, Namespace, ServiceAccount, Service,
Deployment, Job, CronJob and Ingress, with the pod template fields kubectl
fills (containers with image, command, args, ports, env, resources, ...).
The result has the shape the JSON form would have: zero values are left out
(except for fields the Go types hold as pointers, where presence matters),
bytes are base64-encoded, ``IntOrString`` becomes an int or a string.

A field this table does not know is skipped only when it carries the zero
value (Go's encoder writes every non-pointer field); one that carries data
raises :class:`UnsupportedMediaError` rather than being dropped, so an object
is never stored with part of it silently lost. Other kinds raise it too; the
server answers 415. Hand-written wire decoding (varints, fixed 32/64-bit
fields, length-delimited fields, map entries). Pure functions, thread-safe.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from informers.errors import InformersError

__all__ = [
    "MAGIC",
    "PROTOBUF_MEDIA_TYPE",
    "SUPPORTED_KINDS",
    "UnsupportedMediaError",
    "decode_object",
]

PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
#: Every Kubernetes protobuf body starts with these bytes.
MAGIC = b"k8s\x00"

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5

#: Decodes one field value given its wire type and raw value.
_Decode = Callable[[int, Any], Any]


class UnsupportedMediaError(InformersError, ValueError):
    """The protobuf body cannot be decoded here (malformed, or a kind this
    emulator has no protobuf schema for); the server answers 415."""


def decode_object(
    body: bytes, more: Mapping[tuple[str, str], _Message] | None = None
) -> dict[str, Any]:
    """Decode a ``k8s\\0``-prefixed protobuf body into the object's JSON form
    (``apiVersion`` and ``kind`` included). ``more`` adds message schemas
    by ``(apiVersion, kind)`` to this module's own.

    Raises :class:`UnsupportedMediaError` for malformed bodies and kinds
    without a schema.
    """
    if not body.startswith(MAGIC):
        raise UnsupportedMediaError("protobuf body does not start with the k8s magic prefix")
    try:
        return _decode_unknown(memoryview(body)[len(MAGIC) :], more or {})
    except _WireError as exc:
        raise UnsupportedMediaError(f"malformed protobuf body: {exc}") from exc


class _WireError(Exception):
    """The bytes are not a valid protobuf encoding of the expected message."""


def _read_varint(data: memoryview, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise _WireError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise _WireError("varint longer than 10 bytes")


def _fields(data: memoryview) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) for every field of a message:
    an int for varints and fixed fields, a memoryview for length-delimited."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _WireError("field number 0")
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
            yield number, wire, value
        elif wire == _BYTES:
            length, pos = _read_varint(data, pos)
            if pos + length > len(data):
                raise _WireError("length-delimited field runs past the end")
            yield number, wire, data[pos : pos + length]
            pos += length
        elif wire == _FIXED64:
            if pos + 8 > len(data):
                raise _WireError("truncated fixed64")
            yield number, wire, int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == _FIXED32:
            if pos + 4 > len(data):
                raise _WireError("truncated fixed32")
            yield number, wire, int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise _WireError(f"unsupported wire type {wire}")


def _expect_bytes(wire: int, value: Any) -> memoryview:
    if wire != _BYTES:
        raise _WireError("expected a length-delimited field")
    assert isinstance(value, memoryview)
    return value


def _expect_varint(wire: int, value: Any) -> int:
    if wire != _VARINT:
        raise _WireError("expected a varint field")
    assert isinstance(value, int)
    return value


def _string(wire: int, value: Any) -> str:
    try:
        return bytes(_expect_bytes(wire, value)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _WireError("string field is not UTF-8") from exc


def _int64(wire: int, value: Any) -> int:
    number = _expect_varint(wire, value)
    return number - (1 << 64) if number >= 1 << 63 else number


def _map_entry(data: memoryview, value_of: _Decode) -> tuple[str, Any]:
    key, value, seen = "", None, False
    for number, wire, raw in _fields(data):
        if number == 1:
            key = _string(wire, raw)
        elif number == 2:
            value, seen = value_of(wire, raw), True
    if not seen:
        value = value_of(_BYTES, memoryview(b""))
    return key, value


def _bytes_b64(wire: int, value: Any) -> str:
    return base64.b64encode(bytes(_expect_bytes(wire, value))).decode("ascii")


def _bool(wire: int, value: Any) -> bool:
    return bool(_expect_varint(wire, value))


def _time_value(wire: int, value: Any) -> str | None:
    """A ``meta.v1.Time`` (seconds, nanos) as RFC 3339; ``None`` for the zero time."""
    seconds = nanos = 0
    for number, field_wire, raw in _fields(_expect_bytes(wire, value)):
        if number == 1:
            seconds = _int64(field_wire, raw)
        elif number == 2:
            nanos = _int64(field_wire, raw)
    if seconds == 0 and nanos == 0:
        return None
    try:
        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise _WireError("timestamp out of range") from exc
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _quantity(wire: int, value: Any) -> str:
    """``resource.Quantity`` {1: string}."""
    text = ""
    for number, field_wire, raw in _fields(_expect_bytes(wire, value)):
        if number == 1:
            text = _string(field_wire, raw)
    return text


def _int_or_string(wire: int, value: Any) -> int | str:
    """``util.intstr.IntOrString`` {1: type (0 int, 1 string), 2: intVal, 3: strVal}."""
    kind, number_value, text = 0, 0, ""
    for number, field_wire, raw in _fields(_expect_bytes(wire, value)):
        if number == 1:
            kind = _int64(field_wire, raw)
        elif number == 2:
            number_value = _int64(field_wire, raw)
        elif number == 3:
            text = _string(field_wire, raw)
    return text if kind == 1 else number_value


@dataclass(frozen=True, slots=True)
class _Field:
    """How one protobuf field maps to JSON. ``keep`` keeps zero values (Go
    pointer fields: present means set); ``inline`` merges a message's fields
    into the parent (Go embedded structs with ``json:",inline"``)."""

    name: str
    decode: _Decode
    repeated: bool = False
    is_map: bool = False
    keep: bool = False
    inline: bool = False


@dataclass(slots=True)
class _Message:
    """A message schema: field number -> :class:`_Field`. ``name`` is for errors."""

    name: str
    fields: dict[int, _Field] = field(default_factory=dict)


def _message(schema: _Message) -> _Decode:
    def decode(wire: int, value: Any) -> dict[str, Any]:
        return _decode_message(_expect_bytes(wire, value), schema)

    return decode


def _is_zero(wire: int, value: Any, depth: int = 0) -> bool:
    """Whether an unknown field holds its zero value (0, empty, or a message of
    zero values), so dropping it loses nothing."""
    if wire != _BYTES:
        return bool(value == 0)
    if len(value) == 0:
        return True
    if depth > 16:
        return False
    try:
        return all(_is_zero(w, v, depth + 1) for _, w, v in _fields(value))
    except _WireError:
        return False


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value is False or value == 0 or value in ({}, [])


def _decode_message(data: memoryview, schema: _Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        spec = schema.fields.get(number)
        if spec is None:
            if not _is_zero(wire, raw):
                raise UnsupportedMediaError(
                    f"protobuf field {number} of {schema.name} is not understood by this "
                    "emulator; send the object as JSON instead (for kubectl: "
                    "kubectl create ... --dry-run=client -o yaml | kubectl create -f -)"
                )
            continue
        if spec.is_map:
            key, value = _map_entry(_expect_bytes(wire, raw), spec.decode)
            out.setdefault(spec.name, {})[key] = value
        elif spec.repeated:
            out.setdefault(spec.name, []).append(spec.decode(wire, raw))
        elif spec.inline:
            out.update(spec.decode(wire, raw))
        else:
            value = spec.decode(wire, raw)
            if spec.keep and value is not None:
                out[spec.name] = value
            elif _is_empty(value):
                out.pop(spec.name, None)
            else:
                out[spec.name] = value
    return out


def _schema(name: str, **fields: _Field) -> _Message:
    """Build a schema from keyword arguments ``f<number>=_Field(...)``."""
    return _Message(name, {int(key[1:]): spec for key, spec in fields.items()})


def _s(name: str, *, keep: bool = False) -> _Field:
    return _Field(name, _string, keep=keep)


def _i(name: str, *, keep: bool = False) -> _Field:
    return _Field(name, _int64, keep=keep)


def _b(name: str, *, keep: bool = False) -> _Field:
    return _Field(name, _bool, keep=keep)


def _m(name: str, schema: _Message, *, keep: bool = False) -> _Field:
    return _Field(name, _message(schema), keep=keep)


def _rep(name: str, decode: _Decode) -> _Field:
    return _Field(name, decode, repeated=True)


def _map(name: str, decode: _Decode = _string) -> _Field:
    return _Field(name, decode, is_map=True)


_IGNORED = _Field("", lambda wire, value: None)

# ---------------------------------------------------------------- meta/v1

OWNER_REFERENCE = _schema(
    "OwnerReference",
    f1=_s("kind"),
    f3=_s("name"),
    f4=_s("uid"),
    f5=_s("apiVersion"),
    f6=_b("controller", keep=True),
    f7=_b("blockOwnerDeletion", keep=True),
)
OBJECT_META = _schema(
    "ObjectMeta",
    f1=_s("name"),
    f2=_s("generateName"),
    f3=_s("namespace"),
    f4=_s("selfLink"),
    f5=_s("uid"),
    f6=_s("resourceVersion"),
    f7=_i("generation"),
    f8=_Field("creationTimestamp", _time_value),
    f9=_Field("deletionTimestamp", _time_value),
    f10=_i("deletionGracePeriodSeconds", keep=True),
    f11=_map("labels"),
    f12=_map("annotations"),
    f13=_rep("ownerReferences", _message(OWNER_REFERENCE)),
    f14=_rep("finalizers", _string),
    f17=_IGNORED,  # managedFields: the server's business
)
LABEL_SELECTOR = _schema(
    "LabelSelector",
    f1=_map("matchLabels"),
    f2=_rep(
        "matchExpressions",
        _message(
            _schema(
                "LabelSelectorRequirement",
                f1=_s("key"),
                f2=_s("operator"),
                f3=_rep("values", _string),
            )
        ),
    ),
)

# ---------------------------------------------------------------- core/v1

LOCAL_OBJECT_REFERENCE = _schema("LocalObjectReference", f1=_s("name"))
CONTAINER_PORT = _schema(
    "ContainerPort",
    f1=_s("name"),
    f2=_i("hostPort"),
    f3=_i("containerPort"),
    f4=_s("protocol"),
    f5=_s("hostIP"),
)
ENV_VAR = _schema("EnvVar", f1=_s("name"), f2=_s("value"))
RESOURCE_REQUIREMENTS = _schema(
    "ResourceRequirements", f1=_map("limits", _quantity), f2=_map("requests", _quantity)
)
CONTAINER = _schema(
    "Container",
    f1=_s("name"),
    f2=_s("image"),
    f3=_rep("command", _string),
    f4=_rep("args", _string),
    f5=_s("workingDir"),
    f6=_rep("ports", _message(CONTAINER_PORT)),
    f7=_rep("env", _message(ENV_VAR)),
    f8=_m("resources", RESOURCE_REQUIREMENTS),
    f13=_s("terminationMessagePath"),
    f14=_s("imagePullPolicy"),
    f16=_b("stdin"),
    f17=_b("stdinOnce"),
    f18=_b("tty"),
    f20=_s("terminationMessagePolicy"),
)
POD_SPEC = _schema(
    "PodSpec",
    f2=_rep("containers", _message(CONTAINER)),
    f3=_s("restartPolicy"),
    f4=_i("terminationGracePeriodSeconds", keep=True),
    f5=_i("activeDeadlineSeconds", keep=True),
    f6=_s("dnsPolicy"),
    f7=_map("nodeSelector"),
    f8=_s("serviceAccountName"),
    f9=_s("serviceAccount"),
    f10=_s("nodeName"),
    f11=_b("hostNetwork"),
    f12=_b("hostPID"),
    f13=_b("hostIPC"),
    f15=_rep("imagePullSecrets", _message(LOCAL_OBJECT_REFERENCE)),
    f16=_s("hostname"),
    f17=_s("subdomain"),
    f19=_s("schedulerName"),
    f20=_rep("initContainers", _message(CONTAINER)),
    f21=_b("automountServiceAccountToken", keep=True),
    f24=_s("priorityClassName"),
    f25=_i("priority", keep=True),
)
POD_TEMPLATE_SPEC = _schema(
    "PodTemplateSpec", f1=_m("metadata", OBJECT_META), f2=_m("spec", POD_SPEC)
)
CONFIG_MAP = _schema(
    "ConfigMap",
    f1=_m("metadata", OBJECT_META),
    f2=_map("data"),
    f3=_map("binaryData", _bytes_b64),
    f4=_b("immutable", keep=True),
)
SECRET = _schema(
    "Secret",
    f1=_m("metadata", OBJECT_META),
    f2=_map("data", _bytes_b64),
    f3=_s("type"),
    f4=_map("stringData"),
    f5=_b("immutable", keep=True),
)
NAMESPACE = _schema(
    "Namespace",
    f1=_m("metadata", OBJECT_META),
    f2=_m("spec", _schema("NamespaceSpec", f1=_rep("finalizers", _string)), keep=True),
    f3=_m(
        "status",
        _schema(
            "NamespaceStatus",
            f1=_s("phase"),
            f2=_rep(
                "conditions",
                _message(
                    _schema(
                        "NamespaceCondition",
                        f1=_s("type"),
                        f2=_s("status"),
                        f4=_Field("lastTransitionTime", _time_value),
                        f5=_s("reason"),
                        f6=_s("message"),
                    )
                ),
            ),
        ),
        keep=True,
    ),
)
SERVICE_ACCOUNT = _schema(
    "ServiceAccount",
    f1=_m("metadata", OBJECT_META),
    f3=_rep("imagePullSecrets", _message(LOCAL_OBJECT_REFERENCE)),
    f4=_b("automountServiceAccountToken", keep=True),
)
SERVICE_PORT = _schema(
    "ServicePort",
    f1=_s("name"),
    f2=_s("protocol"),
    f3=_i("port"),
    f4=_Field("targetPort", _int_or_string),
    f5=_i("nodePort"),
    f6=_s("appProtocol", keep=True),
)
SERVICE = _schema(
    "Service",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "ServiceSpec",
            f1=_rep("ports", _message(SERVICE_PORT)),
            f2=_map("selector"),
            f3=_s("clusterIP"),
            f4=_s("type"),
            f5=_rep("externalIPs", _string),
            f7=_s("sessionAffinity"),
            f8=_s("loadBalancerIP"),
            f9=_rep("loadBalancerSourceRanges", _string),
            f10=_s("externalName"),
            f11=_s("externalTrafficPolicy"),
            f12=_i("healthCheckNodePort"),
            f13=_b("publishNotReadyAddresses"),
        ),
    ),
    f3=_m(
        "status",
        _schema(
            "ServiceStatus",
            f1=_m(
                "loadBalancer",
                _schema(
                    "LoadBalancerStatus",
                    f1=_rep(
                        "ingress",
                        _message(_schema("LoadBalancerIngress", f1=_s("ip"), f2=_s("hostname"))),
                    ),
                ),
            ),
        ),
    ),
)

# ---------------------------------------------------------------- apps, batch

DEPLOYMENT = _schema(
    "Deployment",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "DeploymentSpec",
            f1=_i("replicas", keep=True),
            f2=_m("selector", LABEL_SELECTOR),
            f3=_m("template", POD_TEMPLATE_SPEC),
            f4=_m("strategy", _schema("DeploymentStrategy", f1=_s("type"))),
            f5=_i("minReadySeconds"),
            f6=_i("revisionHistoryLimit", keep=True),
            f7=_b("paused"),
            f9=_i("progressDeadlineSeconds", keep=True),
        ),
    ),
    f3=_m(
        "status",
        _schema(
            "DeploymentStatus",
            f1=_i("observedGeneration"),
            f2=_i("replicas"),
            f3=_i("updatedReplicas"),
            f4=_i("availableReplicas"),
            f5=_i("unavailableReplicas"),
            f7=_i("readyReplicas"),
        ),
    ),
)
JOB_SPEC = _schema(
    "JobSpec",
    f1=_i("parallelism", keep=True),
    f2=_i("completions", keep=True),
    f3=_i("activeDeadlineSeconds", keep=True),
    f4=_m("selector", LABEL_SELECTOR),
    f5=_b("manualSelector", keep=True),
    f6=_m("template", POD_TEMPLATE_SPEC),
    f7=_i("backoffLimit", keep=True),
    f8=_i("ttlSecondsAfterFinished", keep=True),
    f10=_b("suspend", keep=True),
)
JOB = _schema(
    "Job",
    f1=_m("metadata", OBJECT_META),
    f2=_m("spec", JOB_SPEC),
    f3=_m(
        "status",
        _schema("JobStatus", f4=_i("active"), f5=_i("succeeded"), f6=_i("failed")),
    ),
)
CRON_JOB = _schema(
    "CronJob",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "CronJobSpec",
            f1=_s("schedule"),
            f2=_i("startingDeadlineSeconds", keep=True),
            f3=_s("concurrencyPolicy"),
            f4=_b("suspend", keep=True),
            f5=_m(
                "jobTemplate",
                _schema("JobTemplateSpec", f1=_m("metadata", OBJECT_META), f2=_m("spec", JOB_SPEC)),
            ),
            f6=_i("successfulJobsHistoryLimit", keep=True),
            f7=_i("failedJobsHistoryLimit", keep=True),
            f8=_s("timeZone", keep=True),
        ),
    ),
    f3=_m("status", _schema("CronJobStatus")),
)

# ---------------------------------------------------------------- networking

INGRESS_BACKEND = _schema(
    "IngressBackend",
    f3=_m(
        "resource",
        _schema(
            "TypedLocalObjectReference", f1=_s("apiGroup", keep=True), f2=_s("kind"), f3=_s("name")
        ),
    ),
    f4=_m(
        "service",
        _schema(
            "IngressServiceBackend",
            f1=_s("name"),
            f2=_m("port", _schema("ServiceBackendPort", f1=_s("name"), f2=_i("number"))),
        ),
    ),
)
HTTP_INGRESS_PATH = _schema(
    "HTTPIngressPath",
    f1=_s("path"),
    f2=_m("backend", INGRESS_BACKEND),
    f3=_s("pathType", keep=True),
)
INGRESS = _schema(
    "Ingress",
    f1=_m("metadata", OBJECT_META),
    f2=_m(
        "spec",
        _schema(
            "IngressSpec",
            f1=_m("defaultBackend", INGRESS_BACKEND),
            f2=_rep(
                "tls",
                _message(_schema("IngressTLS", f1=_rep("hosts", _string), f2=_s("secretName"))),
            ),
            f3=_rep(
                "rules",
                _message(
                    _schema(
                        "IngressRule",
                        f1=_s("host"),
                        f2=_Field(
                            "",
                            _message(
                                _schema(
                                    "IngressRuleValue",
                                    f1=_m(
                                        "http",
                                        _schema(
                                            "HTTPIngressRuleValue",
                                            f1=_rep("paths", _message(HTTP_INGRESS_PATH)),
                                        ),
                                    ),
                                )
                            ),
                            inline=True,
                        ),
                    )
                ),
            ),
            f4=_s("ingressClassName", keep=True),
        ),
    ),
    f3=_m("status", _schema("IngressStatus")),
)

_SCHEMAS: dict[tuple[str, str], _Message] = {
    ("v1", "ConfigMap"): CONFIG_MAP,
    ("v1", "Secret"): SECRET,
    ("v1", "Namespace"): NAMESPACE,
    ("v1", "ServiceAccount"): SERVICE_ACCOUNT,
    ("v1", "Service"): SERVICE,
    ("apps/v1", "Deployment"): DEPLOYMENT,
    ("batch/v1", "Job"): JOB,
    ("batch/v1", "CronJob"): CRON_JOB,
    ("networking.k8s.io/v1", "Ingress"): INGRESS,
}

#: The (apiVersion, kind) pairs :func:`decode_object` understands.
SUPPORTED_KINDS = frozenset(_SCHEMAS)


def _decode_unknown(data: memoryview, more: Mapping[tuple[str, str], _Message]) -> dict[str, Any]:
    api_version = kind = ""
    raw = memoryview(b"")
    encoding = ""
    for number, wire, value in _fields(data):
        if number == 1:
            for n, w, v in _fields(_expect_bytes(wire, value)):
                if n == 1:
                    api_version = _string(w, v)
                elif n == 2:
                    kind = _string(w, v)
        elif number == 2:
            raw = _expect_bytes(wire, value)
        elif number == 3:
            encoding = _string(wire, value)
    if encoding:
        raise UnsupportedMediaError(f"protobuf content encoding {encoding!r} is not supported")
    schema = _SCHEMAS.get((api_version, kind)) or more.get((api_version, kind))
    if schema is None:
        shown = f"{api_version}/{kind}" if api_version or kind else "an object without a kind"
        raise UnsupportedMediaError(
            f"protobuf bodies of {shown} are not supported by this server; send application/json"
        )
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    obj.update(_decode_message(raw, schema))
    return obj
