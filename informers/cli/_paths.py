"""Field paths on the command line (``--index NAME=PATH``, ``--column``), as
kubectl's ``custom-columns`` writes them.

A path is keys joined by dots; ``\\.`` is a dot inside a key (label keys such
as ``app.kubernetes.io/name``), ``[N]`` (or a ``.N`` segment) takes a list's
element: ``metadata.labels.app\\.kubernetes\\.io/name``,
``status.containerStatuses[0].ready``, ``spec.containers.0.image``.

:func:`unmatched_warning` says when a path found nothing in the first
objects of a kind, the usual sign of a typo or of an unescaped dot.

Pure functions; not a public API of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["PROBE_OBJECTS", "join_path", "split_path", "unmatched_warning", "value_at"]

#: How many objects :func:`unmatched_warning` looks at.
PROBE_OBJECTS = 20

_INDEX = re.compile(r"\[(\d+)\]")


def split_path(text: str) -> tuple[str, ...]:
    """The keys of ``text`` (see the module documentation). Raises
    :class:`ValueError` for an empty key, a stray ``\\`` or a malformed
    ``[N]``."""
    parts: list[str] = []
    current: list[str] = []
    closed = False  # the last part was a [N] (a dot or another [ must follow)
    i = 0
    while i < len(text):
        char = text[i]
        if closed and char not in ".[":
            raise ValueError(f"path {text!r}: '.' or '[' must follow a list index")
        if char == "\\":
            if i + 1 >= len(text) or text[i + 1] not in ".[\\":
                raise ValueError(f"path {text!r}: a backslash escapes '.', '[' or '\\' only")
            current.append(text[i + 1])
            i += 2
            continue
        if char == "[":
            match = _INDEX.match(text, i)
            if match is None:
                raise ValueError(f"path {text!r}: '[' starts a list index such as [0]")
            if not closed:
                parts.append(_segment(text, current))
                current = []
            parts.append(match.group(1))
            closed = True
            i = match.end()
            continue
        if char == ".":
            if not closed:
                parts.append(_segment(text, current))
                current = []
            closed = False
            if i + 1 >= len(text):
                raise ValueError(f"path {text!r} has an empty key")
        else:
            current.append(char)
        i += 1
    if not closed:
        parts.append(_segment(text, current))
    return tuple(parts)


def join_path(parts: Sequence[str]) -> str:
    """``parts`` written as a path that :func:`split_path` reads back (dots,
    ``[`` and backslashes inside a key escaped)."""
    return ".".join(re.sub(r"([.\[\\])", r"\\\1", part) for part in parts)


def _segment(text: str, current: list[str]) -> str:
    if not current:
        raise ValueError(f"path {text!r} has an empty key")
    return "".join(current)


def value_at(obj: Any, parts: Sequence[str]) -> Any:
    """The value at ``parts`` in ``obj`` (dicts by key, lists by a number),
    or ``None`` when a step is missing."""
    value: Any = obj
    for part in parts:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and part.isascii():
            index = int(part)
            value = value[index] if index < len(value) else None
        else:
            return None
        if value is None:
            return None
    return value


def unmatched_warning(
    option: str, parts: Sequence[str], objects: Iterable[Any], kind: str
) -> str | None:
    """A warning when ``parts`` finds no value in any of the first
    :data:`PROBE_OBJECTS` of ``objects`` (``None`` when one has a value, or
    when there are no objects to tell by). ``option`` is the flag as the user
    wrote it, ``kind`` names the objects (``pods``)."""
    looked = 0
    for obj in objects:
        if looked >= PROBE_OBJECTS:
            break
        looked += 1
        if value_at(obj, parts) is not None:
            return None
    if not looked:
        return None
    hint = ""
    if not any("." in part for part in parts):
        hint = (
            " (is it a key with dots in it? escape them: "
            "metadata.labels.app\\.kubernetes\\.io/name)"
        )
    return f"{option} matched nothing in the first {looked} {kind}{hint}"
