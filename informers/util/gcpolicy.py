"""An explicit opt-in for large initial syncs: keep CPython's cyclic garbage
collector out of the way while caches fill, then freeze what they hold.

Measured (``benchmarks/bench_informer.py``): more than half of a large initial
sync is the cyclic collector walking the growing cache again and again; the
cached objects are plain dicts and lists that never form garbage cycles. With
:func:`collector_paused` around the start and the sync, the collector does not
run during the sync, and :func:`gc.freeze` then moves everything alive (the
synced caches among it) into the permanent generation, which later full
collections skip.

This is process-wide by nature (there is one collector), so the library never
does it by itself: you ask for it, around the code you choose::

    with collector_paused():
        factory.start()
        factory.wait_for_cache_sync(timeout=300)

Costs, honestly: garbage cycles made anywhere in the process during the block
wait until it ends. Frozen objects the cache drops later are still freed by
reference counting (parsed JSON holds no reference cycles); only cycles among
frozen objects wait for :func:`gc.unfreeze`. Freezing again after a large
relist keeps the new objects out of the collector's way too.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

# Guards _depth and _enable_after: overlapping blocks (from several threads)
# re-enable the collector only when the last one ends, and only if it was
# enabled when the first one began.
_lock = threading.Lock()
_depth = 0
_enable_after = False


@contextmanager
def collector_paused(*, freeze: bool = True) -> Iterator[None]:
    """Disable the cyclic collector for the block; at its end, if ``freeze``,
    :func:`gc.freeze` what is alive, then re-enable the collector if it was
    enabled before.

    Safe to nest and to use from several threads at once: the collector comes
    back on (and the freeze happens, as that block's ``freeze`` says) when the
    outermost block ends. Never blocks. Exceptions in the
    block propagate; the collector is restored all the same.
    """
    global _depth, _enable_after  # noqa: PLW0603 - one process-wide collector
    with _lock:
        if _depth == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if freeze:
                    gc.freeze()
                if _enable_after:
                    gc.enable()
