"""The admission tests' fake clock, recording observer and enter/hold/drain helpers."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from gateway.admission.queue import AdmissionQueue
from gateway.admission.types import (
    Acquired,
    Route,
    Slot,
    Target,
    Waiter,
)
from gateway.core.classes import MEDIUM

# ----- fixtures and helpers -------------------------------------------------------------------


class FakeClock:
    """The queue's clock, moved by hand."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Recorder:
    """An Observer that remembers everything the queue reports, in order."""

    def __init__(self) -> None:
        self.admitted_waiters: list[Waiter] = []
        self.flags: list[tuple[object, bool, bool]] = []  # (tag, immediate, reordered)
        self.outcomes: list[tuple[object, str]] = []
        self.changes = 0

    def admitted(self, waiter: Waiter, *, immediate: bool, reordered: bool) -> None:
        self.admitted_waiters.append(waiter)
        self.flags.append((waiter.tag, immediate, reordered))

    def left(self, waiter: Waiter, outcome: str) -> None:
        self.outcomes.append((waiter.tag, outcome))

    def changed(self) -> None:
        self.changes += 1

    @property
    def order(self) -> list[object]:
        """Tags of everyone admitted, blockers left out."""
        return [w.tag for w in self.admitted_waiters if w.tag != "blocker"]

    def reordered(self, tag: object) -> bool:
        return next(r for t, _, r in self.flags if t == tag)

    def immediate(self, tag: object) -> bool:
        return next(i for t, i, _ in self.flags if t == tag)


def route(
    key: Hashable,
    *slots: Slot,
    fallback: tuple[Slot, ...] = (),
    strategy: str = "least_inflight",
) -> Route:
    return Route(
        key=key,
        primary=tuple(Target(s, f"{key}-model") for s in slots),
        fallback=tuple(Target(s, f"{key}-fallback") for s in fallback),
        strategy=strategy,
    )


def resolver(routes: dict[str, Route]) -> Callable[[Hashable], Route | None]:
    """What a topology rebuild hands to `reroute`: a route key to its new definition, if any."""
    return lambda key: routes.get(str(key))


def enter(
    q: AdmissionQueue,
    r: Route,
    tag: object,
    *,
    cls: int = MEDIUM,
    offset: int = 0,
    budget: float = 600.0,
    **kw: object,
) -> Waiter:
    """A request arriving now; it is admitted at once or waits."""
    w = q.waiter(r, cls=cls, offset=offset, budget=budget, tag=tag, **kw)  # type: ignore[arg-type]
    q.submit(w)
    return w


def hold(q: AdmissionQueue, r: Route, n: int = 1) -> list[Acquired]:
    """Fill `n` slots with running requests that nobody is waiting behind."""
    held = []
    for _ in range(n):
        w = q.waiter(r, budget=600.0, tag="blocker")
        acquired = q.submit(w)
        assert acquired is not None, "the blocker should have found a free slot"
        held.append(acquired)
    return held


def drain(q: AdmissionQueue, rec: Recorder, running: Acquired) -> None:
    """On a one-slot backend: finish the running request, then each one admitted after it."""
    while True:
        before = len(rec.admitted_waiters)
        running.release()
        if len(rec.admitted_waiters) == before:
            return
        nxt = rec.admitted_waiters[-1].acquired
        assert nxt is not None
        running = nxt
