"""Shared admission on the gateway's loop: no call waits for Redis, answers apply in call order."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.admission.types import ADMITTED, CANCELLED, WAITING, Route, Slot, Target
from gateway.core.classes import HIGH, LOW, MEDIUM
from gateway.core.redis_clients import connect
from tests.support.redis_server import RedisServer
from tests.support.shared_queue import link_on, queue_on, route_to


@pytest.fixture
def paused_redis(private_redis: RedisServer) -> Iterator[RedisServer]:
    """A private redis-server this test may pause (SIGSTOP) without touching anyone else's."""
    yield private_redis
    assert private_redis.proc is not None
    os.kill(private_redis.proc.pid, signal.SIGCONT)  # so that it can be stopped


async def test_enqueue_cancel_release_and_the_pass_return_while_redis_has_not_answered(
    paused_redis: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(paused_redis, redis_prefix)
    route = route_to(Slot("b", max_inflight=1))
    running = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    assert running is not None
    high = queue.waiter(route, cls=HIGH, budget=60)
    gone = queue.waiter(route, cls=MEDIUM, budget=60)
    for w in (high, gone):
        assert await queue.submit_async(w) is None
    await queue.settled()
    assert paused_redis.proc is not None

    os.kill(paused_redis.proc.pid, signal.SIGSTOP)
    late = queue.waiter(route, cls=LOW, budget=60)
    arriving = asyncio.ensure_future(queue.submit_async(late))
    queue.cancel(gone)
    running.release()
    queue.dispatch_pass()
    queue.take_grants()
    await asyncio.sleep(0.05)  # the loop goes on serving while Redis says nothing
    assert not arriving.done()
    assert (high.state, gone.state, queue.fallback) == (WAITING, CANCELLED, False)

    os.kill(paused_redis.proc.pid, signal.SIGCONT)
    assert await arriving is None  # its acquire came after the release gave `high` the slot
    await queue.settled()
    # In call order: the cancel took `gone` out before the release handed the slot on.
    assert high.state == ADMITTED and high.acquired is not None
    assert (gone.state, late.state) == (CANCELLED, WAITING)


async def test_a_caller_that_leaves_while_its_acquire_is_on_the_way_gives_the_slot_back(
    paused_redis: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(paused_redis, redis_prefix)
    slot = Slot("b", max_inflight=1)
    route = route_to(slot)
    assert paused_redis.proc is not None
    os.kill(paused_redis.proc.pid, signal.SIGSTOP)
    leaving = asyncio.ensure_future(queue.submit_async(queue.waiter(route, cls=LOW, budget=60)))
    await asyncio.sleep(0.05)
    leaving.cancel()
    os.kill(paused_redis.proc.pid, signal.SIGCONT)
    with pytest.raises(asyncio.CancelledError):
        await leaving
    await queue.settled()

    # Redis granted the slot after the caller left; it went back, so the next one gets it.
    assert await queue.submit_async(queue.waiter(route, cls=LOW, budget=60)) is not None


async def test_an_outage_seen_by_the_writer_falls_back_and_admits_the_waiters_locally(
    paused_redis: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(paused_redis, redis_prefix)
    route = route_to(Slot("b", max_inflight=2))
    running = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    assert running is not None
    waiting = queue.waiter(route, cls=HIGH, budget=60)
    await queue.settled()
    paused_redis.stop()

    # Its acquire meets a dead server: this process, the only one Redis saw, goes on alone
    # with all of the backend.
    assert await queue.submit_async(waiting) is not None
    assert (queue.fallback, queue.processes) == (True, 1)
    paused_redis.start()
    assert await queue.rejoin_async()
    await queue.settled()
    assert not queue.fallback


async def test_a_waiter_granted_while_its_backends_change_is_admitted_once_and_keeps_its_lease(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(redis_server, redis_prefix)
    b1, b2 = Slot("b1", max_inflight=1), Slot("b2", max_inflight=1)
    route = Route(
        key="r", primary=(Target(b1, "m"), Target(b2, "m")), fallback=(), strategy="least_inflight"
    )
    first = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    second = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    assert first is not None and second is not None
    w = queue.waiter(route, cls=HIGH, budget=60)
    assert await queue.submit_async(w) is None
    await queue.settled()

    # In one pipeline: the release grants `w` on its backend, then b2's loss lists `w` again
    # under the other one only, while the grant's answer is still on its way.
    first.release()
    b2.healthy = False
    queue.slot_changed(b2)
    await queue.settled()
    assert w.state == ADMITTED and w.acquired is not None
    name = w.acquired.backend
    r = connect(redis_server.url)
    assert r.zrange(f"{redis_prefix}q:{name}", 0, -1) == []  # not in line any more

    # More room there: a newcomer takes it, and `w`'s lease stays through the renewals.
    w.acquired.target.slot.max_inflight = 2
    newcomer = queue.waiter(route, cls=LOW, budget=60)
    assert await queue.submit_async(newcomer) is not None
    queue.renew()
    await queue.settled()
    leases = set(r.zrange(f"{redis_prefix}l:{name}", 0, -1))
    assert leases == {w.ref.encode(), newcomer.ref.encode()}
    await queue.close()


def _refuse_writes(r: redis.Redis, how: str) -> None:
    if how == "replica":  # what a failover leaves a client on: READONLY to every write
        r.replicaof("127.0.0.1", 1)
    else:  # full, and told to evict nothing: OOM to every write
        r.config_set("maxmemory", "1")


def _accept_writes(r: redis.Redis, how: str) -> None:
    if how == "replica":
        r.replicaof("no", "one")
    else:
        r.config_set("maxmemory", "0")


@pytest.mark.parametrize("how", ["replica", "out_of_memory"])
async def test_a_redis_that_answers_writes_with_an_error_is_an_outage_not_a_failed_request(
    paused_redis: RedisServer, redis_prefix: str, how: str
) -> None:
    queue = queue_on(paused_redis, redis_prefix)
    route = route_to(Slot("b", max_inflight=1))
    running = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    assert running is not None
    r = connect(paused_redis.url)
    _refuse_writes(r, how)

    # Its acquire (a replica) or its listing (full: a script's first write is what Redis
    # refuses) fails with an error reply: this process goes on locally, metric and all.
    waiting = queue.waiter(route, cls=LOW, budget=60)
    assert await queue.submit_async(waiting) is None
    await queue.settled()
    assert (queue.fallback, queue.fallbacks, waiting.state) == (True, 1, WAITING)
    running.release()
    assert waiting.state == ADMITTED and waiting.acquired is not None
    running = waiting.acquired
    assert not await queue.rejoin_async()  # it answers pings, but still refuses to write
    _accept_writes(r, how)
    assert await queue.rejoin_async()
    await queue.settled()
    assert not queue.fallback

    # A renewal refused the same way falls back too (rather than failing on its answer).
    _refuse_writes(r, how)
    queue.renew()
    await queue.settled()
    assert (queue.fallback, queue.fallbacks) == (True, 2)
    running.release()
    _accept_writes(r, how)
    await queue.close()


async def _granted_then_interrupted(
    queue: SharedAdmissionQueue, interrupt: Callable[[asyncio.Task[Any]], None]
) -> tuple[asyncio.Task[Any], Slot]:
    """A caller whose acquire Redis answers with a slot, then `interrupt` in the same pipeline,
    before the caller resumes: a release on another backend admits a waiter there whose
    admission runs `interrupt` on the caller's task."""
    busy = route_to(Slot("busy", max_inflight=1))
    running = await queue.submit_async(queue.waiter(busy, cls=LOW, budget=60))
    assert running is not None
    next_in_line = queue.waiter(busy, cls=LOW, budget=60)
    assert await queue.submit_async(next_in_line) is None
    await queue.settled()

    free = Slot("free", max_inflight=1)
    caller = asyncio.ensure_future(
        queue.submit_async(queue.waiter(route_to(free), cls=LOW, budget=60))
    )
    next_in_line.on_admit = lambda _: interrupt(caller)
    await asyncio.sleep(0)  # the caller's acquire is in the outbox; the release joins it
    running.release()
    return caller, free


async def test_a_caller_cancelled_after_redis_gave_it_a_slot_gives_the_slot_back(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(redis_server, redis_prefix)
    caller, free = await _granted_then_interrupted(queue, lambda task: task.cancel())
    with pytest.raises(asyncio.CancelledError):
        await caller
    await queue.settled()
    assert connect(redis_server.url).zrange(f"{redis_prefix}l:free", 0, -1) == []
    assert await queue.submit_async(queue.waiter(route_to(free), cls=LOW, budget=60)) is not None
    await queue.close()


async def test_a_slot_redis_gave_just_before_an_outage_is_used_not_abandoned(
    redis_server: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(redis_server, redis_prefix)
    # As if a second process were alive: this one's share of a one-slot backend is nothing.
    queue.processes, queue.seat = 2, 1

    def outage(_: asyncio.Task[Any]) -> None:
        queue._fall_back(redis.ConnectionError("gone"))

    caller, free = await _granted_then_interrupted(queue, outage)
    acquired = await caller
    assert acquired is not None and acquired.backend == "free"
    assert free.inflight == 1
    await queue.close()


async def _until(condition: Callable[[], bool], secs: float = 10.0) -> None:
    """Wait for `condition` (a bound for a hung test, not a timing threshold)."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), secs)


async def test_a_subscription_that_stops_answering_is_noticed_and_made_again(
    paused_redis: RedisServer,
) -> None:
    from aiplane import changes

    applied: list[str] = []

    async def apply(kind: str) -> None:
        applied.append(kind)

    link = link_on(paused_redis.url, prefix="p:", queue=None, apply_change=apply)
    link.quiet_secs = 0.05
    listening = asyncio.ensure_future(link.listen())
    try:
        await asyncio.wait_for(link.listening.wait(), 10)
        assert paused_redis.proc is not None
        # Stopped, the server keeps the connection open and answers nothing, like a host gone.
        os.kill(paused_redis.proc.pid, signal.SIGSTOP)
        await _until(lambda: not link.listening.is_set())
        os.kill(paused_redis.proc.pid, signal.SIGCONT)
        await asyncio.wait_for(link.listening.wait(), 10)
        message = json.dumps({"from": "another process", "kind": changes.TOPOLOGY})
        connect(paused_redis.url).publish(changes.channel(), message)
        await _until(lambda: bool(applied))
        assert applied == [changes.TOPOLOGY]
    finally:
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening


async def test_after_an_outage_an_old_listing_keeps_no_lease_of_a_running_request_nor_a_dead_one(
    paused_redis: RedisServer, redis_prefix: str
) -> None:
    queue = queue_on(paused_redis, redis_prefix)
    slot = Slot("b", max_inflight=1)
    route = route_to(slot)
    running = await queue.submit_async(queue.waiter(route, cls=LOW, budget=60))
    assert running is not None
    w = queue.waiter(route, cls=HIGH, budget=60)
    assert await queue.submit_async(w) is None
    await queue.settled()

    # Redis refuses the release (a replica now, its data kept): `w` is admitted locally, and
    # its listing stays in Redis's line.
    r = connect(paused_redis.url)
    _refuse_writes(r, "replica")
    running.release()
    await queue.settled()
    assert queue.fallback and w.state == ADMITTED
    _accept_writes(r, "replica")
    assert await queue.rejoin_async()
    await queue.settled()

    # More room: Redis grants the old listing, a second grant to the request running there.
    slot.max_inflight = 3
    queue.slot_changed(slot)
    await queue.settled()
    queue.renew()
    await queue.settled()
    # ...and the release Redis refused was sent again on rejoin: only `w` holds a lease.
    assert r.zrange(f"{redis_prefix}l:b", 0, -1) == [w.ref.encode()]
    await queue.close()


async def test_a_cancelled_change_listener_stops_wherever_the_cancel_lands(
    paused_redis: RedisServer,
) -> None:
    """redis-py can swallow a cancel that lands as a read times out; the listener must stop
    all the same (the runtime's shutdown, a test's teardown would otherwise wait for ever)."""

    async def apply(kind: str) -> None:
        pass

    rng = random.Random(11)
    for _ in range(60):
        link = link_on(paused_redis.url, prefix="c:", queue=None, apply_change=apply)
        link.quiet_secs = 0.01  # a read times out every 10 ms: a cancel often lands on one
        listening = asyncio.ensure_future(link.listen())
        await asyncio.wait_for(link.listening.wait(), 10)
        await asyncio.sleep(rng.random() * 0.03)
        listening.cancel()
        done, _ = await asyncio.wait({listening}, timeout=5)
        assert done, "the listener went on after its cancel"


async def test_a_cancelled_lease_keeper_stops_wherever_the_cancel_lands(
    paused_redis: RedisServer, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In fallback the keeper tries Redis again and again; a cancel that redis-py swallows as
    that try times out must stop it all the same (else the runtime's shutdown waits for ever)."""
    from gateway.admission.shared import link as shared_link

    async def apply(kind: str) -> None:
        pass

    monkeypatch.setattr(shared_link, "REJOIN_SECS", 0.0)  # try again at once: cancels land on tries
    assert paused_redis.proc is not None
    os.kill(paused_redis.proc.pid, signal.SIGSTOP)  # every try now times out
    queue = SharedAdmissionQueue(connect(paused_redis.url, timeout=0.01), prefix=redis_prefix)
    queue.use_async(paused_redis.url, timeout=0.01)
    assert queue.fallback
    link = link_on(paused_redis.url, prefix=redis_prefix, queue=queue, apply_change=apply)
    rng = random.Random(5)
    for _ in range(60):
        keeping = asyncio.ensure_future(link.keep())
        await asyncio.sleep(rng.random() * 0.03)
        keeping.cancel()
        done, _ = await asyncio.wait({keeping}, timeout=5)
        assert done, "the keeper went on after its cancel"
