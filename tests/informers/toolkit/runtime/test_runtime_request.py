"""Request, Result and TerminalError: values, validation and the key round trip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import InformersError, ObjectKeyError
from informers.toolkit.runtime import Request, Result, TerminalError, is_terminal
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key

PART = st.text(
    alphabet=st.characters(blacklist_characters="/", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=12,
)


def test_request_str_is_the_store_key() -> None:
    assert str(Request("default", "web")) == "default/web"
    assert str(Request("", "node-1")) == "node-1"
    assert Request("default", "web").key == "default/web"


def test_request_for_object_matches_meta_namespace_key() -> None:
    pod = {"metadata": {"name": "web", "namespace": "default"}}
    assert Request.for_object(pod) == Request("default", "web")
    assert str(Request.for_object(pod)) == meta_namespace_key(pod)
    tombstone = DeletedFinalStateUnknown("ns/gone", {"metadata": {"name": "gone"}})
    assert Request.for_object(tombstone) == Request("ns", "gone")


@pytest.mark.parametrize(
    ("namespace", "name"),
    [("default", ""), ("a/b", "x"), ("ns", "x/y"), (None, "x"), ("ns", 3)],
)
def test_request_rejects_bad_parts(namespace: object, name: object) -> None:
    with pytest.raises(ObjectKeyError):
        Request(namespace, name)  # type: ignore[arg-type]


def test_request_from_malformed_key() -> None:
    for key in ("", "a/b/c", "/x", "x/"):
        with pytest.raises(ObjectKeyError):
            Request.from_key(key)


def test_requests_are_hashable_frozen_and_ordered() -> None:
    a, b = Request("a", "z"), Request("b", "a")
    assert sorted([b, a]) == [a, b]
    assert {a, Request("a", "z")} == {a}
    with pytest.raises(AttributeError):
        a.name = "other"  # type: ignore[misc]


@given(PART, PART)
def test_request_key_round_trip(namespace: str, name: str) -> None:
    request = Request(namespace, name)
    assert Request.from_key(str(request)) == request
    assert Request.from_key(name) == Request("", name)


def test_result_defaults_and_is_zero() -> None:
    assert Result().is_zero()
    assert Result(requeue_after=0).is_zero()
    assert not Result(requeue_after=1.5).is_zero()
    assert not Result(requeue=True).is_zero()


@pytest.mark.parametrize("value", [-1, math.inf, math.nan])
def test_result_rejects_bad_requeue_after(value: float) -> None:
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=value)


@pytest.mark.parametrize("value", ["5", True])
def test_result_rejects_non_numbers(value: object) -> None:
    with pytest.raises(TypeError, match="requeue_after"):
        Result(requeue_after=value)  # type: ignore[arg-type]


def test_result_rejects_non_bool_requeue() -> None:
    with pytest.raises(TypeError, match="requeue"):
        Result(requeue=1)  # type: ignore[arg-type]


def test_terminal_error_wraps_a_cause() -> None:
    cause = ValueError("spec.replicas is negative")
    error = TerminalError(cause)
    assert isinstance(error, InformersError)
    assert error.cause is cause
    assert error.__cause__ is cause
    assert "spec.replicas is negative" in str(error)
    assert TerminalError("plain message").cause is None


def test_is_terminal_follows_cause_not_context() -> None:
    assert is_terminal(TerminalError("x"))
    assert not is_terminal(RuntimeError("x"))
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = TerminalError("inner")
    assert is_terminal(wrapped)
    handling = RuntimeError("while handling")
    handling.__context__ = TerminalError("inner")
    assert not is_terminal(handling)
    looped = RuntimeError("a cycle")
    looped.__cause__ = looped
    assert not is_terminal(looped)
