"""One timer per event loop that cuts short the relays that made no progress in time."""

from __future__ import annotations

import asyncio
from typing import Protocol

from gateway.runtime.settings import Timeouts


class Watched(Protocol):
    """What the watchdog sees of a relay: its bounds, a look at its progress, and its end when
    the process stops (gateway/dataplane/drain.py)."""

    timeouts: Timeouts

    def check(self, now: float) -> None: ...

    def shut_down(self) -> None: ...


class Watchdog:
    """One timer for every relay on an event loop, instead of one (or two) per request: it looks
    at each active relay's progress marks a few times per shortest bound and cuts short the
    ones that made none in time (no first byte, an idle engine, a client that stopped
    reading). A relay costs the request path two time stamps per chunk and a set entry."""

    _of: dict[asyncio.AbstractEventLoop, Watchdog] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.relays: set[Watched] = set()
        self.resolution = 1.0
        self._handle: asyncio.TimerHandle | None = None

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Watchdog:
        watchdog = cls._of.get(loop)
        if watchdog is None:
            for old in [other for other in cls._of if other.is_closed()]:
                del cls._of[old]
            watchdog = cls._of[loop] = cls(loop)
        return watchdog

    def watch(self, relay: Watched) -> None:
        self.relays.add(relay)
        resolution = relay.timeouts.resolution
        if self._handle is None or resolution < self.resolution:
            if self._handle is not None:
                self._handle.cancel()
            self.resolution = resolution
            self._handle = self.loop.call_later(resolution, self._tick)

    def forget(self, relay: Watched) -> None:
        self.relays.discard(relay)

    def _tick(self) -> None:
        self._handle = None
        if not self.relays:
            self.resolution = 1.0
            return
        now = self.loop.time()
        resolution = 1.0
        for relay in list(self.relays):
            relay.check(now)
            resolution = min(resolution, relay.timeouts.resolution)
        self.resolution = resolution
        self._handle = self.loop.call_later(resolution, self._tick)
