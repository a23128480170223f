"""A stored version with a new resourceVersion serialises as if made anew,
whether its JSON is edited from the old version's or written again."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from informers.testing.apiserver._stored import Stored


def _obj(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "Thing",
        "apiVersion": "example.com/v1",
        "metadata": {"name": "a", "resourceVersion": "12", "labels": {"x": '"12"'}},
        "spec": spec,
    }


@given(
    st.dictionaries(
        st.sampled_from(["resourceVersion", "size", "note"]),
        st.sampled_from(["12", "13", 12, '"resourceVersion":"12"']),
        max_size=3,
    ),
    st.booleans(),
)
def test_with_rv_serialises_the_new_version(spec: dict[str, Any], serialised: bool) -> None:
    old = Stored(_obj(spec), "ns/a", 12, False)
    if serialised:
        assert json.loads(old.full_json) == old.obj
    new = old.with_rv(13)
    assert new.obj["metadata"]["resourceVersion"] == "13"
    assert old.obj["metadata"]["resourceVersion"] == "12"
    assert new.full_json == json.dumps(new.obj, separators=(",", ":")).encode()
    assert json.loads(old.full_json) == old.obj
