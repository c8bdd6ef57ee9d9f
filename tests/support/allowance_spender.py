"""One gateway process's worth of allowance requests, for the tests that run several processes
(imported by a spawned child: nothing here may need Django)."""

from __future__ import annotations

import asyncio
import calendar
from typing import Any

from accounts.allowances import Counted, Limit, Measure, Window
from gateway.allowances.counters import AllowanceExceeded, Demand, Ticket
from gateway.allowances.shared import SharedCounters, connect

NOW = float(calendar.timegm((2026, 12, 1, 12, 0, 0))) + 0.5
TOKENS_PER_DAY = Limit(Measure.TOKENS, Window.DAY, 3000)
REQUESTS_PER_MINUTE = Limit(Measure.REQUESTS, Window.MINUTE, 1000)
SLOW_MACHINE = 10.0  # a Redis timeout no loaded test machine reaches (outages have their own)


def demand(*limits: Limit, input: int = 10, output: int = 20, subject: str = "u1") -> Demand:
    return Demand([Counted(subject, limit) for limit in limits], "m", input, output)


def spend(url: str, prefix: str, attempts: int, start: Any, out: Any) -> None:
    """All `attempts` requests at once, each holding its reservation until both processes have
    taken what they could; then every one settles with 15 tokens."""

    async def main() -> tuple[int, int]:
        store = SharedCounters(connect(url, SLOW_MACHINE), prefix=prefix, clock=lambda: NOW)
        store.timeout = SLOW_MACHINE

        async def one() -> Ticket | None:
            try:
                return await store.admit(demand(TOKENS_PER_DAY, REQUESTS_PER_MINUTE))
            except AllowanceExceeded:
                return None

        start.wait()
        tickets = await asyncio.gather(*(one() for _ in range(attempts)))
        admitted = [t for t in tickets if t is not None]
        start.wait()
        for ticket in admitted:
            ticket.settle(10, 5)
        await store.drain()
        fallbacks = store.fallbacks
        await store.aclose()
        return len(admitted), fallbacks

    out.put(asyncio.run(main()))
