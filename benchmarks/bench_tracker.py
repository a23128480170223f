"""Tracker benchmarks, printed side by side in one run.

Run: ``python benchmarks/bench_tracker.py [N]`` from the repository root.

* Channel vs queue.Queue: one producer thread, one consumer, N items.
* EventBus.publish to three subscriptions.
* ResourceTracker.known_resources() over N pods as V1Pod: the first read
  (every object converted) vs a second read (every conversion memoised), and
  the raw dict view (no conversion) as the floor.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes.client import V1Pod

from informers.cache.informer import SharedIndexInformer
from informers.testing.fake import FakeListerWatcher
from tracker import Channel, EventBus, ResourceSyncCompleteEvent, ResourceTracker


def _rate(count: int, run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def _pipe(n: int, put: Callable[[int], object], get: Callable[[], object]) -> None:
    producer = threading.Thread(target=lambda: [put(i) for i in range(n)], name="bench-producer")
    producer.start()
    for _ in range(n):
        get()
    producer.join()


def bench_channels(n: int) -> None:
    for capacity in (None, 100):
        ch: Channel[int] = Channel(capacity)
        q: queue.Queue[int] = queue.Queue(capacity or 0)
        ours = _rate(n, lambda ch=ch: _pipe(n, ch.put, ch.get))
        base = _rate(n, lambda q=q: _pipe(n, q.put, q.get))
        print(
            f"Channel(capacity={capacity}): {ours:,.0f} items/s; "
            f"queue.Queue: {base:,.0f} items/s; ratio {ours / base:.2f}"
        )


def bench_bus(n: int) -> None:
    bus = EventBus()
    bus.start()
    subs = [bus.subscribe(f"s{i}", n, ResourceSyncCompleteEvent.event_type) for i in range(3)]
    event = ResourceSyncCompleteEvent("pods", 1)
    rate = _rate(n, lambda: [bus.publish(event) for _ in range(n)])
    print(f"EventBus.publish to 3 subscriptions: {rate:,.0f} events/s")
    for sub in subs:
        sub.close()


def _pod(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"pod-{i}",
            "namespace": "default",
            "uid": f"uid-{i}",
            "resourceVersion": str(i + 1),
            "labels": {"app": "web" if i % 2 else "db"},
        },
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
    }


def bench_resource_tracker(n: int) -> None:
    lw = FakeListerWatcher()
    lw.set_objects([_pod(i) for i in range(n)], str(n + 1))
    informer = SharedIndexInformer(lw, name="pods")
    informer.start()
    try:
        informer.wait_synced(60)
        typed = ResourceTracker(informer, V1Pod, cache_size=n)
        raw = ResourceTracker(informer)
        first = _rate(n, typed.known_resources)
        second = _rate(n, typed.known_resources)
        floor = _rate(n, raw.known_resources)
        print(
            f"known_resources() over {n} pods as V1Pod: first {first:,.0f} objects/s, "
            f"memoised {second:,.0f} objects/s ({second / first:.0f}x); "
            f"dict view {floor:,.0f} objects/s"
        )
        typed.close()
        raw.close()
    finally:
        informer.stop()


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    bench_channels(n)
    bench_bus(n)
    bench_resource_tracker(min(n, 10_000))


if __name__ == "__main__":
    main()
