"""Service node ports as the real Service storage allocates them: from
30000-32767, each held by one Service, kept across updates that leave them
out, freed on deletion or a switch to ClusterIP; refused with the
allocator's and the validator's wording. Driven by the official client and
by kubectl."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client
from test_kubectl import Kubectl, kubectl, kubectl_path  # noqa: F401 - the fixtures

from informers.testing.apiserver._validation.allocators import NODE_PORT_RANGE, ServiceAllocators


def node_port_service(name: str, *ports: dict[str, Any], kind: str = "NodePort") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"type": kind, "ports": list(ports)}}


def _causes(call: Any, *args: Any) -> list[tuple[str, str]]:
    with pytest.raises(client.ApiException) as err:
        call(*args)
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    return [(c["field"], c["message"]) for c in status["details"]["causes"]]


def _node_ports(svc: Any) -> list[int]:
    return [p.node_port for p in svc.spec.ports]


def test_node_ports_are_allocated_in_range_and_unique(core: client.CoreV1Api, ns: str) -> None:
    made = [
        core.create_namespaced_service(ns, node_port_service(f"s{i}", {"port": 80}))
        for i in range(3)
    ]
    ports = [p for svc in made for p in _node_ports(svc)]
    assert len(set(ports)) == 3
    assert all(p in NODE_PORT_RANGE for p in ports)
    # A ClusterIP Service gets none; a LoadBalancer may opt out.
    plain = core.create_namespaced_service(
        ns, {"metadata": {"name": "plain"}, "spec": {"ports": [{"port": 80}]}}
    )
    assert _node_ports(plain) == [None]
    lb = node_port_service("lb", {"port": 80}, kind="LoadBalancer")
    lb["spec"]["allocateLoadBalancerNodePorts"] = False
    assert _node_ports(core.create_namespaced_service(ns, lb)) == [None]


def test_ports_of_one_number_share_their_node_port(core: client.CoreV1Api, ns: str) -> None:
    dns = node_port_service(
        "dns",
        {"port": 53, "name": "tcp"},
        {"port": 53, "name": "udp", "protocol": "UDP"},
    )
    made = core.create_namespaced_service(ns, dns)
    first, second = _node_ports(made)
    assert first == second


def test_a_taken_or_out_of_range_node_port_is_refused(core: client.CoreV1Api, ns: str) -> None:
    core.create_namespaced_service(ns, node_port_service("a", {"port": 80, "nodePort": 30080}))
    taken = node_port_service("b", {"port": 80, "nodePort": 30080})
    assert _causes(core.create_namespaced_service, ns, taken) == [
        ("spec.ports[0].nodePort", "Invalid value: 30080: provided port is already allocated")
    ]
    low = node_port_service(
        "b", {"port": 80, "name": "x"}, {"port": 81, "name": "y", "nodePort": 80}
    )
    assert _causes(core.create_namespaced_service, ns, low) == [
        (
            "spec.ports[1].nodePort",
            "Invalid value: 80: provided port is not in the valid range. "
            "The range of valid ports is 30000-32767",
        )
    ]
    # A refused create holds nothing: the port it was given first is free.
    again = core.create_namespaced_service(ns, node_port_service("c", {"port": 80}))
    assert _node_ports(again) != [30080]
    # Deleting the holder frees its port.
    core.delete_namespaced_service("a", ns)
    reused = core.create_namespaced_service(ns, taken)
    assert _node_ports(reused) == [30080]


def test_node_ports_need_a_node_port_service(core: client.CoreV1Api, ns: str) -> None:
    body = {
        "metadata": {"name": "s"},
        "spec": {"ports": [{"port": 80, "name": "a", "nodePort": 30100}]},
    }
    assert _causes(core.create_namespaced_service, ns, body) == [
        ("spec.ports[0].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'")
    ]
    # Two service ports asking for one node port: the allocator refuses
    # the second before validation runs, as the real storage does, unless
    # they are one port number, which shares it: then validation finds the
    # duplicates.
    twice, same = (
        node_port_service(
            "t",
            {"port": 80, "name": "a", "nodePort": 30100},
            {"port": second, "name": "b", "nodePort": 30100},
        )
        for second in (81, 80)
    )
    assert _causes(core.create_namespaced_service, ns, twice) == [
        ("spec.ports[1].nodePort", "Invalid value: 30100: provided port is already allocated")
    ]
    causes = _causes(core.create_namespaced_service, ns, same)
    assert causes[0] == ("spec.ports[1].nodePort", "Duplicate value: 30100")
    assert causes[1][0] == "spec.ports[1]"
    assert causes[1][1].startswith("Duplicate value: core.ServicePort{")


def test_protocol_and_port_names_are_checked(core: client.CoreV1Api, ns: str) -> None:
    body = node_port_service(
        "p",
        {"port": 80, "name": "Web", "protocol": "ICMP", "targetPort": 70000},
        {"port": 81, "name": "b", "targetPort": "no_such"},
    )
    assert _causes(core.create_namespaced_service, ns, body) == [
        (
            "spec.ports[0].name",
            'Invalid value: "Web": a lowercase RFC 1123 label must consist of lower case '
            "alphanumeric characters or '-', and must start and end with an alphanumeric "
            "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            "spec.ports[0].protocol",
            'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
        ),
        (
            "spec.ports[0].targetPort",
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        (
            "spec.ports[1].targetPort",
            'Invalid value: "no_such": must contain only alpha-numeric characters (a-z, 0-9), '
            "and hyphens (-)",
        ),
    ]


def test_updates_keep_and_release_node_ports(core: client.CoreV1Api, ns: str) -> None:
    made = core.create_namespaced_service(ns, node_port_service("s", {"port": 80, "name": "web"}))
    [given] = _node_ports(made)
    # A replace that leaves the node port out keeps it (by port name).
    body = node_port_service("s", {"port": 80, "name": "web"}, {"port": 81, "name": "alt"})
    body["metadata"]["resourceVersion"] = made.metadata.resource_version
    replaced = core.replace_namespaced_service("s", ns, body)
    kept, added = _node_ports(replaced)
    assert kept == given
    assert added in NODE_PORT_RANGE
    assert added != given
    # Switching to ClusterIP drops the unchanged node ports and frees them.
    switched = core.patch_namespaced_service("s", ns, {"spec": {"type": "ClusterIP"}})
    assert _node_ports(switched) == [None, None]
    assert switched.spec.external_traffic_policy is None
    other = node_port_service("o", {"port": 80, "nodePort": given})
    assert _node_ports(core.create_namespaced_service(ns, other)) == [given]


def test_a_dry_run_holds_no_node_port(core: client.CoreV1Api, ns: str) -> None:
    body = node_port_service("d", {"port": 80, "nodePort": 30200})
    core.create_namespaced_service(ns, body, dry_run="All")
    made = core.create_namespaced_service(ns, body)
    assert _node_ports(made) == [30200]


def test_kubectl_sees_the_allocators_refusal(kubectl: Kubectl, ns: str) -> None:  # noqa: F811
    kubectl.run(
        "create", "service", "nodeport", "web", "--tcp=80:8080", "--node-port=30300", "-n", ns
    )
    out = kubectl.run(
        "create",
        "service",
        "nodeport",
        "copy",
        "--tcp=80:8080",
        "--node-port=30300",
        "-n",
        ns,
        ok=False,
    )
    assert (
        'Service "copy" is invalid: spec.ports[0].nodePort: Invalid value: 30300: '
        "provided port is already allocated"
    ) in out
    shown = kubectl.run(
        "get", "service", "web", "-n", ns, "-o", "jsonpath={.spec.ports[0].nodePort}"
    )
    assert shown == "30300"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["create", "delete", "update"]),
            st.integers(0, 4),
            # a node port twice in one Service is the validator's to refuse
            st.lists(
                st.sampled_from([0, 0, 30000, 30001, 30002, 99]), min_size=1, max_size=3
            ).filter(lambda xs: len([x for x in xs if x]) == len({x for x in xs if x})),
        ),
        max_size=30,
    )
)
def test_allocators_never_hand_one_node_port_to_two_services(
    steps: list[tuple[str, int, list[int]]],
) -> None:
    allocators = ServiceAllocators()
    live: dict[str, dict[str, Any]] = {}
    for verb, n, asked in steps:
        name = f"s{n}"
        ports = [
            {"port": 80 + i, "name": f"p{i}", **({"nodePort": a} if a else {})}
            for i, a in enumerate(asked)
        ]
        body = {
            "metadata": {"namespace": "ns", "name": name},
            "spec": {"type": "NodePort", "ports": ports},
        }
        problems: list[tuple[str, str, str]] = []
        if verb == "delete" and name in live:
            allocators.release(live.pop(name))
        elif verb == "create" and name not in live:
            commit = allocators.on_create(body, problems)
            if not problems:
                commit()
                live[name] = body
        elif verb == "update" and name in live:
            commit = allocators.on_update(body, live[name], problems)
            if not problems:
                commit()
                live[name] = body
        held = [p["nodePort"] for svc in live.values() for p in svc["spec"]["ports"]]
        assert len(held) == len(set(held))
        assert all(p in NODE_PORT_RANGE for p in held)
        assert dict(allocators.node_ports._used) == {
            p["nodePort"]: f"ns/{svc['metadata']['name']}"
            for svc in live.values()
            for p in svc["spec"]["ports"]
        }
