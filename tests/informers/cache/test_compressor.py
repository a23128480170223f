"""The compact stores' compression against a preset dictionary
(informers/cache/compact/_compressor.py) and the zstd codec built on it:
round trips, determinism, learned dictionaries, refused bytes, concurrent
use, and the zlib fallback without the zstandard package."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from informers.cache.compact import (
    CompactStore,
    JSONCodec,
    ZstdCodec,
    _compressor,
    available_codecs,
)
from informers.cache.compact._compressor import BACKENDS, PresetCompressor, default_backend
from informers.cache.compact.dictionary import KUBERNETES_DICTIONARY
from informers.cache.compact.raw import RawCodec
from informers.cache.scope import metadata_store
from informers.errors import IndexFunctionError
from informers.wire.objects import NAMESPACE_INDEX, namespace_index
from tests.helpers import new_pod

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def _ignore(err: IndexFunctionError) -> None:
    raise AssertionError(err)


def _doc(i: int) -> bytes:
    return json.dumps(new_pod(f"p{i}", "ns"), separators=(",", ":")).encode()


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.lists(st.binary(max_size=300), max_size=6))
def test_packs_round_trip_and_are_deterministic(backend: str, data: list[bytes]) -> None:
    for learn in (False, True):
        compressor = PresetCompressor(backend, learn=learn)
        for item in data:
            blob = compressor.pack(item)
            assert compressor.unpack(blob) == item
            assert compressor.pack(item) == blob  # equal input, equal bytes


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_learned_dictionary_is_the_first_document_after_the_kubernetes_words(
    backend: str,
) -> None:
    assert PresetCompressor(backend, learn=True).dictionary is None
    compressor = PresetCompressor(backend, learn=True)
    assert "to learn" in repr(compressor)
    first, second = _doc(0), _doc(1)
    compressor.pack(first)
    learned = compressor.dictionary
    assert learned is not None
    assert learned.endswith(first)
    assert (KUBERNETES_DICTIONARY + first).endswith(learned)  # zlib keeps 32 KiB
    compressor.pack(second)
    assert compressor.dictionary is learned  # fixed after the first
    # A document like the first compresses to a fraction of its size...
    assert len(compressor.pack(second)) < len(second) // 4
    # ... and to less than without the learned document.
    assert len(compressor.pack(second)) < len(PresetCompressor(backend).pack(second))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_it_did_not_pack_are_refused(backend: str) -> None:
    learner = PresetCompressor(backend, learn=True)
    with pytest.raises(ValueError, match="nothing was packed"):
        learner.unpack(b"x")
    compressor = PresetCompressor(backend)
    with pytest.raises(ValueError, match="not packed by this compressor"):
        compressor.unpack(b"\xff\x00 definitely not compressed")
    truncated = compressor.pack(_doc(0))[:10]
    with pytest.raises(ValueError, match="not packed by this compressor"):
        compressor.unpack(truncated)


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        PresetCompressor("lz4")
    with pytest.raises(TypeError, match="must be bytes"):
        PresetCompressor("zlib", "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be bytes"):
        ZstdCodec("text")  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_pack_and_unpack_at_once(backend: str) -> None:
    compressor = PresetCompressor(backend, learn=True)
    docs = [_doc(i) for i in range(200)]
    compressor.pack(docs[0])
    start = threading.Barrier(4)
    failures: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            start.wait(timeout=10)
            for i in range(offset, len(docs), 2):
                assert compressor.unpack(compressor.pack(docs[i])) == docs[i]
        except (AssertionError, ValueError) as err:  # reported to the test's thread below
            failures.append(err)

    threads = [threading.Thread(target=work, args=(i % 2,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_without_zstandard_zlib_is_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_compressor, "zstandard", None)
    assert default_backend() == "zlib"
    with pytest.raises(ImportError, match="zstandard"):
        PresetCompressor("zstd")
    with pytest.raises(ImportError):
        ZstdCodec()
    assert "zstd" not in available_codecs()
    codec = RawCodec(compress=True)
    assert codec.name == "raw+zlib"
    assert codec.unpack(codec.pack(_doc(3))) == _doc(3)
    store = metadata_store(indexers={}, on_index_error=_ignore)
    assert isinstance(store, CompactStore)
    assert isinstance(store.codec, JSONCodec)


@given(st.lists(st.dictionaries(st.text(max_size=5), _json_values, max_size=4), max_size=5))
def test_zstd_codec_round_trips_json_documents(docs: list[dict[str, Any]]) -> None:
    codec = ZstdCodec()
    for doc in docs:
        assert codec.decode(codec.encode(doc)) == doc
    fixed = ZstdCodec(b"")
    for doc in docs:
        assert fixed.decode(fixed.encode(doc)) == doc


def test_the_metadata_only_default_store_keeps_zstd_compressed_json() -> None:
    assert default_backend() == "zstd"  # the test extra installs zstandard
    assert "zstd" in available_codecs()
    store = metadata_store(
        indexers={NAMESPACE_INDEX: namespace_index},
        on_index_error=_ignore,
    )
    assert isinstance(store, CompactStore)
    assert isinstance(store.codec, ZstdCodec)
    metas = [
        {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": p["metadata"]}
        for p in (new_pod(f"p{i}", "ns", app="web", i=str(i)) for i in range(20))
    ]
    store.replace(metas, "20")
    plain = sum(len(JSONCodec().encode(m)) for m in metas)
    assert store.stats()["encoded_bytes"] < plain // 2
    assert store.get_by_key("ns/p7") == metas[7]
    assert sorted(store.index_keys(NAMESPACE_INDEX, "ns")) == sorted(f"ns/p{i}" for i in range(20))
    assert repr(store.codec).startswith("ZstdCodec(dictionary=")
