"""A metadata-only kind mirrored to SQL (issue 29), on SQLite and
PostgreSQL, against the emulator: rows hold the metadata columns and the
``PartialObjectMetadata`` object, through the initial list, churn, a watch
drop (relist), the live reads and the periodic diff."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mirror_helpers import Running, api_partial_objects

from informers.testing import ApiServer
from informers.wire.partial import PARTIAL_KIND
from informers.wire.resources import PODS
from tests.helpers import new_pod
from tracker.errors import SyncerConfigError
from tracker.mirror import Column, MirrorDatabase
from tracker.mirror.controller import MirrorSyncer
from tracker.mirror.live import LiveReader
from tracker.syncapi import ObjectKey

COLUMNS = [
    Column("app", "metadata.labels.app"),
    Column("owner", ("metadata", "annotations", "example.com/owner")),
]


@pytest.fixture
def server(api_server: ApiServer) -> ApiServer:
    api_server.create("namespaces", {"metadata": {"name": "a"}})
    return api_server


@pytest.fixture
def api_client(server: ApiServer) -> Iterator[Any]:
    client = server.api_client()
    yield client
    client.close()


def _pod(name: str, app: str) -> dict[str, Any]:
    pod = new_pod(name, "a", app=app)
    pod["metadata"]["annotations"] = {"example.com/owner": f"team-{app}"}
    return pod


def test_a_metadata_only_mirror_holds_partial_objects(
    database: MirrorDatabase, server: ApiServer, api_client: Any
) -> None:
    for i in range(8):
        server.create("pods", _pod(f"p{i}", f"app{i % 3}"), "a")
    store = database.store(PODS, COLUMNS)
    with Running(store, api_client, metadata_only=True) as run:
        run.converge(server)
        rows = store.rows()
        assert {r.columns["app"] for r in rows.values()} == {"app0", "app1", "app2"}
        objects = store.objects()
        assert {o["kind"] for o in objects.values()} == {PARTIAL_KIND}
        assert all(set(o) == {"kind", "apiVersion", "metadata"} for o in objects.values())
        # the informer the mirror asked for is the metadata-only one, managed fields kept
        informer = run.factory.for_resource(PODS, metadata_only=True, managed_fields=True)
        assert len(informer.get_indexer()) == 8
        # churn: a label changes, a pod goes, one comes; then the watch drops
        moved = server.get("pods", "p1", "a")
        moved["metadata"]["labels"]["app"] = "moved"
        server.update("pods", moved)
        server.delete("pods", "p2", "a")
        server.create("pods", _pod("late", "app9"), "a")
        server.drop_watches()
        server.create("pods", _pod("later", "app9"), "a")
        run.converge(server)
        rows = store.rows()
        assert {r.name: r.columns["app"] for r in rows.values()}["p1"] == "moved"
        assert {r.name for r in rows.values()} == {f"p{i}" for i in range(8) if i != 2} | {
            "late",
            "later",
        }
        assert {r.name: r.columns["owner"] for r in rows.values()}["late"] == "team-app9"
        syncer = run.sc.syncer
        assert isinstance(syncer, MirrorSyncer)
        assert syncer.diff() == []  # the diff lists PartialObjectMetadata too
        assert store.objects() == api_partial_objects(server)
        # a row whose object the API does not have is found by the diff
        ghost = {**objects[ObjectKey("a", "p3")], "metadata": {"name": "ghost", "uid": "g-1"}}
        ghost["metadata"]["namespace"] = "a"
        store.sync(ghost)
        assert syncer.diff() == [ObjectKey("a", "ghost")]


def test_the_live_reader_reads_metadata_only(server: ApiServer, api_client: Any) -> None:
    server.create("pods", _pod("p0", "web"), "a")
    reader = LiveReader(api_client, PODS, metadata_only=True)
    got = reader.get(ObjectKey("a", "p0"))
    assert got is not None
    assert got["kind"] == PARTIAL_KIND
    assert set(got) == {"kind", "apiVersion", "metadata"}
    assert got["metadata"] == server.get("pods", "p0", "a")["metadata"]
    assert reader.get(ObjectKey("a", "nope")) is None
    listed = reader.list()
    assert listed["kind"] == "PartialObjectMetadataList"
    assert [o["metadata"]["name"] for o in listed["items"]] == ["p0"]
    assert LiveReader(api_client, PODS).get(ObjectKey("a", "p0"))["kind"] == "Pod"  # type: ignore[index]


def test_a_metadata_only_mirror_refuses_columns_outside_metadata(
    database: MirrorDatabase, api_client: Any
) -> None:
    store = database.store(PODS, [Column("node", "spec.nodeName")], table="pod_nodes")
    with pytest.raises(SyncerConfigError, match="node"):
        MirrorSyncer(store, LiveReader(api_client, PODS, metadata_only=True))
    metadata = MirrorSyncer(
        database.store(PODS, COLUMNS), LiveReader(api_client, PODS, metadata_only=True)
    )
    assert metadata.new_object() == {"apiVersion": "meta.k8s.io/v1", "kind": PARTIAL_KIND}
