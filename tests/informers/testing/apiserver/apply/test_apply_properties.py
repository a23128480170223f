"""Properties of server-side apply over random sequences of applies and
updates by several managers, on a Deployment (typed lists and maps)."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from informers.testing.apiserver._apply import (
    ApplyConflictError,
    apply,
    record_update,
    target_for,
)
from informers.testing.apiserver._apply.fieldpath import FieldSet, Path
from informers.testing.apiserver._apply.managed import decode
from informers.testing.apiserver._apply.merge import field_set
from informers.testing.apiserver._apply.operations import _scoped

TARGET = target_for("apps", "v1", "Deployment", builtin=True, status_subresource=True)
SCHEMA = TARGET.schema

_small = st.sampled_from(["1", "2"])
_env = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["A", "B", "C"]), "value": _small}),
    min_size=1,
    max_size=3,
    unique_by=lambda e: e["name"],
)
_container = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "side", "log"])},
    optional={"image": _small, "env": _env, "args": st.lists(_small, min_size=1, max_size=2)},
)
_spec = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(1, 3),
        "paused": st.booleans(),
        "minReadySeconds": st.integers(0, 2),
        "template": st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries(
                    {
                        "labels": st.dictionaries(
                            st.sampled_from(["a", "b", "c"]), _small, min_size=1
                        )
                    }
                ),
                "spec": st.fixed_dictionaries(
                    {},
                    optional={
                        "containers": st.lists(
                            _container, min_size=1, max_size=3, unique_by=lambda c: c["name"]
                        ),
                        "tolerations": st.lists(
                            st.fixed_dictionaries({"key": _small}), min_size=1, max_size=2
                        ),
                        "nodeSelector": st.dictionaries(
                            st.sampled_from(["x", "y"]), _small, min_size=1
                        ),
                    },
                ),
            },
        ),
    },
)
_meta = st.fixed_dictionaries(
    {},
    optional={
        "labels": st.dictionaries(st.sampled_from(["a", "b"]), _small, min_size=1),
        "finalizers": st.lists(st.sampled_from(["f/1", "f/2", "f/3"]), min_size=1, unique=True),
    },
)


def _config(meta: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", **meta},
        "spec": spec,
    }


_configs = st.builds(_config, _meta, _spec)
_appliers = st.sampled_from(["alice", "bob"])
_apply_ops = st.tuples(st.just("apply"), _appliers, _configs, st.booleans())
_update_ops = st.tuples(st.just("update"), st.just("updater"), _configs, st.just(False))
_ops = st.lists(st.one_of(_apply_ops, _update_ops), min_size=1, max_size=6)


def _run(ops: list[tuple[str, str, dict[str, Any], bool]]) -> dict[str, Any] | None:
    """Play ``ops`` on an initially missing object; updates merge their
    configuration over the object (as a client's patch would)."""
    live: dict[str, Any] | None = None
    for kind, who, config, force in ops:
        if kind == "apply" or live is None:
            with contextlib.suppress(ApplyConflictError):
                live = apply(live, config, manager=who, force=force, target=TARGET)
            continue
        new = copy.deepcopy(live)
        new["metadata"].update(copy.deepcopy(config["metadata"]))
        new["spec"].update(copy.deepcopy(config["spec"]))
        record_update(live, new, manager=who, target=TARGET)
        live = new
    return live


def _owned(obj: dict[str, Any]) -> dict[tuple[str, str, str, str], FieldSet]:
    return {
        ident: entry.fields for ident, entry in decode(obj["metadata"].get("managedFields")).items()
    }


def _object_fields(obj: dict[str, Any]) -> FieldSet:
    plain = copy.deepcopy(obj)
    plain["metadata"].pop("managedFields", None)
    return _scoped(field_set(plain, SCHEMA), TARGET, "")


def _without_empty_objects(value: Any) -> Any:
    """``value`` without the empty objects it holds (an update that empties
    an object leaves it unowned, as the real server does)."""
    if isinstance(value, dict):
        kept = {k: _without_empty_objects(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [_without_empty_objects(v) for v in value]
    return value


def _leaves(fields: FieldSet, prefix: Path = ()) -> list[Path]:
    out: list[Path] = []
    for element in fields.members:
        if element not in fields.children:
            out.append((*prefix, element))
    for element, child in fields.children.items():
        out.extend(_leaves(child, (*prefix, element)))
    return out


def _key_field_of_owned_item(path: Path, union: FieldSet) -> bool:
    """A key field of a list item some manager owns something in."""
    return len(path) >= 2 and path[-2][0] == "k" and union.has_prefix(path[:-1])


@settings(max_examples=150, deadline=None)
@given(_ops, _configs, _appliers)
def test_applying_the_same_configuration_twice_changes_nothing(
    ops: list[tuple[str, str, dict[str, Any], bool]], config: dict[str, Any], who: str
) -> None:
    live = _run(ops)
    once = apply(
        live, config, manager=who, force=True, target=TARGET, timestamp="2026-01-01T00:00:01Z"
    )
    twice = apply(
        once, config, manager=who, force=False, target=TARGET, timestamp="2026-01-01T00:00:02Z"
    )
    assert twice == once


@settings(max_examples=200, deadline=None)
@given(_ops)
def test_ownership_covers_the_object_and_nothing_else(
    ops: list[tuple[str, str, dict[str, Any], bool]],
) -> None:
    live = _run(ops)
    assert live is not None
    owned = _owned(live)
    present = _object_fields(live)
    union = FieldSet()
    for fields in owned.values():
        union = union.union(fields)
        for path in fields.paths():  # every owned field exists
            assert present.has_prefix(path), path
    filled = _object_fields(_without_empty_objects(live))
    for leaf in _leaves(filled):  # every field has an owner
        assert union.has(leaf) or _key_field_of_owned_item(leaf, union), leaf
    appliers = [ident for ident in owned if ident[1] == "Apply"]
    assert len(appliers) == len({ident[0] for ident in appliers})  # one entry per applier


@settings(max_examples=200, deadline=None)
@given(_ops, _configs, _configs, _appliers)
def test_a_dropped_field_is_removed_only_when_nobody_else_owns_it(
    ops: list[tuple[str, str, dict[str, Any], bool]],
    first: dict[str, Any],
    second: dict[str, Any],
    who: str,
) -> None:
    live = apply(_run(ops), first, manager=who, force=True, target=TARGET)
    before = _owned(live)
    mine = next(fields for ident, fields in before.items() if ident[:2] == (who, "Apply"))
    after = apply(live, second, manager=who, force=True, target=TARGET)
    now_applied = _scoped(field_set(second, SCHEMA), TARGET, "")
    others = FieldSet()
    for ident, fields in _owned(after).items():
        if ident[:2] != (who, "Apply"):
            others = others.union(fields)
    present = _object_fields(after)
    for path in mine.difference(now_applied).paths():
        if now_applied.has_prefix(path):
            continue  # still partly applied: its applied part decides
        if others.has_prefix(path):
            assert present.has_prefix(path), f"{path} is owned by another manager yet removed"
        elif not any(
            now_applied.has_prefix(path[:i]) and now_applied.has(path[:i])
            for i in range(1, len(path))
        ):
            assert not present.has(path), f"{path} is owned by nobody yet still there"
