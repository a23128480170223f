"""The watch verb: a chunked stream of watch events from a resourceVersion,
with initial events (``sendInitialEvents``, the watch-list end bookmark),
periodic and deadline bookmarks, selectors, Table output, and the ways a
stream ends (timeout, overflow, dropped, restart, client gone).

The stream runs in the connection's thread; it waits for events in
:meth:`Storage.next_batch` (never under a lock of its own) and checks every
``settings.heartbeat`` seconds of silence whether its client went away.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from informers.testing.apiserver import _partial, _status
from informers.testing.apiserver._crd.views import table_columns
from informers.testing.apiserver._exchange import Reply, Request, chunk, parse_rv
from informers.testing.apiserver._faults import FaultState
from informers.testing.apiserver._filtering import build_predicate, shard_predicate, with_shard
from informers.testing.apiserver._settings import Settings
from informers.testing.apiserver._status import StatusError
from informers.testing.apiserver._storage import Storage
from informers.testing.apiserver._stored import Stored
from informers.testing.apiserver._verbs_read import wait_for_rv
from informers.testing.apiserver._verbs_table import TableEvents, include_object, wants_table
from informers.testing.apiserver._watch import Watcher
from informers.wire.resources import Resource

__all__ = ["WatchVerb"]

log = logging.getLogger("informers.testing.apiserver")


def _bookmark_line(resource: Resource, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    obj = {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": meta}
    return json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":")).encode() + b"\n"


def _event_line(event_type: str, stored: Stored) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + stored.full_json + b"}\n"


def _validate_watch(request: Request, initial: bool | None, watch_list_mode: str) -> None:
    match = request.param("resourceVersionMatch") or ""
    if initial is not None:
        if match != "NotOlderThan":
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                "NotOlderThan",
            )
        if watch_list_mode == "off":
            raise _status.invalid_list_options(
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList "
                "feature gate is enabled",
            )
    if match:
        if initial is None:
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden for watch unless "
                "sendInitialEvents is provided",
            )
        if request.param("continue"):
            raise _status.invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            )


class WatchVerb:
    """Serves watches. Stateless apart from its collaborators; called from
    every connection thread at once, each stream blocking its own thread
    until it ends. ``faults`` supplies one-shot replays (a buggy server)."""

    def __init__(self, storage: Storage, settings: Settings, faults: FaultState) -> None:
        self._storage = storage
        self._settings = settings
        self._faults = faults

    def watch(
        self, reply: Reply, request: Request, resource: Resource, namespace: str | None
    ) -> None:
        storage, settings = self._storage, self._settings
        initial_param = request.flag("sendInitialEvents")
        _validate_watch(request, initial_param, settings.watch_list_mode)
        partial = _partial.wanted(request)
        if partial is not None:
            _partial.check_watch(partial, resource)
        raw_rv = request.param("resourceVersion")
        rv = parse_rv(raw_rv)
        bookmarks = bool(request.flag("allowWatchBookmarks"))
        timeout = request.integer("timeoutSeconds")
        predicate = build_predicate(
            resource, request.param("labelSelector"), request.param("fieldSelector")
        )
        predicate = with_shard(
            predicate,
            shard_predicate(request.param("shardSelector"), settings.sharded_list_and_watch),
        )
        table = wants_table(request)
        include = include_object(request) if table else ""
        started = time.monotonic()
        deadline = started + timeout if timeout and timeout > 0 else None
        end_bookmark = False
        from_rv: int | None = None
        initial = False
        if initial_param:
            if rv is not None and rv > 0:
                wait_for_rv(storage, settings, rv)
            initial = True
            end_bookmark = bookmarks and settings.watch_list_mode != "no-end-bookmark"
        elif initial_param is False:
            from_rv = rv if rv else None
        elif not rv:
            initial = True
        else:
            from_rv = rv
        replay = self._faults.take_replay()
        if replay is not None:
            initial, from_rv, end_bookmark = False, replay, False
        too_old: StatusError | None = None
        watcher: Watcher | None = None
        first: list[tuple[str, Stored]] = []
        try:
            watcher, first, start_rv = storage.open_watch(
                resource,
                namespace,
                predicate,
                from_rv=from_rv,
                initial=initial,
                capacity=max(1, settings.watch_buffer_size),
            )
        except StatusError as error:
            if error.code != 410:
                raise
            too_old = error
        write = reply.start_stream()
        log.debug("watch %s ns=%s from=%s initial=%s", resource, namespace, from_rv, initial)
        if too_old is not None or watcher is None:  # a Status is never a Table
            status = dict(too_old.body) if too_old is not None else {}
            status.pop("details", None)
            line = json.dumps({"type": "ERROR", "object": status}, separators=(",", ":"))
            write(chunk(line.encode() + b"\n") + b"0\r\n\r\n")
            return
        event_line: Callable[[str, Stored], bytes] = _event_line
        bookmark_line: Callable[..., bytes] = _bookmark_line
        if partial is not None:
            event_line, bookmark_line = (
                _partial.event_line(partial),
                _partial.bookmark_line(partial),
            )
        elif table:
            encoder = TableEvents(resource, include, table_columns(storage, resource))
            event_line, bookmark_line = encoder.event, encoder.bookmark
        try:
            self._stream(
                reply,
                write,
                watcher=watcher,
                first=first,
                start_rv=start_rv,
                bookmarks=bookmarks,
                end_bookmark=end_bookmark,
                deadline=deadline,
                event_line=event_line,
                bookmark_line=bookmark_line,
            )
        finally:
            storage.close_watch(watcher)

    def _stream(
        self,
        reply: Reply,
        write: Callable[[bytes], object],
        *,
        watcher: Watcher,
        first: list[tuple[str, Stored]],
        start_rv: int,
        bookmarks: bool,
        end_bookmark: bool,
        deadline: float | None,
        event_line: Callable[[str, Stored], bytes],
        bookmark_line: Callable[..., bytes],
    ) -> None:
        storage, settings = self._storage, self._settings
        resource = watcher.resource
        for start in range(0, len(first), 500):
            batch = first[start : start + 500]
            write(b"".join([chunk(event_line(t, stored)) for t, stored in batch]))
        if end_bookmark:
            write(chunk(bookmark_line(resource, start_rv, initial_end=True)))
        next_bookmark = time.monotonic() + settings.bookmark_interval
        deadline_bookmark_sent = False
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            wait = settings.heartbeat
            if deadline is not None:
                wait = min(wait, deadline - now)
            if bookmarks:
                wait = min(wait, max(0.0, next_bookmark - now))
            events, rv = storage.next_batch(watcher, wait)
            end = watcher.end
            if end is not None and not events:
                _end_stream(reply, write, end, watcher)
                return
            if events:  # one chunk per event, a batch per write
                write(b"".join([chunk(event_line(t, stored)) for t, stored in events]))
            now = time.monotonic()
            if bookmarks and rv >= 0:
                due = now >= next_bookmark
                near_deadline = (
                    deadline is not None
                    and not deadline_bookmark_sent
                    and now >= deadline - settings.deadline_bookmark
                )
                if due or near_deadline:
                    write(chunk(bookmark_line(resource, rv)))
                    next_bookmark = now + settings.bookmark_interval
                    deadline_bookmark_sent = deadline_bookmark_sent or near_deadline
            if not events and reply.client_gone():
                reply.close_connection = True
                return
        write(b"0\r\n\r\n")


def _end_stream(
    reply: Reply, write: Callable[[bytes], object], reason: str, watcher: Watcher
) -> None:
    """End a stream whose watcher ended for ``reason`` (see :class:`Watcher`)."""
    if reason in ("drop", "drop-mid-line"):
        if reason == "drop-mid-line":
            partial = _bookmark_line(watcher.resource, 0)
            with contextlib.suppress(OSError):  # the client is gone already
                write(chunk(partial[: len(partial) // 2]))
        reply.drop()
        return
    if reason == "overflow":
        log.info("watch of %s disconnected: slow consumer overflowed its buffer", watcher.resource)
    if reason in ("restart", "stopped"):
        reply.close_connection = True
    write(b"0\r\n\r\n")
