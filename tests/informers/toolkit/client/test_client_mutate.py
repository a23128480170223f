"""create_or_update and create_or_patch against the emulator: each outcome,
what is written for it, and the merge patch they compute (a property)."""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers import SharedInformerFactory, wait_for_cache_sync
from informers.testing import ApiServer
from informers.toolkit.client import (
    Client,
    OperationResult,
    create_or_patch,
    create_or_update,
    merge_patch,
)
from informers.wire.resources import Resource


def desired(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


def set_data(value: str) -> Any:
    def mutate(obj: MutableMapping[str, Any]) -> None:
        obj.setdefault("data", {})["k"] = value

    return mutate


@pytest.mark.parametrize("cached", [False, True])
def test_create_or_update_outcomes(
    api_server: ApiServer, api: Any, factory: SharedInformerFactory, ns: str, cached: bool
) -> None:
    if cached:
        informer = factory.configmaps()
        factory.start()
        wait_for_cache_sync(informer, timeout=10)
    client = Client(api, factory=factory if cached else None)
    obj = desired("a", ns)
    assert create_or_update(client, obj, set_data("1")) is OperationResult.CREATED
    assert obj["metadata"]["uid"]  # the server's answer
    assert obj["data"] == {"k": "1"}
    rv = api_server.resource_version
    obj = desired("a", ns)
    assert create_or_update(client, obj, set_data("1")) is OperationResult.UNCHANGED
    assert api_server.resource_version == rv  # nothing written
    assert obj["data"] == {"k": "1"}
    obj = desired("a", ns)
    assert create_or_update(client, obj, set_data("2")) is OperationResult.UPDATED
    assert api_server.get("configmaps", "a", ns)["data"] == {"k": "2"}
    assert OperationResult.UPDATED == "updated"


def test_create_or_update_keeps_the_name(live: Client, ns: str) -> None:
    def rename(obj: MutableMapping[str, Any]) -> None:
        obj["metadata"]["name"] = "other"

    with pytest.raises(ValueError, match="name"):
        create_or_update(live, desired("a", ns), rename)


def test_create_or_patch_outcomes(
    api_server: ApiServer, live: Client, ns: str, widgets: Resource
) -> None:
    def want(size: int, phase: str | None) -> Any:
        def mutate(obj: MutableMapping[str, Any]) -> None:
            obj["spec"] = {"size": size}
            if phase is not None:
                obj["status"] = {"phase": phase}

        return mutate

    def fresh() -> dict[str, Any]:
        return {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": ns},
        }

    assert create_or_patch(live, fresh(), want(1, None)) is OperationResult.CREATED
    assert create_or_patch(live, fresh(), want(1, None)) is OperationResult.UNCHANGED
    assert create_or_patch(live, fresh(), want(2, None)) is OperationResult.UPDATED
    assert create_or_patch(live, fresh(), want(2, "Ready")) is OperationResult.UPDATED_STATUS_ONLY
    obj = fresh()
    assert create_or_patch(live, obj, want(3, "Done")) is OperationResult.UPDATED_STATUS
    stored = api_server.get(widgets, "w", ns)
    assert stored["spec"] == {"size": 3}
    assert stored["status"] == {"phase": "Done"}
    assert obj["status"] == {"phase": "Done"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    ),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=2), json_values, max_size=4)


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386's reference algorithm."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def _no_nulls(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, dict):
        return all(_no_nulls(v) for v in value.values())
    return True


@given(json_objects, json_objects)
def test_merge_patch_turns_before_into_after(before: dict[str, Any], after: dict[str, Any]) -> None:
    # A merge patch cannot set a null inside an object (null deletes), so the
    # targets hold no nulls in mappings, as Kubernetes objects do not.
    if not (_no_nulls(before) and _no_nulls(after)):
        return
    patch = merge_patch(before, after)
    assert apply_merge_patch(before, patch) == after
    assert (patch == {}) == (before == after)
