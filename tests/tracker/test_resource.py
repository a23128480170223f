"""tracker.resource: ResourceTracker[T] on a real SharedIndexInformer fed by a
FakeListerWatcher, plus a property over random event sequences against a model
of what each channel must receive."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.client import V1Pod

from informers.cache import signals
from informers.cache.informer import SharedIndexInformer
from informers.cache.store import Indexer
from informers.errors import InformerStateError, UnknownIndexError
from informers.testing.fake import FakeClock, FakeListerWatcher, FakeWatch
from informers.util.channels import Channel
from informers.wire.objects import NAMESPACE_INDEX, DeletedFinalStateUnknown, namespace_index
from tests.helpers import drain, settle
from tracker.errors import ChannelRegistrationError, ConversionError
from tracker.resource import ResourceTracker, TrackerDeleteResource


def pod(name: str, rv: str, ns: str = "ns", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{ns}-{name}",
            "resourceVersion": rv,
            "labels": labels,
        },
    }


@dataclasses.dataclass(frozen=True)
class Small:
    """A user type: name, rv and app label; converting fails for app=bad."""

    name: str
    rv: str
    app: str


def to_small(raw: Mapping[str, Any]) -> Small:
    meta = raw["metadata"]
    app = meta.get("labels", {}).get("app", "")
    if app == "bad":
        raise ValueError("bad object")
    return Small(meta["name"], meta["resourceVersion"], app)


def is_web(obj: Small) -> bool:
    return obj.app == "web"


@pytest.fixture
def lw() -> FakeListerWatcher:
    lw = FakeListerWatcher()
    lw.set_objects([pod("a", "2", app="web"), pod("b", "3", app="db")], "5")
    return lw


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def informer(lw: FakeListerWatcher, clock: FakeClock) -> Iterator[SharedIndexInformer]:
    inf = SharedIndexInformer(
        lw, name="pods", clock=clock, indexers={NAMESPACE_INDEX: namespace_index}
    )
    yield inf
    inf.stop()


@pytest.fixture
def watch(informer: SharedIndexInformer, lw: FakeListerWatcher) -> FakeWatch:
    informer.start()
    assert informer.wait_synced(5)
    assert informer.wait_idle()
    return lw.wait_for_watch()


def test_known_resources_are_converted_and_filtered(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small, filter=is_web) as tracker:
        assert tracker.known_resources() == [Small("a", "2", "web")]
    with ResourceTracker(informer, V1Pod) as typed:
        pods = sorted(typed.known_resources(), key=lambda p: p.metadata.name)
        assert [p.metadata.name for p in pods] == ["a", "b"]
        assert isinstance(pods[0], V1Pod)
    with ResourceTracker(informer) as raw:  # dict: the cached objects themselves
        cached = {id(o) for o in informer.get_indexer().list()}
        assert {id(o) for o in raw.known_resources()} == cached


def test_known_resources_by_index(informer: SharedIndexInformer, watch: FakeWatch) -> None:
    watch.add(pod("c", "6", ns="other", app="web"))
    settle(informer, "6")
    with ResourceTracker(informer, convert=to_small, filter=is_web) as tracker:
        assert tracker.known_resources_by_index(NAMESPACE_INDEX, "other") == [
            Small("c", "6", "web")
        ]
        assert tracker.known_resources_by_index(NAMESPACE_INDEX, "nowhere") == []
        with pytest.raises(UnknownIndexError, match="'by-color'"):
            tracker.known_resources_by_index("by-color", "red")


def test_conversions_are_memoised_per_uid_and_version(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    calls: list[str] = []

    def counting(raw: Mapping[str, Any]) -> Small:
        calls.append(raw["metadata"]["name"])
        return to_small(raw)

    with ResourceTracker(informer, convert=counting) as tracker:
        first = tracker.known_resources()
        second = tracker.known_resources()
        assert sorted(calls) == ["a", "b"]
        assert [id(o) for o in first] == [id(o) for o in second]
        watch.modify(pod("a", "6", app="web"))
        settle(informer, "6")
        tracker.known_resources()
        assert sorted(calls) == ["a", "a", "b"]


def test_object_that_fails_to_convert_goes_to_on_error_and_is_skipped(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    errors: list[ConversionError] = []
    with ResourceTracker(informer, convert=to_small, on_error=errors.append) as tracker:
        added: Channel[Small] = Channel()
        tracker.register_added_resource_channel(added)
        watch.add(pod("c", "6", app="bad"))
        watch.add(pod("d", "7", app="web"))
        settle(informer, "7")
        assert drain(added) == [Small("d", "7", "web")]
        assert [e.key for e in errors] == ["ns/c"]
        assert "c" not in {o.name for o in tracker.known_resources()}


def test_default_on_error_logs_kind_and_key_only(
    informer: SharedIndexInformer, watch: FakeWatch, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        ResourceTracker(informer, convert=to_small) as tracker,
        caplog.at_level(logging.WARNING, logger="tracker.resource"),
    ):
        tracker.register_added_resource_channel(Channel())
        watch.add(pod("c", "6", app="bad"))
        settle(informer, "6")
    assert "cannot convert pods 'ns/c': ValueError" in caplog.text
    assert "bad object" not in caplog.text


def test_added_updated_deleted_channels(informer: SharedIndexInformer, watch: FakeWatch) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        added: Channel[Small] = Channel()
        updated: Channel[tuple[Small, Small]] = Channel()
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_added_resource_channel(added)
        tracker.register_updated_resource_channel(updated)
        tracker.register_deleted_resource_channel(deleted)
        watch.add(pod("c", "6", app="web"))
        watch.modify(pod("c", "7", app="web"))
        watch.delete(pod("c", "8", app="web"))
        settle(informer, "8")
        assert drain(added) == [Small("c", "6", "web")]
        assert drain(updated) == [(Small("c", "6", "web"), Small("c", "7", "web"))]
        (gone,) = drain(deleted)
        assert gone.resource == Small("c", "8", "web")
        assert gone.resource_key == "ns/c"
        assert gone.raw_resource["metadata"]["resourceVersion"] == "8"
        assert not gone.unknown_state


def test_filter_transitions_become_adds_and_deletes(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small, filter=is_web) as tracker:
        added: Channel[Small] = Channel()
        updated: Channel[tuple[Small, Small]] = Channel()
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_added_resource_channel(added)
        tracker.register_updated_resource_channel(updated)
        tracker.register_deleted_resource_channel(deleted)
        watch.modify(pod("a", "6", app="db"))  # leaves the filter
        watch.modify(pod("b", "7", app="web"))  # enters it
        watch.modify(pod("a", "8", app="cache"))  # outside, stays outside
        settle(informer, "8")
        assert drain(added) == [Small("b", "7", "web")]
        assert drain(updated) == []
        assert drain(deleted) == [
            TrackerDeleteResource(Small("a", "6", "db"), "ns/a", pod("a", "6", app="db"), False)
        ]


def test_missed_delete_arrives_as_tombstone_with_unknown_state(
    informer: SharedIndexInformer, lw: FakeListerWatcher, clock: FakeClock, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        lw.set_objects([pod("a", "2", app="web")], "12")  # b deleted while away
        watch.error(410, "Expired", "too old")
        assert clock.wait_for_waiters()
        clock.advance(2)
        lw.wait_for_watch(2)
        settle(informer, "12")
        (gone,) = drain(deleted)
        assert gone.unknown_state
        assert gone.resource_key == "ns/b"
        assert gone.resource == Small("b", "3", "db")  # the last known state
        assert gone.raw_resource["metadata"]["name"] == "b"


def test_tombstone_that_no_longer_converts_has_no_resource(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    errors: list[ConversionError] = []
    with ResourceTracker(informer, convert=to_small, on_error=errors.append) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        raw = pod("z", "9", app="bad")
        tracker.on_delete(DeletedFinalStateUnknown("ns/z", raw))  # as its listener would
        assert drain(deleted) == [TrackerDeleteResource(None, "ns/z", raw, True)]
        assert len(errors) == 1


def test_update_to_a_state_that_does_not_convert_leaves_the_view(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    errors: list[ConversionError] = []
    with ResourceTracker(informer, convert=to_small, on_error=errors.append) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        added: Channel[Small] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        tracker.register_added_resource_channel(added)
        watch.modify(pod("a", "6", app="bad"))
        watch.modify(pod("a", "7", app="web"))  # converts again: back in the view
        settle(informer, "7")
        assert drain(deleted) == [
            TrackerDeleteResource(None, "ns/a", pod("a", "6", app="bad"), False)
        ]
        assert drain(added) == [Small("a", "7", "web")]
        assert [e.key for e in errors] == ["ns/a"]


def test_delete_whose_final_state_does_not_convert_is_delivered_by_key(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small, on_error=lambda err: None) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        watch.delete(pod("a", "6", app="bad"))
        settle(informer, "6")
        (gone,) = drain(deleted)
        assert (gone.resource, gone.resource_key, gone.unknown_state) == (None, "ns/a", False)


def test_tombstone_outside_the_filter_is_not_delivered(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small, filter=is_web) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        tracker.on_delete(DeletedFinalStateUnknown("ns/b", pod("b", "3")))
        assert drain(deleted) == []


def test_events_of_other_informers_are_ignored(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        added: Channel[Small] = Channel()
        tracker.register_added_resource_channel(added)
        signals.added.send(object(), obj=pod("x", "1"), is_in_initial_list=False)
        assert drain(added) == []


def test_unregister_closes_the_channel(informer: SharedIndexInformer, watch: FakeWatch) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        added: Channel[Small] = Channel()
        tracker.register_added_resource_channel(added)
        tracker.unregister_added_resource_channel(added)
        assert added.closed
        watch.add(pod("c", "6", app="web"))
        settle(informer, "6")
        assert list(added) == []
        with pytest.raises(ChannelRegistrationError):
            tracker.unregister_added_resource_channel(added)


def test_registering_a_channel_twice_is_an_error(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        ch: Channel[Any] = Channel()
        tracker.register_added_resource_channel(ch)
        with pytest.raises(ChannelRegistrationError, match="registered already"):
            tracker.register_added_resource_channel(ch)
        with pytest.raises(ChannelRegistrationError):
            tracker.register_deleted_resource_channel(ch)
        with pytest.raises(TypeError, match=r"tracker\.Channel"):
            tracker.register_added_resource_channel([])  # type: ignore[arg-type]
        with pytest.raises(ChannelRegistrationError):
            tracker.dropped(Channel())


def test_full_channel_drops_and_counts_without_blocking_the_others(
    informer: SharedIndexInformer, watch: FakeWatch, caplog: pytest.LogCaptureFixture
) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        small: Channel[Small] = Channel(capacity=1)
        big: Channel[Small] = Channel()
        tracker.register_added_resource_channel(small)
        tracker.register_added_resource_channel(big)
        with caplog.at_level(logging.WARNING, logger="tracker.resource"):
            for n in range(4):
                watch.add(pod(f"n{n}", str(6 + n), app="web"))
            settle(informer, "9")
        assert tracker.dropped(small) == 3
        assert tracker.dropped(big) == 0
        assert [o.name for o in drain(small)] == ["n0"]
        assert [o.name for o in drain(big)] == ["n0", "n1", "n2", "n3"]
        assert "full added channel dropped 1 events" in caplog.text


def test_channel_closed_by_its_consumer_is_forgotten(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    with ResourceTracker(informer, convert=to_small) as tracker:
        ch: Channel[Small] = Channel()
        tracker.register_added_resource_channel(ch)
        ch.close()
        watch.add(pod("c", "6", app="web"))
        settle(informer, "6")
        with pytest.raises(ChannelRegistrationError):
            tracker.dropped(ch)


def test_close_detaches_and_closes_every_channel(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    tracker = ResourceTracker(informer, convert=to_small)
    added: Channel[Small] = Channel()
    deleted: Channel[TrackerDeleteResource[Small]] = Channel()
    tracker.register_added_resource_channel(added)
    tracker.register_deleted_resource_channel(deleted)
    tracker.close()
    tracker.close()
    assert added.closed
    assert deleted.closed
    with pytest.raises(InformerStateError, match="closed"):
        tracker.register_added_resource_channel(Channel())
    assert len(tracker.known_resources()) == 2
    assert tracker.registration not in informer.registrations()
    for signal in (signals.added, signals.updated, signals.deleted):
        held = [getattr(r, "__self__", None) for r in signal.receivers.values()]
        assert tracker not in held


def test_events_without_a_channel_for_them_are_not_converted(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    calls: list[str] = []

    def counting(raw: Mapping[str, Any]) -> Small:
        calls.append(raw["metadata"]["name"])
        return to_small(raw)

    with ResourceTracker(informer, convert=counting) as tracker:
        deleted: Channel[TrackerDeleteResource[Small]] = Channel()
        tracker.register_deleted_resource_channel(deleted)
        watch.add(pod("c", "6", app="web"))  # no added channel: not converted
        watch.delete(pod("c", "7", app="web"))
        settle(informer, "7")
        assert calls == ["c"]
        assert len(drain(deleted)) == 1


def test_failing_filter_is_logged_and_treated_as_not_matching(
    informer: SharedIndexInformer, watch: FakeWatch, caplog: pytest.LogCaptureFixture
) -> None:
    def picky(obj: Small) -> bool:
        if obj.name == "b":
            raise RuntimeError("filter bug")
        return True

    with (
        ResourceTracker(informer, convert=to_small, filter=picky) as tracker,
        caplog.at_level(logging.ERROR, logger="tracker.resource"),
    ):
        assert [o.name for o in tracker.known_resources()] == ["a"]
    assert "filter raised for 'ns/b'" in caplog.text


def test_unsupported_model_is_rejected(informer: SharedIndexInformer) -> None:
    with pytest.raises(TypeError, match="convert="):
        ResourceTracker(informer, int)


# --- property: random event sequences against a model -----------------------


class _StubRegistration:
    def remove(self) -> None:
        pass

    def has_synced(self) -> bool:
        return True


class _StubInformer:
    """Stands in for the informer: a name, an indexer kept by the test, and
    a place to add the tracker as a handler (the tracker needs nothing else;
    the test calls the handler methods itself)."""

    name = "stub"

    def __init__(self) -> None:
        self.indexer = Indexer()
        self.handlers: list[Any] = []

    def get_indexer(self) -> Indexer:
        return self.indexer

    def add_event_handler(self, handler: Any, **_options: Any) -> _StubRegistration:
        self.handlers.append(handler)
        return _StubRegistration()


APPS = ("web", "db", "bad")
ops = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "delete", "tombstone"]),
        st.sampled_from(["p", "q", "r"]),
        st.sampled_from(APPS),
    ),
    max_size=25,
)


@given(ops=ops, capacity=st.none() | st.integers(1, 3))
def test_channels_receive_what_the_model_predicts(
    ops: list[tuple[str, str, str]], capacity: int | None
) -> None:
    inf = _StubInformer()
    errors: list[ConversionError] = []
    tracker: ResourceTracker[Small] = ResourceTracker(
        inf,  # type: ignore[arg-type]
        convert=to_small,
        filter=is_web,
        on_error=errors.append,
        cache_size=2,
    )
    added: Channel[Small] = Channel(capacity)
    updated: Channel[tuple[Small, Small]] = Channel(capacity)
    deleted: Channel[TrackerDeleteResource[Small]] = Channel(capacity)
    tracker.register_added_resource_channel(added)
    tracker.register_updated_resource_channel(updated)
    tracker.register_deleted_resource_channel(deleted)
    assert inf.handlers == [tracker]

    expected: dict[str, list[Any]] = {"added": [], "updated": [], "deleted": []}
    cache: dict[str, dict[str, Any]] = {}

    def small(raw: dict[str, Any]) -> Small | None:
        labels = raw["metadata"]["labels"]
        if labels["app"] == "bad":
            return None
        return Small(raw["metadata"]["name"], raw["metadata"]["resourceVersion"], labels["app"])

    def shown(obj: Small | None) -> bool:
        return obj is not None and obj.app == "web"

    for rv, (op, name, app) in enumerate(ops, start=10):
        key = f"ns/{name}"
        raw = pod(name, str(rv), app=app)
        old = cache.get(key)
        if op == "upsert" and old is None:
            cache[key] = raw
            inf.indexer.add(raw)
            tracker.on_add(raw, False)
            if shown(small(raw)):
                expected["added"].append(small(raw))
        elif op == "upsert":
            assert old is not None
            cache[key] = raw
            inf.indexer.update(raw)
            tracker.on_update(old, raw)
            new_t, old_t = small(raw), small(old)
            if shown(old_t) and shown(new_t):
                expected["updated"].append((old_t, new_t))
            elif shown(new_t):
                expected["added"].append(new_t)
            elif shown(old_t):
                expected["deleted"].append(TrackerDeleteResource(new_t, key, raw, False))
        elif old is not None:
            del cache[key]
            inf.indexer.delete(old)
            last = small(old)
            tombstone = op == "tombstone"
            sent = DeletedFinalStateUnknown(key, old) if tombstone else old
            tracker.on_delete(sent)
            if last is None or shown(last):
                expected["deleted"].append(TrackerDeleteResource(last, key, old, tombstone))

    for kind, channel in (("added", added), ("updated", updated), ("deleted", deleted)):
        want = expected[kind] if capacity is None else expected[kind][:capacity]
        assert drain(channel) == want, kind
        assert tracker.dropped(channel) == len(expected[kind]) - len(want)
    visible = sorted((s for s in map(small, cache.values()) if shown(s)), key=lambda s: s.name)
    assert sorted(tracker.known_resources(), key=lambda s: s.name) == visible
    tracker.close()


real_ops = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "delete"]), st.sampled_from(["p", "q"]), st.sampled_from(APPS)
    ),
    min_size=1,
    max_size=12,
)


@given(ops=real_ops)
def test_real_informer_event_sequences_reach_the_channels_the_model_predicts(
    ops: list[tuple[str, str, str]],
) -> None:
    lw = FakeListerWatcher()
    lw.set_objects([], "1")
    informer = SharedIndexInformer(lw, name="pods")
    tracker: ResourceTracker[Small] = ResourceTracker(
        informer, convert=to_small, filter=is_web, on_error=lambda err: None
    )
    got = {"added": Channel[Any](), "updated": Channel[Any](), "deleted": Channel[Any]()}
    tracker.register_added_resource_channel(got["added"])
    tracker.register_updated_resource_channel(got["updated"])
    tracker.register_deleted_resource_channel(got["deleted"])
    expected: dict[str, list[Any]] = {"added": [], "updated": [], "deleted": []}
    try:
        informer.start()
        assert informer.wait_synced(5)
        watch = lw.wait_for_watch()
        cache: dict[str, Small | None] = {}  # name -> converted last state (None: bad)
        rv = 1
        for op, name, app in ops:
            rv += 1
            raw = pod(name, str(rv), app=app)
            now = None if app == "bad" else Small(name, str(rv), app)
            if op == "upsert" and name not in cache:
                watch.add(raw)
                if now is not None and now.app == "web":
                    expected["added"].append(now)
            elif op == "upsert":
                watch.modify(raw)
                before = cache[name]
                was_in = before is not None and before.app == "web"
                is_in = now is not None and now.app == "web"
                if was_in and is_in:
                    expected["updated"].append((before, now))
                elif is_in:
                    expected["added"].append(now)
                elif was_in:
                    expected["deleted"].append(TrackerDeleteResource(now, f"ns/{name}", raw, False))
            elif name in cache:
                watch.delete(raw)
                if now is None or now.app == "web":
                    expected["deleted"].append(TrackerDeleteResource(now, f"ns/{name}", raw, False))
            else:
                continue
            if op == "delete":
                del cache[name]
            else:
                cache[name] = now
        watch.bookmark(str(rv + 1))
        settle(informer, str(rv + 1))
        for kind, channel in got.items():
            assert drain(channel) == expected[kind], kind
    finally:
        tracker.close()
        informer.stop()


# --- trackers are handlers: own thread, own has_synced ---------------------------


def test_a_slow_tracker_never_stalls_another(
    informer: SharedIndexInformer, watch: FakeWatch
) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow_filter(obj: Small) -> bool:
        if obj.name == "c":
            entered.set()
            assert release.wait(5)
        return True

    slow = ResourceTracker(informer, convert=to_small, filter=slow_filter)
    fast = ResourceTracker(informer, convert=to_small)
    try:
        slow_added: Channel[Small] = Channel()
        fast_added: Channel[Small] = Channel()
        slow.register_added_resource_channel(slow_added)
        fast.register_added_resource_channel(fast_added)
        watch.add(pod("c", "6", app="web"))
        watch.add(pod("d", "7", app="web"))
        assert entered.wait(5)  # the slow tracker is stuck inside its filter...
        assert [fast_added.get(timeout=5), fast_added.get(timeout=5)] == [
            Small("c", "6", "web"),
            Small("d", "7", "web"),
        ]  # ...and the fast one got both events anyway
        assert drain(slow_added) == []
        release.set()
        assert slow_added.get(timeout=5) == Small("c", "6", "web")
        assert slow_added.get(timeout=5) == Small("d", "7", "web")
    finally:
        release.set()
        slow.close()
        fast.close()


def test_tracker_has_synced_like_a_handler(lw: FakeListerWatcher, clock: FakeClock) -> None:
    informer = SharedIndexInformer(lw, name="pods", clock=clock)
    early = ResourceTracker(informer, convert=to_small)
    try:
        assert not early.has_synced()
        assert early.registration in informer.registrations()
        informer.start()
        assert early.registration is not None
        assert early.registration.wait_synced(5)
        assert early.has_synced()
        late = ResourceTracker(informer, convert=to_small)
        assert late.registration is not None
        assert late.registration.wait_synced(5)
        assert late.has_synced()
        late.close()
        assert late.registration not in informer.registrations()
    finally:
        early.close()
        informer.stop()
    stopped = ResourceTracker(informer, convert=to_small)  # reads only
    assert stopped.registration is None
    assert not stopped.has_synced()
    assert len(stopped.known_resources()) == 2
    stopped.close()


def test_a_resync_reaches_the_updated_channels(lw: FakeListerWatcher, clock: FakeClock) -> None:
    informer = SharedIndexInformer(lw, name="pods", clock=clock, resync_period=10)
    tracker = ResourceTracker(informer, convert=to_small)
    updated: Channel[tuple[Small, Small]] = Channel()
    tracker.register_updated_resource_channel(updated)
    try:
        informer.start()
        assert informer.wait_synced(5)
        lw.wait_for_watch()
        clock.advance(10)
        assert informer.wait_idle()
        assert sorted(drain(updated), key=lambda pair: pair[0].name) == [
            (Small("a", "2", "web"), Small("a", "2", "web")),
            (Small("b", "3", "db"), Small("b", "3", "db")),
        ]
    finally:
        tracker.close()
        informer.stop()
