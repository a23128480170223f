"""kube-informers trackers: typed resource trackers, an event bus, and the
index synchronization tracker, all fed by the informers' blinker signals.

The public API is exactly what ``__all__`` lists (a test pins it).
"""

from __future__ import annotations

__all__: list[str] = []
