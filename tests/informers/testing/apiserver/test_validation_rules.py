"""The validators called directly: RBAC (Role, ClusterRole, bindings and
their immutable roleRef), cron schedules, names, and Go's base64 error
offsets -- tables of inputs and the causes the real server reports."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._validation import validate_create, validate_update
from informers.testing.apiserver._validation.convert import base64_error
from informers.testing.apiserver._validation.cron import schedule_error
from informers.wire.resources import Resource

RBAC = "rbac.authorization.k8s.io"
ROLES = Resource(RBAC, "v1", "roles", "Role")
CLUSTER_ROLES = Resource(RBAC, "v1", "clusterroles", "ClusterRole", namespaced=False)
BINDINGS = Resource(RBAC, "v1", "rolebindings", "RoleBinding")
CLUSTER_BINDINGS = Resource(
    RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)
REF = {"apiGroup": RBAC, "kind": "Role", "name": "reader"}


def _causes(resource: Resource, obj: dict[str, Any], old: dict[str, Any] | None = None) -> Any:
    try:
        if old is None:
            validate_create(resource, True, obj)
        else:
            validate_update(resource, True, obj, old)
    except StatusError as err:
        refusal = err
    else:
        return []
    assert refusal.code == 422
    return [(c["field"], c["message"]) for c in refusal.body["details"]["causes"]]


@pytest.mark.parametrize(
    ("resource", "obj", "causes"),
    [
        (ROLES, {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}, []),
        (
            ROLES,
            {"rules": [{"apiGroups": [""], "resources": ["pods"]}]},
            [("rules[0].verbs", "Required value: verbs must contain at least one value")],
        ),
        (
            ROLES,
            {"rules": [{"verbs": ["get"]}]},
            [
                (
                    "rules[0].apiGroups",
                    "Required value: resource rules must supply at least one api group",
                ),
                (
                    "rules[0].resources",
                    "Required value: resource rules must supply at least one resource",
                ),
            ],
        ),
        (
            ROLES,
            {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]},
            [
                (
                    "rules[0].nonResourceURLs",
                    'Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
                    "non-resource URLs",
                )
            ],
        ),
        (CLUSTER_ROLES, {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}, []),
        (
            CLUSTER_ROLES,
            {"aggregationRule": {}},
            [
                (
                    "aggregationRule.clusterRoleSelectors",
                    "Required value: at least one clusterRoleSelector required if "
                    "aggregationRule is non-nil",
                )
            ],
        ),
        (BINDINGS, {"roleRef": REF, "subjects": [{"kind": "User", "name": "ann"}]}, []),
        (
            BINDINGS,
            {"subjects": [{"kind": "Robot", "name": "r"}]},
            [
                (
                    "roleRef.apiGroup",
                    'Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
                ),
                ("roleRef.kind", 'Unsupported value: "": supported values: "Role", "ClusterRole"'),
                ("roleRef.name", "Required value"),
                (
                    "subjects[0].kind",
                    'Unsupported value: "Robot": supported values: "ServiceAccount", "User", '
                    '"Group"',
                ),
            ],
        ),
        (
            CLUSTER_BINDINGS,
            {"roleRef": REF, "subjects": [{"kind": "ServiceAccount", "name": "sa"}]},
            [
                ("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"'),
                ("subjects[0].namespace", "Required value"),
            ],
        ),
    ],
)
def test_rbac_objects(resource: Resource, obj: dict[str, Any], causes: Any) -> None:
    body = {"metadata": {"name": "system:reader"}, **obj}
    assert _causes(resource, body) == causes


def test_rbac_names_are_path_segments() -> None:
    body = {"metadata": {"name": "a/b"}, "rules": []}
    assert _causes(ROLES, body) == []  # the storage checks the name first
    from informers.testing.apiserver._validation import validate_name

    with pytest.raises(StatusError) as err:
        validate_name(ROLES, "a/b")
    assert err.value.body["details"]["causes"][0]["message"] == (
        "Invalid value: \"a/b\": may not contain '/'"
    )
    validate_name(CLUSTER_ROLES, "system:aggregate-to-admin")


def test_a_binding_role_ref_is_immutable() -> None:
    old = {"metadata": {"name": "b"}, "roleRef": REF}
    new = {"metadata": {"name": "b"}, "roleRef": {**REF, "name": "writer"}}
    assert _causes(BINDINGS, new, old) == [
        (
            "roleRef",
            'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", '
            'Name:"writer"}: cannot change roleRef',
        )
    ]
    assert _causes(BINDINGS, old, old) == []


@pytest.mark.parametrize(
    ("schedule", "error"),
    [
        ("* * * * *", None),
        ("0 0 1 jan,JUL sun-sat", None),
        ("*/15 9-17 ? * MON", None),
        ("@daily", None),
        ("@every 1h30m", None),
        ("TZ=UTC 0 * * * *", None),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("@often", "unrecognized descriptor: @often"),
    ],
)
def test_cron_schedules(schedule: str, error: str | None) -> None:
    assert schedule_error(schedule) == error


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("", None),
        ("YQ==", None),
        ("YWI=", None),
        ("YWJj", None),
        ("ab!c", 2),
        ("abc", 0),
        ("YQ=", 3),
        ("Y===", 1),
        ("YWJjZA==x", 8),
        ("YW\nJj", None),
    ],
)
def test_base64_error_offsets_are_gos(text: str, offset: int | None) -> None:
    assert base64_error(text) == offset


@given(st.binary(max_size=64))
def test_what_base64_encodes_decodes(data: bytes) -> None:
    assert base64_error(base64.b64encode(data).decode()) is None
