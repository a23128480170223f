"""The official ``kubernetes`` client's models at the edge of the raw path:
turning a model into the plain dict the API speaks (:func:`to_dict`) and a
raw dict into a model (:func:`deserializer_for`, :func:`model_deserializer`),
exactly as the client itself would.

Nothing here is on a hot path unless a caller asks for models. Thread-safe:
the one lazily made :class:`kubernetes.client.ApiClient` it may use holds no
per-call state.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

try:  # the ``fast`` extra
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the installation
    _orjson = None  # type: ignore[assignment]

__all__ = ["deserializer_for", "is_kubernetes_model", "model_deserializer", "to_dict"]

_api_client_lock = threading.Lock()
_api_client: Any = None


def _shared_api_client() -> Any:
    """One ``ApiClient`` for the process, made on first use (no I/O: its
    serialisers need no server)."""
    global _api_client  # noqa: PLW0603 - one lazily made client for the process
    with _api_client_lock:
        if _api_client is None:
            from kubernetes.client import ApiClient  # noqa: PLC0415 - heavy, only when asked

            _api_client = ApiClient()
        return _api_client


class _Body:
    """What ``ApiClient.deserialize`` of kubernetes 31-36 reads: ``.data``."""

    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        self.data = data


def _dumps(raw: Any) -> str:
    """``raw`` as JSON text: orjson when installed (the ``fast`` extra), the
    standard library for what orjson refuses (integers beyond 64 bits)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(raw).decode()
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
    return json.dumps(raw)


def is_kubernetes_model(model: Any) -> bool:
    """Whether ``model`` (a class or an instance) is one of the official
    client's generated models (it has ``openapi_types`` and ``attribute_map``)."""
    return isinstance(getattr(model, "openapi_types", None), dict) and isinstance(
        getattr(model, "attribute_map", None), dict
    )


def deserializer_for(client: Any) -> Callable[[Any, type[Any]], Any]:
    """``deserialize(raw, model)`` through ``client.deserialize``, the
    kubernetes client's public model deserializer, whichever signature it has:
    ``(response_text, response_type, content_type)`` from kubernetes 37 on,
    ``(response, response_type)`` (reading ``response.data``) before. It takes
    JSON text, so the raw object is serialised first (with orjson when
    installed, a small part of the conversion's cost); the result is what the
    client itself would make of the API's response."""
    deserialize = client.deserialize
    if "response_text" in inspect.signature(deserialize).parameters:
        return lambda raw, model: deserialize(_dumps(raw), model, "application/json")
    return lambda raw, model: deserialize(_Body(_dumps(raw)), model)


def model_deserializer() -> Callable[[Any, type[Any]], Any]:
    """:func:`deserializer_for` one shared, lazily made ``ApiClient``."""
    return deserializer_for(_shared_api_client())


def to_dict(obj: Any, api_client: Any = None) -> dict[str, Any]:
    """``obj`` as the plain dict the API speaks: a mapping is returned as a
    ``dict`` (shallow: not copied when it already is one); an official client
    model goes through ``ApiClient.sanitize_for_serialization`` (of
    ``api_client`` when given, else a shared one), which drops unset fields
    and uses the API's camelCase names. Raises :class:`TypeError` for
    anything else."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, Mapping):
        return dict(obj)
    if is_kubernetes_model(obj):
        client = api_client if hasattr(api_client, "sanitize_for_serialization") else None
        sanitized = (client or _shared_api_client()).sanitize_for_serialization(obj)
        if isinstance(sanitized, dict):
            return sanitized
    raise TypeError(
        f"an object is a dict or an official kubernetes client model, not {type(obj).__name__}"
    )
