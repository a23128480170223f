"""The codecs a :class:`~informers.cache.compact.store.CompactStore` keeps
objects in: :class:`~informers.cache.compact.codecs.Codec` (the protocol),
:class:`~informers.cache.compact.codecs.ZlibCodec` (the default),
:class:`~informers.cache.compact.codecs.ZstdCodec`,
:class:`~informers.cache.compact.codecs.JSONCodec` and
:class:`~informers.cache.compact.codecs.MsgpackCodec`.

A codec must give back an object equal to the one it encoded for every JSON
document (dicts with string keys, lists, strings, integers, floats, booleans,
``None``); tuples come back as lists. Every codec here is thread-safe.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import zlib
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from informers.cache.compact._compressor import PresetCompressor
from informers.cache.compact.dictionary import KUBERNETES_DICTIONARY
from informers.wire import _json

try:
    import orjson
except ImportError:  # the ``fast`` extra is optional
    orjson = None  # type: ignore[assignment]

__all__ = ["Codec", "JSONCodec", "MsgpackCodec", "ZlibCodec", "ZstdCodec", "available_codecs"]


@runtime_checkable
class Codec(Protocol):
    """How a :class:`~informers.cache.compact.store.CompactStore` turns an object
    into bytes and back.

    ``decode(encode(obj)) == obj`` for every JSON document ``obj``. ``encode``
    raises :class:`TypeError` or :class:`ValueError` for an object it cannot
    encode (the store turns that into :class:`~informers.ObjectEncodeError`).
    Both must be thread-safe (they run outside the store's lock, from any
    thread) and must not touch the store.
    """

    #: A short name for tables and logs (``"zlib"``, ``"json"``, ``"msgpack"``).
    name: str

    def encode(self, obj: Any) -> bytes:
        """The bytes of ``obj``."""

    def decode(self, data: bytes) -> Any:
        """A new object equal to the one ``data`` was encoded from."""


def _stdlib_dumps(obj: Any) -> bytes:
    # ASCII output: a lone surrogate (which UTF-8 cannot carry) is written as
    # an escape and read back as it was; NaN and infinities as json writes them.
    return json.dumps(obj, separators=(",", ":"), allow_nan=True).encode("ascii")


def _json_dumps(obj: Any) -> bytes:
    """Compact JSON bytes of ``obj``: orjson when installed, falling back to
    :mod:`json` for what orjson refuses (integers beyond 64 bits, lone
    surrogates); :class:`TypeError`/:class:`ValueError` for what neither
    encodes."""
    if orjson is not None:
        try:
            # Copied: orjson's own bytes keep the whole buffer it wrote into
            # (about 8 KB however short the JSON), which a cache would hold.
            return bytes(memoryview(orjson.dumps(obj)))
        except TypeError as err:
            if "key must be str" in str(err):
                raise  # not a JSON document: json.dumps would change the key
    return _stdlib_dumps(obj)


class JSONCodec:
    """Plain JSON bytes (orjson when installed, else :mod:`json`), parsed back
    by the parser every list and watch body goes through
    (:mod:`informers.wire._json`: orjson with the standard parser's results).

    The largest encoding (about the object's size on the wire) and the
    cheapest to decode. One caveat: NaN and infinities, which are not JSON and
    which no API server sends, come back as ``None`` when orjson encoded them.
    """

    name = "json"

    def encode(self, obj: Any) -> bytes:
        """Compact JSON bytes of ``obj``."""
        return _json_dumps(obj)

    def decode(self, data: bytes) -> Any:
        """The object parsed from ``data``."""
        return _json.loads(data)

    def __repr__(self) -> str:
        return "JSONCodec()"


class ZlibCodec:
    """JSON bytes compressed with :mod:`zlib` (the default codec).

    :param level: zlib's level (1 fastest .. 9 smallest; the default 6).
    :param dictionary: zlib's preset dictionary (``zdict``); default
        :data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY`. ``b""``
        compresses with none. A dictionary of objects like the ones cached shrinks
        them most (see :meth:`with_samples`).

    About a third to a sixth of the JSON's size, for one decompression more
    per decode than :class:`~informers.cache.compact.codecs.JSONCodec`.
    Thread-safe (every call uses its own zlib stream).
    """

    name = "zlib"

    def __init__(self, level: int = 6, dictionary: bytes = KUBERNETES_DICTIONARY) -> None:
        if not -1 <= level <= 9:
            raise ValueError(f"zlib level must be -1..9, not {level}")
        if not isinstance(dictionary, bytes):
            raise TypeError("the dictionary must be bytes")
        self.level = level
        # zlib uses at most the last 32 KiB of a dictionary.
        self.dictionary = dictionary[-32768:]

    @classmethod
    def with_samples(cls, samples: Iterable[Any], level: int = 6) -> ZlibCodec:
        """A codec whose preset dictionary is
        :data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY` followed by
        the JSON of ``samples`` (a few objects like the ones to be cached, e.g. a
        first page of a list; the last 32 KiB count)."""
        text = b"".join(_json_dumps(obj) for obj in samples)
        return cls(level, KUBERNETES_DICTIONARY + text)

    def encode(self, obj: Any) -> bytes:
        """The compressed JSON of ``obj``."""
        data = _json_dumps(obj)
        if not self.dictionary:
            return zlib.compress(data, self.level)
        stream = zlib.compressobj(
            self.level, zlib.DEFLATED, zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY, self.dictionary
        )
        return stream.compress(data) + stream.flush()

    def decode(self, data: bytes) -> Any:
        """The object decompressed and parsed from ``data``."""
        if not self.dictionary:
            return _json.loads(zlib.decompress(data))
        stream = zlib.decompressobj(zlib.MAX_WBITS, self.dictionary)
        return _json.loads(stream.decompress(data) + stream.flush())

    def __repr__(self) -> str:
        kind = "none" if not self.dictionary else f"{len(self.dictionary)} bytes"
        return f"ZlibCodec(level={self.level}, dictionary={kind})"


class ZstdCodec:
    """JSON bytes compressed with zstd (the ``zstandard`` package, in the
    ``fast`` extra) against a preset dictionary.

    :param dictionary: the preset dictionary; ``None`` (the default) makes it
        from the first object encoded:
        :data:`~informers.cache.compact.dictionary.KUBERNETES_DICTIONARY`
        followed by that object's JSON (fixed from then on, so a store of one
        kind gets a dictionary of its own kind). ``b""`` compresses with none.

    About as small as :class:`ZlibCodec` with a dictionary (a pod's
    metadata-only JSON of 620 bytes takes about 185), at a sixth of its time
    to encode (about 2 us) and a quarter of it to decompress. Constructing it
    without zstandard installed raises :class:`ImportError`. Thread-safe
    (each thread compresses with its own zstd context).
    """

    name = "zstd"

    def __init__(self, dictionary: bytes | None = None) -> None:
        if dictionary is not None and not isinstance(dictionary, bytes):
            raise TypeError("the dictionary must be bytes")
        self._compressor = PresetCompressor(
            "zstd", dictionary if dictionary is not None else b"", learn=dictionary is None
        )

    def encode(self, obj: Any) -> bytes:
        """The compressed JSON of ``obj``."""
        return self._compressor.pack(_json_dumps(obj))

    def decode(self, data: bytes) -> Any:
        """The object decompressed and parsed from ``data``."""
        return _json.loads(self._compressor.unpack(data))

    def __repr__(self) -> str:
        learned = self._compressor.dictionary
        size = "to learn" if learned is None else f"{len(learned)} bytes"
        return f"ZstdCodec(dictionary={size})"


class MsgpackCodec:
    """MessagePack (the optional ``msgpack`` package; it is not a dependency
    of kube-informers: install it yourself, or the ``bench`` extra).

    About 85% of the JSON's size. Integers beyond 64 bits do not encode
    (:class:`~informers.ObjectEncodeError`). Constructing it without msgpack
    installed raises :class:`ImportError`.
    """

    name = "msgpack"

    def __init__(self) -> None:
        msgpack = importlib.import_module("msgpack")  # optional: typed as Any
        self._packb = msgpack.packb
        self._unpackb = msgpack.unpackb

    def encode(self, obj: Any) -> bytes:
        """The MessagePack bytes of ``obj``."""
        try:
            data: bytes = self._packb(obj, use_bin_type=True, strict_types=False)
        except OverflowError as err:
            raise ValueError(str(err)) from err
        return data

    def decode(self, data: bytes) -> Any:
        """The object unpacked from ``data``."""
        return self._unpackb(data, raw=False, strict_map_key=False)

    def __repr__(self) -> str:
        return "MsgpackCodec()"


def available_codecs() -> dict[str, Codec]:
    """One instance of each codec usable here, by name: ``zlib``, ``json``,
    and ``zstd`` and ``msgpack`` when their packages are installed."""
    codecs: dict[str, Codec] = {"zlib": ZlibCodec(), "json": JSONCodec()}
    with contextlib.suppress(ImportError):
        codecs["zstd"] = ZstdCodec()
    with contextlib.suppress(ImportError):
        codecs["msgpack"] = MsgpackCodec()
    return codecs
