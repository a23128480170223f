"""Objects and their history: the served resources, every kind's current
objects and event log, the global resourceVersion, the history window and
compaction, the state at an older RV, list pages and continue tokens.

:class:`History` is not thread-safe and has no lock: :class:`Storage`
serialises every call under its one lock, so a list page, a write and the
events it appends are each atomic.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import collections
import dataclasses
import json
from typing import TypedDict

from informers.testing.apiserver import _status
from informers.testing.apiserver._filtering import Predicate
from informers.testing.apiserver._rules import NO_STATUS_SUBRESOURCE
from informers.testing.apiserver._stored import Event, Stored
from informers.wire.resources import Resource

__all__ = [
    "History",
    "KindLog",
    "ListOptions",
    "ListResult",
    "key_range",
    "decode_continue",
    "encode_continue",
]


class KindLog:
    """Objects and event log of one resource (all versions of it share one).

    ``objects`` maps ``namespace/name`` to the current state; ``events``
    holds the changes after ``window_floor``, oldest first. ``sorted_keys``
    caches ``sorted(objects)`` (None when stale) and ``snapshot`` the last
    state reconstructed at an older RV."""

    def __init__(self, resource: Resource, builtin: bool) -> None:
        self.resource = resource
        self.builtin = builtin
        self.objects: dict[str, Stored] = {}
        self.events: collections.deque[Event] = collections.deque()
        #: Events with rv <= floor were dropped by the window.
        self.window_floor = 0
        self.sorted_keys: list[str] | None = None
        #: (rv, state, sorted keys) of the last state reconstructed at an old RV.
        self.snapshot: tuple[int, dict[str, Stored], list[str]] | None = None
        self.status_subresource = builtin and resource.kind not in NO_STATUS_SUBRESOURCE

    def keys(self) -> list[str]:
        """The keys of the current objects, sorted."""
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.objects)
        return self.sorted_keys

    def put(self, stored: Stored) -> None:
        """Make ``stored`` the current state of its key."""
        if stored.key not in self.objects:
            self.sorted_keys = None
        self.objects[stored.key] = stored

    def remove(self, key: str) -> None:
        """Forget the object at ``key`` (it must be there)."""
        del self.objects[key]
        self.sorted_keys = None


def encode_continue(rv: int, start: str) -> str:
    """The continue token of a list at ``rv`` that resumes after key ``start``."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start key)`` of a continue token; 400 when it is not one of ours."""
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown version")
        rv, start = data["rv"], data["start"]
        if not isinstance(rv, int) or not isinstance(start, str):
            raise ValueError("bad fields")
    except (ValueError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
        raise _status.bad_request(f"continue key is not valid: {exc}") from None
    return rv, start


class ListOptions(TypedDict):
    """The keyword options of a list page (see :meth:`History.list_page`)."""

    exact_rv: int | None
    limit: int
    start_after: str | None
    predicate: Predicate | None


@dataclasses.dataclass(slots=True)
class ListResult:
    """One list page: its items, the RV it was read at, and when more follow,
    the continue token (and, without a filter, how many items remain)."""

    items: list[Stored]
    rv: int
    continue_token: str | None = None
    remaining: int | None = None


def key_range(keys: list[str], namespace: str | None, after: str | None) -> list[str]:
    """The sorted ``keys`` in ``namespace`` (None or "": all) that sort after
    ``after`` (None: from the first)."""
    lo, hi = 0, len(keys)
    if namespace:
        lo = bisect.bisect_left(keys, namespace + "/")
        hi = bisect.bisect_left(keys, namespace + "0")  # "0" sorts right after "/"
    if after is not None:
        lo = max(lo, bisect.bisect_right(keys, after))
    return keys[lo:hi]


class History:
    """Every kind's objects and events, and the global resourceVersion.

    Invariants: ``rv`` is the RV of the last change of any kind; each kind's
    events are in RV order and hold every change after
    ``max(window_floor, compacted)``. Not thread-safe (see the module
    docstring)."""

    def __init__(self, window: int) -> None:
        #: Events kept per kind; older ones are dropped as by compaction.
        self.window = window
        #: The global resourceVersion: the RV of the last change.
        self.rv = 1
        #: Events with rv <= compacted were dropped by compaction.
        self.compacted = 0
        self._kinds: dict[tuple[str, str], KindLog] = {}
        #: (group, version, plural) -> resource
        self._served: dict[tuple[str, str, str], Resource] = {}

    # ----------------------------------------------------------- resources

    def register(self, resource: Resource, builtin: bool = False) -> KindLog:
        """Serve ``resource``; every version of a kind shares its log."""
        key = (resource.group, resource.plural)
        kind = self._kinds.get(key)
        if kind is None:
            kind = KindLog(resource, builtin)
            self._kinds[key] = kind
        self._served[(resource.group, resource.version, resource.plural)] = resource
        return kind

    def unregister(self, group: str, plural: str) -> KindLog | None:
        """Stop serving every version of ``plural.group``; returns its log."""
        for gvp in [k for k in self._served if k[0] == group and k[2] == plural]:
            del self._served[gvp]
        return self._kinds.pop((group, plural), None)

    def resources(self) -> list[Resource]:
        """Every served resource (one per served version)."""
        return list(self._served.values())

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._served.get((group, version, plural))

    def find(self, resource: Resource) -> KindLog | None:
        return self._kinds.get((resource.group, resource.plural))

    def kind(self, resource: Resource) -> KindLog:
        """The log of ``resource``; 404 (no such route) when it is not served."""
        kind = self._kinds.get((resource.group, resource.plural))
        if kind is None:
            raise _status.no_such_route()
        return kind

    def kinds(self) -> list[KindLog]:
        return list(self._kinds.values())

    # ------------------------------------------------------------- history

    def floor(self, kind: KindLog) -> int:
        """The oldest RV ``kind``'s history still answers from."""
        return max(kind.window_floor, self.compacted)

    def append(self, kind: KindLog, event: Event) -> None:
        """Log ``event`` (the change is already applied to ``kind.objects``),
        dropping what falls out of the window."""
        kind.events.append(event)
        while len(kind.events) > self.window:
            kind.window_floor = kind.events.popleft().rv

    def compact(self, rv: int | None) -> int:
        """Drop history up to ``rv`` (default: the current RV); returns it."""
        target = self.rv if rv is None else min(rv, self.rv)
        self.compacted = max(self.compacted, target)
        for kind in self._kinds.values():
            while kind.events and kind.events[0].rv <= self.compacted:
                kind.events.popleft()
        return self.compacted

    def events_after(self, kind: KindLog, rv: int) -> list[Event]:
        """``kind``'s logged events with an RV above ``rv``, oldest first."""
        replay = []
        for event in reversed(kind.events):
            if event.rv <= rv:
                break
            replay.append(event)
        replay.reverse()
        return replay

    def _state_at(self, kind: KindLog, rv: int) -> tuple[dict[str, Stored], list[str]]:
        """Objects and sorted keys at ``rv`` (caller checked rv >= floor)."""
        if not kind.events or kind.events[-1].rv <= rv:
            return kind.objects, kind.keys()
        if kind.snapshot is not None and kind.snapshot[0] == rv:
            return kind.snapshot[1], kind.snapshot[2]
        state = dict(kind.objects)
        for event in reversed(kind.events):
            if event.rv <= rv:
                break
            if event.prev is None:
                state.pop(event.obj.key, None)
            else:
                state[event.obj.key] = event.prev
        keys = sorted(state)
        kind.snapshot = (rv, state, keys)
        return state, keys

    # --------------------------------------------------------------- lists

    def list_page(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        exact_rv: int | None,
        limit: int,
        start_after: str | None,
        predicate: Predicate | None,
    ) -> ListResult:
        """One list page: the state now (``exact_rv`` None) or at
        ``exact_rv`` (410 Expired when compacted), in ``namespace`` (None:
        all), after key ``start_after``, filtered by ``predicate``, at most
        ``limit`` items (0: all)."""
        kind = self.kind(resource)
        if exact_rv is None:
            rv = self.rv
            objects, keys = kind.objects, kind.keys()
        else:
            rv = exact_rv
            if rv < self.floor(kind):
                raise _status.expired("The resourceVersion for the provided list is too old.")
            objects, keys = self._state_at(kind, rv)
        candidates = key_range(keys, namespace, start_after)
        items: list[Stored] = []
        last_key = None
        scanned = 0
        for key in candidates:
            scanned += 1
            stored = objects[key]
            if predicate is not None and not predicate(stored.obj):
                continue
            items.append(stored)
            last_key = key
            if limit and len(items) >= limit:
                break
        result = ListResult(items, rv)
        if limit and len(items) >= limit and scanned < len(candidates):
            assert last_key is not None
            result.continue_token = encode_continue(rv, last_key)
            if predicate is None:
                result.remaining = len(candidates) - scanned
        return result

    def check_continue(self, resource: Resource, rv: int, start: str) -> None:
        """410 with an inconsistent-continue token when ``rv`` was compacted."""
        kind = self.kind(resource)
        if rv >= 0 and rv < self.floor(kind):
            raise _status.expired(
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter, or use "
                "the continue token in this response to retrieve the remainder of the "
                "results. Continuing with the provided token results in an inconsistent "
                "list - objects that were created, modified, or deleted between the time "
                "the first chunk was returned and now may show up in the list.",
                continue_token=encode_continue(-1, start),
            )
