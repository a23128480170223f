"""Server-side sharded list and watch (KEP-5866 ``shardSelector``): the
selector's grammar and hash, the ranges of a ring, the emulator's filter
(off unless enabled, 400 for a malformed selector, ``shardInfo`` on lists,
bookmarks kept), and N informers with disjoint selectors that together see
every object exactly once across watches and relists, with the feature on
and, filtering on the client, with it off."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from informers.cache.informer import SharedIndexInformer
from informers.cache.reflector import ReflectorConfig
from informers.errors import BadRequestError, SelectorParseError
from informers.rest.listwatch import HTTPListerWatcher, ListOptions
from informers.rest.transport import as_transport
from informers.testing import ApiServer
from informers.toolkit.sharding import HashRing
from informers.toolkit.sharding.selector import (
    HASH_SPACE,
    SHARD_INFO_FIELD,
    ShardRange,
    ShardSelector,
    even_shard_range,
    even_shard_selector,
    fnv1a_64,
    ring_shard_selector,
)
from informers.util.backoff import ExponentialBackoff
from informers.wire.resources import CONFIGMAPS, NAMESPACES

UID = "object.metadata.uid"

# ----------------------------------------------------------------- the hash


def test_fnv1a_64_known_values() -> None:
    # The published FNV-1a 64 test vectors (Go's hash/fnv.New64a agrees).
    assert fnv1a_64("") == 0xCBF29CE484222325
    assert fnv1a_64("a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64("foobar") == 0x85944171F73967E8


# ---------------------------------------------------------------- the grammar


def test_the_kubernetes_examples_parse() -> None:
    one = ShardSelector.parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")
    assert one == ShardSelector(UID, (ShardRange(0, 1 << 63),))
    two = ShardSelector.parse(
        "shardRange(object.metadata.uid, '0x0', '0x8000000000000000') || "
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
    )
    assert two.ranges == (ShardRange(0, 1 << 63), ShardRange(1 << 63, HASH_SPACE))
    ns = ShardSelector.parse('shardRange( object.metadata.namespace ,"0xAA","0xff" )')
    assert ns == ShardSelector("object.metadata.namespace", (ShardRange(0xAA, 0xFF),))


def test_even_selectors_are_the_documented_splits() -> None:
    assert [even_shard_selector(i, 2) for i in range(2)] == [
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
    ]
    assert even_shard_selector(2, 4) == (
        "shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')"
    )
    assert even_shard_range(0, 1) == ShardRange(0, HASH_SPACE)
    with pytest.raises(ValueError, match="0 <= index < count"):
        even_shard_range(3, 3)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "shardRange(object.metadata.uid,0x0,0x8000000000000000)",  # unquoted
        "shardRange(object.metadata.uid, '0', '0x80')",  # no 0x
        "shardRange(object.metadata.uid, '0x', '0x80')",
        "shardRange(object.metadata.uid, '0x0g', '0x80')",
        "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",  # 18 digits
        "shardRange(object.metadata.uid, '0x0', '0x10000000000000001')",  # past 2**64
        "shardRange(object.metadata.uid, '0x80', '0x80')",  # empty
        "shardRange(object.metadata.uid, '0x90', '0x80')",
        "shardRange(object.metadata.name, '0x0', '0x80')",
        "shardRange(object.metadata.labels, '0x0', '0x80')",
        "shardRange(metadata.uid, '0x0', '0x80')",  # fieldSelector style
        "invalidFunc(object.metadata.uid, '0x0', '0x80')",
        "shardRange(object.metadata.uid, '0x0', '0x80'",
        "shardRange(object.metadata.uid, '0x0', '0x80') ||",
        "shardRange(object.metadata.uid, '0x0', '0x80') && shardRange(object.metadata.uid, "
        "'0x80', '0x90')",
        "shardRange(object.metadata.uid, '0x0', '0x80') || "
        "shardRange(object.metadata.namespace, '0x80', '0x90')",  # two fields
    ],
)
def test_a_malformed_selector_is_a_parse_error(text: str) -> None:
    with pytest.raises(SelectorParseError, match="invalid shard selector"):
        ShardSelector.parse(text)


def test_of_merges_and_sorts_ranges() -> None:
    sel = ShardSelector.of([(10, 20), (0, 5), (5, 8), (15, 30)], "namespace")
    assert sel.field == "object.metadata.namespace"
    assert sel.ranges == (ShardRange(0, 8), ShardRange(10, 30))
    with pytest.raises(ValueError, match="hashes one of"):
        ShardSelector.of([(0, 1)], "name")
    with pytest.raises(ValueError, match="at least one range"):
        ShardSelector.of([])


def test_matching_hashes_the_field() -> None:
    obj = {"metadata": {"uid": "test-uid-123", "namespace": "ns"}}
    h = fnv1a_64("test-uid-123")
    assert ShardSelector.of([(h, h + 1)]).matches(obj)
    assert not ShardSelector.of([(0, h)]).matches(obj)
    assert not ShardSelector.of([(h + 1, HASH_SPACE)]).matches(obj)
    n = fnv1a_64("ns")
    assert ShardSelector.of([(n, n + 1)], "namespace").matches(obj)
    # a cluster-scoped object hashes the empty namespace
    empty = fnv1a_64("")
    assert ShardSelector.of([(empty, empty + 1)], "namespace").matches({"metadata": {}})


# --------------------------------------------------------------- properties

ranges_st = st.lists(
    st.tuples(st.integers(0, HASH_SPACE - 1), st.integers(1, HASH_SPACE)).filter(
        lambda t: t[0] < t[1]
    ),
    min_size=1,
    max_size=6,
)


@given(ranges_st, st.sampled_from(["uid", "namespace"]))
def test_printing_and_parsing_round_trip(ranges: list[tuple[int, int]], field: str) -> None:
    selector = ShardSelector.of(ranges, field)
    assert ShardSelector.parse(str(selector)) == selector


objects_st = st.lists(
    st.fixed_dictionaries(
        {
            "metadata": st.fixed_dictionaries(
                {"uid": st.uuids().map(str), "namespace": st.text(max_size=20)}
            )
        }
    ),
    max_size=60,
)


@given(objects_st, st.integers(1, 9), st.sampled_from(["uid", "namespace"]))
def test_even_selectors_partition_any_objects(
    objects: list[dict[str, Any]], count: int, field: str
) -> None:
    selectors = [ShardSelector.parse(even_shard_selector(i, count, field)) for i in range(count)]
    for obj in objects:
        assert sum(s.matches(obj) for s in selectors) == 1


@given(
    st.sets(st.text(alphabet="abcdefgh-", min_size=1, max_size=8), min_size=1, max_size=6),
    st.integers(1, 8),
    st.lists(st.integers(0, HASH_SPACE - 1), max_size=40),
)
def test_ring_ranges_tile_the_space_and_agree_with_the_ring(
    shards: set[str], virtual_nodes: int, hashes: list[int]
) -> None:
    ring = HashRing(shards, virtual_nodes=virtual_nodes)
    tiles = sorted((s, e, shard) for shard in ring.shards for s, e in ring.ranges(shard))
    position = 0
    for start, end, _shard in tiles:
        assert start == position
        assert start < end
        position = end
    assert position == HASH_SPACE
    for h in [0, HASH_SPACE - 1, *hashes, *(p for s, _, _ in tiles for p in (s, s - 1) if p >= 0)]:
        owner = ring.shard_for_hash(h)
        assert owner is not None
        assert any(start <= h < end for start, end in ring.ranges(owner))
        assert ShardSelector.parse(ring_shard_selector(ring, owner)).matches(
            {"metadata": {"uid": "x"}}
        ) == (ring.shard_for_hash(fnv1a_64("x")) == owner)
    assert ring.ranges("not-a-shard") == ()
    with pytest.raises(ValueError, match="not on the ring"):
        ring_shard_selector(ring, "not-a-shard")


# ----------------------------------------------------------------- emulator


def _configmap(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": {"k": name}}


def _raw_list(server: ApiServer, query: list[tuple[str, str]]) -> dict[str, Any]:
    client = server.api_client()
    try:
        response = as_transport(client).request(
            "GET", CONFIGMAPS.collection_path("default"), query=query
        )
        document: dict[str, Any] = json.loads(response.data)
        return document
    finally:
        client.close()


def _names(document: dict[str, Any]) -> set[str]:
    return {item["metadata"]["name"] for item in document["items"]}


def test_the_emulator_ignores_the_selector_unless_enabled(api_server: ApiServer) -> None:
    api_server.create_many(CONFIGMAPS, (_configmap(f"cm-{i}") for i in range(20)))
    half = even_shard_selector(0, 2)
    document = _raw_list(api_server, [("shardSelector", half)])
    assert len(document["items"]) == 20
    assert SHARD_INFO_FIELD not in document["metadata"]
    # off, even a malformed selector is ignored, as by a server without the gate
    assert len(_raw_list(api_server, [("shardSelector", "nonsense")])["items"]) == 20


def test_the_emulator_filters_lists_and_echoes_the_selector() -> None:
    with ApiServer(sharded_list_and_watch=True) as server:
        server.create_many(CONFIGMAPS, (_configmap(f"cm-{i}") for i in range(40)))
        by_name = {obj["metadata"]["name"]: obj for obj in _raw_list(server, [])["items"]}
        seen: set[str] = set()
        for i in range(3):
            text = even_shard_selector(i, 3)
            document = _raw_list(server, [("shardSelector", text), ("labelSelector", "")])
            assert document["metadata"][SHARD_INFO_FIELD] == {"selector": text}
            names = _names(document)
            selector = ShardSelector.parse(text)
            assert names == {n for n, obj in by_name.items() if selector.matches(obj)}
            assert not names & seen
            seen |= names
        assert seen == set(by_name)
        # paged lists keep to the shard
        text = even_shard_selector(1, 2)
        paged: set[str] = set()
        query = [("shardSelector", text), ("limit", "3")]
        while True:
            document = _raw_list(server, query)
            paged |= _names(document)
            token = document["metadata"].get("continue")
            if not token:
                break
            query = [("shardSelector", text), ("limit", "3"), ("continue", token)]
        assert paged == _names(_raw_list(server, [("shardSelector", text)]))


def test_a_malformed_selector_is_a_400_when_enabled() -> None:
    with ApiServer(sharded_list_and_watch=True) as server:
        for query in (
            [("shardSelector", "shardRange(object.metadata.name, '0x0', '0x8')")],
            [("shardSelector", "nonsense"), ("watch", "true")],
        ):
            with pytest.raises(BadRequestError, match="invalid shard selector") as caught:
                _raw_list(server, query)
            assert caught.value.status == 400
            assert caught.value.reason == "BadRequest"
            assert caught.value.body["kind"] == "Status"


def test_the_gate_can_be_switched(api_server: ApiServer) -> None:
    assert api_server.sharded_list_and_watch is False
    api_server.create_many(CONFIGMAPS, (_configmap(f"cm-{i}") for i in range(10)))
    api_server.sharded_list_and_watch = True
    text = even_shard_selector(0, 2)
    document = _raw_list(api_server, [("shardSelector", text)])
    assert SHARD_INFO_FIELD in document["metadata"]
    assert len(document["items"]) < 10


def test_a_streaming_list_sends_only_the_shard_and_its_bookmarks() -> None:
    with ApiServer(sharded_list_and_watch=True) as server:
        server.create_many(CONFIGMAPS, (_configmap(f"cm-{i}") for i in range(30)))
        stored = _raw_list(server, [])["items"]
        text = even_shard_selector(0, 2)
        selector = ShardSelector.parse(text)
        expected = {o["metadata"]["name"] for o in stored if selector.matches(o)}
        client = server.api_client()
        try:
            # The raw stream (no client-side filter) shows what the server sends.
            transport = as_transport(client)
            options = ListOptions(
                shard_selector=text,
                send_initial_events=True,
                resource_version_match="NotOlderThan",
                allow_watch_bookmarks=True,
                timeout_seconds=5,
            )
            response = transport.stream(
                "GET",
                CONFIGMAPS.collection_path("default"),
                query=options.query(watch=True),
                read_timeout=30,
            )
            added: set[str] = set()
            buffer = b""
            try:
                for chunk in response.chunks(65536):
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    events = [json.loads(line) for line in lines if line.strip()]
                    done = False
                    for event in events:
                        meta = event["object"]["metadata"]
                        if event["type"] == "ADDED":
                            added.add(meta["name"])
                        elif event["type"] == "BOOKMARK":
                            annotations = meta.get("annotations") or {}
                            done = annotations.get("k8s.io/initial-events-end") == "true"
                    if done:
                        break
            finally:
                response.close()
            assert added == expected
        finally:
            client.close()


# ---------------------------------------------------- informers with shards


class Seen:
    """What every shard's informer holds (by name), from its handlers; one
    condition to wait on. Records every name seen by two shards at once."""

    def __init__(self, shards: int) -> None:
        self._cond = threading.Condition()
        self.held: list[set[str]] = [set() for _ in range(shards)]  # guarded by _cond
        self.overlaps: list[str] = []  # guarded by _cond

    def handler(self, index: int) -> Any:
        from informers.cache.handlers import ResourceEventHandlerFuncs

        def add(obj: Any, *_: Any) -> None:
            name = obj["metadata"]["name"]
            with self._cond:
                if any(name in h for i, h in enumerate(self.held) if i != index):
                    self.overlaps.append(name)
                self.held[index].add(name)
                self._cond.notify_all()

        def update(_old: Any, new: Any) -> None:
            add(new)

        def delete(obj: Any) -> None:
            obj = getattr(obj, "obj", obj)  # DeletedFinalStateUnknown
            with self._cond:
                self.held[index].discard(obj["metadata"]["name"])
                self._cond.notify_all()

        return ResourceEventHandlerFuncs(add_func=add, update_func=update, delete_func=delete)

    def wait_for(self, names: set[str], timeout: float = 30.0) -> bool:
        def exactly() -> bool:
            union = set().union(*self.held)
            return union == names and sum(len(h) for h in self.held) == len(names)

        with self._cond:
            return self._cond.wait_for(exactly, timeout)

    def describe(self, names: set[str]) -> str:
        """What differs from ``names``, for a failure message."""
        with self._cond:
            union = set().union(*self.held)
            sizes = [len(h) for h in self.held]
        return f"missing {sorted(names - union)}, extra {sorted(union - names)}, sizes {sizes}"


def _start_shards(
    server: ApiServer, count: int, *, watch_list: bool = False
) -> tuple[list[SharedIndexInformer], list[Any], Seen]:
    seen = Seen(count)
    informers, clients = [], []
    for i in range(count):
        client = server.api_client()
        clients.append(client)
        informer = SharedIndexInformer(
            HTTPListerWatcher(
                client, CONFIGMAPS, "default", shard_selector=even_shard_selector(i, count)
            ),
            name=f"configmaps-shard-{i}",
            backoff=ExponentialBackoff(initial=0.01, cap=0.05),
            reflector_config=ReflectorConfig(use_watch_list=watch_list),
        )
        informer.add_event_handler(seen.handler(i))
        informers.append(informer)
        informer.start()
    for informer in informers:
        assert informer.wait_synced(20)
    return informers, clients, seen


def _stop(informers: list[SharedIndexInformer], clients: list[Any]) -> None:
    for informer in informers:
        informer.stop()
    for client in clients:
        client.close()


@pytest.fixture(params=[True, False], ids=["gate-on", "gate-off"])
def sharded_server(request: pytest.FixtureRequest) -> Iterator[ApiServer]:
    with ApiServer(sharded_list_and_watch=request.param) as server:
        yield server


@pytest.mark.parametrize("watch_list", [False, True], ids=["list", "watch-list"])
def test_disjoint_shards_see_every_object_exactly_once(
    sharded_server: ApiServer, watch_list: bool, caplog: pytest.LogCaptureFixture
) -> None:
    server = sharded_server
    caplog.set_level(logging.WARNING, logger="informers.rest.listwatch")
    names = {f"cm-{i:03d}" for i in range(60)}
    server.create_many(CONFIGMAPS, (_configmap(n) for n in sorted(names)))
    informers, clients, seen = _start_shards(server, 3, watch_list=watch_list)
    try:
        assert seen.wait_for(names), seen.describe(names)
        # the caches partition the objects too
        cached = [{o["metadata"]["name"] for o in inf.get_store().list()} for inf in informers]
        assert set().union(*cached) == names
        assert sum(map(len, cached)) == len(names)
        # watches: creations, updates and deletions reach the one owner
        for i in range(60, 90):
            server.create(CONFIGMAPS, _configmap(f"cm-{i:03d}"))
            names.add(f"cm-{i:03d}")
        for name in sorted(names)[:20]:
            obj = server.get(CONFIGMAPS, name, namespace="default")
            obj["data"] = {"k": "changed"}
            server.update(CONFIGMAPS, obj)
        for name in sorted(names)[-10:]:
            server.delete(CONFIGMAPS, name, namespace="default")
            names.discard(name)
        assert seen.wait_for(names), seen.describe(names)
        # relists: while the watches send nothing, objects change and the
        # history is compacted past them; then every watch is dropped, so
        # each reflector's resumed watch gets 410 Expired and it lists again
        synced_at = [inf.last_sync_resource_version() for inf in informers]
        server.stall_watches(60)
        for i in range(90, 100):
            server.create(CONFIGMAPS, _configmap(f"cm-{i:03d}"))
            names.add(f"cm-{i:03d}")
        for name in sorted(names)[:5]:
            server.delete(CONFIGMAPS, name, namespace="default")
            names.discard(name)
        server.compact()
        server.drop_watches()
        server.stall_watches(0)
        assert seen.wait_for(names), seen.describe(names)
        assert all(
            inf.last_sync_resource_version() != rv
            for inf, rv in zip(informers, synced_at, strict=True)
        )
        assert seen.overlaps == []
        for informer in informers:
            assert informer.wait_idle(10)
    finally:
        _stop(informers, clients)
    warned = [r for r in caplog.records if "ignored shardSelector" in r.getMessage()]
    if server.sharded_list_and_watch or watch_list:
        assert not warned  # honoured, or never listed (a streaming list has no metadata)
    else:
        assert warned


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=6), unique=True, max_size=25),
    st.integers(1, 5),
    st.sampled_from(["uid", "namespace"]),
)
def test_the_emulator_filter_partitions_any_objects(
    names: list[str], count: int, field: str
) -> None:
    with ApiServer(sharded_list_and_watch=True) as server:
        _partition_check(server, names, count, field)


def _partition_check(server: ApiServer, names: list[str], count: int, field: str) -> None:
    namespaces = ["ns-a", "ns-b"]
    for namespace in namespaces:
        server.create(NAMESPACES, {"metadata": {"name": namespace}})
    for index, name in enumerate(names):
        server.create(CONFIGMAPS, _configmap(name, namespaces[index % 2]))
    client = server.api_client()
    try:
        transport = as_transport(client)
        expected = {(namespaces[index % 2], name) for index, name in enumerate(names)}
        got: list[tuple[str, str]] = []
        for i in range(count):
            options = replace(ListOptions(), shard_selector=even_shard_selector(i, count, field))
            for namespace in namespaces:
                document = json.loads(
                    transport.request(
                        "GET", CONFIGMAPS.collection_path(namespace), query=options.query()
                    ).data
                )
                got += [
                    (item["metadata"]["namespace"], item["metadata"]["name"])
                    for item in document["items"]
                ]
        assert sorted(got) == sorted(expected)  # each object exactly once
    finally:
        client.close()
