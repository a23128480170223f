"""Starting, stopping and resyncing an informer, from every thread the
library runs user code on, and against each other.

Each test pins one behaviour a concurrency audit found broken (the races are
forced into the window they need, not hoped for); the stress suite
(``test_concurrency_stress.py``) drives them all at random.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable
from typing import Any

import pytest

from informers.cache.factory import SharedInformerFactory
from informers.cache.informer import ResourceEventHandlerFuncs, SharedIndexInformer
from informers.cache.store import Indexer
from informers.cache.wait import wait_for_cache_sync
from informers.errors import CacheSyncTimeoutError, InformerStateError
from informers.rest.listwatch import ListOptions
from informers.testing.fake import FakeListerWatcher, FakeWatch
from informers.util.clock import RealClock
from informers.wire.objects import Indexers

WAIT = 5.0


def pod(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def threads_of(name: str) -> list[str]:
    """The live threads of the informer called ``name``."""
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.is_alive() and (t.name.endswith(f"-{name}") or f"-{name}-" in t.name)
    )


class Unreachable(FakeListerWatcher):
    """Every list fails: the informer never syncs."""

    def list(self, options: ListOptions) -> dict[str, Any]:
        super().list(options)
        raise ConnectionError("apiserver unreachable")


def run_in_thread(target: Callable[[], object], name: str) -> tuple[threading.Thread, list[Any]]:
    """Start ``target`` on a thread; the list gets its result or exception."""
    out: list[Any] = []

    def body() -> None:
        try:
            out.append(target())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out.append(exc)

    thread = threading.Thread(target=body, name=name)
    thread.start()
    return thread, out


def wait_stopped(inf: SharedIndexInformer) -> None:
    """Block until ``stop()`` marked ``inf`` stopped (its condition is
    notified then)."""
    with inf._cond:
        assert inf._cond.wait_for(lambda: inf._stopped, WAIT)


@pytest.fixture
def lw() -> FakeListerWatcher:
    lw = FakeListerWatcher()
    lw.set_objects([pod("a", "2"), pod("b", "3")], "5")
    return lw


# ---------------------------------------------------------------- start / stop


def test_a_stopped_informer_refuses_to_start(lw: FakeListerWatcher) -> None:
    inf = SharedIndexInformer(lw, name="refuse")
    inf.stop()
    with pytest.raises(InformerStateError, match="runs once"):
        inf.start()
    assert threads_of("refuse") == []
    assert lw.list_calls == []


def test_a_stop_while_start_builds_leaves_no_thread(
    lw: FakeListerWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stop() lands between start()'s two locked sections: it used to find
    # nothing to stop, and start() then ran the loop on a queue nobody would
    # ever close.
    from informers.cache import informer as informer_module

    inf = SharedIndexInformer(lw, name="build")
    real = informer_module.Reflector  # type: ignore[attr-defined]
    stoppers: list[tuple[threading.Thread, list[Any]]] = []

    def reflector_during_a_stop(*args: Any, **kwargs: Any) -> Any:
        stoppers.append(run_in_thread(inf.stop, "test-stopper"))
        wait_stopped(inf)
        return real(*args, **kwargs)

    monkeypatch.setattr(informer_module, "Reflector", reflector_during_a_stop)
    with pytest.raises(InformerStateError, match="stopped while starting"):
        inf.start()
    ((stopper, out),) = stoppers
    stopper.join(WAIT)
    assert out == [None]
    assert threads_of("build") == []


def test_a_stop_while_threads_start_joins_them(
    lw: FakeListerWatcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stop() lands after start() recorded its threads but before it started
    # them: stop() used to join a thread not started yet (RuntimeError).
    inf = SharedIndexInformer(lw, name="launch")
    inf.add_event_handler(ResourceEventHandlerFuncs())
    real_start = inf._processor.start
    stoppers: list[tuple[threading.Thread, list[Any]]] = []

    def start_during_a_stop() -> None:
        stoppers.append(run_in_thread(inf.stop, "test-stopper"))
        wait_stopped(inf)
        real_start()

    monkeypatch.setattr(inf._processor, "start", start_during_a_stop)
    inf.start()
    ((stopper, out),) = stoppers
    stopper.join(WAIT)
    assert out == [None]  # returned, raised nothing
    assert threads_of("launch") == []


def test_factory_start_racing_shutdown_leaves_nothing_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from informers.wire import resources

    factory = SharedInformerFactory(api_client=None)
    lw = FakeListerWatcher()
    inf = SharedIndexInformer(lw, name="fac")
    monkeypatch.setitem(factory._informers, resources.PODS, inf)
    real_start = inf.start

    def start_after_a_shutdown() -> None:
        factory.shutdown()
        real_start()

    monkeypatch.setattr(inf, "start", start_after_a_shutdown)
    with pytest.raises(InformerStateError, match="shut down"):
        factory.start()
    assert threads_of("fac") == []


# ------------------------------------------------- stop from the library's threads


def test_stop_from_the_watch_error_handler_then_from_outside_joins_everything() -> None:
    # The error handler runs on the reflector's thread: stop() there used to
    # join that very thread (the RuntimeError was swallowed), left the
    # listeners running, and made every later stop() a no-op.
    called = threading.Event()
    errors: list[BaseException] = []
    inf = SharedIndexInformer(Unreachable(), name="errstop")
    inf.add_event_handler(ResourceEventHandlerFuncs())

    def give_up(_reflector: Any, _error: BaseException) -> None:
        try:
            inf.stop()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)
        called.set()

    inf.set_watch_error_handler(give_up)
    inf.start()
    assert called.wait(WAIT)
    assert errors == []
    assert inf.is_stopped()
    inf.stop()
    assert threads_of("errstop") == []


def test_stop_from_a_handler_returns_and_a_later_stop_joins(lw: FakeListerWatcher) -> None:
    returned = threading.Event()
    errors: list[BaseException] = []
    inf = SharedIndexInformer(lw, name="hstop")
    other = inf.add_event_handler(ResourceEventHandlerFuncs())

    def on_add(_obj: Any, _initial: bool) -> None:
        if returned.is_set():
            return
        try:
            inf.stop()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)
        returned.set()

    inf.add_event_handler(ResourceEventHandlerFuncs(on_add, add_func_with_initial=True))
    inf.start()
    assert returned.wait(WAIT)
    assert errors == []
    assert other.is_stopped()
    inf.stop()
    assert threads_of("hstop") == []


def test_stop_from_a_timer_callback(lw: FakeListerWatcher) -> None:
    clock = RealClock()
    done = threading.Event()
    inf = SharedIndexInformer(lw, name="tstop")
    inf.add_event_handler(ResourceEventHandlerFuncs())
    inf.start()
    assert inf.wait_synced(WAIT)

    def stop_then_tell() -> None:
        inf.stop()
        done.set()

    clock.call_later(0.0, stop_then_tell, "stop-informer")
    assert done.wait(WAIT)  # returned without joining on the shared timer thread
    inf.stop()
    assert threads_of("tstop") == []


def test_handlers_removing_each_other_do_not_deadlock(lw: FakeListerWatcher) -> None:
    # remove() from a handler used to join the other listener's thread; two
    # handlers removing each other at once joined each other for good.
    inf = SharedIndexInformer(lw, name="mutual")
    both_inside = threading.Barrier(2, timeout=WAIT)
    regs: dict[str, Any] = {}
    removed = {"a": threading.Event(), "b": threading.Event()}

    def remover(me: str, other: str) -> Callable[[Any, bool], None]:
        def on_add(_obj: Any, _initial: bool) -> None:
            if removed[me].is_set():
                return
            both_inside.wait()
            regs[other].remove()
            removed[me].set()

        return on_add

    regs["a"] = inf.add_event_handler(
        ResourceEventHandlerFuncs(remover("a", "b"), add_func_with_initial=True)
    )
    regs["b"] = inf.add_event_handler(
        ResourceEventHandlerFuncs(remover("b", "a"), add_func_with_initial=True)
    )
    inf.start()
    try:
        assert removed["a"].wait(WAIT)
        assert removed["b"].wait(WAIT)
    finally:
        inf.stop()
    assert threads_of("mutual") == []


def test_a_handler_removed_on_its_own_thread_after_stop_is_joined_by_the_next_stop(
    lw: FakeListerWatcher,
) -> None:
    inside, release = threading.Event(), threading.Event()
    removed = threading.Event()
    inf = SharedIndexInformer(lw, name="late-remove")
    regs: list[Any] = []

    def on_add(_obj: Any, _initial: bool) -> None:
        if inside.is_set():
            return
        inside.set()
        assert release.wait(WAIT)
        regs[0].remove()
        removed.set()

    regs.append(
        inf.add_event_handler(ResourceEventHandlerFuncs(on_add, add_func_with_initial=True))
    )
    inf.start()
    assert inside.wait(WAIT)
    stopper, out = run_in_thread(lambda: inf.stop(timeout=0.2), "test-stopper")
    stopper.join(WAIT)  # the handler holds its listener: stop() times out on it
    assert out == [None]
    release.set()
    assert removed.wait(WAIT)
    inf.stop()
    assert threads_of("late-remove") == []


# ------------------------------------------------------------ waiters on stop


@pytest.mark.parametrize("kind", ["informer", "registration", "gate", "factory"])
def test_stop_releases_sync_waiters_at_once(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inf = SharedIndexInformer(Unreachable(), name=f"w{kind}")
    reg = inf.add_event_handler(ResourceEventHandlerFuncs())
    factory = SharedInformerFactory(api_client=None)
    if kind == "factory":
        from informers.wire import resources

        monkeypatch.setitem(factory._informers, resources.PODS, inf)
        factory.start()
    else:
        inf.start()
    waits: dict[str, Callable[[], object]] = {
        "informer": lambda: inf.wait_synced(None),
        "registration": lambda: reg.wait_synced(None),
        "gate": lambda: wait_for_cache_sync(inf, reg),
        "factory": lambda: factory.wait_for_cache_sync(timeout=None),
    }
    waiter, out = run_in_thread(waits[kind], f"test-waiter-{kind}")
    inf.stop()
    waiter.join(WAIT)
    assert not waiter.is_alive()
    (result,) = out
    if kind == "gate":
        assert isinstance(result, InformerStateError)
    elif kind == "factory":
        assert isinstance(result, CacheSyncTimeoutError)
        assert result.not_synced == {"pods": "stopped"}
    else:
        assert result is False


# ------------------------------------------------------------------ bookmarks


def test_a_bookmark_advances_the_applied_resource_version(lw: FakeListerWatcher) -> None:
    watch = FakeWatch()
    lw.script_watch(watch)
    inf = SharedIndexInformer(lw, name="bm")
    inf.start()
    try:
        assert inf.wait_synced(WAIT)
        lw.wait_for_watch(1, WAIT)
        watch.bookmark("100")
        assert inf.wait_for_resource_version("100", timeout=WAIT)
        assert inf.applied_resource_version() == "100"
    finally:
        inf.stop()


# --------------------------------------------------------------------- resync


class ThreadRecordingIndexer(Indexer):
    """Records the threads that read the whole cache."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.readers: set[str] = set()

    def list(self) -> builtins.list[Any]:
        self.readers.add(threading.current_thread().name)
        return super().list()

    def list_keys(self) -> builtins.list[str]:
        self.readers.add(threading.current_thread().name)
        return super().list_keys()


@pytest.fixture
def recording_store() -> list[ThreadRecordingIndexer]:
    return []


def test_resync_is_done_on_the_informer_loop_never_on_the_timer_thread(
    lw: FakeListerWatcher, recording_store: list[ThreadRecordingIndexer]
) -> None:
    # The shared timer thread only hands the resync over: a resync used to
    # scan the cache there, delaying every other timer of the process.
    def make_store(*, indexers: Indexers, on_index_error: Any) -> ThreadRecordingIndexer:
        store = ThreadRecordingIndexer(indexers=indexers, on_index_error=on_index_error)
        recording_store.append(store)
        return store

    resynced = threading.Event()
    counts = {"updates": 0}

    def on_update(old: Any, new: Any) -> None:
        assert old is new  # a resync hands the cached object as is
        counts["updates"] += 1
        if counts["updates"] >= 4:  # two resyncs of two objects
            resynced.set()

    inf = SharedIndexInformer(
        lw, name="rsync", resync_period=0.02, clock=RealClock(), store=make_store
    )
    inf.add_event_handler(ResourceEventHandlerFuncs(update_func=on_update))
    inf.start()
    try:
        assert resynced.wait(WAIT)
    finally:
        inf.stop()
    (store,) = recording_store
    # (the reflector reads the cache's keys for each relist's deletions)
    assert "informer-rsync" in store.readers
    assert "kube-informers-timer" not in store.readers
