"""The queue's counters: the admission queue's observer, plain integers on the request path."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from typing import Any

from gateway.admission.types import Waiter
from gateway.core.classes import CLASS_NAMES
from gateway.core.outcomes import ADMISSION_OUTCOMES, Outcome

RECENT = 20

OUTCOMES = tuple(str(outcome) for outcome in ADMISSION_OUTCOMES)

# The queue reports a waiter's leaving by its state; these three are admission outcomes.
_LEFT = frozenset({Outcome.EXPIRED, Outcome.CANCELLED, Outcome.REJECTED})

# Zero gets its own bucket so "admitted without waiting" is visible in the histogram.
WAIT_BUCKETS = (0.0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class QueueMetrics:
    """Counters of one runtime's queue, indexed by class; the AdmissionQueue's observer."""

    __slots__ = (
        "admissions", "allowance_refusals", "dispatches", "on_change", "recent", "reorders",
        "tokens", "wait_buckets", "wait_count", "wait_sum",
    )  # fmt: skip

    def __init__(self) -> None:
        # Called on every change the live queue view cares about (set by the runtime).
        self.on_change: Callable[[], None] | None = None
        # The last dispatches, for the live queue view: (unix time, waiter, backend).
        self.recent: deque[tuple[float, Waiter, str]] = deque(maxlen=RECENT)
        self.admissions = [dict.fromkeys(OUTCOMES, 0) for _ in CLASS_NAMES]
        self.dispatches = [0, 0, 0]
        self.reorders = [0, 0, 0]
        self.wait_buckets = [[0] * (len(WAIT_BUCKETS) + 1) for _ in CLASS_NAMES]
        self.wait_sum = [0.0, 0.0, 0.0]
        self.wait_count = [0, 0, 0]
        # (class, model) -> [input, output, cached] tokens the engines reported. The model is
        # the name a caller used that resolved (an admin's model or alias): a bounded label.
        self.tokens: dict[tuple[int, str], list[int]] = {}
        # (reason, class) -> requests refused over an allowance; the reason is a limit's kind
        # (`tokens_per_day`), never whose: a bounded label set.
        self.allowance_refusals: dict[tuple[str, int], int] = {}

    def refused_by_allowance(self, reason: str, cls: int) -> None:
        key = (reason, cls)
        self.allowance_refusals[key] = self.allowance_refusals.get(key, 0) + 1

    def count_tokens(self, cls: int, model: str, usage: Any) -> None:
        counts = self.tokens.get((cls, model))
        if counts is None:
            counts = self.tokens[(cls, model)] = [0, 0, 0]
        counts[0] += usage.input_tokens or 0
        counts[1] += usage.output_tokens or 0
        counts[2] += usage.cached_tokens or 0

    def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None:
        cls = waiter.cls
        self.admissions[cls]["immediate" if immediate else "waited"] += 1
        self.dispatches[cls] += 1
        if reordered:
            self.reorders[cls] += 1
        waited = waiter.waited
        self.wait_buckets[cls][bisect_left(WAIT_BUCKETS, waited)] += 1
        self.wait_sum[cls] += waited
        self.wait_count[cls] += 1
        acquired = waiter.acquired
        self.recent.append((time.time(), waiter, acquired.backend if acquired else ""))
        if self.on_change is not None:
            self.on_change()

    def left(self, waiter: Waiter, outcome: str) -> None:
        if outcome in _LEFT:
            self.admissions[waiter.cls][outcome] += 1
        if self.on_change is not None:
            self.on_change()

    def changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
