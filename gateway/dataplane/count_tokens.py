"""POST /v1/messages/count_tokens, counted at an engine on a bounded path beside the slots.

Counting generates nothing, so a count waits for no slot; but tokenising a body of up to 32 MB
(Anthropic's own limit for counting, as for Messages: clients send the same conversation to
both) is work at the engine all the same, so it is bounded:

- each backend is asked at most COUNTS_PER_BACKEND counts at once by this process, never more
  than its max_inflight; when every backend of the route that serves Messages has that many,
  the gateway answers its own estimate (messages.count_tokens_estimate) at once rather than
  wait or send more;
- the counts in flight are `aiplane_backend_counting`, beside `aiplane_backend_inflight`;
- a limited caller's requests limits apply (`count`): a count is a request, over them the same
  429 as on /v1/messages, and it reserves and charges no tokens.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from gateway.admission.types import Route
from gateway.allowances import counters
from gateway.allowances.counters import rate_limit_headers
from gateway.core.errors import BadRequest
from gateway.core.scheduling_fields import strip_scheduling
from gateway.dataplane.admit import take_allowance
from gateway.dataplane.identity import check_allowlist
from gateway.dialects import media_urls
from gateway.dialects.anthropic import count_tokens as anthropic_count_tokens
from gateway.dialects.anthropic import errors, validate
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.plan import dump
from gateway.observability.records import Entry
from gateway.runtime.registry import Upstream
from gateway.runtime.runtime import Runtime
from gateway.runtime.settings import Timeouts

PATH = "/v1/messages/count_tokens"


async def count(
    rt: Runtime,
    caller: Any,
    surface: Surface,
    body: dict[str, Any],
    record: Entry,
    *,
    cls: int,
    large: bool,
) -> tuple[int, list[tuple[bytes, bytes]]]:
    """A count of the body's tokens, by a backend that serves Messages itself, else estimated
    (count_tokens_estimate), and the caller's rate-limit headers when it has an allowance
    (taken at the caller's class `cls`)."""
    try:
        validate.validate(body, counting=True)
    except errors.MessagesError as err:
        raise BadRequest(err.message) from None
    # A counting engine may render the prompt, fetching its images to count them.
    media_urls.refuse_inside(media_urls.in_messages(body), rt.settings.media_urls)
    model = str(body["model"])
    record.model = model
    check_allowlist(caller, model)
    route = rt.snapshot.resolve(surface.kind, model, caller.groups)
    extra: list[tuple[bytes, bytes]] = []
    if caller.allowance:
        demand = counters.demand(caller.allowance, model)
        ticket = await take_allowance(rt, demand, cls, anthropic=True)
        ticket.settle(0, 0)  # it reserved nothing: its requests counted when admitted
        extra = rate_limit_headers(
            ticket.requests, ticket.tokens, rt.allowances.clock(), anthropic=True
        )
    tokens = await engine_count(rt, route, body, record, large=large)
    if tokens is None:
        tokens = anthropic_count_tokens.count_tokens_estimate(body)
    return tokens, extra


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
