"""The admission queue as a hypothesis state machine, checked after every step against a model."""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from gateway.admission.queue import AdmissionQueue
from gateway.admission.schedulers import SCHEDULERS, SchedulerConfig
from gateway.admission.types import (
    ADMITTED,
    CANCELLED,
    EXPIRED,
    FAILED,
    REJECTED,
    WAITING,
    Acquired,
    QueueFull,
    Route,
    Slot,
    Target,
    Waiter,
)
from gateway.core.classes import BAND_ANCHORS, HIGH, LOW, MEDIUM
from tests.support.redis_server import NO_REDIS, have_redis

# `make test` runs the short profile (the same examples every run, so a red build means a
# change); `HYPOTHESIS_PROFILE=chaos` (`make chaos`) explores far longer, differently each run.
# Registered here, never loaded globally: other hypothesis suites keep their own settings.
settings.register_profile(
    "admission",
    max_examples=80,
    stateful_step_count=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "admission-chaos",
    max_examples=600,
    stateful_step_count=200,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = "admission-chaos" if os.environ.get("HYPOTHESIS_PROFILE") == "chaos" else "admission"

BACKENDS = ("b0", "b1", "b2")
ROUTE_KEYS = ("r0", "r1", "r2", "r3")
# Each topology: which backends exist, and per route key (primaries, offline fallbacks,
# strategy). A key missing from a later topology is a model that went away (RouteGone).
RouteSpec = tuple[tuple[str, ...], tuple[str, ...], str]
TOPOLOGIES: tuple[tuple[frozenset[str], dict[str, RouteSpec]], ...] = (
    (
        frozenset(BACKENDS),
        {
            "r0": (("b0",), (), "prefix_affinity"),
            "r1": (("b0", "b1"), (), "round_robin"),
            "r2": (("b1", "b2"), (), "prefix_affinity"),
            "r3": (("b2",), ("b0",), "least_inflight"),
        },
    ),
    (
        frozenset(BACKENDS),
        {
            "r0": (("b1",), (), "least_inflight"),
            "r1": (("b0", "b1", "b2"), (), "least_inflight"),
            "r2": (("b2", "b0"), (), "prefix_affinity"),
            "r3": (("b0",), ("b1",), "round_robin"),
        },
    ),
    (
        frozenset(BACKENDS),
        {
            "r0": (("b0", "b2"), (), "prefix_affinity"),
            "r2": (("b1",), ("b2",), "least_inflight"),
            "r3": (("b2",), (), "least_inflight"),
        },
    ),
    (
        frozenset({"b0", "b2"}),  # b1 is removed; what runs on it still releases normally
        {
            "r1": (("b2",), (), "least_inflight"),
            "r2": (("b0", "b2"), (), "prefix_affinity"),
            "r3": (("b0",), ("b2",), "least_inflight"),
        },
    ),
)

OFFSETS = (-60, -49, -10, -1, 0, 1, 10, 45, 49, 60)
BUDGETS = (0.0, 2.0, 8.0, 1000.0, 1000.0)
# How a backend's change reaches the queue: the health checker and the admin API call
# slot_changed, a topology install reroutes, and the periodic dispatch pass picks up the rest.
NOTICES = st.sampled_from(("slot_changed", "install", "pass"))
TICKS = (0.25, 0.5, 1.0, 4.0)  # binary fractions: the model's exact arithmetic sees the same times
AGING = (0.0, 0.5, 2.0)
Arrival = tuple[int, int, int, str, int, float, int | None]
ARRIVAL = st.tuples(
    st.integers(0, 99),  # which route
    st.sampled_from((LOW, MEDIUM, HIGH)),
    st.sampled_from(OFFSETS),
    st.sampled_from(("ann", "ben", "cy")),
    st.sampled_from((1, 10, 100)),  # prompt tokens
    st.sampled_from(BUDGETS),
    st.none() | st.integers(0, 3),  # prompt prefix, for affinity
)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@dataclass(eq=False)
class Request:
    """The model's view of one request, across its retries (each a new Waiter)."""

    n: int  # arrival order, kept by retries
    cls: int
    offset: int
    owner: str
    cost: int
    arrival: float
    deadline: float
    key: str
    primary: tuple[str, ...]
    fallback: tuple[str, ...]
    waiter: Waiter
    affinity: str | None
    excluded: frozenset[str] = frozenset()
    turn: float = 0.0
    phase: str = "new"  # new, waiting, running, done
    running: Acquired | None = None


class AdmissionMachine(RuleBasedStateMachine):
    """Drives the synchronous core; the model predicts every outcome and checks every admission.

    The model never looks at the queue's heaps or keys: it orders requests by the schedulers'
    definitions (class, offset, arrival, cost, owner turns, llama-swap's score) in exact
    arithmetic, and computes which backends a request may use from the route's definition.
    """

    # ----- set-up ---------------------------------------------------------------------------

    def make_queue(self, config: SchedulerConfig) -> AdmissionQueue:
        return AdmissionQueue(clock=self.clock, config=config, observer=self)

    @initialize(
        caps=st.lists(st.integers(1, 2), min_size=3, max_size=3),
        name=st.sampled_from(SCHEDULERS),
        fair_share=st.booleans(),
        prioritize=st.booleans(),
        aging=st.sampled_from(AGING),
        bonus=st.sampled_from((0, 10, 99)),
        max_waiters=st.sampled_from((0, 0, 1, 2, 4)),
        topology=st.integers(0, len(TOPOLOGIES) - 1),
        crowd=st.lists(ARRIVAL, max_size=8),
    )
    def start(
        self,
        caps: list[int],
        name: str,
        fair_share: bool,
        prioritize: bool,
        aging: float,
        bonus: int,
        max_waiters: int,
        topology: int,
        crowd: list[Arrival],
    ) -> None:
        self.clock = FakeClock()
        self.slots = {b: Slot(b, max_inflight=c) for b, c in zip(BACKENDS, caps, strict=True)}
        config = SchedulerConfig(
            name=name,
            fair_share=fair_share,
            prioritize=prioritize,
            aging_divisor=aging,
            affinity_bonus=bonus,
            max_waiters=max_waiters,
        )
        self.q = self.make_queue(config)
        self.requests: list[Request] = []
        self.by_waiter: dict[int, Request] = {}
        self.waiters_made: list[Waiter] = []  # every Waiter ever, so ids stay unique
        self.acquisitions: list[Acquired] = []
        self.released: set[int] = set()  # ids of acquisitions the model has seen released
        self.admitted_once: set[int] = set()
        self.inflight = dict.fromkeys(BACKENDS, 0)
        # Per backend, when it took its last requests: its pace, for the estimated wait.
        self.taken: dict[str, deque[float]] = {b: deque(maxlen=32) for b in BACKENDS}
        self.vtime = [0.0, 0.0, 0.0]
        self.turns: list[dict[str, float]] = [{}, {}, {}]
        self.submitting: Request | None = None
        self.left_log: list[tuple[Request, str]] = []
        self.admit_log: list[tuple[Request, bool]] = []
        self.topology = topology
        self.routes: dict[str, Route] = {}
        self._build(topology)
        for arrival in crowd:  # a queue with people in it from the start
            self._arrive(*arrival)

    def _build(self, index: int) -> None:
        backends, routes = TOPOLOGIES[index]
        for name, slot in self.slots.items():
            slot.removed = name not in backends
        self.topology = index
        self.routes = {
            key: Route(
                key=key,
                primary=tuple(Target(self.slots[b], f"{key}-model") for b in primary),
                fallback=tuple(Target(self.slots[b], f"{key}-fallback") for b in fallback),
                strategy=strategy,
            )
            for key, (primary, fallback, strategy) in routes.items()
        }

    # ----- the observer: every admission is checked as it happens --------------------------

    def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None:
        r = self.by_waiter[id(waiter)]
        acq = waiter.acquired
        assert acq is not None
        name = acq.target.slot.name
        slot = self.slots[name]
        assert acq.target.slot is slot
        assert id(waiter) not in self.admitted_once, f"request {r.n} admitted twice"
        self.admitted_once.add(id(waiter))
        assert r.phase == "waiting", f"request {r.n} admitted while {r.phase}"
        assert name in self.usable(r), f"request {r.n} admitted onto {name}, not usable for it"
        assert self.inflight[name] < slot.max_inflight, f"{name} admitted past max_inflight"
        candidates = [x for x in self.waiting() if name in self.usable(x)]
        if immediate:
            assert r is self.submitting, f"request {r.n} admitted 'immediately' from the queue"
            others = [x.n for x in candidates if x is not r]
            assert not others, f"newcomer {r.n} went straight to {name} while {others} wait"
            assert not reordered
        else:
            if len(candidates) > 1:
                event("an admission among rivals")
                if min(candidates, key=lambda x: self.order(x, None)) is not r:
                    event("an admission decided by the affinity bonus")
            best = min(candidates, key=lambda x: self.order(x, name))
            assert best is r, (
                f"{name} went to request {r.n}; request {best.n} is better by "
                f"{self.q.config.name}: {self.order(best, name)} < {self.order(r, name)}"
            )
            plain = min(candidates, key=self.plain)
            expected = self.q.config.name == "serial" and plain is not r
            if expected:
                event("a serial reorder")
            assert reordered == expected, f"request {r.n}: reordered={reordered}, not {expected}"
            assert waiter.admitted_at == self.clock.t
        self.taken[name].append(self.clock.t)
        r.phase = "running"
        r.running = acq
        self.inflight[name] += 1
        self.acquisitions.append(acq)
        self.vtime[r.cls] = max(self.vtime[r.cls], r.turn)
        self.admit_log.append((r, immediate))

    def left(self, waiter: Waiter, outcome: str) -> None:
        r = self.by_waiter[id(waiter)]
        assert r.waiter is waiter, f"an old waiter of request {r.n} left again"
        if r.phase == "running":
            # Admitted in the instant its client left: the slot goes back (and is re-dispatched).
            assert outcome == CANCELLED, f"running request {r.n} left as {outcome}"
            assert r.running is not None
            self.inflight[r.running.backend] -= 1
            self.released.add(id(r.running))
            r.running = None
        else:
            assert r.phase == "waiting", f"request {r.n} left as {outcome} while {r.phase}"
        r.phase = "done"
        self.left_log.append((r, outcome))

    def changed(self) -> None:
        pass

    # ----- the reference model ---------------------------------------------------------------

    def waiting(self) -> list[Request]:
        return [r for r in self.requests if r.phase == "waiting"]

    def up(self, name: str) -> bool:
        s = self.slots[name]
        return s.enabled and s.healthy and not s.removed

    def usable(self, r: Request) -> list[str]:
        """Primaries that are up; the fallbacks only when every primary is down (not excluded)."""
        up = [b for b in r.primary if self.up(b) and b not in r.excluded]
        if up or not r.fallback:
            return up
        if any(self.up(b) for b in r.primary):
            return []
        return [b for b in r.fallback if self.up(b) and b not in r.excluded]

    def free(self, name: str) -> bool:
        return self.up(name) and self.inflight[name] < self.slots[name].max_inflight

    def order(self, r: Request, slot: str | None) -> tuple[object, ...]:
        """Smaller goes first, by the configured scheduler's definition, when `slot` frees."""
        cfg = self.q.config
        if cfg.name == "serial":
            return (-self.score(r, slot), r.n)
        if cfg.name == "fcfs":
            return (-r.cls, Fraction(r.arrival) - max(0, r.offset), r.n)
        if cfg.name == "wspt":
            return (-r.cls, -Fraction(1 + max(0, r.offset), r.cost), r.n)
        if cfg.fair_share:
            return (-r.cls, -r.offset, r.turn, r.n)
        return (-r.cls, -r.offset, r.n)

    def score(self, r: Request, slot: str | None) -> Fraction:
        """llama-swap: band anchor + offset + waited / divisor (+ the capped affinity bonus)."""
        cfg = self.q.config
        score = Fraction(BAND_ANCHORS[r.cls] + r.offset)
        if cfg.aging_divisor > 0:
            score += (Fraction(self.clock.t) - Fraction(r.arrival)) / Fraction(cfg.aging_divisor)
        if slot is not None and r.affinity == slot:
            bonus = max(0.0, min(99.0, cfg.affinity_bonus))
            score += Fraction(max(0.0, min(bonus, 49 - r.offset)))
        return score

    def plain(self, r: Request) -> tuple[int, int, int]:
        return (-r.cls, -r.offset, r.n)

    def estimate(self, r: Request) -> float | None:
        """The wait the queue estimates for a newcomer: the most waiters of its class and above
        at any one of its backends, over the sum of those backends' paces."""
        usable = self.usable(r)
        rate = 0.0
        for b in usable:
            taken = self.taken[b]
            span = self.clock.t - taken[0] if len(taken) >= 2 else 0.0
            rate += (len(taken) - 1) / span if span > 0 else 0.0
        if rate <= 0:
            return None
        waiting = [x for x in self.waiting() if x.cls >= r.cls]
        ahead = max((sum(1 for x in waiting if b in self.usable(x)) for b in usable), default=0)
        return ahead / rate

    def victim(self, cls: int) -> Request | None:
        """Whom a full queue turns away for a newcomer of `cls`: the lowest class's last one."""
        for c in range(cls):
            of_class = [r for r in self.waiting() if r.cls == c]
            if of_class:
                return max(of_class, key=lambda r: self.order(r, None))
        return None

    def assign_turn(self, r: Request) -> None:
        cfg = self.q.config
        if cfg.name == "strict" and cfg.fair_share:
            turns = self.turns[r.cls]
            start = max(turns.get(r.owner, 0.0), self.vtime[r.cls])
            turns[r.owner] = start + 1
            r.turn = start

    # ----- submitting, with the outcome predicted first --------------------------------------

    def _submit(self, r: Request, *, newcomer: bool) -> None:
        w = r.waiter
        now = self.clock.t
        cfg = self.q.config
        waiting = self.waiting()
        expect = "waits"
        victim: Request | None = None
        if any(self.free(b) for b in self.usable(r)):
            expect = "immediate"
        elif r.deadline <= now:
            expect = "expired"
        elif newcomer:
            if 0 < cfg.max_waiters <= len(waiting):
                victim = self.victim(r.cls)
                if victim is None:
                    assert not [x for x in waiting if x.cls < r.cls]
                    expect = "full"
            estimate = self.estimate(r)
            if expect == "waits" and estimate is not None and estimate > r.deadline - r.arrival:
                expect = "estimate"
            if expect == "waits" and victim is not None:
                expect = "displaces"

        r.phase = "waiting"
        self.submitting = r
        self.left_log, self.admit_log = [], []
        refusal: QueueFull | None = None
        try:
            self.q.submit(w)
        except QueueFull as err:
            refusal = err
        finally:
            self.submitting = None

        event(f"arrival: {expect}")
        if expect == "immediate":
            assert self.admit_log == [(r, True)], f"request {r.n} should have gone straight in"
            assert w.state == ADMITTED and w.waited == 0
        elif expect == "expired":
            assert self.left_log == [(r, EXPIRED)] and w.state == EXPIRED
        elif expect in ("full", "estimate"):
            assert refusal is not None, f"request {r.n} should have been refused ({expect})"
            wanted = "the queue is full" if expect == "full" else "estimated wait"
            assert wanted in refusal.reason, refusal.reason
            assert refusal.retry_after >= 1
            assert self.left_log == [(r, REJECTED)] and w.state == REJECTED
            assert w.refusal is refusal
        elif expect == "displaces":
            assert victim is not None
            assert refusal is None, f"request {r.n} refused: {refusal}"
            assert self.left_log == [(victim, REJECTED)], (
                f"request {r.n} should have displaced {victim.n}, "
                f"not {[(x.n, o) for x, o in self.left_log]}"
            )
            why = victim.waiter.refusal
            assert victim.waiter.state == REJECTED and why is not None
            assert "higher-class" in why.reason and why.retry_after >= 1
            assert r.phase == "waiting" and w.state == WAITING
        else:
            assert refusal is None, f"request {r.n} refused: {refusal}"
            assert self.left_log == [] and self.admit_log == []
            assert r.phase == "waiting" and w.state == WAITING

    # ----- rules -----------------------------------------------------------------------------

    @rule(burst=st.lists(ARRIVAL, min_size=1, max_size=4))
    def arrive(self, burst: list[Arrival]) -> None:
        """One to four requests arriving in the same instant."""
        for arrival in burst:
            self._arrive(*arrival)

    def _arrive(
        self,
        pick: int,
        cls: int,
        offset: int,
        owner: str,
        cost: int,
        budget: float,
        affinity_key: int | None,
    ) -> None:
        keys = sorted(self.routes)
        key = keys[pick % len(keys)]
        w = self.q.waiter(
            self.routes[key],
            cls=cls,
            offset=offset,
            budget=budget,
            affinity_key=affinity_key,
            cost=cost,
            owner=owner,
        )
        if self.q.config.prioritize:
            cls, offset = cls, max(-49, min(49, offset))
        else:
            cls, offset = MEDIUM, 0
        assert (w.cls, w.offset) == (cls, offset)
        primary, fallback, _ = TOPOLOGIES[self.topology][1][key]
        now = self.clock.t
        r = Request(
            n=len(self.requests),
            cls=cls,
            offset=offset,
            owner=owner,
            cost=cost,
            arrival=now,
            deadline=now + budget,
            key=key,
            primary=primary,
            fallback=fallback,
            waiter=w,
            affinity=w.affinity,
        )
        assert w.deadline == r.deadline
        self.assign_turn(r)  # every request takes its owner's next turn, as it arrives
        self.requests.append(r)
        self.waiters_made.append(w)
        self.by_waiter[id(w)] = r
        self._submit(r, newcomer=True)

    def _release(self, acq: Acquired) -> None:
        """Finish a running request (or release again: that must change nothing)."""
        if id(acq) in self.released:
            before = self._snapshot()
            self.left_log, self.admit_log = [], []
            acq.release()
            assert self.left_log == [] and self.admit_log == []
            assert self._snapshot() == before, "a second release changed something"
            return
        r = self.by_waiter[id(acq.waiter)]
        assert r.running is acq
        self.inflight[acq.backend] -= 1
        self.released.add(id(acq))
        r.running = None
        r.phase = "done"
        self.left_log, self.admit_log = [], []
        acq.release()
        assert self.left_log == [], "a release made someone leave"

    def _snapshot(self) -> tuple[object, ...]:
        return (
            tuple(s.inflight for s in self.slots.values()),
            tuple(self.q.depth),
            tuple(w.state for w in self.waiters_made),
        )

    @precondition(lambda self: self.acquisitions)
    @rule(pick=st.integers(0, 999))
    def release(self, pick: int) -> None:
        self._release(self.acquisitions[pick % len(self.acquisitions)])

    @precondition(lambda self: self.waiters_made)
    @rule(pick=st.integers(0, 999))
    def cancel(self, pick: int) -> None:
        """The client left: while waiting, just after admission, or after it finished."""
        w = self.waiters_made[pick % len(self.waiters_made)]
        r = self.by_waiter[id(w)]
        live = r.waiter is w and r.phase in ("waiting", "running")
        before = self._snapshot()
        self.left_log, self.admit_log = [], []
        self.q.cancel(w)
        if live:
            assert self.left_log == [(r, CANCELLED)], f"request {r.n} should have left"
            assert w.state == CANCELLED
            if w.acquired is not None:
                assert w.acquired.released
        else:
            assert self.left_log == [] and self.admit_log == []
            assert self._snapshot() == before, "cancelling a finished waiter changed something"

    @precondition(lambda self: any(r.phase == "running" for r in self.requests))
    @rule(pick=st.integers(0, 999))
    def retry(self, pick: int) -> None:
        """A dispatch failed before any byte: free the slot, try the others, same place in line."""
        running = [r for r in self.requests if r.phase == "running"]
        r = running[pick % len(running)]
        acq = r.running
        assert acq is not None
        old = r.waiter
        self._release(acq)
        w = self.q.retry_waiter(old, acq.backend)
        # As the relay does: today's route for the key, or the one it had if the key is gone.
        current = self.routes.get(r.key)
        if current is not None:
            w.route = current
            r.primary, r.fallback, _ = TOPOLOGIES[self.topology][1][r.key]
        r.excluded = w.excluded
        if not self.usable(r):
            return  # nowhere left to try: the relay answers with the upstream's error
        r.waiter = w
        r.affinity = w.affinity
        self.waiters_made.append(w)
        self.by_waiter[id(w)] = r
        assert (w.arrival, w.deadline, w.cls, w.offset) == (r.arrival, r.deadline, r.cls, r.offset)
        self._submit(r, newcomer=False)

    @rule(dt=st.sampled_from(TICKS))
    def tick(self, dt: float) -> None:
        self.clock.t += dt
        now = self.clock.t
        overdue = {r for r in self.waiting() if r.deadline <= now}
        self.left_log, self.admit_log = [], []
        self.q.dispatch_pass()
        assert {r for r, _ in self.left_log} == overdue
        assert all(o == EXPIRED for _, o in self.left_log)
        assert all(r.deadline > now for r in self.waiting()), "a waiter outlived its deadline"

    @rule(b=st.sampled_from(BACKENDS), notice=NOTICES)
    def health_flip(self, b: str, notice: str) -> None:
        self.slots[b].healthy = not self.slots[b].healthy
        self._changed(self.slots[b], notice)

    @rule(b=st.sampled_from(BACKENDS), n=st.integers(1, 3), notice=NOTICES)
    def capacity(self, b: str, n: int, notice: str) -> None:
        self.slots[b].max_inflight = n
        self._changed(self.slots[b], notice)

    @rule(b=st.sampled_from(BACKENDS), notice=NOTICES)
    def enable_flip(self, b: str, notice: str) -> None:
        self.slots[b].enabled = not self.slots[b].enabled
        self._changed(self.slots[b], notice)

    def _changed(self, slot: Slot, notice: str) -> None:
        """A change reaches the queue as slot_changed, a topology install, or the periodic pass."""
        if notice == "install":
            self._install(self.topology)
            return
        overdue = {r for r in self.waiting() if r.deadline <= self.clock.t}
        self.left_log = []
        if notice == "slot_changed":
            self.q.slot_changed(slot)
            assert self.left_log == []
        else:
            self.q.dispatch_pass()  # the pass every 250 ms, in the same instant
            assert {r for r, _ in self.left_log} == overdue

    @rule(index=st.integers(0, len(TOPOLOGIES) - 1))
    def topology_change(self, index: int) -> None:
        self._install(index)

    def _install(self, index: int) -> None:
        self._build(index)
        self._reroute(rekey=False)

    def _reroute(self, *, rekey: bool) -> None:
        """Every waiter moves to its key's route now; a key that is gone fails its waiters."""
        routes = TOPOLOGIES[self.topology][1]
        gone = set()
        for r in self.waiting():
            if r.key in routes:
                r.primary, r.fallback, _ = routes[r.key]
            else:
                gone.add(r)
        if rekey:
            self.turns = [{}, {}, {}]  # turns are handed out again, in arrival order
            for r in sorted(self.waiting(), key=lambda r: r.n):
                if r not in gone:
                    self.assign_turn(r)
        self.left_log = []
        self.q.reroute(self.routes.get, rekey=rekey)
        assert {r for r, _ in self.left_log} == gone
        assert all(o == FAILED for _, o in self.left_log)

    @rule(
        name=st.sampled_from(SCHEDULERS),
        fair_share=st.booleans(),
        prioritize=st.booleans(),
        aging=st.sampled_from(AGING),
        bonus=st.sampled_from((0, 10, 99)),
    )
    def scheduler_change(
        self, name: str, fair_share: bool, prioritize: bool, aging: float, bonus: int
    ) -> None:
        """As the runtime applies settings: order keys are recomputed when the order changes."""
        cfg = self.q.config
        before = (cfg.name, cfg.prioritize, cfg.fair_share, cfg.aging_divisor)
        cfg.name, cfg.fair_share, cfg.prioritize = name, fair_share, prioritize
        cfg.aging_divisor, cfg.affinity_bonus = aging, bonus
        if (cfg.name, cfg.prioritize, cfg.fair_share, cfg.aging_divisor) != before:
            self._reroute(rekey=True)

    @rule(n=st.sampled_from((0, 1, 2, 3, 5)))
    def max_waiters_change(self, n: int) -> None:
        self.q.config.max_waiters = n

    def teardown(self) -> None:
        n = len(getattr(self, "requests", ()))
        event(f"requests: {'0' if not n else '1-9' if n < 10 else '10-49' if n < 50 else '50+'}")

    # ----- invariants after every step -------------------------------------------------------

    @invariant()
    def inflight_counts_the_running_requests(self) -> None:
        for name, slot in self.slots.items():
            assert slot.inflight == self.inflight[name] >= 0, f"{name}: {slot.inflight}"
            running = sum(1 for r in self.requests if r.running and r.running.backend == name)
            assert running == self.inflight[name]

    @invariant()
    def a_backend_over_its_capacity_only_drains(self) -> None:
        """Admissions need inflight < max_inflight (checked at each one), so a backend is over
        its max_inflight only after the limit was lowered below its load, and then admits no
        one: its inflight never grows while it stays above the limit."""
        before = getattr(self, "last_inflight", None)
        for name, slot in self.slots.items():
            if before is not None and slot.inflight > slot.max_inflight:
                assert slot.inflight <= before[name], f"{name} grew past max_inflight"
        self.last_inflight = {name: slot.inflight for name, slot in self.slots.items()}

    @invariant()
    def every_request_is_in_exactly_one_state(self) -> None:
        live = self.q.waiters()
        assert [id(w) for w in live] == [id(r.waiter) for r in self.waiting()], (
            "the queue's waiters differ from the model's"
        )
        for r in self.requests:
            w = r.waiter
            if r.phase == "waiting":
                assert w.state == WAITING and w.acquired is None
                assert w.route.key == r.key
            elif r.phase == "running":
                assert w.state == ADMITTED and r.running is w.acquired
                assert r.running is not None and not r.running.released
            else:
                assert w.state != WAITING
                assert w.acquired is None or w.acquired.released
        for w in self.waiters_made:
            r = self.by_waiter[id(w)]
            if w is not r.waiter:  # an attempt that failed and was retried
                assert w.state == ADMITTED and w.acquired is not None and w.acquired.released

    @invariant()
    def depth_counts_the_live_waiters(self) -> None:
        waiting = self.waiting()
        assert self.q.depth == [sum(1 for r in waiting if r.cls == c) for c in (LOW, MEDIUM, HIGH)]
        assert self.q.waiting == len(waiting)
        oldest = self.clock.t - min(r.arrival for r in waiting) if waiting else 0.0
        assert self.q.oldest_wait() == oldest

    @invariant()
    def no_waiter_could_use_a_free_slot(self) -> None:
        """Work conservation, executable first: nobody waits while a backend it may use is free."""
        for r in self.waiting():
            free = [b for b in self.usable(r) if self.free(b)]
            assert not free, f"request {r.n} waits while {free} is free"


# Offsets a few points apart (and near a band's top) so that seconds of aging and an affinity
# bonus can overturn them; patient budgets so that waiters live long enough to age.
SERIAL_ARRIVAL = st.tuples(
    st.integers(0, 99),
    st.sampled_from((LOW, MEDIUM, MEDIUM, HIGH)),
    st.sampled_from((-2, -1, 0, 1, 2, 3, 44, 47, 49)),
    st.sampled_from(("ann", "ben")),
    st.just(1),
    st.sampled_from((8.0, 1000.0, 1000.0)),
    st.none() | st.integers(0, 3),
)


class SerialMachine(AdmissionMachine):
    """The same machine under the serial scheduler throughout, where aging and affinity reorder.

    What only the serial scheduler does shows with several waiters of one route warm on one
    backend, a few points apart, and time passing; a machine that starts anywhere and draws
    offsets far apart seldom gets there.
    """

    @rule(burst=st.lists(SERIAL_ARRIVAL, min_size=1, max_size=4))
    def arrive(self, burst: list[Arrival]) -> None:
        AdmissionMachine.arrive(self, burst)

    # Rules are drawn evenly: these weigh arrivals, the clock and releases up, the traffic
    # that makes waiters age side by side and compete for one backend.
    @rule(burst=st.lists(SERIAL_ARRIVAL, min_size=1, max_size=4))
    def arrive_too(self, burst: list[Arrival]) -> None:
        AdmissionMachine.arrive(self, burst)

    @rule(dt=st.sampled_from(TICKS))
    def tick_too(self, dt: float) -> None:
        AdmissionMachine.tick(self, dt)

    @precondition(lambda self: self.acquisitions)
    @rule(pick=st.integers(0, 999))
    def release_too(self, pick: int) -> None:
        AdmissionMachine.release(self, pick)

    @initialize(
        caps=st.lists(st.integers(1, 2), min_size=3, max_size=3),
        aging=st.sampled_from((0.5, 2.0)),
        bonus=st.sampled_from((10, 99)),
        max_waiters=st.sampled_from((0, 0, 2, 4)),
        topology=st.integers(0, len(TOPOLOGIES) - 1),
        crowd=st.lists(SERIAL_ARRIVAL, max_size=8),
    )
    def start(  # type: ignore[override]
        self,
        caps: list[int],
        aging: float,
        bonus: int,
        max_waiters: int,
        topology: int,
        crowd: list[Arrival],
    ) -> None:
        AdmissionMachine.start(
            self,
            caps=caps,
            name="serial",
            fair_share=False,
            prioritize=True,
            aging=aging,
            bonus=bonus,
            max_waiters=max_waiters,
            topology=topology,
            crowd=crowd,
        )

    @rule(aging=st.sampled_from(AGING), bonus=st.sampled_from((0, 10, 99)))
    def scheduler_change(  # type: ignore[override]
        self, aging: float, bonus: int
    ) -> None:
        AdmissionMachine.scheduler_change(
            self, name="serial", fair_share=False, prioritize=True, aging=aging, bonus=bonus
        )


def _test_case(machine: type[RuleBasedStateMachine], *, share: float = 1.0) -> type:
    """`share`: the part of the short profile's examples to run (the long run keeps all)."""
    case = machine.TestCase
    profile = settings.get_profile(PROFILE)
    if share < 1.0 and not PROFILE.endswith("chaos"):
        profile = settings(profile, max_examples=int(profile.max_examples * share))
    case.settings = profile
    # The long run takes minutes: past the suite's per-test timeout, which guards the short one.
    return pytest.mark.timeout(0 if PROFILE.endswith("chaos") else 120)(case)


def _shared(machine: type[AdmissionMachine]) -> type[AdmissionMachine]:
    """The same machine over shared admission: the queue of one process on a private Redis."""

    class Shared(machine):  # type: ignore[valid-type,misc]
        def make_queue(self, config: SchedulerConfig) -> AdmissionQueue:
            import uuid

            from gateway.admission.shared.queue import SharedAdmissionQueue
            from gateway.core.redis_clients import connect
            from tests.support.redis_server import shared_server

            return SharedAdmissionQueue(
                connect(shared_server().url, timeout=10.0),
                prefix=f"m{uuid.uuid4().hex[:10]}:",
                clock=self.clock,
                config=config,
                observer=self,
            )

    Shared.__name__ = "Shared" + machine.__name__
    return Shared


TestTheAdmissionQueueAgainstItsModel = _test_case(AdmissionMachine)
TestTheSerialSchedulerAgainstItsModel = _test_case(SerialMachine)
# Over Redis every step is a few round trips: a third of the examples, the same every run.
TestTheSharedAdmissionQueueAgainstItsModel = pytest.mark.skipif(not have_redis(), reason=NO_REDIS)(
    _test_case(_shared(AdmissionMachine), share=1 / 3)
)
TestTheSharedSerialSchedulerAgainstItsModel = pytest.mark.skipif(not have_redis(), reason=NO_REDIS)(
    _test_case(_shared(SerialMachine), share=1 / 3)
)
