"""The schedulers' settings and the order each gives the waiters.

Each scheduler is its order key: a function of the waiter's own fields and the settings only
(smaller goes first), so a retry or a rekey computes the same key the request would have had
arriving under it. The key is static while a waiter waits: serial's aging folds into arrival.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.admission.types import Waiter
from gateway.core.classes import BAND_ANCHORS

SCHEDULERS = ("strict", "serial", "fcfs", "wspt", "edf")

Key = tuple[float, float, int]


@dataclass(slots=True)
class SchedulerConfig:
    """The scheduler's settings: one shape, built from the operator settings' catalog."""

    name: str = "strict"
    aging_divisor: float = 60.0  # seconds of waiting per score point (serial); 0 = no aging
    affinity_bonus: float = 10.0  # serial only, 0..99
    max_waiters: int = 0  # 0 = unbounded
    prioritize: bool = True  # False: one class, arrival order
    fair_share: bool = False  # strict only: owners take turns inside a class
    # Fair share counts each request as one turn ("requests"), or by its work ("tokens": its
    # prompt plus weighted output, VTC's measure), what an owner took beyond the class's turn
    # halving every `fair_share_half_life` seconds (0: never).
    fair_share_by: str = "requests"
    fair_share_half_life: float = 600.0
    # A backend's reserved headroom holds while a higher class came within this (seconds).
    headroom_secs: float = 30.0

    @classmethod
    def from_catalog(cls, values: dict[str, Any]) -> SchedulerConfig:
        return cls(
            name=str(values["gateway.scheduler"]),
            aging_divisor=float(values["gateway.aging_divisor_secs"]),
            affinity_bonus=float(values["gateway.affinity_bonus"]),
            max_waiters=int(values["gateway.max_waiters"]),
            prioritize=bool(values["gateway.priority_enabled"]),
            fair_share=bool(values["gateway.fair_share"]),
            headroom_secs=float(values["gateway.headroom_secs"]),
            fair_share_by=str(values["gateway.fair_share_by"]),
            fair_share_half_life=float(values["gateway.fair_share_half_life_secs"]),
        )

    def orders_like(self, other: SchedulerConfig) -> bool:
        """Are order keys made under these settings still right under the other? (The bonus
        and the bound apply at dispatch and arrival, not in the keys.)"""
        mine = (self.name, self.prioritize, self.fair_share, self.fair_share_by, self.aging_divisor)
        theirs = (
            other.name, other.prioritize, other.fair_share, other.fair_share_by,
            other.aging_divisor,
        )  # fmt: skip
        return mine == theirs


def strict_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """Class, then offset, then arrival: the plain order."""
    return w.plain_key


def fair_share_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """Strict with owners taking turns inside a class (`take_turn` of the queue)."""
    # Class and offset first (a lowered request stays lowered; anchors 100 apart, offsets
    # within +-49), then the turn, which by work may grow to billions of tokens.
    return (-(BAND_ANCHORS[w.cls] + w.offset), w.turn, w.seq)


def serial_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """llama-swap's score, band anchor + offset + aging, highest first (see `serial_score`)."""
    # score(t) = anchor + offset + (t - arrival) / divisor; at any one t the order is that
    # of anchor + offset - arrival / divisor, which does not change while waiting.
    aging = w.arrival / cfg.aging_divisor if cfg.aging_divisor > 0 else 0.0
    return (-(BAND_ANCHORS[w.cls] + w.offset) + aging, 0.0, w.seq)


def fcfs_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """Class, then arrival less the head start the offset gives."""
    # Dynamo's fcfs: a positive priority is seconds of head start; never a penalty.
    return (-w.cls, w.arrival - max(0, w.offset), w.seq)


def wspt_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """Class, then the most priority per prompt token first."""
    return (-w.cls, -(1 + max(0, w.offset)) / w.cost, w.seq)


def edf_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """Class and offset, then the earliest deadline first (EDF): a request that asked to wait
    less (X-AIplane-Max-Wait) goes before one that may wait longer, within its class; among
    equal budgets this is arrival order."""
    # The class's anchor plus the offset orders as strict does (anchors 100 apart, offsets
    # within +-49); the deadline is absolute, so the key is static while the waiter waits.
    return (-(BAND_ANCHORS[w.cls] + w.offset), w.deadline, w.seq)


# The schedulers with a key of their own; any other is strict, with fair share if it is on.
KEYS: dict[str, Callable[[Waiter, SchedulerConfig], Key]] = {
    "serial": serial_key,
    "fcfs": fcfs_key,
    "wspt": wspt_key,
    "edf": edf_key,
}


def order_key(w: Waiter, cfg: SchedulerConfig) -> Key:
    """The waiter's order key under these settings (its `plain_key` already set)."""
    key = KEYS.get(cfg.name)
    if key is None:
        key = fair_share_key if cfg.fair_share else strict_key
    return key(w, cfg)


def takes_turns(cfg: SchedulerConfig) -> bool:
    """Do owners take turns (fair share's key is the one in use)?"""
    return cfg.fair_share and cfg.name not in KEYS


def by_work(cfg: SchedulerConfig) -> bool:
    """Do fair share's turns count work (tokens) rather than requests?"""
    return cfg.fair_share_by == "tokens"


# What a request's output costs against its prompt, token for token, in fair share by work:
# VTC's default weights (w_p = 1, w_q = 2); generating is the dearer half.
OUTPUT_WEIGHT = 2.0


def affinity_bonus(cfg: SchedulerConfig) -> float:
    """Serial's lift, in score points, for a waiter whose cache-warm backend is the one that
    is free (capped at 99; never past the waiter's band, see `types.warm_key`); 0 otherwise."""
    return max(0.0, min(99.0, cfg.affinity_bonus)) if cfg.name == "serial" else 0.0


def serial_score(w: Waiter, cfg: SchedulerConfig, clock: Callable[[], float]) -> float:
    """The llama-swap score a request was admitted with (or has now, still waiting).

    score = band anchor + offset + aging (+ the affinity bonus when its warm backend was
    the one that freed); the heap key encodes the same order without the clock.
    """
    # A waiter still in line has aged until now; an admitted one until its admission.
    waited = w.waited if w.admitted_at is not None else max(0.0, clock() - w.arrival)
    aging = waited / cfg.aging_divisor if cfg.aging_divisor > 0 else 0.0
    bonus = 0.0
    acquired = w.acquired
    if w.affinity is not None and acquired is not None and acquired.backend == w.affinity:
        # The same cap as in dispatch: never past the top of the waiter's own band.
        bonus = max(0.0, min(cfg.affinity_bonus, 99.0, 49.0 - w.offset))
    return BAND_ANCHORS[w.cls] + w.offset + bonus + aging
