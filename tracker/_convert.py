"""Turning raw API objects (dicts) into the type a tracker's user asked for,
memoised per (uid, resourceVersion).

Private: :class:`tracker.resource.ResourceTracker` is the public face. Kept in
its own module so the conversion rules can be tested without an informer.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, cast

import cachetools

from informers.rest.models import deserializer_for, model_deserializer
from informers.rest.models import is_kubernetes_model as _is_kubernetes_model
from informers.wire.objects import get_resource_version, get_uid
from tracker.errors import ConversionError

__all__ = ["DEFAULT_CACHE_SIZE", "Converter", "converter_for", "deserializer_for", "failure_reason"]

T = TypeVar("T")

#: How many converted objects a tracker keeps by default.
DEFAULT_CACHE_SIZE = 4096


def _kubernetes_deserializer() -> Callable[[Any, type[Any]], Any]:
    """The shared kubernetes model deserializer (:mod:`informers.rest.models`)."""
    return model_deserializer()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _dataclass_converter(model: type[T]) -> Callable[[Mapping[str, Any]], T]:
    fields = [(f.name, _camel(f.name)) for f in dataclasses.fields(model) if f.init]  # type: ignore[arg-type]

    def convert(raw: Mapping[str, Any]) -> T:
        kwargs = {}
        for name, camel in fields:
            if name in raw:
                kwargs[name] = raw[name]
            elif camel in raw:
                kwargs[name] = raw[camel]
        return model(**kwargs)

    return convert


def converter_for(model: type[T]) -> Callable[[Mapping[str, Any]], T]:
    """The conversion function for ``model``:

    * ``dict``: the raw object itself (no conversion, no copy);
    * a ``kubernetes`` client model class (``V1Pod``...): the client's own
      deserializer (see :func:`deserializer_for`), so field names, nested
      models and timestamps are as the client makes them;
    * a pydantic model (anything with ``model_validate``): ``model_validate``;
    * a dataclass: its init fields taken from the top-level keys, by field name
      or by its camelCase form (``api_version`` from ``apiVersion``), nested
      values left as they are; missing fields use their defaults.

    Anything else is a :class:`TypeError`; pass ``convert=`` instead.
    """
    if model is dict:
        return cast(Callable[[Mapping[str, Any]], T], lambda raw: raw)
    if _is_kubernetes_model(model):
        deserialize = _kubernetes_deserializer()
        return lambda raw: cast(T, deserialize(raw, model))
    validate = getattr(model, "model_validate", None)
    if callable(validate):
        return lambda raw: cast(T, validate(raw))
    if isinstance(model, type) and dataclasses.is_dataclass(model):
        return _dataclass_converter(model)
    raise TypeError(
        f"do not know how to convert objects to {model!r}: give a kubernetes model, "
        "a pydantic model, a dataclass or dict, or pass convert="
    )


class Converter(Generic[T]):
    """Converts raw objects with ``convert`` and memoises the results in an LRU
    of ``cache_size`` entries keyed by (uid, resourceVersion); objects lacking
    either are converted every time. ``cache_size=0`` disables the memo.

    Thread-safe: the LRU is guarded by one lock, and conversions run outside
    it (two threads converting the same new object at once may both do the
    work; both get equal results). A memoised result is shared by every caller,
    so it is read-only by contract, like the raw objects.
    """

    def __init__(
        self,
        convert: Callable[[Mapping[str, Any]], T],
        *,
        kind: str = "object",
        cache_size: int = DEFAULT_CACHE_SIZE,
        memoise: bool = True,
    ) -> None:
        if cache_size < 0:
            raise ValueError(f"cache_size must not be negative, not {cache_size}")
        self._convert = convert
        self._kind = kind
        self._memoise = memoise and cache_size > 0
        # _lock guards _cache (cachetools caches are not thread-safe) and the counters.
        self._lock = threading.Lock()
        self._cache: cachetools.LRUCache[tuple[str, str], T] = cachetools.LRUCache(
            maxsize=max(1, cache_size)
        )
        self._hits = 0
        self._misses = 0

    @property
    def hits(self) -> int:
        """How many conversions the memo saved."""
        with self._lock:
            return self._hits

    @property
    def misses(self) -> int:
        """How many conversions actually ran."""
        with self._lock:
            return self._misses

    def __call__(self, raw: Mapping[str, Any], key: str) -> T:
        """``raw`` as T; raises :class:`ConversionError` (naming ``key``) when
        the conversion fails."""
        memo_key = None
        if self._memoise:
            uid = get_uid(raw)
            version = get_resource_version(raw)
            if uid and version:
                memo_key = (uid, version)
                with self._lock:
                    found = self._cache.get(memo_key, _MISSING)
                    if found is not _MISSING:
                        self._hits += 1
                        return cast(T, found)
        try:
            converted = self._convert(raw)
        except Exception as err:
            raise ConversionError(self._kind, key, failure_reason(err)) from err
        with self._lock:
            self._misses += 1
            if memo_key is not None:
                self._cache[memo_key] = converted
        return converted


_MISSING: Any = object()

# "Invalid value for `phase` (Bogus), must be one of [...]": the field and the
# rule, without the value in parentheses (it may be secret).
_MODEL_INVALID = re.compile(r"Invalid value for `([^`]+)`(?: \(.*?\))?, (.*)", re.DOTALL)
# A dataclass or plain class refusing a field: names the field, not its value.
_SIGNATURE = re.compile(r"(unexpected keyword argument '[^']+'|missing \d+ required .*)")


def failure_reason(error: BaseException) -> str:
    """Why a conversion failed, naming the field and the rule and never a
    value: the first error of a pydantic ``ValidationError`` (its location
    and message), a kubernetes model's "Invalid value for `field`" (without
    the value), a constructor's unexpected or missing argument; else the
    error's type name alone."""
    name = type(error).__name__
    errors = getattr(error, "errors", None)
    if callable(errors):  # pydantic's ValidationError
        try:
            first = errors()[0]
            location = ".".join(str(part) for part in first.get("loc", ())) or "(root)"
            return f"{name}: {location}: {str(first.get('msg', ''))[:200]}"
        except Exception:  # noqa: BLE001 - a look at the error must not fail the report
            return name
    text = str(error)
    found = _MODEL_INVALID.search(text)
    if found is not None:
        return f"{name}: {found.group(1)}: {found.group(2)[:200]}"
    found = _SIGNATURE.search(text)
    if isinstance(error, TypeError) and found is not None:
        return f"{name}: {found.group(1)[:200]}"
    return name
