"""Validation of the core kinds besides Pod (k8s.io/kubernetes
``pkg/apis/core/validation``): Service (type, ports, node ports, cluster
IPs; the cluster IP may not change once set), ConfigMap and Secret (keys, the 1 MiB
limit, typed Secrets' required keys, ``immutable``), and
coordination.k8s.io Lease.

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from typing import Any

from informers.testing.apiserver._validation import names
from informers.testing.apiserver._validation.errors import (
    FieldErrors,
    go_json_error,
    go_quote,
    go_strings,
)

__all__ = [
    "MAX_DATA_BYTES",
    "config_map",
    "config_map_update",
    "lease",
    "secret",
    "secret_update",
    "service",
    "service_update",
    "valid_ip",
]

#: ``MaxSecretSize``: a ConfigMap's or Secret's data, in bytes.
MAX_DATA_BYTES = 1024 * 1024

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_IMMUTABLE_SET = "field is immutable when `immutable` is set"


def valid_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _render_port(protocol: Any, port: Any) -> str:
    """The ``core.ServicePort{Protocol, Port}`` key a duplicate port reports."""
    return (
        f'core.ServicePort{{Name:"", Protocol:{go_quote(str(protocol))}, '
        f"AppProtocol:(*string)(nil), Port:{port}, TargetPort:intstr.IntOrString{{Type:0, "
        'IntVal:0, StrVal:""}, NodePort:0}'
    )


def _target_port(errs: FieldErrors, path: str, target: Any) -> None:
    """``ValidatePortNumOrName`` (0 or unset: defaulted to the port)."""
    if isinstance(target, int) and not isinstance(target, bool):
        if target != 0 and not 1 <= target <= 65535:
            errs.invalid(path, target, _PORT_RANGE)
    elif isinstance(target, str) and target:
        for msg in names.port_name(target):
            errs.invalid(path, target, msg)


def _node_ports(errs: FieldErrors, kind: Any, ports: list[Any]) -> None:
    """No node ports on a ClusterIP Service, none twice for one protocol
    (their range and uniqueness across Services are the allocator's)."""
    seen: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict) or not port.get("nodePort"):
            continue
        if kind == "ClusterIP":
            errs.forbidden(
                f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"
            )
        key = (str(port.get("protocol", "TCP")), port["nodePort"])
        if key in seen:
            errs.duplicate(f"spec.ports[{i}].nodePort", port["nodePort"])
        seen.add(key)


def service(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateService``: ports (named when more than one, unique names,
    in range, unique by port and protocol), node ports (not on ClusterIP
    Services, unique by node port and protocol), type, session affinity,
    cluster IPs, external name."""
    spec = _spec(obj)
    kind = spec.get("type", "ClusterIP")
    headless = spec.get("clusterIP") == "None"
    ports = spec.get("ports") or []
    if not isinstance(ports, list):
        errs.invalid("spec.ports", ports, "must be a list")
        ports = []
    if not ports and not headless and kind != "ExternalName":
        errs.required("spec.ports", "")
    if kind == "ExternalName":
        external = spec.get("externalName")
        if not external:
            errs.required("spec.externalName", "")
        else:
            for msg in names.dns1123_subdomain(str(external).rstrip(".")):
                errs.invalid("spec.externalName", external, msg)
    names_seen: set[str] = set()
    for i, port in enumerate(ports):
        here = f"spec.ports[{i}]"
        if not isinstance(port, dict):
            errs.invalid(here, port, "must be an object")
            continue
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            errs.required(f"{here}.name", "")
        elif name:
            for msg in names.dns1123_label(str(name)):
                errs.invalid(f"{here}.name", name, msg)
            if name in names_seen:
                errs.duplicate(f"{here}.name", name)
            names_seen.add(str(name))
        number = port.get("port")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 65535:
            errs.invalid(f"{here}.port", number, _PORT_RANGE)
        protocol = port.get("protocol", "TCP")
        if not protocol:
            errs.required(f"{here}.protocol", "")
        elif protocol not in _PROTOCOLS:
            errs.not_supported(f"{here}.protocol", protocol, _PROTOCOLS)
        _target_port(errs, f"{here}.targetPort", port.get("targetPort"))
    if kind not in _SERVICE_TYPES:
        errs.not_supported("spec.type", kind, _SERVICE_TYPES)
    _node_ports(errs, kind, ports)
    seen: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        key = (str(port.get("protocol", "TCP")), port.get("port"))
        if key in seen:
            errs.duplicate(f"spec.ports[{i}]", None, shown=_render_port(*key))
        seen.add(key)
    affinity = spec.get("sessionAffinity", "None")
    if affinity not in ("ClientIP", "None"):
        errs.not_supported("spec.sessionAffinity", affinity, ("ClientIP", "None"))
    for i, ip in enumerate(spec.get("clusterIPs") or []):
        if ip != "None" and not valid_ip(str(ip)):
            errs.invalid(
                f"spec.clusterIPs[{i}]",
                ip,
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            )
    cluster_ip = spec.get("clusterIP")
    if cluster_ip and cluster_ip != "None" and not valid_ip(str(cluster_ip)):
        errs.invalid(
            "spec.clusterIPs[0]",
            cluster_ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )


def service_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """The cluster IP of a Service may not change once set (unless it
    becomes, or stops being, an ExternalName Service)."""
    new_spec, old_spec = _spec(new), _spec(old)
    if "ExternalName" in (new_spec.get("type"), old_spec.get("type")):
        return
    old_ip, new_ip = old_spec.get("clusterIP"), new_spec.get("clusterIP")
    old_ips = old_spec.get("clusterIPs") or ([old_ip] if old_ip else [])
    new_ips = new_spec.get("clusterIPs") or ([new_ip] if new_ip else [])
    if old_ip and new_ip and new_ip != old_ip:
        new_ips = [new_ip, *new_ips[1:]]
    if old_ips and new_ips and new_ips[0] != old_ips[0]:
        errs.invalid(
            "spec.clusterIPs[0]", None, "may not change once set", shown=go_strings(new_ips)
        )


def _size(values: dict[str, Any], binary: bool) -> int:
    total = 0
    for value in values.values():
        text = str(value)
        if binary:
            try:
                total += len(base64.b64decode(text))
            except (binascii.Error, ValueError):
                total += len(text)
        else:
            total += len(text.encode())
    return total


def _data(errs: FieldErrors, obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errs.invalid(key, value, "must be a map of strings")
        return {}
    return value


def config_map(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateConfigMap``: keys, no key in both ``data`` and
    ``binaryData``, 1 MiB in all."""
    data, binary = _data(errs, obj, "data"), _data(errs, obj, "binaryData")
    for key in sorted(data):
        for msg in names.config_key(key):
            errs.invalid(f"data[{key}]", key, msg)
        if key in binary:
            errs.invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
    for key in sorted(binary):
        for msg in names.config_key(key):
            errs.invalid(f"binaryData[{key}]", key, msg)
        if key in data:
            errs.invalid(f"binaryData[{key}]", key, "duplicate of key present in data")
    if _size(data, False) + _size(binary, True) > MAX_DATA_BYTES:
        errs.too_long("[]", MAX_DATA_BYTES)


def _immutable(
    errs: FieldErrors, new: dict[str, Any], old: dict[str, Any], fields: tuple[str, ...]
) -> None:
    if old.get("immutable") is not True:
        return
    if new.get("immutable") is not True:
        errs.forbidden("immutable", _IMMUTABLE_SET)
    for field in fields:
        if (new.get(field) or {}) != (old.get(field) or {}):
            errs.forbidden(field, _IMMUTABLE_SET)


def config_map_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """An ``immutable: true`` ConfigMap keeps its data (and stays immutable)."""
    _immutable(errs, new, old, ("data", "binaryData"))


def _decoded(data: dict[str, Any], key: str) -> bytes | None:
    if key not in data:
        return None
    try:
        return base64.b64decode(str(data[key]))
    except (binascii.Error, ValueError):
        return b""


def secret(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateSecret``: keys, 1 MiB, and the keys each typed Secret needs."""
    data = _data(errs, obj, "data")
    for key in sorted(data):
        for msg in names.config_key(key):
            errs.invalid(f"data[{key}]", key, msg)
    if _size(data, True) > MAX_DATA_BYTES:
        errs.too_long("data", MAX_DATA_BYTES)
    kind = obj.get("type") or "Opaque"
    meta = obj.get("metadata") or {}
    if kind == "kubernetes.io/service-account-token":
        annotations = meta.get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            errs.required("metadata.annotations[kubernetes.io/service-account.name]", "")
    elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        key = ".dockercfg" if kind == "kubernetes.io/dockercfg" else ".dockerconfigjson"
        raw = _decoded(data, key)
        if raw is None:
            errs.required(f"data[{key}]", "")
        else:
            problem = go_json_error(raw)
            if problem is not None:
                errs.invalid(f"data[{key}]", "<secret contents redacted>", problem)
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            errs.required("data[username]", "")
            errs.required("data[password]", "")
    elif kind == "kubernetes.io/ssh-auth":
        if not _decoded(data, "ssh-privatekey"):
            errs.required("data[ssh-privatekey]", "")
    elif kind == "kubernetes.io/tls":
        for key in ("tls.crt", "tls.key"):
            if key not in data:
                errs.required(f"data[{key}]", "")


def secret_update(errs: FieldErrors, new: dict[str, Any], old: dict[str, Any]) -> None:
    """A Secret's type is immutable, and an ``immutable: true`` one keeps its data."""
    new_type, old_type = new.get("type") or "Opaque", old.get("type") or "Opaque"
    if new_type != old_type:
        errs.immutable("type", new_type)
    _immutable(errs, new, old, ("data",))


def lease(errs: FieldErrors, obj: dict[str, Any]) -> None:
    """``ValidateLeaseSpec``: a positive duration, no negative transitions."""
    spec = _spec(obj)
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
