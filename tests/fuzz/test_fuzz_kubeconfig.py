"""Hostile kubeconfigs given to the command line (``--kubeconfig``): every one
ends in a client or a one-line :class:`CommandError`, never a traceback, and
the error never quotes the credentials it carries.

The token appears only where a credential goes (``user.token``): a name the
loader quotes back ("no context named ...") is not a secret, and a fuzzer
that put the token into a context name made the test fail on a message that
was right (found by the full-suite run, whose example order differed)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers.cli._common import CommandError, connect

TOKEN = "tok-kubeconfig-fuzz-do-not-print"

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=12), st.just("x")
)
value = st.recursive(
    scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def shaped(cluster: Any, user: Any, context: Any, current: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": context}],
        "current-context": current,
    }


kubeconfigs = st.one_of(
    # the right shape, every part possibly wrong
    st.builds(
        shaped,
        st.one_of(value, st.fixed_dictionaries({"server": st.text(max_size=30) | value})),
        st.one_of(
            value,
            st.fixed_dictionaries(
                {"token": st.just(TOKEN) | value},
                optional={"client-key-data": st.just(TOKEN), "password": st.just(TOKEN)},
            ),
        ),
        st.one_of(
            value,
            st.fixed_dictionaries({"cluster": st.just("c") | value, "user": st.just("u") | value}),
        ),
        st.just("x") | value,
    ).map(json.dumps),  # JSON is YAML
    # anything at all
    value.map(json.dumps),
    st.text(max_size=200),
    # a valid one, truncated anywhere
    st.integers(0, 400).map(
        lambda n: json.dumps(
            shaped(
                {"server": "https://127.0.0.1:6443"},
                {"token": TOKEN},
                {"cluster": "c", "user": "u"},
                "x",
            )
        )[:n]
    ),
)


@FUZZ
@given(text=kubeconfigs)
def test_kubeconfigs(text: str, tried: Callable[[str], None]) -> None:
    tried("kubeconfig")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kubeconfig"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            cluster = connect(str(path), None, embedded=False)
        except CommandError as error:
            message = str(error)
            assert "\n" not in message.strip()
            assert TOKEN not in message
            return
        cluster.api_client.close()


def test_a_missing_context_is_named_and_the_token_is_not_quoted() -> None:
    config = shaped({"server": "https://127.0.0.1:6443"}, {"token": TOKEN}, None, "elsewhere")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kubeconfig"
        path.write_text(json.dumps(config), encoding="utf-8")
        try:
            connect(str(path), None, embedded=False)
        except CommandError as error:
            message = str(error)
        else:  # pragma: no cover - the loader must refuse a missing context
            raise AssertionError("a kubeconfig without its current context was accepted")
    assert "elsewhere" in message
    assert TOKEN not in message
