"""Test helpers shipped with kube-informers, for this project's tests and for
users' own: the API server emulator, fakes, and reusable hypothesis state
machines (which need the ``testing`` extra, i.e. hypothesis).
"""

from __future__ import annotations

import importlib
from typing import Any

# --- API server emulator (informers.testing.apiserver) ---
from informers.testing.apiserver import ApiServer, ApiServerError

# --- scriptable fakes (informers.testing.fake) ---
from informers.testing.fake import FakeClock, FakeListerWatcher, FakeWatch

__all__: list[str] = [
    # API server emulator
    "ApiServer",
    "ApiServerError",
    # scriptable fakes
    "FakeClock",
    "FakeListerWatcher",
    "FakeWatch",
    # hypothesis state machines (informers.testing.stateful; imported lazily)
    "IndexedStoreStateMachine",
    "indexed_store_machine",
    # informers.testing.stateful_fifo (imported lazily)
    "RealFIFOStateMachine",
    "real_fifo_machine",
]

# Names served from modules that need optional dependencies: importing
# informers.testing must work without hypothesis installed.
_LAZY = {
    "IndexedStoreStateMachine": "informers.testing.stateful",
    "indexed_store_machine": "informers.testing.stateful",
    "RealFIFOStateMachine": "informers.testing.stateful_fifo",
    "real_fifo_machine": "informers.testing.stateful_fifo",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module_name), name)
