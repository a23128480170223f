"""Every plain-dict fast path of :mod:`informers.wire.fastpath` against its
plain (general) form.

Each property draws inputs from decoded JSON and from what a fast path must
decline: dict subclasses, other mappings, attribute-style objects,
tombstones, ``str`` subclasses, values of the wrong type. Where a fast path
answers, the answer is the general form's; where the general form raises,
the fast path declines (and a function that falls back to the general form
raises the same error, with the same message). Each also takes every
well-formed plain input, so the properties compare something.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from types import MappingProxyType, SimpleNamespace
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from informers.cache.reflector import (
    Memory,
    ReflectorConfig,
    StoreAdd,
    StoreBookmark,
    StoreDelete,
    StoreUpdate,
    WatchEvent,
    Watching,
    step,
)
from informers.errors import InformersError, ObjectKeyError
from informers.wire import fastpath
from informers.wire.objects import (
    DeletedFinalStateUnknown,
    deletion_handling_meta_namespace_key,
    get_labels,
    get_namespace,
    get_resource_version,
    meta_namespace_key,
    meta_namespace_keys,
)
from informers.wire.selectors import LabelRequirement, LabelSelector, Operator

# ------------------------------------------------------------------ the inputs


class Text(str):
    """A str subclass whose equality ignores case: never decoded JSON."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.lower() == other.lower()

    __hash__ = str.__hash__


class LooseDict(dict[str, Any]):
    """A dict subclass whose ``get`` finds every key."""

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key, "x")


class View(Mapping[str, Any]):
    """A mapping that is not a dict."""

    def __init__(self, items: dict[str, Any]) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


strings = st.sampled_from(["", "a", "ns", "NS", "12", "9"])
odd_values = st.one_of(
    st.none(),
    st.integers(-2, 2),
    st.builds(Text, strings),
    st.just(["a"]),
    st.just(b"a"),
)
values = st.one_of(strings, strings, odd_values)
label_values = st.one_of(strings, strings, odd_values)
labels = st.dictionaries(st.sampled_from(["app", "tier"]), label_values, max_size=2)
label_fields = st.one_of(
    labels,
    labels,
    labels.map(LooseDict),
    labels.map(View),
    labels.map(MappingProxyType),
    st.none(),
    st.just("app=a"),
)


def wrap_metadata(draw: st.DrawFn, metadata: dict[str, Any]) -> Any:
    """``metadata`` as a plain object or as something a fast path declines."""
    kind = draw(st.sampled_from(["plain"] * 6 + ["loose", "view", "attr", "bad", "tomb", "odd"]))
    if kind == "plain":
        return {"metadata": metadata}
    if kind == "loose":
        return draw(
            st.sampled_from([LooseDict(metadata=metadata), {"metadata": LooseDict(metadata)}])
        )
    if kind == "view":
        return draw(st.sampled_from([View({"metadata": metadata}), {"metadata": View(metadata)}]))
    if kind == "attr":
        fields = {
            {"resourceVersion": "resource_version"}.get(key, key): value
            for key, value in metadata.items()
        }
        return SimpleNamespace(metadata=SimpleNamespace(**fields))
    if kind == "bad":
        return draw(st.sampled_from([{}, {"metadata": None}, {"metadata": 3}, {"metadata": "m"}]))
    if kind == "tomb":
        return DeletedFinalStateUnknown("ns/a", {"metadata": metadata})
    return draw(st.sampled_from([None, 7, "pod", ["metadata"]]))


@st.composite
def objects(draw: st.DrawFn) -> Any:
    metadata: dict[str, Any] = {}
    for field in ("name", "namespace", "resourceVersion"):
        if draw(st.integers(0, 4)):
            metadata[field] = draw(values)
    if draw(st.booleans()):
        metadata["labels"] = draw(label_fields)
    return wrap_metadata(draw, metadata)


@st.composite
def plain_objects(draw: st.DrawFn) -> dict[str, Any]:
    """What the API sends: a name, a namespace or none, a resource version."""
    metadata: dict[str, Any] = {"name": draw(st.sampled_from(["a", "b"]))}
    namespace = draw(st.sampled_from(["ns", "", None, "absent"]))
    if namespace != "absent":
        metadata["namespace"] = namespace
    metadata["resourceVersion"] = draw(st.sampled_from(["1", "22", ""]))
    return {"metadata": metadata}


@st.composite
def nearly_plain_objects(draw: st.DrawFn) -> Any:
    """A plain object with, half the time, one metadata field replaced by an
    odd value or removed, or its metadata wrapped as a fast path declines."""
    obj = draw(plain_objects())
    metadata = obj["metadata"]
    change = draw(st.sampled_from(["none", "none", "field", "field", "wrap"]))
    if change == "field":
        field = draw(st.sampled_from(["name", "namespace", "resourceVersion"]))
        if draw(st.booleans()):
            metadata.pop(field, None)
        else:
            metadata[field] = draw(odd_values)
    elif change == "wrap":
        return wrap_metadata(draw, metadata)
    return obj


@st.composite
def labelled_objects(draw: st.DrawFn) -> Any:
    """A plain object with plain labels, or (a third of the time) anything."""
    if draw(st.integers(0, 2)) == 0:
        return draw(objects())
    obj = draw(plain_objects())
    obj["metadata"]["labels"] = draw(labels)
    return obj


some_objects = st.one_of(objects(), nearly_plain_objects(), nearly_plain_objects())


def outcome(func: Callable[[], Any]) -> tuple[Any, ...]:
    """What a call did: what it returned (a list as its items' identities),
    or the type and message of what it raised."""
    try:
        result = func()
    except (TypeError, LookupError, AttributeError, InformersError) as err:
        return ("raised", type(err), str(err))
    if isinstance(result, list) and all(not isinstance(item, str) for item in result):
        return ("list", [id(item) for item in result])
    return ("value", result)


# ------------------------------------------------------------------ the general forms
# Written from the documented rules, without any fast path.


def _metadata(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return obj.get("metadata")
    if isinstance(obj, DeletedFinalStateUnknown):
        raise ObjectKeyError(f"tombstone for {obj.key!r}")
    return getattr(obj, "metadata", None)


def _field(metadata: Any, json_name: str, attr_name: str) -> Any:
    if isinstance(metadata, Mapping):
        return metadata.get(json_name)
    return getattr(metadata, attr_name, None)


def general_key(obj: Any) -> str:
    """``namespace/name`` or ``name``; ObjectKeyError without a non-empty
    string name, with a namespace that is not a string, for a tombstone."""
    metadata = _metadata(obj)
    if metadata is None:
        raise ObjectKeyError("no metadata")
    name = _field(metadata, "name", "name")
    if not isinstance(name, str) or name == "":
        raise ObjectKeyError("no usable name")
    namespace = _field(metadata, "namespace", "namespace")
    if namespace is None or namespace == "":
        return name
    if not isinstance(namespace, str):
        raise ObjectKeyError("namespace is not a string")
    return f"{namespace}/{name}"


def general_resource_version(obj: Any) -> str:
    """``metadata.resourceVersion`` when it is a string, else ``""``."""
    metadata = _metadata(obj)
    value = None if metadata is None else _field(metadata, "resourceVersion", "resource_version")
    return value if isinstance(value, str) else ""


def general_invalid_item(items: list[Any]) -> int | None:
    """The reflector's rule for a list's items: the index of the first one
    without a string ``metadata.name`` or with a namespace that is neither
    null nor a string."""
    for index, item in enumerate(items):
        metadata = item.get("metadata") if isinstance(item, Mapping) else None
        if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
            return index
        namespace = metadata.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            return index
    return None


# ------------------------------------------------------------------ keys


@example({"metadata": {"name": "a", "namespace": Text("")}})
@example({"metadata": {"name": Text("a")}})
@example({"metadata": {"name": "a", "namespace": 0}})
@given(some_objects)
def test_object_key_is_the_general_key(obj: Any) -> None:
    key = fastpath.object_key(obj)
    general = outcome(lambda: general_key(obj))
    if key is not None:
        assert ("value", key) == general
    # meta_namespace_key answers with the fast path or the general form
    assert outcome(lambda: meta_namespace_key(obj))[:2] == general[:2]


@given(plain_objects())
def test_object_key_takes_every_plain_object(obj: dict[str, Any]) -> None:
    assert fastpath.object_key(obj) == general_key(obj)


@given(st.lists(some_objects, max_size=6))
def test_object_keys_is_the_general_key_of_each(objs: list[Any]) -> None:
    for key_func in (meta_namespace_key, deletion_handling_meta_namespace_key):
        each = outcome(partial(lambda f: [f(o) for o in objs], key_func))
        assert outcome(partial(fastpath.object_keys, objs, key_func)) == each
        assert outcome(partial(meta_namespace_keys, iter(objs), key_func)) == each


# ------------------------------------------------------------------ resource versions


@example({"metadata": {"resourceVersion": Text("5")}})
@example({"metadata": {"resourceVersion": 5}})
@given(some_objects)
def test_resource_version_is_the_general_rule(obj: Any) -> None:
    rv = fastpath.resource_version(obj)
    general = outcome(lambda: general_resource_version(obj))
    if rv is not None:
        assert ("value", rv) == general
    assert outcome(lambda: get_resource_version(obj))[:2] == general[:2]


@given(plain_objects())
def test_resource_version_takes_every_plain_object(obj: dict[str, Any]) -> None:
    assert fastpath.resource_version(obj) == obj["metadata"]["resourceVersion"]


# ------------------------------------------------------------------ namespaces


@given(st.lists(some_objects, max_size=8), strings)
def test_in_namespace_is_a_filter_on_get_namespace(objs: list[Any], namespace: str) -> None:
    expected = outcome(lambda: [o for o in objs if get_namespace(o) == namespace])
    assert outcome(lambda: fastpath.in_namespace(objs, namespace, get_namespace)) == expected
    assert outcome(lambda: fastpath.in_namespace(iter(objs), namespace, get_namespace)) == expected


# ------------------------------------------------------------------ labels
# The dict test handed to each filter is the general check itself, so what
# is compared is the filters' own reading of the labels (get_labels inline).

requirements = st.one_of(
    st.builds(
        LabelRequirement.create,
        st.sampled_from(["app", "tier"]),
        st.sampled_from([Operator.EXISTS, Operator.DOES_NOT_EXIST]),
    ),
    st.builds(
        lambda key, op, value: LabelRequirement.create(key, op, [value]),
        st.sampled_from(["app", "tier"]),
        st.sampled_from([Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN]),
        st.sampled_from(["", "a", "12"]),
    ),
)


def _general_filter(check: Callable[[Mapping[str, Any]], bool]) -> Callable[[Any], bool]:
    return lambda obj: check(get_labels(obj))


@given(st.lists(requirements, max_size=3), labels)
def test_labels_matcher_runs_the_test_on_dicts_only(
    reqs: list[LabelRequirement], plain: dict[str, Any]
) -> None:
    def general(labels: Mapping[str, Any]) -> bool:
        return all(r.matches(labels) for r in reqs)

    calls: list[str] = []

    def test(labels: dict[str, Any]) -> bool:
        calls.append("test")
        return general(labels)

    match = fastpath.labels_matcher(test, general)
    for labels_ in (plain, LooseDict(plain), View(plain), MappingProxyType(plain)):
        calls.clear()
        assert outcome(partial(match, labels_)) == outcome(partial(general, labels_))
        assert calls == (["test"] if type(labels_) is dict else [])


@given(st.lists(requirements, min_size=2, max_size=2), st.lists(labelled_objects(), max_size=8))
def test_label_filters_are_a_filter_on_get_labels(
    reqs: list[LabelRequirement], objs: list[Any]
) -> None:
    first, second = reqs

    def both(labels: Mapping[str, Any]) -> bool:
        return first.matches(labels) and second.matches(labels)

    expected = outcome(lambda: [o for o in objs if both(get_labels(o))])
    one = fastpath.label_filter(both, _general_filter(both))
    pair = fastpath.label_filter_both(first.matches, second.matches, _general_filter(both))
    assert outcome(lambda: one(objs)) == expected
    assert outcome(lambda: one(iter(objs))) == expected
    assert outcome(lambda: pair(objs)) == expected


@given(
    st.sampled_from(["app", "tier"]),
    st.sampled_from(["", "a", "12"]),
    st.lists(labelled_objects(), max_size=8),
)
def test_label_filter_equals_is_the_equality_requirement(
    key: str, value: str, objs: list[Any]
) -> None:
    req = LabelRequirement.create(key, Operator.EQUALS, [value])
    expected = outcome(lambda: [o for o in objs if req.matches(get_labels(o))])
    select = fastpath.label_filter_equals(key, value, _general_filter(req.matches))
    assert outcome(lambda: select(objs)) == expected
    # and the selector's compiled filter, which is built on it
    assert outcome(lambda: LabelSelector([req]).filter(objs)) == expected


# ------------------------------------------------------------------ the reflector's input


@given(st.lists(some_objects, max_size=5))
def test_named_items_means_no_invalid_item(items: list[Any]) -> None:
    if fastpath.named_items(items):
        assert general_invalid_item(items) is None


@given(st.lists(plain_objects(), max_size=5))
def test_named_items_takes_every_plain_list(items: list[dict[str, Any]]) -> None:
    assert fastpath.named_items(items)


CFG = ReflectorConfig(description="pods")
_STORE_ACTIONS = {"ADDED": StoreAdd, "MODIFIED": StoreUpdate, "DELETED": StoreDelete}
_event_types = st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])


@st.composite
def watch_events(draw: st.DrawFn) -> Any:
    """A well-formed event of plain JSON, then none, one or two of its parts
    replaced by an odd value, or removed."""
    obj: Any = draw(plain_objects())
    event: Any = {"type": draw(_event_types), "object": obj}
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.sampled_from(["event", "type", "object", "metadata", *["field"] * 4]))
        if where == "event":
            event = draw(st.one_of(objects(), st.just({"object": obj}), st.builds(LooseDict)))
            break
        if where == "type":
            event["type"] = draw(st.sampled_from(["ERROR", "BOGUS", "", Text("added"), None, 3]))
        elif where == "object":
            event["object"] = draw(objects())
        elif where == "metadata" and isinstance(event["object"], dict):
            event["object"]["metadata"] = draw(
                st.one_of(
                    st.none(), st.integers(), st.builds(LooseDict), st.builds(View, st.just({}))
                )
            )
        elif isinstance(event["object"], dict) and isinstance(
            event["object"].get("metadata"), dict
        ):
            metadata = event["object"]["metadata"]
            field = draw(st.sampled_from(["name", "namespace", "resourceVersion"]))
            if draw(st.booleans()):
                metadata.pop(field, None)
            else:
                metadata[field] = draw(values)
    return event


@settings(max_examples=300)
@example({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": ""}}})
@example({"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": 5}}})
@example({"type": "ADDED", "object": {"metadata": {"name": "", "resourceVersion": "5"}}})
@given(watch_events())
def test_watch_event_is_a_valid_event_to_step(event: Any) -> None:
    recognised = fastpath.watch_event(event)
    if recognised is None:
        return  # the reflector asks step
    etype, obj, rv = recognised
    assert event["type"] == etype
    assert event["object"] is obj
    state = Watching(Memory(last_sync_rv=""), rv="")
    nxt, actions = step(state, WatchEvent(event), CFG)
    assert isinstance(nxt, Watching)
    assert nxt.rv == rv
    assert nxt.mem.last_sync_rv == rv
    expected = (StoreBookmark(rv),) if etype == "BOOKMARK" else (_STORE_ACTIONS[etype](obj),)
    assert actions == expected


@given(plain_objects(), _event_types)
def test_watch_event_takes_every_plain_event(obj: dict[str, Any], etype: str) -> None:
    if etype == "BOOKMARK" and not obj["metadata"]["resourceVersion"]:
        obj["metadata"]["resourceVersion"] = "7"  # a bookmark without one is malformed
    event = {"type": etype, "object": obj}
    assert fastpath.watch_event(event) == (etype, obj, obj["metadata"]["resourceVersion"])
