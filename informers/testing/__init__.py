"""Test helpers shipped with kube-informers, for this project's tests and for
users' own: the API server emulator, fakes, and reusable hypothesis state
machines (which need the ``testing`` extra, i.e. hypothesis).
"""

from __future__ import annotations

__all__: list[str] = []
