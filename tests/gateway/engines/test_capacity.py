"""The capacity controller behind `max_inflight: auto`, driven step by step with a fake clock:
scripted engine gauges (rise, fall, stale, lying, flapping) and latencies, the limit always
within its floor and ceiling (gateway/engines/capacity.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gateway.engines.capacity import (
    CEILING,
    FLOOR,
    LATENCY,
    METRICS,
    STALE,
    CapacityController,
    Tuning,
)
from gateway.engines.gauges import Gauges

TICK = 0.25


@dataclass
class Engine:
    """A batch of at most `capacity` requests; the rest of what it is sent waits in its queue."""

    capacity: int
    others: int = 0  # another tenant's requests, running first

    def gauges(self, ours: int, kv: float | None = None) -> Gauges:
        load = ours + self.others
        running = min(load, self.capacity)
        return Gauges(running=running, waiting=load - running, kv_usage=kv)


def drive(
    controller: CapacityController,
    engine: Engine,
    *,
    seconds: float,
    start: float = 0.0,
    wanted: int = 1000,
) -> tuple[float, list[int]]:
    """The gateway keeps as many requests at the engine as the limit lets (it has `wanted` to
    send); the engine is read every tick. Returns the time reached and the limits seen."""
    now, limits = start, []
    while now < start + seconds:
        now += TICK
        ours = min(controller.limit, wanted)
        controller.gauges_read(
            engine.gauges(ours), inflight=ours, demand=wanted >= controller.limit, now=now
        )
        controller.tick(inflight=min(controller.limit, wanted), demand=True, now=now)
        limits.append(controller.limit)
    return now, limits


def test_from_a_cold_start_it_finds_the_engines_batch_and_stays_at_it():
    controller = CapacityController(1, 256)
    engine = Engine(capacity=24)

    _, limits = drive(controller, engine, seconds=30)

    assert limits[-1] in (24, 25)  # the edge, probed now and then
    assert all(23 <= limit <= 25 for limit in limits[-60:])
    assert controller.mode == METRICS


def test_when_the_engines_capacity_halves_the_limit_follows_within_seconds():
    controller = CapacityController(1, 256)
    engine = Engine(capacity=32)
    now, _ = drive(controller, engine, seconds=20)
    engine.capacity = 16  # another tenant loaded the engine

    now, limits = drive(controller, engine, seconds=10, start=now)

    settled = next(i for i, limit in enumerate(limits) if limit <= 17) * TICK
    assert settled <= 2.0
    assert all(limit <= 17 for limit in limits[int(settled / TICK) :])


def test_another_clients_requests_at_the_engine_are_load_not_room():
    controller = CapacityController(1, 256)
    engine = Engine(capacity=20, others=8)

    _, limits = drive(controller, engine, seconds=30)

    assert limits[-1] in (12, 13)


def _past_slow_start(controller: CapacityController) -> CapacityController:
    controller.adopt(controller.limit, METRICS)
    return controller


def test_waiting_readings_are_not_a_fall_until_three_in_a_row():
    controller = _past_slow_start(CapacityController(1, 64, start=10))
    controller.gauges_read(Gauges(10, 0, None), inflight=10, demand=False, now=0.25)
    controller.gauges_read(Gauges(9, 3, None), inflight=10, demand=False, now=0.5)
    controller.gauges_read(Gauges(9, 1, None), inflight=10, demand=False, now=0.75)
    assert controller.limit == 10  # requests between two scheduler steps, maybe
    controller.gauges_read(Gauges(8, 2, None), inflight=10, demand=False, now=1.0)
    assert controller.limit == 9  # what of ours the engine runs: 10 - min(3, 1, 2)


def test_a_reading_that_shows_the_engine_queueing_is_never_growth():
    controller = CapacityController(1, 256, start=16)
    controller.gauges_read(Gauges(16, 0, 0.5), inflight=16, demand=True, now=0.0)
    assert controller.limit == 24  # slow start: by half
    controller.gauges_read(Gauges(16, 1, 0.5), inflight=17, demand=True, now=0.25)
    assert controller.limit == 24  # one waiting: held, not grown
    controller.gauges_read(Gauges(16, 8, 0.5), inflight=24, demand=True, now=0.5)
    assert controller.limit == 16  # slow start past the edge: a real queue, a fall at once


def test_requests_caught_between_two_scheduler_steps_never_make_it_fall():
    # A batch of 16 with room, read while requests arrive at tens a second: one often waits
    # for the next step. The limit must not fall below what the engine runs at once.
    controller = _past_slow_start(CapacityController(1, 256, start=16))
    pattern = [1, 1, 0, 2, 1, 0, 0, 1, 1, 0]  # never three in a row
    limits = []
    for i in range(200):
        waiting = pattern[i % len(pattern)]
        gauges = Gauges(16 - waiting, waiting, 0.4)
        limits.append(controller.gauges_read(gauges, inflight=16, demand=False, now=i * TICK))
    assert min(limits) == 16


def test_it_grows_only_while_the_limit_binds():
    controller = CapacityController(1, 64, start=4)
    for i in range(40):
        controller.gauges_read(Gauges(2, 0, 0.1), inflight=2, demand=False, now=i * TICK)
    assert controller.limit == 4


def test_a_kv_cache_near_full_stops_growth_and_then_takes_one_away():
    controller = CapacityController(1, 64, start=8)
    controller.gauges_read(Gauges(8, 0, 0.9), inflight=8, demand=True, now=0.25)
    assert controller.limit == 8
    controller.gauges_read(Gauges(8, 0, 0.97), inflight=8, demand=True, now=0.5)
    assert controller.limit == 7


def test_the_limit_never_leaves_its_floor_and_ceiling():
    controller = CapacityController(3, 10, start=5)
    for i in range(20):
        controller.gauges_read(Gauges(5, 50, None), inflight=5, demand=True, now=i * TICK)
    assert (controller.limit, controller.reason) == (3, FLOOR)
    grow = CapacityController(3, 10, start=5)
    for i in range(100):
        grow.gauges_read(Gauges(0, 0, None), inflight=grow.limit, demand=True, now=i * TICK)
    assert (grow.limit, grow.reason) == (10, CEILING)
    with pytest.raises(ValueError):
        CapacityController(0, 10)
    with pytest.raises(ValueError):
        CapacityController(11, 10)


def test_stale_metrics_fail_closed_at_what_runs_and_hand_over_to_latency():
    controller = CapacityController(2, 64, start=30)
    controller.gauges_read(Gauges(30, 0, None), inflight=30, demand=True, now=0.25)
    assert controller.mode == METRICS

    controller.tick(inflight=12, demand=True, now=0.25 + 1.01)  # no reading since

    assert (controller.limit, controller.reason, controller.mode) == (12, STALE, LATENCY)
    controller.tick(inflight=0, demand=True, now=2.0)
    assert controller.limit == 12  # holds; it never falls below what it allowed for nothing
    controller.gauges_read(Gauges(12, 0, None), inflight=12, demand=True, now=2.25)
    assert controller.mode == METRICS  # fresh metrics bring metrics mode back
    assert controller.limit > 12


def test_stale_fails_closed_to_the_floor_at_the_lowest():
    controller = CapacityController(4, 64, start=30)
    controller.gauges_read(Gauges(30, 0, None), inflight=30, demand=True, now=0.25)
    controller.tick(inflight=0, demand=True, now=5.0)
    assert controller.limit == 4


def answers(controller, *, ttfb, tpot=None, n=8, now):
    for _ in range(n):
        controller.answered(ttfb=ttfb, per_chunk=tpot, now=now)


def test_without_metrics_the_limit_follows_latency_as_aimd():
    controller = CapacityController(1, 64, start=4, tuning=Tuning(window_secs=1.0))
    now = 0.0
    for _ in range(5):  # unloaded: 50 ms to the first byte, and demand: it grows
        answers(controller, ttfb=0.05, tpot=0.01, now=now)
        now += 1.0
        controller.tick(inflight=controller.limit, demand=True, now=now)
    grown = controller.limit
    assert (grown, controller.reason) == (9, LATENCY)  # one more per clean window

    answers(controller, ttfb=0.5, tpot=0.01, now=now)  # the engine queues: first bytes 10x
    now += 1.0
    controller.tick(inflight=grown, demand=True, now=now)

    assert controller.limit == 8  # int(9 * 0.9)


def test_a_time_per_chunk_beyond_its_tolerance_is_a_fall_in_latency_mode():
    controller = CapacityController(1, 64, start=20, tuning=Tuning(window_secs=1.0))
    answers(controller, ttfb=0.05, tpot=0.01, now=0.0)
    controller.tick(inflight=20, demand=False, now=1.0)
    answers(controller, ttfb=0.05, tpot=0.05, now=1.0)
    controller.tick(inflight=20, demand=True, now=2.0)
    assert controller.limit == 18


def test_zero_waiting_while_the_first_byte_takes_ten_times_longer_twice_is_a_lie():
    controller = CapacityController(1, 64, start=16, tuning=Tuning(window_secs=1.0))
    controller.gauges_read(Gauges(16, 0, None), inflight=16, demand=False, now=0.0)
    answers(controller, ttfb=0.05, now=0.0)
    controller.tick(inflight=16, demand=False, now=1.0)
    assert controller.mode == METRICS

    answers(controller, ttfb=0.6, now=1.0)
    controller.gauges_read(Gauges(16, 0, None), inflight=16, demand=False, now=1.9)
    controller.tick(inflight=16, demand=False, now=2.0)
    assert controller.mode == METRICS  # one slow window may be the gateway's own load

    answers(controller, ttfb=0.6, now=2.0)
    controller.gauges_read(Gauges(16, 0, None), inflight=16, demand=True, now=2.9)
    controller.tick(inflight=16, demand=True, now=3.0)

    assert controller.mode == LATENCY and controller.limit == 14
    controller.gauges_read(Gauges(14, 0, None), inflight=14, demand=True, now=3.25)
    assert controller.limit == 14  # the lying gauges no longer open the gate
    answers(controller, ttfb=0.05, now=3.0)
    controller.tick(inflight=14, demand=True, now=4.0)
    controller.gauges_read(Gauges(14, 0, None), inflight=14, demand=True, now=4.25)
    assert controller.mode == METRICS  # they agree again


def test_flapping_metrics_never_push_the_limit_outside_its_range_nor_up_while_queued():
    controller = CapacityController(2, 40, start=10)
    now = 0.0
    for i in range(400):
        now += TICK
        if i % 7 == 3:
            controller.tick(inflight=controller.limit, demand=True, now=now + 2)  # a gap
            now += 2
            continue
        waiting = (i * 13) % 5 if i % 3 == 0 else 0
        before = controller.limit
        controller.gauges_read(
            Gauges(controller.limit, waiting, (i % 10) / 10),
            inflight=controller.limit,
            demand=True,
            now=now,
        )
        assert 2 <= controller.limit <= 40
        if waiting and controller._waited[0] > 0:
            assert controller.limit <= before


def test_every_move_of_the_limit_is_counted():
    controller = CapacityController(1, 256)
    drive(controller, Engine(capacity=8), seconds=10)
    assert controller.changes >= 4


def test_probes_that_keep_passing_the_edge_wait_longer_and_one_that_holds_probes_quickly_again():
    controller = CapacityController(1, 256)
    engine = Engine(capacity=16)
    now, _ = drive(controller, engine, seconds=20)  # at the edge: probes to 17 fail
    _, limits = drive(controller, engine, seconds=40, start=now)
    above = sum(limit > 16 for limit in limits) / len(limits)
    assert above < 0.15  # with a probe every second it was above the edge 3/4 of the time
    engine.capacity = 24  # room again: the next probe holds, and the ones after come quickly
    _, limits = drive(controller, engine, seconds=20, start=now + 40)
    assert limits[-1] >= 23


def test_it_grows_again_only_once_the_last_growth_is_at_the_engine():
    controller = CapacityController(1, 256, start=8)
    controller.gauges_read(Gauges(8, 0, 0.2), inflight=8, demand=True, now=0.0)
    assert controller.limit == 12
    # The engine has not been sent the four more yet (another process is granted them later).
    controller.gauges_read(Gauges(8, 0, 0.2), inflight=8, demand=True, now=0.25)
    assert controller.limit == 12
    controller.gauges_read(Gauges(12, 0, 0.3), inflight=12, demand=True, now=0.5)
    assert controller.limit == 18
