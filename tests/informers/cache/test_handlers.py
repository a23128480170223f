"""informers.cache.handlers: the handler protocol, handlers made of functions, the
filtering handler and its enter/leave rule."""

from __future__ import annotations

from typing import Any

import pytest

import informers
import informers.cache.informer
from informers.cache.handlers import (
    FilteringResourceEventHandler,
    FilterTransition,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    filter_transition,
)
from informers.wire.objects import DeletedFinalStateUnknown
from tests.helpers import HookedRecorder, Recorder, pod


def test_filtering_handler_turns_transitions_into_add_and_delete() -> None:
    rec = Recorder()
    h = FilteringResourceEventHandler(lambda o: o["metadata"]["labels"].get("app") == "web", rec)
    h.on_add(pod("a", "1", app="web"), True)
    h.on_add(pod("b", "1"), True)
    h.on_update(pod("a", "1", app="web"), pod("a", "2"))  # leaves: delete
    h.on_update(pod("b", "1"), pod("b", "2", app="web"))  # enters: add
    h.on_update(pod("b", "2", app="web"), pod("b", "3", app="web"))
    h.on_delete(DeletedFinalStateUnknown("ns/b", pod("b", "3", app="web")))
    assert rec.events == [
        ("add", "a", True),
        ("delete", "a", False),
        ("add", "b", False),
        ("update", "b", "2"),
        ("delete", "ns/b", True),
    ]


@pytest.mark.parametrize(
    ("old_passes", "new_passes", "transition"),
    [
        (True, True, FilterTransition.UPDATED),
        (False, True, FilterTransition.ENTERED),
        (True, False, FilterTransition.LEFT),
        (False, False, FilterTransition.OUTSIDE),
    ],
)
def test_filter_transition_rule(
    old_passes: bool, new_passes: bool, transition: FilterTransition
) -> None:
    assert filter_transition(old_passes, new_passes) is transition


def test_filtering_handler_skips_updates_outside_and_deletes_it_never_showed() -> None:
    rec = Recorder()
    h = FilteringResourceEventHandler(lambda o: o["metadata"]["labels"].get("app") == "web", rec)
    h.on_update(pod("a", "1"), pod("a", "2"))
    h.on_delete(pod("a", "2"))
    h.on_delete(DeletedFinalStateUnknown("ns/a", pod("a", "2")))
    assert rec.events == []


def test_filtering_handler_passes_the_optional_hooks_on() -> None:
    hooked = HookedRecorder()
    h = FilteringResourceEventHandler(lambda _o: True, hooked)
    h.on_relist_begin("5")
    h.on_add(pod("a", "1"), True)
    h.on_relist_end("5")
    h.on_synced()
    assert hooked.events == [("begin", "5"), ("add", "a", True), ("end", "5"), ("synced",)]
    plain = FilteringResourceEventHandler(lambda _o: True, Recorder())
    plain.on_relist_begin("5")  # the inner handler has no hooks: nothing happens
    plain.on_relist_end("5")
    plain.on_synced()


def test_handler_funcs_call_what_is_given() -> None:
    got: list[tuple[Any, ...]] = []
    funcs = ResourceEventHandlerFuncs(
        add_func=lambda obj: got.append(("add", obj)),
        update_func=lambda old, new: got.append(("update", old, new)),
    )
    funcs.on_add("a", True)
    funcs.on_update("a", "b")
    funcs.on_delete("b")  # no delete_func: ignored
    with_initial = ResourceEventHandlerFuncs(
        add_func=lambda obj, initial: got.append(("add-initial", obj, initial)),
        delete_func=lambda obj: got.append(("delete", obj)),
        add_func_with_initial=True,
    )
    with_initial.on_add("c", False)
    with_initial.on_update("c", "d")  # no update_func: ignored
    with_initial.on_delete("d")
    assert got == [("add", "a"), ("update", "a", "b"), ("add-initial", "c", False), ("delete", "d")]


def test_the_protocol_is_runtime_checkable() -> None:
    assert isinstance(Recorder(), ResourceEventHandler)
    assert isinstance(ResourceEventHandlerFuncs(), ResourceEventHandler)
    assert not isinstance(object(), ResourceEventHandler)


def test_handler_names_stay_importable_from_the_informer_and_the_package() -> None:
    for name in (
        "FilteringResourceEventHandler",
        "ResourceEventHandler",
        "ResourceEventHandlerFuncs",
    ):
        assert getattr(informers.cache.informer, name) is getattr(informers.cache.handlers, name)
        assert getattr(informers, name) is getattr(informers.cache.handlers, name)
