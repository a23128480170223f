"""The ReplicaSet controller: pods from ``spec.template`` until
``spec.replicas`` of them are active.

Pods are named ``<replicaset>-<random>`` (``generateName``), carry the
template's labels and annotations and a controller reference to the
ReplicaSet (``controller`` and ``blockOwnerDeletion`` true). Scaling down
deletes not-ready pods first, then the newest. Status: ``replicas``,
``fullyLabeledReplicas``, ``readyReplicas``, ``availableReplicas``
(ready; ``minReadySeconds`` is not waited for) and ``observedGeneration``.
Orphans are not adopted. A ReplicaSet being deleted is left to the garbage
collector.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers.api import JsonApi
from informers.testing.controllers.common import (
    Expectations,
    is_active_pod,
    is_pod_ready,
    label_selector,
    observing_owner,
    owned_by,
    owner_reference,
)
from informers.toolkit.runtime import Controller, InformerSource, Request, Result, enqueue_owner
from informers.wire.objects import NAMESPACE_INDEX, get_labels
from informers.wire.resources import PODS, REPLICASETS

__all__ = ["ReplicaSetReconciler", "pod_from_template", "replicaset_controller"]

log = logging.getLogger(__name__)


def pod_from_template(
    template: dict[str, Any], owner_ref: dict[str, Any], generate_name: str
) -> dict[str, Any]:
    """A pod body from a pod template: its labels, annotations and spec, the
    owner reference, ``generateName``."""
    meta = template.get("metadata") or {}
    pod_meta: dict[str, Any] = {
        "generateName": generate_name,
        "labels": dict(meta.get("labels") or {}),
        "ownerReferences": [owner_ref],
    }
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


class ReplicaSetReconciler:
    """``reconcile(request)`` for one ReplicaSet (thread-safe: state is the
    caches and the :class:`~informers.testing.controllers.common.Expectations`)."""

    def __init__(
        self, api: JsonApi, replica_sets: SharedIndexInformer, pods: SharedIndexInformer
    ) -> None:
        self.api = api
        self.replica_sets = replica_sets
        self.pods = pods
        self.expectations = Expectations()

    def __call__(self, request: Request) -> Result | None:
        rs = self.replica_sets.get_indexer().get_by_key(request.key)
        if rs is None:
            self.expectations.forget(request.key)
            return None
        meta, spec = rs["metadata"], rs.get("spec") or {}
        if meta.get("deletionTimestamp"):
            return None
        uid = meta["uid"]
        selector = label_selector(rs)
        owned = [
            p
            for p in self.pods.get_indexer().by_index(NAMESPACE_INDEX, request.namespace)
            if owned_by(p, uid)
        ]
        active = [p for p in owned if is_active_pod(p)]
        created, deleted = self.expectations.observe(
            request.key, [p["metadata"]["name"] for p in owned]
        )
        counted = [p for p in active if p["metadata"]["name"] not in deleted]
        want = int(spec.get("replicas", 1) or 0)
        diff = want - (len(counted) + len(created))
        if diff > 0:
            ref = owner_reference(rs, "apps/v1", "ReplicaSet")
            template = spec.get("template") or {}
            for _ in range(diff):
                body = pod_from_template(template, ref, f"{meta['name']}-")
                made = self.api.create(PODS, request.namespace, body)
                self.expectations.created(request.key, made["metadata"]["name"])
                log.debug("replicaset %s: created pod %s", request, made["metadata"]["name"])
        elif diff < 0:
            for pod in _newest_first_within_readiness(counted)[:-diff]:
                name = pod["metadata"]["name"]
                self.expectations.deleted(request.key, name)
                self.api.delete(PODS, request.namespace, name, uid=pod["metadata"]["uid"])
                log.debug("replicaset %s: deleted pod %s", request, name)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        fully = [
            p
            for p in counted
            if all(get_labels(p).get(k) == v for k, v in template_labels.items())
            and selector.matches(get_labels(p))
        ]
        ready = [p for p in counted if is_pod_ready(p)]
        status = {
            "replicas": len(counted),
            "fullyLabeledReplicas": len(fully),
            "readyReplicas": len(ready),
            "availableReplicas": len(ready),
            "observedGeneration": meta.get("generation", 1),
        }
        current = rs.get("status") or {}
        if any(current.get(k, 0) != v for k, v in status.items()):
            self.api.patch_status(REPLICASETS, request.namespace, request.name, status)
        return None


def _newest_first_within_readiness(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Not-ready pods before ready ones; within each, the newest first."""

    def key(p: dict[str, Any]) -> tuple[bool, str, str]:
        return (
            is_pod_ready(p),
            p["metadata"].get("creationTimestamp") or "",
            p["metadata"]["name"],
        )

    not_ready = sorted((p for p in pods if not is_pod_ready(p)), key=key, reverse=True)
    ready = sorted((p for p in pods if is_pod_ready(p)), key=key, reverse=True)
    return not_ready + ready


def replicaset_controller(
    api: JsonApi,
    replica_sets: SharedIndexInformer,
    pods: SharedIndexInformer,
    *,
    workers: int = 2,
) -> Controller:
    """The ``replicaset`` controller: ReplicaSet events and the events of
    the pods they own."""
    reconciler = ReplicaSetReconciler(api, replica_sets, pods)
    owners = observing_owner(reconciler.expectations, "ReplicaSet", enqueue_owner(REPLICASETS))
    return Controller(
        "replicaset",
        reconciler,
        [InformerSource(replica_sets), InformerSource(pods, map_func=owners)],
        workers=workers,
    )
