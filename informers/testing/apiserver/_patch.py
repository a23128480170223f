"""PATCH bodies applied to stored objects, as the API server does.

:func:`apply_patch` takes the stored object, the raw request body and its
``Content-Type`` and returns the patched object (a new dict; the original is
never modified). Three patch types are understood:

``application/json-patch+json``
    RFC 6902: a list of ``add``/``remove``/``replace``/``move``/``copy``/``test``
    operations addressed by RFC 6901 JSON pointers (``~1`` is ``/``, ``~0`` is
    ``~``; ``-`` appends to a list). A body that is not a list of operations is
    a 400; an operation that cannot be applied (missing path, failed ``test``)
    is a 422, like the real server.
``application/merge-patch+json``
    RFC 7386: objects merge recursively, ``null`` deletes a key, anything else
    (lists included) replaces.
``application/strategic-merge-patch+json``
    Kubernetes' strategic merge patch, for built-in kinds only (custom
    resources answer 415, as the real server does). Lists merge by their
    patch merge key where the Kubernetes types declare one (``containers``,
    ``env``, ``volumes`` by ``name``, container ``ports`` by ``containerPort``,
    Service ``ports`` by ``port``, ``volumeMounts`` by ``mountPath``,
    ``conditions`` by ``type``, ...); other lists are replaced. The directives
    ``$patch: replace|delete|merge``, ``$retainKeys``,
    ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are
    honoured, which covers what ``kubectl apply`` sends.

Server-side apply (``application/apply-patch+yaml``) is not a patch of this
module (the emulator's ``apply`` package serves it) and, like any other type,
answers 415 here. Errors are :class:`PatchError` carrying the HTTP status to
answer.

Everything here is a pure function of its arguments and thread-safe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from informers.errors import InformersError
from informers.wire.resources import BUILTIN_RESOURCES, Resource

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "PatchError",
    "apply_json_patch",
    "apply_patch",
    "json_equal",
    "merge_patch",
    "strategic_merge_patch",
]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: The real server refuses JSON patches with more operations than this (413).
MAX_JSON_PATCH_OPERATIONS = 10000

_BAD_REQUEST = 400
_UNSUPPORTED = 415
_INVALID = 422
_TOO_LARGE = 413


class PatchError(InformersError, ValueError):
    """A patch could not be applied. ``status`` is the HTTP code the server
    answers with (400 malformed, 413 too many operations, 415 unsupported patch
    type, 422 not applicable) and ``message`` the Status message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def apply_patch(
    original: dict[str, Any], body: bytes, content_type: str, resource: Resource
) -> dict[str, Any]:
    """Apply the patch ``body`` of media type ``content_type`` to ``original``
    (an object of ``resource``) and return the result as a new dict.

    Raises :class:`PatchError` with the status the server answers.
    """
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type == JSON_PATCH:
        operations = _decode(body)
        result = apply_json_patch(original, operations)
    elif media_type == MERGE_PATCH:
        patch = _decode(body)
        if not isinstance(patch, dict):
            raise PatchError(_BAD_REQUEST, "merge patch body must be a JSON object")
        result = merge_patch(original, patch)
    elif media_type == STRATEGIC_MERGE_PATCH:
        if not _is_builtin(resource):
            raise PatchError(
                _UNSUPPORTED,
                "the body of the request was in an unknown format - accepted media types "
                f"include: {JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}",
            )
        patch = _decode(body)
        if not isinstance(patch, dict):
            raise PatchError(_BAD_REQUEST, "strategic merge patch body must be a JSON object")
        result = strategic_merge_patch(original, patch, resource.kind)
    else:
        accepted = f"{JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}"
        if _is_builtin(resource):
            accepted += f", {STRATEGIC_MERGE_PATCH}"
        raise PatchError(
            _UNSUPPORTED,
            f"the body of the request was in an unknown format - accepted media types "
            f"include: {accepted}",
        )
    if not isinstance(result, dict):
        raise PatchError(_INVALID, "the patched object is not a JSON object")
    return result


def _is_builtin(resource: Resource) -> bool:
    return any(
        (res.group, res.version, res.plural) == (resource.group, resource.version, resource.plural)
        for res in BUILTIN_RESOURCES
    )


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars); much faster than
    :func:`copy.deepcopy` for parsed JSON."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise PatchError(_BAD_REQUEST, f"the patch body is not valid JSON: {exc}") from exc


# --------------------------------------------------------------------------
# RFC 6902 JSON patch


def apply_json_patch(document: Any, operations: Any) -> Any:
    """Apply an RFC 6902 operation list to a deep copy of ``document``."""
    if not isinstance(operations, list):
        raise PatchError(_BAD_REQUEST, "a JSON patch must be a list of operations")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            _TOO_LARGE,
            f"the allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}",
        )
    checked = [_check_operation(number, op) for number, op in enumerate(operations)]
    doc = _copy(document)
    for op in checked:
        doc = _apply_operation(doc, op)
    return doc


def _check_operation(number: int, op: Any) -> dict[str, Any]:
    if not isinstance(op, dict):
        raise PatchError(_BAD_REQUEST, f"JSON patch operation {number} is not an object")
    kind = op.get("op")
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        raise PatchError(_BAD_REQUEST, f"JSON patch operation {number}: unknown op {kind!r}")
    if not isinstance(op.get("path"), str):
        raise PatchError(_BAD_REQUEST, f"JSON patch operation {number} ({kind}) has no path")
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(_BAD_REQUEST, f"JSON patch operation {number} ({kind}) has no value")
    if kind in ("move", "copy") and not isinstance(op.get("from"), str):
        raise PatchError(_BAD_REQUEST, f"JSON patch operation {number} ({kind}) has no from")
    _parse_pointer(op["path"])
    if kind in ("move", "copy"):
        _parse_pointer(op["from"])
    return op


def _parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 pointer into unescaped reference tokens."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(_BAD_REQUEST, f"JSON pointer {pointer!r} must start with '/'")
    tokens = pointer[1:].split("/")
    for token in tokens:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise PatchError(_BAD_REQUEST, f"JSON pointer {pointer!r} has a bad escape")
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens]


def _list_index(token: str, length: int, *, allow_end: bool, pointer: str) -> int:
    if token == "-" and allow_end:
        return length
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(_INVALID, f"invalid list index {token!r} in {pointer!r}")
    index = int(token)
    limit = length if allow_end else length - 1
    if index > limit:
        raise PatchError(_INVALID, f"list index {index} out of range in {pointer!r}")
    return index


def _resolve_parent(doc: Any, tokens: list[str], pointer: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token, pointer)
    return node


def _child(node: Any, token: str, pointer: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise PatchError(_INVALID, f"path {pointer!r} does not exist")
        return node[token]
    if isinstance(node, list):
        return node[_list_index(token, len(node), allow_end=False, pointer=pointer)]
    raise PatchError(_INVALID, f"path {pointer!r} does not exist")


def _get(doc: Any, pointer: str) -> Any:
    node = doc
    for token in _parse_pointer(pointer):
        node = _child(node, token, pointer)
    return node


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _parse_pointer(pointer)
    if not tokens:
        return value
    parent = _resolve_parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_list_index(last, len(parent), allow_end=True, pointer=pointer), value)
    else:
        raise PatchError(_INVALID, f"cannot add at {pointer!r}: parent is not a container")
    return doc


def _remove(doc: Any, pointer: str) -> tuple[Any, Any]:
    """Remove the value at ``pointer``; returns (document, removed value)."""
    tokens = _parse_pointer(pointer)
    if not tokens:
        raise PatchError(_INVALID, "cannot remove the whole document")
    parent = _resolve_parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(_INVALID, f"cannot remove {pointer!r}: it does not exist")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_list_index(last, len(parent), allow_end=False, pointer=pointer))
    raise PatchError(_INVALID, f"cannot remove {pointer!r}: it does not exist")


def _apply_operation(doc: Any, op: dict[str, Any]) -> Any:
    kind, path = op["op"], op["path"]
    if kind == "add":
        return _add(doc, path, _copy(op["value"]))
    if kind == "remove":
        return _remove(doc, path)[0]
    if kind == "replace":
        _get(doc, path)  # must exist
        if path == "":
            return _copy(op["value"])
        doc, _ = _remove(doc, path)
        return _add(doc, path, _copy(op["value"]))
    if kind == "test":
        if not json_equal(_get(doc, path), op["value"]):
            raise PatchError(_INVALID, f"testing value {path!r} failed: values differ")
        return doc
    source = op["from"]
    if kind == "copy":
        return _add(doc, path, _copy(_get(doc, source)))
    # move
    if path != source and path.startswith(source + "/"):
        raise PatchError(_INVALID, f"cannot move {source!r} into its own child {path!r}")
    if path == source:
        _get(doc, source)
        return doc
    doc, value = _remove(doc, source)
    return _add(doc, path, value)


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality: numbers compare by value, but booleans are not
    numbers (``True != 1``), objects ignore key order, lists compare in order."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    if type(left) is not type(right):
        return False
    return bool(left == right)


# --------------------------------------------------------------------------
# RFC 7386 merge patch


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 ``MergePatch(target, patch)``; returns a new value."""
    if not isinstance(patch, dict):
        return _copy(patch)
    result = _copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# --------------------------------------------------------------------------
# Strategic merge patch

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_PRIMITIVES = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"
_PRIMITIVE = "<primitive>"

_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})
#: list field of a container -> merge key
_CONTAINER_FIELDS = {
    "ports": "containerPort",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
}
#: list field of a pod spec (parent key "spec") -> merge key
_POD_SPEC_FIELDS = {
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "schedulingGates": "name",
    "resourceClaims": "name",
}


def _list_strategy(kind: str, path: tuple[str, ...]) -> str | None:
    """The patch merge key of the list at ``path`` (field names from the object
    root) of a ``kind`` object, ``_PRIMITIVE`` for merged lists of scalars, or
    ``None`` when the list is replaced as a whole. Mirrors the
    ``patchStrategy``/``patchMergeKey`` tags of the Kubernetes API types."""
    last = path[-1]
    parent = path[-2] if len(path) > 1 else ""
    if last in _CONTAINER_LISTS:
        return "name"
    if parent in _CONTAINER_LISTS:
        return _CONTAINER_FIELDS.get(last)
    if parent == "metadata":
        if last == "finalizers":
            return _PRIMITIVE
        if last == "ownerReferences":
            return "uid"
        return None
    if parent == "status":
        if last == "conditions":
            return "type"
        if last in ("podIPs", "hostIPs"):
            return "ip"
        if kind == "Node" and last == "addresses":
            return "type"
        return None
    if parent == "spec":
        if kind == "Service" and path == ("spec", "ports"):
            return "port"
        if kind == "Node" and last == "podCIDRs":
            return _PRIMITIVE
        return _POD_SPEC_FIELDS.get(last)
    if kind == "ServiceAccount" and path == ("secrets",):
        return "name"
    return None


def strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], kind: str
) -> dict[str, Any]:
    """Apply a strategic merge patch to a deep copy of ``original``, an object of
    the built-in ``kind``."""
    merged = _merge_map(_copy(original), patch, kind, ())
    return merged if merged is not None else {}


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], kind: str, path: tuple[str, ...]
) -> dict[str, Any] | None:
    """Merge ``patch`` into ``original`` (owned, mutated). Returns ``None`` when
    the map is to be deleted (``$patch: delete``)."""
    directive = patch.get(_DIRECTIVE)
    if directive is not None:
        if directive == "replace":
            return {k: _strip_directives(v) for k, v in patch.items() if not k.startswith("$")}
        if directive == "delete":
            return None
        if directive != "merge":
            raise PatchError(_BAD_REQUEST, f"unknown patch directive {directive!r}")
    retain = patch.get(_RETAIN_KEYS)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(_BAD_REQUEST, f"{_RETAIN_KEYS} must be a list")
        for key in list(original):
            if key not in retain:
                del original[key]
    orders: dict[str, Any] = {}
    for key, value in patch.items():
        if key in (_DIRECTIVE, _RETAIN_KEYS):
            continue
        if key.startswith(_SET_ORDER):
            orders[key[len(_SET_ORDER) :]] = value
            continue
        if key.startswith(_DELETE_PRIMITIVES):
            field = key[len(_DELETE_PRIMITIVES) :]
            if not isinstance(value, list):
                raise PatchError(_BAD_REQUEST, f"{key} must be a list")
            current = original.get(field)
            if isinstance(current, list):
                original[field] = [v for v in current if not any(json_equal(v, d) for d in value)]
            continue
        if key.startswith("$"):
            raise PatchError(_BAD_REQUEST, f"unknown patch directive {key!r}")
        if value is None:
            original.pop(key, None)
            continue
        child_path = (*path, key)
        current = original.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged = _merge_map(current, value, kind, child_path)
            if merged is None:
                original.pop(key, None)
            else:
                original[key] = merged
        elif isinstance(value, list) and isinstance(current, list):
            original[key] = _merge_list(current, value, kind, child_path)
        elif isinstance(value, dict) and value.get(_DIRECTIVE) == "delete":
            original.pop(key, None)
        else:
            original[key] = _strip_directives(value)
    for field, order in orders.items():
        current = original.get(field)
        if isinstance(current, list) and isinstance(order, list):
            original[field] = _apply_order(current, order, _list_strategy(kind, (*path, field)))
    return original


def _merge_list(
    original: list[Any], patch: list[Any], kind: str, path: tuple[str, ...]
) -> list[Any]:
    strategy = _list_strategy(kind, path)
    if strategy is None:
        return [_strip_directives(item) for item in patch if not _is_replace(item)]
    if any(_is_replace(item) for item in patch):
        return [_strip_directives(item) for item in patch if not _is_replace(item)]
    if strategy == _PRIMITIVE:
        result = list(original)
        for item in patch:
            if not any(json_equal(item, existing) for existing in result):
                result.append(_copy(item))
        return result
    result = list(original)
    for item in patch:
        if not isinstance(item, dict) or strategy not in item:
            raise PatchError(
                _INVALID,
                f"an element of {'.'.join(path)} does not contain the merge key {strategy!r}",
            )
        position = _find_by_key(result, strategy, item[strategy])
        if item.get(_DIRECTIVE) == "delete":
            if position is not None:
                del result[position]
            continue
        if position is None:
            result.append(_strip_directives(item))
            continue
        existing = result[position]
        merged = _merge_map(existing, item, kind, path) if isinstance(existing, dict) else None
        if merged is None:
            del result[position]
        else:
            result[position] = merged
    return result


def _is_replace(item: Any) -> bool:
    return isinstance(item, dict) and item.get(_DIRECTIVE) == "replace" and len(item) == 1


def _find_by_key(items: list[Any], key: str, value: Any) -> int | None:
    for position, item in enumerate(items):
        if isinstance(item, dict) and key in item and json_equal(item[key], value):
            return position
    return None


def _apply_order(items: list[Any], order: list[Any], strategy: str | None) -> list[Any]:
    """Reorder ``items`` as ``$setElementOrder`` asks: the listed elements first,
    in the given order, then the others in their current order."""

    def identity(item: Any) -> Any:
        if strategy and strategy != _PRIMITIVE:
            return item.get(strategy) if isinstance(item, dict) else None
        return item

    wanted = [identity(entry) for entry in order]
    first: list[Any] = []
    for ident in wanted:
        for item in items:
            if json_equal(identity(item), ident) and not any(item is f for f in first):
                first.append(item)
                break
    rest = [item for item in items if not any(item is f for f in first)]
    return first + rest


def _strip_directives(value: Any) -> Any:
    """Drop ``$``-directives and null-valued keys (deletions of nothing) from a
    value that is inserted whole, as the server does."""
    strip: Callable[[Any], Any] = _strip_directives
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value
