"""The tunables of one reflector, read by both the pure machine
(:mod:`informers.cache.reflector.machine`: page size, streaming lists, the
streaming deadline) and the threaded driver (:mod:`informers.cache.reflector.driver`:
the watch timeout, names in log lines)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ReflectorConfig"]


@dataclass(frozen=True, slots=True)
class ReflectorConfig:
    """Tunables of one reflector (immutable, so safe to share between threads)."""

    #: Kind or resource name, used in log lines and errors.
    description: str = "objects"
    #: Page size of paginated lists (0: never paginate).
    page_size: int = 500
    #: Page every list, so it arrives (and is collected) page by page: the
    #: first list at resourceVersion "" (a consistent read) rather than "0",
    #: which an API server answers from its cache in one response whatever
    #: the limit, and relists at their resourceVersion with the limit too
    #: (one the server no longer has falls back to "", as any relist does).
    #: ``None`` (the default): off, except that a
    #: :class:`~informers.SharedIndexInformer` turns it on for a store that
    #: collects lists in list buffers (the compact store: see
    #: :mod:`informers.cache.listbuffer`), so a large list never exists parsed in full.
    paginate_lists: bool | None = None
    #: Try streaming lists (``sendInitialEvents``) first.
    use_watch_list: bool = False
    #: The server timeout of a watch is random in [this, 2 * this] seconds.
    min_watch_timeout: float = 300.0
    #: Seconds to wait for the initial-events-end bookmark of a streaming list.
    watch_list_deadline: float = 60.0
    #: Re-watch from the last resource version when an open watch delivered
    #: nothing at all (not even a bookmark) for this many seconds; ``None``
    #: or 0 turns the check off (see :mod:`informers.cache.reflector.watchdog`).
    watch_progress_timeout: float | None = 150.0
