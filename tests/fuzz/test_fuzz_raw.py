"""Hostile input over the decode-on-demand path (informers.wire.raw): the same
list bodies and watch events as the parser targets, as bytes, through the raw
split and through the exact parser -- the reflector's machine must take the
same steps on both -- and arbitrary or mutated bytes, which RawObject must
accept or refuse exactly as the exact parser does."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from informers.cache.reflector.machine import Listing, ListPage, Memory, WatchEvent, Watching, step
from informers.errors import ObjectKeyError
from informers.wire import _json
from informers.wire.objects import get_labels, get_resource_version, meta_namespace_key
from informers.wire.raw import RawObject, loads_list, loads_watch_event
from tests.fuzz.test_fuzz_parsers import CONFIG, FUZZ, json_value, k8s_object, watch_event


def _same_steps(raw: Any, exact: Any, make_state: Callable[[], Any], make_input: Any) -> None:
    raw_state, raw_actions = step(make_state(), make_input(raw), CONFIG)
    exact_state, exact_actions = step(make_state(), make_input(exact), CONFIG)
    assert [type(a) for a in raw_actions] == [type(a) for a in exact_actions]
    assert type(raw_state) is type(exact_state)
    for got, want in zip(raw_actions, exact_actions, strict=True):
        obj = getattr(want, "obj", None)
        if obj is not None:
            assert getattr(got, "obj", None) == obj


@FUZZ
@given(event=watch_event, seen=st.integers(0, 10**6))
def test_raw_watch_events(event: Any, seen: int, tried: Callable[[str], None]) -> None:
    tried("raw watch event")
    line = json.dumps(event).encode()
    try:
        raw = loads_watch_event(line)
    except ValueError:
        # The raw path refuses only events without a string type or object.
        assert not (
            isinstance(event, dict) and isinstance(event.get("type"), str) and "object" in event
        )
        return

    def state() -> Any:
        return Watching(Memory(last_sync_rv=str(seen)), rv=str(seen), events=1)

    _same_steps(raw, _json.loads(line), state, WatchEvent)


@FUZZ
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            "metadata": st.fixed_dictionaries({}, optional={"resourceVersion": json_value})
            | json_value,
            "items": st.lists(k8s_object, max_size=5) | st.none(),
            "kind": json_value,
        },
    )
)
def test_raw_list_bodies(body: Any, tried: Callable[[str], None]) -> None:
    tried("raw list body")
    data = json.dumps(body).encode()
    raw = loads_list(data)
    exact = _json.loads(data)
    if exact.get("items") is None:
        exact["items"] = []  # as the lister-watcher does
    assert raw == exact  # the items compare as their exact decodes

    def state() -> Any:
        return Listing(Memory(), list_rv="0", limit=500)

    _same_steps(raw, exact, state, ListPage)


_fragments = st.sampled_from(
    [
        b"NaN",
        b"-Infinity",
        b"1e999",
        b"123456789012345678901234567890",
        b'"\\ud800"',
        b'"\xff"',
        b'"\xc3\xa9"',
        b"[" * 50 + b"]" * 50,
        b"{",
        b'{"a":1,"a":2}',
        b"01",
        b"true",
        b'"x"',
    ]
)


@FUZZ
@given(
    name=_fragments | st.just(b'"n"'),
    labels=_fragments | st.just(b'{"app":"web"}'),
    spec=_fragments,
    cut=st.integers(0, 400),
)
def test_raw_objects_accept_and_refuse_as_the_exact_parser(
    name: bytes, labels: bytes, spec: bytes, cut: int, tried: Callable[[str], None]
) -> None:
    tried("raw object bytes")
    data = b'{"metadata":{"name":' + name + b',"labels":' + labels + b'},"spec":' + spec + b"}"
    if cut % 7 == 0:
        data = data[: cut % (len(data) + 1)]
    try:
        exact = _json.loads(data)
    except ValueError:
        try:
            raw = RawObject(data)
        except ValueError:
            return
        # Accepted while reading metadata only: refused at the full decode.
        try:
            raw.decoded()
        except ValueError:
            return
        raise AssertionError("accepted bytes the exact parser refuses") from None
    raw = RawObject(data)
    assert repr(raw.decoded()) == repr(exact)
    for read in (get_resource_version, lambda o: dict(get_labels(o))):
        assert read(raw) == read(exact)
    outcomes = []
    for obj in (raw, exact):
        try:
            outcomes.append(meta_namespace_key(obj))
        except ObjectKeyError:
            outcomes.append("no key")
    assert outcomes[0] == outcomes[1]
