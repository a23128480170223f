"""The ``kube-informers demo`` command: a real informer against an embedded
API server emulator, through churn and the failures a real cluster throws.

It starts :class:`~informers.testing.ApiServer` on a free loopback port,
creates pods, and runs a :class:`~informers.SharedInformerFactory` over HTTP
with a node index and a counting handler. Then it writes to the server in
phases, each with a fault:

1. **churn**: creates, updates and deletes while the watch is healthy;
2. **missed deletes**: the watch stalls, pods are deleted, history is
   compacted and the stream is cut, so the reflector's re-watch gets
   410 Gone and it relists; the deletions it missed reach the handler as
   ``DeletedFinalStateUnknown`` tombstones;
3. **throttling**: the stream is cut and the next requests get 429 with
   ``Retry-After``; the reflector waits as told and re-watches from where it
   was, without a relist.

After each phase it waits (on the reflector's state, not by sleeping) until
the informer caught up, and checks that the cache equals the server.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from informers.factory import SharedInformerFactory
from informers.objects import DeletedFinalStateUnknown, meta_namespace_key
from informers.resources import NAMESPACES, PODS
from informers.testing.apiserver import ApiServer

__all__ = ["DemoReport", "PhaseReport", "run_demo"]

NODE_INDEX = "node"
_NAMESPACES = ("default", "shop", "payments")


def _node_index(obj: Any) -> list[str]:
    node = obj.get("spec", {}).get("nodeName")
    return [node] if node else []


@dataclass
class PhaseReport:
    """One phase: what was written, how long the informer took to catch up,
    and whether its cache then equalled the server's state."""

    name: str
    writes: int
    seconds: float
    cache_matches_server: bool
    cached: int


@dataclass
class DemoReport:
    """Everything the demo saw."""

    initial_pods: int = 0
    sync_seconds: float = 0.0
    phases: list[PhaseReport] = field(default_factory=list)
    events: Counter[str] = field(default_factory=Counter)
    watch_errors: Counter[str] = field(default_factory=Counter)
    by_node: dict[str, int] = field(default_factory=dict)


class _CountingHandler:
    """The demo's event handler (any object with the three ``on_*`` methods
    is one): counts what it is told, on its own listener thread. The lock
    only guards the counter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._count("added (initial list)" if is_in_initial_list else "added")

    def on_update(self, old: Any, new: Any) -> None:
        self._count("updated")

    def on_delete(self, obj: Any) -> None:
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        self._count("deleted (tombstone)" if tombstone else "deleted")


def _pod(rng: random.Random, number: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pod-{number}",
            "namespace": rng.choice(_NAMESPACES),
            "labels": {"app": rng.choice(["web", "api", "worker"])},
        },
        "spec": {
            "nodeName": f"node-{rng.randrange(4)}",
            "containers": [{"name": "main", "image": "example/app:1"}],
        },
    }


def run_demo(
    pods: int = 200,
    writes: int = 300,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    fault: Callable[[str | None], None] | None = None,
) -> DemoReport:
    """Run the whole demo and return what it saw.

    ``progress(message)`` is told what happens; ``fault(description)`` is
    told of each fault the demo injects on purpose, when it injects it, and
    ``fault(None)`` once the informer recovered from it (so that a caller can
    mark the warnings in between as expected).

    Blocks until every phase converged (raising :class:`TimeoutError` if the
    informer does not catch up within 60 s of a phase) and every thread it
    started has been stopped and joined.
    """
    say = progress or (lambda _message: None)
    injected = fault or (lambda _description: None)
    rng = random.Random(seed)
    report = DemoReport(initial_pods=pods)
    counter = _CountingHandler()
    with ApiServer() as server:
        for namespace in _NAMESPACES[1:]:
            server.create(NAMESPACES, {"metadata": {"name": namespace}})
        live: dict[str, dict[str, Any]] = {}
        for number in range(pods):
            pod = _pod(rng, number)
            live[meta_namespace_key(pod)] = server.create(PODS, pod)
        say(f"emulator at {server.url} holds {pods} pods")

        client = server.api_client()
        factory = SharedInformerFactory(client)
        try:
            informer = factory.pods()
            informer.add_indexers({NODE_INDEX: _node_index})
            informer.set_watch_error_handler(
                lambda _reflector, error: report.watch_errors.update([type(error).__name__])
            )
            registration = informer.add_event_handler(counter)
            started = time.monotonic()
            factory.start()
            not_synced = factory.wait_for_cache_sync(timeout=60)
            if not_synced or not registration.wait_synced(60):
                raise TimeoutError(f"informer did not sync: {not_synced}")
            report.sync_seconds = time.monotonic() - started
            say(f"synced {len(informer.get_indexer())} pods in {report.sync_seconds:.2f} s")

            def catch_up(name: str) -> None:
                """Wait until the informer has applied every write made so far
                and the handler has been told."""
                target = server.resource_version
                caught_up = informer.reflector is not None and informer.reflector.wait_for(
                    lambda state: int(state.mem.last_sync_rv or 0) >= target, 60
                )
                if not caught_up or not informer.wait_idle(60) or not registration.wait_idle(60):
                    raise TimeoutError(f"informer did not catch up in phase {name!r}")

            def converge(name: str, done_writes: int, began: float) -> None:
                catch_up(name)
                server_state = {
                    meta_namespace_key(obj): obj["metadata"]["resourceVersion"]
                    for obj in server.list_objects(PODS)
                }
                cache_state = {
                    meta_namespace_key(obj): obj["metadata"]["resourceVersion"]
                    for obj in informer.get_indexer().list()
                }
                phase = PhaseReport(
                    name,
                    done_writes,
                    time.monotonic() - began,
                    cache_state == server_state,
                    len(cache_state),
                )
                report.phases.append(phase)
                injected(None)
                verdict = "cache == server" if phase.cache_matches_server else "CACHE DIFFERS"
                say(f"{name}: {done_writes} writes, caught up in {phase.seconds:.2f} s, {verdict}")

            next_number = pods

            def churn(count: int) -> int:
                nonlocal next_number
                for _ in range(count):
                    roll = rng.random()
                    if roll < 0.3 or not live:
                        pod = _pod(rng, next_number)
                        next_number += 1
                        live[meta_namespace_key(pod)] = server.create(PODS, pod)
                    elif roll < 0.8:
                        key = rng.choice(sorted(live))
                        obj = live[key]
                        changed = {**obj, "metadata": {**obj["metadata"]}}
                        labels = dict(changed["metadata"].get("labels", {}))
                        labels["revision"] = str(rng.randrange(1000))
                        changed["metadata"]["labels"] = labels
                        live[key] = server.update(PODS, changed)
                    else:
                        key = rng.choice(sorted(live))
                        namespace, _, name = key.partition("/")
                        server.delete(PODS, name, namespace)
                        del live[key]
                return count

            began = time.monotonic()
            converge("churn", churn(writes), began)

            began = time.monotonic()
            injected(
                "watches stalled, a tenth of the pods deleted unseen, history compacted, "
                "watches dropped: expect a 410 Expired and a relist with tombstones"
            )
            server.stall_watches(60)
            victims = rng.sample(sorted(live), k=max(1, len(live) // 10))
            for key in victims:
                namespace, _, name = key.partition("/")
                server.delete(PODS, name, namespace)
                del live[key]
            server.compact()
            server.drop_watches()
            server.stall_watches(0)
            converge("missed deletes (410 relist)", len(victims), began)

            began = time.monotonic()
            written = churn(writes // 20)
            # Once these writes arrived, the watch that carried them is open:
            # the fault below is sure to cut a live stream.
            catch_up("throttled")
            injected("the next 2 pod requests answer 429 Retry-After: 1, watches dropped")
            server.fail_next(2, 429, retry_after=1, path_prefix="/api/v1/pods")
            server.drop_watches()
            written += churn(writes // 20)  # made while the reflector is throttled
            converge("throttled (429 Retry-After)", written, began)

            report.by_node = {
                node: len(informer.get_indexer().index_keys(NODE_INDEX, node))
                for node in sorted(informer.get_indexer().list_index_func_values(NODE_INDEX))
            }
        finally:
            factory.shutdown()
            client.close()
    report.events = counter.counts
    return report
