"""tracker.syncapi: ObjectKey, the Syncer protocol and diff(), rule by rule,
then as properties."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.cache.factory import SharedInformerFactory
from tracker.errors import (
    ComparisonError,
    DiffError,
    IncompleteListError,
    InvalidListItemError,
    ObjectKeyParseError,
    SyncAPIError,
)
from tracker.syncapi import ObjectKey, Syncer, diff

# ------------------------------------------------------------------ helpers


@dataclass(frozen=True)
class Row:
    uid: str
    namespace: str
    name: str
    rv: str


def obj(namespace: str, name: str, uid: str, rv: str = "1") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": uid, "resourceVersion": rv}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata}


def row_of(o: dict[str, Any]) -> Row:
    m = o["metadata"]
    return Row(m["uid"], m.get("namespace", ""), m["name"], m["resourceVersion"])


def matches(o: dict[str, Any], row: Row) -> bool:
    return bool(o["metadata"]["resourceVersion"] == row.rv)


def key(row: Row) -> ObjectKey:
    return ObjectKey(row.namespace, row.name)


def k(text: str) -> ObjectKey:
    return ObjectKey.parse(text)


# ---------------------------------------------------------------- ObjectKey


def test_object_key_prints_like_the_go_original() -> None:
    assert str(ObjectKey("ns", "a")) == "ns/a"
    assert str(ObjectKey("", "node-1")) == "/node-1"


def test_object_key_store_key_is_the_informers_key() -> None:
    assert ObjectKey("ns", "a").store_key == "ns/a"
    assert ObjectKey("", "node-1").store_key == "node-1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ns/a", ObjectKey("ns", "a")),
        ("/node-1", ObjectKey("", "node-1")),
        ("node-1", ObjectKey("", "node-1")),
    ],
)
def test_object_key_parses_every_form(text: str, expected: ObjectKey) -> None:
    assert ObjectKey.parse(text) == expected


@pytest.mark.parametrize("text", ["", "/", "ns/", "a/b/c", "ns//a"])
def test_object_key_rejects_malformed_strings(text: str) -> None:
    with pytest.raises(ObjectKeyParseError):
        ObjectKey.parse(text)


def test_object_key_parse_rejects_non_strings() -> None:
    with pytest.raises(ObjectKeyParseError, match="must be a string"):
        ObjectKey.parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(("namespace", "name"), [("ns", ""), ("a/b", "c"), ("ns", "x/y")])
def test_object_key_rejects_bad_parts(namespace: str, name: str) -> None:
    with pytest.raises(ObjectKeyParseError):
        ObjectKey(namespace, name)


def test_object_key_is_frozen_and_hashable() -> None:
    key_ = ObjectKey("ns", "a")
    with pytest.raises(AttributeError):
        key_.name = "b"  # type: ignore[misc]
    assert {key_, ObjectKey("ns", "a")} == {key_}


def test_object_key_of_an_object() -> None:
    assert ObjectKey.of(obj("ns", "a", "u1")) == ObjectKey("ns", "a")
    assert ObjectKey.of(obj("", "n", "u1")) == ObjectKey("", "n")


@given(
    st.from_regex(r"[a-z0-9-]{0,8}", fullmatch=True),
    st.from_regex(r"[a-z0-9.-]{1,8}", fullmatch=True),
)
def test_object_key_round_trips_through_both_string_forms(namespace: str, name: str) -> None:
    key_ = ObjectKey(namespace, name)
    assert ObjectKey.parse(str(key_)) == key_
    assert ObjectKey.parse(key_.store_key) == key_


def test_syncapi_errors_are_one_tree() -> None:
    for cls in (ObjectKeyParseError, ComparisonError, IncompleteListError, InvalidListItemError):
        assert issubclass(cls, SyncAPIError)
    assert issubclass(ObjectKeyParseError, ValueError)
    assert issubclass(InvalidListItemError, TypeError)


# ------------------------------------------------------------------- Syncer


class ListSyncer:
    """A Syncer over a dict, to check the protocol is implementable."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.live: list[dict[str, Any]] = []

    def new_object(self) -> dict[str, Any]:
        return {}

    def sources(self, factory: SharedInformerFactory) -> Sequence[Any]:
        return []

    def sync(self, obj: dict[str, Any]) -> None:
        self.rows[obj["metadata"]["uid"]] = row_of(obj)

    def delete(self, key: ObjectKey) -> None:
        for uid, row in list(self.rows.items()):
            if (row.namespace, row.name) == (key.namespace, key.name):
                del self.rows[uid]

    def diff(self) -> list[ObjectKey]:
        return diff(self.live, dict(self.rows), matches, key)


def test_a_syncer_implementation_satisfies_the_protocol() -> None:
    syncer = ListSyncer()
    assert isinstance(syncer, Syncer)
    syncer.live = [obj("ns", "a", "u1")]
    assert syncer.diff() == [k("ns/a")]
    syncer.sync(syncer.live[0])
    assert syncer.diff() == []
    syncer.live = []
    assert syncer.diff() == [k("ns/a")]
    syncer.delete(k("ns/a"))
    assert syncer.diff() == []


# --------------------------------------------------------- diff, rule by rule


def test_in_sync_list_and_rows_yield_nothing() -> None:
    live = [obj("ns", "a", "u1"), obj("ns", "b", "u2")]
    assert diff(live, {r.uid: r for r in map(row_of, live)}, matches, key) == []


def test_an_object_with_no_row_yields_its_key() -> None:
    assert diff([obj("ns", "a", "u1")], {}, matches, key) == [k("ns/a")]


def test_an_object_whose_row_does_not_match_yields_its_key() -> None:
    rows = {"u1": Row("u1", "ns", "a", "1")}
    assert diff([obj("ns", "a", "u1", rv="2")], rows, matches, key) == [k("ns/a")]


def test_live_keys_come_in_list_order_not_sorted() -> None:
    live = [obj("ns", "c", "u3"), obj("ns", "a", "u1"), obj("ab", "b", "u2")]
    assert diff(live, {}, matches, key) == [k("ns/c"), k("ns/a"), k("ab/b")]


def test_orphan_rows_yield_their_keys_sorted_after_the_live_ones() -> None:
    rows = {
        "u9": Row("u9", "z", "x", "1"),
        "u8": Row("u8", "a", "y", "1"),
        "u7": Row("u7", "", "node", "1"),
    }
    live = [obj("m", "live", "u1")]
    assert diff(live, rows, matches, key) == [k("m/live"), k("/node"), k("a/y"), k("z/x")]


def test_orphans_sort_by_the_namespace_slash_name_string() -> None:
    # "a-b/x" < "a/x" as strings ("-" sorts before "/"), unlike the (namespace, name) tuples.
    rows = {"u1": Row("u1", "a", "x", "1"), "u2": Row("u2", "a-b", "x", "1")}
    assert diff([], rows, matches, key) == [k("a-b/x"), k("a/x")]


def test_a_recreated_object_is_returned_once() -> None:
    # The row mirrors the old incarnation (uid u1); the live object has a new uid.
    rows = {"u1": Row("u1", "ns", "a", "1")}
    assert diff([obj("ns", "a", "u2", rv="5")], rows, matches, key) == [k("ns/a")]


def test_two_stale_rows_of_one_key_yield_it_once() -> None:
    rows = {"u1": Row("u1", "ns", "a", "1"), "u2": Row("u2", "ns", "a", "2")}
    assert diff([], rows, matches, key) == [k("ns/a")]


def test_a_duplicated_live_key_is_yielded_once() -> None:
    assert diff([obj("ns", "a", "u1"), obj("ns", "a", "u2")], {}, matches, key) == [k("ns/a")]


def test_matches_is_called_only_for_objects_with_a_row() -> None:
    calls: list[str] = []

    def spy(o: dict[str, Any], row: Row) -> bool:
        calls.append(o["metadata"]["uid"])
        return True

    diff([obj("ns", "a", "u1"), obj("ns", "b", "u2")], {"u2": Row("u2", "ns", "b", "1")}, spy, key)
    assert calls == ["u2"]


def test_a_comparison_error_discards_partial_results() -> None:
    def fails_on_b(o: dict[str, Any], row: Row) -> bool:
        if o["metadata"]["name"] == "b":
            raise RuntimeError("cannot compare")
        return False

    rows = {"u1": Row("u1", "ns", "a", "0"), "u2": Row("u2", "ns", "b", "0")}
    live = [obj("ns", "a", "u1"), obj("ns", "b", "u2")]
    with pytest.raises(ComparisonError, match="ns/b") as info:
        diff(live, rows, fails_on_b, key)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert info.value.key == "ns/b"


def test_an_item_of_the_wrong_type_is_an_error() -> None:
    with pytest.raises(InvalidListItemError, match="list item 1") as info:
        diff([obj("ns", "a", "u1"), ["not", "an", "object"]], {}, matches, key)
    assert info.value.index == 1


def test_item_type_selects_the_kinds_type() -> None:
    @dataclass
    class Meta:
        name: str
        namespace: str
        uid: str

    @dataclass
    class Typed:
        metadata: Meta

    typed = [Typed(Meta("a", "ns", "u1"))]
    assert diff(typed, {}, matches, key, item_type=Typed) == [k("ns/a")]
    with pytest.raises(InvalidListItemError):
        diff([obj("ns", "a", "u1")], {}, matches, key, item_type=Typed)


def test_an_item_with_no_uid_is_an_error_naming_it() -> None:
    item = {"metadata": {"namespace": "ns", "name": "a"}}
    with pytest.raises(InvalidListItemError, match=r"list item 0 \(ns/a\): has no metadata.uid"):
        diff([item], {}, matches, key)


def test_an_item_with_no_name_is_an_error() -> None:
    with pytest.raises(InvalidListItemError, match=r"no metadata\.name"):
        diff([{"metadata": {"uid": "u1"}}], {}, matches, key)


def test_an_incomplete_list_is_an_error() -> None:
    with pytest.raises(IncompleteListError) as info:
        diff([obj("ns", "a", "u1")], {}, matches, key, continue_token="abc")
    assert info.value.continue_token == "abc"


def test_an_incomplete_list_response_is_an_error_before_any_comparison() -> None:
    def never(o: dict[str, Any], row: Row) -> bool:
        raise AssertionError("matches must not run on an incomplete list")

    response = {"items": [obj("ns", "a", "u1")], "metadata": {"continue": "tok"}}
    with pytest.raises(IncompleteListError):
        diff(response, {"u1": Row("u1", "ns", "a", "1")}, never, key)


def test_a_complete_list_response_is_walked() -> None:
    response = {
        "kind": "PodList",
        "metadata": {"resourceVersion": "9", "continue": ""},
        "items": [obj("ns", "a", "u1")],
    }
    assert diff(response, {}, matches, key) == [k("ns/a")]


def test_a_list_response_whose_items_are_not_a_list_is_an_error() -> None:
    with pytest.raises(DiffError, match="not a list"):
        diff({"items": "nope"}, {}, matches, key)


def test_objects_that_are_not_a_list_are_an_error() -> None:
    with pytest.raises(DiffError, match="must be a list"):
        diff(3, {}, matches, key)


def test_row_keys_may_be_strings() -> None:
    rows = {"u1": "ns/a", "u2": "/node"}
    assert diff([], rows, lambda o, r: True, lambda r: r) == [k("/node"), k("ns/a")]


def test_a_failing_row_key_is_a_diff_error() -> None:
    with pytest.raises(DiffError, match="uid 'u1'"):
        diff([], {"u1": Row("u1", "ns", "a", "1")}, matches, lambda r: "a/b/c")


def test_an_iterable_of_objects_is_accepted() -> None:
    assert diff(iter([obj("ns", "a", "u1")]), {}, matches, key) == [k("ns/a")]


def test_inputs_are_not_mutated() -> None:
    live = [obj("ns", "a", "u1"), obj("ns", "b", "u2", rv="3")]
    rows = {"u2": Row("u2", "ns", "b", "1"), "u9": Row("u9", "ns", "z", "1")}
    before = (copy.deepcopy(live), dict(rows))
    diff(live, rows, matches, key)
    assert (live, rows) == before


# -------------------------------------------------------------- properties

names = st.sampled_from(["a", "b", "c", "d", "e"])
namespaces = st.sampled_from(["", "ns", "ns-2", "x"])
uids = st.sampled_from([f"u{i}" for i in range(8)])


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Row]]:
    """A live list (unique uids) and rows: some in sync, some stale, some orphaned."""
    live_uids = draw(st.lists(uids, unique=True, max_size=6))
    live = [
        obj(draw(namespaces), draw(names), uid, rv=str(draw(st.integers(1, 3))))
        for uid in live_uids
    ]
    rows: dict[str, Row] = {}
    for o in live:
        choice = draw(st.sampled_from(["same", "stale", "none"]))
        if choice == "same":
            rows[o["metadata"]["uid"]] = row_of(o)
        elif choice == "stale":
            rows[o["metadata"]["uid"]] = Row(o["metadata"]["uid"], "", "old", "0")
    for uid in draw(st.lists(uids, unique=True, max_size=5)):
        if uid not in live_uids:
            rows[uid] = Row(uid, draw(namespaces), draw(names), "1")
    return live, rows


@given(scenarios())
def test_property_no_duplicates(scenario: tuple[list[dict[str, Any]], dict[str, Row]]) -> None:
    live, rows = scenario
    result = diff(live, rows, matches, key)
    assert len(result) == len(set(result))


@given(scenarios())
def test_property_every_live_non_matching_object_is_present(
    scenario: tuple[list[dict[str, Any]], dict[str, Row]],
) -> None:
    live, rows = scenario
    result = set(diff(live, rows, matches, key))
    for o in live:
        row = rows.get(o["metadata"]["uid"])
        if row is None or not matches(o, row):
            assert ObjectKey.of(o) in result
    for uid, row in rows.items():
        if uid not in {o["metadata"]["uid"] for o in live}:
            assert key(row) in result


@given(scenarios())
def test_property_live_in_list_order_then_orphans_sorted(
    scenario: tuple[list[dict[str, Any]], dict[str, Row]],
) -> None:
    live, rows = scenario
    result = diff(live, rows, matches, key)
    live_uids = {o["metadata"]["uid"] for o in live}
    expected_live: list[ObjectKey] = []
    for o in live:
        row = rows.get(o["metadata"]["uid"])
        if (row is None or not matches(o, row)) and ObjectKey.of(o) not in expected_live:
            expected_live.append(ObjectKey.of(o))
    assert result[: len(expected_live)] == expected_live
    orphans = result[len(expected_live) :]
    assert orphans == sorted(orphans, key=str)
    orphan_keys = {key(r) for uid, r in rows.items() if uid not in live_uids}
    assert set(orphans) == orphan_keys - set(expected_live)


@given(scenarios())
def test_property_matching_objects_without_orphans_of_their_key_are_absent(
    scenario: tuple[list[dict[str, Any]], dict[str, Row]],
) -> None:
    live, rows = scenario
    result = set(diff(live, rows, matches, key))
    live_uids = {o["metadata"]["uid"] for o in live}
    needing = {key(r) for uid, r in rows.items() if uid not in live_uids}
    for o in live:
        row = rows.get(o["metadata"]["uid"])
        if row is None or not matches(o, row):
            needing.add(ObjectKey.of(o))
    assert result == needing


@given(scenarios())
def test_property_inputs_unchanged(scenario: tuple[list[dict[str, Any]], dict[str, Row]]) -> None:
    live, rows = scenario
    before = (copy.deepcopy(live), dict(rows), list(rows))
    diff(live, rows, matches, key)
    assert (live, rows, list(rows)) == before


@given(scenarios(), st.integers(0, 5))
def test_property_a_comparison_error_anywhere_returns_nothing(
    scenario: tuple[list[dict[str, Any]], dict[str, Row]], fail_at: int
) -> None:
    live, rows = scenario
    compared = [o for o in live if o["metadata"]["uid"] in rows]
    calls = 0

    def flaky(o: dict[str, Any], row: Row) -> bool:
        nonlocal calls
        calls += 1
        if calls > fail_at:
            raise ValueError("boom")
        return matches(o, row)

    if len(compared) > fail_at:
        with pytest.raises(ComparisonError):
            diff(live, rows, flaky, key)
    else:
        assert diff(live, rows, flaky, key) == diff(live, rows, matches, key)
