"""Shared admission through faults, step by step: Redis restarted empty, a process that stalls."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest

from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.admission.types import ADMITTED, WAITING, Acquired, Route, Slot, Target, Waiter
from gateway.core.classes import LOW
from gateway.core.redis_clients import connect
from tests.support.redis_server import RedisServer


class Process:
    """One gateway process's queue and its own view of one backend (as its runtime has)."""

    def __init__(
        self, server: RedisServer, prefix: str, lease_secs: float, cap: int, name: str = ""
    ) -> None:
        self.queue = SharedAdmissionQueue(
            connect(server.url), prefix=prefix, process=name or None, lease_secs=lease_secs
        )
        self.slot = Slot("b", max_inflight=cap)
        self.route = Route(
            key="r", primary=(Target(self.slot, "m"),), fallback=(), strategy="least_inflight"
        )

    def ask(self) -> tuple[Acquired | None, Waiter]:
        w = self.queue.waiter(self.route, cls=LOW, budget=60)
        return self.queue.submit(w), w


def _on_engine(*processes: Process) -> int:
    """What the engine runs: every process's requests on the backend, however admitted."""
    return sum(p.slot.inflight for p in processes)


def _asked_in_turn(times: int, *processes: Process) -> int:
    """Every process asks `times` times, in turn; what the engine then runs."""
    for _ in range(times):
        for p in processes:
            p.ask()
    return _on_engine(*processes)


def _a_lease_into_the_outage(*processes: Process) -> None:
    """Every process has found Redis away, and that a lease ago: each admits by its share."""
    for p in processes:
        p.queue.renew()
        assert p.queue.fallback
    time.sleep(max(p.queue.lease_secs for p in processes))


def _until(condition: Callable[[], bool], step: Callable[[], None], secs: float = 10.0) -> None:
    """Run `step` until `condition` holds (the bound is for a hung test, not a threshold)."""
    deadline = time.monotonic() + secs
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        step()
        time.sleep(0.01)


def test_a_process_started_during_an_outage_grants_nothing_on_the_emptied_redis_before_the_others(
    private_redis: RedisServer, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = Process(private_redis, redis_prefix, 0.6, cap=2)
    running, _ = a.ask()
    assert running is not None
    private_redis.stop()
    # Started while Redis is down (as `serve --workers 2` says): half of the backend, alone.
    monkeypatch.setenv("AIPLANE_SHARED_PROCESSES", "2")
    b = Process(private_redis, redis_prefix, 0.6, cap=2)
    assert b.queue.fallback
    _a_lease_into_the_outage(b)  # before, a's request may be one of what b would take
    assert b.ask()[0] is not None
    assert _on_engine(a, b) == 2
    private_redis.start()  # empty: it knows neither a's request nor b's

    # b comes back first: it lists its own request; a's is not listed yet, so Redis must not
    # hand out what looks free.
    assert b.queue.rejoin()
    late, w = b.ask()
    assert late is None
    assert _on_engine(a, b) == 2
    a.queue.renew()  # a notices the restart and lists its request
    a.queue.dispatch_pass()

    # Once everybody is listed the line works again: a's release goes to b's waiter.
    running.release()
    _until(lambda: w.state == ADMITTED, lambda: (a.queue.renew(), b.queue.dispatch_pass()))
    assert _on_engine(a, b) == 2


def test_a_process_whose_leases_were_reaped_while_it_stalled_notices_and_keeps_the_limit(
    private_redis: RedisServer, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    lease = 0.5
    a = Process(private_redis, redis_prefix, lease, cap=1)
    b = Process(private_redis, redis_prefix, lease, cap=1)
    running, _ = a.ask()
    assert running is not None
    queued, a_waiter = a.ask()
    assert queued is None
    r = connect(private_redis.url)

    def lease_lapsed() -> bool:
        seconds, micros = r.time()
        now_ms = seconds * 1000 + micros // 1000
        return r.zcount(f"{redis_prefix}l:b", now_ms, "+inf") == 0

    # a says nothing for longer than its lease (its loop is blocked): b's renewals reap it and
    # b is given the slot, while a's request still runs on the engine.
    _until(
        lambda: lease_lapsed() and r.zscore(f"{redis_prefix}procs", a.queue.process) is None,
        b.queue.renew,
    )
    taken, _ = b.ask()
    assert taken is not None
    assert _on_engine(a, b) == 2  # the stall itself: nothing a can do while it is stopped

    # a's loop runs again: its renewal finds its lease gone, says so, and lists it again.
    with caplog.at_level(logging.WARNING, logger="aiplane.gateway"):
        a.queue.renew()

    # Two run where one fits: nothing more is granted on the backend until they are done.
    taken.release()
    again, b_waiter = b.ask()
    assert again is None
    assert _on_engine(a, b) == 1
    assert a.queue.leases_lost == 1
    assert [rec for rec in caplog.records if "lost" in rec.getMessage()]
    assert a_waiter.state == WAITING
    running.release()  # a's waiter, listed again, was first in line
    assert a_waiter.state == ADMITTED and a_waiter.acquired is not None
    assert _on_engine(a, b) == 1
    a_waiter.acquired.release()
    b.queue.take_grants()
    assert b_waiter.state == ADMITTED
    assert _on_engine(a, b) == 1


def test_an_outage_that_begins_while_one_process_holds_more_than_its_share_keeps_the_bound(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    """Entering an outage, the others do not fill their shares beside a process that held more
    than its own: until the outage is a lease old, each keeps to the slots it held."""
    procs = [Process(private_redis, redis_prefix, 1.0, cap=3) for _ in range(3)]
    for p in procs:
        p.queue.renew()  # each has now seen all three: shares of 1
    a, b, c = sorted(procs, key=lambda p: p.queue.seat)
    held = [a.ask()[0] for _ in range(3)]
    assert all(held)
    private_redis.stop()

    # a's requests, admitted through Redis, still run: b and c held nothing, they admit nothing.
    for p in (b, c):
        assert p.ask()[0] is None
    assert a.ask()[0] is None  # a is over its share: it admits nothing of its own
    assert _on_engine(a, b, c) == 3

    # As a's requests end, a goes on within its share.
    for acquired in held:
        assert acquired is not None
        acquired.release()
    assert a.slot.inflight == 1  # its waiter
    assert _on_engine(a, b, c) == 1

    # A lease into the outage what Redis granted has ended, as for a process gone silent:
    # each admits by its share, and the shares add up to max_inflight.
    time.sleep(a.queue.lease_secs)
    for p in (b, c):
        p.queue.dispatch_pass()
    assert [p.slot.inflight for p in (a, b, c)] == [1, 1, 1]


def test_requests_admitted_alone_in_an_outage_are_listed_on_rejoin_and_not_counted_as_lost(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    a = Process(private_redis, redis_prefix, 3.0, cap=2)
    r = connect(private_redis.url)
    r.replicaof("127.0.0.1", 1)  # READONLY to every write, its data kept: an outage of a's own
    alone, _ = a.ask()
    assert alone is not None and a.queue.fallback
    r.replicaof("no", "one")
    assert a.queue.rejoin()
    assert r.zrange(f"{redis_prefix}l:b", 0, -1) == [alone.waiter.ref.encode()]
    assert a.queue.leases_lost == 0


def test_shares_taken_from_a_redis_still_rebuilding_add_up_to_no_more_than_max_inflight(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    # Shares of 2 and 1: a holds the first seat, and takes the remainder, once both are listed.
    a, b = (Process(private_redis, redis_prefix, 1.0, cap=3, name=name) for name in "ab")
    for p in (a, b):
        p.queue.renew()
    assert [(p.queue.processes, p.queue.seat) for p in (a, b)] == [(2, 0), (2, 1)]
    private_redis.stop()
    private_redis.start()  # empty
    b.queue.renew()  # listed alone: first of one
    a.queue.renew()  # first of both
    private_redis.stop()  # again, before b renewed among both
    _a_lease_into_the_outage(a, b)

    for p in (a, b, a, b, a, b):
        p.ask()
    assert _on_engine(a, b) <= 3


def test_shares_from_the_last_renewals_add_up_to_no_more_than_max_inflight_after_a_leave_and_a_join(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    """b was first of b, c, d at its last renewal; d then died and a joined, first of a, b, c.
    By name both would be first and both take the remainder: 2 + 2 + 1 of 4."""
    b, c = (Process(private_redis, redis_prefix, 1.0, cap=4, name=name) for name in "bc")
    d = Process(private_redis, redis_prefix, 0.2, cap=4, name="d")  # a short lease: it dies
    for p in (b, c, d):
        p.queue.renew()
    assert [p.queue.processes for p in (b, c, d)] == [3, 3, 3]
    time.sleep(0.3)  # d's lease lapses
    a = Process(private_redis, redis_prefix, 1.0, cap=4, name="a")  # reaps d as it joins
    c.queue.renew()
    assert [p.queue.processes for p in (a, b, c)] == [3, 3, 3]
    private_redis.stop()  # before b renewed again
    _a_lease_into_the_outage(a, b, c)

    assert _asked_in_turn(4, a, b, c) <= 4


def test_a_process_that_joined_after_the_others_last_renewed_takes_no_share_of_theirs(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    """b and c last renewed as two (shares of 2 and 1 of 3); a joined since: a share of its
    own, from a count of three, would be one more than the backend runs."""
    b, c = (Process(private_redis, redis_prefix, 1.0, cap=3, name=name) for name in "bc")
    for p in (b, c):
        p.queue.renew()
    a = Process(private_redis, redis_prefix, 1.0, cap=3, name="a")
    assert [p.queue.processes for p in (a, b, c)] == [3, 2, 2]
    private_redis.stop()  # before b and c renewed again
    _a_lease_into_the_outage(a, b, c)

    assert _asked_in_turn(3, a, b, c) <= 3


def test_a_join_right_after_anothers_renewal_comes_after_it_even_in_the_same_millisecond(
    private_redis: RedisServer, redis_prefix: str
) -> None:
    """c renews, then a newcomer joins, back to back in one transaction, twenty times (many in
    the same millisecond): c's renewal did not count the newcomer, so none may take a share
    as if it had."""
    c = Process(private_redis, redis_prefix, 3.0, cap=3, name="c")
    q = c.queue
    renew = q._scripts["RENEW"]
    lease_ms = int(q.lease_secs * 1000)
    pipe = connect(private_redis.url).pipeline(transaction=True)
    for n in range(20):
        for name, boot, seat in (("c", q.boot, q.seat), (f"a{n}", "", -1)):
            args = [redis_prefix, name, q._ttl, lease_ms, boot, lease_ms // 2, "0", seat, 0]
            renew(args=args, client=pipe)
    answers = pipe.execute()
    counted = [joined[6] for joined in answers[1::2]]
    assert counted == [0] * 20
