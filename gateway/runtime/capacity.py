"""Learned capacity at work: every `max_inflight: auto` backend's controller
(gateway/engines/capacity.py), fed by its engine's gauges and its requests' latency, setting
the backend's slot limit, off the request path.

Every `interval` (sub-second) the engines of the auto backends are read at once, each bounded in
time (`SCRAPE_SECS`) and size (gateway/engines/gauges.py MAX_BODY): `<root>/metrics`, read by
the names of the engine detection found (or, for an engine not identified, by whichever engine's
names it holds). An engine without metrics (a 404 or 501, a generic OpenAI server, a remote API)
is tried again every `RETRY_SECS`; meanwhile its limit follows latency. A reading that fails
(no answer in time, garbage, lies) counts as none: the controller's staleness rule closes the
gate. Our own in-flight at that backend is read when the engine answers, and "demand" is
whether the limit binds: our requests fill it, or someone waits who could use it.

The limit applies at once: a higher one hands the new room to waiters (`slot_changed`), a lower
one stops admission until what runs has ended; nothing is cancelled. A move is logged at info
level at most every LOG_SECS per backend.

In a group of processes sharing admission on Redis, each learned limit is one value for all of
them (gateway/admission/shared/capacity_board.py): the process that owns a backend's limit on
the board alone reads its engine and moves it, judging by what the whole group holds and waits
there (its own requests' latency stands for the group's, the load being spread over them); the
others take it from the board each interval, and the admission scripts take it from there at
every grant. While Redis is away the limits hold where they were, each process admitting its
share, as for a fixed limit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from gateway.admission.shared.capacity_board import Post, Posted
from gateway.admission.types import Slot
from gateway.engines.capacity import CapacityController, Tuning
from gateway.engines.gauges import KINDS, MAX_BODY, Gauges, GaugesError, read
from gateway.runtime.registry import Upstream

log = logging.getLogger("aiplane.gateway")

SCRAPE_SECS = 0.5  # a reading that takes longer is no reading
RETRY_SECS = 10.0  # an engine without metrics is asked again this often
LOG_SECS = 5.0  # a moving limit is logged at most this often per backend
NO_METRICS = frozenset({404, 405, 501})  # "this server has no /metrics" (llama.cpp: 501)


class Queue(Protocol):
    """What capacity needs of the admission queue."""

    shares_capacity: bool  # a group on Redis: the limits go on the capacity board
    fallback: bool  # that group's Redis is away

    def slot_changed(self, slot: Slot) -> None: ...
    def contended(self, slot: Slot) -> bool: ...
    async def post_capacity(self, posts: list[Post]) -> dict[str, Posted] | None: ...


@dataclass(slots=True)
class Learned:
    """One auto backend's controller and what the scraping learned of its engine."""

    controller: CapacityController
    bounds: tuple[int, int]
    kind: str | None = None  # whose metric names its /metrics uses, once found
    no_metrics_until: float = 0.0  # no /metrics: not asked again before this (monotonic)
    error: str | None = None  # why the last reading was none
    warned: bool = False
    logged_at: float = -1e9
    posted: Posted | None = None  # in a group on Redis: the board's row, as of the last post


class Capacity:
    """Every auto backend's learned limit, for one process."""

    def __init__(
        self,
        *,
        tuning: Tuning | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tuning = tuning or Tuning()
        self.clock = clock
        self.learned: dict[str, Learned] = {}
        self._gone: set[str] = set()  # no longer learned: to be taken off the capacity board

    def describe(self, name: str, slot: Slot) -> dict[str, Any] | None:
        """A learned limit for the admin pages: where it is and why, and the engine's gauges as
        last read; None for a fixed limit."""
        view = self.view(name)
        return None if view is None else {"limit": slot.max_inflight, **view}

    def view(self, name: str) -> dict[str, Any] | None:
        """Why a learned limit is where it is, and the engine's gauges as last read: this
        process's own, or, in a group on Redis, the owner's as it posted them."""
        learned = self.learned.get(name)
        if learned is None:
            return None
        posted = learned.posted
        if posted is not None and not posted.leads:
            return {
                "reason": posted.reason,
                "mode": posted.mode,
                "engine_running": posted.engine_running,
                "engine_waiting": posted.engine_waiting,
                "engine_kv_usage": posted.engine_kv_usage,
                "metrics_error": posted.metrics_error,
            }
        controller, gauges = learned.controller, learned.controller.gauges
        return {
            "reason": controller.reason,
            "mode": controller.mode,
            "engine_running": gauges.running if gauges else None,
            "engine_waiting": gauges.waiting if gauges else None,
            "engine_kv_usage": gauges.kv_usage if gauges else None,
            "metrics_error": learned.error,
        }

    # ----- the request path's one call ------------------------------------------------------

    def answered(self, backend: str, ttfb: float | None, per_chunk: float | None) -> None:
        """A request at `backend` ended: its latency feeds the backend's controller."""
        learned = self.learned.get(backend)
        if learned is not None:
            learned.controller.answered(ttfb=ttfb, per_chunk=per_chunk, now=self.clock())

    # ----- the loop -------------------------------------------------------------------------

    def sync(self, upstreams: Iterable[Upstream]) -> list[Upstream]:
        """The controllers for today's auto backends (new ones start at their slot's limit);
        returns those backends."""
        auto = [up for up in upstreams if up.spec.capacity_auto]
        names = {up.name for up in auto}
        for name in list(self.learned):
            if name not in names:
                del self.learned[name]
                self._gone.add(name)
        for up in auto:
            bounds = (up.spec.capacity_floor, up.spec.capacity_ceiling)
            learned = self.learned.get(up.name)
            if learned is None or learned.bounds != bounds:
                start = learned.controller.limit if learned else up.slot.max_inflight
                controller = CapacityController(*bounds, start=start, tuning=self.tuning)
                self.learned[up.name] = Learned(controller, bounds)
        return auto

    async def tick(self, upstreams: Iterable[Upstream], queue: Queue, client: Any) -> None:
        """One interval: read the engines whose limits this process moves, all at once, step
        their controllers, then set each limit (in a group on Redis, the one on the board).

        In a group the board is read (and the limits as they stand posted) while the engines
        are read, so that what the group holds there is as of the engines' readings: a figure
        one interval old lags a growing limit by a whole step, and a fall from it would go too
        far. A moved limit reaches the board with the next interval's post."""
        auto = self.sync(upstreams)
        shared = queue.shares_capacity
        if shared and queue.fallback:
            return  # Redis is away: the limits hold, each process admitting its share of them
        now = self.clock()
        moving = [up for up in auto if self._moves(up.name)]
        due = [up for up in moving if now >= self.learned[up.name].no_metrics_until]
        reads = [self._read(client, up) for up in due]
        if shared:
            *readings, _ = await asyncio.gather(*reads, self._post(auto, queue))
            moving = [up for up in moving if self._moves(up.name)]  # (another may own it now)
        else:
            readings = await asyncio.gather(*reads)
        read_now = dict(zip((up.name for up in due), readings, strict=True))
        now = self.clock()
        for up in moving:
            learned = self.learned[up.name]
            inflight, demand = self._load(up.slot, learned.posted, queue)
            reading = read_now.get(up.name)
            if reading is not None:
                learned.controller.gauges_read(reading, inflight=inflight, demand=demand, now=now)
            learned.controller.tick(inflight=inflight, demand=demand, now=now)
        for up in auto:
            self._apply(up, self.learned[up.name], queue, now)

    def _moves(self, name: str) -> bool:
        """Whether this process moves the limit: alone always; in a group, while it owns it
        (or nobody posted one yet, so the first post can take it)."""
        posted = self.learned[name].posted
        return posted is None or posted.leads

    @staticmethod
    def _load(slot: Slot, posted: Posted | None, queue: Queue) -> tuple[int, bool]:
        """What runs there and whether the limit binds: over the whole group when it is on the
        board (as of the last post), else this process's own."""
        if posted is not None:
            held = max(posted.held, slot.inflight)
            return held, held >= posted.limit or posted.waiting > 0 or queue.contended(slot)
        return slot.inflight, slot.inflight >= slot.max_inflight or queue.contended(slot)

    async def _post(self, auto: list[Upstream], queue: Queue) -> None:
        """Post the limits on the capacity board and take back each one's owner's."""
        names = {up.name for up in auto}
        posts = [self._post_of(up.name) for up in auto]
        posts += [Post(name, 0) for name in self._gone - names]
        self._gone &= names  # taken off the board with this post
        board = await queue.post_capacity(posts)
        if board is None:
            return
        for up in auto:
            learned = self.learned[up.name]
            learned.posted = posted = board.get(up.name)
            if posted is not None and not posted.leads:
                learned.controller.adopt(posted.limit, posted.reason)

    def _post_of(self, name: str) -> Post:
        learned = self.learned[name]
        controller, gauges = learned.controller, learned.controller.gauges
        return Post(
            name,
            controller.limit,
            reason=controller.reason,
            mode=controller.mode,
            engine_running=gauges.running if gauges else None,
            engine_waiting=gauges.waiting if gauges else None,
            engine_kv_usage=gauges.kv_usage if gauges else None,
            metrics_error=learned.error,
        )

    def _apply(self, up: Upstream, learned: Learned, queue: Queue, now: float) -> None:
        slot, limit = up.slot, learned.controller.limit
        if slot.max_inflight == limit:
            return
        before, rose = slot.max_inflight, limit > slot.max_inflight
        slot.max_inflight = limit
        if rose:
            queue.slot_changed(slot)
        if now - learned.logged_at >= LOG_SECS:
            log.info(
                "backend %s: capacity %d -> %d (%s)",
                up.name, before, limit, learned.controller.reason,
            )  # fmt: skip
            learned.logged_at = now

    # ----- reading an engine ----------------------------------------------------------------

    async def _read(self, client: Any, up: Upstream) -> Gauges | None:
        learned = self.learned[up.name]
        try:
            text = await asyncio.wait_for(_metrics(client, up), SCRAPE_SECS)
        except _NoMetrics as none:
            learned.no_metrics_until = self.clock() + RETRY_SECS
            return self._failed(up, learned, f"no metrics ({none})")
        except (httpx.HTTPError, OSError, TimeoutError) as err:
            return self._failed(up, learned, f"no answer ({type(err).__name__})")
        except GaugesError as err:
            return self._failed(up, learned, str(err))
        try:
            gauges, learned.kind = _gauges(text, learned.kind or _kind_of(up))
        except GaugesError as err:
            return self._failed(up, learned, str(err))
        if learned.error is not None:
            log.info("backend %s: its engine's metrics are read again", up.name)
        learned.error, learned.warned = None, False
        return gauges

    def _failed(self, up: Upstream, learned: Learned, why: str) -> Gauges | None:
        """No reading this time (and a warning, once, until metrics can be used again)."""
        learned.error = why
        if not learned.warned:
            learned.warned = True
            log.warning(
                "backend %s: its engine's metrics cannot be used (%s); its capacity follows "
                "latency until they can",
                up.name, why,
            )  # fmt: skip
        return None


class _NoMetrics(Exception):
    """The engine has no /metrics (or does not let us read it)."""


async def _metrics(client: httpx.AsyncClient, up: Upstream) -> bytes:
    async with client.stream("GET", up.root + "/metrics", headers=_auth(up)) as resp:
        if resp.status_code in NO_METRICS:
            raise _NoMetrics(str(resp.status_code))
        if resp.status_code != 200:
            raise _NoMetrics(f"status {resp.status_code}")
        body = b""
        async for chunk in resp.aiter_bytes():
            body += chunk
            if len(body) > MAX_BODY:
                raise GaugesError(f"the metrics are more than {MAX_BODY} bytes")
        return body


def _auth(up: Upstream) -> dict[str, str]:
    key = up.headers.get("authorization")
    return {"authorization": key} if key else {}


def _kind_of(up: Upstream) -> str | None:
    """Whose metric names to read: the engine detection found, if it is one that has them."""
    profile = up.spec.profile
    return profile.kind if profile is not None and profile.kind in KINDS else None


def _gauges(text: bytes, kind: str | None) -> tuple[Gauges, str]:
    """The gauges by `kind`'s names; for an engine not identified, by the first engine's names
    its metrics hold."""
    if kind is not None:
        return read(text, kind), kind
    for candidate in KINDS:
        try:
            return read(text, candidate), candidate
        except GaugesError:
            continue
    raise GaugesError("no engine's running or waiting gauge in the metrics")
