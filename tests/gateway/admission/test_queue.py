"""The admission queue: exact admission order, slot accounting, deadlines, cancellation, reroute."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable

import pytest

from gateway.admission.queue import AdmissionQueue
from gateway.admission.schedulers import SchedulerConfig
from gateway.admission.types import (
    ADMITTED,
    CANCELLED,
    EXPIRED,
    FAILED,
    WAITING,
    Acquired,
    QueueCancelled,
    QueueFull,
    QueueTimeout,
    Route,
    RouteGone,
    Slot,
    Target,
    TurnedAway,
    Waiter,
)
from gateway.admission.wait import route_or_wait, turn_away
from gateway.core.classes import HIGH, LOW, MEDIUM
from tests.support.admission import FakeClock, Recorder, drain, enter, hold, resolver, route


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture(params=["local", "redis"])
def make_queue(
    request: pytest.FixtureRequest, clock: FakeClock, rec: Recorder
) -> Callable[..., AdmissionQueue]:
    """The queue of one process: in memory, or sharing its line on a private Redis."""
    if request.param == "local":

        def make(**config: object) -> AdmissionQueue:
            return AdmissionQueue(clock=clock, config=SchedulerConfig(**config), observer=rec)  # type: ignore[arg-type]

        return make
    from gateway.admission.shared.queue import SharedAdmissionQueue
    from gateway.core.redis_clients import connect

    server = request.getfixturevalue("redis_server")
    prefix = request.getfixturevalue("redis_prefix")

    def make_shared(**config: object) -> AdmissionQueue:
        return SharedAdmissionQueue(
            connect(server.url, timeout=10.0),
            prefix=prefix,
            clock=clock,
            config=SchedulerConfig(**config),  # type: ignore[arg-type]
            observer=rec,
        )

    return make_shared


@pytest.fixture
def queue(make_queue: Callable[..., AdmissionQueue]) -> AdmissionQueue:
    return make_queue()


@pytest.fixture
def local_queue(clock: FakeClock, rec: Recorder) -> AdmissionQueue:
    """For this process's own bookkeeping (heaps, indexes), which Redis does not change: its
    variant would only add thousands of round trips."""
    return AdmissionQueue(clock=clock, observer=rec)


# ----- strict priority ------------------------------------------------------------------------


def test_high_goes_before_medium_before_low(queue: AdmissionQueue, rec: Recorder) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low", cls=LOW)
    enter(queue, chat, "medium", cls=MEDIUM)
    enter(queue, chat, "high", cls=HIGH)
    assert queue.depth == [1, 1, 1]

    drain(queue, rec, running)

    assert rec.order == ["high", "medium", "low"]
    assert not any(reordered for _, _, reordered in rec.flags)


def test_arrival_order_holds_within_a_class(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    for i, cls in enumerate([LOW, HIGH, MEDIUM, LOW, HIGH, MEDIUM, HIGH]):
        clock.t = float(i)
        enter(queue, chat, f"{cls}-{i}", cls=cls)

    drain(queue, rec, running)

    assert rec.order == ["2-1", "2-4", "2-6", "1-2", "1-5", "0-0", "0-3"]


def test_hint_offsets_order_within_a_band_but_never_cross_bands(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "medium-10", cls=MEDIUM, offset=-10)
    enter(queue, chat, "medium-49", cls=MEDIUM, offset=-49)
    enter(queue, chat, "medium", cls=MEDIUM)
    enter(queue, chat, "low+49", cls=LOW, offset=49)
    enter(queue, chat, "high-49", cls=HIGH, offset=-49)
    enter(queue, chat, "medium-10-later", cls=MEDIUM, offset=-10)

    drain(queue, rec, running)

    assert rec.order == [
        "high-49",
        "medium",
        "medium-10",
        "medium-10-later",
        "medium-49",
        "low+49",
    ]


def test_an_offset_is_clamped_inside_its_band(queue: AdmissionQueue, rec: Recorder) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    huge = enter(queue, chat, "low+500", cls=LOW, offset=500)
    tiny = enter(queue, chat, "medium-500", cls=MEDIUM, offset=-500)
    assert (huge.offset, tiny.offset) == (49, -49)

    drain(queue, rec, running)

    assert rec.order == ["medium-500", "low+500"]


def test_without_prioritization_everyone_is_one_class_in_arrival_order(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(prioritize=False)
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low", cls=LOW)
    enter(queue, chat, "high+49", cls=HIGH, offset=49)
    enter(queue, chat, "medium-20", cls=MEDIUM, offset=-20)
    enter(queue, chat, "high", cls=HIGH)
    assert queue.depth == [0, 4, 0]

    drain(queue, rec, running)

    assert rec.order == ["low", "high+49", "medium-20", "high"]


# ----- executable first -----------------------------------------------------------------------


def test_a_waiter_whose_backends_are_busy_does_not_block_a_lower_class_waiter_on_a_freed_backend(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    model_a, model_b = route("model-a", a), route("model-b", b)
    (running_a,) = hold(queue, model_a)
    (running_b,) = hold(queue, model_b)
    high = enter(queue, model_a, "high-on-a", cls=HIGH)
    low = enter(queue, model_b, "low-on-b", cls=LOW)

    running_b.release()

    assert rec.order == ["low-on-b"]
    assert low.state == ADMITTED and low.acquired is not None and low.acquired.backend == "b"
    assert high.state == WAITING
    assert queue.depth == [0, 0, 1]
    running_a.release()
    assert rec.order == ["low-on-b", "high-on-a"]


def test_a_waiter_never_takes_a_slot_of_a_backend_outside_its_route(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    model_a, model_b = route("model-a", a), route("model-b", b)
    hold(queue, model_a)
    (running_b,) = hold(queue, model_b)
    high = enter(queue, model_a, "high-on-a", cls=HIGH)

    running_b.release()
    queue.dispatch_pass()

    assert high.state == WAITING
    assert b.inflight == 0 and b.free
    assert rec.order == []


def test_a_newcomer_that_can_use_a_free_backend_goes_straight_in_while_others_wait_elsewhere(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    model_a, model_b = route("model-a", a), route("model-b", b)
    hold(queue, model_a)
    enter(queue, model_a, "high-on-a", cls=HIGH)

    low = enter(queue, model_b, "low-on-b", cls=LOW)

    assert low.state == ADMITTED
    assert rec.immediate("low-on-b") is True
    assert queue.depth == [0, 0, 1]


def test_a_newcomer_waits_its_turn_behind_a_better_waiter_for_the_same_backend(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "high", cls=HIGH)
    running.release()
    assert rec.order == ["high"]
    # The high request runs; a medium newcomer finds the backend full and must wait.
    medium = enter(queue, chat, "medium")
    assert medium.state == WAITING


# ----- slots ----------------------------------------------------------------------------------


def test_a_waiter_holds_no_slot(queue: AdmissionQueue) -> None:
    gpu = Slot("gpu", max_inflight=2)
    chat = route("chat", gpu)
    hold(queue, chat, 2)
    for i in range(5):
        enter(queue, chat, f"waiter-{i}")

    assert gpu.inflight == 2
    assert queue.waiting == 5
    assert all(w.acquired is None for w in queue.waiters())


def test_releasing_a_slot_admits_the_best_waiter_immediately(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "medium")
    high = enter(queue, chat, "high", cls=HIGH)

    running.release()  # no dispatch_pass: the release itself hands the slot over

    assert rec.order == ["high"]
    assert rec.immediate("high") is False
    assert high.acquired is not None and high.acquired.backend == "gpu"
    assert gpu.inflight == 1
    assert queue.depth == [0, 1, 0]


def test_releasing_twice_frees_the_slot_only_once(queue: AdmissionQueue, rec: Recorder) -> None:
    gpu = Slot("gpu", max_inflight=2)
    chat = route("chat", gpu)
    first, second = hold(queue, chat, 2)
    enter(queue, chat, "waiter-1")
    enter(queue, chat, "waiter-2")

    first.release()
    first.release()

    assert first.released
    assert rec.order == ["waiter-1"]
    assert gpu.inflight == 2
    second.release()
    assert rec.order == ["waiter-1", "waiter-2"]


def test_an_acquired_reports_its_backend_and_the_model_id_that_backend_knows(
    queue: AdmissionQueue,
) -> None:
    gpu = Slot("gpu")
    (acquired,) = hold(queue, route("llama", gpu))
    assert (acquired.backend, acquired.model) == ("gpu", "llama-model")


def _free_targets(w: Waiter) -> list[str]:
    return [t.slot.name for t in w.route.usable_targets(w.excluded) if t.slot.free]


def test_invariants_hold_through_a_random_mix_of_submits_releases_cancels_and_expiries(
    clock: FakeClock,
) -> None:
    rng = random.Random(20250611)

    class Checking(Recorder):
        """Checks every admission as it happens and keeps the running requests."""

        def __init__(self) -> None:
            super().__init__()
            self.running: list[Acquired] = []

        def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None:
            super().admitted(waiter, immediate=immediate, reordered=reordered)
            acq = waiter.acquired
            assert acq is not None
            slot = acq.target.slot
            assert slot.usable, "admitted onto a backend that is down"
            assert 0 < slot.inflight <= slot.max_inflight, "admitted past max_inflight"
            assert slot.name not in waiter.excluded, "a retry went back to its failed backend"
            assert acq.target in waiter.route.usable_targets(waiter.excluded)
            self.running.append(acq)

    for scheduler in ("strict", "serial", "fcfs", "wspt", "edf"):
        obs = Checking()
        q = AdmissionQueue(clock=clock, config=SchedulerConfig(name=scheduler), observer=obs)
        slots = [Slot(f"b{i}", max_inflight=rng.randint(1, 3)) for i in range(5)]
        routes = [
            route("solo", slots[0]),
            route("pair", slots[1], slots[2]),
            route("wide", slots[0], slots[1], slots[2], slots[3], strategy="round_robin"),
            route("warm", slots[2], slots[3], strategy="prefix_affinity"),
            route("safe", slots[3], fallback=(slots[4],)),
        ]
        for _step in range(3000):
            op = rng.random()
            held = obs.running
            live = q.waiters()
            if op < 0.40:
                with contextlib.suppress(QueueFull):  # its estimated wait beyond its budget
                    q.submit(
                        q.waiter(
                            rng.choice(routes),
                            cls=rng.choice((LOW, MEDIUM, HIGH)),
                            offset=rng.randint(-60, 60),
                            budget=rng.choice((0.0, 0.5, 2.0, 10.0)),
                            affinity_key=rng.randint(0, 5),
                            cost=rng.randint(1, 100),
                        )
                    )
            elif op < 0.65 and held:
                rng.choice(held).release()
            elif op < 0.72 and live:
                q.cancel(rng.choice(live))
            elif op < 0.76 and held:
                q.cancel(rng.choice(held).waiter)  # admitted, but the caller already left
            elif op < 0.82 and held:
                failed = rng.choice(held)
                retry = q.retry_waiter(failed.waiter, failed.backend)
                failed.release()
                q.submit(retry)
            elif op < 0.90:
                clock.t += rng.choice((0.1, 0.5, 1.0))
                q.dispatch_pass()
                assert all(w.deadline > clock.t for w in q.waiters())
            elif op < 0.95:
                s = rng.choice(slots)
                s.healthy = not s.healthy
                q.slot_changed(s)
            else:
                s = rng.choice(slots)
                s.max_inflight = rng.randint(1, 4)
                q.slot_changed(s)

            obs.running = [a for a in obs.running if not a.released]
            for s in slots:
                assert s.inflight >= 0
                assert s.inflight == sum(1 for a in obs.running if a.target.slot is s)
            live = q.waiters()
            assert all(w.state == WAITING and w.acquired is None for w in live)
            assert q.depth == [sum(1 for w in live if w.cls == c) for c in (LOW, MEDIUM, HIGH)]
            for w in live:
                assert _free_targets(w) == [], f"{w.seq} waits while {_free_targets(w)} is free"
        assert len(obs.admitted_waiters) > 500


# ----- deadlines ------------------------------------------------------------------------------


def test_a_dispatch_pass_expires_overdue_waiters_in_every_class(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    high = enter(queue, chat, "high", cls=HIGH, budget=5)
    medium = enter(queue, chat, "medium", cls=MEDIUM, budget=20)
    low = enter(queue, chat, "low", cls=LOW, budget=5)

    clock.t = 4.9
    assert queue.dispatch_pass() == 0
    assert queue.waiting == 3

    clock.t = 5.0
    queue.dispatch_pass()
    assert (high.state, medium.state, low.state) == (EXPIRED, WAITING, EXPIRED)
    assert queue.depth == [0, 1, 0]
    assert queue.waiters() == [medium]
    assert ("high", EXPIRED) in rec.outcomes and ("low", EXPIRED) in rec.outcomes

    clock.t = 25.0
    queue.dispatch_pass()
    assert medium.state == EXPIRED and queue.waiting == 0


def test_a_zero_budget_is_admitted_when_a_slot_is_free(queue: AdmissionQueue) -> None:
    gpu = Slot("gpu", max_inflight=1)
    w = enter(queue, route("chat", gpu), "hurry", budget=0)
    assert w.state == ADMITTED and gpu.inflight == 1


def test_a_zero_budget_expires_at_once_when_nothing_is_free(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    w = queue.waiter(chat, budget=0, tag="hurry")
    assert queue.submit(w) is None
    assert w.state == EXPIRED
    assert queue.waiting == 0 and queue.waiters() == []
    assert rec.outcomes == [("hurry", EXPIRED)]


def test_a_zero_budget_gets_a_free_slot_that_the_waiting_requests_cannot_use(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, spare = Slot("a", max_inflight=1), Slot("spare", max_inflight=1)
    hold(queue, route("model-a", a))
    # Someone waits for `a` with `spare` as its offline fallback: not usable while `a` is up.
    enter(queue, route("model-a-safe", a, fallback=(spare,)), "waits-for-a", cls=HIGH)

    w = enter(queue, route("model-s", spare), "hurry", cls=LOW, budget=0)

    assert w.state == ADMITTED
    assert w.acquired is not None and w.acquired.backend == "spare"
    assert rec.immediate("hurry") is True


async def test_route_or_wait_raises_queue_timeout_when_the_budget_runs_out() -> None:
    queue = AdmissionQueue()
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    w = queue.waiter(chat, budget=0.05)

    started = time.monotonic()
    with pytest.raises(QueueTimeout):
        await route_or_wait(queue, w)

    assert time.monotonic() - started >= 0.04
    assert w.state == EXPIRED
    assert queue.waiters() == [] and queue.waiting == 0 and queue.depth == [0, 0, 0]
    assert gpu.inflight == 1


async def test_route_or_wait_times_out_at_once_on_a_zero_budget_with_nothing_free(
    clock: FakeClock,
) -> None:
    queue = AdmissionQueue(clock=clock)
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    with pytest.raises(QueueTimeout):
        await route_or_wait(queue, queue.waiter(chat, budget=0))
    assert queue.waiting == 0


async def test_route_or_wait_raises_queue_cancelled_when_the_client_goes_away() -> None:
    queue = AdmissionQueue()
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    w = queue.waiter(chat, budget=30)
    gone: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_later(0.01, gone.set_result, None)

    started = time.monotonic()
    with pytest.raises(QueueCancelled):
        await route_or_wait(queue, w, gone=gone)

    assert time.monotonic() - started < 5
    assert w.state == CANCELLED
    assert queue.waiters() == [] and queue.waiting == 0 and queue.depth == [0, 0, 0]


async def test_route_or_wait_returns_a_slot_released_while_it_waits() -> None:
    queue = AdmissionQueue()
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    w = queue.waiter(chat, budget=30)
    asyncio.get_running_loop().call_later(0.01, running.release)

    acquired = await route_or_wait(queue, w)

    assert acquired.waiter is w and acquired.backend == "gpu"
    assert w.state == ADMITTED and w.on_admit is None
    assert gpu.inflight == 1 and queue.waiting == 0
    acquired.release()
    assert gpu.inflight == 0


async def test_route_or_wait_returns_at_once_when_a_slot_is_free() -> None:
    queue = AdmissionQueue()
    acquired = await route_or_wait(queue, queue.waiter(route("chat", Slot("gpu")), budget=0))
    assert acquired.backend == "gpu"


async def test_route_or_wait_gives_back_a_slot_admitted_in_the_instant_the_client_left() -> None:
    queue = AdmissionQueue()
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    leaver = queue.waiter(chat, cls=HIGH, budget=30)
    gone: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(route_or_wait(queue, leaver, gone=gone))
    await asyncio.sleep(0)
    patient = queue.waiter(chat, cls=LOW, budget=30)
    queue.submit(patient)

    running.release()  # the leaver is admitted ...
    gone.set_result(None)  # ... and its client leaves before it could run
    with pytest.raises(QueueCancelled):
        await task

    assert leaver.state == CANCELLED
    assert leaver.acquired is not None and leaver.acquired.released
    assert patient.state == ADMITTED
    assert gpu.inflight == 1 and queue.waiting == 0


async def test_cancelling_the_waiting_task_takes_the_waiter_out_of_line() -> None:
    queue = AdmissionQueue()
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    w = queue.waiter(chat, budget=30)
    task = asyncio.create_task(route_or_wait(queue, w))
    await asyncio.sleep(0.01)
    assert queue.waiting == 1

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert w.state == CANCELLED and queue.waiting == 0 and queue.waiters() == []


async def test_route_or_wait_raises_queue_timeout_when_a_dispatch_pass_expires_it(
    clock: FakeClock,
) -> None:
    queue = AdmissionQueue(clock=clock)
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    w = queue.waiter(chat, budget=5)
    task = asyncio.create_task(route_or_wait(queue, w))
    await asyncio.sleep(0)
    clock.t = 6
    queue.dispatch_pass()
    with pytest.raises(QueueTimeout):
        await task
    assert queue.waiting == 0


# ----- cancellation ---------------------------------------------------------------------------


def test_cancelling_a_waiting_waiter_removes_it_at_once(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    first = enter(queue, chat, "first", cls=HIGH)
    enter(queue, chat, "second", cls=HIGH)

    queue.cancel(first)

    assert first.state == CANCELLED
    assert queue.depth == [0, 0, 1]
    assert [w.tag for w in queue.waiters()] == ["second"]
    assert rec.outcomes == [("first", CANCELLED)]
    running.release()
    assert rec.order == ["second"]


def test_cancelling_an_admitted_waiter_whose_caller_left_hands_the_slot_to_the_next(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    leaver = enter(queue, chat, "leaver", cls=HIGH)
    enter(queue, chat, "next", cls=LOW)
    running.release()
    assert leaver.state == ADMITTED

    queue.cancel(leaver)

    assert leaver.state == CANCELLED
    assert leaver.acquired is not None and leaver.acquired.released
    assert rec.order == ["leaver", "next"]
    assert gpu.inflight == 1 and queue.waiting == 0
    assert ("leaver", CANCELLED) in rec.outcomes


def test_cancelling_again_or_after_release_changes_nothing(queue: AdmissionQueue) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    w = enter(queue, chat, "w")
    queue.cancel(w)
    queue.cancel(w)
    assert queue.depth == [0, 0, 0]

    running.release()
    queue.cancel(running.waiter)  # already finished: its slot is not freed twice
    assert gpu.inflight == 0
    assert running.waiter.state == ADMITTED


# ----- health and capacity --------------------------------------------------------------------


def test_an_unhealthy_backend_is_not_used(queue: AdmissionQueue) -> None:
    sick, well = Slot("sick", max_inflight=4, healthy=False), Slot("well", max_inflight=1)
    chat = route("chat", sick, well)
    first = enter(queue, chat, "first")
    second = enter(queue, chat, "second")

    assert first.acquired is not None and first.acquired.backend == "well"
    assert second.state == WAITING
    assert sick.inflight == 0


@pytest.mark.parametrize("switch", ["healthy", "enabled"])
def test_slot_changed_admits_waiters_when_a_backend_comes_back(
    queue: AdmissionQueue, rec: Recorder, switch: str
) -> None:
    gpu = Slot("gpu", max_inflight=2)
    setattr(gpu, switch, False)
    chat = route("chat", gpu)
    enter(queue, chat, "low", cls=LOW)
    enter(queue, chat, "medium")
    enter(queue, chat, "high", cls=HIGH)
    assert queue.waiting == 3

    setattr(gpu, switch, True)
    queue.slot_changed(gpu)

    assert rec.order == ["high", "medium"]
    assert queue.depth == [1, 0, 0]


def test_a_dispatch_pass_admits_waiters_when_a_backend_is_healthy_again(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=2, healthy=False)
    chat = route("chat", gpu)
    enter(queue, chat, "low", cls=LOW)
    enter(queue, chat, "medium")
    enter(queue, chat, "high", cls=HIGH)

    gpu.healthy = True
    assert queue.dispatch_pass() == 2

    assert rec.order == ["high", "medium"]


def test_a_removed_backend_is_not_used(queue: AdmissionQueue) -> None:
    gone, kept = Slot("gone", removed=True), Slot("kept", max_inflight=1)
    chat = route("chat", gone, kept)
    enter(queue, chat, "first")
    second = enter(queue, chat, "second")
    queue.dispatch_pass()
    assert second.state == WAITING and gone.inflight == 0


def test_raising_max_inflight_lets_more_in_on_the_next_pass(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    for tag, cls in [("low", LOW), ("medium", MEDIUM), ("high", HIGH), ("medium-2", MEDIUM)]:
        enter(queue, chat, tag, cls=cls)

    gpu.max_inflight = 3
    assert queue.dispatch_pass() == 2

    assert rec.order == ["high", "medium"]
    assert gpu.inflight == 3
    gpu.max_inflight = 5
    queue.slot_changed(gpu)
    assert rec.order == ["high", "medium", "medium-2", "low"]


def test_a_dispatch_pass_admits_in_priority_order_across_groups(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=4, healthy=False)
    other = Slot("other", max_inflight=4, healthy=False)
    chat, code, docs = route("chat", gpu), route("code", gpu, other), route("docs", other, gpu)
    arrivals = [
        (chat, "chat-low", LOW),
        (code, "code-medium", MEDIUM),
        (docs, "docs-high", HIGH),
        (chat, "chat-high", HIGH),
        (docs, "docs-medium", MEDIUM),
        (code, "code-high", HIGH),
        (chat, "chat-medium", MEDIUM),
        (docs, "docs-low", LOW),
    ]
    for i, (r, tag, cls) in enumerate(arrivals):
        clock.t = float(i)
        enter(queue, r, tag, cls=cls)

    gpu.healthy = True
    assert queue.dispatch_pass() == 4

    assert rec.order == ["docs-high", "chat-high", "code-high", "code-medium"]


# ----- fallback -------------------------------------------------------------------------------


def test_fallback_is_not_used_while_primaries_are_merely_busy(queue: AdmissionQueue) -> None:
    a, b, spare = Slot("a", max_inflight=1), Slot("b", max_inflight=1), Slot("spare")
    chat = route("chat", a, b, fallback=(spare,))
    hold(queue, chat, 2)
    w = enter(queue, chat, "waiter")
    queue.dispatch_pass()
    assert w.state == WAITING and spare.inflight == 0


def test_fallback_is_used_only_when_every_primary_is_down(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, b, spare = Slot("a", max_inflight=1), Slot("b", max_inflight=1), Slot("spare")
    chat = route("chat", a, b, fallback=(spare,))
    hold(queue, chat, 2)
    w = enter(queue, chat, "waiter")

    a.healthy = False
    queue.dispatch_pass()
    assert w.state == WAITING, "one primary is still up"

    b.enabled = False
    queue.dispatch_pass()
    assert w.acquired is not None
    assert (w.acquired.backend, w.acquired.model) == ("spare", "chat-fallback")


def test_losing_the_last_primary_hands_its_waiters_to_the_fallback_at_once(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a, spare = Slot("a", max_inflight=1), Slot("spare", max_inflight=1)
    chat = route("chat", a, fallback=(spare,))
    hold(queue, chat)
    enter(queue, chat, "medium")
    enter(queue, chat, "high", cls=HIGH)

    a.healthy = False
    queue.slot_changed(a)  # no dispatch pass yet

    assert rec.order == ["high"]
    assert spare.inflight == 1


def test_fallback_is_not_used_when_primaries_are_up_but_excluded_by_a_retry(
    queue: AdmissionQueue,
) -> None:
    a, spare = Slot("a", max_inflight=1), Slot("spare")
    chat = route("chat", a, fallback=(spare,))
    first = enter(queue, chat, "first")
    assert first.acquired is not None
    retry = queue.retry_waiter(first, "a")
    first.acquired.release()

    queue.submit(retry)
    queue.dispatch_pass()

    assert retry.state == WAITING
    assert a.inflight == 0 and spare.inflight == 0


# ----- retry ----------------------------------------------------------------------------------


def test_a_retry_keeps_its_place_in_line(queue: AdmissionQueue, rec: Recorder) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat = route("chat", a, b)
    running_a, running_b = hold(queue, chat, 2)
    first = enter(queue, chat, "first")
    enter(queue, chat, "second")
    enter(queue, chat, "third")
    running_a.release()
    assert first.acquired is not None and first.acquired.backend == "a"

    # The dispatch to `a` failed before any byte was sent: try again elsewhere, same place.
    retry = queue.retry_waiter(first, "a")
    assert queue.submit(retry) is None
    first.acquired.release()
    assert rec.order == ["first", "second"]
    running_b.release()

    assert rec.order == ["first", "second", "first"]
    assert retry.acquired is not None and retry.acquired.backend == "b"
    assert [w.tag for w in queue.waiters()] == ["third"]
    assert retry.tag == "first" and retry.arrival == first.arrival


def test_a_retry_never_returns_to_its_failed_backend(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat = route("chat", a, b)
    running_a, running_b = hold(queue, chat, 2)
    first = enter(queue, chat, "first", cls=HIGH)
    clock.t = 1
    running_b.release()
    assert first.acquired is not None and first.acquired.backend == "b"
    running_a.release()
    # It failed on `b`: the retry goes to `a`, and when that fails too it has nowhere to go.
    retry = queue.retry_waiter(first, "b")
    first.acquired.release()
    queue.submit(retry)
    assert retry.acquired is not None and retry.acquired.backend == "a"
    again = queue.retry_waiter(retry, "a")
    retry.acquired.release()
    queue.submit(again)
    queue.dispatch_pass()

    assert again.state == WAITING
    assert a.inflight == 0 and b.inflight == 0
    assert again.excluded == frozenset({"a", "b"})


def test_a_retry_that_must_wait_again_is_queued_and_expires_with_its_original_deadline(
    queue: AdmissionQueue, clock: FakeClock
) -> None:
    a = Slot("a", max_inflight=1)
    b = Slot("b", max_inflight=1)
    chat = route("chat", a, b)
    running_a, _running_b = hold(queue, chat, 2)
    w = enter(queue, chat, "w", budget=10)
    running_a.release()
    assert w.acquired is not None

    retry = queue.retry_waiter(w, "a")
    queue.submit(retry)

    assert retry.state == WAITING and retry.deadline == 10
    clock.t = 10
    queue.dispatch_pass()
    assert retry.state == EXPIRED and queue.waiting == 0


def test_a_retry_after_a_scheduler_change_is_ordered_by_the_new_scheduler(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue()
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat = route("chat", a, b)
    short = enter(queue, chat, "short", cost=1)  # admitted under strict: a strict key
    (running_b,) = hold(queue, chat)
    enter(queue, chat, "long-1", cost=1000)
    enter(queue, chat, "long-2", cost=1000)
    queue.config.name = "wspt"
    queue.reroute(lambda key: chat, rekey=True)
    assert short.acquired is not None and short.acquired.backend == "a"

    retry = queue.retry_waiter(short, "a")  # its dispatch to `a` failed
    short.acquired.release()  # `a` goes to long-1; the retry may not go back there
    queue.submit(retry)
    running_b.release()

    # wspt: 1 / 1 token beats 1 / 1000, and the short one came first anyway.
    assert rec.order == ["short", "long-1", "short"]
    assert retry.acquired is not None and retry.acquired.backend == "b"
    assert retry.key == queue.retry_waiter(retry, "b").key == (-MEDIUM, -1.0, retry.seq)


def test_a_retry_after_a_scheduler_change_is_displaced_by_the_new_schedulers_order(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(max_waiters=2)
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat, only_b = route("chat", a, b), route("only-b", b)
    first = enter(queue, chat, "first", cls=LOW, cost=1)  # on `a`, keyed by strict
    hold(queue, only_b)
    clock.t = 1
    enter(queue, only_b, "long", cls=LOW, cost=1000)
    queue.config.name = "wspt"
    queue.reroute(lambda key: {"chat": chat, "only-b": only_b}[str(key)], rekey=True)
    assert first.acquired is not None
    retry = queue.retry_waiter(first, "a")
    first.acquired.release()
    queue.submit(retry)

    # Under wspt the long prompt is the last of the lows, whatever strict would have said.
    assert _displaced_by_a_high(queue, rec, only_b) == ["long"]


# ----- strategies -----------------------------------------------------------------------------


def test_least_inflight_spreads_load(queue: AdmissionQueue) -> None:
    slots = [Slot(n, max_inflight=4) for n in ("a", "b", "c")]
    chat = route("chat", *slots)
    hold(queue, chat, 6)
    assert [s.inflight for s in slots] == [2, 2, 2]


def test_least_inflight_gives_a_heavier_backend_more(queue: AdmissionQueue) -> None:
    heavy, light = Slot("heavy", max_inflight=4, weight=2), Slot("light", max_inflight=4)
    hold(queue, route("chat", heavy, light), 6)
    assert (heavy.inflight, light.inflight) == (4, 2)


def test_round_robin_rotates(queue: AdmissionQueue) -> None:
    chat = route("chat", *(Slot(n, max_inflight=10) for n in "abc"), strategy="round_robin")
    picks = [acq.backend for acq in hold(queue, chat, 9)]
    assert sorted(picks[:3]) == ["a", "b", "c"]
    assert picks[3:6] == picks[:3] and picks[6:9] == picks[:3]


def _key_warm_on(q: AdmissionQueue, r: Route, backend: str) -> int:
    return next(k for k in range(10_000) if q.waiter(r, affinity_key=k).affinity == backend)


def test_prefix_affinity_sends_the_same_key_to_the_same_backend(queue: AdmissionQueue) -> None:
    chat = route("chat", *(Slot(n, max_inflight=10) for n in "abc"), strategy="prefix_affinity")
    for backend in "abc":
        key = _key_warm_on(queue, chat, backend)
        picks = {enter(queue, chat, "w", affinity_key=key).acquired.backend for _ in range(4)}  # type: ignore[union-attr]
        assert picks == {backend}


def test_prefix_affinity_goes_elsewhere_when_the_warm_backend_is_full(
    queue: AdmissionQueue,
) -> None:
    warm, cold = Slot("warm", max_inflight=1), Slot("cold", max_inflight=1)
    chat = route("chat", warm, cold, strategy="prefix_affinity")
    key = _key_warm_on(queue, chat, "warm")
    first = enter(queue, chat, "first", affinity_key=key)
    second = enter(queue, chat, "second", affinity_key=key)
    assert first.acquired is not None and first.acquired.backend == "warm"
    assert second.acquired is not None and second.acquired.backend == "cold"


# ----- the serial scheduler -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("medium_arrives_at", "expected", "reordered"),
    [
        (5999.0, ["medium", "low"], False),
        (6000.0, ["low", "medium"], True),  # equal scores keep arrival order
        (6001.0, ["low", "medium"], True),
    ],
)
def test_aging_lets_an_old_low_waiter_overtake_a_newer_medium_one_after_gap_times_divisor(
    make_queue: Callable[..., AdmissionQueue],
    rec: Recorder,
    clock: FakeClock,
    medium_arrives_at: float,
    expected: list[str],
    reordered: bool,
) -> None:
    queue = make_queue(name="serial", aging_divisor=60.0)
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low", cls=LOW, budget=99_999)
    clock.t = medium_arrives_at
    enter(queue, chat, "medium", cls=MEDIUM, budget=99_999)
    clock.t = 7000.0

    drain(queue, rec, running)

    assert rec.order == expected
    assert rec.reordered(expected[0]) is reordered
    assert rec.reordered(expected[1]) is False


def test_aging_also_reorders_across_routes(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="serial", aging_divisor=1.0)
    gpu = Slot("gpu", max_inflight=1)
    (running,) = hold(queue, route("chat", gpu))
    enter(queue, route("batch", gpu), "old-low", cls=LOW, budget=999)
    clock.t = 150
    enter(queue, route("chat", gpu), "new-medium", budget=999)

    drain(queue, rec, running)

    assert rec.order == ["old-low", "new-medium"]
    assert [r for t, _, r in rec.flags if t != "blocker"] == [True, False]


def test_serial_without_aging_or_affinity_is_strict(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=0)
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low", cls=LOW)
    clock.t = 1e6
    enter(queue, chat, "medium-5", offset=-5)
    enter(queue, chat, "medium")

    drain(queue, rec, running)

    assert rec.order == ["medium", "medium-5", "low"]
    assert not any(r for _, _, r in rec.flags)


def _warm_pair(queue: AdmissionQueue) -> tuple[Slot, Slot, Route, int, int]:
    """Two one-slot backends behind a prefix-affinity route, both busy; a key warm on each."""
    warm, cold = Slot("warm", max_inflight=1), Slot("cold", max_inflight=1)
    chat = route("chat", warm, cold, strategy="prefix_affinity")
    hold(queue, chat, 2)
    return warm, cold, chat, _key_warm_on(queue, chat, "warm"), _key_warm_on(queue, chat, "cold")


def _release_on(queue: AdmissionQueue, rec: Recorder, backend: str) -> None:
    running = next(
        w.acquired
        for w in rec.admitted_waiters
        if w.acquired is not None and not w.acquired.released and w.acquired.backend == backend
    )
    running.release()


def test_affinity_breaks_a_near_tie_in_favour_of_the_waiter_warm_on_the_freed_backend(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=10)
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "cold-ahead", offset=5, affinity_key=key_cold)
    enter(queue, chat, "warm-behind", offset=0, affinity_key=key_warm)

    _release_on(queue, rec, "warm")

    assert rec.order == ["warm-behind"]
    assert rec.reordered("warm-behind") is True


def test_affinity_does_not_overturn_more_than_its_bonus(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=10)
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "cold-ahead", offset=11, affinity_key=key_cold)
    enter(queue, chat, "warm-behind", offset=0, affinity_key=key_warm)

    _release_on(queue, rec, "warm")

    assert rec.order == ["cold-ahead"]
    assert rec.reordered("cold-ahead") is False


def test_affinity_on_another_backend_earns_nothing(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=10)
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "ahead", offset=5, affinity_key=key_warm)
    enter(queue, chat, "behind", offset=0, affinity_key=key_cold)

    _release_on(queue, rec, "warm")

    assert rec.order == ["ahead"]
    assert rec.reordered("ahead") is False


@pytest.mark.parametrize(
    ("bonus", "low_offset", "medium_offset"), [(10, 49, -49), (99, 0, -49), (99, 49, 0)]
)
def test_affinity_never_lifts_a_waiter_across_a_band(
    make_queue: Callable[..., AdmissionQueue],
    rec: Recorder,
    bonus: int,
    low_offset: int,
    medium_offset: int,
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=bonus)
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "warm-low", cls=LOW, offset=low_offset, affinity_key=key_warm)
    enter(queue, chat, "cold-medium", offset=medium_offset, affinity_key=key_cold)

    _release_on(queue, rec, "warm")

    assert rec.order == ["cold-medium"]
    assert rec.reordered("cold-medium") is False


def test_affinity_still_breaks_ties_at_the_top_of_a_band(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=10)
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "cold-48", offset=48, affinity_key=key_cold)
    enter(queue, chat, "warm-45", offset=45, affinity_key=key_warm)

    _release_on(queue, rec, "warm")

    assert rec.order == ["warm-45"]
    assert rec.reordered("warm-45") is True


def test_affinity_picks_by_the_capped_score_among_waiters_warm_on_the_same_backend(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="serial", aging_divisor=1.0, affinity_bonus=10)
    _warm, _cold, chat, key_warm, _key_cold = _warm_pair(queue)
    older = enter(queue, chat, "warm+45", offset=45, affinity_key=key_warm, budget=999)
    clock.t = 1
    enter(queue, chat, "warm+49", offset=49, affinity_key=key_warm, budget=999)
    clock.t = 2

    _release_on(queue, rec, "warm")

    # Scores on `warm`: 45 + 2 s + a bonus of 4 (to the band's top) = 51 against 49 + 1 s + 0.
    assert rec.order == ["warm+45"]
    assert queue.score(older) == 51
    assert rec.reordered("warm+45") is True


@pytest.mark.parametrize("bonus", [10, 99])
def test_a_changed_affinity_bonus_reorders_those_already_warm(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, bonus: float
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=2)
    _warm, _cold, chat, key_warm, _key_cold = _warm_pair(queue)
    enter(queue, chat, "warm+40", offset=40, affinity_key=key_warm)
    enter(queue, chat, "warm+45", offset=45, affinity_key=key_warm)
    _release_on(queue, rec, "warm")
    assert rec.order == ["warm+45"]  # 47 against 42
    enter(queue, chat, "warm+45-again", offset=45, affinity_key=key_warm)

    queue.config.affinity_bonus = bonus  # a settings change: nobody is rekeyed

    _release_on(queue, rec, "warm")
    # Both reach the band's top (49) now: the earlier one goes first.
    assert rec.order == ["warm+45", "warm+40"]


def test_the_periodic_pass_counts_the_affinity_bonus_for_the_backend_it_fills(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="serial", aging_divisor=0, affinity_bonus=10)
    warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "cold-ahead", offset=5, affinity_key=key_cold)
    enter(queue, chat, "warm-behind", offset=0, affinity_key=key_warm)

    warm.max_inflight = 2  # more room, seen by the pass rather than by a release
    assert queue.dispatch_pass() == 1

    assert rec.order == ["warm-behind"]  # as a release of `warm` would have chosen
    assert rec.reordered("warm-behind") is True


def test_the_periodic_pass_reports_a_pick_that_aging_changed_as_a_reorder(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="serial", aging_divisor=1.0)
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    hold(queue, chat)
    enter(queue, chat, "old-low", cls=LOW, budget=999)
    clock.t = 200
    enter(queue, chat, "new-medium", budget=999)

    gpu.max_inflight = 2
    queue.dispatch_pass()

    assert rec.order == ["old-low"]
    assert rec.reordered("old-low") is True


def test_strict_ignores_affinity_and_aging(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    _warm, _cold, chat, key_warm, key_cold = _warm_pair(queue)
    enter(queue, chat, "cold-ahead", offset=1, affinity_key=key_cold)
    clock.t = 1e9
    enter(queue, chat, "warm-behind", offset=0, affinity_key=key_warm)

    _release_on(queue, rec, "warm")

    assert rec.order == ["cold-ahead"]
    assert not any(r for _, _, r in rec.flags)


# ----- reserved headroom -----------------------------------------------------------------------


def test_a_high_request_starts_at_once_on_a_backend_full_of_low_work_while_headroom_is_held(
    local_queue: AdmissionQueue, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=4, headroom=(2, 1, 0))
    chat = route("chat", gpu)
    enter(local_queue, chat, "early-high", cls=HIGH).acquired.release()  # a high came lately
    lows = [enter(local_queue, chat, f"low-{i}", cls=LOW) for i in range(4)]
    assert [w.state for w in lows] == [ADMITTED, ADMITTED, WAITING, WAITING]  # capacity - 2
    medium = enter(local_queue, chat, "medium", cls=MEDIUM)
    assert medium.state == ADMITTED and gpu.inflight == 3  # capacity - 1
    assert enter(local_queue, chat, "medium-2", cls=MEDIUM).state == WAITING

    high = enter(local_queue, chat, "high", cls=HIGH)

    assert high.state == ADMITTED and gpu.inflight == 4  # the slot kept for it
    # Kept means from the whole in flight: three run, so medium (capacity - 1) waits too.
    lows[0].acquired.release()
    assert gpu.inflight == 3
    assert [w.state for w in local_queue.waiters()] == [WAITING] * 3  # medium-2, low-2, low-3


def test_headroom_lifts_when_no_higher_class_came_lately_and_holds_again_when_one_does(
    local_queue: AdmissionQueue, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=4, headroom=(2, 1, 0))
    chat = route("chat", gpu)
    # No higher class ever came: work-conserving, low takes every slot.
    lows = [enter(local_queue, chat, f"low-{i}", cls=LOW) for i in range(4)]
    assert gpu.inflight == 4
    high = enter(local_queue, chat, "high", cls=HIGH)  # waits a whole low job, as without it
    assert high.state == WAITING
    for w in lows[:3]:
        w.acquired.release()
    assert high.state == ADMITTED
    # A high came: new lows start only below capacity - 2, and two run (a low and the high).
    waiting_lows = [enter(local_queue, chat, f"more-{i}", cls=LOW) for i in range(3)]
    assert gpu.inflight == 2
    assert [w.state for w in waiting_lows] == [WAITING] * 3
    clock.t = 31  # no high for longer than headroom_secs: the reservation lifts
    local_queue.dispatch_pass()
    assert sum(w.state == ADMITTED for w in waiting_lows) == 2


def test_headroom_leaves_every_class_one_slot_of_a_small_or_learned_limit(
    local_queue: AdmissionQueue, clock: FakeClock
) -> None:
    gpu = Slot("gpu", max_inflight=1, headroom=(2, 1, 0), auto=True)  # a cold start, at 1
    chat = route("chat", gpu)
    enter(local_queue, chat, "high", cls=HIGH).acquired.release()
    low = enter(local_queue, chat, "low", cls=LOW)
    assert low.state == ADMITTED
    low.acquired.release()
    gpu.max_inflight = 3  # the limit grew: the reservation takes two of it again
    assert [enter(local_queue, chat, f"l{i}", cls=LOW).state for i in range(2)] == [
        ADMITTED, WAITING
    ]  # fmt: skip


def test_headroom_is_no_reservation_with_priority_off(clock: FakeClock, rec: Recorder) -> None:
    queue = AdmissionQueue(clock=clock, config=SchedulerConfig(prioritize=False), observer=rec)
    gpu = Slot("gpu", max_inflight=2, headroom=(1, 1, 0))
    chat = route("chat", gpu)
    enter(queue, chat, "high", cls=HIGH).acquired.release()
    assert [enter(queue, chat, f"r{i}").state for i in range(2)] == [ADMITTED, ADMITTED]


# ----- edf ------------------------------------------------------------------------------------


def test_edf_serves_the_earliest_deadline_first_within_a_class_and_classes_stay_strict(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="edf")
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    enter(queue, chat, "patient", budget=600)  # due at 600
    clock.t = 10
    enter(queue, chat, "hurried", budget=30)  # due at 40
    enter(queue, chat, "low-hurried", cls=LOW, budget=20)  # due at 30, but low
    enter(queue, chat, "lowered", offset=-5, budget=15)  # due at 25, but lowered in its class
    clock.t = 11
    enter(queue, chat, "same-due", budget=29)  # due at 40, as "hurried": arrival breaks the tie

    drain(queue, rec, running)

    assert rec.order == ["hurried", "same-due", "patient", "lowered", "low-hurried"]


# ----- fcfs and wspt --------------------------------------------------------------------------


def test_fcfs_treats_a_positive_offset_as_seconds_of_head_start(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="fcfs")
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "early")  # t=0
    clock.t = 5
    enter(queue, chat, "late+3", offset=3)  # counts as t=2
    enter(queue, chat, "late+10", offset=10)  # counts as t=-5
    enter(queue, chat, "late+5", offset=5)  # counts as t=0: after "early", which came first

    drain(queue, rec, running)

    assert rec.order == ["late+10", "early", "late+5", "late+3"]
    assert not any(r for _, _, r in rec.flags)


def test_fcfs_never_penalises_a_negative_offset(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="fcfs")
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "first-30", offset=-30)
    clock.t = 1
    enter(queue, chat, "second")

    drain(queue, rec, running)

    assert rec.order == ["first-30", "second"]


def test_fcfs_keeps_classes_strict(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="fcfs")
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low+49", cls=LOW, offset=49)
    clock.t = 1000
    enter(queue, chat, "medium")

    drain(queue, rec, running)

    assert rec.order == ["medium", "low+49"]


@pytest.mark.parametrize("scheduler", ["fcfs", "wspt"])
def test_fcfs_and_wspt_never_count_their_own_order_as_a_reorder(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock, scheduler: str
) -> None:
    queue = make_queue(name=scheduler)
    gpu = Slot("gpu", max_inflight=1)
    (running,) = hold(queue, route("chat", gpu))
    enter(queue, route("chat", gpu), "first", cost=1)
    clock.t = 5
    # Plain (class, offset, arrival) order would pick this one; neither policy does.
    enter(queue, route("code", gpu), "later+2", offset=2, cost=1000)

    drain(queue, rec, running)

    assert rec.order == ["first", "later+2"]
    assert not any(r for _, _, r in rec.flags)


def test_wspt_serves_the_shorter_prompt_first_within_a_class(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="wspt")
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "long", cost=1000)
    enter(queue, chat, "short", cost=10)
    enter(queue, chat, "mid", cost=100)
    enter(queue, chat, "short-again", cost=10)

    drain(queue, rec, running)

    assert rec.order == ["short", "short-again", "mid", "long"]


def test_wspt_weighs_priority_against_cost_but_never_crosses_classes(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(name="wspt")
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low-tiny", cls=LOW, cost=1)
    enter(queue, chat, "cost20", cost=20)  # 1/20 = 0.05
    enter(queue, chat, "cost100+9", cost=100, offset=9)  # 10/100 = 0.1
    enter(queue, chat, "cost10-5", cost=10, offset=-5)  # negative counts as 0: 1/10 = 0.1
    enter(queue, chat, "high-huge", cls=HIGH, cost=100_000)

    drain(queue, rec, running)

    assert rec.order == ["high-huge", "cost100+9", "cost10-5", "cost20", "low-tiny"]


# ----- bounded queue --------------------------------------------------------------------------


def test_a_full_queue_answers_queue_full_with_a_reason_and_retry_after(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(max_waiters=2)
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    enter(queue, chat, "one", offset=-49)
    enter(queue, chat, "two", offset=-49)

    # An offset orders a request inside its class; it never outranks anyone at the bound.
    with pytest.raises(QueueFull) as caught:
        enter(queue, chat, "three", offset=49)

    assert "full" in caught.value.reason and "2 waiting" in caught.value.reason
    assert str(caught.value) == caught.value.reason
    assert caught.value.retry_after >= 1
    assert queue.waiting == 2 and [w.tag for w in queue.waiters()] == ["one", "two"]
    assert ("three", "rejected") in rec.outcomes


def test_a_full_queue_still_admits_at_once_when_a_slot_is_free(
    make_queue: Callable[..., AdmissionQueue],
) -> None:
    queue = make_queue(max_waiters=1)
    busy, idle = Slot("busy", max_inflight=1), Slot("idle", max_inflight=1)
    hold(queue, route("chat", busy))
    enter(queue, route("chat", busy), "waiting")

    w = enter(queue, route("embed", idle), "fresh")

    assert w.state == ADMITTED


def test_a_full_queue_admits_a_newcomer_whose_free_backend_no_waiter_can_use(
    make_queue: Callable[..., AdmissionQueue],
) -> None:
    queue = make_queue(max_waiters=1)
    a, spare = Slot("a", max_inflight=1), Slot("spare", max_inflight=1)
    hold(queue, route("chat", a))
    enter(queue, route("chat", a, fallback=(spare,)), "waits-for-a")

    w = enter(queue, route("embed", spare), "fresh")

    assert w.state == ADMITTED


def test_an_estimated_wait_beyond_the_budget_answers_queue_full(
    make_queue: Callable[..., AdmissionQueue], clock: FakeClock
) -> None:
    queue = make_queue(max_waiters=100)
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    waiting = [enter(queue, chat, f"w{i}") for i in range(12)]
    clock.t = 1
    running.release()
    clock.t = 2
    assert waiting[0].acquired is not None
    waiting[0].acquired.release()
    assert queue.waiting == 10  # the backend took one a second: ten ahead wait ten seconds

    with pytest.raises(QueueFull) as caught:
        enter(queue, chat, "impatient", budget=3)
    assert "estimated wait (10 s)" in caught.value.reason
    assert "budget (3 s)" in caught.value.reason
    assert caught.value.retry_after >= 1

    # Only those of its class or above are ahead of a high request.
    assert enter(queue, chat, "high", cls=HIGH, budget=3).state == WAITING
    assert enter(queue, chat, "patient", budget=60).state == WAITING


def test_the_estimated_wait_counts_only_the_waiters_and_the_pace_of_the_backends_it_may_use(
    make_queue: Callable[..., AdmissionQueue], clock: FakeClock
) -> None:
    queue = make_queue()
    busy, quiet = Slot("busy", max_inflight=1), Slot("quiet", max_inflight=1)
    crowded, other = route("crowded", busy), route("other", quiet)
    (running,) = hold(queue, crowded)
    for i in range(30):
        enter(queue, crowded, f"c{i}")
    (serving,) = hold(queue, other)
    for t in (1, 2, 3):  # the quiet backend takes one a second, its line short
        clock.t = t
        serving.release()
        nxt = enter(queue, other, f"o{t}")
        assert nxt.acquired is not None
        serving = nxt.acquired
    enter(queue, other, "o-waits", budget=600)

    # Thirty wait at the other backend, which has not moved: no figure for it, no refusal...
    assert enter(queue, crowded, "crowded-hurried", budget=1).state == WAITING
    # ... and they are not ahead of a request for the quiet one (one ahead, one a second).
    assert enter(queue, other, "other-hurried", budget=1.5).state == WAITING
    with pytest.raises(QueueFull):
        enter(queue, other, "other-too-hurried", budget=1.5)  # two ahead now: 2 s
    running.release()


def test_each_waiter_in_line_has_its_estimated_wait_from_those_before_it(
    local_queue: AdmissionQueue, clock: FakeClock
) -> None:
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(local_queue, chat)
    line = [enter(local_queue, chat, f"w{i}") for i in range(4)]
    assert local_queue.estimated_wait(line[0], ahead=0) is None  # no pace measured yet
    for t in (2, 4):  # the backend takes one every two seconds
        clock.t = t
        running.release()
        running = next(w.acquired for w in line if w.acquired and not w.acquired.released)
    waiting = [w for w in line if w.state == WAITING]
    assert [local_queue.estimated_wait(w, ahead=i) for i, w in enumerate(waiting)] == [0.0, 2.0]


def _full_of_lows(
    queue: AdmissionQueue, clock: FakeClock, arrivals: list[tuple[str, dict[str, object]]]
) -> Route:
    """A one-slot backend held busy and a queue bounded at exactly these waiters, a second apart."""
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    queue.config.max_waiters = len(arrivals)
    for i, (tag, kw) in enumerate(arrivals):
        clock.t = float(i)
        enter(queue, chat, tag, **{"cls": LOW, **kw})  # type: ignore[arg-type]
    return chat


def _displaced_by_a_high(queue: AdmissionQueue, rec: Recorder, chat: Route) -> list[object]:
    """A high newcomer arrives at the full queue; whom it displaced."""
    before = len(rec.outcomes)
    assert enter(queue, chat, "high", cls=HIGH).state == WAITING
    return [tag for tag, outcome in rec.outcomes[before:] if outcome == "rejected"]


def test_a_higher_class_newcomer_takes_the_place_of_the_lowest_most_recent_waiter(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(max_waiters=3)
    gpu = Slot("gpu", max_inflight=1)
    chat = route("chat", gpu)
    (running,) = hold(queue, chat)
    enter(queue, chat, "low-first", cls=LOW)
    clock.t = 1
    enter(queue, chat, "medium")
    clock.t = 2
    last = enter(queue, chat, "low-last", cls=LOW)
    clock.t = 3

    high = enter(queue, chat, "high", cls=HIGH)

    assert high.state == WAITING
    assert last.state == "rejected" and last.refusal is not None
    assert "higher-class" in last.refusal.reason and "3 waiting" in last.refusal.reason
    assert last.refusal.retry_after >= 1
    assert rec.outcomes == [("low-last", "rejected")]
    assert [w.tag for w in queue.waiters()] == ["low-first", "medium", "high"]
    assert queue.depth == [1, 1, 1] and queue.waiting == 3
    drain(queue, rec, running)
    assert rec.order == ["high", "medium", "low-first"]


def test_a_full_queue_gives_way_from_the_lowest_class_up_and_never_to_the_same_class(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(max_waiters=3)
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    for i, (tag, cls) in enumerate([("medium-a", MEDIUM), ("low", LOW), ("medium-b", MEDIUM)]):
        clock.t = float(i)
        enter(queue, chat, tag, cls=cls)

    enter(queue, chat, "high-1", cls=HIGH)
    enter(queue, chat, "high-2", cls=HIGH)
    with pytest.raises(QueueFull):
        enter(queue, chat, "medium-c")
    enter(queue, chat, "high-3", cls=HIGH)
    with pytest.raises(QueueFull):
        enter(queue, chat, "high-4", cls=HIGH, offset=49)  # only highs wait now

    assert rec.outcomes == [
        ("low", "rejected"),
        ("medium-b", "rejected"),
        ("medium-c", "rejected"),
        ("medium-a", "rejected"),
        ("high-4", "rejected"),
    ]
    assert [w.tag for w in queue.waiters()] == ["high-1", "high-2", "high-3"]


def test_under_strict_the_one_displaced_has_the_lowest_offset_then_arrived_last(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue()
    chat = _full_of_lows(
        queue,
        clock,
        [("low+5", {"offset": 5}), ("low-5", {"offset": -5}), ("low-5-later", {"offset": -5}),
         ("low", {})],
    )  # fmt: skip

    assert _displaced_by_a_high(queue, rec, chat) == ["low-5-later"]
    assert _displaced_by_a_high(queue, rec, chat) == ["low-5"]
    assert _displaced_by_a_high(queue, rec, chat) == ["low"]


def test_under_fair_share_the_one_displaced_is_the_latest_turn_in_the_class(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(fair_share=True)
    chat = _full_of_lows(
        queue,
        clock,
        [("ann-1", {"owner": "ann"}), ("ann-2", {"owner": "ann"}), ("ann-3", {"owner": "ann"}),
         ("ben-1", {"owner": "ben"})],
    )  # fmt: skip

    # Turns: ann 0, 1, 2 and ben 0: the busiest owner's newest request goes first, then the
    # latest turn left (ann's second), then of two equal turns the later arrival (ben's).
    assert _displaced_by_a_high(queue, rec, chat) == ["ann-3"]
    assert _displaced_by_a_high(queue, rec, chat) == ["ann-2"]
    assert _displaced_by_a_high(queue, rec, chat) == ["ben-1"]


def test_under_serial_the_one_displaced_has_the_lowest_score_with_aging(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="serial", aging_divisor=0.25)  # a second of waiting: 4 points
    chat = _full_of_lows(
        queue,
        clock,
        [("low", {}), ("low+3", {"offset": 3}), ("low+10", {"offset": 10}),
         ("low+9", {"offset": 9})],
    )  # fmt: skip

    # Scores at t=3: low 12, low+3 11, low+10 14, low+9 9: aging outweighs small offsets.
    assert _displaced_by_a_high(queue, rec, chat) == ["low+9"]
    assert _displaced_by_a_high(queue, rec, chat) == ["low+3"]
    assert _displaced_by_a_high(queue, rec, chat) == ["low"]


def test_under_fcfs_the_one_displaced_arrived_last_counting_its_head_start(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="fcfs")
    chat = _full_of_lows(
        queue,
        clock,
        [("early", {}), ("second", {}), ("late+5", {"offset": 5}), ("late-9", {"offset": -9})],
    )  # fmt: skip

    # Counted arrivals: 0, 1, -3 (two seconds late, five ahead) and 3 (never a penalty).
    assert _displaced_by_a_high(queue, rec, chat) == ["late-9"]
    assert _displaced_by_a_high(queue, rec, chat) == ["second"]
    assert _displaced_by_a_high(queue, rec, chat) == ["early"]


def test_under_wspt_the_one_displaced_has_the_lowest_priority_per_prompt_token(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(name="wspt")
    chat = _full_of_lows(
        queue,
        clock,
        [("long", {"cost": 1000}), ("short", {"cost": 10}), ("long+9", {"cost": 1000, "offset": 9}),
         ("long-again", {"cost": 1000})],
    )  # fmt: skip

    assert _displaced_by_a_high(queue, rec, chat) == ["long-again"]
    assert _displaced_by_a_high(queue, rec, chat) == ["long"]
    assert _displaced_by_a_high(queue, rec, chat) == ["long+9"]


def test_after_a_scheduler_change_the_one_displaced_follows_the_new_order(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue()
    chat = _full_of_lows(queue, clock, [("long", {"cost": 1000}), ("short", {"cost": 1})])

    queue.config.name = "wspt"
    queue.reroute(lambda key: chat, rekey=True)

    assert _displaced_by_a_high(queue, rec, chat) == ["long"]  # strict would have taken "short"


def test_without_prioritization_a_full_queue_displaces_nobody(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(max_waiters=1, prioritize=False)
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    enter(queue, chat, "low", cls=LOW)

    with pytest.raises(QueueFull):
        enter(queue, chat, "high", cls=HIGH)
    assert [w.tag for w in queue.waiters()] == ["low"]


def test_a_higher_newcomer_whose_estimated_wait_exceeds_its_budget_displaces_nobody(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue()
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    first, second = enter(queue, chat, "first", cls=HIGH), enter(queue, chat, "second", cls=HIGH)
    for i in range(10):
        enter(queue, chat, f"high-{i}", cls=HIGH)
    enter(queue, chat, "low", cls=LOW)
    clock.t = 1
    running.release()
    clock.t = 2
    assert first.acquired is not None
    first.acquired.release()
    assert second.state == ADMITTED and queue.waiting == 11  # 2 per second, 10 highs ahead
    queue.config.max_waiters = 11  # full, with a low waiter a high newcomer could displace

    with pytest.raises(QueueFull) as caught:
        enter(queue, chat, "impatient", cls=HIGH, budget=3)

    assert "estimated wait (10 s)" in caught.value.reason
    assert [tag for tag, outcome in rec.outcomes if outcome == "rejected"] == ["impatient"]
    assert queue.waiting == 11 and queue.depth[LOW] == 1


def test_a_retry_reenters_a_full_queue_without_displacing_anyone(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(max_waiters=1)
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat, only_b = route("chat", a, b), route("only-b", b)
    first = enter(queue, chat, "first", cls=HIGH)
    hold(queue, only_b)
    enter(queue, only_b, "low", cls=LOW)  # the queue is full
    assert first.acquired is not None and first.acquired.backend == "a"

    retry = queue.retry_waiter(first, first.acquired.backend)
    first.acquired.release()
    queue.submit(retry)

    assert retry.state == WAITING
    assert rec.outcomes == []
    assert [w.tag for w in queue.waiters()] == ["first", "low"]


def test_a_retry_keeps_its_place_at_the_bound_too(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    queue = make_queue(max_waiters=2)
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat, only_b = route("chat", a, b), route("only-b", b)
    first = enter(queue, chat, "first", cls=LOW)
    hold(queue, only_b)
    clock.t = 1
    enter(queue, only_b, "later", cls=LOW)
    assert first.acquired is not None and first.acquired.backend == "a"
    retry = queue.retry_waiter(first, "a")
    first.acquired.release()
    queue.submit(retry)  # the "first" request waits again with its arrival at t=0

    assert _displaced_by_a_high(queue, rec, only_b) == ["later"]
    assert _displaced_by_a_high(queue, rec, only_b) == ["first"]
    assert retry.state == "rejected"


async def test_route_or_wait_raises_queue_full_for_a_waiter_a_higher_class_displaced() -> None:
    queue = AdmissionQueue(config=SchedulerConfig(max_waiters=1))
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    low = queue.waiter(chat, cls=LOW, budget=30)
    task = asyncio.create_task(route_or_wait(queue, low))
    await asyncio.sleep(0)
    assert queue.waiting == 1

    high = queue.waiter(chat, cls=HIGH, budget=30)
    assert queue.submit(high) is None

    with pytest.raises(QueueFull) as caught:
        await task
    assert "higher-class" in caught.value.reason and caught.value.retry_after >= 1
    assert queue.waiters() == [high] and queue.depth == [0, 0, 1]


def test_ten_thousand_lows_in_a_full_queue_give_way_to_highs_newest_first(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder, clock: FakeClock
) -> None:
    # Shared admission pays a loopback round trip a step: the same test at a fiftieth of the size.
    n = 10_000 if type(make_queue()) is AdmissionQueue else 200
    queue = make_queue(max_waiters=n)
    slots = [Slot(f"b{i}", max_inflight=1) for i in range(10)]
    routes = [route(f"r{i}", slots[i % 10], slots[(i * 3 + 1) % 10]) for i in range(50)]
    for r in routes[:10]:
        hold(queue, r)
    rng = random.Random(11)
    for i in range(n):
        clock.t = i / 1000
        enter(queue, rng.choice(routes), i, cls=LOW)
    assert queue.waiting == n

    for i in range(n):
        enter(queue, rng.choice(routes), f"high-{i}", cls=HIGH)

    displaced = [tag for tag, outcome in rec.outcomes if outcome == "rejected"]
    assert displaced == list(range(n - 1, -1, -1))
    assert queue.depth == [0, 0, n]


def test_the_bounds_index_sweeps_out_waiters_that_were_admitted(
    local_queue: AdmissionQueue,
) -> None:
    queue = local_queue
    queue.config.max_waiters = 10
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    for i in range(3_000):
        enter(queue, chat, f"w{i}")
        nxt = queue.waiters()[0]
        running.release()
        assert nxt.acquired is not None
        running = nxt.acquired

    assert len(queue._tails[MEDIUM]) < 200  # every one of them was admitted and is gone


# ----- reroute --------------------------------------------------------------------------------


def test_reroute_moves_waiters_onto_a_newly_added_backend(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a = Slot("a", max_inflight=1)
    (running,) = hold(queue, route("chat", a))
    enter(queue, route("chat", a), "medium")
    enter(queue, route("chat", a), "high", cls=HIGH)
    enter(queue, route("chat", a), "low", cls=LOW)
    b = Slot("b", max_inflight=1)
    rebuilt = {"chat": route("chat", a, b)}

    queue.reroute(resolver(rebuilt))

    assert rec.order == ["high"]
    high = rec.admitted_waiters[-1]
    assert high.acquired is not None and high.acquired.backend == "b"
    assert queue.depth == [1, 1, 0]
    running.release()
    assert rec.order == ["high", "medium"]
    assert all(w.route is rebuilt["chat"] for w in queue.waiters())


def test_reroute_fails_the_waiters_of_a_vanished_route_and_keeps_the_others(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a = Slot("a", max_inflight=1)
    chat, retired = route("chat", a), route("retired", a)
    (running,) = hold(queue, chat)
    enter(queue, chat, "chat-low", cls=LOW)
    doomed = enter(queue, retired, "retired-high", cls=HIGH)
    changes = rec.changes

    queue.reroute(resolver({"chat": chat}))

    assert doomed.state == FAILED
    assert ("retired-high", FAILED) in rec.outcomes
    assert queue.depth == [1, 0, 0] and [w.tag for w in queue.waiters()] == ["chat-low"]
    assert rec.changes > changes
    running.release()
    assert rec.order == ["chat-low"]


def test_reroute_tells_the_observer_when_it_fails_the_last_waiters(
    queue: AdmissionQueue, rec: Recorder
) -> None:
    a = Slot("a", max_inflight=1)
    hold(queue, route("retired", a))
    enter(queue, route("retired", a), "doomed")
    changes = rec.changes

    queue.reroute(lambda key: None)

    assert queue.waiting == 0
    assert rec.changes > changes, "a depth gauge would still show the failed waiter"


async def test_route_or_wait_raises_route_gone_when_the_route_vanishes() -> None:
    queue = AdmissionQueue()
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    w = queue.waiter(chat, budget=30)
    task = asyncio.create_task(route_or_wait(queue, w))
    await asyncio.sleep(0.01)

    queue.reroute(lambda key: None)

    with pytest.raises(RouteGone):
        await task
    assert queue.waiting == 0 and queue.waiters() == []


async def test_turning_away_wakes_every_waiter_with_turned_away_and_frees_no_slot() -> None:
    queue = AdmissionQueue()
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    tasks = [
        asyncio.create_task(route_or_wait(queue, queue.waiter(chat, budget=30))) for _ in range(3)
    ]
    await asyncio.sleep(0.01)

    assert turn_away(queue, "the process stops") == 3

    for task in tasks:
        with pytest.raises(TurnedAway, match="the process stops"):
            await task
    assert queue.waiting == 0 and queue.waiters() == []
    running.release()  # the slot it held comes back to nobody
    assert queue.dispatch_pass() == 0


def test_reroute_keeps_order_and_deadlines(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    a = Slot("a", max_inflight=1)
    (running,) = hold(queue, route("chat", a))
    for i, cls in enumerate([LOW, HIGH, MEDIUM, HIGH]):
        clock.t = float(i)
        enter(queue, route("chat", a), f"{cls}-{i}", cls=cls, budget=10)
    queue.reroute(resolver({"chat": route("chat", a)}))
    clock.t = 10.5  # "0-0" (deadline 10) is overdue
    queue.dispatch_pass()

    drain(queue, rec, running)

    assert rec.order == ["2-1", "2-3", "1-2"]


# ----- views for metrics ----------------------------------------------------------------------


def test_oldest_wait_reports_the_longest_waiting_request_overall_and_per_class(
    queue: AdmissionQueue, clock: FakeClock
) -> None:
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    low = enter(queue, chat, "low", cls=LOW)
    clock.t = 5
    enter(queue, chat, "high", cls=HIGH)
    clock.t = 12

    assert queue.oldest_wait() == 12
    assert queue.oldest_wait(LOW) == 12
    assert queue.oldest_wait(HIGH) == 7
    assert queue.oldest_wait(MEDIUM) == 0
    queue.cancel(low)
    assert queue.oldest_wait() == 7


def test_oldest_wait_counts_a_retry_from_its_first_arrival(
    queue: AdmissionQueue, clock: FakeClock
) -> None:
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat = route("chat", a, b)
    first = enter(queue, chat, "first")
    hold(queue, chat)
    clock.t = 3
    enter(queue, chat, "later")
    retry = queue.retry_waiter(first, first.acquired.backend)  # type: ignore[union-attr]
    queue.submit(retry)
    clock.t = 10
    assert retry.state == WAITING
    assert queue.oldest_wait() == 10


def test_waiters_lists_live_waiters_in_arrival_order(
    queue: AdmissionQueue, clock: FakeClock
) -> None:
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    tags = []
    for i, cls in enumerate([LOW, HIGH, MEDIUM]):
        clock.t = float(i)
        tags.append(enter(queue, chat, f"w{i}", cls=cls).tag)
    assert [w.tag for w in queue.waiters()] == tags


def test_a_waiter_records_how_long_it_waited(
    queue: AdmissionQueue, rec: Recorder, clock: FakeClock
) -> None:
    chat = route("chat", Slot("gpu", max_inflight=1))
    (running,) = hold(queue, chat)
    w = enter(queue, chat, "w")
    clock.t = 2.5
    running.release()
    assert w.waited == 2.5 and w.admitted_at == 2.5


# ----- scale sanity (order, not timing) -------------------------------------------------------


def test_ten_thousand_waiters_in_fifty_groups_on_ten_backends_are_admitted_in_strict_order(
    clock: FakeClock,
) -> None:
    rng = random.Random(7)
    rec = Recorder()
    queue = AdmissionQueue(clock=clock, observer=rec)
    slots = [Slot(f"b{i}", max_inflight=1) for i in range(10)]
    routes = [route(f"r{i}", *rng.sample(slots, rng.randint(1, 4))) for i in range(50)]
    for s in slots:
        hold(queue, route(f"pin-{s.name}", s))
    assert all(s.inflight == 1 for s in slots)

    by_route: dict[str, list[Waiter]] = {str(r.key): [] for r in routes}
    for i in range(10_000):
        clock.t = i / 1000
        r = rng.choice(routes)
        w = enter(queue, r, i, cls=rng.choice((LOW, MEDIUM, HIGH)), offset=rng.randint(-3, 3))
        by_route[str(r.key)].append(w)
    assert queue.waiting == 10_000

    # The reference: each route's waiters in (class, offset, arrival) order.
    for ws in by_route.values():
        ws.sort(key=lambda w: (-w.cls, -w.offset, w.arrival))
    next_of = dict.fromkeys(by_route, 0)
    routes_on = {
        s.name: [str(r.key) for r in routes if any(t.slot is s for t in r.primary)] for s in slots
    }

    running = [a for a in (w.acquired for w in rec.admitted_waiters) if a is not None]
    admitted = 0
    while running:
        acq = running.pop(rng.randrange(len(running)))
        backend = acq.backend
        candidates = [
            by_route[k][next_of[k]] for k in routes_on[backend] if next_of[k] < len(by_route[k])
        ]
        expected = min(candidates, key=lambda w: (-w.cls, -w.offset, w.arrival), default=None)
        before = len(rec.admitted_waiters)
        acq.release()
        if expected is None:
            assert len(rec.admitted_waiters) == before
            continue
        got = rec.admitted_waiters[-1]
        assert got is expected, f"on {backend}: admitted {got.tag}, expected {expected.tag}"
        next_of[str(expected.route.key)] += 1
        assert got.acquired is not None
        running.append(got.acquired)
        admitted += 1

    assert admitted == 10_000
    assert queue.waiting == 0 and queue.waiters() == []
    assert all(s.inflight == 0 for s in slots)


# ----- fair share inside a class --------------------------------------------------------


def _drain_one_at_a_time(queue: AdmissionQueue, admitted: list[Waiter]) -> None:
    """Finish each admitted request in turn; every release admits the next waiter."""
    done = 0
    while done < len(admitted):
        acquired = admitted[done].acquired
        assert acquired is not None
        acquired.release()
        done += 1


def test_with_fair_share_owners_take_turns_inside_a_class():
    queue = AdmissionQueue(clock=FakeClock(), config=SchedulerConfig(fair_share=True))
    slot = Slot("b", max_inflight=1)
    route = Route(key="r", primary=(Target(slot, "m"),))
    first = queue.waiter(route, owner="x", budget=60)
    admitted: list[Waiter] = [first]
    queue.submit(first)
    for owner in ["ann"] * 5 + ["ben"] * 2 + ["cy"]:
        w = queue.waiter(route, owner=owner, budget=60)
        w.on_admit = admitted.append
        assert queue.submit(w) is None
    _drain_one_at_a_time(queue, admitted)
    assert [w.owner for w in admitted[1:]] == [
        "ann", "ben", "cy", "ann", "ben", "ann", "ann", "ann",
    ]  # fmt: skip


def test_fair_share_never_lets_a_lower_class_pass_a_higher_one():
    queue = AdmissionQueue(clock=FakeClock(), config=SchedulerConfig(fair_share=True))
    slot = Slot("b", max_inflight=1)
    route = Route(key="r", primary=(Target(slot, "m"),))
    first = queue.waiter(route, owner="x", budget=60)
    admitted: list[Waiter] = [first]
    queue.submit(first)
    for owner, cls in [("ann", HIGH), ("ann", HIGH), ("ben", LOW), ("cy", HIGH)]:
        w = queue.waiter(route, owner=owner, cls=cls, budget=60)
        w.on_admit = admitted.append
        queue.submit(w)
    _drain_one_at_a_time(queue, admitted)
    assert [(w.owner, w.cls) for w in admitted[1:]] == [
        ("ann", HIGH), ("cy", HIGH), ("ann", HIGH), ("ben", LOW),
    ]  # fmt: skip


def _by_work(
    clock: FakeClock | None = None, half_life: float = 0.0
) -> tuple[AdmissionQueue, Route]:
    config = SchedulerConfig(
        fair_share=True, fair_share_by="tokens", fair_share_half_life=half_life
    )
    queue = AdmissionQueue(clock=clock or FakeClock(), config=config)
    slot = Slot("b", max_inflight=1)
    return queue, Route(key="r", primary=(Target(slot, "m"),))


def _served(queue: AdmissionQueue, route: Route, arrivals: list[tuple[str, float]]) -> list[str]:
    """The owners in the order a one-slot backend serves these arrivals (owner, work)."""
    first = queue.waiter(route, owner="x", budget=60)
    admitted: list[Waiter] = [first]
    queue.submit(first)
    for owner, work in arrivals:
        w = queue.waiter(route, owner=owner, budget=60, work=work)
        w.on_admit = admitted.append
        assert queue.submit(w) is None
    _drain_one_at_a_time(queue, admitted)
    return [w.owner for w in admitted[1:]]


@pytest.mark.parametrize(
    ("arrivals", "served"),
    [
        # Equal work: turns alternate, as by requests.
        ([("ann", 100)] * 3 + [("ben", 100)] * 3, ["ann", "ben", "ann", "ben", "ann", "ben"]),
        # Ten times the prompt: ben is served ten times for each of ann's (VTC: service, not
        # turns, is shared; start tags ann 0, 1000; ben 0, 100, ..., 900).
        (
            [("ann", 1000)] * 2 + [("ben", 100)] * 10,
            ["ann"] + ["ben"] * 10 + ["ann"],
        ),
        # 1:1:10:30, the priority benchmark's four owners: the small ones first, in turn.
        (
            [("a", 1), ("b", 1), ("c", 10), ("d", 30)] * 2,
            ["a", "b", "c", "d", "a", "b", "c", "d"],
        ),
    ],
)
def test_fair_share_by_work_serves_owners_by_the_tokens_they_took(arrivals, served):
    queue, route = _by_work()
    assert _served(queue, route, arrivals) == served


def test_by_requests_the_same_arrivals_only_take_turns():
    queue = AdmissionQueue(clock=FakeClock(), config=SchedulerConfig(fair_share=True))
    slot = Slot("b", max_inflight=1)
    route = Route(key="r", primary=(Target(slot, "m"),))
    served = _served(queue, route, [("ann", 1000)] * 2 + [("ben", 100)] * 10)
    assert served[:4] == ["ann", "ben", "ann", "ben"]


def test_the_engines_report_settles_an_owners_share_and_a_request_that_never_ran_costs_none():
    queue, route = _by_work()
    held = queue.submit(queue.waiter(route, owner="x", budget=60))
    ann = queue.waiter(route, owner="ann", budget=60, work=10)
    ben = queue.waiter(route, owner="ben", budget=60, work=10)
    cy = queue.waiter(route, owner="cy", budget=60, work=10)
    for w in (ann, ben, cy):
        assert queue.submit(w) is None
    assert held is not None
    held.release()  # ann's runs (all three at turn 0: arrival decides); it wrote 5000 tokens
    assert ann.acquired is not None
    queue.charge(ann, 10 + 2 * 5000)
    queue.charge(ann, 10 + 2 * 5000)  # charged once
    assert queue.turns.next[MEDIUM]["ann"] == 10 + 2 * 5000
    queue.cancel(cy)  # cy leaves before it ran: refunded, its next turn where the class is
    queue.charge(cy, 0.0)
    assert queue.turns.next[MEDIUM]["cy"] == 0.0
    ann.acquired.release()
    assert ben.acquired is not None
    ann_next = queue.waiter(route, owner="ann", budget=60, work=10)
    ben_next = queue.waiter(route, owner="ben", budget=60, work=10)
    assert ben_next.turn < ann_next.turn  # ann's 10,000 tokens push its next request back


def test_an_owners_heavy_past_halves_every_half_life():
    clock = FakeClock()
    queue, route = _by_work(clock, half_life=60)
    queue.waiter(route, owner="ann", work=8000)  # ann took 8000 beyond the class's turn 0
    clock.t = 120  # two half-lives
    again = queue.waiter(route, owner="ann", work=1)
    assert again.turn == pytest.approx(2000)


def test_without_fair_share_one_owners_burst_goes_first():
    queue = AdmissionQueue(clock=FakeClock())
    slot = Slot("b", max_inflight=1)
    route = Route(key="r", primary=(Target(slot, "m"),))
    first = queue.waiter(route, owner="x", budget=60)
    admitted: list[Waiter] = [first]
    queue.submit(first)
    for owner in ["ann", "ann", "ben"]:
        w = queue.waiter(route, owner=owner, budget=60)
        w.on_admit = admitted.append
        queue.submit(w)
    _drain_one_at_a_time(queue, admitted)
    assert [w.owner for w in admitted[1:]] == ["ann", "ann", "ben"]


@pytest.mark.parametrize(("before", "after"), [("strict", "serial"), ("serial", "strict")])
def test_a_scheduler_change_rekeys_who_already_waits(before, after):
    clock = FakeClock()
    clock.t = 50_000.0  # a monotonic clock some hours after boot: serial keys are large
    queue = AdmissionQueue(clock=clock, config=SchedulerConfig(name=before))
    slot = Slot("a", max_inflight=1)
    route = Route(key="r", primary=(Target(slot, "m"),))
    running = queue.submit(queue.waiter(route, cls=HIGH, budget=120))
    low = queue.waiter(route, cls=LOW, budget=120)
    queue.submit(low)
    queue.config.name = after
    queue.reroute(lambda key: route, rekey=True)
    clock.t += 1
    high = queue.waiter(route, cls=HIGH, budget=120)
    queue.submit(high)
    assert running is not None
    running.release()
    assert high.acquired is not None and low.acquired is None


# ----- leavers under sustained load -----------------------------------------------------------


def test_a_busy_group_sweeps_out_its_leavers_instead_of_keeping_every_one(
    local_queue: AdmissionQueue,
) -> None:
    queue = local_queue
    chat = route("chat", Slot("gpu", max_inflight=1))
    hold(queue, chat)
    # Highs always stand at the top, so a leaving low never reaches it to be dropped lazily.
    live = [enter(queue, chat, f"high-{i}", cls=HIGH) for i in range(5)]

    for i in range(10_000):
        queue.cancel(enter(queue, chat, f"low-{i}", cls=LOW))

    group = live[0].group
    assert group is not None and all(w.group is group for w in live)
    assert len(group.heap) < 200
    assert queue.waiting == 5 and [w.tag for w in queue.waiters()] == [w.tag for w in live]


# ----- retries in a bounded queue -------------------------------------------------------------


def test_a_retry_is_not_a_newcomer_to_a_full_queue(
    make_queue: Callable[..., AdmissionQueue], rec: Recorder
) -> None:
    queue = make_queue(max_waiters=1)
    a, b = Slot("a", max_inflight=1), Slot("b", max_inflight=1)
    chat, embed = route("chat", a, b), route("embed", Slot("c", max_inflight=1))
    first = enter(queue, chat, "first", cls=HIGH)
    (running_b,) = hold(queue, chat)
    hold(queue, embed)
    enter(queue, embed, "other")  # someone else waits: the queue is full
    assert first.acquired is not None and first.acquired.backend == "a"

    # The dispatch to `a` failed before any byte was sent: it tries again, bound or no bound.
    retry = queue.retry_waiter(first, "a")
    first.acquired.release()
    queue.submit(retry)

    assert retry.state == WAITING
    assert ("first", "rejected") not in rec.outcomes
    assert [w.tag for w in queue.waiters()] == ["first", "other"]
    running_b.release()
    assert retry.acquired is not None and retry.acquired.backend == "b"
