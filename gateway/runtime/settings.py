"""The catalog values the request path reads, and the upstream client's bounds."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from gateway.admission.schedulers import SchedulerConfig

STALLED_CLIENT_SECS = 120.0  # a send blocked this long means the client stopped reading


@dataclass(frozen=True, slots=True)
class Timeouts:
    """The upstream client's bounds, from the operator settings (`gateway.*_timeout_secs`)."""

    connect: float = 5.0
    first_byte: float = 600.0  # generous: a long prompt's prefill on a busy engine takes long
    idle: float = 60.0  # between two chunks of an answer that has started
    stalled_client: float = STALLED_CLIENT_SECS

    @property
    def client(self) -> aiohttp.ClientTimeout:
        """aiohttp's part (connecting); the rest is the watchdog's. Made once, not per request."""
        return _client_timeout(self.connect)

    @property
    def resolution(self) -> float:
        """How often the watchdog looks: a quarter of the shortest bound, within 50 ms .. 1 s."""
        shortest = min(self.first_byte, self.idle, self.stalled_client)
        return max(0.05, min(1.0, shortest / 4))


@functools.lru_cache(maxsize=8)
def _client_timeout(connect: float) -> aiohttp.ClientTimeout:
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=None)


@dataclass(slots=True)
class GatewaySettings:
    """The catalog values the request path reads, copied once per change rather than per request."""

    scheduler: SchedulerConfig = field(default_factory=lambda: SchedulerConfig(prioritize=False))
    priority_default: str = "medium"
    upstream_wait_secs: float = 120.0
    connect_timeout: float = 5.0
    first_byte_timeout: float = 600.0
    idle_timeout: float = 60.0
    media_urls: str = "public"  # gateway/dialects/media_urls.py PUBLIC or ANY
    preemption: bool = False  # gateway/dataplane/preemption.py

    @classmethod
    def from_catalog(cls, values: dict[str, Any]) -> GatewaySettings:
        return cls(
            scheduler=SchedulerConfig.from_catalog(values),
            priority_default=str(values["gateway.priority_default"]),
            upstream_wait_secs=float(values["gateway.upstream_wait_secs"]),
            connect_timeout=float(values["gateway.connect_timeout_secs"]),
            first_byte_timeout=float(values["gateway.first_byte_timeout_secs"]),
            idle_timeout=float(values["gateway.idle_timeout_secs"]),
            media_urls=str(values["gateway.media_urls"]),
            preemption=bool(values["gateway.preemption"]),
        )

    @property
    def priority_enabled(self) -> bool:
        return self.scheduler.prioritize

    def timeouts(self) -> Timeouts:
        return Timeouts(
            connect=self.connect_timeout,
            first_byte=self.first_byte_timeout,
            idle=self.idle_timeout,
            stalled_client=STALLED_CLIENT_SECS,
        )
