"""The grace period a pod DELETE gets (pure rules, with properties)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver import _graceful
from informers.testing.apiserver._status import StatusError

_PODS = st.fixed_dictionaries(
    {
        "metadata": st.just({"name": "p"}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "nodeName": st.sampled_from(["", "n1"]),
                "terminationGracePeriodSeconds": st.integers(-5, 100),
            },
        ),
        "status": st.fixed_dictionaries(
            {}, optional={"phase": st.sampled_from(["Pending", "Running", "Succeeded", "Failed"])}
        ),
    }
)


@given(_PODS, st.one_of(st.none(), st.integers(0, 100)))
def test_the_grace_period_is_never_negative_and_zero_when_no_kubelet_runs_it(
    pod: dict[str, Any], requested: int | None
) -> None:
    grace = _graceful.grace_period(pod, requested)
    assert grace >= 0
    if not pod["spec"].get("nodeName") or pod["status"].get("phase") in ("Succeeded", "Failed"):
        assert grace == 0
    elif requested is not None:
        assert grace == requested
    elif "terminationGracePeriodSeconds" not in pod["spec"]:
        assert grace == _graceful.DEFAULT_GRACE_SECONDS


@given(st.integers(1, 100), st.integers(0, 100))
def test_a_later_delete_only_shortens_the_grace_period(first: int, second: int) -> None:
    pod = {"metadata": {"name": "p", "resourceVersion": "1"}, "spec": {"nodeName": "n"}}
    marked = _graceful.terminating(pod, first, 2)
    assert marked is not None
    assert marked["metadata"]["deletionGracePeriodSeconds"] == first
    again = _graceful.terminating(marked, second, 3)
    if second < first:
        assert again is not None
        assert again["metadata"]["deletionGracePeriodSeconds"] == second
    else:
        assert again is None
    assert pod["metadata"] == {"name": "p", "resourceVersion": "1"}  # not mutated


def test_a_requested_grace_period_must_be_an_integer() -> None:
    assert _graceful.requested_grace({}, None) is None
    assert _graceful.requested_grace({"gracePeriodSeconds": 5}, None) == 5
    assert _graceful.requested_grace({}, "7") == 7
    assert _graceful.requested_grace({"gracePeriodSeconds": -1}, None) == 0
    with pytest.raises(StatusError) as err:
        _graceful.requested_grace({}, "soon")
    assert err.value.code == 400
