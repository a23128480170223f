"""How the stores key objects: the key function's result checked
(:func:`checked_key`), objects named in error messages (:func:`describe`),
and many objects keyed at once (:func:`object_keys`, :func:`keyed_items`),
inline for plain-dict objects when the key function keys those as
:func:`~informers.meta_namespace_key` does (:func:`keys_plain_dicts`).

Pure functions; they run the key function in the caller's thread and take no
lock.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from informers.errors import ObjectKeyError
from informers.wire.objects import (
    KeyFunc,
    deletion_handling_meta_namespace_key,
    meta_namespace_key,
    meta_namespace_keys,
)

__all__ = ["checked_key", "describe", "keyed_items", "keys_plain_dicts", "object_keys"]

#: Key functions that agree with meta_namespace_key on plain-dict objects, so
#: a batch of objects can be keyed with meta_namespace_keys.
_PLAIN_DICT_KEY_FUNCS: tuple[KeyFunc, ...] = (
    meta_namespace_key,
    deletion_handling_meta_namespace_key,
)


def checked_key(key_func: KeyFunc, obj: Any) -> str:
    """``key_func(obj)``, checked: raises :class:`~informers.ObjectKeyError`
    when the key function fails (whatever it raised is chained) or returns
    something other than a string."""
    try:
        key = key_func(obj)
    except ObjectKeyError:
        raise
    except Exception as err:
        raise ObjectKeyError(
            f"key function failed for a {type(obj).__name__}: {type(err).__name__}: {err}"
        ) from err
    if type(key) is not str:
        raise ObjectKeyError(f"key function returned a {type(key).__name__}, not a str")
    return key


def describe(key_of: Callable[[Any], str], obj: Any) -> str:
    """How an error message names ``obj``: ``key_of(obj)``, or ``<no key>``
    when that raises :class:`~informers.ObjectKeyError`."""
    try:
        return key_of(obj)
    except ObjectKeyError:
        return "<no key>"


def keys_plain_dicts(key_func: KeyFunc) -> bool:
    """Whether ``key_func`` keys every plain-dict object as
    :func:`~informers.meta_namespace_key` does (the default key functions
    do), so that keys made by :func:`~informers.meta_namespace_keys` serve
    for it. Decided once, when a store or queue is built."""
    return key_func in _PLAIN_DICT_KEY_FUNCS


def object_keys(
    objects: Sequence[Any], key_of: Callable[[Any], str], plain_dicts: bool
) -> builtins.list[str]:
    """``[key_of(obj) for obj in objects]``; with ``plain_dicts`` (see
    :func:`keys_plain_dicts`) plain-dict objects are keyed inline, without a
    call each. What ``key_of`` raises propagates."""
    if plain_dicts:
        return meta_namespace_keys(objects, key_of)
    return [key_of(obj) for obj in objects]


def keyed_items(
    objects: Iterable[Any], key_of: Callable[[Any], str], plain_dicts: bool
) -> dict[str, Any]:
    """``{key_of(obj): obj}`` for ``objects`` in order (later duplicates
    win), keyed as :func:`object_keys` keys them."""
    objs = objects if isinstance(objects, builtins.list) else builtins.list(objects)
    return dict(zip(object_keys(objs, key_of, plain_dicts), objs, strict=True))
