"""The emulator's field tables: which fields a ``fieldSelector`` may use per
resource, and an object's values for them, as the API server's registry
defines them."""

from __future__ import annotations

from informers.testing.apiserver import object_fields, supported_fields
from informers.wire.selectors import FieldSelector


def test_object_fields_for_pods() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"nodeName": "n1", "hostNetwork": True},
        "status": {"phase": "Running"},
    }
    fields = object_fields(pod, "pods")
    assert fields["metadata.name"] == "p"
    assert fields["metadata.namespace"] == "ns"
    assert fields["spec.nodeName"] == "n1"
    assert fields["status.phase"] == "Running"
    assert fields["spec.hostNetwork"] == "true"
    assert fields["status.podIP"] == ""
    assert set(fields) == supported_fields("pods")
    assert FieldSelector.parse("spec.nodeName=n1,status.phase!=Failed").matches(fields)


def test_object_fields_for_other_kinds() -> None:
    ns = object_fields({"metadata": {"name": "default"}}, "namespaces")
    assert ns == {"metadata.name": "default", "metadata.namespace": "", "status.phase": ""}
    cm = object_fields({"metadata": {"name": "c", "namespace": "x"}}, "configmaps")
    assert cm == {"metadata.name": "c", "metadata.namespace": "x"}
    assert supported_fields("configmaps") == {"metadata.name", "metadata.namespace"}
    event = object_fields({"metadata": {}, "source": {"component": "kubelet"}}, "events")
    assert event["source"] == "kubelet"
    assert object_fields({"metadata": {"name": "n"}}, "nodes")["spec.unschedulable"] == "false"
    assert "spec.nodeName" in supported_fields("pods")
    assert "spec.nodeName" not in supported_fields("services")
