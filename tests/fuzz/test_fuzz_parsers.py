"""Hostile input to everything that parses what the wire (or a user) hands
over: label and field selectors, Status bodies, list bodies and watch events
as the reflector's pure step sees them. Every input ends in a result or a
clear typed error; never another exception, never a store action carrying an
object without a usable key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers.errors import ApiError, InformersError, SelectorParseError
from informers.listwatch import error_from_status
from informers.objects import meta_namespace_key
from informers.reflector.config import ReflectorConfig
from informers.reflector.machine import (
    Listing,
    ListPage,
    Memory,
    StoreAdd,
    StoreDelete,
    StoreUpdate,
    WatchEvent,
    Watching,
    step,
)
from informers.wire.selectors import FieldSelector, LabelSelector

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFIG = ReflectorConfig(description="pods")

#: Text that looks like what it is fuzzing, plus anything at all.
selector_text = st.one_of(
    st.text(max_size=60),
    st.lists(
        st.sampled_from(
            [
                "a",
                "b.c/d",
                "=",
                "==",
                "!=",
                ",",
                "in",
                "notin",
                "(",
                ")",
                "!",
                " ",
                "x",
                "-",
                "\x00",
            ]
        ),
        max_size=20,
    ).map("".join),
)

#: Any JSON value, nested, with huge numbers, odd strings and deep nesting.
json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=25,
)
#: Objects shaped like Kubernetes objects, with every field possibly wrong.
metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": json_value | st.text(max_size=10),
        "namespace": json_value | st.text(max_size=10),
        "resourceVersion": json_value | st.integers(0, 10**20).map(str),
        "uid": json_value,
        "labels": json_value,
    },
)
k8s_object = st.one_of(
    json_value,
    st.fixed_dictionaries({}, optional={"metadata": metadata | json_value, "spec": json_value}),
)
watch_event = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "", "added"]
            )
            | json_value,
            "object": k8s_object,
        },
    ),
)


def assert_store_actions_keyed(actions: tuple[Any, ...]) -> None:
    """Whatever reaches the store has a usable key."""
    for action in actions:
        if isinstance(action, StoreAdd | StoreUpdate | StoreDelete):
            key = meta_namespace_key(action.obj)
            assert isinstance(key, str)
            assert key


@FUZZ
@given(text=selector_text)
def test_label_selectors(text: str, tried: Callable[[str], None]) -> None:
    tried("label selector")
    try:
        selector = LabelSelector.parse(text)
    except SelectorParseError:
        return
    # What parsed prints as something that parses to the same requirements.
    assert str(LabelSelector.parse(str(selector))) == str(selector)
    selector.matches({"a": "b"})


@FUZZ
@given(text=selector_text)
def test_field_selectors(text: str, tried: Callable[[str], None]) -> None:
    tried("field selector")
    try:
        selector = FieldSelector.parse(text)
    except SelectorParseError:
        return
    assert str(FieldSelector.parse(str(selector))) == str(selector)


@FUZZ
@given(body=json_value, code=st.integers(0, 999), text=st.text(max_size=50))
def test_status_bodies(body: Any, code: int, text: str, tried: Callable[[str], None]) -> None:
    tried("Status body")
    status = body if isinstance(body, dict) else None
    error = error_from_status(status, code, text=text)
    assert isinstance(error, ApiError)
    assert isinstance(error.status, int)
    str(error)


@FUZZ
@given(event=watch_event, seen=st.integers(0, 10**6))
def test_watch_events(event: Any, seen: int, tried: Callable[[str], None]) -> None:
    tried("watch event")
    state = Watching(Memory(last_sync_rv=str(seen)), rv=str(seen), events=1)
    try:
        _new_state, actions = step(state, WatchEvent(event), CONFIG)
    except InformersError:  # pragma: no cover - the machine reports, never raises
        raise AssertionError("step raised instead of reporting") from None
    assert_store_actions_keyed(actions)


@FUZZ
@given(
    body=st.one_of(
        json_value,
        st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries(
                    {}, optional={"resourceVersion": json_value, "continue": json_value}
                )
                | json_value,
                "items": st.lists(k8s_object, max_size=5) | json_value,
                "kind": json_value,
            },
        ),
    )
)
def test_list_bodies(body: Any, tried: Callable[[str], None]) -> None:
    tried("list body")
    state = Listing(Memory(), list_rv="0", limit=500)
    _new_state, actions = step(state, ListPage(body), CONFIG)
    assert_store_actions_keyed(actions)


def test_a_huge_event_type_is_not_repeated_whole_in_the_report(
    tried: Callable[[str], None],
) -> None:
    tried("watch event")
    state = Watching(Memory(last_sync_rv="1"), rv="1", events=1)
    huge = "X" * 1_000_000
    event = {"type": huge, "object": {"metadata": {"name": "a", "resourceVersion": "9" * 5000}}}
    _state, actions = step(state, WatchEvent(event), CONFIG)
    messages = [str(a.error) for a in actions if hasattr(a, "error")]
    assert messages
    assert all(len(m) < 500 for m in messages)
