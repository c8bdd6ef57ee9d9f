"""Allowance counters on Redis: exact over processes, holds that expire, keys that expire with
their window, and a Redis outage that neither stops nor hangs a request."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from accounts.allowances import Counted, Limit, Measure, Window
from gateway.allowances.counters import AllowanceExceeded
from gateway.allowances.shared import RESERVATION_HOLD_SECS, SharedCounters, connect
from tests.gateway.dataplane.test_v1_allowances import (
    charged_its_prompt_only_once_it_reached_an_engine,
)
from tests.support.allowance_spender import (
    NOW,
    REQUESTS_PER_MINUTE,
    SLOW_MACHINE,
    TOKENS_PER_DAY,
    demand,
    spend,
)
from tests.support.allowances import Person, call
from tests.support.drive import sample, scrape
from tests.support.live import LiveGateway, add_backend
from tests.support.redis_server import RedisServer, redis_or_skip


class Clock:
    def __init__(self, at: float) -> None:
        self.now = at

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def made(redis_server: RedisServer, redis_prefix: str) -> AsyncIterator[list[Any]]:
    """Stores the test makes, closed after it."""
    stores: list[SharedCounters] = []
    yield stores
    for store in stores:
        await store.aclose()


def shared(url: str, prefix: str, made: list[Any], **options: Any) -> SharedCounters:
    timeout = options.pop("timeout", SLOW_MACHINE)
    store = SharedCounters(connect(url, timeout), prefix=prefix, timeout=timeout, **options)
    made.append(store)
    return store


async def standing(store: SharedCounters, limit: Limit, subject: str = "u1") -> tuple[int, int]:
    await store.drain()
    return (await store.read([Counted(subject, limit)]))[0]


# ----- over processes -------------------------------------------------------------------------


async def test_two_processes_on_one_redis_never_exceed_a_limit_together(
    redis_server: RedisServer, redis_prefix: str, made: list[Any]
) -> None:
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(2), context.Queue()
    workers = [
        context.Process(target=spend, args=(redis_server.url, redis_prefix, 150, start, out))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        await asyncio.to_thread(worker.join, 60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    results = [out.get(timeout=5) for _ in workers]

    # 300 requests of 30 tokens each against 3000 a day: exactly 100, whoever got them.
    assert sum(admitted for admitted, _ in results) == 100
    assert [fallbacks for _, fallbacks in results] == [0, 0]
    store = shared(redis_server.url, redis_prefix, made, clock=lambda: NOW)
    assert await standing(store, TOKENS_PER_DAY) == (100 * 15, 0)  # reported usage, no holds
    assert await standing(store, REQUESTS_PER_MINUTE) == (100, 0)  # refused ones never counted


async def test_two_stores_settling_while_others_admit_count_every_token_once(
    redis_server: RedisServer, redis_prefix: str, made: list[Any]
) -> None:
    one, two = (shared(redis_server.url, redis_prefix, made, clock=lambda: NOW) for _ in "12")
    limit = Limit(Measure.TOKENS, Window.MINUTE, 100_000)

    async def request(store: SharedCounters, n: int) -> None:
        ticket = await store.admit(demand(limit, input=n, output=50))
        await asyncio.sleep(0)
        ticket.settle(n, n % 7)

    await asyncio.gather(*(request(one if n % 2 else two, n) for n in range(200)))
    await two.drain()
    assert await standing(one, limit) == (sum(n + n % 7 for n in range(200)), 0)


# ----- holds and keys ---------------------------------------------------------------------------


async def test_a_reservation_never_settled_is_released_when_its_hold_expires(
    redis_server: RedisServer, redis_prefix: str, made: list[Any]
) -> None:
    clock = Clock(NOW)
    store = shared(redis_server.url, redis_prefix, made, clock=clock)
    await store.admit(demand(TOKENS_PER_DAY, input=1000, output=2000))  # its process died
    with pytest.raises(AllowanceExceeded):
        await store.admit(demand(TOKENS_PER_DAY, input=1, output=0))
    clock.now = NOW + RESERVATION_HOLD_SECS + 1  # later the same day
    ticket = await store.admit(demand(TOKENS_PER_DAY, input=1000, output=2000))
    assert ticket.tokens is not None and ticket.tokens.remaining == 0
    ticket.settle(10, 10)
    assert await standing(store, TOKENS_PER_DAY) == (20, 0)


async def test_a_late_settle_of_an_expired_hold_counts_its_usage_but_frees_nothing_twice(
    redis_server: RedisServer, redis_prefix: str, made: list[Any]
) -> None:
    clock = Clock(NOW)
    store = shared(redis_server.url, redis_prefix, made, clock=clock)
    slow = await store.admit(demand(TOKENS_PER_DAY, input=500, output=500))
    clock.now = NOW + RESERVATION_HOLD_SECS + 1
    await store.admit(demand(TOKENS_PER_DAY, input=500, output=500))  # takes the freed share
    slow.settle(100, 100)  # the long request ends after all
    assert await standing(store, TOKENS_PER_DAY) == (200, 1000)  # the other's hold is intact


async def test_counter_keys_expire_when_their_window_ends(
    redis_server: RedisServer, redis_prefix: str, made: list[Any]
) -> None:
    store = shared(redis_server.url, redis_prefix, made, clock=lambda: NOW)
    minute = Limit(Measure.REQUESTS, Window.MINUTE, 10)
    (await store.admit(demand(minute, TOKENS_PER_DAY))).settle(5, 5)
    await store.drain()
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        keys = sorted(k.decode() for k in await client.keys(redis_prefix + "*"))
        assert keys == [
            f"{redis_prefix}allowance:u1|requests|minute|*",
            f"{redis_prefix}allowance:u1|tokens|day|*",
        ]  # the settled hold left no set behind
        minute_ttl = await client.pttl(keys[0])
        day_ttl = await client.pttl(keys[1])
    finally:
        await client.aclose()
    assert 58_000 < minute_ttl <= 59_500  # the clock minute ends 59.5 s after NOW
    assert 11.9 * 3600_000 < day_ttl <= 43_199_500  # midnight UTC


# ----- outages ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_without_redis_requests_are_counted_in_this_process_until_it_answers_again(
    redis_prefix: str, made: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    redis_or_skip()
    server = RedisServer()  # its port, nobody listening yet
    limit = Limit(Measure.REQUESTS, Window.MINUTE, 2)
    store = shared(server.url, redis_prefix, made, clock=lambda: NOW, retry_secs=0)
    try:
        await store.admit(demand(limit))
        await store.admit(demand(limit))
        with pytest.raises(AllowanceExceeded):  # the limit still holds, in this process
            await store.admit(demand(limit))
        assert store.fallback and store.fallbacks == 1
        assert "Redis is unreachable" in caplog.text
        assert await standing(store, limit) == (2, 0)  # read from this process's counts

        server.start()
        ticket = await store.admit(demand(limit))  # Redis counts again, from its own state
        assert not store.fallback
        assert ticket.requests is not None and ticket.requests.remaining == 1
        assert await standing(store, limit) == (1, 0)
    finally:
        server.stop()


async def test_a_redis_that_stops_answering_holds_no_request_past_the_timeout(
    redis_prefix: str, made: list[Any]
) -> None:
    redis_or_skip()
    server = RedisServer().start()
    limit = Limit(Measure.TOKENS, Window.MINUTE, 1000)
    store = shared(server.url, redis_prefix, made, clock=lambda: NOW, timeout=0.2)
    try:
        await store.admit(demand(limit))  # connected
        assert server.proc is not None
        server.proc.send_signal(signal.SIGSTOP)
        ticket = await asyncio.wait_for(store.admit(demand(limit)), 5)
        assert store.fallback
        ticket.settle(1, 1)  # settles where it was admitted: this process
        assert store.local.usage("u1", limit) == (2, 0)
    finally:
        if server.proc is not None:
            server.proc.send_signal(signal.SIGCONT)
        server.stop()


async def test_a_request_that_leaves_while_redis_admits_it_gives_its_reservation_back(
    redis_prefix: str, made: list[Any]
) -> None:
    redis_or_skip()
    server = RedisServer().start()
    store = shared(server.url, redis_prefix, made, clock=lambda: NOW)
    try:
        await store.admit(demand(REQUESTS_PER_MINUTE))  # connected
        assert server.proc is not None
        server.proc.send_signal(signal.SIGSTOP)
        leaving = asyncio.ensure_future(
            store.admit(demand(TOKENS_PER_DAY, REQUESTS_PER_MINUTE, input=100))
        )
        await asyncio.sleep(0.05)  # its script is on its way to the stopped server
        leaving.cancel()
        server.proc.send_signal(signal.SIGCONT)
        with pytest.raises(asyncio.CancelledError):
            await leaving
        # Redis admitted it after all (the request counts), and the late answer's reservation
        # is released in the background.
        for _ in range(200):
            if await standing(store, REQUESTS_PER_MINUTE) == (2, 0):
                break
            await asyncio.sleep(0.01)
        assert await standing(store, REQUESTS_PER_MINUTE) == (2, 0)
        for _ in range(200):
            if await standing(store, TOKENS_PER_DAY) == (0, 0):
                break
            await asyncio.sleep(0.01)
        assert await standing(store, TOKENS_PER_DAY) == (0, 0)
        assert not store.fallback
    finally:
        server.stop()


# ----- two live gateways ------------------------------------------------------------------------


@pytest.fixture
def two_gateways(
    transactional_db: None, settings: Any, redis_server: RedisServer, redis_prefix: str
) -> Iterator[list[LiveGateway]]:
    """Two gateway processes' worth (each its own runtime, loop and server) on one Redis."""
    from django.core.asgi import get_asgi_application

    from aiplane.wiring import build_application, configured_bounds
    from gateway.dataplane.serving import GatewayServer

    settings.AIPLANE_REDIS_URL = redis_server.url
    settings.AIPLANE_REDIS_PREFIX = redis_prefix
    with contextlib.ExitStack() as stack:
        gateways = []
        for _ in range(2):
            app = build_application(get_asgi_application())
            app.runtime.background = False
            server = stack.enter_context(GatewayServer(app, bounds=configured_bounds()))
            gateways.append(LiveGateway(url=server.url, app=app))
        yield gateways


def test_two_gateways_on_one_redis_hold_a_persons_limit_together(
    two_gateways: list[LiveGateway], sim: Any
) -> None:
    from gateway.admin.selectors import load_topology

    add_backend("solo", sim.url)
    # One runtime per process is the one a change made here reaches; the other stands for
    # another process, which would load it on the announcement.
    for gateway in two_gateways:
        gateway.runtime.install_threadsafe(load_topology())
    alice = Person("alice", {"measure": "requests", "window": "minute", "limit": 3})
    body = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}
    one, two = two_gateways

    answers = [call(gateway, alice.key, "/chat/completions", body) for gateway in (one, two, one)]
    assert [a.headers["x-ratelimit-remaining-requests"] for a in answers] == ["2", "1", "0"]
    refused = call(two, alice.key, "/chat/completions", body)

    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert all(isinstance(g.runtime.allowances, SharedCounters) for g in two_gateways)
    assert sample(scrape(one), "aiplane_allowance_counters_local") == 0


def test_on_redis_a_client_that_leaves_after_dispatch_is_charged_its_prompt_too(
    two_gateways: list[LiveGateway], make_sim: Any
) -> None:
    from gateway.admin.selectors import load_topology

    gated = make_sim(slots=0, tokens=3, token_delay=0)
    add_backend("solo", gated.url, max_inflight=1)
    one = two_gateways[0]
    one.runtime.install_threadsafe(load_topology())

    charged_its_prompt_only_once_it_reached_an_engine(one, gated)

    counters = one.runtime.allowances
    assert isinstance(counters, SharedCounters) and counters.fallbacks == 0
