"""route_or_wait: the async layer over the queue's synchronous core."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from gateway.admission.queue import AdmissionQueue
from gateway.admission.types import (
    ADMITTED,
    CANCELLED,
    EXPIRED,
    FAILED,
    REJECTED,
    WAITING,
    Acquired,
    AdmissionError,
    QueueCancelled,
    QueueTimeout,
    RouteGone,
    TurnedAway,
    Waiter,
)

# ----- the async layer --------------------------------------------------------------------

TIMED_OUT = "no backend slot became free within the wait budget"


async def route_or_wait(
    queue: AdmissionQueue,
    w: Waiter,
    *,
    gone: asyncio.Future[object] | None = None,
    on_wait: Callable[[Waiter], object] | None = None,
) -> Acquired:
    """Wait for a slot until admitted, the deadline passes, or `gone` resolves (client left).

    Holds no slot while waiting; whatever the exit, a slot assigned in the meantime is released.
    `on_wait` hears of a waiter that found no slot and waits (preemption looks for one then).
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Waiter] = loop.create_future()

    def wake(waiter: Waiter) -> None:
        if not done.done():
            done.set_result(waiter)

    w.on_admit = wake
    acquired = await queue.submit_async(w)
    if acquired is not None:
        w.on_admit = None
        return acquired
    if w.state in (EXPIRED, FAILED):
        raise _left(w)
    if on_wait is not None and w.state == WAITING:
        on_wait(w)
    timeout = max(0.0, w.deadline - queue.clock())
    waits: set[asyncio.Future[object]] = {done}  # type: ignore[arg-type]
    if gone is not None:
        waits.add(gone)
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        queue.cancel(w, CANCELLED)
        raise
    finally:
        w.on_admit = None
    return _after_waiting(queue, w, gone)


def _after_waiting(
    queue: AdmissionQueue, w: Waiter, gone: asyncio.Future[object] | None
) -> Acquired:
    """The slot it was given, unless the client left meanwhile; else why it has none."""
    client_left = gone is not None and gone.done()
    if w.state == ADMITTED and w.acquired is not None:
        if client_left:
            queue.cancel(w, CANCELLED)
            raise QueueCancelled("the client went away")
        return w.acquired
    if w.state == WAITING:
        if client_left:
            queue.cancel(w, CANCELLED)
            raise QueueCancelled("the client went away")
        queue.cancel(w, EXPIRED)
        raise QueueTimeout(TIMED_OUT)
    raise _left(w)


def turn_away(queue: AdmissionQueue, why: str) -> int:
    """The process stops: every waiter here leaves the line with `TurnedAway`; how many left.

    Each one's `route_or_wait` wakes and raises it, so its client gets an answer (503) and its
    record is written, rather than being cancelled with the server's tasks."""
    waiters = queue.waiters()
    for w in waiters:
        w.refusal = TurnedAway(why)
        queue.cancel(w, REJECTED)
    return len(waiters)


def _left(w: Waiter) -> AdmissionError:
    """Why a waiter left the line without a slot, as the error its caller gets."""
    if w.state == EXPIRED:
        return QueueTimeout(TIMED_OUT)
    if w.state == FAILED:
        return RouteGone("the model is no longer served")
    if w.state == REJECTED and w.refusal is not None:
        return w.refusal  # a higher-class newcomer took its place, or the process stops
    return QueueCancelled("the request was cancelled")
