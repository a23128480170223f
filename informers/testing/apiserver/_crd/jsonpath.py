"""The JSONPath the API server evaluates for a CRD's printer columns and
scale paths: ``.spec.replicas``, ``.items[0]``, ``.items[*].name``,
``['dotted.key']`` and filters ``[?(@.type=="Ready")]`` (``==``, ``!=``;
a bare ``@.field`` tests presence); an optional ``{...}`` wrapper.

:func:`find` returns every match in document order (none for a path that
leads nowhere); :func:`parse` rejects what it cannot read with ValueError.
Pure functions; thread-safe.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = ["find", "parse", "set_path"]

# ("key", name) | ("index", n) | ("all", None) | ("filter", (steps, op, value))
Step = tuple[str, Any]

_NAME = re.compile(r"[A-Za-z0-9_\-$]+")
_FILTER = re.compile(r"\?\(@((?:\.[A-Za-z0-9_\-]+)+)\s*(?:(==|!=)\s*(.+?))?\s*\)\Z")


@functools.lru_cache(maxsize=256)
def parse(path: str) -> tuple[Step, ...]:
    """The steps of ``path``; ValueError when it is not a path this module reads."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == ".":
            match = _NAME.match(text, i + 1)
            if match is None:
                raise ValueError(f"invalid JSONPath {path!r} at {i}")
            steps.append(("key", match.group()))
            i = match.end()
        elif char == "[":
            end = text.find("]", i)
            if end < 0:
                raise ValueError(f"unterminated [ in JSONPath {path!r}")
            inner = text[i + 1 : end].strip()
            steps.append(_bracket(inner, path))
            i = end + 1
        else:
            raise ValueError(f"invalid JSONPath {path!r} at {i}")
    return tuple(steps)


def _bracket(inner: str, path: str) -> Step:
    if inner == "*":
        return ("all", None)
    if inner.lstrip("-").isdigit():
        return ("index", int(inner))
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return ("key", inner[1:-1])
    match = _FILTER.match(inner)
    if match is None:
        raise ValueError(f"unsupported JSONPath element [{inner}] in {path!r}")
    sub = tuple(("key", name) for name in match.group(1).strip(".").split("."))
    raw = match.group(3)
    value: Any = None
    if raw is not None:
        raw = raw.strip()
        if raw[:1] in "'\"" and raw[-1:] == raw[:1]:
            value = raw[1:-1]
        else:
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
    return ("filter", (sub, match.group(2), value))


def find(obj: Any, path: str) -> list[Any]:
    """Every value ``path`` selects in ``obj``."""
    current = [obj]
    for kind, arg in parse(path):
        following: list[Any] = []
        for node in current:
            if kind == "key":
                if isinstance(node, dict) and arg in node:
                    following.append(node[arg])
            elif kind == "index":
                if isinstance(node, list) and -len(node) <= arg < len(node):
                    following.append(node[arg])
            elif kind == "all":
                if isinstance(node, list):
                    following.extend(node)
                elif isinstance(node, dict):
                    following.extend(node.values())
            elif isinstance(node, list):
                following.extend(item for item in node if _matches(item, arg))
        current = following
    return current


def _matches(item: Any, test: tuple[tuple[Step, ...], str | None, Any]) -> bool:
    steps, op, value = test
    node = item
    for _, name in steps:
        if not isinstance(node, dict) or name not in node:
            return False
        node = node[name]
    if op is None:
        return True
    same = node == value or (isinstance(node, int | float) and str(node) == str(value))
    return same if op == "==" else not same


def set_path(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``obj`` with the field at ``path`` (keys only) set to
    ``value``, creating the objects on the way; ValueError for a path with
    indices or filters."""
    steps = parse(path)
    if not steps or any(kind != "key" for kind, _ in steps):
        raise ValueError(f"{path!r} is not a path of object keys")
    root = dict(obj)
    node = root
    for _, name in steps[:-1]:
        child = node.get(name)
        child = dict(child) if isinstance(child, dict) else {}
        node[name] = child
        node = child
    node[steps[-1][1]] = value
    return root
