"""The kubectl fixtures of the emulator's kubectl tests, for the apply tests."""

from __future__ import annotations

from test_kubectl import kubectl, kubectl_path

__all__ = ["kubectl", "kubectl_path"]
