"""Test helpers shipped with kube-informers, for this project's tests and for
users' own: the API server emulator, fakes, and reusable hypothesis state
machines (which need the ``testing`` extra, i.e. hypothesis).
"""

from __future__ import annotations

# --- API server emulator (informers.testing.apiserver) ---
from informers.testing.apiserver import ApiServer, ApiServerError

__all__: list[str] = [
    # API server emulator
    "ApiServer",
    "ApiServerError",
]
