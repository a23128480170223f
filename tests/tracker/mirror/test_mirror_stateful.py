"""A state machine drives a MirrorStore (SQLite and PostgreSQL) with syncs,
deletes and batches, against a dict of rows; after every step the table holds
exactly the model's rows and the write counter the model's count."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from informers.wire.resources import PODS
from tracker.mirror import Column, MirrorDatabase, MirrorStore
from tracker.syncapi import ObjectKey, diff

COLUMNS = [Column("node", "spec.nodeName")]
KEYS = [ObjectKey("a", "x"), ObjectKey("a", "y"), ObjectKey("b", "x")]

_tables = itertools.count()

# (namespace, name, resource_version, node) by uid
Model = dict[str, tuple[str, str, str, str]]


def make_obj(uid: str, key: ObjectKey, rv: str, node: str) -> dict[str, Any]:
    return {
        "metadata": {
            "uid": uid,
            "namespace": key.namespace,
            "name": key.name,
            "resourceVersion": rv,
        },
        "spec": {"nodeName": node},
    }


objects = st.builds(
    make_obj,
    st.sampled_from(["u1", "u2", "u3", "u4"]),
    st.sampled_from(KEYS),
    st.sampled_from(["1", "2"]),
    st.sampled_from(["n1", "n2"]),
)
operations = st.one_of(
    objects.map(lambda o: ("sync", o)), st.sampled_from(KEYS).map(lambda k: ("delete", k))
)


def _upsert(model: Model, obj: dict[str, Any]) -> int:
    m = obj["metadata"]
    value = (m["namespace"], m["name"], m["resourceVersion"], obj["spec"]["nodeName"])
    changed = model.get(m["uid"]) != value
    model[m["uid"]] = value
    return int(changed)


def _delete_stale(model: Model, obj: dict[str, Any]) -> int:
    m = obj["metadata"]
    stale = [
        uid
        for uid, (ns, name, _, _) in model.items()
        if (ns, name) == (m["namespace"], m["name"]) and uid != m["uid"]
    ]
    for uid in stale:
        del model[uid]
    return len(stale)


def _delete_key(model: Model, key: ObjectKey) -> int:
    gone = [
        uid for uid, (ns, name, _, _) in model.items() if (ns, name) == (key.namespace, key.name)
    ]
    for uid in gone:
        del model[uid]
    return len(gone)


def machine_for(db: MirrorDatabase) -> type[RuleBasedStateMachine]:
    class MirrorStoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.store = MirrorStore(db, PODS, COLUMNS, table=f"machine_{next(_tables)}")
            self.model: Model = {}
            self.writes = 0

        @rule(obj=objects)
        def sync(self, obj: dict[str, Any]) -> None:
            written = _upsert(self.model, obj) + _delete_stale(self.model, obj)
            assert self.store.sync(obj) is (written > 0)
            self.writes += written

        @rule(key=st.sampled_from(KEYS))
        def delete(self, key: ObjectKey) -> None:
            written = _delete_key(self.model, key)
            assert self.store.delete(key) is (written > 0)
            self.writes += written

        @rule(ops=st.lists(operations, max_size=8), rv=st.sampled_from(["", "10", "20"]))
        def batch(self, ops: list[tuple[str, Any]], rv: str) -> None:
            # The model of MirrorStore.apply: runs of syncs coalesced by key, then
            # upserted in order, then their stale rows removed; deletes in order.
            written = 0
            for kind, group in itertools.groupby(ops, key=lambda op: op[0]):
                values = [v for _, v in group]
                if kind == "sync":
                    latest = {
                        (o["metadata"]["namespace"], o["metadata"]["name"]): o for o in values
                    }
                    written += sum(_upsert(self.model, o) for o in latest.values())
                    written += sum(_delete_stale(self.model, o) for o in latest.values())
                else:
                    written += sum(_delete_key(self.model, k) for k in values)
            with self.store.batch() as batch:
                for kind, value in ops:
                    if kind == "sync":
                        batch.sync(value)
                    else:
                        batch.delete(value)
                if rv:
                    batch.set_resource_version(rv)
            assert batch.written == written
            self.writes += written
            if rv:
                assert self.store.resource_version == rv

        @invariant()
        def rows_equal_the_model(self) -> None:
            rows = self.store.rows()
            assert {
                uid: (r.namespace, r.name, r.resource_version, r.columns["node"])
                for uid, r in rows.items()
            } == self.model
            assert self.store.writes == self.writes

        @invariant()
        def one_row_per_key(self) -> None:
            keys = [(ns, name) for ns, name, _, _ in self.model.values()]
            assert len(keys) == len(set(keys))

        @invariant()
        def diff_against_the_stored_objects_is_empty(self) -> None:
            live = list(self.store.objects().values())
            assert diff(live, self.store.rows(), self.store.matches, self.store.key) == []

    return MirrorStoreMachine


def test_store_state_machine(database: MirrorDatabase) -> None:
    examples = 60 if database.dialect == "sqlite" else 25
    run_state_machine_as_test(
        machine_for(database),
        settings=settings(max_examples=examples, stateful_step_count=15, deadline=None),
    )
