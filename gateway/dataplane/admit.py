"""A request admitted and forwarded: a slot, the relay, another replica on an early failure.

`admit_and_forward` waits for a slot (gateway/admission/wait.py), relays the request to the
backend of that slot and, when the backend failed before the client got a byte (`Retryable`),
asks for a slot on another replica, at most MAX_RETRIES times. How each way of not getting a
slot ends is one table, ADMISSION_ERRORS. What the admission needs of a route it is given here
as names (`keeping`, `route_names`): the dialects know no route.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from gateway.admission.types import (
    AdmissionError,
    QueueCancelled,
    QueueFull,
    QueueTimeout,
    Route,
    RouteGone,
    TurnedAway,
    Waiter,
)
from gateway.admission.wait import route_or_wait
from gateway.allowances.counters import (
    AllowanceExceeded,
    Demand,
    Ticket,
    estimate,
    rate_limit_headers,
)
from gateway.core.asgi import Send
from gateway.core.errors import (
    CapacityTimeout,
    GatewayError,
    NoHealthyBackend,
    ShuttingDown,
    TooManyRequests,
    Unavailable,
    UpstreamError,
)
from gateway.core.outcomes import Outcome
from gateway.dataplane.preemption import MAX_PREEMPTIONS, PREEMPTED_HEADER, preempt_for
from gateway.dataplane.relay import NOT_STARTED, Preempted, Relay, Retryable
from gateway.dialects.anthropic.dialect import MESSAGES
from gateway.dialects.openai.dialect import Surface
from gateway.dialects.stored_state import RequestState
from gateway.observability.records import Entry
from gateway.runtime.registry import Upstream
from gateway.runtime.runtime import Runtime

log = logging.getLogger("aiplane.gateway")

MAX_RETRIES = 2  # another replica, at most twice, for failures before any byte was sent


async def admit_and_forward(
    rt: Runtime,
    send: Send,
    surface: Surface,
    body: dict[str, Any],
    w: Waiter,
    gone: asyncio.Future[Any],
    record: Entry,
    *,
    large: bool = False,
    extra_headers: list[tuple[bytes, bytes]] | None = None,
    ticket: Ticket | None = None,
    state: RequestState | None = None,
) -> None:
    """Wait for a slot, relay, and on a failure before any byte try another replica."""
    queue = rt.queue
    failure: Retryable | None = None  # the last replica's failure, the answer if none is left
    retries = preempted = 0
    on_wait = preempt_for if rt.settings.preemption else None
    while True:
        try:
            acquired = await route_or_wait(queue, w, gone=gone, on_wait=on_wait)
        except NO_SLOT as err:
            error = ADMISSION_ERRORS[type(err)](err, rt, w, record, failure)
            if error is None:
                return
            raise error from None
        if rt.closing:  # the drain was cut short while this one was on its way: not here
            acquired.release()
            raise ShuttingDown(NOT_STARTED, retry_after=1)
        if not record.outcome:
            record.outcome = Outcome.IMMEDIATE if w.waited == 0 else Outcome.WAITED
        record.queue_ms = w.waited * 1000
        record.score = queue.score(w)
        up = rt.snapshot.upstreams.get(acquired.backend)
        try:
            if up is None or rt.session is None:
                acquired.release()
                raise Retryable(
                    f"backend {acquired.backend} was removed",
                    UpstreamError(f"The backend {acquired.backend} was removed."),
                )
            relay = Relay(
                rt.session, up, acquired, send=send, gone=gone, record=record,
                timeouts=rt.timeouts, extra_headers=extra_headers, ticket=ticket,
                state=state,
                preemptible=preempted < MAX_PREEMPTIONS and body.get("stream") is True,
            )  # fmt: skip
            await _relayed(rt, relay, up, surface, body, large)
            return
        except Preempted:
            # Back in line in its place, on any backend (the one it left was not at fault).
            preempted += 1
            extra_headers = [*(extra_headers or ()), PREEMPTED_HEADER]
            w = queue.retry_waiter(w, None)
        except Retryable as why:
            failure = why
            retries += 1
            w = _retry(rt, w, acquired.backend, why, record, retries)


async def _relayed(
    rt: Runtime, relay: Relay, up: Upstream, surface: Surface, body: dict[str, Any], large: bool
) -> None:
    """The relay run; the backend's failures are noted as its last errors."""
    record = relay.record
    try:
        await relay.run(surface, body, large=large)
    except GatewayError as err:
        if err.status >= 500 and not isinstance(err, ShuttingDown):  # the backend's fault
            rt.errors.note(up.name, err.message, "request")
        raise
    finally:
        if record.outcome == Outcome.UPSTREAM_ERROR:  # broken mid-answer
            rt.errors.note(up.name, record.error or "", "request")
        if up.spec.capacity_auto:
            _latency(rt, relay, up)


def _latency(rt: Runtime, relay: Relay, up: Upstream) -> None:
    """What a learned capacity hears of a request (gateway/runtime/capacity.py): a stream's
    time to its first byte after dispatch and between its chunks; a whole answer's time per
    output token (its first byte is its end, so it says nothing of the engine's queue)."""
    record = relay.record
    if record.first_byte_ms is None:
        return
    after_first = time.time() - record.started - record.first_byte_ms / 1000
    if relay.body_kind == "events":
        ttfb = max(0.0, (record.first_byte_ms - record.queue_ms) / 1000)
        per_chunk = after_first / (relay.chunks - 1) if relay.chunks > 1 else None
        rt.capacity.answered(up.name, ttfb, per_chunk)
    elif record.output_tokens:
        whole = (record.first_byte_ms - record.queue_ms) / 1000 + after_first
        rt.capacity.answered(up.name, None, whole / record.output_tokens)


def _retry(
    rt: Runtime, w: Waiter, failed: str, why: Retryable, record: Entry, retries: int
) -> Waiter:
    """The retry policy: the same request for another replica, or the failure as the answer."""
    rt.errors.note(failed, f"{why.error.message} ({why})", "request")
    w = rt.queue.retry_waiter(w, failed)
    # The topology may have changed since it arrived: retry on today's route, and not at all
    # when the model or the caller's access is gone.
    route = rt.snapshot.route_for_key(w.route.key)
    if route is None:
        raise _withdrawn(record.model) from None
    w.route = route
    if retries > MAX_RETRIES or not w.route.usable_targets(w.excluded):
        record.backend = failed
        raise why.error from None
    log.info("retrying %s on another replica after %s", record.model, why)
    return w


def expired(w: Waiter, model: str) -> GatewayError:
    """The wait budget ran out (the gateway's, or the shorter one the request asked for):
    because nothing was free, or nothing was up."""
    route, wait = w.route, w.deadline - w.arrival
    retry_after = max(1.0, min(wait, 30.0))
    if not route.has_usable():
        return NoHealthyBackend(
            f"No healthy backend for '{model}' came back within {_secs(wait)}; "
            "try again later.",
            retry_after=retry_after,
        )
    return CapacityTimeout(
        f"No capacity for '{model}' within {_secs(wait)}; try again later.",
        retry_after=retry_after,
    )


def _secs(wait: float) -> str:
    return f"{wait:.0f} seconds" if wait >= 10 or wait == int(wait) else f"{wait:.1f} seconds"


def _withdrawn(model: str) -> Unavailable:
    return Unavailable(f"The model '{model}' is no longer available to you.", retry_after=5)


# ----- no slot: each admission error as the client's answer ---------------------------------


def _waited(rt: Runtime, w: Waiter, record: Entry) -> None:
    record.queue_ms = (rt.queue.clock() - w.arrival) * 1000


def _timed_out(
    err: QueueTimeout, rt: Runtime, w: Waiter, record: Entry, failure: Retryable | None
) -> GatewayError:
    if failure is not None:
        # Its budget ran out while a backend failed it: that failure is the answer.
        return failure.error
    _waited(rt, w, record)
    return expired(w, record.model)


def _cancelled(
    err: QueueCancelled, rt: Runtime, w: Waiter, record: Entry, failure: Retryable | None
) -> None:
    record.outcome = Outcome.CANCELLED
    record.status = 499  # the client closed the request; nothing is sent
    _waited(rt, w, record)


def _full(
    err: QueueFull, rt: Runtime, w: Waiter, record: Entry, failure: Retryable | None
) -> GatewayError:
    return TooManyRequests(f"The gateway queue is full: {err.reason}.", retry_after=err.retry_after)


def _route_gone(
    err: RouteGone, rt: Runtime, w: Waiter, record: Entry, failure: Retryable | None
) -> GatewayError:
    _waited(rt, w, record)
    return _withdrawn(record.model)


def _turned_away(
    err: TurnedAway, rt: Runtime, w: Waiter, record: Entry, failure: Retryable | None
) -> GatewayError:
    _waited(rt, w, record)
    return ShuttingDown(NOT_STARTED, retry_after=1)


# What the client gets when no slot came (None: nothing, it left), given the error, the
# runtime, the waiter, the record and the last replica's failure, if one failed it.
ADMISSION_ERRORS: dict[type[AdmissionError], Callable[..., GatewayError | None]] = {
    QueueTimeout: _timed_out,
    QueueCancelled: _cancelled,
    QueueFull: _full,
    RouteGone: _route_gone,
    TurnedAway: _turned_away,
}

NO_SLOT = tuple(ADMISSION_ERRORS)


# ----- before admission ---------------------------------------------------------------------


async def excluded_by_state(
    rt: Runtime,
    surface: Surface,
    body: dict[str, Any],
    route: Route,
    state: RequestState,
    model: str,
) -> frozenset[str]:
    """The backends a request that keeps state may not run on; refused now when that leaves
    none up."""
    upstreams = rt.snapshot.upstreams
    excluded = await surface.admit_state(body, route_names(route), keeping(route, upstreams), state)
    if excluded and not route.usable_targets(excluded):
        raise NoHealthyBackend(
            f"The backend that keeps this conversation for '{model}' is down or "
            "disabled right now; try again later.",
            retry_after=5,
        )
    return excluded


async def allowance_ticket(
    rt: Runtime,
    caller: Any,
    surface: Surface,
    body: dict[str, Any],
    raw: bytes,
    model: str,
    cls: int,
) -> Ticket:
    """Take the request's estimated share of its allowance, or refuse it (429) before it waits."""
    input_tokens, output_tokens = estimate(body, len(raw), embedding=surface.kind != "chat")
    demand = Demand(caller.allowance, model, input_tokens, output_tokens)
    return await take_allowance(rt, demand, cls, anthropic=surface is MESSAGES)


async def take_allowance(rt: Runtime, demand: Demand, cls: int, *, anthropic: bool) -> Ticket:
    """Take the request's share of its allowance, or refuse it (429) before it waits."""
    try:
        return await rt.allowances.admit(demand)
    except AllowanceExceeded as err:
        rt.metrics.refused_by_allowance(err.reason, cls)
        err.extra_headers = rate_limit_headers(
            err.requests, err.tokens, rt.allowances.clock(), anthropic=anthropic
        )
        raise


def route_names(route: Route) -> frozenset[str]:
    """Every backend of a route, its fallbacks included."""
    return frozenset(t.slot.name for t in (*route.primary, *route.fallback))


def keeping(route: Route, upstreams: dict[str, Any], *, usable: bool = False) -> frozenset[str]:
    """The backends of a route that keep Responses state (only those up, with `usable`)."""
    targets = route.usable_targets() if usable else (*route.primary, *route.fallback)
    return frozenset(
        t.slot.name
        for t in targets
        if (up := upstreams.get(t.slot.name)) is not None and up.keeps_responses
    )
