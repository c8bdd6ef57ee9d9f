"""The engine's slots and the queue of the requests that wait for one.

One small class with a narrow face, so that a model of an engine's batch (its running sequences,
a KV cache, a step loop) can take its place: the engine only asks it for a slot (`try_acquire`,
`acquire`), gives the slot back (`release`), lets more waiters in when the configuration grows
(`dispatch`), and reads its counters.
"""

from __future__ import annotations

import asyncio
import heapq

from gateway.sim.config import (
    EVICTED,
    QUEUE_FULL,
    SGLANG_NO_PRIORITY_RANK,
    SGLANG_PRIORITY_POLICIES,
    SimConfig,
    sglang_has_priority,
)
from gateway.sim.errors import Refused


class Slots:
    """`config.slots` concurrent generations, and the waiters in the imitated engine's order
    (rows 4-6 and 9 of the fidelity table in gateway/sim/engine.py)."""

    def __init__(self, config: SimConfig) -> None:
        # The engine's own configuration object, changed in place by POST /sim/config.
        self.config = config
        self.inflight = 0
        self.waiting = 0
        self.max_inflight_seen = 0
        self.rejected = 0
        self.evicted = 0
        self._arrivals = 0
        # (rank, secondary, arrival, future): the smallest runs first.
        self._queue: list[tuple[int, int, int, asyncio.Future[None]]] = []

    def reset(self) -> None:
        """Forget the refusals; the maximum restarts from what runs right now."""
        self.rejected = 0
        self.evicted = 0
        self.max_inflight_seen = self.inflight

    def _ranks_by_priority(self) -> bool:
        cfg = self.config
        if not cfg.priority_scheduling:
            return False
        if cfg.server_info == "sglang":
            return (
                sglang_has_priority(cfg) and cfg.sglang_schedule_policy in SGLANG_PRIORITY_POLICIES
            )
        return True

    def _rank(self, priority: int | None) -> int:
        """Where a waiter's priority puts it: the smallest rank runs first."""
        if not self._ranks_by_priority():
            return 0
        cfg = self.config
        if cfg.server_info == "vllm":
            return 0 if priority is None else priority
        if priority is None:
            return SGLANG_NO_PRIORITY_RANK
        return priority if cfg.sglang_low_first else -priority

    def try_acquire(self) -> bool:
        """Take a free slot now if no one waits for it: the instant engine's path."""
        if self.waiting == 0 and self.inflight < self.config.slots:
            self._admit()
            return True
        return False

    def _admit(self) -> None:
        self.inflight += 1
        if self.inflight > self.max_inflight_seen:
            self.max_inflight_seen = self.inflight

    async def acquire(self, priority: int | None, n: int = 0) -> None:
        """Wait for an engine slot, in the queue order the configuration asks for.

        Raises Refused when the bounded queue turns the request away, or evicts it later.
        """
        if self.try_acquire():
            return
        cfg = self.config
        rank = self._rank(priority)
        # SGLang's lof policy runs the longest output first (within a priority, when on).
        lof = cfg.server_info == "sglang" and cfg.sglang_schedule_policy == "lof"
        secondary = -n if lof else 0
        bound = cfg.max_queued_requests
        if bound is not None and self.waiting >= bound and not self._evict_for(rank):
            self.rejected += 1
            raise Refused(QUEUE_FULL)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._arrivals += 1
        heapq.heappush(self._queue, (rank, secondary, self._arrivals, future))
        self.waiting += 1
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled():
                # Still queued: the heap entry is skipped lazily by dispatch.
                self.waiting -= 1
            elif future.exception() is None:
                # The slot was handed over just before the cancellation landed.
                self.release()
            # Otherwise it was evicted just before, and is counted out already.
            raise

    def _evict_for(self, rank: int) -> bool:
        """SGLang's eviction: the least preferred waiter makes room for a strictly better one."""
        if not self._ranks_by_priority():
            return False
        worst: tuple[int, int, int, asyncio.Future[None]] | None = None
        for entry in self._queue:
            if entry[3].done():
                continue
            # Ties go to the newest: (rank, arrival) is largest for the least preferred.
            if worst is None or (entry[0], entry[2]) > (worst[0], worst[2]):
                worst = entry
        if worst is None or not rank < worst[0]:
            return False
        worst[3].set_exception(Refused(EVICTED))
        self.waiting -= 1
        self.evicted += 1
        return True

    def release(self) -> None:
        self.inflight -= 1
        if self.waiting:
            self.dispatch()

    def dispatch(self) -> None:
        """Hand the free slots to the first waiters."""
        queue = self._queue
        while queue and self.inflight < self.config.slots:
            future = heapq.heappop(queue)[3]
            if future.done():
                continue
            future.set_result(None)
            self.waiting -= 1
            self._admit()
