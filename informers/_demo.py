"""The ``kube-informers demo`` command: the cache core at work.

A producer thread plays the reflector: it "lists" generated pods into the
delta queue, then streams adds, updates and deletes, and finally relists while
some deletions were "missed", so the queue turns them into tombstones. The
consumer plays the informer loop: it pops each entry, applies it to an
:class:`~informers.store.Indexer` with a namespace and a node index, and counts
what it saw. Everything is printed with ``rich``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from informers.errors import FIFOClosedError
from informers.fifo import Delta, DeltaType, RealFIFO
from informers.objects import NAMESPACE_INDEX, DeletedFinalStateUnknown, namespace_index
from informers.store import Indexer

__all__ = ["DemoReport", "run_store_demo"]

NODE_INDEX = "node"


def _node_index(obj: Any) -> list[str]:
    node = obj.get("spec", {}).get("nodeName")
    return [node] if node else []


def _pod(rng: random.Random, number: int, rv: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pod-{number}",
            "namespace": rng.choice(["default", "shop", "payments"]),
            "resourceVersion": str(rv),
            "labels": {"app": rng.choice(["web", "api", "worker"])},
        },
        "spec": {"nodeName": f"node-{rng.randrange(4)}"},
        "status": {"phase": "Running"},
    }


@dataclass
class DemoReport:
    """What the consumer saw: delta counts, final cache contents by index."""

    deltas: Counter[str] = field(default_factory=Counter)
    tombstones: int = 0
    cached: int = 0
    by_node: dict[str, int] = field(default_factory=dict)
    by_namespace: dict[str, int] = field(default_factory=dict)
    synced_after: int = 0


def run_store_demo(objects: int, seed: int) -> DemoReport:
    """Run the producer and consumer threads to completion and report.

    Blocks until both threads finished; leaves no thread behind.
    """
    rng = random.Random(seed)
    indexer = Indexer(indexers={NAMESPACE_INDEX: namespace_index, NODE_INDEX: _node_index})
    fifo = RealFIFO(known_objects=indexer)
    report = DemoReport()
    popped = 0

    def apply(deltas: list[Delta], is_in_initial_list: bool) -> None:
        report.deltas.update(d.type.value for d in deltas)
        if len(deltas) > 1:  # a relist: applied in one atomic replace
            report.tombstones += sum(isinstance(d.object, DeletedFinalStateUnknown) for d in deltas)
            indexer.replace([d.object for d in deltas if d.type is DeltaType.REPLACED], "")
            return
        (delta,) = deltas
        if delta.type is DeltaType.DELETED:
            indexer.delete(delta.object)
        elif delta.type is not DeltaType.BOOKMARK:
            indexer.update(delta.object)

    def produce() -> None:
        rv = 1
        live = {}
        for number in range(objects):
            rv += 1
            live[number] = _pod(rng, number, rv)
        fifo.replace(list(live.values()), str(rv))
        for _ in range(objects):
            rv += 1
            number = rng.randrange(objects * 2)
            if number in live and rng.random() < 0.3:
                fifo.delete(live.pop(number))
            else:
                live[number] = _pod(rng, number, rv)
                fifo.update(live[number])
        for number in rng.sample(sorted(live), k=len(live) // 10):  # deletions the watch "missed"
            del live[number]
        fifo.replace(list(live.values()), str(rv + 1))
        fifo.close()

    producer = threading.Thread(target=produce, name="kube-informers-demo-producer")
    producer.start()
    try:
        while True:
            fifo.pop(apply)
            popped += 1
            if fifo.has_synced() and not report.synced_after:
                report.synced_after = popped
    except FIFOClosedError:
        pass  # the producer closed the queue after its last relist
    finally:
        producer.join()
    report.cached = len(indexer)
    report.by_node = {
        v: len(indexer.index_keys(NODE_INDEX, v))
        for v in sorted(indexer.list_index_func_values(NODE_INDEX))
    }
    report.by_namespace = {
        v: len(indexer.index_keys(NAMESPACE_INDEX, v))
        for v in sorted(indexer.list_index_func_values(NAMESPACE_INDEX))
    }
    return report
