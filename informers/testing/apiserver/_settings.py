"""The emulator's tunables, read by the request handlers on every request."""

from __future__ import annotations

__all__ = ["Settings"]


class Settings:
    """Tunables the handlers read (plain attributes; reads are atomic, and a
    change applies to requests that read it afterwards)."""

    def __init__(
        self,
        *,
        bookmark_interval: float,
        watch_buffer_size: int,
        max_body_bytes: int,
        rv_wait_seconds: float,
        heartbeat: float,
    ) -> None:
        self.bookmark_interval = bookmark_interval
        self.watch_buffer_size = watch_buffer_size
        self.max_body_bytes = max_body_bytes
        self.rv_wait_seconds = rv_wait_seconds
        self.heartbeat = heartbeat
        self.list_latency = 0.0
        self.watch_list_mode = "on"
        #: The ShardedListAndWatch feature gate: serve ``shardSelector``.
        self.sharded_list_and_watch = False
        #: How long before a watch's deadline the last bookmark goes out.
        self.deadline_bookmark = 2.0
        #: Deletions wait for controllers (see ``ApiServer.deletion_lifecycle``).
        self.deletion_lifecycle = False
        #: Seconds the simulated kubelet takes to end a terminating pod.
        self.pod_termination_delay = 0.1
