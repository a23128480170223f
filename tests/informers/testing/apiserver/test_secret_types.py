"""Typed Secrets as ``ValidateSecret`` checks them: the keys each type
needs, Docker configs that must decode as a JSON object (with Go's
``encoding/json`` wording), and the types the real server does not check
(``bootstrap.kubernetes.io/token``, any custom type), which are stored as
sent. Driven by the official client and by kubectl."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client
from test_kubectl import Kubectl, kubectl, kubectl_path  # noqa: F401 - the fixtures

from informers.testing.apiserver._validation.errors import go_json_error

REDACTED = '"<secret contents redacted>"'


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(kind: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"metadata": {"name": "s", **meta}, "type": kind}
    if data is not None:
        body["data"] = {k: b64(v) for k, v in data.items()}
    return body


VALID = [
    # The API server does not look inside bootstrap tokens (the bootstrap
    # authenticator and the token cleaner do): any name and data go.
    secret(
        "bootstrap.kubernetes.io/token",
        {"token-id": "abcdef", "token-secret": "0123456789abcdef"},
        name="bootstrap-token-abcdef",
    ),
    secret("bootstrap.kubernetes.io/token", {"token-id": "NOT VALID"}, name="anything"),
    secret("example.com/custom", {"x": "y"}),
    secret("kubernetes.io/dockerconfigjson", {".dockerconfigjson": '{"auths": {}}'}),
    secret("kubernetes.io/dockerconfigjson", {".dockerconfigjson": "null"}),
    secret("kubernetes.io/dockercfg", {".dockercfg": "{}"}),
    secret("kubernetes.io/basic-auth", {"username": "admin"}),
    secret("kubernetes.io/basic-auth", {"password": ""}),
    secret("kubernetes.io/ssh-auth", {"ssh-privatekey": "key"}),
    secret("kubernetes.io/tls", {"tls.crt": "", "tls.key": ""}),
    secret(
        "kubernetes.io/service-account-token",
        annotations={"kubernetes.io/service-account.name": "default"},
    ),
]

Case = tuple[str, dict[str, Any], list[tuple[str, str]]]


def docker_case(case: str, key: str, text: str, problem: str) -> Case:
    """A Docker config Secret whose ``key`` holds ``text``, refused for ``problem``."""
    kind = "kubernetes.io/dockercfg" if key == ".dockercfg" else "kubernetes.io/dockerconfigjson"
    return (
        case,
        secret(kind, {key: text}),
        [(f"data[{key}]", f"Invalid value: {REDACTED}: {problem}")],
    )


INVALID: list[Case] = [
    (
        "dockerconfigjson-missing",
        secret("kubernetes.io/dockerconfigjson", {}),
        [("data[.dockerconfigjson]", "Required value")],
    ),
    docker_case(
        "dockerconfigjson-syntax",
        ".dockerconfigjson",
        "{auths}",
        "invalid character 'a' looking for beginning of object key string",
    ),
    docker_case(
        "dockerconfigjson-truncated",
        ".dockerconfigjson",
        '{"auths": {',
        "unexpected end of JSON input",
    ),
    docker_case(
        "dockercfg-array",
        ".dockercfg",
        "[1, 2]",
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    ),
    (
        "basic-auth",
        secret("kubernetes.io/basic-auth", {"user": "admin"}),
        [("data[username]", "Required value"), ("data[password]", "Required value")],
    ),
    (
        "ssh-auth-empty",
        secret("kubernetes.io/ssh-auth", {"ssh-privatekey": ""}),
        [("data[ssh-privatekey]", "Required value")],
    ),
    (
        "tls",
        secret("kubernetes.io/tls", {"tls.crt": "cert"}),
        [("data[tls.key]", "Required value")],
    ),
    (
        "service-account-token",
        secret("kubernetes.io/service-account-token"),
        [("metadata.annotations[kubernetes.io/service-account.name]", "Required value")],
    ),
]


@pytest.mark.parametrize("body", VALID, ids=[f"{b['type']}-{i}" for i, b in enumerate(VALID)])
def test_valid_typed_secrets_are_stored_as_sent(
    core: client.CoreV1Api, ns: str, body: dict[str, Any]
) -> None:
    made = core.create_namespaced_secret(ns, body)
    assert made.type == body["type"]
    assert (made.data or {}) == body.get("data", {})


@pytest.mark.parametrize("case", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_typed_secrets_are_refused_with_the_real_causes(
    core: client.CoreV1Api, ns: str, case: tuple[Any, ...]
) -> None:
    body, causes = case
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_secret(ns, body)
    assert err.value.status == 422
    status = json.loads(err.value.body)
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == causes
    assert status["message"].startswith('Secret "s" is invalid: ')


def test_kubectl_typed_secrets(kubectl: Kubectl, ns: str) -> None:  # noqa: F811
    kubectl.run(
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server=registry.example.com",
        "--docker-username=u",
        "--docker-password=p",
        "-n",
        ns,
    )
    shown = kubectl.run("get", "secret", "pull", "-n", ns, "-o", "jsonpath={.type}")
    assert shown == "kubernetes.io/dockerconfigjson"
    out = kubectl.run(
        "create",
        "secret",
        "generic",
        "bad",
        "--type=kubernetes.io/basic-auth",
        "--from-literal=user=admin",
        "-n",
        ns,
        ok=False,
    )
    assert (
        'Secret "bad" is invalid: [data[username]: Required value, data[password]: Required value]'
        in out
    )


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(_JSON, st.integers(0, 40))
def test_go_json_errors_follow_the_decoder(value: Any, cut: int) -> None:
    encoded = json.dumps(value).encode()
    problem = go_json_error(encoded)
    if value is None or isinstance(value, dict):
        assert problem is None
    else:
        assert problem is not None
        assert problem.startswith("json: cannot unmarshal ")
    # Any text Python cannot decode is a Go syntax error too.
    truncated = encoded[:cut]
    try:
        json.loads(truncated)
    except ValueError:
        broken = go_json_error(truncated)
        assert broken is not None
        assert broken == "unexpected end of JSON input" or broken.startswith("invalid character ")
