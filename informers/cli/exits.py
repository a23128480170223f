"""The exit codes of the ``kube-informers`` command."""

from __future__ import annotations

__all__ = ["EXIT_INTERRUPTED"]

#: The exit status after Ctrl-C (SIGINT), as shells report it: 128 + 2.
EXIT_INTERRUPTED = 130
