"""The capacity board, step by step: one learned limit per backend for every process on Redis,
owned by one of them, binding every grant (gateway/admission/shared/capacity_board.py)."""

from __future__ import annotations

import time

from gateway.admission.shared.capacity_board import Post, read_board
from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.admission.types import Route, Slot, Target
from gateway.core.classes import LOW
from gateway.core.redis_clients import connect
from tests.support.redis_server import RedisServer


class Process:
    """One gateway process's queue and its own view of backend "b" (max_inflight `cap`)."""

    def __init__(self, server: RedisServer, prefix: str, cap: int, lease_secs: float = 3.0):
        self.queue = SharedAdmissionQueue(connect(server.url), prefix=prefix, lease_secs=lease_secs)
        self.slot = Slot("b", max_inflight=cap, auto=True)
        self.route = Route(key="r", primary=(Target(self.slot, "m"),), strategy="least_inflight")

    def ask(self, times: int) -> None:
        for _ in range(times):
            self.queue.submit(self.queue.waiter(self.route, cls=LOW, budget=60))

    async def post(self, limit: int, **fields: object):
        return await self.queue.post_capacity([Post("b", limit, **fields)])  # type: ignore[arg-type]


async def test_the_first_to_post_owns_the_limit_and_the_others_read_theirs_back(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    a, b = Process(redis_server, redis_prefix, 10), Process(redis_server, redis_prefix, 10)
    mine = (await a.post(5, reason="metrics", mode="metrics", engine_waiting=0.0))["b"]
    assert (mine.leads, mine.limit) == (True, 5)
    theirs = (await b.post(9, reason="latency", mode="latency"))["b"]
    assert (theirs.leads, theirs.limit, theirs.reason, theirs.engine_waiting) == (
        False, 5, "metrics", 0.0
    )  # fmt: skip
    moved = (await a.post(4, reason="metrics", mode="metrics"))["b"]
    assert (moved.leads, moved.limit) == (True, 4)


async def test_a_posted_limit_binds_every_process_whatever_limit_it_passes(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    a, b = Process(redis_server, redis_prefix, 10), Process(redis_server, redis_prefix, 10)
    await a.post(3)
    a.ask(4)
    b.ask(4)  # b still passes its old 10: the board's 3 counts
    assert a.slot.inflight + b.slot.inflight == 3
    board = (await b.post(10))["b"]
    assert (board.held, board.waiting) == (3, 5)  # what the whole group holds and waits


async def test_a_limit_no_longer_learned_leaves_the_board_and_the_configured_one_counts_again(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    a, b = Process(redis_server, redis_prefix, 10), Process(redis_server, redis_prefix, 10)
    await a.post(1)
    b.ask(3)
    assert b.slot.inflight == 1
    assert await a.post(0) == {}
    b.ask(3)
    assert b.slot.inflight == 6  # the two that waited, and three more: 10 counts again


async def test_an_owner_that_stops_posting_is_taken_over_within_its_lease(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    a = Process(redis_server, redis_prefix, 10, lease_secs=0.3)
    b = Process(redis_server, redis_prefix, 10, lease_secs=0.3)
    await a.post(6)
    assert not (await b.post(2))["b"].leads
    time.sleep(0.4)  # a stalls (or died): its post lapses with its lease
    taken = (await b.post(2))["b"]
    assert (taken.leads, taken.limit) == (True, 2)
    assert not (await a.post(6))["b"].leads  # back, it reads b's limit


async def test_no_board_while_redis_is_away(redis_server: RedisServer, redis_prefix: str) -> None:
    a = Process(redis_server, redis_prefix, 10)
    a.queue.fallback = True
    assert await a.post(3) is None


def test_a_board_row_that_does_not_read_as_one_is_left_out() -> None:
    good = [b"b", 1, 2, 0, b"4", b"metrics", b"metrics", b"3.0", b"0.0", b"", b""]
    rows = [good, [b"c", 1], [b"d", 1, 2, 0, b"x", b"", b"", b"", b"", b"", b""], b"junk"]
    board = read_board(rows)
    assert list(board) == ["b"]
    row = board["b"]
    assert (row.limit, row.engine_running, row.engine_kv_usage) == (4, 3.0, None)
    assert read_board(b"nonsense") == {}
