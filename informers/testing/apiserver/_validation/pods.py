"""Pod and pod-template validation (k8s.io/kubernetes
``pkg/apis/core/validation``: ``ValidatePodSpec``, ``ValidatePodUpdate``,
``ValidatePodTemplateSpec``), the part controllers run into: containers
(required, names unique DNS labels, image required, ports, env names,
imagePullPolicy, volume mounts, requests within limits), volumes,
restartPolicy and dnsPolicy enums, activeDeadlineSeconds; on update, a pod
spec that changes anything but the allowed fields is forbidden.

Deviation: setting ``spec.nodeName`` on an unscheduled pod is allowed (the
emulator has no ``pods/binding``; its scheduler writes the spec).

Pure functions over JSON values; thread-safe.
"""

from __future__ import annotations

import re
from typing import Any

from informers.testing.apiserver._validation import names
from informers.testing.apiserver._validation.errors import FieldErrors, go_value
from informers.testing.apiserver._validation.meta import validate_labels
from informers.testing.apiserver._validation.quantity import QuantityError, parse

__all__ = ["POD_UPDATABLE", "validate_pod_spec", "validate_pod_update", "validate_template"]

RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_ENV_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_NAME = re.compile(_ENV_NAME_FMT + r"\Z")
_ENV_NAME_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, "
    "'_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or "
    f"'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '{_ENV_NAME_FMT}')"
)
_PORT_RANGE = "must be between 1 and 65535, inclusive"

#: The fields ``ValidatePodUpdate`` lets an update change, as it lists them.
POD_UPDATABLE = (
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative)"
)


def _list(errs: FieldErrors, path: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        errs.invalid(path, value, "must be a list")
        return []
    return value


def _ports(errs: FieldErrors, path: str, ports: Any) -> None:
    seen: set[str] = set()
    for i, port in enumerate(_list(errs, path, ports)):
        here = f"{path}[{i}]"
        if not isinstance(port, dict):
            errs.invalid(here, port, "must be an object")
            continue
        name = port.get("name")
        if name:
            for msg in names.port_name(str(name)):
                errs.invalid(f"{here}.name", str(name), msg)
            if name in seen:
                errs.duplicate(f"{here}.name", str(name))
            seen.add(str(name))
        number = port.get("containerPort")
        if number is None or number == 0:
            errs.required(f"{here}.containerPort", "")
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            errs.invalid(f"{here}.containerPort", number, _PORT_RANGE)
        host = port.get("hostPort")
        if host and (not isinstance(host, int) or not 1 <= host <= 65535):
            errs.invalid(f"{here}.hostPort", host, _PORT_RANGE)
        protocol = port.get("protocol", "TCP")
        if protocol not in _PROTOCOLS:
            errs.not_supported(f"{here}.protocol", protocol, _PROTOCOLS)


def _env(errs: FieldErrors, path: str, env: Any) -> None:
    match = _ENV_NAME.match
    for i, var in enumerate(_list(errs, path, env)):
        if type(var) is dict:
            name = var.get("name")
            if name and type(name) is str and match(name):
                continue  # the common case: no path built
        if not isinstance(var, dict):
            errs.invalid(f"{path}[{i}]", var, "must be an object")
            continue
        name = var.get("name")
        if not name:
            errs.required(f"{path}[{i}].name", "")
        elif not match(str(name)):
            errs.invalid(f"{path}[{i}].name", str(name), _ENV_NAME_MSG)


def _resources(errs: FieldErrors, path: str, resources: Any) -> None:
    if not isinstance(resources, dict):
        return
    parsed: dict[str, dict[str, Any]] = {}
    for part in ("limits", "requests"):
        values = resources.get(part)
        if not isinstance(values, dict):
            continue
        parsed[part] = {}
        for name, raw in sorted(values.items()):
            here = f"{path}.{part}[{name}]"
            try:
                quantity = parse(str(raw))
            except QuantityError:
                continue  # the decoder refuses it first
            if quantity.value < 0:
                errs.invalid(here, str(raw), "must be greater than or equal to 0")
            parsed[part][name] = (quantity.value, str(raw))
    limits, requests = parsed.get("limits", {}), parsed.get("requests", {})
    for name, (value, raw) in sorted(requests.items()):
        if name in limits and value > limits[name][0]:
            errs.invalid(
                f"{path}.requests",
                raw,
                f"must be less than or equal to {name} limit of {limits[name][1]}",
            )


def _container(
    errs: FieldErrors, path: str, container: Any, seen: set[str], volumes: set[str]
) -> None:
    if not isinstance(container, dict):
        errs.invalid(path, container, "must be an object")
        return
    name = container.get("name")
    if not name:
        errs.required(f"{path}.name", "")
    else:
        for msg in names.dns1123_label(str(name)):
            errs.invalid(f"{path}.name", str(name), msg)
        if name in seen:
            errs.duplicate(f"{path}.name", str(name))
        seen.add(str(name))
    if not container.get("image"):
        errs.required(f"{path}.image", "")
    policy = container.get("imagePullPolicy")
    if policy is not None and policy not in _PULL_POLICIES:
        errs.not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES)
    _ports(errs, f"{path}.ports", container.get("ports"))
    _env(errs, f"{path}.env", container.get("env"))
    for i, mount in enumerate(_list(errs, f"{path}.volumeMounts", container.get("volumeMounts"))):
        here = f"{path}.volumeMounts[{i}]"
        if not isinstance(mount, dict):
            continue
        mount_name = mount.get("name")
        if not mount_name:
            errs.required(f"{here}.name", "")
        elif mount_name not in volumes:
            errs.add(f"{here}.name", "FieldValueNotFound", f"Not found: {go_value(mount_name)}")
        if not mount.get("mountPath"):
            errs.required(f"{here}.mountPath", "")
    _resources(errs, f"{path}.resources", container.get("resources"))


def _volumes(errs: FieldErrors, path: str, volumes: Any) -> set[str]:
    found: set[str] = set()
    for i, volume in enumerate(_list(errs, path, volumes)):
        here = f"{path}[{i}]"
        if not isinstance(volume, dict):
            continue
        name = volume.get("name")
        if not name:
            errs.required(f"{here}.name", "")
            continue
        for msg in names.dns1123_label(str(name)):
            errs.invalid(f"{here}.name", str(name), msg)
        if name in found:
            errs.duplicate(f"{here}.name", str(name))
        found.add(str(name))
    return found


def validate_pod_spec(errs: FieldErrors, path: str, spec: Any) -> None:
    """``ValidatePodSpec`` at ``path`` (``spec`` or ``spec.template.spec``)."""
    if not isinstance(spec, dict):
        errs.required(f"{path}.containers", "")
        return
    volumes = _volumes(errs, f"{path}.volumes", spec.get("volumes"))
    seen: set[str] = set()
    containers = _list(errs, f"{path}.containers", spec.get("containers"))
    for key in ("initContainers", "containers"):
        items = containers if key == "containers" else _list(errs, f"{path}.{key}", spec.get(key))
        for i, container in enumerate(items):
            _container(errs, f"{path}.{key}[{i}]", container, seen, volumes)
    if not containers:
        errs.required(f"{path}.containers", "")
    restart = spec.get("restartPolicy", "Always")
    if restart not in RESTART_POLICIES:
        errs.not_supported(f"{path}.restartPolicy", restart, RESTART_POLICIES)
    dns = spec.get("dnsPolicy", "ClusterFirst")
    if dns not in _DNS_POLICIES:
        errs.not_supported(f"{path}.dnsPolicy", dns, _DNS_POLICIES)
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or not 1 <= deadline <= 2**31 - 1):
        errs.invalid(
            f"{path}.activeDeadlineSeconds",
            deadline,
            "must be between 1 and 2147483647, inclusive",
        )


def validate_template(errs: FieldErrors, path: str, template: Any) -> None:
    """``ValidatePodTemplateSpec``: the template's labels and its pod spec."""
    if not isinstance(template, dict):
        errs.required(path, "")
        return
    meta = template.get("metadata") or {}
    if isinstance(meta, dict):
        validate_labels(errs, f"{path}.metadata.labels", meta.get("labels"))
    validate_pod_spec(errs, f"{path}.spec", template.get("spec"))


def _munged(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``new`` with the fields an update may change taken from ``old``."""
    munged = dict(new)
    for key in ("containers", "initContainers"):
        new_list, old_list = new.get(key), old.get(key)
        if (
            isinstance(new_list, list)
            and isinstance(old_list, list)
            and len(new_list) == len(old_list)
        ):
            munged[key] = [
                {**n, "image": o.get("image")} if isinstance(n, dict) and isinstance(o, dict) else n
                for n, o in zip(new_list, old_list, strict=True)
            ]
    for key in ("activeDeadlineSeconds",):
        if key in old:
            munged[key] = old[key]
        else:
            munged.pop(key, None)
    old_tolerations = old.get("tolerations") or []
    new_tolerations = new.get("tolerations") or []
    if all(t in new_tolerations for t in old_tolerations):
        if old_tolerations:
            munged["tolerations"] = old_tolerations
        else:
            munged.pop("tolerations", None)
    grace_old, grace_new = (
        old.get("terminationGracePeriodSeconds"),
        new.get("terminationGracePeriodSeconds"),
    )
    if isinstance(grace_old, int) and grace_old < 0 and grace_new == 1:
        munged["terminationGracePeriodSeconds"] = grace_old
    if not old.get("nodeName") and new.get("nodeName"):
        if "nodeName" in old:
            munged["nodeName"] = old["nodeName"]
        else:
            munged.pop("nodeName", None)
    gates_old = old.get("schedulingGates") or []
    gates_new = new.get("schedulingGates") or []
    if all(g in gates_old for g in gates_new):
        if "schedulingGates" in old:
            munged["schedulingGates"] = old["schedulingGates"]
        else:
            munged.pop("schedulingGates", None)
    return munged


def _diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """A short account of the changed spec fields (the real server prints a
    ``cmp.Diff`` of the Go structs)."""
    lines = ["  core.PodSpec{"]
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            if key in old:
                lines.append(f"- \t{key}: {go_value(old[key])},")
            if key in new:
                lines.append(f"+ \t{key}: {go_value(new[key])},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


def validate_pod_update(errs: FieldErrors, new: Any, old: Any) -> None:
    """``ValidatePodUpdate``'s spec rule: only the updatable fields change."""
    if not isinstance(new, dict) or not isinstance(old, dict):
        return
    deadline_old, deadline_new = old.get("activeDeadlineSeconds"), new.get("activeDeadlineSeconds")
    if deadline_old is not None and (deadline_new is None or deadline_new > deadline_old):
        errs.invalid(
            "spec.activeDeadlineSeconds",
            deadline_new,
            "must be less than or equal to previous value",
        )
    munged = _munged(new, old)
    if munged != old:
        errs.forbidden(
            "spec",
            f"pod updates may not change fields other than {POD_UPDATABLE}\n{_diff(old, munged)}",
        )
