"""PATCH bodies (minimal stand-in; the full version, with strategic merge
patch by list keys, comes from the ``emulator-kubectl`` branch with the same
signature).

Pure functions; the original object is never mutated.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from informers.resources import Resource

__all__ = ["PatchError", "apply_patch"]


class PatchError(Exception):
    """A patch that cannot be applied; ``status`` is the HTTP code to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(422, f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _json_patch(doc: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError(400, "a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(400, f"invalid JSON patch operation: {op!r}")
        parts = _pointer(op["path"])
        if not parts:
            raise PatchError(422, "JSON patch on the whole document is not supported")
        parent: Any = doc
        try:
            for part in parts[:-1]:
                parent = parent[int(part)] if isinstance(parent, list) else parent[part]
            last = parts[-1]
            kind = op["op"]
            if kind == "test":
                current = parent[int(last)] if isinstance(parent, list) else parent[last]
                if current != op.get("value"):
                    raise PatchError(422, f"test operation failed at {op['path']}")
            elif kind == "remove":
                del parent[int(last) if isinstance(parent, list) else last]
            elif kind in ("add", "replace"):
                value = copy.deepcopy(op.get("value"))
                if isinstance(parent, list):
                    if last == "-":
                        parent.append(value)
                    elif kind == "add":
                        parent.insert(int(last), value)
                    else:
                        parent[int(last)] = value
                else:
                    if kind == "replace" and last not in parent:
                        raise PatchError(422, f"replace of a missing path {op['path']}")
                    parent[last] = value
            else:
                raise PatchError(422, f"unsupported JSON patch operation {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise PatchError(422, f"JSON patch failed at {op['path']}: {exc}") from None
    return doc


def apply_patch(
    original: dict[str, Any], body: bytes, content_type: str, resource: Resource
) -> dict[str, Any]:
    """Apply a PATCH body of the given content type to ``original``."""
    media = content_type.split(";", maxsplit=1)[0].strip().lower()
    try:
        patch = json.loads(body)
    except ValueError as exc:
        raise PatchError(400, f"error decoding patch: {exc}") from None
    if media == "application/json-patch+json":
        result = _json_patch(original, patch)
    elif media in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        if not isinstance(patch, dict):
            raise PatchError(400, "a merge patch must be a JSON object")
        result = _merge(original, patch)
    else:
        raise PatchError(415, f"unsupported patch content type {content_type!r}")
    if not isinstance(result, dict):
        raise PatchError(422, "the patched object is not a JSON object")
    return result
