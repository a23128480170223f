"""The Deployment controller: a ReplicaSet per pod template, rolled by
``spec.strategy``.

The ReplicaSet of the current template is named ``<deployment>-<hash>``,
where the hash is the 32-bit FNV-1a of the template's canonical JSON (keys
sorted, no spaces, the ``pod-template-hash`` label left out), written in
the alphabet ``bcdfghjkmnpqrstvwxz2456789`` as Kubernetes writes it (so it
is stable across runs and processes, though not equal to a real
controller's hash). The hash is the ``pod-template-hash`` label of the
ReplicaSet, its selector, its template and so its pods.

Revisions: every ReplicaSet carries ``deployment.kubernetes.io/revision``;
the current one has the highest, also written on the Deployment. A template
that returns to an older ReplicaSet's (``kubectl rollout undo``) gives that
ReplicaSet the next revision.

``RollingUpdate`` (the default): the new ReplicaSet grows while the pods
of all ReplicaSets stay within ``replicas + maxSurge``, old ones shrink
while at least ``replicas - maxUnavailable`` pods are available (default
25 % each; surge rounds up, unavailability down, at least one of them is
non-zero). ``Recreate``: old ReplicaSets go to zero, and once their pods
are gone the new one is scaled up. A ``paused`` Deployment gets no new
ReplicaSet and no new revision; its status says ``Progressing: Unknown /
DeploymentPaused``.

Scaling: every ReplicaSet the controller scales gets the
``deployment.kubernetes.io/desired-replicas`` and ``max-replicas``
annotations; a change of ``replicas`` while several ReplicaSets are active
(mid-rollout, or paused) spreads the new total across them in proportion
to their sizes, as the real controller does (:mod:`._proportional`).

Templates are compared as ``EqualIgnoreHash`` does, after dropping the hash
label, nulls and empty maps and lists (``kubectl rollout undo`` sends the old
ReplicaSet's template with ``creationTimestamp: null``), so an undo reuses
the old ReplicaSet.

Status: ``observedGeneration``, ``replicas``, ``updatedReplicas``,
``readyReplicas``, ``availableReplicas``, ``unavailableReplicas`` and the
conditions ``Available`` (``MinimumReplicasAvailable`` /
``MinimumReplicasUnavailable``) and ``Progressing`` (``NewReplicaSetAvailable``
once complete, ``ReplicaSetUpdated`` while rolling, ``NewReplicaSetCreated``
when the ReplicaSet was just made).
"""

from __future__ import annotations

import copy
import json
import logging
import math
from typing import Any

from informers.cache.informer import SharedIndexInformer
from informers.testing.controllers._proportional import (
    annotations_stale,
    is_scaling_event,
    replicas_annotations,
    scale_plan,
)
from informers.testing.controllers.api import ConflictError, JsonApi
from informers.testing.controllers.common import (
    now,
    owned_by,
    owner_reference,
    set_condition,
)
from informers.toolkit.runtime import Controller, InformerSource, Request, Result, enqueue_owner
from informers.wire.objects import NAMESPACE_INDEX
from informers.wire.resources import DEPLOYMENTS, REPLICASETS

__all__ = [
    "HASH_LABEL",
    "REVISION_ANNOTATION",
    "DeploymentReconciler",
    "deployment_controller",
    "pod_template_hash",
]

log = logging.getLogger(__name__)

#: The label naming a ReplicaSet's template.
HASH_LABEL = "pod-template-hash"
#: The annotation holding a ReplicaSet's (and a Deployment's) revision.
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"

_ALPHABET = "bcdfghjkmnpqrstvwxz2456789"


def pod_template_hash(template: dict[str, Any], collision_count: int = 0) -> str:
    """The stable hash of a pod template (see the module docs)."""
    clean = copy.deepcopy(template)
    labels = (clean.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    data = json.dumps(clean, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    out = []
    for _ in range(10):
        value, digit = divmod(value, len(_ALPHABET))
        out.append(_ALPHABET[digit])
        if not value:
            break
    return "".join(out)


def _normalised(value: Any) -> Any:
    """``value`` without nulls, empty maps and empty lists (as
    ``apiequality.Semantic.DeepEqual`` takes nil and empty for equal and a
    Go client sends ``creationTimestamp: null``)."""
    if isinstance(value, dict):
        out = {k: _normalised(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v not in ({}, [])}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


def _template_without_hash(template: dict[str, Any]) -> dict[str, Any]:
    """A pod template as the deployment controller compares them
    (``EqualIgnoreHash``): without the ``pod-template-hash`` label, and
    normalised (see :func:`_normalised`), so that ``kubectl rollout undo``
    finds the ReplicaSet it copied the template from."""
    clean = copy.deepcopy(template)
    labels = (clean.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    normal: dict[str, Any] = _normalised(clean)
    return normal


def _scaled(value: Any, total: int, *, round_up: bool, default: str) -> int:
    """An int-or-percent field (``maxSurge``, ``maxUnavailable``) of ``total``."""
    if value is None:
        value = default
    if isinstance(value, int):
        return max(0, value)
    text = str(value).strip()
    if text.endswith("%"):
        fraction = float(text[:-1]) / 100 * total
        return max(0, math.ceil(fraction) if round_up else math.floor(fraction))
    return max(0, int(text))


def _revision(rs: dict[str, Any]) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def _rolling(deployment: dict[str, Any]) -> bool:
    strategy = ((deployment.get("spec") or {}).get("strategy") or {}).get("type")
    return (strategy or "RollingUpdate") == "RollingUpdate"


def _spec_replicas(rs: dict[str, Any]) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0) or 0)


def _status(rs: dict[str, Any], field: str) -> int:
    return int((rs.get("status") or {}).get(field, 0) or 0)


class DeploymentReconciler:
    """``reconcile(request)`` for one Deployment (thread-safe: its state is
    the caches)."""

    def __init__(
        self,
        api: JsonApi,
        deployments: SharedIndexInformer,
        replica_sets: SharedIndexInformer,
    ) -> None:
        self.api = api
        self.deployments = deployments
        self.replica_sets = replica_sets

    def __call__(self, request: Request) -> Result | None:
        deployment = self.deployments.get_indexer().get_by_key(request.key)
        if deployment is None or deployment["metadata"].get("deletionTimestamp"):
            return None
        meta, spec = deployment["metadata"], deployment.get("spec") or {}
        uid = meta["uid"]
        owned = [
            rs
            for rs in self.replica_sets.get_indexer().by_index(NAMESPACE_INDEX, request.namespace)
            if owned_by(rs, uid) and not rs["metadata"].get("deletionTimestamp")
        ]
        template = spec.get("template") or {}
        want = _template_without_hash(template)
        new_rs = next(
            (
                rs
                for rs in owned
                if _template_without_hash((rs.get("spec") or {}).get("template") or {}) == want
            ),
            None,
        )
        old = [rs for rs in owned if rs is not new_rs]
        max_revision = max((_revision(rs) for rs in old), default=0)
        replicas = int(spec.get("replicas", 1) or 0)
        just_created = False
        if spec.get("paused") or is_scaling_event(owned, replicas):
            # A paused Deployment makes no new ReplicaSet and moves no
            # revision; a change of its replicas (then, or mid-rollout)
            # scales its ReplicaSets proportionally, and it reports.
            current = new_rs or max(owned, key=_revision, default=None)
            if current is not None:
                self._scale_proportionally(deployment, new_rs, old, replicas)
                others = [rs for rs in owned if rs is not current]
                self._update_status(deployment, current, others, replicas, False)
            return None
        if new_rs is None:
            new_rs = self._create_replica_set(deployment, max_revision + 1, old, replicas)
            if new_rs is None:
                return Result(requeue=True)
            just_created = True
        elif _revision(new_rs) <= max_revision:
            new_rs = self._set_revision(new_rs, max_revision + 1)
        revision = str(_revision(new_rs))
        if (meta.get("annotations") or {}).get(REVISION_ANNOTATION) != revision:
            self.api.patch(
                DEPLOYMENTS,
                request.namespace,
                request.name,
                {"metadata": {"annotations": {REVISION_ANNOTATION: revision}}},
            )
        self._roll(deployment, new_rs, old, replicas)
        self._update_status(deployment, new_rs, old, replicas, just_created)
        return None

    # ------------------------------------------------------------ replica sets

    def _create_replica_set(
        self,
        deployment: dict[str, Any],
        revision: int,
        old: list[dict[str, Any]],
        replicas: int,
    ) -> dict[str, Any] | None:
        meta, spec = deployment["metadata"], deployment.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        collisions = int((deployment.get("status") or {}).get("collisionCount", 0) or 0)
        digest = pod_template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = digest
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
        first = not any(_spec_replicas(rs) for rs in old)
        strategy = (spec.get("strategy") or {}).get("type") or "RollingUpdate"
        if first:
            start = replicas
        elif strategy == "Recreate":
            start = 0
        else:
            surge = self._surge_unavailable(deployment, replicas)[0]
            total = sum(_spec_replicas(rs) for rs in old)
            start = max(0, min(replicas, replicas + surge - total))
        body: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{digest}",
                "namespace": meta.get("namespace"),
                "labels": dict(template["metadata"]["labels"]),
                "annotations": {
                    REVISION_ANNOTATION: str(revision),
                    **replicas_annotations(*self._replicas_bounds(deployment)),
                },
                "ownerReferences": [owner_reference(deployment, "apps/v1", "Deployment")],
            },
            "spec": {
                "replicas": start,
                "minReadySeconds": spec.get("minReadySeconds", 0),
                "selector": selector,
                "template": template,
            },
        }
        try:
            made = self.api.create(REPLICASETS, meta.get("namespace"), body)
        except ConflictError:
            # the name is taken: by our own RS the cache does not show yet
            # (the next event settles it), or by another template's
            existing = self.api.get(REPLICASETS, meta.get("namespace"), body["metadata"]["name"])
            if existing is not None and not owned_by(existing, meta["uid"]):
                self.api.patch_status(
                    DEPLOYMENTS,
                    meta.get("namespace"),
                    meta["name"],
                    {"collisionCount": collisions + 1},
                )
            return None
        log.info(
            "deployment %s/%s: created replicaset %s",
            meta.get("namespace"),
            meta["name"],
            made["metadata"]["name"],
        )
        return made

    def _set_revision(self, rs: dict[str, Any], revision: int) -> dict[str, Any]:
        meta = rs["metadata"]
        return self.api.patch(
            REPLICASETS,
            meta.get("namespace"),
            meta["name"],
            {"metadata": {"annotations": {REVISION_ANNOTATION: str(revision)}}},
        )

    def _scale(
        self,
        rs: dict[str, Any],
        replicas: int,
        deployment: dict[str, Any],
        *,
        annotate: bool = False,
    ) -> None:
        """Scale ``rs`` to ``replicas``, with the replicas annotations of
        ``deployment`` (also when only they are stale, with ``annotate``)."""
        desired, max_replicas = self._replicas_bounds(deployment)
        stale = annotations_stale(rs, desired, max_replicas)
        if _spec_replicas(rs) == replicas and not (annotate and stale):
            return
        meta = rs["metadata"]
        patch: dict[str, Any] = {"spec": {"replicas": replicas}}
        if stale:
            patch["metadata"] = {"annotations": replicas_annotations(desired, max_replicas)}
        self.api.patch(REPLICASETS, meta.get("namespace"), meta["name"], patch)
        rs.setdefault("spec", {})["replicas"] = replicas

    def _replicas_bounds(self, deployment: dict[str, Any]) -> tuple[int, int]:
        """The Deployment's replicas, and replicas plus its maxSurge (0
        unless it rolls)."""
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1) or 0)
        if _rolling(deployment):
            return replicas, replicas + self._surge_unavailable(deployment, replicas)[0]
        return replicas, replicas

    def _scale_proportionally(
        self,
        deployment: dict[str, Any],
        new_rs: dict[str, Any] | None,
        old: list[dict[str, Any]],
        replicas: int,
    ) -> None:
        """The controller's ``scale`` step (see :mod:`._proportional`)."""
        desired, max_replicas = self._replicas_bounds(deployment)
        plan = scale_plan(
            new_rs,
            old,
            replicas=replicas,
            max_surge=max_replicas - desired,
            status_replicas=int((deployment.get("status") or {}).get("replicas", 0) or 0),
            rolling=_rolling(deployment),
        )
        for rs, size in plan:
            self._scale(copy.deepcopy(rs), size, deployment, annotate=True)

    @staticmethod
    def _surge_unavailable(deployment: dict[str, Any], replicas: int) -> tuple[int, int]:
        rolling = ((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
        surge = _scaled(rolling.get("maxSurge"), replicas, round_up=True, default="25%")
        unavailable = _scaled(
            rolling.get("maxUnavailable"), replicas, round_up=False, default="25%"
        )
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, unavailable

    def _roll(
        self,
        deployment: dict[str, Any],
        new_rs: dict[str, Any],
        old: list[dict[str, Any]],
        replicas: int,
    ) -> None:
        new_rs = copy.deepcopy(new_rs)
        old = sorted((copy.deepcopy(rs) for rs in old), key=_revision)
        active_old = [rs for rs in old if _spec_replicas(rs) > 0]
        strategy = ((deployment.get("spec") or {}).get("strategy") or {}).get(
            "type"
        ) or "RollingUpdate"
        if not active_old:
            self._scale(new_rs, replicas, deployment)
            return
        if strategy == "Recreate":
            for rs in active_old:
                self._scale(rs, 0, deployment)
            if all(_status(rs, "replicas") == 0 for rs in old):
                self._scale(new_rs, replicas, deployment)
            return
        surge, max_unavailable = self._surge_unavailable(deployment, replicas)
        # scale up the new replica set within replicas + maxSurge
        total = _spec_replicas(new_rs) + sum(_spec_replicas(rs) for rs in old)
        room = replicas + surge - total
        if room > 0 and _spec_replicas(new_rs) < replicas:
            self._scale(new_rs, min(replicas, _spec_replicas(new_rs) + room), deployment)
        # scale down old ones while replicas - maxUnavailable stay available
        min_available = replicas - max_unavailable
        total = _spec_replicas(new_rs) + sum(_spec_replicas(rs) for rs in old)
        new_unavailable = max(0, _spec_replicas(new_rs) - _status(new_rs, "availableReplicas"))
        # first the old pods that are not available anyway
        cleanup = total - min_available - new_unavailable
        for rs in active_old:
            if cleanup <= 0:
                break
            unhealthy = _spec_replicas(rs) - _status(rs, "availableReplicas")
            if unhealthy > 0:
                cut = min(unhealthy, cleanup)
                self._scale(rs, _spec_replicas(rs) - cut, deployment)
                cleanup -= cut
        available = _status(new_rs, "availableReplicas") + sum(
            min(_status(rs, "availableReplicas"), _spec_replicas(rs)) for rs in old
        )
        down = available - min_available
        for rs in active_old:
            if down <= 0:
                break
            cut = min(_spec_replicas(rs), down)
            if cut > 0:
                self._scale(rs, _spec_replicas(rs) - cut, deployment)
                down -= cut

    # ------------------------------------------------------------------ status

    def _update_status(
        self,
        deployment: dict[str, Any],
        new_rs: dict[str, Any],
        old: list[dict[str, Any]],
        replicas: int,
        just_created: bool,
    ) -> None:
        everyone = [new_rs, *old]
        available = sum(_status(rs, "availableReplicas") for rs in everyone)
        updated = _status(new_rs, "replicas")
        total = sum(_status(rs, "replicas") for rs in everyone)
        max_unavailable = self._surge_unavailable(deployment, replicas)[1]
        stamp = now()
        current = deployment.get("status") or {}
        conditions = list(current.get("conditions") or [])
        if available >= replicas - max_unavailable:
            conditions = set_condition(
                conditions,
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.",
                stamp=stamp,
            )
        else:
            conditions = set_condition(
                conditions,
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.",
                stamp=stamp,
            )
        rs_name = new_rs["metadata"]["name"]
        complete = (
            updated == replicas
            and total == replicas
            and available == replicas
            and _status(new_rs, "observedGeneration")
            >= int(new_rs["metadata"].get("generation", 1))
        )
        if complete:
            reason, message = (
                "NewReplicaSetAvailable",
                f'ReplicaSet "{rs_name}" has successfully progressed.',
            )
        elif just_created:
            reason, message = "NewReplicaSetCreated", f'Created new replica set "{rs_name}"'
        else:
            reason, message = "ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.'
        progressing = "True"
        if (deployment.get("spec") or {}).get("paused"):
            progressing, reason, message = "Unknown", "DeploymentPaused", "Deployment is paused"
        conditions = set_condition(
            conditions, "Progressing", progressing, reason, message, stamp=stamp
        )
        status: dict[str, Any] = {
            "observedGeneration": deployment["metadata"].get("generation", 1),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in everyone),
            "availableReplicas": available,
            "unavailableReplicas": max(0, replicas - available),
            "conditions": conditions,
        }
        if "collisionCount" in current:
            status["collisionCount"] = current["collisionCount"]
        if any(current.get(k) != v for k, v in status.items()):
            meta = deployment["metadata"]
            self.api.patch_status(DEPLOYMENTS, meta.get("namespace"), meta["name"], status)


def deployment_controller(
    api: JsonApi,
    deployments: SharedIndexInformer,
    replica_sets: SharedIndexInformer,
    *,
    workers: int = 2,
) -> Controller:
    """The ``deployment`` controller: Deployment events and the events of
    the ReplicaSets they own."""
    return Controller(
        "deployment",
        DeploymentReconciler(api, deployments, replica_sets),
        [
            InformerSource(deployments),
            InformerSource(replica_sets, map_func=enqueue_owner(DEPLOYMENTS)),
        ],
        workers=workers,
    )
