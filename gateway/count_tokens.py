"""POST /v1/messages/count_tokens at an engine: a bounded path beside the slots.

Counting generates nothing, so a count waits for no slot; but tokenising a body of up to 32 MB
(Anthropic's own limit for counting, as for Messages: clients send the same conversation to
both) is work at the engine all the same, so it is bounded:

- each backend is asked at most COUNTS_PER_BACKEND counts at once by this process, never more
  than its max_inflight; when every backend of the route that serves Messages has that many,
  the gateway answers its own estimate (messages.count_tokens_estimate) at once rather than
  wait or send more;
- the counts in flight are `aiplane_backend_counting`, beside `aiplane_backend_inflight`;
- a limited caller's requests limits apply (gateway/asgi.py): a count is a request, over them
  the same 429 as on /v1/messages, and it reserves and charges no tokens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import aiohttp

from accounts.allowances import Counted, Measure
from gateway.activity import Entry
from gateway.admission import Route
from gateway.allowances import Demand
from gateway.errors import BadRequest
from gateway.scheduling_fields import strip_scheduling
from gateway.surfaces import dump

if TYPE_CHECKING:
    from gateway.registry import Upstream
    from gateway.relay import Timeouts
    from gateway.runtime import Runtime

PATH = "/v1/messages/count_tokens"
# A small share of a backend: counting must not crowd out generation nor pile up at an engine.
COUNTS_PER_BACKEND = 2


class CountSeats:
    """The counts in flight at each backend from this process (its slot's name)."""

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy: dict[str, int] = {}

    def take(self, backend: str, max_inflight: int) -> bool:
        """A seat at `backend`, or False when it counts as many as it may already."""
        taken = self.busy.get(backend, 0)
        if taken >= min(COUNTS_PER_BACKEND, max_inflight):
            return False
        self.busy[backend] = taken + 1
        return True

    def give_back(self, backend: str) -> None:
        left = self.busy[backend] - 1
        if left:
            self.busy[backend] = left
        else:
            del self.busy[backend]


def demand(allowance: Sequence[Counted], model: str) -> Demand:
    """What a count asks of an allowance: one request of each requests limit, no tokens."""
    return Demand([c for c in allowance if c.limit.measure is Measure.REQUESTS], model, 0, 0)


async def engine_count(
    rt: Runtime, route: Route, body: dict[str, Any], record: Entry, *, large: bool = False
) -> int | None:
    """The count of the first backend of the route that serves Messages and has a seat free,
    or None when none has (or none answers one)."""
    session = rt.session
    if session is None:
        return None
    seats = rt.counting
    for target in route.usable_targets():
        slot = target.slot
        up = rt.snapshot.upstreams.get(slot.name)
        if up is None or not up.native("messages"):
            continue
        if not seats.take(slot.name, slot.max_inflight):
            continue  # counting all it may: another backend, or the estimate
        try:
            payload = await _payload(body, target.model, large)
            count = await _ask(session, up, payload, rt.timeouts)
        finally:
            seats.give_back(slot.name)
        if count is not None:
            record.backend = up.name
            return count
    return None


async def _payload(body: dict[str, Any], model: str, large: bool) -> bytes:
    payload = {**body, "model": model}
    strip_scheduling(payload)
    try:
        if large:  # as the relay does: a large body is serialized off the event loop
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, dump, payload)  # type: ignore[no-any-return]
        return dump(payload)
    except RecursionError:
        # It decoded at a shallower stack; re-encoding here may still run out of it.
        raise BadRequest("The request body is nested too deeply.") from None


async def _ask(
    session: aiohttp.ClientSession, up: Upstream, payload: bytes, timeouts: Timeouts
) -> int | None:
    try:
        async with session.post(
            up.url(PATH),
            data=payload,
            headers=up.headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(
                total=timeouts.connect + timeouts.idle, sock_connect=timeouts.connect
            ),
        ) as resp:
            answer = await resp.json(content_type=None) if resp.status == 200 else None
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
        return None
    count = answer.get("input_tokens") if isinstance(answer, dict) else None
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    return None
