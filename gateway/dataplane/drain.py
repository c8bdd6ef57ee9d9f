"""Stopping a process without losing its requests: the drain a SIGTERM starts.

    serving ──SIGTERM──▶ draining ──grace──▶ not accepting ──┬─ all done ───────────▶ exit 0
                         (/readyz 503)       (what runs and   ├─ drain timeout ─┐
                                              waits here      └─ second signal ─┴─▶ cut short
                                              goes on)                              ▶ exit 0

Draining: /readyz answers 503 at once, so a balancer that polls it (HAProxy, Kubernetes) takes
the process out; for `grace` seconds it still accepts (a balancer that only learns from refused
connections, like nginx, loses nothing either way), then the server closes its listener and
idle connections, and waits for what it holds. A request already waiting keeps its place in
line and is served or expires as before; a stream already running runs to its end.

Cut short (the drain timeout, counted from the signal, or a second signal): every waiter here
is turned away with 503 `shutting_down`, every running answer is ended as a broken one is (a
stream with its surface's error event), and any request still on its way to admission is
refused the same way, so each client hears why and each record is written before the server's
own shutdown stops the runtime (the records' last flush, leaving the group on Redis).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from gateway.admission.wait import turn_away
from gateway.dataplane.watchdog import Watchdog
from gateway.runtime.runtime import Runtime

log = logging.getLogger("aiplane.gateway")

WHY = "the gateway process is shutting down"


@dataclass(frozen=True, slots=True)
class DrainSettings:
    """AIPLANE_DRAIN_TIMEOUT and AIPLANE_DRAIN_GRACE (aiplane/settings.py)."""

    timeout: float = 600.0
    grace: float = 0.0

    @property
    def backstop(self) -> float:
        """The server's own graceful-shutdown bound: what was cut short has this long more to
        send its last bytes before the server cancels it."""
        return self.timeout + 30.0


class Drain:
    """One process's drain; `begin` on the first signal, `cut_short` on the second."""

    def __init__(self, runtime: Runtime, settings: DrainSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self._timers: list[asyncio.TimerHandle] = []

    def begin(self, stop_accepting: Callable[[], None]) -> None:
        """Readiness says no now; the server stops accepting after the grace; the rest is cut
        short at the drain timeout. On the event loop."""
        rt = self.runtime
        if rt.draining:
            return
        rt.draining = True
        loop = asyncio.get_running_loop()
        s = self.settings
        log.info(
            "draining: %d waiting, %d running; accepting for %g s more, cut short after %g s",
            rt.queue.waiting,
            len(Watchdog.of(loop).relays),
            s.grace,
            s.timeout,
        )
        self._timers = [
            loop.call_later(s.grace, stop_accepting),
            loop.call_later(s.timeout, self.cut_short),
        ]

    def cut_short(self) -> None:
        """End what is left, each with its answer and its record. On the event loop."""
        rt = self.runtime
        if rt.closing:
            return
        rt.draining = rt.closing = True
        for timer in self._timers:
            timer.cancel()
        turned = turn_away(rt.queue, WHY)
        relays = list(Watchdog.of(asyncio.get_running_loop()).relays)
        for relay in relays:
            relay.shut_down()
        log.warning(
            "drain cut short: %d waiting turned away, %d running ended", turned, len(relays)
        )
