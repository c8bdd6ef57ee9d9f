"""The admission vocabulary: slots, targets, routes, waiters, a running request's slot, errors."""

from __future__ import annotations

import heapq
import zlib
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from gateway.core.classes import MEDIUM

WAITING, ADMITTED = "waiting", "admitted"

CANCELLED, EXPIRED, FAILED, REJECTED = "cancelled", "expired", "failed", "rejected"


class AdmissionError(Exception):
    """A request that could not be given a slot."""


class QueueTimeout(AdmissionError):
    pass


class QueueCancelled(AdmissionError):
    pass


class QueueFull(AdmissionError):
    def __init__(self, reason: str, retry_after: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class RouteGone(AdmissionError):
    pass


class TurnedAway(AdmissionError):
    """The process stops and its drain ended while the request still waited (503)."""


class Clock(Protocol):
    def __call__(self) -> float: ...


@dataclass(eq=False, slots=True)
class Slot:
    """One backend's capacity. Persistent across topology rebuilds so in-flight counts survive."""

    name: str
    max_inflight: int = 16
    weight: int = 1
    enabled: bool = True
    healthy: bool = True
    inflight: int = 0
    removed: bool = False
    auto: bool = False  # max_inflight is learned, not configured (gateway/runtime/capacity.py)
    # Reserved headroom: of its limit, how many slots each class (low, medium, high) is kept
    # from while a higher class has come lately (the admission queue's `reserved`).
    headroom: tuple[int, int, int] = (0, 0, 0)

    @property
    def usable(self) -> bool:
        return self.enabled and self.healthy and not self.removed

    @property
    def free(self) -> bool:
        return self.usable and self.inflight < self.max_inflight


@dataclass(frozen=True, slots=True)
class Target:
    """A backend slot pool plus the model id that backend knows the requested model by."""

    slot: Slot
    model: str
    pool: str = ""


@dataclass(eq=False, slots=True)
class Route:
    """Where a (model, access) pair may run: primary targets, and fallbacks when all are offline.

    `key` identifies the route: waiters with the same key are interchangeable but for their order.
    """

    key: Hashable
    primary: tuple[Target, ...]
    fallback: tuple[Target, ...] = ()
    strategy: str = "least_inflight"
    _rr: int = 0

    def usable_targets(self, excluded: frozenset[str] = frozenset()) -> tuple[Target, ...]:
        """Primary targets that are up; the fallback ones only when every primary is down."""
        up = tuple(t for t in self.primary if t.slot.usable and t.slot.name not in excluded)
        if up or not self.fallback:
            return up
        if any(t.slot.usable for t in self.primary):
            return up  # primaries are up but excluded by a retry: not an outage, no fallback
        return tuple(t for t in self.fallback if t.slot.usable and t.slot.name not in excluded)

    def target_on(self, slot: Slot, excluded: frozenset[str]) -> Target | None:
        """The route's target on this backend, if the route may use it right now."""
        if slot.name in excluded:
            return None
        for t in self.usable_targets(excluded):
            if t.slot is slot:
                return t
        return None

    def warm_backend(self, affinity_key: int) -> str | None:
        """The cache-warm primary for a prompt prefix: highest-random-weight hashing, stable."""
        best, best_score = None, -1
        for t in self.primary:
            score = zlib.crc32(t.slot.name.encode(), affinity_key & 0xFFFFFFFF)
            if score > best_score:
                best, best_score = t.slot.name, score
        return best

    def has_usable(self) -> bool:
        """Whether any target is up: `usable_targets()` is non-empty, without building it."""
        for t in self.primary:
            if t.slot.usable:
                return True
        return any(t.slot.usable for t in self.fallback)

    def slots(self) -> Iterable[Slot]:
        for t in self.primary:
            yield t.slot
        for t in self.fallback:
            yield t.slot


class Releases(Protocol):
    """What a running request's slot knows of its queue: where to hand the slot back."""

    def _on_release(self, acquired: Acquired) -> None: ...


@dataclass(eq=False, slots=True)
class Acquired:
    """A running request's slot. `release()` frees it exactly once, whatever the exit path."""

    target: Target
    waiter: Waiter
    queue: Releases
    released: bool = False

    @property
    def backend(self) -> str:
        return self.target.slot.name

    @property
    def model(self) -> str:
        return self.target.model

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.queue._on_release(self)


@dataclass(eq=False, slots=True)
class Waiter:
    """One request asking for a slot: its class, hint, arrival and deadline."""

    route: Route
    cls: int = MEDIUM
    offset: int = 0
    arrival: float = 0.0
    deadline: float = float("inf")
    affinity: str | None = None  # the cache-warm backend for prefix affinity
    affinity_key: int | None = None
    cost: int = 1  # prompt tokens, for wspt
    owner: str = ""
    excluded: frozenset[str] = frozenset()
    turn: float = 0.0  # fair share's start tag
    work: float = 1.0  # fair share by work: what its arrival charged its owner (tokens)
    retry: bool = False  # a failed dispatch trying another replica
    seq: int = -1
    ref: str = ""  # its name in shared admission (unique per Waiter, a retry's too)
    state: str = WAITING
    key: tuple[float, float, int] = (0.0, 0.0, 0)
    plain_key: tuple[float, float, int] = (0.0, 0.0, 0)
    acquired: Acquired | None = None
    admitted_at: float | None = None
    on_admit: Callable[[Waiter], None] | None = None
    group: Group | None = None
    refusal: AdmissionError | None = None  # why it was turned away (state REJECTED)
    tag: object = None  # the caller's own data (the activity record picks it up)

    @property
    def waited(self) -> float:
        end = self.admitted_at if self.admitted_at is not None else self.arrival
        return max(0.0, end - self.arrival)


class Observer(Protocol):
    """What the queue reports; metrics and the activity log implement it."""

    def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None: ...
    def left(self, waiter: Waiter, outcome: str) -> None: ...
    def changed(self) -> None: ...


class NullObserver:
    def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None:
        pass

    def left(self, waiter: Waiter, outcome: str) -> None:
        pass

    def changed(self) -> None:
        pass


@dataclass(eq=False, slots=True)
class Group:
    """Waiters with the same route, exclusions and cache-warm backend: one heap, one head."""

    gkey: Hashable
    route: Route
    excluded: frozenset[str]
    affinity: str | None
    heap: list[tuple[tuple[float, float, int], Waiter]] = field(default_factory=list)
    # serial only: the same waiters in plain (class, offset, arrival) order, so a dispatch can
    # tell whether aging or affinity changed its pick; aging reorders inside one group too.
    plain: list[tuple[tuple[float, float, int], Waiter]] = field(default_factory=list)
    # serial only, when the group's warm backend frees: the same waiters by the key with the
    # affinity bonus. Capped at the band's top, the bonus lifts some waiters less than others
    # (and all of them alike from 99 up), so this order is not the heap's. Built for one bonus
    # (`warm_bonus`) when first needed; a changed setting builds it again.
    warm: list[tuple[tuple[float, float, int], Waiter]] = field(default_factory=list)
    warm_bonus: float | None = None
    live: int = 0
    by_class: list[int] = field(default_factory=lambda: [0, 0, 0])  # live, per class

    def head(self) -> Waiter | None:
        return _live_top(self.heap)

    def plain_head(self) -> Waiter | None:
        return _live_top(self.plain)

    def warm_head(self, bonus: float) -> Waiter | None:
        if self.warm_bonus != bonus:
            self.warm = [(warm_key(w, bonus), w) for _, w in self.heap if w.state == WAITING]
            heapq.heapify(self.warm)
            self.warm_bonus = bonus
        return _live_top(self.warm)


def warm_key(w: Waiter, bonus: float) -> tuple[float, float, int]:
    """A serial key with the affinity bonus, never past the band's ceiling (anchor + 49).

    Offsets span 98 of the 100 between anchors, so an unbounded bonus would lift a waiter
    across a band.
    """
    k0, k1, k2 = w.key
    return (k0 - max(0.0, min(bonus, 49 - w.offset)), k1, k2)


def _live_top(heap: list[tuple[tuple[float, float, int], Waiter]]) -> Waiter | None:
    while heap:
        w = heap[0][1]
        if w.state == WAITING:
            return w
        heapq.heappop(heap)  # lazily drop waiters that left
    return None
