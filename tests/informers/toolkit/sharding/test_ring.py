"""informers.toolkit.sharding.ring: determinism, balance and minimal movement of the
consistent-hash ring (properties), and ring keys that follow the controller
owner."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from informers.toolkit.sharding.ring import HashRing, ring_key, stable_hash

KEYS = [f"apps/ReplicaSet/ns-{n % 37}/web-{n}" for n in range(20_000)]

shard_names = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12),
    min_size=1,
    max_size=8,
    unique=True,
)


def test_the_hash_is_pinned() -> None:
    # Fixed values: a change here would move every object of every user to
    # another shard on upgrade.
    assert stable_hash("apps/ReplicaSet/default/web") == 0xCDAE154FC9C9BDD7
    assert stable_hash("") == 0xE4A6A0577479B2B4
    assert stable_hash("shard-a#0") == 0x4518CC7B69623650


def test_empty_ring_assigns_nothing() -> None:
    assert HashRing().shard_for("x") is None
    assert len(HashRing()) == 0


def test_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="virtual_nodes"):
        HashRing(["a"], virtual_nodes=0)
    with pytest.raises(ValueError, match="non-empty"):
        HashRing([""])


@settings(max_examples=40, deadline=None)
@given(shards=shard_names, seed=st.integers(0, 1000))
def test_assignment_is_deterministic_and_order_free(shards: list[str], seed: int) -> None:
    keys = KEYS[seed : seed + 300]
    one = HashRing(shards)
    other = HashRing(list(reversed(shards)) + shards[:1])  # order and duplicates do not matter
    assert one == other
    assert [one.shard_for(k) for k in keys] == [other.shard_for(k) for k in keys]
    assert all(one.shard_for(k) in shards for k in keys)


@settings(max_examples=25, deadline=None)
@given(shards=shard_names, extra=st.text(alphabet="xyz", min_size=1, max_size=5))
def test_adding_a_shard_moves_keys_only_to_it(shards: list[str], extra: str) -> None:
    if extra in shards:
        return
    keys = KEYS[:3000]
    before = HashRing(shards)
    after = before.with_shard(extra)
    for key in keys:
        old, new = before.shard_for(key), after.shard_for(key)
        assert new in (old, extra)


@settings(max_examples=25, deadline=None)
@given(shards=shard_names.filter(lambda s: len(s) >= 2), which=st.integers(0, 7))
def test_removing_a_shard_moves_only_its_keys(shards: list[str], which: int) -> None:
    gone = shards[which % len(shards)]
    keys = KEYS[:3000]
    before = HashRing(shards)
    after = before.without_shard(gone)
    for key in keys:
        old, new = before.shard_for(key), after.shard_for(key)
        if old != gone:
            assert new == old
        else:
            assert new != gone


@pytest.mark.parametrize("count", [2, 3, 5, 8])
def test_balanced_within_the_stated_bound(count: int) -> None:
    """With 128 virtual nodes per shard, every shard holds between 0.6 and
    1.45 times its fair share of 20k keys (measured: the spread is about
    +-15% at these sizes; the bound leaves room for other key sets)."""
    ring = HashRing([f"shard-{n}" for n in range(count)])
    load = Counter(ring.shard_for(k) for k in KEYS)
    fair = len(KEYS) / count
    shares = [load[s] / fair for s in ring.shards]
    assert min(shares) >= 0.6, shares
    assert max(shares) <= 1.45, shares
    assert statistics.pstdev(shares) < 0.2


def test_adding_a_shard_moves_about_one_nth() -> None:
    for count in (2, 3, 4, 5):
        before = HashRing([f"shard-{n}" for n in range(count)])
        after = before.with_shard("newcomer")
        moved = sum(before.shard_for(k) != after.shard_for(k) for k in KEYS) / len(KEYS)
        ideal = 1 / (count + 1)
        assert 0.6 * ideal <= moved <= 1.45 * ideal, (count, moved, ideal)


def test_ring_keys_follow_the_controller_owner() -> None:
    rs = {"metadata": {"name": "web-1", "namespace": "shop"}}
    pod = {
        "metadata": {
            "name": "web-1-abcde",
            "namespace": "shop",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Other", "name": "not-controller"},
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-1",
                    "controller": True,
                },
            ],
        }
    }
    assert ring_key(rs, "apps", "ReplicaSet") == "apps/ReplicaSet/shop/web-1"
    assert ring_key(pod, "", "Pod") == ring_key(rs, "apps", "ReplicaSet")
    ring = HashRing(["a", "b", "c"])
    assert ring.shard_for(ring_key(pod, "", "Pod")) == ring.shard_for(
        ring_key(rs, "apps", "ReplicaSet")
    )
    loose = {"metadata": {"name": "n1"}}
    assert ring_key(loose, "", "Node") == "/Node//n1"
    with pytest.raises(ValueError, match=r"metadata\.name"):
        ring_key({"metadata": {}}, "", "Pod")
