"""What the real server's decoder does to a body before validation, and
the 400s it answers when it cannot: a Secret's ``stringData`` merged into
``data`` (and dropped), ``data`` checked as base64, resource quantities
written canonically (``cpu: 0.5`` → ``500m``), and timestamps written as
RFC 3339 in UTC, to the second (``MicroTime`` fields to the microsecond).

:func:`convert` never changes its argument: it returns the object with new
copies of just the parts it rewrote (stored objects share their unchanged
parts). Pure; thread-safe.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._validation.quantity import QuantityError, normalize
from informers.wire.resources import Resource

__all__ = ["base64_error", "convert"]

_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)
#: Status fields of type ``metav1.Time`` (in conditions and elsewhere).
_TIME_KEYS = frozenset(
    {
        "lastTransitionTime",
        "lastProbeTime",
        "lastUpdateTime",
        "lastHeartbeatTime",
        "startTime",
        "completionTime",
        "lastScheduleTime",
        "lastSuccessfulTime",
        "startedAt",
        "finishedAt",
    }
)
_RESOURCE_LISTS = ("limits", "requests")
_Rewrite = Callable[[Any], Any]


def base64_error(text: str) -> int | None:
    """Where Go's ``base64.StdEncoding`` gives up on ``text`` (the byte
    offset its ``illegal base64 data at input byte N`` names), or None."""
    si, n = 0, len(text)
    while True:
        j = 0
        while j < 4:
            if si == n:
                return None if j == 0 else si - j
            c = text[si]
            si += 1
            if c in _B64:
                j += 1
                continue
            if c in "\r\n":
                continue
            if c != "=" or j < 2:
                return si - 1
            if j == 2:  # "==" expected
                while si < n and text[si] in "\r\n":
                    si += 1
                if si == n:
                    return n
                if text[si] != "=":
                    return si - 1
                si += 1
            while si < n and text[si] in "\r\n":
                si += 1
            return si if si < n else None


def _decode_error(resource: Resource, detail: str) -> _status.StatusError:
    return _status.bad_request(
        f'{resource.kind} in version "{resource.version}" cannot be handled as a '
        f"{resource.kind}: {detail}"
    )


def _secret(resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    data = obj.get("data")
    string_data = obj.get("stringData")
    if isinstance(data, dict):
        for value in data.values():
            if not isinstance(value, str):
                continue
            at = base64_error(value)
            if at is not None:
                raise _decode_error(resource, f"illegal base64 data at input byte {at}")
    if "stringData" not in obj:
        return obj
    new = {k: v for k, v in obj.items() if k != "stringData"}
    if isinstance(string_data, dict) and string_data:
        merged = dict(data) if isinstance(data, dict) else {}
        for key, value in string_data.items():
            merged[key] = base64.b64encode(str(value).encode()).decode()
        new["data"] = merged
    return new


def _at(value: Any, path: tuple[str, ...], fn: _Rewrite) -> Any:
    """``value`` with ``fn`` applied at ``path`` (``*``: every list item),
    copied only where something changed."""
    if not path:
        return fn(value)
    head, rest = path[0], path[1:]
    if head == "*":
        if not isinstance(value, list):
            return value
        items = [_at(item, rest, fn) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if not isinstance(value, dict) or head not in value:
        return value
    inner = _at(value[head], rest, fn)
    if inner is value[head]:
        return value
    return {**value, head: inner}


def _quantity_map(resource: Resource) -> _Rewrite:
    def rewrite(values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        out = None
        for key, raw in values.items():
            if raw is None:
                continue
            try:
                text = normalize(raw)
            except QuantityError as exc:
                raise _decode_error(resource, str(exc)) from None
            if text != raw:
                out = out if out is not None else dict(values)
                out[key] = text
        return out if out is not None else values

    return rewrite


def _quantity(resource: Resource) -> _Rewrite:
    def rewrite(raw: Any) -> Any:
        if raw is None:
            return raw
        try:
            text = normalize(raw)
        except QuantityError as exc:
            raise _decode_error(resource, str(exc)) from None
        return raw if text == raw else text

    return rewrite


def _containers(items: Any, quantities: _Rewrite) -> Any:
    if not isinstance(items, list):
        return items
    out = None
    for n, container in enumerate(items):
        resources = container.get("resources") if isinstance(container, dict) else None
        if not isinstance(resources, dict):
            continue
        fixed = _resource_lists(resources, quantities)
        if fixed is not resources:
            out = out if out is not None else list(items)
            out[n] = {**container, "resources": fixed}
    return out if out is not None else items


def _resource_lists(resources: dict[str, Any], quantities: _Rewrite) -> dict[str, Any]:
    out = resources
    for part in _RESOURCE_LISTS:
        values = resources.get(part)
        if values:
            fixed = quantities(values)
            if fixed is not values:
                out = out if out is not resources else dict(resources)
                out[part] = fixed
    return out


def _pod_spec(resource: Resource) -> _Rewrite:
    """Every quantity of a pod spec, in one pass: containers' (and init and
    ephemeral containers') resources, the pod's resources and overhead,
    emptyDir size limits."""
    quantities, one = _quantity_map(resource), _quantity(resource)

    def rewrite(spec: Any) -> Any:
        if not isinstance(spec, dict):
            return spec
        out = spec
        for key in ("containers", "initContainers", "ephemeralContainers"):
            if key in spec:
                fixed = _containers(spec[key], quantities)
                if fixed is not spec[key]:
                    out = out if out is not spec else dict(spec)
                    out[key] = fixed
        resources = spec.get("resources")
        if isinstance(resources, dict):
            fixed = _resource_lists(resources, quantities)
            if fixed is not resources:
                out = out if out is not spec else dict(spec)
                out["resources"] = fixed
        if spec.get("overhead"):
            fixed = quantities(spec["overhead"])
            if fixed is not spec["overhead"]:
                out = out if out is not spec else dict(spec)
                out["overhead"] = fixed
        if spec.get("volumes"):
            fixed = _at(spec["volumes"], ("*", "emptyDir", "sizeLimit"), one)
            if fixed is not spec["volumes"]:
                out = out if out is not spec else dict(spec)
                out["volumes"] = fixed
        return out

    return rewrite


_MAP, _ONE, _POD = "map", "one", "pod"
_Spot = tuple[tuple[str, ...], str]
_TEMPLATE: list[_Spot] = [(("spec", "template", "spec"), _POD)]
_CLAIM: list[_Spot] = [(("spec", "resources", part), _MAP) for part in _RESOURCE_LISTS]
#: Where each kind keeps quantities: (path, what is there -- a map of
#: quantities, one quantity, or a pod spec).
_QUANTITIES: dict[tuple[str, str], list[_Spot]] = {
    ("", "Pod"): [(("spec",), _POD)],
    ("", "PodTemplate"): [(("template", "spec"), _POD)],
    ("", "ReplicationController"): _TEMPLATE,
    ("apps", "Deployment"): _TEMPLATE,
    ("apps", "ReplicaSet"): _TEMPLATE,
    ("apps", "DaemonSet"): _TEMPLATE,
    ("apps", "StatefulSet"): [
        *_TEMPLATE,
        *(
            (("spec", "volumeClaimTemplates", "*", "spec", "resources", part), _MAP)
            for part in _RESOURCE_LISTS
        ),
    ],
    ("batch", "Job"): _TEMPLATE,
    ("batch", "CronJob"): [(("spec", "jobTemplate", "spec", "template", "spec"), _POD)],
    ("", "PersistentVolumeClaim"): [*_CLAIM, (("status", "capacity"), _MAP)],
    ("", "PersistentVolume"): [(("spec", "capacity"), _MAP)],
    ("", "ResourceQuota"): [
        (("spec", "hard"), _MAP),
        (("status", "hard"), _MAP),
        (("status", "used"), _MAP),
    ],
    ("", "LimitRange"): [
        (("spec", "limits", "*", part), _MAP)
        for part in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")
    ],
    ("", "Node"): [(("status", "capacity"), _MAP), (("status", "allocatable"), _MAP)],
}
_REWRITES: dict[str, Callable[[Resource], _Rewrite]] = {
    _MAP: _quantity_map,
    _ONE: _quantity,
    _POD: _pod_spec,
}


def _time(resource: Resource, micro: bool) -> _Rewrite:
    def rewrite(raw: Any) -> Any:
        if not isinstance(raw, str):
            return raw
        match = _RFC3339.match(raw)
        layout = "2006-01-02T15:04:05Z07:00"
        if match is None:
            raise _decode_error(resource, f'parsing time "{raw}" as "{layout}": cannot parse')
        year, month, day, hour, minute, second, fraction, zone = match.groups()
        offset = _dt.timedelta(0)
        if zone not in ("Z", "z"):
            sign = 1 if zone[0] == "+" else -1
            offset = sign * _dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        try:
            stamp = (
                _dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
                - offset
            )
        except ValueError:
            raise _decode_error(resource, f'parsing time "{raw}": out of range') from None
        if micro:
            micros = int(((fraction or ".")[1:] + "000000")[:6])
            text = stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{micros:06d}Z"
        else:
            text = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        return raw if text == raw else text

    return rewrite


def _times(value: Any, rewrite: _Rewrite) -> Any:
    """``value`` (a status) with every known time field rewritten."""
    if isinstance(value, list):
        items = [_times(item, rewrite) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if not isinstance(value, dict):
        return value
    out = None
    for key, item in value.items():
        new = rewrite(item) if key in _TIME_KEYS else _times(item, rewrite)
        if new is not item:
            out = out if out is not None else dict(value)
            out[key] = new
    return out if out is not None else value


def convert(resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a built-in kind) as the decoder hands it on; 400 BadRequest
    for data it cannot decode."""
    key = (resource.group, resource.kind)
    if key == ("", "Secret"):
        obj = _secret(resource, obj)
    for path, what in _QUANTITIES.get(key, ()):
        obj = _at(obj, path, _REWRITES[what](resource))
    if "status" in obj:
        obj = _at(obj, ("status",), lambda status: _times(status, _time(resource, False)))
    if key == ("coordination.k8s.io", "Lease"):
        for field in ("acquireTime", "renewTime"):
            obj = _at(obj, ("spec", field), _time(resource, True))
    return obj
