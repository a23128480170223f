"""A kubeconfig file pointing kubectl (or any client) at the emulator.

:func:`write_kubeconfig` writes one cluster (the server URL, and for HTTPS
the CA as ``certificate-authority-data``), one user with a bearer token (the
emulator's own when it authenticates; otherwise a dummy one, since some
clients insist on having credentials) and one context joining them, made the
current context. The file is written atomically (temporary file, then rename)
with mode 0600, like kubectl's own: it may hold a real token. Thread-safe as
far as the file system is.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path

__all__ = ["DEFAULT_NAME", "DUMMY_TOKEN", "kubeconfig_text", "write_kubeconfig"]

#: Name of the cluster, user and context entries.
DEFAULT_NAME = "kube-informers"
#: The token a kubeconfig carries for an emulator without authentication
#: (which accepts any token or none).
DUMMY_TOKEN = "kube-informers-emulator"


def _q(value: str) -> str:
    # A JSON string is a valid YAML double-quoted scalar.
    return json.dumps(value)


def kubeconfig_text(
    server_url: str,
    *,
    name: str = DEFAULT_NAME,
    namespace: str | None = None,
    token: str = DUMMY_TOKEN,
    ca_pem: bytes | None = None,
) -> str:
    """The YAML text of a kubeconfig for ``server_url`` (e.g.
    ``http://127.0.0.1:8080``); ``namespace`` sets the context's default
    namespace, ``token`` the user's bearer token and ``ca_pem`` (PEM bytes)
    the CA an ``https://`` server is verified with."""
    context_lines = [f"    cluster: {_q(name)}", f"    user: {_q(name)}"]
    if namespace:
        context_lines.append(f"    namespace: {_q(namespace)}")
    cluster_lines = [f"    server: {_q(server_url)}"]
    if ca_pem is not None:
        data = base64.b64encode(ca_pem).decode("ascii")
        cluster_lines.append(f"    certificate-authority-data: {_q(data)}")
    lines = [
        "apiVersion: v1",
        "kind: Config",
        "preferences: {}",
        "clusters:",
        f"- name: {_q(name)}",
        "  cluster:",
        *cluster_lines,
        "users:",
        f"- name: {_q(name)}",
        "  user:",
        f"    token: {_q(token)}",
        "contexts:",
        f"- name: {_q(name)}",
        "  context:",
        *context_lines,
        f"current-context: {_q(name)}",
    ]
    return "\n".join(lines) + "\n"


def write_kubeconfig(
    path: str | os.PathLike[str],
    server_url: str,
    *,
    name: str = DEFAULT_NAME,
    namespace: str | None = None,
    token: str = DUMMY_TOKEN,
    ca_pem: bytes | None = None,
) -> Path:
    """Write a kubeconfig for ``server_url`` (see :func:`kubeconfig_text`) to
    ``path`` (parent directories are created) and return the path. An
    existing file is replaced."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = kubeconfig_text(server_url, name=name, namespace=namespace, token=token, ca_pem=ca_pem)
    fd, temporary = tempfile.mkstemp(prefix=".kubeconfig-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
