"""The Service allocators of the API server's Service storage: cluster IPs
from 10.96.0.0/12 and node ports from 30000-32767, each held by at most one
Service and freed when it is deleted (or no longer needs it).

The real storage allocates before it validates (``BeginCreate`` /
``BeginUpdate``) and takes the allocation back when the write fails, so a
write here is two steps: :meth:`ServiceAllocators.on_create` /
:meth:`ServiceAllocators.on_update` fill in the Service (changed in place)
and report causes -- worded as the allocators word them -- to ``problems``;
the callable they return commits the allocation once the write succeeds
(a dry run or a refused write never calls it, so nothing leaks).

On update, before allocating, the values a client left out are kept as the
Service strategy does: a node port missing from a port is the old port's
of the same name, and node ports (and the external traffic policy) a
Service switching to a type that needs none still carries unchanged are
dropped.

Not thread-safe: storage calls it under its lock.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from informers.testing.apiserver import _status
from informers.testing.apiserver._validation.core import valid_ip
from informers.testing.apiserver._validation.errors import Cause, go_strings

__all__ = [
    "NODE_PORT_RANGE",
    "NodePorts",
    "ServiceAllocators",
    "ServiceIPs",
    "needs_node_ports",
]

_SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")
#: ``--service-node-port-range``: the node ports Services may hold.
NODE_PORT_RANGE = range(30000, 32768)
_NOT_IN_RANGE = (
    "provided port is not in the valid range. The range of valid ports is "
    f"{NODE_PORT_RANGE.start}-{NODE_PORT_RANGE.stop - 1}"
)
_TAKEN = "provided port is already allocated"

Commit = Callable[[], None]


def _nothing() -> None:
    return None


def _owner(service: dict[str, Any]) -> str:
    meta = service.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _spec(service: dict[str, Any]) -> dict[str, Any]:
    spec = service.get("spec")
    return spec if isinstance(spec, dict) else {}


def _ports(service: dict[str, Any]) -> list[dict[str, Any]]:
    ports = _spec(service).get("ports")
    return [p for p in ports if isinstance(p, dict)] if isinstance(ports, list) else []


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def needs_node_ports(service: dict[str, Any]) -> bool:
    """A NodePort or LoadBalancer Service (whose ports may hold node ports)."""
    return _spec(service).get("type") in ("NodePort", "LoadBalancer")


def _allocates(service: dict[str, Any]) -> bool:
    """Whether ports without a node port get one (``shouldAllocateNodePorts``)."""
    spec = _spec(service)
    if spec.get("type") == "NodePort":
        return True
    return (
        spec.get("type") == "LoadBalancer"
        and spec.get("allocateLoadBalancerNodePorts") is not False
    )


def _node_port_numbers(service: dict[str, Any]) -> set[int]:
    return {n for p in _ports(service) if (n := _number(p.get("nodePort")))}


class ServiceIPs:
    """Cluster IPs from 10.96.0.0/12, each held by at most one Service."""

    def __init__(self) -> None:
        self._next = 10
        self._used: dict[str, str] = {}  # ip -> namespace/name

    def assign(self, service: dict[str, Any], problems: list[Cause]) -> str | None:
        """Give ``service`` (changed in place) a free cluster IP unless it
        asks for one (which must be free and in range: else a cause goes to
        ``problems``) or is headless or an ExternalName Service. Returns the
        IP to hold once the write commits (see :meth:`hold`)."""
        spec = service.get("spec")
        if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
            return None
        asked = spec.get("clusterIP") or (spec.get("clusterIPs") or [None])[0]
        if asked == "None":
            return None
        if asked:
            if not valid_ip(str(asked)):
                return None  # validation reports it
            shown = go_strings([asked])
            if ipaddress.ip_address(str(asked)) not in _SERVICE_RANGE:
                problems.append(
                    (
                        "spec.clusterIPs",
                        "FieldValueInvalid",
                        f"Invalid value: {shown}: failed to allocate IP {asked}: the provided "
                        f"IP ({asked}) is not in the valid range. The range of valid IPs is "
                        f"{_SERVICE_RANGE}",
                    )
                )
                return None
            if str(asked) in self._used:
                problems.append(
                    (
                        "spec.clusterIPs",
                        "FieldValueInvalid",
                        f"Invalid value: {shown}: failed to allocate IP {asked}: provided IP "
                        "is already allocated",
                    )
                )
                return None
            chosen = str(asked)
        else:
            chosen = self._free()
        service["spec"] = {
            **spec,
            "clusterIP": chosen,
            "clusterIPs": spec.get("clusterIPs") or [chosen],
        }
        return chosen

    def hold(self, ip: str, service: dict[str, Any]) -> None:
        self._used[ip] = _owner(service)

    def _free(self) -> str:
        base = int(_SERVICE_RANGE.network_address)
        size = _SERVICE_RANGE.num_addresses
        for _ in range(size):
            n = self._next
            self._next = self._next + 1 if self._next + 1 < size - 1 else 1
            if n % 256 == 0:
                continue
            ip = str(ipaddress.ip_address(base + n))
            if ip not in self._used:
                return ip
        raise _status.internal_error("range is full")

    def release(self, service: dict[str, Any]) -> None:
        """Free the cluster IPs ``service`` holds."""
        spec = _spec(service)
        owner = _owner(service)
        for ip in {spec.get("clusterIP"), *(spec.get("clusterIPs") or ())}:
            if ip and self._used.get(str(ip)) == owner:
                del self._used[str(ip)]


class NodePorts:
    """Node ports from :data:`NODE_PORT_RANGE`, each number held by at most
    one Service (whatever the protocol: a Service's TCP and UDP ports of one
    number share theirs)."""

    def __init__(self) -> None:
        self._next = NODE_PORT_RANGE.start
        self._used: dict[int, str] = {}  # port -> namespace/name

    def _free(self, taken: set[int]) -> int:
        for _ in NODE_PORT_RANGE:
            port = self._next
            self._next = port + 1 if port + 1 < NODE_PORT_RANGE.stop else NODE_PORT_RANGE.start
            if port not in self._used and port not in taken:
                return port
        raise _status.internal_error("failed to allocate a nodePort: range is full")

    def _claim(self, port: int, owner: str, taken: set[int]) -> str | None:
        """Why ``port`` cannot be claimed (None: it can)."""
        if port not in NODE_PORT_RANGE:
            return _NOT_IN_RANGE
        if port in taken or self._used.get(port, owner) != owner:
            return _TAKEN
        return None

    def _refuse(self, problems: list[Cause], index: int, port: int, why: str) -> set[int]:
        problems.append(
            (f"spec.ports[{index}].nodePort", "FieldValueInvalid", f"Invalid value: {port}: {why}")
        )
        return set()

    def assign(
        self, service: dict[str, Any], old: dict[str, Any] | None, problems: list[Cause]
    ) -> set[int]:
        """Fill in the node ports of ``service`` (its ``spec.ports`` entries
        changed in place) as ``initNodePorts`` (``old`` None) and
        ``updateNodePorts`` do: requested ones claimed, missing ones
        allocated (unless a LoadBalancer opts out). Returns the numbers to
        hold on commit; the first refusal goes to ``problems`` (and nothing
        is held)."""
        if not needs_node_ports(service):
            return set()
        if old is not None:
            return self._assign_update(service, old, problems)
        owner = _owner(service)
        allocate = _allocates(service)
        claimed: set[int] = set()
        by_port: dict[Any, int] = {}
        entries = list(enumerate(_spec(service).get("ports") or []))
        for index, port in entries:
            if not isinstance(port, dict):
                continue
            asked = _number(port.get("nodePort"))
            if not asked and not allocate:
                continue
            shared = by_port.get(port.get("port"), 0)
            if shared and asked in (0, shared):
                port["nodePort"] = shared
                continue
            if not shared and not asked:  # findRequestedNodePort
                asked = next(
                    (
                        n
                        for _, p in entries
                        if isinstance(p, dict)
                        and p.get("port") == port.get("port")
                        and (n := _number(p.get("nodePort")))
                    ),
                    0,
                )
            if asked:
                why = self._claim(asked, owner, claimed)
                if why is not None:
                    return self._refuse(problems, index, asked, why)
            else:
                asked = self._free(claimed)
            claimed.add(asked)
            port["nodePort"] = asked
            by_port.setdefault(port.get("port"), asked)
        return claimed

    def _assign_update(
        self, service: dict[str, Any], old: dict[str, Any], problems: list[Cause]
    ) -> set[int]:
        owner = _owner(service)
        allocate = _allocates(service)
        kept = _node_port_numbers(old)
        claimed: set[int] = set()
        for index, port in enumerate(_spec(service).get("ports") or []):
            if not isinstance(port, dict):
                continue
            asked = _number(port.get("nodePort"))
            if not asked and not allocate:
                continue
            if not asked:
                port["nodePort"] = self._free(claimed | kept)
                claimed.add(port["nodePort"])
            elif asked not in kept and asked not in claimed:
                why = self._claim(asked, owner, claimed)
                if why is not None:
                    return self._refuse(problems, index, asked, why)
                claimed.add(asked)
        return _node_port_numbers(service)

    def hold(self, ports: set[int], service: dict[str, Any]) -> None:
        owner = _owner(service)
        for port in ports:
            self._used[port] = owner

    def release(self, service: dict[str, Any], keep: set[int] | None = None) -> None:
        """Free the node ports ``service`` holds (except those in ``keep``)."""
        owner = _owner(service)
        for port in _node_port_numbers(service) - (keep or set()):
            if self._used.get(port) == owner:
                del self._used[port]


def _keep_node_ports(new: dict[str, Any], old: dict[str, Any]) -> None:
    """``patchAllocatedValues`` and ``dropTypeDependentFields``: an update
    that leaves a port's node port out keeps the old port's of the same
    name; a switch to a type without node ports drops those (and the
    external traffic policy, ``allocateLoadBalancerNodePorts``) the update
    did not change."""
    if needs_node_ports(old) and needs_node_ports(new):
        used = _node_port_numbers(old) & _node_port_numbers(new)
        by_name = {str(p.get("name") or ""): _number(p.get("nodePort")) for p in _ports(old)}
        for port in _ports(new):
            if not _number(port.get("nodePort")):
                value = by_name.get(str(port.get("name") or ""), 0)
                if value and value not in used:
                    port["nodePort"] = value
    elif needs_node_ports(old) and _node_port_numbers(new) <= _node_port_numbers(old):
        for port in _ports(new):
            port.pop("nodePort", None)
    spec, old_spec = _spec(new), _spec(old)
    external = needs_node_ports(new) or bool(spec.get("externalIPs"))
    for field, needed in (
        ("externalTrafficPolicy", external),
        ("allocateLoadBalancerNodePorts", spec.get("type") == "LoadBalancer"),
    ):
        if not needed and field in spec and spec.get(field) == old_spec.get(field):
            del spec[field]


def _own_ports(service: dict[str, Any]) -> None:
    """Copy ``spec`` and its port entries, so that filling them in never
    changes a dict the caller (or the stored old object) shares."""
    spec = service.get("spec")
    if not isinstance(spec, dict):
        return
    spec = dict(spec)
    if isinstance(spec.get("ports"), list):
        spec["ports"] = [dict(p) if isinstance(p, dict) else p for p in spec["ports"]]
    service["spec"] = spec


class ServiceAllocators:
    """The cluster IPs and node ports of every Service (see the module
    docstring). Not thread-safe."""

    def __init__(self) -> None:
        self.ips = ServiceIPs()
        self.node_ports = NodePorts()

    def on_create(self, service: dict[str, Any], problems: list[Cause]) -> Commit:
        """Allocate for a new ``service`` (changed in place)."""
        _own_ports(service)
        return self._allocate(service, None, problems)

    def on_update(self, new: dict[str, Any], old: dict[str, Any], problems: list[Cause]) -> Commit:
        """Allocate for ``old`` becoming ``new`` (changed in place): a
        cluster IP when it stops being an ExternalName Service, node ports
        it newly needs; the commit frees what ``new`` no longer holds."""
        _own_ports(new)
        _keep_node_ports(new, old)
        return self._allocate(new, old, problems)

    def _allocate(
        self, new: dict[str, Any], old: dict[str, Any] | None, problems: list[Cause]
    ) -> Commit:
        old_type = None if old is None else _spec(old).get("type")
        new_type = _spec(new).get("type")
        ip = None
        if old is None or (old_type == "ExternalName" and new_type != "ExternalName"):
            ip = self.ips.assign(new, problems)
        ports = self.node_ports.assign(new, old, problems) if not problems else set()
        if problems:
            return _nothing

        def commit() -> None:
            if ip is not None:
                self.ips.hold(ip, new)
            if old is not None:
                if new_type == "ExternalName" and old_type != "ExternalName":
                    self.ips.release(old)
                self.node_ports.release(old, keep=ports)
            self.node_ports.hold(ports, new)

        return commit

    def release(self, service: dict[str, Any]) -> None:
        """Free everything a deleted ``service`` holds."""
        self.ips.release(service)
        self.node_ports.release(service)
