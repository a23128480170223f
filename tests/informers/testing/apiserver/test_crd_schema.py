"""CRD structural schemas: defaulting, pruning and validation of custom
resources, through the official client and as pure functions (with
hypothesis properties)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client

from informers.testing.apiserver._crd import schema as crd_schema

GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["size"],
    "properties": {
        "size": {"type": "integer", "minimum": 1, "maximum": 10},
        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
        "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
        "ports": {
            "type": "array",
            "maxItems": 2,
            "items": {"type": "integer", "exclusiveMinimum": True, "minimum": 0},
        },
        "port": {"x-kubernetes-int-or-string": True},
        "note": {"type": "string", "nullable": True},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
        },
        "nested": {
            "type": "object",
            "default": {},
            "properties": {"replicas": {"type": "integer", "default": 1}},
        },
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": SPEC_SCHEMA,
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def crd(schema: dict[str, Any] = SCHEMA) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    }


@pytest.fixture
def widgets(api: client.ApiClient) -> client.CustomObjectsApi:
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd())
    return client.CustomObjectsApi(api)


def create(custom: client.CustomObjectsApi, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = custom.create_namespaced_custom_object(
        GROUP, VERSION, ns, PLURAL, body
    )
    return result


def refused(custom: client.CustomObjectsApi, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(client.ApiException) as err:
        create(custom, ns, body)
    assert err.value.status == 422
    status: dict[str, Any] = json.loads(err.value.body)
    assert status["reason"] == "Invalid"
    return status


def causes(status: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in status["details"]["causes"]]


def test_a_wrong_type_is_refused_as_the_server_words_it(
    widgets: client.CustomObjectsApi, ns: str
) -> None:
    status = refused(widgets, ns, widget(size="big"))
    assert causes(status) == [
        (
            "spec.size",
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.size in body must be of type integer: "string"',
        )
    ]
    assert status["message"] == (
        'Widget.example.com "w" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"'
    )
    assert status["details"]["group"] == GROUP
    assert status["details"]["kind"] == "Widget"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, ("spec.size", "FieldValueRequired", "Required value")),
        (
            {"size": 0},
            (
                "spec.size",
                "FieldValueInvalid",
                "Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ),
        ),
        (
            {"size": 11},
            (
                "spec.size",
                "FieldValueInvalid",
                "Invalid value: 11: spec.size in body should be less than or equal to 10",
            ),
        ),
        (
            {"size": 1, "color": "green"},
            (
                "spec.color",
                "FieldValueNotSupported",
                'Unsupported value: "green": supported values: "red", "blue"',
            ),
        ),
        (
            {"size": 1, "name": "toolong"},
            ("spec.name", "FieldValueTooLong", "Too long: may not be more than 5 bytes"),
        ),
        (
            {"size": 1, "name": "a"},
            (
                "spec.name",
                "FieldValueInvalid",
                'Invalid value: "a": spec.name in body should be at least 2 chars long',
            ),
        ),
        (
            {"size": 1, "name": "AB"},
            (
                "spec.name",
                "FieldValueInvalid",
                "Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'",
            ),
        ),
        (
            {"size": 1, "ports": [1, 2, 3]},
            ("spec.ports", "FieldValueTooMany", "Too many: 3: must have at most 2 items"),
        ),
        (
            {"size": 1, "ports": [0]},
            (
                "spec.ports.0",
                "FieldValueInvalid",
                "Invalid value: 0: spec.ports.0 in body should be greater than 0",
            ),
        ),
        (
            {"size": 1, "port": True},
            (
                "spec.port",
                "FieldValueTypeInvalid",
                'Invalid value: "boolean": spec.port in body must be of type integer,string: '
                '"boolean"',
            ),
        ),
        (
            {"size": 1, "labels": {"a": 1}},
            (
                "spec.labels.a",
                "FieldValueTypeInvalid",
                'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
            ),
        ),
        (
            {"size": 1, "template": {"metadata": {"name": "x"}}},
            ("spec.template.apiVersion", "FieldValueRequired", "Required value: must not be empty"),
        ),
    ],
)
def test_each_violation_is_one_cause(
    widgets: client.CustomObjectsApi, ns: str, spec: dict[str, Any], expected: tuple[str, ...]
) -> None:
    assert causes(refused(widgets, ns, widget(**spec)))[0] == expected


def test_several_violations_are_listed_together(widgets: client.CustomObjectsApi, ns: str) -> None:
    status = refused(widgets, ns, widget(size=0, color="green"))
    assert [c[0] for c in causes(status)] == ["spec.size", "spec.color"]
    assert status["message"].startswith('Widget.example.com "w" is invalid: [spec.size: ')


def test_unknown_fields_are_pruned_and_defaults_applied(
    widgets: client.CustomObjectsApi, ns: str
) -> None:
    body = widget(
        size=3,
        bogus=1,
        extra={"free": {"form": True}},
        port="http",
        note=None,
        template={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"x": "y", "z": 1},
        },
    )
    body["top"] = "level"
    created = create(widgets, ns, body)
    spec = created["spec"]
    assert "top" not in created
    assert "bogus" not in spec
    assert spec["color"] == "red"
    assert spec["nested"] == {"replicas": 1}
    assert spec["extra"] == {"free": {"form": True}}  # preserved
    assert spec["note"] is None  # nullable keeps null
    assert spec["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"x": "y"},
    }
    got = widgets.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w")
    assert got["spec"] == spec


def test_updates_and_status_writes_are_checked_too(
    widgets: client.CustomObjectsApi, ns: str
) -> None:
    create(widgets, ns, widget(size=3))
    with pytest.raises(client.ApiException) as err:
        widgets.patch_namespaced_custom_object(
            GROUP, VERSION, ns, PLURAL, "w", {"spec": {"size": "x"}}
        )
    assert err.value.status == 422
    with pytest.raises(client.ApiException) as err:
        widgets.patch_namespaced_custom_object_status(
            GROUP, VERSION, ns, PLURAL, "w", {"status": {"ready": "yes"}}
        )
    assert err.value.status == 422
    assert "status.ready" in err.value.body
    done = widgets.patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, PLURAL, "w", {"status": {"ready": True, "junk": 1}}
    )
    assert done["status"] == {"ready": True}


def test_defaults_added_to_the_schema_show_on_read(
    api: client.ApiClient, widgets: client.CustomObjectsApi, ns: str
) -> None:
    create(widgets, ns, widget(size=3))
    ext = client.ApiextensionsV1Api(api)
    current = ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}")
    changed = crd(json.loads(json.dumps(SCHEMA)))
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "shape"
    ] = {"type": "string", "default": "round"}
    changed["metadata"]["resourceVersion"] = current.metadata.resource_version
    ext.replace_custom_resource_definition(f"{PLURAL}.{GROUP}", changed)
    got = widgets.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, "w")
    assert got["spec"]["shape"] == "round"


# ------------------------------------------------------------ properties

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 20),
    st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "size",
                    "color",
                    "name",
                    "ports",
                    "port",
                    "note",
                    "extra",
                    "labels",
                    "tags",
                    "nested",
                    "replicas",
                    "x",
                    "spec",
                    "status",
                    "ready",
                    "free",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
_OBJECTS = st.fixed_dictionaries(
    {
        "spec": st.dictionaries(
            st.sampled_from([*sorted(SPEC_SCHEMA["properties"]), "junk"]), _VALUES, max_size=6
        )
    },
    optional={"status": _VALUES, "junk": _VALUES},
)


@settings(max_examples=150, deadline=None)
@given(_OBJECTS)
def test_prune_and_default_are_idempotent_and_stable(obj: dict[str, Any]) -> None:
    original = json.loads(json.dumps(obj))
    once = crd_schema.prune(SCHEMA, crd_schema.default(SCHEMA, obj))
    assert obj == original  # inputs are not mutated
    assert crd_schema.prune(SCHEMA, once) == once
    assert crd_schema.default(SCHEMA, once) == once
    assert crd_schema.prune(SCHEMA, crd_schema.default(SCHEMA, once)) == once
    first = crd_schema.validate(SCHEMA, once)
    assert crd_schema.validate(SCHEMA, crd_schema.prune(SCHEMA, once)) == first


@settings(max_examples=100, deadline=None)
@given(_OBJECTS)
def test_pruned_objects_hold_only_declared_fields(obj: dict[str, Any]) -> None:
    pruned = crd_schema.prune(SCHEMA, obj)
    assert set(pruned) <= {"spec", "status", "apiVersion", "kind", "metadata"}
    spec = pruned.get("spec", {})
    assert set(spec) <= set(SPEC_SCHEMA["properties"])
    for cause in crd_schema.validate(SCHEMA, pruned):
        assert cause[0].startswith(("spec", "status"))


@settings(max_examples=150, deadline=None)
@given(_OBJECTS)
def test_the_one_pass_write_equals_default_then_prune(obj: dict[str, Any]) -> None:
    original = json.loads(json.dumps(obj))
    both = crd_schema.default_and_prune(SCHEMA, obj)
    assert obj == original
    assert both == crd_schema.prune(SCHEMA, crd_schema.default(SCHEMA, obj))


def test_a_create_drops_the_status_of_a_kind_with_a_status_subresource(
    widgets: client.CustomObjectsApi, ns: str
) -> None:
    body = widget(size=2)
    body["status"] = {"ready": True}
    created = create(widgets, ns, body)
    assert "status" not in created


def test_each_version_has_its_own_schema(api: client.ApiClient, ns: str) -> None:
    def version(name: str, size_type: str, storage: bool) -> dict[str, Any]:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {"size": {"type": size_type}}}
                    },
                }
            },
        }

    definition = crd()
    definition["spec"]["versions"] = [
        version("v1", "integer", True),
        version("v2", "string", False),
    ]
    client.ApiextensionsV1Api(api).create_custom_resource_definition(definition)
    custom = client.CustomObjectsApi(api)
    one = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "a"}}
    two = {"apiVersion": f"{GROUP}/v2", "kind": "Widget", "metadata": {"name": "b"}}
    custom.create_namespaced_custom_object(GROUP, "v1", ns, PLURAL, {**one, "spec": {"size": 1}})
    custom.create_namespaced_custom_object(GROUP, "v2", ns, PLURAL, {**two, "spec": {"size": "L"}})
    with pytest.raises(client.ApiException) as err:
        custom.create_namespaced_custom_object(
            GROUP, "v2", ns, PLURAL, {**two, "metadata": {"name": "c"}, "spec": {"size": 1}}
        )
    assert err.value.status == 422
    assert "must be of type string" in err.value.body
