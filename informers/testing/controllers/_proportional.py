"""Proportional scaling of a Deployment's ReplicaSets, as the deployment
controller's ``scale`` step does it when a Deployment is scaled while it
has more than one active ReplicaSet (mid-rollout, or paused).

Every ReplicaSet the controller scales carries two annotations:
``deployment.kubernetes.io/desired-replicas`` (the Deployment's replicas)
and ``deployment.kubernetes.io/max-replicas`` (replicas plus maxSurge) as
of that write. A sync is a *scaling event* when an active ReplicaSet's
desired-replicas differs from the Deployment's replicas; then, instead of
rolling, the controller:

1. scales the one active ReplicaSet (or, with none, the newest) to the
   Deployment's replicas;
2. else, when the new ReplicaSet is saturated (all replicas, all
   available), scales the old ones to zero;
3. else, for a RollingUpdate Deployment, spreads the difference between
   ``replicas + maxSurge`` (0 when scaling to 0) and the ReplicaSets' sum
   across them in proportion to their size: each gets ``round(size *
   newMax / itsMaxReplicasAnnotation) - size`` (its fallback: the
   Deployment's ``status.replicas``), never more than is left to add or
   remove; the largest ReplicaSet takes what rounding left over. Scaling
   up visits larger then newer ReplicaSets first, scaling down larger then
   older ones.

Pure functions over ReplicaSet dicts; thread-safe.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "annotations_stale",
    "is_scaling_event",
    "replicas_annotations",
    "scale_plan",
]

#: The Deployment's replicas when the controller last scaled a ReplicaSet.
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
#: The Deployment's replicas plus maxSurge at that write.
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"


def _size(rs: dict[str, Any]) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0) or 0)


def _annotation(rs: dict[str, Any], key: str) -> int | None:
    value = ((rs.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def replicas_annotations(desired: int, max_replicas: int) -> dict[str, str]:
    """The two annotations a scaled ReplicaSet gets."""
    return {
        DESIRED_REPLICAS_ANNOTATION: str(desired),
        MAX_REPLICAS_ANNOTATION: str(max_replicas),
    }


def annotations_stale(rs: dict[str, Any], desired: int, max_replicas: int) -> bool:
    """Whether ``rs`` lacks the annotations of ``desired`` / ``max_replicas``."""
    return (
        _annotation(rs, DESIRED_REPLICAS_ANNOTATION) != desired
        or _annotation(rs, MAX_REPLICAS_ANNOTATION) != max_replicas
    )


def is_scaling_event(replica_sets: list[dict[str, Any]], replicas: int) -> bool:
    """Whether an active ReplicaSet was scaled for another replica count
    than the Deployment's ``replicas`` now."""
    for rs in replica_sets:
        if _size(rs) <= 0:
            continue
        desired = _annotation(rs, DESIRED_REPLICAS_ANNOTATION)
        if desired is not None and desired != replicas:
            return True
    return False


def _created(rs: dict[str, Any]) -> tuple[str, str]:
    meta = rs.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


def _round(value: float) -> int:
    """Go's ``math.Round``: halves away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def _share(
    rs: dict[str, Any],
    *,
    replicas: int,
    max_surge: int,
    status_replicas: int,
    to_add: int,
    added: int,
) -> int:
    """``GetProportion``: what ``rs`` gains (or loses) of ``to_add``."""
    size = _size(rs)
    if size == 0 or to_add in (0, added):
        return 0
    if replicas == 0:
        fraction = -size
    else:
        annotated = _annotation(rs, MAX_REPLICAS_ANNOTATION) or status_replicas
        if annotated <= 0:
            return 0
        fraction = _round(size * (replicas + max_surge) / annotated) - size
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _saturated(new_rs: dict[str, Any] | None, replicas: int) -> bool:
    if new_rs is None:
        return False
    available = int((new_rs.get("status") or {}).get("availableReplicas", 0) or 0)
    return (
        _size(new_rs) == replicas
        and _annotation(new_rs, DESIRED_REPLICAS_ANNOTATION) == replicas
        and available == replicas
    )


def scale_plan(
    new_rs: dict[str, Any] | None,
    old: list[dict[str, Any]],
    *,
    replicas: int,
    max_surge: int,
    status_replicas: int,
    rolling: bool,
) -> list[tuple[dict[str, Any], int]]:
    """The ReplicaSets to write and their new sizes (see the module
    docstring); every one of them also gets :func:`replicas_annotations`.
    ``max_surge``: the Deployment's resolved maxSurge (0 unless rolling)."""
    newest_first = sorted(old, key=_created, reverse=True)
    everyone = [*newest_first, *([new_rs] if new_rs is not None else [])]
    active = [rs for rs in everyone if _size(rs) > 0]
    if len(active) <= 1:
        target = active[0] if active else (new_rs or (newest_first[0] if newest_first else None))
        return [] if target is None else [(target, replicas)]
    if _saturated(new_rs, replicas):
        return [(rs, 0) for rs in active if rs is not new_rs]
    if not rolling:
        return []
    allowed = replicas + max_surge if replicas > 0 else 0
    to_add = allowed - sum(_size(rs) for rs in active)
    if to_add > 0:  # larger first, then newer
        active.sort(key=_created, reverse=True)
        active.sort(key=_size, reverse=True)
    elif to_add < 0:  # larger first, then older
        active.sort(key=_created)
        active.sort(key=_size, reverse=True)
    sizes: list[int] = []
    added = 0
    for rs in active:
        share = _share(
            rs,
            replicas=replicas,
            max_surge=max_surge,
            status_replicas=status_replicas,
            to_add=to_add,
            added=added,
        )
        sizes.append(_size(rs) + share)
        added += share
    if to_add != 0:
        sizes[0] = max(0, sizes[0] + to_add - added)
    return list(zip(active, sizes, strict=True))
