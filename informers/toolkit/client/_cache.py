"""The client's view of one kind a factory informer caches: the informer,
its store, whether it has synced, and the client's writes of the kind not
read back yet (for read-your-writes). Private:
:class:`~informers.toolkit.client.Client` is the public face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from informers.wire.resources import Resource

if TYPE_CHECKING:
    from informers.cache.informer import SharedIndexInformer

__all__ = ["WRITTEN_KEYS", "CachedKind"]

#: How many written keys a client remembers per kind for read-your-writes;
#: the oldest are forgotten first (a key is also forgotten once read back).
WRITTEN_KEYS = 16384


class CachedKind:
    """A kind the factory caches, as the client reads it: the informer, its
    store, whether it has synced, the namespace the factory watches (``""``:
    all) and this client's writes of it not read back yet (key ->
    resourceVersion, and the highest written). Written under the client's
    lock; read without it."""

    __slots__ = (
        "args",
        "highest",
        "indexer",
        "informer",
        "namespaced",
        "resource",
        "synced",
        "watched",
        "written",
    )

    def __init__(self, resource: Resource, informer: SharedIndexInformer, watched: str | None):
        self.resource = resource
        self.informer = informer
        self.indexer = informer.get_indexer()
        self.namespaced = resource.namespaced
        self.watched = (watched or "") if resource.namespaced else ""
        self.synced = False
        self.written: dict[str, str] = {}
        self.highest = -1
        #: The names and Resources the client was asked this kind by.
        self.args: list[Resource | str] = []

    def check_synced(self) -> bool:
        """Whether the informer has synced (remembered once it has)."""
        if self.informer.has_synced():
            self.synced = True
        return self.synced

    def record(self, key: str, version: str) -> None:
        """A write of ``key`` at ``version``; the oldest record goes past
        :data:`WRITTEN_KEYS`."""
        written = self.written
        written.pop(key, None)  # to the end: the oldest go first
        written[key] = version
        if len(written) > WRITTEN_KEYS:
            del written[next(iter(written))]
        self.highest = max(self.highest, int(version))

    def forget(self, key: str, version: str) -> None:
        """``key``'s write at ``version`` was read back (unless written again)."""
        if self.written.get(key) == version:
            del self.written[key]
