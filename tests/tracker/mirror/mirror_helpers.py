"""What the mirror controller's end-to-end tests share: counting reconciles,
a started controller over its own factory, and waiting until the table
equals the API (no polling: every wait is on a condition)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from informers.cache.factory import SharedInformerFactory
from informers.testing import ApiServer
from informers.toolkit.runtime import Request, Result
from informers.toolkit.runtime.controller import BatchReconcileFunc
from informers.toolkit.workqueue import ItemExponentialFailureRateLimiter
from informers.wire.partial import as_partial_object_metadata
from tracker.mirror import MirrorStore
from tracker.mirror.controller import SyncController, mirror_controller
from tracker.syncapi import ObjectKey

ReconcileFunc = Callable[[Request], "Result | None"]


#: What the mirror's reconcilers answer during a database outage.
OUTAGE_RESULT = Result(requeue=True)
#: How :class:`Reconciles` names such a request in ``failed_with``.
OUTAGE = "outage (requeued)"


class Reconciles:
    """Wraps a reconcile function: counts calls and failures, and lets a test
    wait for the next one to finish (no polling). A request requeued during a
    database outage (``Result(requeue=True)``) counts as a failure named
    :data:`OUTAGE`."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.calls = 0
        self.relists = 0
        self.relist_changes: list[int] = []
        self.batches = 0
        self.batch_sizes: list[int] = []
        self.failures = 0
        self.failed_with: list[str] = []

    def wrap(self, reconcile: ReconcileFunc) -> ReconcileFunc:
        def counted(request: Request) -> Result | None:
            try:
                result = reconcile(request)
                if result == OUTAGE_RESULT:
                    with self.cond:
                        self.failures += 1
                        self.failed_with.append(OUTAGE)
                return result
            except Exception as error:
                with self.cond:
                    self.failures += 1
                    self.failed_with.append(type(error).__name__)
                raise
            finally:
                with self.cond:
                    self.calls += 1
                    self.cond.notify_all()

        return counted

    def wrap_batch(self, reconcile_batch: BatchReconcileFunc) -> BatchReconcileFunc:
        """Counts each request of a batch as a call (and each failed one)."""

        def counted(requests: Sequence[Request]) -> Sequence[Result | BaseException | None]:
            outcomes: Sequence[Result | BaseException | None] = []
            try:
                outcomes = reconcile_batch(requests)
                return outcomes
            finally:
                failed = [type(o).__name__ for o in outcomes if isinstance(o, BaseException)]
                failed += [OUTAGE for o in outcomes if o == OUTAGE_RESULT]
                with self.cond:
                    self.batches += 1
                    self.batch_sizes.append(len(requests))
                    self.failures += len(failed)
                    self.failed_with.extend(failed)
                    self.calls += len(requests)
                    self.cond.notify_all()

        return counted

    def relisted(self, changes: int) -> None:
        """The mirror wrote a relist (the ``on_relist`` callback)."""
        with self.cond:
            self.relists += 1
            self.relist_changes.append(changes)
            self.cond.notify_all()

    def seen(self) -> int:
        with self.cond:
            return self.calls

    def progress(self) -> int:
        """Reconciles plus relists written: what may change the table."""
        with self.cond:
            return self.calls + self.relists

    def wait_after(self, seen: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.calls > seen, timeout)

    def wait_progress(self, seen: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.calls + self.relists > seen, timeout)

    def wait_failures(self, count: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.failures >= count, timeout)


def api_objects(server: ApiServer) -> dict[ObjectKey, dict[str, Any]]:
    return {ObjectKey.of(o): o for o in server.list_objects("pods")}


def api_partial_objects(server: ApiServer) -> dict[ObjectKey, dict[str, Any]]:
    """The pods as a metadata-only mirror holds them: ``PartialObjectMetadata``."""
    return {k: as_partial_object_metadata(o) for k, o in api_objects(server).items()}


def converge(
    sc: SyncController,
    reconciles: Reconciles,
    store: MirrorStore,
    server: ApiServer,
    timeout: float = 60.0,
    *,
    api_objects: Callable[[ApiServer], dict[ObjectKey, dict[str, Any]]] = api_objects,
) -> None:
    """Wait until the table equals the API (as ``api_objects`` reads it): the
    controller idle with no requeue pending and the rows equal, else for the
    next reconcile."""
    deadline = time.monotonic() + timeout
    controller = sc.controller
    assert controller is not None
    while True:
        seen = reconciles.progress()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            rows, api = store.objects(), api_objects(server)
            differing = sorted(str(k) for k in set(rows) | set(api) if rows.get(k) != api.get(k))
            raise AssertionError(
                f"the mirror did not converge: {differing[:10]}, "
                f"{controller.queue.num_delayed()} delayed, {len(controller.queue)} queued"
            )
        assert sc.wait_idle(remaining), "the controller did not become idle"
        if controller.queue.num_delayed() == 0 and store.objects() == api_objects(server):
            return
        reconciles.wait_progress(seen, max(0.0, deadline - time.monotonic()))


class Running:
    """A started mirror controller over its own factory; stopped on exit.
    ``max_delay`` caps the per-key retry backoff (seconds)."""

    def __init__(
        self, store: MirrorStore, api_client: Any, *, max_delay: float = 2.0, **options: Any
    ) -> None:
        self.store = store
        self.reconciles = Reconciles()
        self.factory = SharedInformerFactory(api_client)
        options.setdefault("diff_every", 3600.0)
        options.setdefault("rate_limiter", ItemExponentialFailureRateLimiter(0.005, max_delay))
        self.sc: SyncController = mirror_controller(
            store,
            api_client,
            self.factory,
            reconcile_wrapper=self.reconciles.wrap,
            batch_wrapper=self.reconciles.wrap_batch,
            on_relist=self.reconciles.relisted,
            **options,
        )

    def __enter__(self) -> Running:
        try:
            self.sc.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.sc.stop()
        self.factory.shutdown()

    def converge(self, server: ApiServer, timeout: float = 60.0) -> None:
        read = (
            api_partial_objects if getattr(self.sc.syncer, "metadata_only", False) else api_objects
        )
        converge(self.sc, self.reconciles, self.store, server, timeout, api_objects=read)
