"""Structured log lines: formatters that render the context a log call passes
through :mod:`logging`'s ``extra``, and :func:`configure_logging`, which
installs one of them.

The toolkit passes its context as ``extra`` fields (see
:data:`CONTEXT_FIELDS`): ``controller``, ``kind``, ``key`` (an object's
``namespace/name``) and ``reconcile_id`` (a short id unique to one
reconcile call), and others where they apply (``queue``, ``election``,
``ring``...). A log line never carries an object's contents: only such
names. Two renderings:

* :class:`TextFormatter`: ``2026-01-02T03:04:05.678Z INFO informers.x: message
  controller=pods key=default/web-1 reconcile_id=5f3a9c1e2b7d`` -- the extras
  as ``name=value`` pairs after the message (quoted when they hold spaces);
* :class:`JsonFormatter`: one JSON object per line, with ``time``, ``level``,
  ``logger``, ``message``, ``thread``, every extra field, and ``exception``
  (the formatted traceback) when there is one.

Both are thread-safe, as every :class:`logging.Formatter`.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable, Mapping
from typing import IO, Any, Literal

__all__ = [
    "CONTEXT_FIELDS",
    "ContextLogger",
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "record_extras",
]

#: The context fields the toolkit's log lines carry where they apply, in
#: the order the text formatter shows them first.
CONTEXT_FIELDS: tuple[str, ...] = ("controller", "kind", "key", "reconcile_id")

# Every attribute a plain LogRecord has: anything else came through ``extra``.
_STANDARD = frozenset(vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()) | {
    "message",
    "asctime",
    "taskName",
}

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
_LEVELS |= {"error": logging.ERROR, "critical": logging.CRITICAL}


def record_extras(record: logging.LogRecord) -> dict[str, Any]:
    """The fields ``record`` got through ``extra`` (or a filter), the
    :data:`CONTEXT_FIELDS` first, then the others by name; ``None`` values
    are left out."""
    fields = {
        name: value
        for name, value in vars(record).items()
        if name not in _STANDARD and not name.startswith("_") and value is not None
    }
    ordered = {name: fields.pop(name) for name in CONTEXT_FIELDS if name in fields}
    ordered.update(sorted(fields.items()))
    return ordered


def _iso_time(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


def _text_value(value: Any) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        return json.dumps(text)
    return text


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message k=v ...``: the extras (see
    :func:`record_extras`) after the message, then the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_iso_time(record.created)} {record.levelname} {record.name}: "
        line += record.getMessage()
        extras = record_extras(record)
        if extras:
            line += " " + " ".join(f"{k}={_text_value(v)}" for k, v in extras.items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        elif record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``,
    ``logger``, ``message``, ``thread`` (its name), the extras (values that
    are not JSON become their ``str()``), and ``exception`` when the record
    has a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": _iso_time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "thread": record.threadName,
        }
        for name, value in record_extras(record).items():
            doc.setdefault(name, value)
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            doc["exception"] = record.exc_text
        if record.stack_info:
            doc["stack"] = self.formatStack(record.stack_info)
        return json.dumps(doc, default=str, separators=(",", ":"))


class ContextLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger that adds fixed context fields (``fields``) and, when given,
    the fields ``context()`` answers for the calling thread (e.g. the
    current reconcile's) to every record's ``extra``; a call's own
    ``extra`` wins over both, ``fields`` over ``context()``. Nothing is
    computed for a level that is off. Thread-safe."""

    def __init__(
        self,
        logger: logging.Logger,
        fields: Mapping[str, Any] | None = None,
        context: Callable[[], Mapping[str, Any] | None] | None = None,
    ) -> None:
        super().__init__(logger, dict(fields or {}))
        self._context = context

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        merged: dict[str, Any] = {}
        if self._context is not None:
            merged.update(self._context() or {})
        merged.update(self.extra or {})
        merged.update(kwargs.get("extra") or {})
        kwargs["extra"] = merged
        return msg, kwargs


class _ContextFilter(logging.Filter):
    """Adds ``context()``'s fields to records that lack them (on a handler:
    every record it emits, whichever logger made it)."""

    def __init__(self, context: Callable[[], Mapping[str, Any] | None]) -> None:
        super().__init__()
        self._context = context

    def filter(self, record: logging.LogRecord) -> bool:
        fields = self._context()
        if fields:
            for name, value in fields.items():
                if not hasattr(record, name):
                    setattr(record, name, value)
        return True


#: The handler the last configure_logging call installed (replaced by the next).
_installed: list[logging.Handler] = []


def configure_logging(
    format: Literal["text", "json"] = "text",
    level: str | int = "info",
    *,
    stream: IO[str] | None = None,
    context: Callable[[], Mapping[str, Any] | None] | None = None,
) -> logging.Handler:
    """Log everything at ``level`` and above (``"debug"``, ``"info"``,
    ``"warning"``, ``"error"``, ``"critical"`` or a number) to ``stream``
    (default: stderr) in ``format``, through one handler on the root logger
    (what ``--log-format`` and ``--log-level`` of ``kube-informers`` set).

    ``context()``, when given, is asked for fields to add to every record
    that lacks them (the CLI passes the current reconcile's, so a reconcile's
    own log lines carry its ``controller``, ``key`` and ``reconcile_id``
    too). Calling it again replaces the handler it installed before; returns
    the handler. Raises :class:`ValueError` for an unknown format or level.
    Not thread-safe against concurrent configuration (call it once, at
    start-up)."""
    if format not in ("text", "json"):
        raise ValueError(f"log format must be 'text' or 'json', not {format!r}")
    if isinstance(level, str):
        if level.lower() not in _LEVELS:
            raise ValueError(f"log level must be one of {', '.join(_LEVELS)}, not {level!r}")
        level = _LEVELS[level.lower()]
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if format == "json" else TextFormatter())
    if context is not None:
        handler.addFilter(_ContextFilter(context))
    root = logging.getLogger()
    while _installed:
        root.removeHandler(_installed.pop())
    root.addHandler(handler)
    root.setLevel(level)
    _installed.append(handler)
    return handler
