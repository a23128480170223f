"""Sharding metrics in ``prometheus_client`` (the ``metrics`` extra).
Imported on use, never by :mod:`informers.toolkit.sharding`."""

from __future__ import annotations

from typing import Any

__all__ = ["PrometheusShardingMetrics"]


class PrometheusShardingMetrics:
    """A :class:`~informers.toolkit.sharding.ShardingMetrics` on ``prometheus_client``:

    ``sharding_ring_shards`` (gauge, by ring)
        ready shards in the ring.
    ``sharding_rebalances_total`` (counter, by ring)
        ring changes seen.
    ``sharding_objects`` (gauge, by ring and shard)
        objects assigned to the shard.
    ``sharding_drain_seconds`` (histogram, by ring)
        from setting an object's drain label to its acknowledgement.

    Registered in ``registry`` (default: the global one) when made; one per
    registry. Thread-safe. :class:`ImportError` naming the extra without
    ``prometheus_client``.
    """

    def __init__(self, registry: Any = None) -> None:
        try:
            import prometheus_client  # noqa: PLC0415 - an optional extra, imported on use
        except ImportError as exc:
            raise ImportError(
                "PrometheusShardingMetrics needs prometheus_client: "
                "pip install 'kube-informers[metrics]'"
            ) from exc
        target = prometheus_client.REGISTRY if registry is None else registry
        self._shards = prometheus_client.Gauge(
            "sharding_ring_shards", "Ready shards in the ring.", ["ring"], registry=target
        )
        self._rebalances = prometheus_client.Counter(
            "sharding_rebalances_total", "Changes of the ready ring.", ["ring"], registry=target
        )
        self._objects = prometheus_client.Gauge(
            "sharding_objects", "Objects assigned to a shard.", ["ring", "shard"], registry=target
        )
        self._drain = prometheus_client.Histogram(
            "sharding_drain_seconds",
            "From an object's drain label to the old shard's acknowledgement.",
            ["ring"],
            registry=target,
        )

    def ring_changed(self, ring: str, shards: int) -> None:
        self._shards.labels(ring=ring).set(shards)
        self._rebalances.labels(ring=ring).inc()

    def objects_assigned(self, ring: str, shard: str, count: int) -> None:
        self._objects.labels(ring=ring, shard=shard).set(count)

    def drained(self, ring: str, seconds: float) -> None:
        self._drain.labels(ring=ring).observe(seconds)
