"""What sharding reports: objects per shard, ring changes (rebalances) and
drain time. :data:`NOOP_SHARDING_METRICS` by default;
:class:`~informers.toolkit.sharding.prometheus.PrometheusShardingMetrics` with the
``metrics`` extra. Implementations must be thread-safe and fast."""

from __future__ import annotations

from typing import Protocol

__all__ = ["NOOP_SHARDING_METRICS", "NoopShardingMetrics", "ShardingMetrics"]


class ShardingMetrics(Protocol):
    """The sharding metrics hooks."""

    def ring_changed(self, ring: str, shards: int) -> None:
        """The ready ring of ``ring`` changed and now has ``shards`` shards."""
        ...

    def objects_assigned(self, ring: str, shard: str, count: int) -> None:
        """``shard`` now owns ``count`` objects."""
        ...

    def drained(self, ring: str, seconds: float) -> None:
        """An object's drain took ``seconds`` (drain label set to acknowledged)."""
        ...


class NoopShardingMetrics:
    """Records nothing."""

    def ring_changed(self, ring: str, shards: int) -> None:
        pass

    def objects_assigned(self, ring: str, shard: str, count: int) -> None:
        pass

    def drained(self, ring: str, seconds: float) -> None:
        pass


#: The shared no-op instance.
NOOP_SHARDING_METRICS: ShardingMetrics = NoopShardingMetrics()
