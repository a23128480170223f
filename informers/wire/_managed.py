"""The text surgery behind :func:`informers.wire.partial.without_managed_fields`
(needs msgspec: importing this module fails without it). Pure; thread-safe."""

from __future__ import annotations

import re

import msgspec

__all__ = ["cut_managed_fields"]

_KEY = b'"managedFields"'
_ESCAPE = re.compile(rb"\\u").search


class _ManagedFields(msgspec.Struct, rename="camel"):
    managed_fields: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET  # the very text


class _Envelope(msgspec.Struct):
    metadata: _ManagedFields | None = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode


def cut_managed_fields(data: bytes) -> bytes | None:
    """See :func:`informers.wire.partial.without_managed_fields`."""
    found = data.count(_KEY)
    escaped = _ESCAPE(data) is not None  # a key may be written with escapes
    if found == 0 and not escaped:
        return data
    try:
        envelope = _decode_envelope(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    meta = envelope.metadata
    if meta is None or meta.managed_fields is msgspec.UNSET:
        return data
    if found != 1 or escaped:
        return None
    value = bytes(meta.managed_fields)
    start = data.find(_KEY)
    colon = start + len(_KEY)
    end = colon + 1 + len(value)
    if data[colon : colon + 1] != b":" or data[colon + 1 : end] != value:
        return None  # spaced, or not the member msgspec read
    if data[start - 1 : start] == b",":  # compact: cut ',"managedFields":[...]'
        return data[: start - 1] + data[end:]
    if data[start - 1 : start] == b"{":
        following = data[end : end + 1]
        if following == b",":
            return data[:start] + data[end + 1 :]
        if following == b"}":
            return data[:start] + data[end:]
    return None
