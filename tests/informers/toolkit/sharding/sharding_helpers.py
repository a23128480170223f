"""Helpers of the sharding tests: waiting on ring changes, and a shared
timeline of reconcile intervals."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

from informers.toolkit.sharding import HashRing, RingWatcher


class RingRecorder:
    """Records every ring a watcher publishes; wait for one that matches."""

    def __init__(self, watcher: RingWatcher) -> None:
        self._cond = threading.Condition()
        self.rings: list[HashRing] = [watcher.ring()]  # guarded by _cond
        self._watcher = watcher
        watcher.add_callback(self._changed)

    def _changed(self, _old: HashRing, new: HashRing) -> None:
        with self._cond:
            self.rings.append(new)
            self._cond.notify_all()

    def wait_for(self, pred: Callable[[HashRing], bool], timeout: float = 10.0) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: pred(self._watcher.ring()) or pred(self.rings[-1]), timeout
            )


class Timeline:
    """Reconcile intervals of every shard on one shared, monotonic counter:
    each reconcile takes a start stamp and an end stamp."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ticks = itertools.count()
        #: (key, shard, start, end); guarded by _lock
        self.intervals: list[tuple[str, str, int, int]] = []
        self._open: dict[tuple[str, str], int] = {}  # guarded by _lock

    def begin(self, key: str, shard: str) -> None:
        with self._lock:
            self._open[(key, shard)] = next(self._ticks)

    def end(self, key: str, shard: str) -> None:
        with self._lock:
            start = self._open.pop((key, shard))
            self.intervals.append((key, shard, start, next(self._ticks)))

    def overlaps(self) -> list[tuple[str, str, str]]:
        """(key, shard, other shard) for every pair of intervals of one key
        on two shards that overlap."""
        with self._lock:
            intervals = list(self.intervals)
        found = []
        by_key: dict[str, list[tuple[str, int, int]]] = {}
        for key, shard, start, end in intervals:
            by_key.setdefault(key, []).append((shard, start, end))
        for key, spans in by_key.items():
            spans.sort(key=lambda s: s[1])
            for i, (shard, _start, end) in enumerate(spans):
                for other, ostart, _oend in spans[i + 1 :]:
                    if ostart > end:
                        break
                    if other != shard:
                        found.append((key, shard, other))
        return found

    def shards_of(self, key: str) -> set[str]:
        with self._lock:
            return {s for k, s, _, _ in self.intervals if k == key}


class Reconciled:
    """Every (key, shard) reconciled, with a condition to wait on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.by_key: dict[str, list[str]] = {}  # guarded by _cond

    def record(self, key: str, shard: str) -> None:
        with self._cond:
            self.by_key.setdefault(key, []).append(shard)
            self._cond.notify_all()

    def snapshot(self) -> dict[str, list[str]]:
        with self._cond:
            return {k: list(v) for k, v in self.by_key.items()}

    def wait_for(self, pred: Callable[[dict[str, list[str]]], bool], timeout: float = 10.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: pred(self.by_key), timeout)
