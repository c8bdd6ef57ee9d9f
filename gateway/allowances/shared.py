"""Allowance counters shared by every gateway process on Redis (AIPLANE_REDIS_URL).

The same counters as gateway/allowances/counters.py's `MemoryCounters`, kept on Redis so that a
limit holds over all processes and hosts: the same fixed UTC windows (worked out by the process,
from its clock, and handed to Redis), the same all-or-nothing check, the same reservations. Each
operation is one Lua script, so it is atomic and two processes can never both take the last unit:

- ADMIT checks every limit of a request and takes from all of them, or from none;
- SETTLE releases a request's reservations and counts what the engine reported (a release is a
  settle that counts nothing).

One limit of one subject is a hash `<prefix>allowance:<counter key>` (its window `w`, what the
window used `u`, what requests in flight reserved `r`) that expires when its window ends (later
while something is reserved), and a sorted set `…|held` of the reservations in flight by ticket,
each expiring RESERVATION_HOLD_SECS after it was taken: a process that dies with requests in
flight does not keep their share forever. A settle removes its ticket's entries, so it counts
once even if an expired one was already dropped.

When Redis cannot be reached (or does not answer within REDIS_TIMEOUT) a request is counted by
this process alone, in memory, with a warning and the `aiplane_allowance_counters_local` gauge:
the gateway keeps serving, and each process then holds every limit on its own (so all of them
together may allow up to their number times a limit) until Redis answers again; Redis is tried
again at most every RETRY_SECS. A settle that cannot be sent is dropped (counted in
`aiplane_allowance_settles_lost`); its reservation ends with its hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Sequence

import redis.asyncio as aioredis

from accounts.allowances import Counted
from gateway.allowances.counters import (
    AllowanceExceeded,
    Demand,
    MemoryCounters,
    Standing,
    Ticket,
    Windows,
    exceeded,
)
from gateway.core.lua import script
from gateway.core.redis_clients import AWAY, connect_async

log = logging.getLogger("aiplane.gateway")

REDIS_TIMEOUT = 1.0  # a request never waits longer than this for Redis
CONNECTIONS = 32  # to Redis, per process
RETRY_SECS = 1.0  # while Redis is unreachable, how often a request tries it again
# How long a reservation outlives a process that never settled it; a request running longer
# keeps running, and its share is free again from then on.
RESERVATION_HOLD_SECS = 3600.0

# KEYS: per limit, its hash and its held set. ARGV: now (ms), hold until (ms), ticket, then per
# limit: window number, window end (ms), cap, need, kind (0 requests).
# Returns {1, left...} (each limit's remainder after taking) or {0, i, left, ...} (the refusals).
ADMIT = script(__file__, "admit")

# KEYS: per reservation, its limit's hash and held set. ARGV: now (ms), ticket, then per
# reservation: window number, window end (ms), reserved, used.
SETTLE = script(__file__, "settle")


def connect(url: str, timeout: float = REDIS_TIMEOUT) -> aioredis.Redis:
    """An asyncio client for the request path: short timeouts, one reconnect on a stale
    connection (the store falls back on anything more), and a bounded pool that requests wait
    for (a script takes a connection for one round trip)."""
    return connect_async(url, timeout, connections=CONNECTIONS)  # type: ignore[no-any-return]


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


class SharedCounters:
    """Allowance counters on Redis, with this process's own in memory while Redis is away."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = "aiplane:",
        clock: Callable[[], float] = time.time,
        timeout: float = REDIS_TIMEOUT,
        retry_secs: float = RETRY_SECS,
    ) -> None:
        self.client = client
        self.prefix = prefix + "allowance:"
        self.clock = clock  # unix time: windows are calendar ones
        self.timeout = timeout
        self.retry_secs = retry_secs
        self.windows = Windows()
        self.local = MemoryCounters(clock)  # while Redis is unreachable
        self.fallback = False
        self.fallbacks = 0  # times this process counted on its own
        self.lost_settles = 0
        self._retry_at = 0.0  # monotonic
        self._admit = client.register_script(ADMIT)
        self._settle = client.register_script(SETTLE)
        self._sending: set[asyncio.Future[None]] = set()

    # ----- admitting ---------------------------------------------------------------------

    async def admit(self, demand: Demand) -> Ticket:
        if self.fallback:
            if time.monotonic() < self._retry_at:
                return self.local.admit_now(demand)
            # This request tries Redis again; those arriving meanwhile do not wait for it.
            self._retry_at = time.monotonic() + self.retry_secs
        # Shielded: a request that leaves (or times out) while its script runs still releases
        # what the script took, once it is known.
        shared = asyncio.ensure_future(self._admit_shared(demand))
        try:
            ticket = await asyncio.wait_for(asyncio.shield(shared), self.timeout)
        except AllowanceExceeded:
            self._reached()
            raise
        except AWAY as err:
            shared.add_done_callback(_release_late)
            self._unreachable(err)
            return self.local.admit_now(demand)
        except asyncio.CancelledError:
            shared.add_done_callback(_release_late)
            raise
        self._reached()
        return ticket

    async def _admit_shared(self, demand: Demand) -> Ticket:
        now = self.clock()
        spans = self.windows.all(now)
        model = demand.model
        input_, output = demand.input, demand.output
        needs = (1, input_ + output, input_, output)
        ticket_id = uuid.uuid4().hex
        keys: list[str] = []
        args: list[int | str] = [_ms(now), _ms(now + RESERVATION_HOLD_SECS), ticket_id]
        applying: list[tuple[Counted, str, int, float]] = []
        for counted in demand.limits:
            limit = counted.limit
            if limit.model is not None and limit.model != model:
                continue
            number, end = spans[counted.span]
            need = min(needs[counted.kind], limit.limit)
            key = self.prefix + counted.key
            keys += (key, key + "|held")
            args += (number, _ms(end), limit.limit, need, counted.kind)
            applying.append((counted, key, need, end))
        if not applying:
            return Ticket(self, (ticket_id, []), None, None, input_)
        result = [int(x) for x in await self._admit(keys=keys, args=args)]
        if result[0] == 0:
            pairs = zip(result[1::2], result[2::2], strict=True)
            refusals = [(applying[i - 1], left) for i, left in pairs]
            # Of several limits exceeded, the one that frees up last says when to retry.
            (counted, _, need, end), left = max(refusals, key=lambda r: r[0][3])
            raise exceeded(counted, model, need, left, now, end - now)
        held: list[tuple[str, int, int, int]] = []
        requests = tokens = None
        for (counted, key, need, end), left in zip(applying, result[1:], strict=True):
            standing = Standing(counted.limit.limit, left, end)
            if counted.kind == 0:
                if requests is None or left < requests.remaining:
                    requests = standing
                continue
            held.append((key, counted.kind, counted.span, need))
            if tokens is None or left < tokens.remaining:
                tokens = standing
        return Ticket(self, (ticket_id, held), requests, tokens, input_)

    def _unreachable(self, err: BaseException) -> None:
        self._retry_at = time.monotonic() + self.retry_secs
        if not self.fallback:
            self.fallback = True
            self.fallbacks += 1
            log.warning(
                "Redis is unreachable (%s): allowances count in this process only until it "
                "answers again",
                err or type(err).__name__,
            )

    def _reached(self) -> None:
        if self.fallback:
            self.fallback = False
            log.warning("Redis answers again: allowances count over every process")

    # ----- settling ----------------------------------------------------------------------

    def settle(
        self, held: tuple[str, list[tuple[str, int, int, int]]], input_: int | None,
        output: int | None,
    ) -> None:  # fmt: skip
        """Send the release and the count in the background (the request's answer is done)."""
        ticket_id, reservations = held
        if not reservations:
            return
        now = self.clock()
        spans = self.windows.all(now)
        unknown = input_ is None and output is None
        input_, output = input_ or 0, output or 0
        used = (1, input_ + output, input_, output)
        keys: list[str] = []
        args: list[int | str] = [_ms(now), ticket_id]
        for key, kind, span, reserved in reservations:
            number, end = spans[span]
            keys += (key, key + "|held")
            args += (number, _ms(end), reserved, reserved if unknown else used[kind])
        sending = asyncio.ensure_future(self._send_settle(keys, args))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)

    async def _send_settle(self, keys: list[str], args: list[int | str]) -> None:
        try:
            await asyncio.wait_for(self._settle(keys=keys, args=args), self.timeout)
        except AWAY as err:
            self.lost_settles += 1
            log.debug("could not settle an allowance reservation on Redis: %r", err)

    async def drain(self) -> None:
        """Wait for the settles on their way (tests; shutting down)."""
        while self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.drain(), self.timeout)
        await self.client.aclose()

    # ----- reading -----------------------------------------------------------------------

    async def read(self, limits: Sequence[Counted]) -> list[tuple[int, int]]:
        """(used in the current window, reserved) of each limit; this process's own counts
        while Redis is unreachable."""
        if not limits:
            return []
        now = self.clock()
        pipe = self.client.pipeline(transaction=False)
        for counted in limits:
            pipe.hmget(self.prefix + counted.key, "w", "u", "r")
        try:
            rows = await asyncio.wait_for(pipe.execute(), self.timeout)
        except AWAY:
            return await self.local.read(limits)
        out: list[tuple[int, int]] = []
        for counted, (window, used, reserved) in zip(limits, rows, strict=True):
            current = self.windows.current(counted.limit.window, now)[0]
            same = window is not None and int(window) == current
            out.append((int(used or 0) if same else 0, int(reserved or 0)))
        return out


def _release_late(shared: asyncio.Future[Ticket]) -> None:
    """An admission whose request is gone by the time Redis answered gives its share back."""
    if shared.cancelled() or shared.exception() is not None:
        return
    shared.result().settle(None, None)
