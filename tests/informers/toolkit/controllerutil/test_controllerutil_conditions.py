"""informers.toolkit.controllerutil.conditions: apimachinery's
SetStatusCondition rules (lastTransitionTime moves only with status;
reason, message, observedGeneration replaced), checked on examples and
against a model with hypothesis."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.errors import InvalidConditionError
from informers.toolkit.controllerutil import (
    find_status_condition,
    format_time,
    is_status_condition_false,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)

T0 = datetime(2026, 12, 4, 18, 0, 0, 123456, tzinfo=UTC)
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def _cond(ctype: str = "Ready", status: str = "True", **extra: Any) -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": "Synced", "message": "", **extra}


def test_format_time_is_rfc3339_seconds_utc() -> None:
    assert format_time(T0) == "2026-12-04T18:00:00Z"
    east = T0.astimezone(timezone(timedelta(hours=2)))
    assert format_time(east) == "2026-12-04T18:00:00Z"
    assert format_time(datetime(5, 1, 2, 3, 4, 5)) == "0005-01-02T03:04:05Z"  # naive is UTC


def test_new_condition_is_appended_with_now() -> None:
    conditions: list[dict[str, Any]] = []
    assert set_status_condition(conditions, _cond(), now=T0)
    assert conditions == [_cond(lastTransitionTime="2026-12-04T18:00:00Z")]
    assert is_status_condition_true(conditions, "Ready")
    assert not is_status_condition_false(conditions, "Ready")


def test_default_now_is_the_current_time() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond())
    stamp = conditions[0]["lastTransitionTime"]
    assert RFC3339.match(stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs(parsed - datetime.now(UTC)) < timedelta(minutes=1)


def test_given_transition_time_is_kept() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond(lastTransitionTime="2020-01-01T00:00:00Z"), now=T0)
    assert conditions[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"


def test_same_status_keeps_the_transition_time() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond(), now=T0)
    later = T0 + timedelta(hours=1)
    assert set_status_condition(conditions, _cond(reason="Other", message="m"), now=later)
    assert conditions[0]["lastTransitionTime"] == "2026-12-04T18:00:00Z"
    assert conditions[0]["reason"] == "Other"
    assert conditions[0]["message"] == "m"
    assert not set_status_condition(conditions, _cond(reason="Other", message="m"), now=later)


def test_status_change_moves_the_transition_time() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond(), now=T0)
    assert set_status_condition(conditions, _cond(status="False"), now=T0 + timedelta(hours=1))
    assert conditions[0]["lastTransitionTime"] == "2026-12-04T19:00:00Z"
    assert is_status_condition_false(conditions, "Ready")


def test_observed_generation_is_set_and_removed() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond(observedGeneration=0), now=T0)
    assert "observedGeneration" not in conditions[0]  # 0 is absent, as omitempty
    assert set_status_condition(conditions, _cond(observedGeneration=3), now=T0)
    assert conditions[0]["observedGeneration"] == 3
    assert not set_status_condition(conditions, _cond(observedGeneration=3), now=T0)
    assert set_status_condition(conditions, _cond(), now=T0)
    assert "observedGeneration" not in conditions[0]


def test_missing_transition_time_of_an_existing_condition_is_filled() -> None:
    conditions = [_cond()]
    assert set_status_condition(conditions, _cond(), now=T0)
    assert conditions[0]["lastTransitionTime"] == "2026-12-04T18:00:00Z"


def test_find_remove_and_the_new_condition_is_copied() -> None:
    new = _cond("Progressing", "Unknown")
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _cond(), now=T0)
    set_status_condition(conditions, new, now=T0)
    assert conditions[1] is not new
    assert "lastTransitionTime" not in new
    assert find_status_condition(conditions, "Progressing") is conditions[1]
    assert find_status_condition(None, "Ready") is None
    assert not is_status_condition_true(conditions, "Progressing")
    assert not is_status_condition_false(conditions, "Progressing")
    assert remove_status_condition(conditions, "Ready")
    assert [c["type"] for c in conditions] == ["Progressing"]
    assert not remove_status_condition(conditions, "Ready")


@pytest.mark.parametrize(
    "bad", [{"status": "True"}, {"type": "", "status": "True"}, {"type": "Ready", "status": "yes"}]
)
def test_invalid_conditions_raise_and_change_nothing(bad: dict[str, Any]) -> None:
    conditions = [_cond(lastTransitionTime="2020-01-01T00:00:00Z")]
    before = copy.deepcopy(conditions)
    with pytest.raises(InvalidConditionError):
        set_status_condition(conditions, bad)
    assert conditions == before


CONDITIONS = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Ready", "Progressing", "Degraded"]),
        "status": st.sampled_from(["True", "False", "Unknown"]),
        "reason": st.sampled_from(["A", "B"]),
        "message": st.sampled_from(["", "m"]),
    },
    optional={"observedGeneration": st.integers(0, 3)},
)


@given(st.lists(st.tuples(CONDITIONS, st.integers(0, 10_000)), max_size=15))
def test_set_matches_the_model(steps: list[tuple[dict[str, Any], int]]) -> None:
    conditions: list[dict[str, Any]] = []
    # the model: type -> (status, reason, message, generation, transition time)
    model: dict[str, tuple[str, str, str, int, str]] = {}
    for condition, seconds in steps:
        now = T0 + timedelta(seconds=seconds)
        old = model.get(condition["type"])
        status_changed = old is None or old[0] != condition["status"]
        stamp = format_time(now) if status_changed else old[4]  # type: ignore[index]
        entry = (
            condition["status"],
            condition["reason"],
            condition["message"],
            condition.get("observedGeneration", 0),
            stamp,
        )
        before = copy.deepcopy(conditions)
        changed = set_status_condition(conditions, condition, now=now)
        model[condition["type"]] = entry
        assert changed == (old != entry)
        assert changed == (conditions != before)
        assert len(conditions) == len(model)  # one condition per type
        got = find_status_condition(conditions, condition["type"])
        assert got is not None
        assert (
            got["status"],
            got["reason"],
            got["message"],
            got.get("observedGeneration", 0),
            got["lastTransitionTime"],
        ) == entry
        assert RFC3339.match(got["lastTransitionTime"])
        # idempotent, at any later time
        again = copy.deepcopy(conditions)
        assert not set_status_condition(conditions, condition, now=now + timedelta(days=1))
        assert conditions == again
