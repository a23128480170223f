"""A hypothesis state machine: the informer against a dict model of the server,
over FakeListerWatcher, with relists (410), dropped watches and bookmarks;
with the default store, with the compact store (whose relists go through
its list buffers, informers.cache.listbuffer) and with the decode-on-demand
store fed raw objects (informers.cache.compact.raw)."""

from __future__ import annotations

import functools
import threading
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from informers.cache.compact import CompactStore
from informers.cache.compact.raw import RawStore
from informers.cache.informer import SharedIndexInformer
from informers.cache.protocols import StoreFactory
from informers.cache.reflector import BackoffManager, ReflectorConfig
from informers.testing.fake import FakeListerWatcher, FakeWatch
from informers.wire.objects import DeletedFinalStateUnknown, meta_namespace_key
from tests.helpers import RawFakeListerWatcher

NAMES = st.sampled_from(["a", "b", "c"])
NAMESPACES = st.sampled_from(["x", "y"])


class Replay:
    """A handler whose events replay into a dict."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.model: dict[str, str] = {}

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        with self.lock:
            self.model[meta_namespace_key(obj)] = obj["metadata"]["resourceVersion"]

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            assert meta_namespace_key(old) == meta_namespace_key(new)
            self.model[meta_namespace_key(new)] = new["metadata"]["resourceVersion"]

    def on_delete(self, obj: Any) -> None:
        key = obj.key if isinstance(obj, DeletedFinalStateUnknown) else meta_namespace_key(obj)
        with self.lock:
            assert key in self.model, key
            del self.model[key]


class InformerMachine(RuleBasedStateMachine):
    #: The informer's cache (None: the default store).
    store: StoreFactory | None = None
    #: The fake server's lister-watcher.
    lw_class: type[FakeListerWatcher] = FakeListerWatcher

    def __init__(self) -> None:
        super().__init__()
        self.rv = 10
        self.server: dict[str, dict[str, Any]] = {}
        self.lw = self.lw_class()
        self.lw.set_objects([], str(self.rv))
        self.informer = SharedIndexInformer(
            self.lw,
            name="pods",
            reflector_config=ReflectorConfig(description="pods"),
            backoff=BackoffManager(initial=0.001, cap=0.002),
            store=self.store,
        )
        self.replay = Replay()
        self.informer.add_event_handler(self.replay)
        self.informer.start()
        self.watches = 1
        self.watch: FakeWatch = self.lw.wait_for_watch(1)

    def _publish(self) -> None:
        self.lw.set_objects(self.server.values(), str(self.rv))

    def _new_watch(self) -> None:
        self.watches += 1
        self.watch = self.lw.wait_for_watch(self.watches)

    @rule(name=NAMES, ns=NAMESPACES)
    def put(self, name: str, ns: str) -> None:
        self.rv += 1
        key = f"{ns}/{name}"
        obj = {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(self.rv)}}
        existed = key in self.server
        self.server[key] = obj
        self._publish()
        (self.watch.modify if existed else self.watch.add)(obj)

    @rule(name=NAMES, ns=NAMESPACES)
    def delete(self, name: str, ns: str) -> None:
        key = f"{ns}/{name}"
        if key not in self.server:
            return
        self.rv += 1
        obj = self.server.pop(key)
        self._publish()
        self.watch.delete({"metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}})

    @rule(name=NAMES, ns=NAMESPACES)
    def delete_unseen_then_expire(self, name: str, ns: str) -> None:
        """Delete while the watch is broken, then 410: the relist must
        produce a tombstone."""
        key = f"{ns}/{name}"
        if key in self.server:
            self.rv += 1
            del self.server[key]
        self._publish()
        self.watch.error(410, "Expired", "too old resource version")
        self._new_watch()

    @rule()
    def bookmark(self) -> None:
        self.rv += 1
        self._publish()
        self.watch.bookmark(str(self.rv))

    @rule()
    def drop(self) -> None:
        self.watch.close()
        self._new_watch()

    @invariant()
    def converged(self) -> None:
        reflector = self.informer.reflector
        assert reflector is not None
        want = str(self.rv)
        assert reflector.wait_for(lambda s: s.mem.last_sync_rv == want, 10), reflector.state
        assert self.informer.wait_idle(10)
        expected = {k: o["metadata"]["resourceVersion"] for k, o in self.server.items()}
        cached = {
            meta_namespace_key(o): o["metadata"]["resourceVersion"]
            for o in self.informer.get_store().list()
        }
        assert cached == expected
        with self.replay.lock:
            assert self.replay.model == expected

    def teardown(self) -> None:
        self.informer.stop()


InformerMachine.TestCase.settings = settings(stateful_step_count=12, deadline=None)
TestInformerMachine = InformerMachine.TestCase


class CompactInformerMachine(InformerMachine):
    store = CompactStore


CompactInformerMachine.TestCase.settings = settings(stateful_step_count=12, deadline=None)
TestCompactInformerMachine = CompactInformerMachine.TestCase


class RawInformerMachine(InformerMachine):
    """The decode-on-demand store, fed raw objects (lists and watch events)."""

    store = RawStore
    lw_class = RawFakeListerWatcher


RawInformerMachine.TestCase.settings = settings(stateful_step_count=12, deadline=None)
TestRawInformerMachine = RawInformerMachine.TestCase


class CompressedRawInformerMachine(RawInformerMachine):
    """The decode-on-demand store keeping its bytes deflated."""

    store = functools.partial(RawStore, compress=True)


CompressedRawInformerMachine.TestCase.settings = settings(stateful_step_count=12, deadline=None)
TestCompressedRawInformerMachine = CompressedRawInformerMachine.TestCase
