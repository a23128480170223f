"""The Job controller: pods until ``spec.completions`` of them succeeded.

Up to ``spec.parallelism`` pods run at once (never more than the
completions still missing). Pods are made from ``spec.template`` with a
controller reference to the Job and the labels a real server adds
(``batch.kubernetes.io/job-name``, ``job-name``,
``batch.kubernetes.io/controller-uid``, ``controller-uid``); the pod
lifecycle controller runs and completes them. Without ``completions`` the
Job is complete when one pod succeeded and none is active.

Status: ``startTime``, ``active``, ``ready``, ``succeeded``, ``failed``
and, once complete, ``completionTime`` and the conditions
``SuccessCriteriaMet`` and ``Complete`` (``True``, reason
``CompletionsReached``). A suspended Job creates nothing. Failed pods are
counted, not retried (``backoffLimit`` is not applied).
"""

from __future__ import annotations

import logging
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers.api import JsonApi
from informers.testing.controllers.common import (
    Expectations,
    condition,
    is_active_pod,
    is_pod_ready,
    now,
    observing_owner,
    owned_by,
    owner_reference,
    set_condition,
)
from informers.testing.controllers.replicaset import pod_from_template
from informers.toolkit.runtime import Controller, InformerSource, Request, Result, enqueue_owner
from informers.wire.objects import NAMESPACE_INDEX
from informers.wire.resources import JOBS, PODS

__all__ = ["JobReconciler", "job_controller"]

log = logging.getLogger(__name__)


class JobReconciler:
    """``reconcile(request)`` for one Job (thread-safe: its state is the
    caches and the expectations)."""

    def __init__(self, api: JsonApi, jobs: SharedIndexInformer, pods: SharedIndexInformer) -> None:
        self.api = api
        self.jobs = jobs
        self.pods = pods
        self.expectations = Expectations()

    def __call__(self, request: Request) -> Result | None:
        job = self.jobs.get_indexer().get_by_key(request.key)
        if job is None:
            self.expectations.forget(request.key)
            return None
        meta, spec = job["metadata"], job.get("spec") or {}
        if meta.get("deletionTimestamp") or condition(job, "Complete").get("status") == "True":
            return None
        uid = meta["uid"]
        owned = [
            p
            for p in self.pods.get_indexer().by_index(NAMESPACE_INDEX, request.namespace)
            if owned_by(p, uid)
        ]
        created, deleted = self.expectations.observe(
            request.key, [p["metadata"]["name"] for p in owned]
        )
        phases = [(p.get("status") or {}).get("phase") for p in owned]
        succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
        active = [p for p in owned if is_active_pod(p) and p["metadata"]["name"] not in deleted]
        completions = spec.get("completions")
        parallelism = int(spec.get("parallelism", 1) or 0)
        if completions is None:
            done = succeeded >= 1 and not active and not created
            missing = 0 if succeeded else parallelism
        else:
            done = succeeded >= int(completions)
            missing = max(0, int(completions) - succeeded)
        start = (job.get("status") or {}).get("startTime") or now()
        if not done and not spec.get("suspend"):
            want = min(parallelism, missing) - len(active) - len(created)
            labels = {
                "batch.kubernetes.io/job-name": meta["name"],
                "job-name": meta["name"],
                "batch.kubernetes.io/controller-uid": uid,
                "controller-uid": uid,
            }
            ref = owner_reference(job, "batch/v1", "Job")
            for _ in range(max(0, want)):
                body = pod_from_template(spec.get("template") or {}, ref, f"{meta['name']}-")
                body["metadata"]["labels"] = {**labels, **body["metadata"]["labels"]}
                made = self.api.create(PODS, request.namespace, body)
                self.expectations.created(request.key, made["metadata"]["name"])
                log.debug("job %s: created pod %s", request, made["metadata"]["name"])
        status: dict[str, Any] = {
            "startTime": start,
            "active": 0 if done else len(active) + len(created),
            "ready": sum(1 for p in active if is_pod_ready(p)),
            "succeeded": succeeded,
            "failed": failed,
        }
        current = job.get("status") or {}
        if done:
            stamp = now()
            conditions = list(current.get("conditions") or [])
            for kind in ("SuccessCriteriaMet", "Complete"):
                conditions = set_condition(
                    conditions,
                    kind,
                    "True",
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    stamp=stamp,
                    probe_time=True,
                )
            for cond in conditions:
                cond.setdefault("lastProbeTime", stamp)
            status["conditions"] = conditions
            status["completionTime"] = stamp
        if any(current.get(k, 0) != v for k, v in status.items()):
            self.api.patch_status(JOBS, request.namespace, request.name, status)
            if done:
                log.info("job %s: complete (%d succeeded)", request, succeeded)
        return None


def job_controller(
    api: JsonApi, jobs: SharedIndexInformer, pods: SharedIndexInformer, *, workers: int = 1
) -> Controller:
    """The ``job`` controller: Job events and the events of their pods."""
    reconciler = JobReconciler(api, jobs, pods)
    owners = observing_owner(reconciler.expectations, "Job", enqueue_owner(JOBS))
    return Controller(
        "job",
        reconciler,
        [InformerSource(jobs), InformerSource(pods, map_func=owners)],
        workers=workers,
    )
