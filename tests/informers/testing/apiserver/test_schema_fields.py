"""Field validation of write bodies (``fieldValidation`` Strict, Warn,
Ignore) against the kinds' types from the client's models, as the real API
server's decoder answers: 400 naming unknown and duplicate fields, warnings,
dropped fields, and type mismatches worded as Go's JSON decoder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3
from hypothesis import given, settings
from hypothesis import strategies as st

from informers.testing.apiserver import ApiServer
from informers.testing.apiserver._schema.fieldcheck import STRICT, check_object, decode_json
from informers.testing.apiserver._schema.kinds import kind_type
from informers.testing.apiserver._status import StatusError
from informers.wire.resources import DEPLOYMENTS as DEPLOYMENT_RESOURCE
from informers.wire.resources import Resource

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def http() -> Iterator[urllib3.PoolManager]:
    pool = urllib3.PoolManager(retries=False)
    yield pool
    pool.clear()


def _deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    base["spec"].update(spec)
    return base


def _send(
    http: urllib3.PoolManager,
    server: ApiServer,
    method: str,
    path: str,
    body: bytes | dict[str, Any],
    *,
    query: str = "",
    content_type: str = "application/json",
) -> urllib3.BaseHTTPResponse:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.request(
        method, f"{server.url}{path}{query}", body=data, headers={"Content-Type": content_type}
    )


_HANDLED = 'Deployment in version "v1" cannot be handled as a Deployment: '

#: (body changes, message after the "cannot be handled" prefix) of type mismatches.
TYPE_MISMATCHES = [
    (
        {"replicas": "three"},
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas"
        " of type int32",
    ),
    (
        {"replicas": 1.5},
        "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas"
        " of type int32",
    ),
    (
        {"replicas": 3_000_000_000},
        "json: cannot unmarshal number 3000000000 into Go struct field"
        " DeploymentSpec.spec.replicas of type int32",
    ),
    (
        {"paused": "yes"},
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused"
        " of type bool",
    ),
    (
        {"template": "pod"},
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template"
        " of type v1.PodTemplateSpec",
    ),
    (
        {"selector": {"matchLabels": {"app": 1}}},
        "json: cannot unmarshal number into Go struct field"
        " LabelSelector.spec.selector.matchLabels of type string",
    ),
    (
        {
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": {"name": "c"}},
            }
        },
        "json: cannot unmarshal object into Go struct field"
        " PodSpec.spec.template.spec.containers of type []v1.Container",
    ),
    (
        {
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": 7}]},
            }
        },
        "json: cannot unmarshal number into Go struct field"
        " Container.spec.template.spec.containers.image of type string",
    ),
    (
        {
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "i"}],
                    "terminationGracePeriodSeconds": "x",
                },
            }
        },
        "json: cannot unmarshal string into Go struct field"
        " PodSpec.spec.template.spec.terminationGracePeriodSeconds of type int64",
    ),
]


@pytest.mark.parametrize("mode", ["", "Strict", "Warn", "Ignore"])
@pytest.mark.parametrize(("change", "message"), TYPE_MISMATCHES)
def test_type_mismatch_is_400_in_every_mode(
    server: ApiServer,
    http: urllib3.PoolManager,
    mode: str,
    change: dict[str, Any],
    message: str,
) -> None:
    query = f"?fieldValidation={mode}" if mode else ""
    response = _send(http, server, "POST", DEPLOYMENTS, _deployment(**change), query=query)
    assert response.status == 400
    status = json.loads(response.data)
    assert status["reason"] == "BadRequest"
    assert status["message"] == _HANDLED + message
    assert server.list_objects("deployments", "default") == []


#: Values of the right type that must pass (quantities take numbers, int-or-string both).
VALID_SHAPES: list[tuple[str, dict[str, Any]]] = [
    (
        "quantities as numbers",
        {
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"limits": {"cpu": 0.5}}}
                    ]
                },
            }
        },
    ),
    (
        "int-or-string as a string",
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}}},
    ),
    (
        "int-or-string as an int",
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}},
    ),
    ("null values", {"minReadySeconds": None, "paused": None}),
    ("int64 beyond int32", {"template": None, "progressDeadlineSeconds": 600}),
]


@pytest.mark.parametrize(("label", "change"), VALID_SHAPES)
def test_valid_shapes_pass_strict(
    server: ApiServer, http: urllib3.PoolManager, label: str, change: dict[str, Any]
) -> None:
    body = _deployment(**change)
    if body["spec"].get("template") is None:
        body["spec"]["template"] = _deployment()["spec"]["template"]
    response = _send(http, server, "POST", DEPLOYMENTS, body, query="?fieldValidation=Strict")
    assert response.status == 201, (label, response.data)
    assert "Warning" not in response.headers


def _with_unknown_fields() -> dict[str, Any]:
    body = _deployment(foo=1)
    body["metadata"]["bogus"] = "x"
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = "typo"
    body["extra"] = True
    return body


UNKNOWN = [
    'unknown field "extra"',
    'unknown field "metadata.bogus"',
    'unknown field "spec.foo"',
    'unknown field "spec.template.spec.containers[0].imagee"',
]


def test_strict_names_every_unknown_field(server: ApiServer, http: urllib3.PoolManager) -> None:
    response = _send(
        http, server, "POST", DEPLOYMENTS, _with_unknown_fields(), query="?fieldValidation=Strict"
    )
    assert response.status == 400
    message = json.loads(response.data)["message"]
    assert message.startswith(_HANDLED + "strict decoding error: ")
    named = message.removeprefix(_HANDLED + "strict decoding error: ").split(", ")
    assert sorted(named) == UNKNOWN
    assert server.list_objects("deployments", "default") == []


@pytest.mark.parametrize("mode", ["", "Warn"])
def test_warn_drops_unknown_fields_with_warnings(
    server: ApiServer, http: urllib3.PoolManager, mode: str
) -> None:
    query = f"?fieldValidation={mode}" if mode else ""
    response = _send(http, server, "POST", DEPLOYMENTS, _with_unknown_fields(), query=query)
    assert response.status == 201
    warnings = response.headers["Warning"]
    for message in UNKNOWN:
        escaped = message.replace('"', '\\"')
        assert f'299 - "{escaped}"' in warnings
    stored = server.get("deployments", "web")
    assert "extra" not in stored
    assert "bogus" not in stored["metadata"]
    assert "foo" not in stored["spec"]
    assert "imagee" not in stored["spec"]["template"]["spec"]["containers"][0]


def test_ignore_drops_unknown_fields_silently(server: ApiServer, http: urllib3.PoolManager) -> None:
    response = _send(
        http, server, "POST", DEPLOYMENTS, _with_unknown_fields(), query="?fieldValidation=Ignore"
    )
    assert response.status == 201
    assert "Warning" not in response.headers
    assert "foo" not in server.get("deployments", "web")["spec"]


def test_duplicate_fields(server: ApiServer, http: urllib3.PoolManager) -> None:
    raw = b'{"metadata": {"name": "a", "name": "b", "labels": {"x": "1"}}, "data": {"k": "v"}}'
    strict = _send(http, server, "POST", CONFIGMAPS, raw, query="?fieldValidation=Strict")
    assert strict.status == 400
    assert json.loads(strict.data)["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: duplicate field "metadata.name"'
    )
    warned = _send(http, server, "POST", CONFIGMAPS, raw)
    assert warned.status == 201
    assert warned.headers["Warning"] == '299 - "duplicate field \\"metadata.name\\""'
    assert server.get("configmaps", "b")["data"] == {"k": "v"}  # the last value wins


def test_put_and_patch_are_checked(server: ApiServer, http: urllib3.PoolManager) -> None:
    created = server.create("configmaps", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    created["data"]["b"] = 2
    put = _send(http, server, "PUT", f"{CONFIGMAPS}/c", created)
    assert put.status == 400
    assert "Go struct field ConfigMap.data of type string" in json.loads(put.data)["message"]
    patch = _send(
        http,
        server,
        "PATCH",
        f"{CONFIGMAPS}/c",
        {"spec": {"x": 1}},
        query="?fieldValidation=Strict",
        content_type="application/merge-patch+json",
    )
    assert patch.status == 400
    assert 'unknown field "spec"' in json.loads(patch.data)["message"]
    warned = _send(
        http,
        server,
        "PATCH",
        f"{CONFIGMAPS}/c",
        {"spec": {"x": 1}, "data": {"b": "2"}},
        content_type="application/merge-patch+json",
    )
    assert warned.status == 200
    assert warned.headers["Warning"] == '299 - "unknown field \\"spec\\""'
    assert server.get("configmaps", "c")["data"] == {"a": "1", "b": "2"}
    assert "spec" not in server.get("configmaps", "c")


def test_bad_directive_is_422(server: ApiServer, http: urllib3.PoolManager) -> None:
    response = _send(
        http, server, "POST", CONFIGMAPS, {"metadata": {"name": "c"}}, query="?fieldValidation=Loud"
    )
    assert response.status == 422
    status = json.loads(response.data)
    assert status["details"]["kind"] == "CreateOptions"
    assert status["details"]["causes"][0]["field"] == "fieldValidation"


def test_custom_resources_are_not_checked(server: ApiServer, http: urllib3.PoolManager) -> None:
    server.register_resource(Resource("example.com", "v1", "widgets", "Widget"))
    response = _send(
        http,
        server,
        "POST",
        "/apis/example.com/v1/namespaces/default/widgets",
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "x": 1},
        query="?fieldValidation=Strict",
    )
    assert response.status == 201


_KEYS = st.text(alphabet="abcdef", min_size=1, max_size=3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(_KEYS, st.integers()), min_size=1, max_size=8))
def test_decode_json_reports_exactly_the_repeated_keys(pairs: list[tuple[str, int]]) -> None:
    raw = "{" + ",".join(f'"{k}": {v}' for k, v in pairs) + "}"
    obj, duplicates = decode_json(raw)
    keys = [k for k, _ in pairs]
    repeated = [k for i, k in enumerate(keys) if k in keys[:i]]
    assert obj == dict(pairs)
    assert duplicates.get(id(obj), []) == list(dict.fromkeys(repeated))


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_KEYS, inner, max_size=2),
    max_leaves=4,
)
_PATHS = [
    ("spec", "replicas"),
    ("spec", "paused"),
    ("spec", "selector"),
    ("spec", "selector", "matchLabels"),
    ("spec", "strategy", "rollingUpdate", "maxSurge"),
    ("spec", "template", "spec", "containers"),
    ("spec", "template", "spec", "terminationGracePeriodSeconds"),
    ("metadata", "labels"),
    ("metadata", "bogus"),
    ("spec", "unknown"),
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_PATHS), _JSON_VALUES)
def test_fast_path_agrees_with_the_full_walk(path: tuple[str, ...], value: Any) -> None:
    body = _deployment()
    node = body
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    ftype = kind_type(DEPLOYMENT_RESOURCE)

    def outcome(duplicates: dict[int, list[str]] | None) -> str:
        try:
            check_object(
                DEPLOYMENT_RESOURCE, ftype, json.loads(json.dumps(body)), STRICT, duplicates
            )
        except StatusError as exc:
            return str(exc.body["message"])
        return ""

    # {0: []} is no duplicate at all but forces the walk that builds paths.
    assert outcome(None) == outcome({0: []})


def test_apply_refuses_undeclared_fields_and_wrong_shapes(
    server: ApiServer, http: urllib3.PoolManager
) -> None:
    body = _deployment(foo=1, replicas="x")
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = "typo"
    response = _send(
        http,
        server,
        "PATCH",
        f"{DEPLOYMENTS}/web",
        body,
        query="?fieldManager=me",
        content_type="application/apply-patch+yaml",
    )
    assert response.status == 500
    status = json.loads(response.data)
    assert "reason" not in status  # the real server's unknown-reason Status
    assert status["message"] == (
        "failed to create typed patch object (apps/v1, Kind=Deployment): errors:\n"
        "  .spec.replicas: expected numeric (int or float), got string\n"
        '  .spec.template.spec.containers[name="c"].imagee: field not declared in schema\n'
        "  .spec.foo: field not declared in schema"
    )
    assert server.list_objects("deployments", "default") == []
    single = _send(
        http,
        server,
        "PATCH",
        f"{CONFIGMAPS}/c",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "foo": 1},
        query="?fieldManager=me",
        content_type="application/apply-patch+yaml",
    )
    assert json.loads(single.data)["message"] == (
        "failed to create typed patch object (/v1, Kind=ConfigMap): .foo: field not declared"
        " in schema"
    )
    clean = _send(
        http,
        server,
        "PATCH",
        f"{DEPLOYMENTS}/web",
        _deployment(),
        query="?fieldManager=me",
        content_type="application/apply-patch+yaml",
    )
    assert clean.status == 201
