"""Listing and watching one resource: the :class:`ListerWatcher` protocol the
reflector consumes, and :class:`HTTPListerWatcher`, its implementation over a
:class:`~informers.rest.transport.Transport` (by default an
:class:`~informers.rest.transport.ApiClientTransport` over the official
``kubernetes`` client).

The HTTP implementation reads raw bytes and parses JSON itself (for watches,
line by line from the socket): no model deserialisation happens on this
path, so objects arrive as plain dicts exactly as the server sent them.

Errors: an error ``Status`` from the server becomes an
:class:`~informers.errors.ApiError` (or one of its subclasses:
:class:`~informers.errors.ExpiredError` for 410,
:class:`~informers.errors.TooManyRequestsError` for 429 with ``retry_after``
read from the ``Retry-After`` header, :class:`~informers.errors.ResourceVersionTooLargeError`
for a resource version the server has not reached; the whole mapping is
:func:`~informers.errors.error_from_response`). A watch line that is not
JSON raises :class:`~informers.errors.WatchDecodeError` from the iterator.
Transport failures (connection refused, reset, read timeout) propagate as the
``urllib3`` / ``OSError`` exceptions they are;
:func:`~informers.errors.is_connection_refused` classifies them.

Aborting: a :class:`~informers.rest.transport.RequestAborter` bound with
:meth:`HTTPListerWatcher.abortable` aborts, from any thread, the requests in
flight (connecting, waiting for response headers, reading a list body) by
shutting their sockets down; they raise :class:`ConnectionAbortedError`. The
reflector binds one per run and aborts it when it is stopped.

This module also exports, from the modules that define and document them,
:class:`~informers.rest.transport.RequestAborter`,
:func:`~informers.rest.discovery.discover_resource`,
:func:`~informers.errors.error_from_status` and
:func:`~informers.errors.is_connection_refused`.
"""

from __future__ import annotations

import copy
import importlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from informers.errors import WatchDecodeError, error_from_status, is_connection_refused
from informers.rest.discovery import discover_resource
from informers.rest.transport import (
    DEFAULT_READ_TIMEOUT,
    RequestAborter,
    StreamingResponse,
    Transport,
    as_transport,
)
from informers.wire import _json
from informers.wire.partial import (
    PARTIAL_KIND,
    PARTIAL_LIST_ACCEPT,
    PARTIAL_OBJECT_ACCEPT,
    as_partial_object_metadata,
)
from informers.wire.resources import Resource
from informers.wire.selectors import SHARD_INFO_FIELD, ShardSelector

__all__ = [
    "HTTPListerWatcher",
    "ListOptions",
    "ListerWatcher",
    "WatchStream",
    # Re-exported from their own modules (informers.rest.transport, .discovery,
    # .errors), where they are documented, for the code that imports them
    # from here.
    "RequestAborter",
    "discover_resource",
    "error_from_status",
    "is_connection_refused",
]

log = logging.getLogger(__name__)

#: Seconds added to the server-side ``timeoutSeconds`` for the client read timeout.
READ_TIMEOUT_MARGIN = 30.0
#: Read timeout (seconds) of a list that names no ``timeoutSeconds``: a
#: kube-apiserver ends a request after its ``--request-timeout`` (60 s by
#: default), so a list silent for longer, plus :data:`READ_TIMEOUT_MARGIN`,
#: will never be answered and is abandoned (the reflector then retries it
#: with backoff).
LIST_READ_TIMEOUT = 60.0 + READ_TIMEOUT_MARGIN


@dataclass(frozen=True, slots=True)
class ListOptions:
    """Query parameters of one list or watch request (``None`` / ``""`` = unset).

    Immutable; derive variants with :func:`dataclasses.replace`.
    """

    label_selector: str = ""
    field_selector: str = ""
    #: KEP-5866 ``shardSelector`` (alpha; see :mod:`informers.toolkit.sharding.selector`).
    shard_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str | None = None
    resource_version_match: str = ""
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: int | None = None

    def query(self, *, watch: bool = False) -> list[tuple[str, str]]:
        """The URL query parameters, in a stable order."""
        q: list[tuple[str, str]] = []
        if watch:
            q.append(("watch", "true"))
        if self.label_selector:
            q.append(("labelSelector", self.label_selector))
        if self.field_selector:
            q.append(("fieldSelector", self.field_selector))
        if self.shard_selector:
            q.append(("shardSelector", self.shard_selector))
        if self.limit:
            q.append(("limit", str(self.limit)))
        if self.continue_token:
            q.append(("continue", self.continue_token))
        if self.resource_version:  # "" and None both mean "most recent"
            q.append(("resourceVersion", self.resource_version))
        if self.resource_version_match:
            q.append(("resourceVersionMatch", self.resource_version_match))
        if self.allow_watch_bookmarks:
            q.append(("allowWatchBookmarks", "true"))
        if self.send_initial_events is not None:
            q.append(("sendInitialEvents", "true" if self.send_initial_events else "false"))
        if self.timeout_seconds is not None:
            q.append(("timeoutSeconds", str(self.timeout_seconds)))
        return q


@runtime_checkable
class WatchStream(Protocol):
    """An open watch: iterate it for parsed events (``{"type", "object"}`` dicts).

    Iteration ends when the server closes the stream or :meth:`stop` is called.
    ``stop()`` is thread-safe, idempotent, and unblocks an iteration that is
    waiting for data in another thread.
    """

    def __iter__(self) -> Iterator[dict[str, Any]]: ...

    def stop(self) -> None: ...


@runtime_checkable
class ListerWatcher(Protocol):
    """What a reflector needs from the API: one resource, list and watch.

    ``list`` returns the parsed list object (``{"metadata": {...}, "items": [...]}``);
    ``watch`` opens a stream. Both raise :class:`~informers.errors.ApiError`
    for error responses. Implementations must be safe to call from the
    reflector's thread while ``WatchStream.stop`` is called from another.

    Optional (not part of the protocol): ``abortable(aborter)``, returning a
    lister-watcher whose requests a :class:`RequestAborter` aborts, as
    :meth:`HTTPListerWatcher.abortable`. A reflector uses it when present, so
    that stopping it does not wait for a list or watch request in flight.
    """

    def list(self, options: ListOptions) -> dict[str, Any]: ...

    def watch(self, options: ListOptions) -> WatchStream: ...


class _HTTPWatchStream:
    """A watch over one streamed response, read line by line.

    The response (and its pooled connection) is released exactly once: when
    iteration ends, or by :meth:`stop` when iteration never started."""

    def __init__(
        self,
        response: StreamingResponse,
        description: str,
        loads: Callable[[bytes], Any] = _json.loads,
    ) -> None:
        self._response = response
        self._description = description
        self._loads = loads  # _json.loads, or informers.wire.raw's (decode on demand)
        self._lock = threading.Lock()
        # Guarded by _lock:
        self._stopped = False
        self._started = False  # iteration began: its end releases the response
        self._closed = False

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            idle = not self._started
        self._response.shutdown()  # unblocks a read in another thread
        if idle:  # nobody will iterate (or finish iterating) to release it
            self._close()

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopped

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        # A stream that ended early (a decode error, a stop) may leave watch
        # bytes unread: close() drops them with the connection.
        self._response.close()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with self._lock:
            if self.stopped:  # stop() came first and released the response
                return
            self._started = True
        pending = b""
        decode = self._decode
        try:
            for chunk in self._response.chunks(65536):
                if self._stopped:
                    return
                if not pending and chunk[:1] == b"{" and chunk.find(b"\n") == len(chunk) - 1:
                    # One whole event: what a server flushing each event sends.
                    yield decode(chunk)
                    continue
                pending += chunk
                if b"\n" not in chunk:
                    continue
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield decode(line)
            if pending.strip() and not self._stopped:
                yield decode(pending)
        except Exception:
            if self._stopped:  # the error is our own shutdown()
                return
            raise
        finally:
            self._close()

    def _decode(self, line: bytes) -> dict[str, Any]:
        try:
            event = self._loads(line)
        except ValueError as exc:
            size = len(line.rstrip(b"\r\n"))
            what = f"watch line of {size} bytes is not JSON ({type(exc).__name__})"
            raise WatchDecodeError(f"{self._description}: {what}") from None
        if type(event) is not dict:
            raise WatchDecodeError(f"{self._description}: watch line is not a JSON object")
        return event


class HTTPListerWatcher:
    """Lists and watches one :class:`~informers.wire.resources.Resource` over HTTP.

    ``api_client`` is a :class:`kubernetes.client.ApiClient` (its
    configuration, credentials, TLS and connection pool are used, through an
    :class:`~informers.rest.transport.ApiClientTransport`; the caller keeps
    ownership and closes it), or any :class:`~informers.rest.transport.Transport`.
    ``namespace=None`` watches all namespaces. The selectors
    apply to every request; ``tweak_list_options`` may adjust the options of
    every request last (as client-go's ``TweakListOptionsFunc``).

    ``shard_selector`` (or a ``shard_selector`` set by the tweak) is sent as
    the ``shardSelector`` of server-side sharding (KEP-5866, alpha): a
    server with the ``ShardedListAndWatch`` gate sends only the objects of
    that shard. A server without it ignores the parameter and sends
    everything, so the lister-watcher also applies the selector itself to
    every watch event and to every list whose ``metadata.shardInfo`` does
    not echo it (a shard's view is the same either way; only the traffic
    differs), and logs one WARNING when a list comes back without
    ``shardInfo``. A malformed selector raises
    :class:`~informers.errors.SelectorParseError` (from the constructor, or
    from the request whose tweak set it). The client
    read timeout of a watch is its server timeout plus ``read_timeout_margin``
    seconds, so a stalled stream is abandoned.

    ``metadata_only=True`` asks for the metadata-only form of every object
    (:mod:`informers.wire.partial`), as client-go's metadata informers do:
    lists send ``Accept: application/json;as=PartialObjectMetadataList;
    g=meta.k8s.io;v=v1``, watches ``as=PartialObjectMetadata``; objects and
    bookmarks then arrive as ``PartialObjectMetadata`` (``meta.k8s.io/v1``,
    metadata only). An object that arrives whole anyway (a server or proxy
    that ignored the negotiation) is cut down to that form here, so the cache
    never holds a mix.

    Requests block the calling thread (connect timeout 30 s; read timeout
    ``list_read_timeout`` for a list without ``timeout_seconds``, 90 s by
    default, up to 300 s for a watch); :meth:`abortable` gives a view whose
    requests another thread
    can abort.

    Thread-safe: one instance may serve several concurrent requests.
    """

    def __init__(
        self,
        api_client: Any,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        shard_selector: str = "",
        tweak_list_options: Callable[[ListOptions], ListOptions] | None = None,
        read_timeout_margin: float = READ_TIMEOUT_MARGIN,
        list_read_timeout: float = LIST_READ_TIMEOUT,
        metadata_only: bool = False,
    ) -> None:
        if not list_read_timeout > 0:
            raise ValueError(
                f"list_read_timeout is a positive number of seconds, not {list_read_timeout}"
            )
        self._transport: Transport = as_transport(api_client)
        #: Whether objects are asked for (and kept) in their metadata-only form.
        self.metadata_only = metadata_only
        self._margin = read_timeout_margin
        self._list_timeout = list_read_timeout
        self.resource = resource
        self.namespace = namespace
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._shard_selector = shard_selector
        # What the shard selectors seen parse to, and whether the server was
        # seen ignoring one (shared with the abortable() copies):
        self._shards = _ShardFiltering(str(resource))
        if shard_selector:
            self._shards.parse(shard_selector)  # a malformed one fails here
        self._tweak = tweak_list_options
        self._path = resource.collection_path(namespace)
        self._aborter: RequestAborter | None = None
        # Decode on demand: see decoding_on_demand() (_raw: informers.wire.raw).
        self._raw_objects = False
        self._raw: Any = None

    @property
    def transport(self) -> Transport:
        """The transport every request goes through."""
        return self._transport

    def abortable(self, aborter: RequestAborter) -> HTTPListerWatcher:
        """A copy of this lister-watcher whose requests ``aborter`` aborts.

        Each request of the copy passes ``aborter`` to the transport: over an
        :class:`~informers.rest.transport.ApiClientTransport` it takes a
        connection from the client's pool (returned to it afterwards) and
        makes one attempt, with no urllib3 retries, so a caller that retries
        itself (the reflector) is not held by repeated connect timeouts.
        Through a proxy, the copy's requests are plain ones that cannot be
        aborted before their response arrives (an open watch stream still can
        be stopped).
        """
        view = copy.copy(self)
        view._aborter = aborter
        return view

    def decoding_on_demand(self) -> HTTPListerWatcher:
        """A copy of this lister-watcher whose lists and watch events carry
        :class:`~informers.wire.raw.RawObject` objects, never decoded beyond
        their metadata (:mod:`informers.wire.raw`; needs msgspec, the ``fast``
        extra): what an informer whose store keeps raw objects
        (:class:`~informers.cache.compact.raw.RawStore`) lists and watches
        through. A request with a shard selector is decoded in full (the
        client-side shard filter reads decoded objects)."""
        view = copy.copy(self)
        view._raw_objects = True
        view._raw = importlib.import_module("informers.wire.raw")  # optional: msgspec
        return view

    def __repr__(self) -> str:
        ns = f" in {self.namespace!r}" if self.namespace else ""
        meta = " (metadata only)" if self.metadata_only else ""
        return f"<HTTPListerWatcher {self.resource}{ns}{meta}>"

    def _options(self, options: ListOptions) -> ListOptions:
        if self._label_selector and not options.label_selector:
            options = replace(options, label_selector=self._label_selector)
        if self._field_selector and not options.field_selector:
            options = replace(options, field_selector=self._field_selector)
        if self._shard_selector and not options.shard_selector:
            options = replace(options, shard_selector=self._shard_selector)
        if self._tweak is not None:
            options = self._tweak(options)
        return options

    def list(self, options: ListOptions) -> dict[str, Any]:
        """GET the collection (one page when ``options.limit`` is set). Raises
        urllib3's ``ReadTimeoutError`` when the server sends nothing for the
        read timeout (``list_read_timeout``, or ``options.timeout_seconds``
        plus the margin)."""
        options = self._options(options)
        timeout = (
            options.timeout_seconds + self._margin
            if options.timeout_seconds
            else self._list_timeout
        )
        headers = {"Accept": PARTIAL_LIST_ACCEPT} if self.metadata_only else None
        data = self._transport.request(
            "GET",
            self._path,
            query=options.query(),
            read_timeout=timeout,
            aborter=self._aborter,
            headers=headers,
        ).data
        raw = self._raw_objects and not options.shard_selector
        try:
            parsed = self._raw.loads_list(data) if raw else _json.loads(data)
        except ValueError as exc:
            raise WatchDecodeError(f"{self.resource}: list response is not JSON ({exc})") from None
        if not isinstance(parsed, dict):
            raise WatchDecodeError(f"{self.resource}: list response is not a list object")
        if parsed.get("items") is None:  # an empty list may be encoded as null
            parsed["items"] = []
        elif not isinstance(parsed["items"], list):
            raise WatchDecodeError(f"{self.resource}: list response items are not a list")
        if self.metadata_only:
            items = parsed["items"]
            for i, item in enumerate(items):
                if isinstance(item, dict) and item.get("kind") != PARTIAL_KIND:
                    items[i] = as_partial_object_metadata(item)
        if options.shard_selector:
            self._shards.filter_list(options.shard_selector, parsed)
        return parsed

    def watch(self, options: ListOptions) -> WatchStream:
        """Open a watch; the read timeout is the server's ``timeoutSeconds``
        plus a margin (so a stalled stream is noticed)."""
        options = self._options(options)
        timeout = (options.timeout_seconds or 0) + self._margin
        if not options.timeout_seconds:
            timeout = DEFAULT_READ_TIMEOUT
        response = self._transport.stream(
            "GET",
            self._path,
            query=options.query(watch=True),
            read_timeout=timeout,
            aborter=self._aborter,
            headers={"Accept": PARTIAL_OBJECT_ACCEPT} if self.metadata_only else None,
        )
        stream: WatchStream
        if self._raw_objects and not options.shard_selector:
            stream = _HTTPWatchStream(response, str(self.resource), self._raw.loads_watch_event)
        else:
            stream = _HTTPWatchStream(response, str(self.resource))
        if self.metadata_only:
            stream = _MetadataOnlyStream(stream)
        if options.shard_selector:
            return _ShardFilteredStream(stream, self._shards.parse(options.shard_selector))
        return stream


class _ShardFiltering:
    """The client-side half of a shard selector, shared by a lister-watcher
    and its :meth:`HTTPListerWatcher.abortable` copies. Thread-safe."""

    def __init__(self, description: str) -> None:
        self._description = description
        self._lock = threading.Lock()
        # Guarded by _lock:
        self._parsed: dict[str, ShardSelector] = {}  # by selector text
        self._warned = False  # the server was seen ignoring a selector

    def parse(self, text: str) -> ShardSelector:
        """The :class:`~informers.toolkit.sharding.selector.ShardSelector` of
        ``text`` (:class:`~informers.errors.SelectorParseError` if malformed)."""
        with self._lock:
            selector = self._parsed.get(text)
        if selector is None:
            selector = ShardSelector.parse(text)
            with self._lock:
                if len(self._parsed) >= 16:  # a tweak that changes it each time
                    self._parsed.clear()
                self._parsed[text] = selector
        return selector

    def filter_list(self, text: str, parsed: dict[str, Any]) -> None:
        """Keep the items of list ``parsed`` that ``text`` selects, unless
        the server says it applied that selector (``metadata.shardInfo``);
        warn once when the server did not apply one."""
        selector = self.parse(text)
        meta = parsed.get("metadata")
        info = meta.get(SHARD_INFO_FIELD) if isinstance(meta, dict) else None
        if isinstance(info, dict) and info.get("selector") == text:
            return  # the server applied this very selector
        if not isinstance(info, dict):
            with self._lock:
                warn, self._warned = not self._warned, True
            if warn:
                log.warning(
                    "%s: the server ignored shardSelector (no metadata.shardInfo; is the "
                    "ShardedListAndWatch feature gate off?): filtering on the client",
                    self._description,
                )
        matches = selector.matches
        parsed["items"] = [
            item for item in parsed["items"] if isinstance(item, dict) and matches(item)
        ]


class _ShardFilteredStream:
    """A watch stream without the object events a shard selector leaves out
    (bookmarks and errors pass). Thread-safety as the stream it wraps."""

    def __init__(self, stream: WatchStream, selector: ShardSelector) -> None:
        self._stream = stream
        self._matches: Callable[[Any], bool] = selector.matches

    def stop(self) -> None:
        self._stream.stop()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        matches = self._matches
        for event in self._stream:
            obj = event.get("object")
            if event.get("type") in _OBJECT_EVENTS and isinstance(obj, dict) and not matches(obj):
                continue
            yield event


_OBJECT_EVENTS = frozenset(("ADDED", "MODIFIED", "DELETED"))
_METADATA_EVENTS = _OBJECT_EVENTS | {"BOOKMARK"}


class _MetadataOnlyStream:
    """A metadata-only watch: objects that arrived whole (a server that
    ignored ``as=PartialObjectMetadata``) are cut down to that form; errors
    pass as they are. Thread-safety as the stream it wraps."""

    def __init__(self, stream: WatchStream) -> None:
        self._stream = stream

    def stop(self) -> None:
        self._stream.stop()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for event in self._stream:
            obj = event.get("object")
            if (
                isinstance(obj, dict)
                and obj.get("kind") != PARTIAL_KIND
                and event.get("type") in _METADATA_EVENTS
            ):
                event["object"] = as_partial_object_metadata(obj)
            yield event
