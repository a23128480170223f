"""Where the commands find a cluster when ``--kubeconfig`` is not given, as
kubectl looks: the files of ``$KUBECONFIG`` (a path list), else
``~/.kube/config``, else the in-cluster configuration of a pod (the
``KUBERNETES_SERVICE_HOST`` and ``KUBERNETES_SERVICE_PORT`` variables and the
service account's token). When none is there, :func:`no_configuration`
says what was tried, so the user knows what to give.

Not a public API of the package.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "default_kubeconfig_files",
    "in_cluster_available",
    "in_cluster_client",
    "no_configuration",
]

#: The service account token a pod's in-cluster configuration reads.
TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
_HOST, _PORT = "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"


def default_kubeconfig_files(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The kubeconfig files kubectl would read: each existing file of
    ``$KUBECONFIG`` (``os.pathsep``-separated), else ``~/.kube/config`` if
    it exists; empty when there is none."""
    env = os.environ if environ is None else environ
    listed = [Path(p).expanduser() for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return [p for p in listed if p.is_file()]
    home = Path("~/.kube/config").expanduser()
    return [home] if home.is_file() else []


def in_cluster_available(
    environ: Mapping[str, str] | None = None, token_file: str = TOKEN_FILE
) -> bool:
    """Whether a pod's in-cluster configuration is there: both service
    variables set and the token file present."""
    env = os.environ if environ is None else environ
    return bool(env.get(_HOST)) and bool(env.get(_PORT)) and Path(token_file).is_file()


def no_configuration(environ: Mapping[str, str] | None = None, token_file: str = TOKEN_FILE) -> str:
    """The one line to print when neither a kubeconfig nor the in-cluster
    configuration was found: every place that was tried."""
    env = os.environ if environ is None else environ
    listed = [p for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        files = f"$KUBECONFIG names no existing file ({', '.join(listed)})"
    else:
        files = f"$KUBECONFIG is not set and {Path('~/.kube/config').expanduser()} does not exist"
    missing = [name for name in (_HOST, _PORT) if not env.get(name)]
    if missing:
        cluster = f"not in a cluster (${' and $'.join(missing)} not set)"
    else:
        cluster = f"no in-cluster service account token at {token_file}"
    return (
        f"no cluster configuration found: {files}; {cluster}. "
        "Give --kubeconfig FILE, or --embedded for the built-in emulator"
    )


def in_cluster_client() -> Any:
    """A :class:`kubernetes.client.ApiClient` with the pod's in-cluster
    configuration (the caller closes it)."""
    from kubernetes import client, config

    configuration = client.Configuration()
    load: Any = config.load_incluster_config  # untyped
    load(client_configuration=configuration)
    return client.ApiClient(configuration)
