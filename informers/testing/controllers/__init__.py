"""Built-in controllers for the API server emulator, written on this
project's own runtime: informers over HTTP feed
:class:`~informers.toolkit.runtime.Controller`\\ s that write back through the
server's API.

::

    with ApiServer() as server, ControllerManager(server, ready_delay=0):
        ...   # Deployments get ReplicaSets, ReplicaSets pods, pods turn Ready

Controllers (one module each): ``replicaset``, ``deployment``,
``pod-lifecycle`` (the scheduler and kubelet), ``job``, ``namespace`` and
``garbage-collector``. ``kube-informers serve`` runs them unless given
``--no-controllers``; a bare :class:`~informers.testing.ApiServer` does not.
"""

from __future__ import annotations

from informers.testing.controllers.api import ConflictError, JsonApi, NotFoundError
from informers.testing.controllers.deployment import (
    HASH_LABEL,
    REVISION_ANNOTATION,
    pod_template_hash,
)
from informers.testing.controllers.manager import (
    CONTROLLER_NAMES,
    ControllerManager,
    start_controllers,
)

__all__ = [
    "CONTROLLER_NAMES",
    "HASH_LABEL",
    "REVISION_ANNOTATION",
    "ConflictError",
    "ControllerManager",
    "JsonApi",
    "NotFoundError",
    "pod_template_hash",
    "start_controllers",
]
