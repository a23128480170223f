"""Compression of small JSON documents against a preset dictionary: what the
compact stores keep compressed bytes with.

:class:`PresetCompressor` uses zstd (the ``zstandard`` package, in the
``fast`` extra) when it is installed, else :mod:`zlib` (raw deflate). A
Kubernetes object is a few kilobytes of JSON made mostly of words every
other object of its kind repeats, so a preset dictionary of such words, and
of one object of the kind, is what makes each object small on its own:
about a tenth of a realistic pod's JSON with either backend. zstd takes
about a quarter of zlib's time to compress and half of it to decompress
(measured in ``benchmarks/bench_raw_store.py``), which is why it is
preferred.

The dictionary is fixed when the compressor is made, or, with
``learn=True``, from the first document packed
(:data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY` followed
by it): equal documents always give equal bytes after that.

Thread-safety: every method may be called from any thread. zstd's contexts
are not, so each thread gets its own (made on its first call), all sharing
one digested dictionary, which zstd reads only; zlib streams are made per
call.
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

from informers.cache.compact.dictionary import KUBERNETES_DICTIONARY

try:
    import zstandard
except ImportError:  # the ``fast`` extra is optional
    zstandard = None  # type: ignore[assignment]

__all__ = ["BACKENDS", "PresetCompressor", "default_backend"]

#: The backends a :class:`PresetCompressor` may use, fastest first.
BACKENDS = ("zstd", "zlib")

#: zstd's level: -3 (a fast level) compresses a realistic pod against its
#: dictionary in about 4.4 us to about a seventh of its size; level 1 makes
#: it a fifth smaller again for 6.9 us, which matters less than the time an
#: event or a list spends on it.
_ZSTD_LEVEL = -3
#: zlib's: level 1, raw deflate (no header or checksum: the bytes never
#: leave the process). zlib reads only the last 32 KiB of a dictionary.
_ZLIB_LEVEL = 1
_ZLIB_WBITS = -15
_ZLIB_WINDOW = 32768


def default_backend() -> str:
    """``"zstd"`` when the ``zstandard`` package is installed, else ``"zlib"``."""
    return "zlib" if zstandard is None else "zstd"


class PresetCompressor:
    """Packs and unpacks bytes against a preset dictionary.

    :param backend: ``"zstd"`` or ``"zlib"`` (default: :func:`default_backend`);
        ``"zstd"`` without the ``zstandard`` package raises :class:`ImportError`.
    :param dictionary: the preset dictionary; ``None`` with ``learn``.
    :param learn: make the dictionary from the first document packed
        (:data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY`
        followed by it), under a lock, once.

    ``unpack(pack(data)) == data``. :meth:`unpack` of bytes that were not
    packed by this compressor raises :class:`ValueError`
    (``zstandard.ZstdError`` and :class:`zlib.error` are turned into it).
    """

    def __init__(
        self,
        backend: str | None = None,
        dictionary: bytes | None = KUBERNETES_DICTIONARY,
        *,
        learn: bool = False,
    ) -> None:
        backend = default_backend() if backend is None else backend
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        if backend == "zstd" and zstandard is None:
            raise ImportError("the zstd backend needs the zstandard package (the fast extra)")
        if not learn and not isinstance(dictionary, bytes):
            raise TypeError("the dictionary must be bytes (or learn=True)")
        self.backend = backend
        self._lock = threading.Lock()
        self._local = threading.local()
        self._dictionary: bytes | None = None if learn else dictionary
        self._zstd_dict: Any = None
        if self._dictionary is not None:
            self._set_dictionary(self._dictionary)

    @property
    def dictionary(self) -> bytes | None:
        """The preset dictionary (``None``: to be learned from the first
        document packed)."""
        return self._dictionary

    def _set_dictionary(self, dictionary: bytes) -> None:
        if self.backend == "zlib":
            dictionary = dictionary[-_ZLIB_WINDOW:]
        elif dictionary:
            zdict = zstandard.ZstdCompressionDict(
                dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT
            )
            zdict.precompute_compress(level=_ZSTD_LEVEL)
            self._zstd_dict = zdict
        self._dictionary = dictionary

    def _learn(self, data: bytes) -> bytes:
        with self._lock:
            if self._dictionary is None:
                self._set_dictionary(KUBERNETES_DICTIONARY + data)
            assert self._dictionary is not None
            return self._dictionary

    def pack(self, data: bytes) -> bytes:
        """``data`` compressed."""
        zdict = self._dictionary
        if zdict is None:
            zdict = self._learn(data)
        if self.backend == "zstd":
            # A copy: zstd writes into a buffer of the input's size and then
            # shrinks it, and a cache of such shrunk buffers holds the holes.
            return bytes(memoryview(self._zstd_compressor().compress(data)))
        if not zdict:
            return zlib.compress(data, _ZLIB_LEVEL, _ZLIB_WBITS)
        stream = zlib.compressobj(
            _ZLIB_LEVEL, zlib.DEFLATED, _ZLIB_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, zdict
        )
        return stream.compress(data) + stream.flush()

    def unpack(self, blob: bytes) -> bytes:
        """The bytes ``blob`` was packed from; :class:`ValueError` for bytes
        this compressor did not pack."""
        zdict = self._dictionary
        if zdict is None:
            raise ValueError("nothing was packed yet (the dictionary is not learned)")
        try:
            if self.backend == "zstd":
                return self._zstd_decompressor().decompress(blob)  # type: ignore[no-any-return]
            stream = (
                zlib.decompressobj(_ZLIB_WBITS, zdict) if zdict else zlib.decompressobj(_ZLIB_WBITS)
            )
            data = stream.decompress(blob) + stream.flush()
        except zlib.error as err:
            raise ValueError(f"not packed by this compressor: {err}") from err
        except Exception as err:
            if zstandard is not None and isinstance(err, zstandard.ZstdError):
                raise ValueError(f"not packed by this compressor: {err}") from err
            raise
        if not stream.eof:
            raise ValueError("not packed by this compressor: truncated")
        return data

    def _zstd_compressor(self) -> Any:
        local = self._local
        compressor = getattr(local, "compressor", None)
        if compressor is None:
            compressor = local.compressor = zstandard.ZstdCompressor(
                level=_ZSTD_LEVEL,
                dict_data=self._zstd_dict,
                write_checksum=False,
                write_content_size=True,
                write_dict_id=False,
            )
        return compressor

    def _zstd_decompressor(self) -> Any:
        local = self._local
        decompressor = getattr(local, "decompressor", None)
        if decompressor is None:
            decompressor = local.decompressor = zstandard.ZstdDecompressor(
                dict_data=self._zstd_dict
            )
        return decompressor

    def __repr__(self) -> str:
        size = "to learn" if self._dictionary is None else f"{len(self._dictionary)} bytes"
        return f"PresetCompressor({self.backend!r}, dictionary={size})"
