"""The apply engine without a server: schemas, merging, Update and Apply
field management, conflicts."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from kubernetes.client import models

from informers.testing.apiserver._apply import (
    ApplyConflictError,
    ApplyError,
    Target,
    apply,
    record_update,
    target_for,
)
from informers.testing.apiserver._apply import schema as schema_module
from informers.testing.apiserver._apply.fieldpath import from_fields_v1
from informers.testing.apiserver._apply.managed import decode, manager_name
from informers.testing.apiserver._apply.merge import field_set, merge

DEPLOYMENT = target_for("apps", "v1", "Deployment", builtin=True, status_subresource=True)
CONFIGMAP = target_for("", "v1", "ConfigMap", builtin=True, status_subresource=False)
POD = target_for("", "v1", "Pod", builtin=True, status_subresource=True)


def _deployment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
        },
    }
    base["spec"].update(spec)
    return base


def _fields(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    for entry in obj["metadata"].get("managedFields", []):
        if entry["manager"] == manager:
            return dict(entry["fieldsV1"])
    raise AssertionError(f"{manager} owns nothing")


def _managers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


# ------------------------------------------------------------------ schemas


def test_hand_listed_markers_name_real_model_fields() -> None:
    def json_fields(model: str) -> set[str]:
        cls = getattr(models, model)
        return set(cls.attribute_map.values())

    for model, name in [*schema_module._LIST_MAPS, *schema_module._LIST_SETS]:
        assert name in json_fields(model), (model, name)
    for model, name in schema_module._ATOMIC_MAPS:
        assert name in json_fields(model), (model, name)
    for model in schema_module._ATOMIC_STRUCTS:
        assert hasattr(models, model), model


def test_schemas_come_from_the_client_models() -> None:
    pod_spec = POD.schema.field("spec")
    containers = pod_spec.field("containers")
    assert (containers.list_type, containers.keys) == ("map", ("name",))
    ports = containers.element().field("ports")
    assert ports.keys == ("containerPort", "protocol")
    assert ports.key_defaults == {"protocol": "TCP"}
    assert pod_spec.field("tolerations").atomic
    assert pod_spec.field("nodeSelector").atomic
    assert POD.schema.field("metadata").field("finalizers").list_type == "set"
    owners = POD.schema.field("metadata").field("ownerReferences")
    assert owners.keys == ("uid",)
    assert owners.element().atomic  # OwnerReference is an atomic struct
    assert DEPLOYMENT.schema.field("spec").field("selector").atomic
    assert CONFIGMAP.schema.field("data").kind == "map"
    assert target_for(
        "events.k8s.io", "v1", "Event", builtin=True, status_subresource=False
    ).schema.declares("note")


def test_crd_openapi_schema_markers() -> None:
    schema = schema_module.from_openapi(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "items": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                        },
                        "tags": {
                            "type": "array",
                            "x-kubernetes-list-type": "set",
                            "items": {"type": "string"},
                        },
                        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        "ref": {
                            "type": "object",
                            "x-kubernetes-map-type": "atomic",
                            "properties": {"a": {"type": "string"}},
                        },
                    },
                }
            },
        }
    )
    spec = schema.field("spec")
    assert spec.field("items").keys == ("name",)
    assert spec.field("tags").list_type == "set"
    assert spec.field("raw").kind == "untyped"
    assert spec.field("ref").atomic
    assert schema.field("metadata").field("finalizers").list_type == "set"


# ----------------------------------------------------------------- merging


def test_merge_associative_lists_by_key_and_replace_atomic_ones() -> None:
    live = _deployment()
    live["spec"]["template"]["spec"]["containers"] = [
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "side:1"},
    ]
    live["spec"]["template"]["spec"]["tolerations"] = [{"key": "a"}, {"key": "b"}]
    config = _deployment()
    config["spec"]["template"]["spec"]["containers"] = [
        {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]}
    ]
    config["spec"]["template"]["spec"]["tolerations"] = [{"key": "c"}]
    merged = merge(live, config, DEPLOYMENT.schema)
    pod = merged["spec"]["template"]["spec"]
    assert pod["containers"] == [
        {
            "name": "app",
            "image": "app:2",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        {"name": "sidecar", "image": "side:1"},
    ]
    assert pod["tolerations"] == [{"key": "c"}]
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "app:1"  # untouched


def test_field_set_of_a_configuration() -> None:
    config = _deployment(replicas=2)
    config["metadata"]["finalizers"] = ["a"]
    config["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    got = field_set(config, DEPLOYMENT.schema)
    assert got == from_fields_v1(
        {
            "f:apiVersion": {},
            "f:kind": {},
            "f:metadata": {"f:finalizers": {'v:"a"': {}}, "f:name": {}, "f:namespace": {}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:containers": {
                            'k:{"name":"app"}': {
                                ".": {},
                                "f:image": {},
                                "f:name": {},
                                "f:ports": {
                                    'k:{"containerPort":80,"protocol":"TCP"}': {
                                        ".": {},
                                        "f:containerPort": {},
                                    }
                                },
                            }
                        }
                    },
                },
            },
        }
    )


# ------------------------------------------------------------------ updates


def test_create_records_an_update_entry_for_every_field() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"x": "1"}},
        "data": {"a": "1"},
    }
    record_update(
        None, obj, manager="kubectl-create", target=CONFIGMAP, timestamp="2026-01-01T00:00:00Z"
    )
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-01-01T00:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:data": {".": {}, "f:a": {}},
                "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            },
        }
    ]


def test_created_builtin_objects_do_not_own_spec_itself() -> None:
    obj = _deployment(replicas=1)
    record_update(None, obj, manager="m", target=DEPLOYMENT)
    assert "." not in _fields(obj, "m")["f:spec"]


def test_update_moves_changed_fields_and_drops_removed_ones() -> None:
    first = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"a": "1", "b": "1"},
    }
    record_update(None, first, manager="one", target=CONFIGMAP)
    second = copy.deepcopy(first)
    second["data"] = {"a": "2", "c": "3"}  # a changed, b removed, c added
    record_update(first, second, manager="two", target=CONFIGMAP)
    assert _fields(second, "one") == {"f:data": {}}
    assert _fields(second, "two") == {"f:data": {"f:a": {}, "f:c": {}}}


def test_update_of_an_untracked_object_records_nothing() -> None:
    old = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "uid": "u"},
        "data": {"a": "1"},
    }
    new = copy.deepcopy(old)
    new["data"]["a"] = "2"
    record_update(old, new, manager="m", target=CONFIGMAP)
    assert "managedFields" not in new["metadata"]


def test_update_keeps_stored_entries_when_the_body_has_none_and_resets_on_empty() -> None:
    old = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    record_update(None, old, manager="m", target=CONFIGMAP)
    new = copy.deepcopy(old)
    del new["metadata"]["managedFields"]
    record_update(old, new, manager="m", target=CONFIGMAP)
    assert new["metadata"]["managedFields"] == old["metadata"]["managedFields"]
    reset = copy.deepcopy(old)
    reset["metadata"]["managedFields"] = [{}]
    record_update(old, reset, manager="m", target=CONFIGMAP)
    assert "managedFields" not in reset["metadata"]


def test_status_writes_own_only_status() -> None:
    old = _deployment(replicas=1)
    record_update(None, old, manager="kubectl", target=DEPLOYMENT)
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1}
    new["spec"]["replicas"] = 9  # not the status subresource's to write
    record_update(old, new, manager="controller", target=DEPLOYMENT, subresource="status")
    entry = next(e for e in new["metadata"]["managedFields"] if e["manager"] == "controller")
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_manager_names() -> None:
    assert manager_name("mine", "kubectl/v1.32") == "mine"
    assert manager_name(None, "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07") == "kubectl"
    assert manager_name(None, "OpenAPI-Generator/37.0.2/python") == "OpenAPI-Generator"
    assert manager_name(None, "a\x00b/1") == "ab"
    assert manager_name(None, None) == "unknown"
    assert len(manager_name(None, "x" * 300)) == 128


# ------------------------------------------------------------------ applies


def test_apply_creates_and_owns_exactly_the_configuration() -> None:
    obj = apply(
        None, _deployment(replicas=2), manager="ci", force=False, target=DEPLOYMENT, timestamp="T"
    )
    assert _managers(obj) == [("ci", "Apply")]
    fields = _fields(obj, "ci")
    assert "f:metadata" not in fields  # name and namespace are the server's
    assert fields["f:spec"]["f:replicas"] == {}
    assert obj["spec"]["replicas"] == 2


def test_applying_twice_changes_nothing() -> None:
    once = apply(
        None,
        _deployment(replicas=2),
        manager="ci",
        force=False,
        target=DEPLOYMENT,
        timestamp="2026-01-01T00:00:01Z",
    )
    twice = apply(
        once,
        _deployment(replicas=2),
        manager="ci",
        force=False,
        target=DEPLOYMENT,
        timestamp="2026-01-01T00:00:02Z",
    )
    assert twice == once


def test_conflict_names_the_manager_and_each_field() -> None:
    live = apply(None, _deployment(replicas=2), manager="ci", force=False, target=DEPLOYMENT)
    changed = copy.deepcopy(live)
    changed["spec"]["replicas"] = 5
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "app:9"
    record_update(live, changed, manager="hpa", target=DEPLOYMENT)
    with pytest.raises(ApplyConflictError) as info:
        apply(changed, _deployment(replicas=2), manager="ci", force=False, target=DEPLOYMENT)
    assert info.value.causes() == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "hpa" using apps/v1',
            "field": ".spec.replicas",
        },
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "hpa" using apps/v1',
            "field": '.spec.template.spec.containers[name="app"].image',
        },
    ]
    assert info.value.message.startswith(
        'Apply failed with 2 conflicts: conflicts with "hpa" using apps/v1:\n- '
    )
    forced = apply(changed, _deployment(replicas=2), manager="ci", force=True, target=DEPLOYMENT)
    assert forced["spec"]["replicas"] == 2
    assert "hpa" not in [m for m, _ in _managers(forced)]


def test_same_value_is_shared_and_survives_one_owner_dropping_it() -> None:
    live = apply(None, _deployment(replicas=3), manager="a", force=False, target=DEPLOYMENT)
    live = apply(live, _deployment(replicas=3), manager="b", force=False, target=DEPLOYMENT)
    assert "f:replicas" in _fields(live, "a")["f:spec"]
    assert "f:replicas" in _fields(live, "b")["f:spec"]
    live = apply(live, _deployment(), manager="a", force=False, target=DEPLOYMENT)
    assert live["spec"]["replicas"] == 3  # b still owns it
    live = apply(live, _deployment(), manager="b", force=False, target=DEPLOYMENT)
    assert "replicas" not in live["spec"]  # nobody does now


def test_dropped_list_items_and_map_entries_are_removed() -> None:
    config = _deployment()
    config["metadata"]["labels"] = {"keep": "1", "drop": "1"}
    config["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "s:1"})
    live = apply(None, config, manager="a", force=False, target=DEPLOYMENT)
    del config["metadata"]["labels"]["drop"]
    config["spec"]["template"]["spec"]["containers"].pop()
    live = apply(live, config, manager="a", force=False, target=DEPLOYMENT)
    assert live["metadata"]["labels"] == {"keep": "1"}
    assert [c["name"] for c in live["spec"]["template"]["spec"]["containers"]] == ["app"]


def test_a_dropped_item_another_manager_edited_stays_with_its_keys() -> None:
    config = _deployment()
    config["spec"]["template"]["spec"]["containers"].append(
        {"name": "side", "image": "s:1", "args": ["x"]}
    )
    live = apply(None, config, manager="a", force=False, target=DEPLOYMENT)
    edited = copy.deepcopy(live)
    edited["spec"]["template"]["spec"]["containers"][1]["image"] = "s:2"
    record_update(live, edited, manager="b", target=DEPLOYMENT)
    config["spec"]["template"]["spec"]["containers"].pop()
    after = apply(edited, config, manager="a", force=False, target=DEPLOYMENT)
    assert after["spec"]["template"]["spec"]["containers"][1] == {"name": "side", "image": "s:2"}


def test_first_apply_to_an_untracked_object_keeps_its_fields_owned() -> None:
    live = _deployment(replicas=4, paused=True)
    live["metadata"]["uid"] = "u"
    after = apply(live, _deployment(replicas=4), manager="a", force=False, target=DEPLOYMENT)
    assert ("before-first-apply", "Update") in _managers(after)
    assert after["spec"]["paused"] is True


def test_status_is_applied_on_its_own() -> None:
    live = apply(None, _deployment(replicas=1), manager="a", force=False, target=DEPLOYMENT)
    config = _deployment(replicas=7)
    config["status"] = {"replicas": 1}
    main = apply(live, config, manager="b", force=True, target=DEPLOYMENT)
    assert "status" not in main  # the main resource ignores status
    status = apply(live, config, manager="s", force=False, target=DEPLOYMENT, subresource="status")
    assert status["status"] == {"replicas": 1}
    assert status["spec"]["replicas"] == 1  # /status ignores everything else
    entry = decode(status["metadata"]["managedFields"])[("s", "Apply", "", "status")]
    assert json.dumps(entry.fields.paths and [p for p in entry.fields.paths()]) == json.dumps(
        [[["f", "status"], ["f", "replicas"]]]
    )


def test_null_removes_a_field() -> None:
    live = apply(
        None, _deployment(replicas=1, paused=True), manager="a", force=False, target=DEPLOYMENT
    )
    after = apply(
        live, _deployment(replicas=1, paused=None), manager="a", force=False, target=DEPLOYMENT
    )
    assert "paused" not in after["spec"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"apiVersion": "apps/v2"}, "Incorrect version specified in apply patch"),
        ({"kind": "StatefulSet"}, "does not match the kind"),
        ({"metadata": {"name": "web", "managedFields": []}}, "metadata.managedFields must be nil"),
    ],
)
def test_malformed_configurations(change: dict[str, Any], message: str) -> None:
    config = {**_deployment(), **change}
    with pytest.raises(ApplyError) as info:
        apply(None, config, manager="a", force=False, target=DEPLOYMENT)
    assert info.value.status == 400
    assert message in info.value.message


def test_custom_resources_without_schema_are_deduced() -> None:
    target = Target(schema_module.from_openapi(None), "example.com/v1", "Widget", builtin=False)
    config = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": 3, "tags": ["a"]},
    }
    obj = apply(None, config, manager="a", force=False, target=target)
    assert _fields(obj, "a") == {"f:spec": {".": {}, "f:size": {}, "f:tags": {}}}


def test_more_than_ten_updaters_fold_into_ancient_changes() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"k0": "v"},
    }
    record_update(None, obj, manager="m0", target=CONFIGMAP, timestamp="2026-01-01T00:00:00Z")
    for n in range(1, 13):
        new = copy.deepcopy(obj)
        new["data"][f"k{n}"] = "v"
        stamp = f"2026-01-01T00:00:{n:02d}Z"
        record_update(obj, new, manager=f"m{n}", target=CONFIGMAP, timestamp=stamp)
        obj = new
    managers = [m for m, _ in _managers(obj)]
    assert len(managers) == 10
    assert "ancient-changes" in managers
    assert "m3" not in managers
    assert "m4" in managers
    # thirteen updaters: the four oldest (m0, the creator, to m3) make one
    assert _fields(obj, "ancient-changes") == {
        "f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}, "f:k3": {}}
    }
