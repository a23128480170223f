"""The JSON parser of every list and watch body: msgspec when installed (the
``fast`` extra), else orjson, else the standard library, with identical
results.

msgspec returns integers beyond 64 bits exactly and refuses (rather than
answers differently) every input on which it would differ from
:func:`json.loads` that the test corpus knows -- NaN and infinities, numbers
beyond float range, lone UTF-16 surrogates, a byte-order mark or UTF-16
input, nesting deeper than it follows -- so whatever it refuses is given to
the standard parser, and no scan is needed.

orjson parses a Kubernetes object about twice as fast as :func:`json.loads`,
but differs from it on a few inputs. Where it refuses one (``NaN``, numbers
beyond float range, lone UTF-16 surrogates, nesting deeper than 1024), the
standard parser is asked instead. Where it would silently answer something
else -- an integer beyond 64 bits becomes a float -- the input is routed to the
standard parser up front: such an integer has at least 19 consecutive digits,
which one C-level scan of the bytes detects. So :func:`loads` returns what
``json.loads`` returns, or raises :class:`ValueError` where it raises
(``RecursionError`` included), with one difference: a document nested
deeper than the interpreter's recursion limit allows ``json.loads`` to
follow, but no deeper than 1024, is parsed rather than refused.

Set the environment variable ``KUBE_INFORMERS_JSON`` to ``stdlib`` to use
the standard parser only, or to ``orjson`` or ``msgspec`` to use only that
one (and the standard parser).
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

__all__ = ["BACKEND", "loads"]

# Maps every digit to "0" and every other byte to " ": a run of 19 digits in
# the input is then a run of 19 zeros in the translation.
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_NUMBER = b"0" * 19
#: Large bodies (a list of 100k pods is ~200 MB) are scanned a window at a
#: time, so the scan never copies more than this much at once.
_WINDOW = 1 << 20


def _has_long_number(data: bytes) -> bool:
    """Whether ``data`` holds 19 or more consecutive ASCII digits."""
    if len(data) <= _WINDOW:
        return _LONG_NUMBER in data.translate(_DIGITS)
    overlap = len(_LONG_NUMBER) - 1  # a run across a window edge is seen whole
    for start in range(0, len(data), _WINDOW):
        if _LONG_NUMBER in data[start : start + _WINDOW + overlap].translate(_DIGITS):
            return True
    return False


def _stdlib_loads(data: bytes | str) -> Any:
    """``json.loads(data)``; raises :class:`ValueError` for anything that is
    not JSON (a document nested too deeply included)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_CHOICE = os.environ.get("KUBE_INFORMERS_JSON", "").lower()


def _import(name: str) -> Any:
    if _CHOICE and name != _CHOICE:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_msgspec = _import("msgspec")
_orjson = _import("orjson") if _msgspec is None else None

if _msgspec is not None:
    BACKEND = "msgspec"
    _msgspec_decode = _msgspec.json.decode
    #: What msgspec raises for a document it does not read as json.loads does.
    _MSGSPEC_REFUSED = (_msgspec.DecodeError, _msgspec.ValidationError, RecursionError)

    def loads(data: bytes | str) -> Any:
        """``json.loads(data)``, faster for bytes (text goes to the standard
        parser). Raises :class:`ValueError` for anything that is not JSON."""
        if not isinstance(data, bytes):
            return _stdlib_loads(data)
        try:
            return _msgspec_decode(data)
        except _MSGSPEC_REFUSED:
            return _stdlib_loads(data)

elif _orjson is not None:
    BACKEND = "orjson"
    _orjson_loads = _orjson.loads

    def loads(data: bytes | str) -> Any:
        """``json.loads(data)``, faster for bytes (text goes to the standard
        parser). Raises :class:`ValueError` for anything that is not JSON."""
        if not isinstance(data, bytes) or _has_long_number(data):
            return _stdlib_loads(data)
        try:
            return _orjson_loads(data)
        except ValueError:  # orjson.JSONDecodeError is a ValueError
            return _stdlib_loads(data)

else:
    BACKEND = "json"
    loads = _stdlib_loads
