"""The calling thread's log context, and the toolkit's loggers that carry it.

A controller's worker sets the fields of the reconcile it runs
(``controller``, ``kind``, ``key``, ``reconcile_id``: see
:meth:`ReconcileContext.log_fields
<informers.toolkit.runtime.ReconcileContext.log_fields>`) for the length of
the call; every toolkit logger made by :func:`context_logger` adds them to
the lines logged on that thread meanwhile, after its own fixed fields
(``queue``, ``election``, ``ring``...). Dependency-free, so every toolkit
package can use it. Thread-safe: the fields are thread-local.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from informers.util.logfmt import ContextLogger

__all__ = ["context_logger", "current_fields", "set_source"]

_local = threading.local()


def current_fields() -> Mapping[str, Any] | None:
    """The calling thread's log context (``None`` outside a reconcile):
    the ``log_fields`` of its source, read only when a line is logged."""
    source = getattr(_local, "source", None)
    if source is None:
        return None
    fields: Mapping[str, Any] = source.log_fields
    return fields


def set_source(source: Any) -> None:
    """Make ``source`` (an object with a ``log_fields`` mapping, such as a
    reconcile context; ``None``: none) the calling thread's log context."""
    _local.source = source


def context_logger(logger: logging.Logger, **fields: Any) -> ContextLogger:
    """``logger`` with ``fields`` and the thread's log context on every line."""
    return ContextLogger(logger, fields, current_fields)
