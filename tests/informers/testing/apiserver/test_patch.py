"""PATCH application: RFC 6902 JSON patch, RFC 7386 merge patch and strategic
merge patch, with the status codes the real server answers."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._patch import (
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    PatchError,
    apply_patch,
    json_equal,
    merge_patch,
)
from informers.wire.resources import CONFIGMAPS, DEPLOYMENTS, NODES, PODS, SERVICES, Resource

WIDGETS = Resource("example.com", "v1", "widgets", "Widget")


def _apply(original: dict[str, Any], patch: Any, content_type: str, resource: Resource = PODS):
    return apply_patch(original, json.dumps(patch).encode(), content_type, resource)


def _status(original: dict[str, Any], body: bytes, content_type: str, resource=PODS) -> int:
    with pytest.raises(PatchError) as info:
        apply_patch(original, body, content_type, resource)
    return info.value.status


def _pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["f1"]},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1",
                    "ports": [{"containerPort": 80}, {"containerPort": 443}],
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                },
                {"name": "sidecar", "image": "busybox"},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "tolerations": [{"key": "x"}],
        },
    }


# ---------------------------------------------------------------- JSON patch


def test_json_patch_add_replace_remove() -> None:
    result = _apply(
        {"metadata": {"name": "p", "labels": {"a": "1"}}},
        [
            {"op": "add", "path": "/metadata/labels/b", "value": "2"},
            {"op": "replace", "path": "/metadata/labels/a", "value": "x"},
            {"op": "remove", "path": "/metadata/name"},
        ],
        JSON_PATCH,
    )
    assert result == {"metadata": {"labels": {"a": "x", "b": "2"}}}


def test_json_patch_list_insert_append_and_index() -> None:
    doc = {"l": [1, 2, 3]}
    result = _apply(
        doc,
        [
            {"op": "add", "path": "/l/0", "value": 0},
            {"op": "add", "path": "/l/-", "value": 4},
            {"op": "add", "path": "/l/4", "value": 3.5},
            {"op": "remove", "path": "/l/1"},
        ],
        JSON_PATCH,
    )
    assert result == {"l": [0, 2, 3, 3.5, 4]}


def test_json_patch_pointer_escapes() -> None:
    doc = {"metadata": {"annotations": {"a/b": "1", "c~d": "2"}}}
    result = _apply(
        doc,
        [
            {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "x"},
            {"op": "remove", "path": "/metadata/annotations/c~0d"},
            {"op": "add", "path": "/metadata/annotations/e~01", "value": "y"},
        ],
        JSON_PATCH,
    )
    assert result == {"metadata": {"annotations": {"a/b": "x", "e~1": "y"}}}


def test_json_patch_move_copy_test() -> None:
    doc = {"a": {"x": [1, {"y": 2}]}, "b": {}}
    result = _apply(
        doc,
        [
            {"op": "test", "path": "/a/x/1", "value": {"y": 2}},
            {"op": "copy", "from": "/a/x", "path": "/b/copy"},
            {"op": "move", "from": "/a/x/0", "path": "/b/first"},
            {"op": "test", "path": "/b/copy/0", "value": 1},
        ],
        JSON_PATCH,
    )
    assert result == {"a": {"x": [{"y": 2}]}, "b": {"copy": [1, {"y": 2}], "first": 1}}


def test_json_patch_does_not_modify_the_original() -> None:
    doc = {"a": {"b": [1]}}
    before = copy.deepcopy(doc)
    _apply(doc, [{"op": "add", "path": "/a/b/-", "value": 2}], JSON_PATCH)
    assert doc == before


def test_json_patch_test_distinguishes_booleans_from_numbers() -> None:
    body = json.dumps([{"op": "test", "path": "/a", "value": 1}]).encode()
    assert _status({"a": True}, body, JSON_PATCH) == 422


@pytest.mark.parametrize(
    "operations",
    [
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "add", "path": "/missing/child", "value": 1}],
        [{"op": "add", "path": "/l/5", "value": 1}],
        [{"op": "add", "path": "/l/01", "value": 1}],
        [{"op": "remove", "path": "/l/-"}],
        [{"op": "test", "path": "/a", "value": 2}],
        [{"op": "move", "from": "/a", "path": "/a/b"}],
        [{"op": "copy", "from": "/missing", "path": "/b"}],
        [{"op": "remove", "path": ""}],
    ],
)
def test_json_patch_that_cannot_apply_is_422(operations: list[dict[str, Any]]) -> None:
    assert _status({"a": {"b": 1}, "l": [1]}, json.dumps(operations).encode(), JSON_PATCH) == 422


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"op": "add"}',
        b'[{"op": "frobnicate", "path": "/a"}]',
        b'[{"op": "add", "path": "/a"}]',
        b'[{"op": "move", "path": "/a"}]',
        b'[{"path": "/a", "value": 1}]',
        b'[{"op": "add", "path": "a", "value": 1}]',
        b'[{"op": "add", "path": "/a~2", "value": 1}]',
        b"[1]",
    ],
)
def test_malformed_json_patch_is_400(body: bytes) -> None:
    assert _status({"a": 1}, body, JSON_PATCH) == 400


def test_too_many_json_patch_operations_is_413() -> None:
    operations = [{"op": "test", "path": "/a", "value": 1}] * 10001
    assert _status({"a": 1}, json.dumps(operations).encode(), JSON_PATCH) == 413


def test_json_patch_replacing_the_root_with_a_scalar_is_422() -> None:
    body = json.dumps([{"op": "replace", "path": "", "value": 3}]).encode()
    assert _status({"a": 1}, body, JSON_PATCH) == 422


# --------------------------------------------------------------- merge patch


def test_merge_patch_rfc7386_examples() -> None:
    # The examples of RFC 7386, appendix A.
    cases = [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ]
    for target, patch, expected in cases:
        assert _apply(target, patch, MERGE_PATCH, WIDGETS) == expected


def test_merge_patch_with_charset_parameter() -> None:
    body = b'{"data": {"k": "v"}}'
    result = apply_patch({}, body, "application/merge-patch+json; charset=utf-8", CONFIGMAPS)
    assert result == {"data": {"k": "v"}}


def test_merge_patch_body_must_be_an_object() -> None:
    assert _status({"a": 1}, b"[1]", MERGE_PATCH) == 400
    assert _status({"a": 1}, b"{", MERGE_PATCH) == 400


# -------------------------------------------------- strategic merge patch


def test_smp_merges_containers_by_name_and_ports_by_container_port() -> None:
    patch = {
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:2", "ports": [{"containerPort": 8080}]},
                {"name": "new", "image": "x"},
            ]
        }
    }
    result = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)
    containers = result["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar", "new"]
    assert containers[0]["image"] == "nginx:2"
    assert [p["containerPort"] for p in containers[0]["ports"]] == [80, 443, 8080]
    assert containers[0]["env"] == _pod()["spec"]["containers"][0]["env"]


def test_smp_env_by_name_and_volume_mounts_by_mount_path() -> None:
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "env": [{"name": "B", "value": "changed"}, {"name": "C", "value": "3"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                }
            ]
        }
    }
    web = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)["spec"]["containers"][0]
    assert web["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "changed"},
        {"name": "C", "value": "3"},
    ]
    assert web["volumeMounts"] == [{"name": "data", "mountPath": "/data", "readOnly": True}]


def test_smp_lists_without_a_merge_key_are_replaced() -> None:
    patch = {"spec": {"tolerations": [{"key": "y"}]}}
    assert _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)["spec"]["tolerations"] == [{"key": "y"}]


def test_smp_delete_directive_in_a_list_and_in_a_map() -> None:
    patch = {
        "metadata": {"labels": {"$patch": "delete"}},
        "spec": {
            "containers": [{"name": "sidecar", "$patch": "delete"}],
            "volumes": [{"name": "data", "$patch": "delete"}],
        },
    }
    result = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)
    assert "labels" not in result["metadata"]
    assert [c["name"] for c in result["spec"]["containers"]] == ["web"]
    assert result["spec"]["volumes"] == []


def test_smp_replace_directive_in_a_map_and_in_a_list() -> None:
    patch = {
        "metadata": {"labels": {"$patch": "replace", "z": "9"}},
        "spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "i"}]},
    }
    result = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)
    assert result["metadata"]["labels"] == {"z": "9"}
    assert result["spec"]["containers"] == [{"name": "only", "image": "i"}]


def test_smp_null_deletes_a_key() -> None:
    patch = {"metadata": {"labels": {"a": None, "b": "2"}}}
    assert _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)["metadata"]["labels"] == {"b": "2"}


def test_smp_nulls_in_new_values_are_dropped() -> None:
    patch = {
        "metadata": {"annotations": {"x": "1", "y": None}},
        "spec": {"containers": [{"name": "new", "image": "i", "command": None}]},
    }
    result = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)
    assert result["metadata"]["annotations"] == {"x": "1"}
    assert result["spec"]["containers"][-1] == {"name": "new", "image": "i"}


def test_smp_finalizers_merge_as_a_set_and_delete_from_primitive_list() -> None:
    result = _apply(_pod(), {"metadata": {"finalizers": ["f2", "f1"]}}, STRATEGIC_MERGE_PATCH)
    assert result["metadata"]["finalizers"] == ["f1", "f2"]
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}}
    assert _apply(result, patch, STRATEGIC_MERGE_PATCH)["metadata"]["finalizers"] == ["f2"]


def test_smp_set_element_order_as_kubectl_apply_sends_it() -> None:
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}],
            "containers": [
                {
                    "$setElementOrder/env": [{"name": "B"}, {"name": "A"}],
                    "name": "web",
                    "env": [{"name": "A", "value": "x"}],
                }
            ],
        }
    }
    result = _apply(_pod(), patch, STRATEGIC_MERGE_PATCH)
    containers = result["spec"]["containers"]
    assert [c["name"] for c in containers] == ["sidecar", "web"]
    assert containers[1]["env"] == [{"name": "B", "value": "2"}, {"name": "A", "value": "x"}]
    assert "$setElementOrder/env" not in containers[1]


def test_smp_retain_keys() -> None:
    original = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"a": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = _apply(original, patch, STRATEGIC_MERGE_PATCH, DEPLOYMENTS)
    assert result == {"spec": {"strategy": {"type": "Recreate"}}}


def test_smp_deployment_template_containers_merge_by_name() -> None:
    original = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "1"}]}}}}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}]}}}}
    result = _apply(original, patch, STRATEGIC_MERGE_PATCH, DEPLOYMENTS)
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["a", "b"]


def test_smp_service_ports_merge_by_port_and_conditions_by_type() -> None:
    service = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}}
    patch = {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}}
    ports = _apply(service, patch, STRATEGIC_MERGE_PATCH, SERVICES)["spec"]["ports"]
    assert ports == [
        {"port": 80, "name": "http", "targetPort": 8080},
        {"port": 443, "name": "https"},
    ]
    node = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    patch = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    conditions = _apply(node, patch, STRATEGIC_MERGE_PATCH, NODES)["status"]["conditions"]
    assert conditions == [{"type": "Ready", "status": "True"}]


def test_smp_element_without_its_merge_key_is_422() -> None:
    body = json.dumps({"spec": {"containers": [{"image": "x"}]}}).encode()
    assert _status(_pod(), body, STRATEGIC_MERGE_PATCH) == 422


def test_smp_unknown_directive_is_400() -> None:
    body = json.dumps({"metadata": {"$patch": "explode"}}).encode()
    assert _status(_pod(), body, STRATEGIC_MERGE_PATCH) == 400


def test_smp_on_a_custom_resource_is_415() -> None:
    assert _status({}, b"{}", STRATEGIC_MERGE_PATCH, WIDGETS) == 415


@pytest.mark.parametrize("media_type", ["application/apply-patch+yaml", "text/plain", ""])
def test_other_patch_types_are_415(media_type: str) -> None:
    assert _status({}, b"{}", media_type) == 415


def test_smp_does_not_modify_the_original() -> None:
    pod = _pod()
    patch = {"spec": {"containers": [{"name": "web", "env": [{"name": "A", "$patch": "delete"}]}]}}
    _apply(pod, patch, STRATEGIC_MERGE_PATCH)
    assert pod == _pod()


# ------------------------------------------------------------ properties

_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=2)
_KEYS = st.text("abc~/", min_size=1, max_size=3)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_OBJECTS = st.dictionaries(_KEYS, _JSON, max_size=4)


def _pointer(*tokens: str) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


@given(_OBJECTS, _KEYS, _JSON)
def test_json_patch_add_then_test_then_remove(doc: dict[str, Any], key: str, value: Any) -> None:
    pointer = _pointer(key)
    added = _apply(doc, [{"op": "add", "path": pointer, "value": value}], JSON_PATCH)
    assert json_equal(added[key], value)
    _apply(added, [{"op": "test", "path": pointer, "value": value}], JSON_PATCH)
    removed = _apply(added, [{"op": "remove", "path": pointer}], JSON_PATCH)
    expected = {k: v for k, v in doc.items() if k != key}
    assert removed == expected


@given(_OBJECTS, _KEYS, _KEYS)
def test_json_patch_move_there_and_back_restores(doc: dict[str, Any], a: str, b: str) -> None:
    doc = {k: v for k, v in doc.items() if k != b}
    doc[a] = "moved"
    there = [{"op": "move", "from": _pointer(a), "path": _pointer(b)}]
    back = [{"op": "move", "from": _pointer(b), "path": _pointer(a)}]
    assert _apply(_apply(doc, there, JSON_PATCH), back, JSON_PATCH) == doc


@given(_OBJECTS, _OBJECTS)
def test_merge_patch_is_idempotent(target: dict[str, Any], patch: dict[str, Any]) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once
    for key, value in patch.items():
        if value is None:
            assert key not in once
        elif not isinstance(value, dict):
            assert once[key] == value


_NAMES = st.lists(st.sampled_from("abcdef"), unique=True, max_size=6)


@given(_NAMES, _NAMES, st.sets(st.sampled_from("abcdef")))
def test_smp_containers_union_by_name(original: list[str], patched: list[str], deleted) -> None:
    pod = {"spec": {"containers": [{"name": n, "image": "old", "o": 1} for n in original]}}
    items: list[dict[str, Any]] = [{"name": n, "image": "new"} for n in patched if n not in deleted]
    items += [{"name": n, "$patch": "delete"} for n in sorted(deleted)]
    result = _apply(pod, {"spec": {"containers": items}}, STRATEGIC_MERGE_PATCH)
    names = [c["name"] for c in result["spec"]["containers"]]
    expected = [n for n in original if n not in deleted]
    expected += [n for n in patched if n not in original and n not in deleted]
    assert names == expected
    for container in result["spec"]["containers"]:
        was_patched = container["name"] in patched
        assert container["image"] == ("new" if was_patched else "old")
        assert ("o" in container) == (container["name"] in original)


# An independent implementation as an oracle for RFC 6902 (the ``jsonpatch``
# package is installed with the test tools but is not a dependency).
_ORACLE_SCALARS = st.none() | st.integers(-3, 3) | st.text("ab", max_size=2)
_ORACLE_JSON = st.recursive(
    _ORACLE_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab/~"), inner),
    max_leaves=6,
)


def _pointers(doc: Any, prefix: str = "") -> list[str]:
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _pointers(value, prefix + _pointer(key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _pointers(value, f"{prefix}/{index}")
        found.append(f"{prefix}/-")
    return found


@st.composite
def _doc_and_operations(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    doc = draw(st.dictionaries(st.sampled_from("ab/~"), _ORACLE_JSON, max_size=3))
    pointers = _pointers(doc)
    new = [p + _pointer(k) for p in pointers for k in "ac"]
    path = st.sampled_from(pointers + new + ["/0", "/a/5"])
    operations = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        op: dict[str, Any] = {"op": kind, "path": draw(path)}
        if kind in ("move", "copy"):
            op["path"] = draw(path.filter(bool))
        if kind in ("add", "replace", "test"):
            # jsonpatch cannot patch a document that became a scalar: keep the root an object.
            root = op["path"] == "" and kind != "test"
            op["value"] = draw(
                st.dictionaries(st.sampled_from("ab"), _ORACLE_JSON) if root else _ORACLE_JSON
            )
        if kind in ("move", "copy"):
            # Moving the root onto itself is a no-op per RFC 6902; jsonpatch refuses it.
            op["from"] = draw(path.filter(bool))
        operations.append(op)
    return doc, operations


@given(_doc_and_operations())
def test_json_patch_agrees_with_an_independent_implementation(case) -> None:
    jsonpatch = pytest.importorskip("jsonpatch")
    doc, operations = case
    body = json.dumps(operations).encode()  # before the oracle, which may alias values
    try:
        expected = jsonpatch.apply_patch(copy.deepcopy(doc), copy.deepcopy(operations))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError):
        expected = PatchError
    try:
        actual = apply_patch(doc, body, JSON_PATCH, PODS)
    except PatchError:
        actual = PatchError
    if expected is not PatchError and not isinstance(expected, dict):
        expected = PatchError  # the root replaced by a non-object: 422 here
    assert actual == expected, operations


_SMP_KEYS = st.sampled_from(
    [
        *("spec", "containers", "env", "name", "ports", "containerPort", "metadata"),
        *("finalizers", "$patch", "$retainKeys", "$setElementOrder/containers"),
        "$deleteFromPrimitiveList/finalizers",
    ]
)
_SMP_VALUES = st.recursive(
    st.none() | st.integers(0, 2) | st.sampled_from(["a", "merge", "delete", "replace"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SMP_KEYS, inner, max_size=3),
    max_leaves=8,
)


_SMP_OBJECTS = st.dictionaries(_SMP_KEYS, _SMP_VALUES, max_size=4)


@given(_SMP_OBJECTS, _SMP_OBJECTS)
def test_smp_on_arbitrary_input_gives_an_object_or_a_patch_error(original, patch) -> None:
    before = copy.deepcopy(original)
    status = 0
    try:
        result = _apply(original, patch, STRATEGIC_MERGE_PATCH)
    except PatchError as exc:
        status = exc.status
    else:
        assert isinstance(result, dict)
    assert status in (0, 400, 422)
    assert original == before


def test_a_patch_that_loses_a_race_is_reapplied_to_the_newer_state(
    api_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client

    from informers.testing.apiserver._verbs_write import WriteVerbs

    api_server.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "default"}, "data": {}})
    real_store = WriteVerbs.store
    raced: list[str] = []

    def store_after_a_concurrent_write(self: Any, *args: Any, **kwargs: Any) -> None:
        if not raced:  # another writer wins between the patch's read and its write
            current = api_server.get(CONFIGMAPS, "c", "default")
            api_server.update(CONFIGMAPS, {**current, "data": {**current["data"], "b": "2"}})
            raced.append("once")
        real_store(self, *args, **kwargs)

    monkeypatch.setattr(WriteVerbs, "store", store_after_a_concurrent_write)
    api = api_server.api_client()
    try:
        patched = client.CoreV1Api(api).patch_namespaced_config_map(
            "c", "default", {"data": {"a": "1"}}
        )
    finally:
        api.close()
    assert raced == ["once"]
    assert patched.data == {"a": "1", "b": "2"}
