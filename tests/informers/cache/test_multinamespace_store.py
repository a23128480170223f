"""Property: the multi-namespace cache view reads exactly as one cache of
every namespace's objects would (unique keys, the same indexes)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.cache.multinamespace import MultiNamespaceStore
from informers.cache.store import Indexer
from informers.wire.objects import NAMESPACE_INDEX, meta_namespace_key, namespace_index

NAMESPACES = ("a", "b", "c")


def _app(obj: Any) -> list[str]:
    return [obj["metadata"].get("labels", {}).get("app", "")]


def _indexers() -> dict[str, Any]:
    return {NAMESPACE_INDEX: namespace_index, "app": _app}


OBJECTS = st.lists(
    st.tuples(
        st.sampled_from(NAMESPACES),
        st.sampled_from(["x", "y", "z", "w"]),
        st.sampled_from(["web", "db", ""]),
    ),
    max_size=30,
)


@given(OBJECTS, st.sampled_from(["x", "y", "nope"]))
def test_the_view_reads_as_one_cache(specs: list[tuple[str, str, str]], probe: str) -> None:
    parts = {ns: Indexer(indexers=_indexers()) for ns in NAMESPACES}
    whole = Indexer(indexers=_indexers())
    for ns, name, app in specs:
        obj = {"metadata": {"namespace": ns, "name": name, "labels": {"app": app}}}
        parts[ns].add(obj)
        whole.add(obj)
    view = MultiNamespaceStore(parts)
    assert sorted(view.list_keys()) == sorted(whole.list_keys())
    assert len(set(view.list_keys())) == len(view.list_keys()) == len(view)
    assert sorted(map(meta_namespace_key, view.list())) == sorted(whole.list_keys())
    for ns in (*NAMESPACES, "elsewhere"):
        key = f"{ns}/{probe}"
        assert view.get_by_key(key) == whole.get_by_key(key)
        assert sorted(view.index_keys(NAMESPACE_INDEX, ns)) == sorted(
            whole.index_keys(NAMESPACE_INDEX, ns)
        )
        assert len(view.by_index(NAMESPACE_INDEX, ns)) == len(whole.by_index(NAMESPACE_INDEX, ns))
    for app in ("web", "db", "", "none"):
        assert sorted(view.index_keys("app", app)) == sorted(whole.index_keys("app", app))
        assert sorted(map(meta_namespace_key, view.by_index("app", app))) == sorted(
            whole.index_keys("app", app)
        )
    assert sorted(view.list_index_func_values("app")) == sorted(whole.list_index_func_values("app"))
    assert view.get_by_key(probe) is None  # no namespace: no object
    with pytest.raises(TypeError, match="read-only"):
        view.add({"metadata": {"namespace": "a", "name": "n"}})
