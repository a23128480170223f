"""What a JSON column of the mirror stores, and its SQL type."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

__all__ = ["json_dumps", "json_type"]

try:  # the fast extra
    import orjson

    def json_dumps(value: Any) -> str:
        """Compact JSON of ``value`` (orjson when installed, identical in
        meaning to :func:`json.dumps`); what every JSON column stores."""
        try:
            return orjson.dumps(value).decode()
        except (TypeError, OverflowError):  # integers beyond 64 bits, odd keys
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

except ImportError:  # pragma: no cover - orjson is in the test extra

    def json_dumps(value: Any) -> str:
        """Compact JSON of ``value``; what every JSON column stores."""
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_type() -> sa.types.TypeEngine[Any]:
    """The type of a JSON column: ``JSON`` (text) on SQLite, ``JSONB`` on
    PostgreSQL; Python ``None`` is SQL ``NULL``."""
    return sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
