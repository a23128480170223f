"""Writing back: :class:`Client`, every verb on any kind over the raw
transport, with reads from the shared informers' caches, server-side apply,
dry runs and read-your-writes (:mod:`informers.toolkit.client.client`); and
:func:`create_or_update` / :func:`create_or_patch`, controller-runtime's
helpers (:mod:`informers.toolkit.client.mutate`).

The controller helpers that work on the object dicts themselves (finalizers,
owner references, conditions) are in :mod:`informers.toolkit.controllerutil`;
Events in :mod:`informers.toolkit.events`.
"""

from __future__ import annotations

from informers.toolkit.client.client import (
    APPLY_PATCH,
    DEFAULT_CATCH_UP_TIMEOUT,
    DEFAULT_TIMEOUT,
    PATCH_TYPES,
    Client,
    PatchType,
    PropagationPolicy,
)
from informers.toolkit.client.mutate import (
    MutateFunc,
    OperationResult,
    create_or_patch,
    create_or_update,
    merge_patch,
)

__all__ = [
    "APPLY_PATCH",
    "DEFAULT_CATCH_UP_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "PATCH_TYPES",
    "Client",
    "MutateFunc",
    "OperationResult",
    "PatchType",
    "PropagationPolicy",
    "create_or_patch",
    "create_or_update",
    "merge_patch",
]
