"""The admission queue behind route_or_wait: who gets the next free backend slot, and when.

Pure asyncio, no Django: the synchronous core (`submit`, `release`, `cancel`, `dispatch_pass`)
can be driven by a test with a fake clock; `route_or_wait` is the thin async layer on top.

Errors raised to the caller (all subclasses of `AdmissionError`):

    AdmissionError
    ├── QueueTimeout      the wait budget ran out (503 + Retry-After)
    ├── QueueCancelled    the client went away or pressed Stop
    ├── QueueFull         a bounded queue is full (or a higher class took this waiter's place),
    │                     or the estimated wait exceeds the budget (429 + Retry-After)
    ├── RouteGone         the model disappeared from the topology while the request waited
    └── TurnedAway        the process stops and its drain ended while the request waited

A bounded queue (`max_waiters`) never inverts priority: when it is full, a newcomer of a strictly
higher class than the lowest class waiting takes the place of that class's last waiter in the
scheduler's own order (see `_check_bounds`); a newcomer of the same class or below is refused.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any, NoReturn

from gateway.admission.fair_share import Turns
from gateway.admission.pace import Pace
from gateway.admission.schedulers import (
    SchedulerConfig,
    affinity_bonus,
    by_work,
    order_key,
    serial_score,
    takes_turns,
)
from gateway.admission.types import (
    ADMITTED,
    CANCELLED,
    EXPIRED,
    FAILED,
    REJECTED,
    WAITING,
    Acquired,
    Clock,
    Group,
    NullObserver,
    Observer,
    QueueFull,
    Route,
    Slot,
    Target,
    Waiter,
    warm_key,
)
from gateway.core.classes import HIGH, MEDIUM


class AdmissionQueue:
    """The registry-owned waiting line of one gateway process."""

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        config: SchedulerConfig | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.clock = clock
        self.config = config or SchedulerConfig()
        self.observer: Observer = observer or NullObserver()
        self._seq = itertools.count()
        self._groups: dict[Hashable, Group] = {}
        self._groups_by_slot: dict[str, set[Group]] = {}
        # (deadline, seq, id, waiter): a retry shares deadline and seq with the original whose
        # entry may still be here, and two Waiters cannot be compared, so id() breaks the tie.
        self._deadlines: list[tuple[float, int, int, Waiter]] = []
        self.depth = [0, 0, 0]  # live waiters per class
        # Fair share: the turn being served per class, and each owner's next turn per class.
        self.turns = Turns()  # fair share's (fair_share.py)
        self._oldest: dict[int, Waiter] = {}  # seq -> waiter, insertion-ordered: arrival order
        # Per class, the waiters by their order key, last first: who a bounded queue turns
        # away for a higher newcomer, found without scanning. Leavers are dropped lazily.
        self._tails: list[list[tuple[tuple[float, float, int], int, Waiter]]] = [[], [], []]
        self._tie = itertools.count()  # a retry shares its key with the original
        # When recent waiters were admitted, for a full queue's Retry-After.
        self._recent: deque[float] = deque(maxlen=64)
        # Per backend, its pace (for each newcomer's estimated wait) and the classes that came
        # for it lately (a class's reserved headroom holds while a higher one came).
        self.pace = Pace()

    # ----- building waiters -------------------------------------------------------------

    def waiter(
        self,
        route: Route,
        *,
        cls: int = MEDIUM,
        offset: int = 0,
        budget: float = 0.0,
        affinity_key: int | None = None,
        cost: int = 1,
        owner: str = "",
        tag: object = None,
        excluded: frozenset[str] = frozenset(),
        work: float = 1.0,
    ) -> Waiter:
        """A new waiter arriving now, ordered by the configured scheduler; it never runs on
        the `excluded` backends. `work` is what fair share by work charges its owner now (its
        prompt's tokens; `charge` settles the rest when it ends)."""
        now = self.clock()
        if not self.config.prioritize:
            cls, offset = MEDIUM, 0
        w = Waiter(
            route=route,
            cls=cls,
            offset=max(-49, min(49, offset)),
            arrival=now,
            deadline=now + max(0.0, budget),
            affinity_key=affinity_key,
            cost=max(1, cost),
            owner=owner,
            tag=tag,
            excluded=excluded,
            seq=next(self._seq),
            work=max(0.0, work),
        )
        if affinity_key is not None and route.strategy == "prefix_affinity":
            w.affinity = route.warm_backend(affinity_key)
        self._take_turn(w)
        self._keys(w)
        return w

    def _keys(self, w: Waiter) -> None:
        """Static heap keys, by the configured scheduler's key (schedulers.py)."""
        w.plain_key = (-w.cls, -w.offset, w.seq)
        w.key = order_key(w, self.config)

    def _take_turn(self, w: Waiter) -> None:
        """Fair share: the owner's next turn in the class (fair_share.py), when it is on."""
        if takes_turns(self.config):
            cfg = self.config
            self.turns.take(
                w, by_work=by_work(cfg), half_life=cfg.fair_share_half_life, now=self.clock()
            )

    def charge(self, w: Waiter, work: float) -> None:
        """Fair share by work: the request ended having taken `work` (0 if it never ran)."""
        if by_work(self.config) and takes_turns(self.config):
            self.turns.charge(w, work)

    def retry_waiter(self, old: Waiter, failed_backend: str | None) -> Waiter:
        """The same request again after a failed (or preempted: None) dispatch, in its place."""
        w = Waiter(
            route=old.route,
            cls=old.cls,
            offset=old.offset,
            arrival=old.arrival,
            deadline=old.deadline,
            affinity=None,
            affinity_key=old.affinity_key,
            cost=old.cost,
            work=old.work,
            owner=old.owner,
            excluded=old.excluded | ({failed_backend} if failed_backend else set()),
            retry=True,
            seq=old.seq,
            tag=old.tag,
        )
        # Its place in line is its arrival and turn; the key comes from today's scheduler, since
        # the original's may predate a scheduler change that rekeyed everyone still waiting.
        w.turn = old.turn
        self._keys(w)
        return w

    # ----- the synchronous core ---------------------------------------------------------

    def submit(self, w: Waiter) -> Acquired | None:
        """Admit at once if a usable slot is free and nobody better waits for it; else enqueue."""
        self._came_for(w)
        target = self._pick(w.route, w)
        if target is not None and not self._contended(target.slot):
            self._admit(w, target, immediate=True, reordered=False)
            return w.acquired
        if w.deadline <= self.clock() and target is None:
            # A zero budget still made its one attempt above; nothing free means no wait.
            w.state = EXPIRED
            self.observer.left(w, EXPIRED)
            return None
        if not w.retry:  # a retry already holds its place in line; it is not a newcomer
            self._check_bounds(w)
        self._enqueue(w)
        if target is not None:
            self._dispatch_slot(target.slot)
        if w.state == WAITING and w.deadline <= self.clock():
            self._remove(w, EXPIRED)
        return w.acquired

    async def submit_async(self, w: Waiter) -> Acquired | None:
        """`submit` for the async layer; shared admission awaits its round trip here."""
        return self.submit(w)

    async def close(self) -> None:
        """The runtime stops: nothing to hand over here (shared admission's writer finishes)."""

    def cancel(self, w: Waiter, outcome: str = CANCELLED) -> None:
        """Take a waiter out of line; a slot it was just given goes back at once."""
        if w.state == WAITING:
            self._remove(w, outcome)
        elif w.state == ADMITTED and w.acquired is not None and not w.acquired.released:
            # Admitted in the same instant the client left: the slot was never used.
            w.state = outcome
            self.observer.left(w, outcome)
            w.acquired.release()

    def dispatch_pass(self) -> int:
        """Expire overdue waiters, then place waiting heads in priority order; returns admissions.

        This is the periodic pass (every 250 ms) that picks up capacity and health changes;
        ordinary admissions happen at once on release or arrival.
        """
        self._expire_overdue()
        return self._place_heads()

    def _expire_overdue(self) -> None:
        """Take out the waiters whose deadline passed; drop bookkeeping of those long gone."""
        now = self.clock()
        dl = self._deadlines
        while dl and dl[0][0] <= now:
            w = heapq.heappop(dl)[-1]
            if w.state == WAITING:
                self._remove(w, EXPIRED)
        if len(dl) > 1024 and len(dl) > 4 * self.waiting:
            # Admitted waiters linger here until their deadline; drop them rather than keep
            # (throughput x budget) finished requests alive.
            self._deadlines = dl = [e for e in dl if e[-1].state == WAITING]
            heapq.heapify(dl)
        self.turns.forget_the_past()

    def _place_heads(self) -> int:
        """Place waiting heads in priority order while their backends have room."""
        admitted = 0
        heads: list[tuple[tuple[float, float, int], int, Group]] = []
        for g in self._groups.values():
            h = g.head()
            if h is not None:
                heads.append((h.key, id(g), g))
        heapq.heapify(heads)
        while heads:
            key, _, g = heapq.heappop(heads)
            h = g.head()
            if h is None:
                continue
            if h.key != key:
                # A slot went to this group's head while another group's turn came: go again
                # in the new head's place (a head only ever gets worse during a pass).
                heapq.heappush(heads, (h.key, id(g), g))
                continue
            target = self._pick(g.route, h)
            if target is None:
                continue  # this group's backends are all busy; later waiters of it are too
            # The route's strategy picks the backend; that backend then goes to its own best
            # waiter: `h`, or under serial one warm on it whose affinity bonus outranks `h`.
            choice = self._best_for(target.slot)
            if choice is None or not self._room(target.slot, choice[0].cls):
                continue  # (serial may pick a warm waiter of another class, kept from it)
            self._admit(*choice, immediate=False)
            admitted += 1
            nxt = g.head()
            if nxt is not None:
                heapq.heappush(heads, (nxt.key, id(g), g))
        return admitted

    def slot_changed(self, slot: Slot) -> None:
        """Capacity or health of a backend changed: hand any new room to waiters right away."""
        self._dispatch_slot(slot)
        if not slot.usable:
            # Losing the last primary of a route opens its fallbacks: that is new room too.
            groups = self._groups_by_slot.get(slot.name, ())
            fallbacks = {t.slot for g in list(groups) for t in g.route.fallback}
            for other in fallbacks:
                self._dispatch_slot(other)

    def configure(
        self, config: SchedulerConfig, resolve: Callable[[Hashable], Route | None]
    ) -> None:
        """New scheduler settings; who waits gets order keys under the new rules if they differ."""
        before, self.config = self.config, replace(config)  # its own copy
        if not before.orders_like(config):
            self.reroute(resolve, rekey=True)

    def reroute(self, resolve: Callable[[Hashable], Route | None], *, rekey: bool = False) -> None:
        """Move each waiting request onto its route's new definition (after a topology change).

        A route that no longer resolves (model gone, access revoked) fails its waiters.
        `rekey` recomputes every waiter's order key too, for a scheduler change: keys of two
        schedulers are not comparable, so mixing them would invert priorities.
        """
        old_groups = list(self._groups.values())
        self._groups.clear()
        self._groups_by_slot.clear()
        self._tails = [[], [], []]  # every live waiter is enqueued again below, maybe rekeyed
        moves: list[tuple[Waiter, Route]] = []
        failed = False
        for g in old_groups:
            route = resolve(g.route.key)
            waiters = [w for _, w in g.heap if w.state == WAITING]
            for w in waiters:
                w.group = None
                self._count(w, -1)
            if route is None:
                for w in waiters:
                    w.state = FAILED
                    self._forget(w)
                    self.observer.left(w, FAILED)
                    if w.on_admit:
                        w.on_admit(w)
                failed = failed or bool(waiters)
                continue
            moves.extend((w, route) for w in waiters)
        if failed:
            self.observer.changed()
        if rekey:
            moves.sort(key=lambda move: move[0].seq)  # fair share hands out turns by arrival
            self.turns.reset()
        for w, route in moves:
            w.route = route
            if rekey:
                self._take_turn(w)
                self._keys(w)
            self._enqueue(w, rearm_deadline=False)
        self.dispatch_pass()

    def score(self, w: Waiter) -> float | None:
        """The llama-swap score a request was admitted with (serial scheduler only)."""
        return serial_score(w, self.config, self.clock) if self.config.name == "serial" else None

    # ----- views for metrics and the live queue page -------------------------------------

    @property
    def waiting(self) -> int:
        return sum(self.depth)

    def oldest_wait(self, cls: int | None = None) -> float:
        """How long the longest-waiting request (of a class) has waited; for metrics scrapes."""
        # list() copies in one step: scrapes run on another thread while the loop mutates.
        live = list(self._oldest.values())
        arrivals = [w.arrival for w in live if cls is None or w.cls == cls]
        return self.clock() - min(arrivals) if arrivals else 0.0

    def waiters(self) -> list[Waiter]:
        """Every live waiter in arrival order (for the live view; not used on the hot path)."""
        return sorted(self._oldest.values(), key=lambda w: w.seq)

    def dispatch_order(self) -> list[tuple[tuple[str, ...], list[Waiter]]]:
        """Every live waiter by the backends its route may use, in the order their slots go.

        Routes are per model and caller groups, yet all routes on the same backends compete
        for the same slots by the scheduler's order key (`_best_for`'s), so a line is the
        backends; inside it the key decides, less serial's affinity bonus (whichever backend
        frees next has it). For the live view, not the hot path.
        """
        lines: dict[tuple[str, ...], list[Waiter]] = {}
        for g in list(self._groups.values()):
            names = tuple(dict.fromkeys(s.name for s in g.route.slots()))
            lines.setdefault(names, []).extend(w for _, w in list(g.heap) if w.state == WAITING)
        return [(names, sorted(ws, key=lambda w: w.key)) for names, ws in lines.items() if ws]

    def waits_for(self, w: Waiter) -> list[str]:
        """The backends a waiter may be given, its cache-warm one first (for the live view)."""
        targets = w.route.usable_targets(w.excluded) or w.route.primary
        names = list(dict.fromkeys(t.slot.name for t in targets if t.slot.name not in w.excluded))
        if w.affinity in names:
            names.remove(w.affinity)
            names.insert(0, w.affinity)
        return names

    # ----- internals --------------------------------------------------------------------

    def _pick(self, route: Route, w: Waiter) -> Target | None:
        """Choose a free usable target by the route's strategy."""
        targets = route.usable_targets(w.excluded)
        free = [t for t in targets if self._room(t.slot, w.cls)]
        if not free:
            return None
        if len(free) == 1:
            return free[0]
        strategy = route.strategy
        if strategy == "prefix_affinity" and w.affinity is not None:
            for t in free:
                if t.slot.name == w.affinity:
                    return t
        if strategy == "round_robin":
            route._rr += 1
            return free[route._rr % len(free)]
        # least_inflight: lowest load relative to capacity and weight; ties keep topology order.
        return min(free, key=lambda t: t.slot.inflight / (t.slot.max_inflight * t.slot.weight))

    # One process alone: its learned limits are its own (shared/queue.py posts them on Redis).
    shares_capacity = fallback = False

    async def post_capacity(self, posts: list[Any]) -> dict[str, Any] | None:
        return None

    def contended(self, slot: Slot) -> bool:
        """Does anyone wait who could use this backend now (its learned capacity binds)?"""
        return self._contended(slot)

    def _contended(self, slot: Slot) -> bool:
        """Does anyone already wait who could use this backend now? Then a newcomer takes its turn.

        A group is indexed under every slot of its route, fallbacks and retry-excluded ones
        included; those waiters cannot take the slot, so they must not hold a newcomer back.
        """
        groups = self._groups_by_slot.get(slot.name)
        return groups is not None and any(
            g.live and g.route.target_on(slot, g.excluded) is not None for g in groups
        )

    def _check_bounds(self, w: Waiter) -> None:
        """A newcomer that must wait: refused at once (429) if its estimated wait (the waiters
        of its class and above over the recent rate of admissions from the queue) exceeds its
        budget, so a caller with a short budget (X-AIplane-Max-Wait) learns it now rather than
        at its deadline; and, in a bounded queue, it waits if there is room or if it outranks
        the last waiter.

        Outranks means a strictly higher class (after `prioritize`; serial's bands are its
        classes): offsets and the scheduler's in-class order never displace anyone, so first
        come first served holds inside a class at the bound. The one displaced is the lowest
        class's last waiter in that scheduler's order, the one it would serve last: strict,
        lowest offset then most recent; fair share, lowest offset then the latest turn (the
        busiest owner's newest); serial, the lowest score (offset + aging, so the most recent
        of an offset; the affinity bonus belongs to a backend freeing, not to the waiter);
        fcfs, the latest arrival after head start; wspt, the lowest priority per prompt token,
        then the most recent; edf, the latest deadline. A retry ranks by its first arrival (and
        turn), like any waiter.
        The displaced waiter is told as a refused newcomer would be (QueueFull, Retry-After).
        A retry is not a newcomer: it re-enters without this check and displaces nobody.
        Lowering `max_waiters` turns nobody away who already waits; it counts for newcomers.
        """
        cap = self.config.max_waiters
        waiting = self.waiting
        rate = self._current_rate()
        victim = None
        if 0 < cap <= waiting:
            victim = self._last_below(w.cls)
            if victim is None:
                retry = max(1.0, waiting / rate if rate > 0 else 1.0)
                self._refuse(w, QueueFull(f"the queue is full ({waiting} waiting)", retry))
        budget = w.deadline - w.arrival
        estimate = self.estimated_wait(w)
        if estimate is not None and estimate > budget:
            # Checked before anyone is displaced: a newcomer that will not wait frees no room.
            self._refuse(
                w,
                QueueFull(
                    f"the estimated wait ({_secs(estimate)}) exceeds the budget "
                    f"({_secs(budget)})",
                    max(1.0, estimate),
                ),
            )
        if victim is not None:
            retry = max(1.0, waiting / rate if rate > 0 else 1.0)
            victim.refusal = QueueFull(
                f"a higher-class request took its place in the full queue ({waiting} waiting)",
                retry,
            )
            self._remove(victim, REJECTED)

    def _refuse(self, w: Waiter, refusal: QueueFull) -> NoReturn:
        w.state = REJECTED
        w.refusal = refusal
        self.observer.left(w, REJECTED)
        raise refusal

    def _last_below(self, cls: int) -> Waiter | None:
        """The last waiter, in the scheduler's order, of the lowest class below `cls`."""
        for c in range(cls):
            if not self.depth[c]:
                continue
            tail = self._tails[c]
            while tail:
                w = tail[0][-1]
                if w.state == WAITING:
                    return w
                heapq.heappop(tail)
        return None

    def estimated_wait(self, w: Waiter, ahead: int | None = None) -> float | None:
        """Seconds until `w` (arriving, or with `ahead` waiters before it) has a slot: the
        waiters of its class and above that its backends would serve first, over the rate at
        which those backends have taken requests lately. None while that rate is unknown.

        Of the waiters, those of the backend with the most count (a waiter that may use two
        of them is one, not two); the rates add up. So the estimate errs short, never long:
        it turns away only a request whose wait is plainly beyond its budget.
        """
        slots = [t.slot for t in w.route.usable_targets(w.excluded)]
        now = self.clock()
        rate = sum(self.pace.rate(slot.name, now) for slot in slots)
        if rate <= 0:
            return None
        if ahead is None:
            ahead = max((self._ahead_at(slot, w.cls) for slot in slots), default=0)
        return ahead / rate

    def _ahead_at(self, slot: Slot, cls: int) -> int:
        """Waiters of class `cls` and above that could take this backend's next free slot."""
        groups = self._groups_by_slot.get(slot.name, ())
        return sum(
            sum(g.by_class[cls:])
            for g in groups
            if g.live and g.route.target_on(slot, g.excluded) is not None
        )

    def _current_rate(self) -> float:
        """Admissions from the queue per second over the last 64 (0 when unknown)."""
        recent = self._recent
        if len(recent) < 2:
            return 0.0
        span = self.clock() - recent[0]
        return len(recent) / span if span > 0 else 0.0

    def _group_for(self, w: Waiter) -> Group:
        gkey = (w.route.key, w.excluded, w.affinity)
        g = self._groups.get(gkey)
        if g is None:
            g = Group(gkey, w.route, w.excluded, w.affinity)
            self._groups[gkey] = g
            for slot in w.route.slots():
                self._groups_by_slot.setdefault(slot.name, set()).add(g)
        return g

    def _enqueue(self, w: Waiter, *, rearm_deadline: bool = True) -> None:
        g = self._group_for(w)
        w.group = g
        w.state = WAITING
        heapq.heappush(g.heap, (w.key, w))
        k0, k1, k2 = w.key
        heapq.heappush(self._tails[w.cls], ((-k0, -k1, -k2), next(self._tie), w))
        if self.config.name == "serial":
            heapq.heappush(g.plain, (w.plain_key, w))
            if g.warm_bonus is not None:
                heapq.heappush(g.warm, (warm_key(w, g.warm_bonus), w))
        self._count(w, +1)
        if rearm_deadline and w.deadline != float("inf"):
            heapq.heappush(self._deadlines, (w.deadline, w.seq, id(w), w))
        self.observer.changed()

    def _count(self, w: Waiter, delta: int) -> None:
        g = w.group
        if g is not None:
            g.live += delta
            g.by_class[w.cls] += delta
            if g.live == 0 and delta < 0:
                self._drop_group(g)
        self.depth[w.cls] += delta
        if delta > 0:
            self._oldest[w.seq] = w
            return
        self._oldest.pop(w.seq, None)
        tail = self._tails[w.cls]
        if len(tail) > 2 * self.depth[w.cls] + 64:
            # Like a group's heap: admitted and departed waiters would otherwise stay here for
            # good, since only a full queue ever looks at the top. `w` is leaving too.
            self._tails[w.cls] = [e for e in tail if e[-1].state == WAITING and e[-1] is not w]
            heapq.heapify(self._tails[w.cls])

    def _drop_group(self, g: Group) -> None:
        self._groups.pop(g.gkey, None)
        for slot in g.route.slots():
            groups = self._groups_by_slot.get(slot.name)
            if groups is not None:
                groups.discard(g)
                if not groups:
                    del self._groups_by_slot[slot.name]

    def _remove(self, w: Waiter, outcome: str) -> None:
        self._count(w, -1)
        w.state = outcome
        self._forget(w)
        g = w.group
        if g is not None and g.live and len(g.heap) > 2 * g.live + 64:
            # Leavers are dropped lazily when they reach the top; under sustained overload a
            # busy group's top may never be a leaver, so sweep them out once they dominate.
            g.heap = [e for e in g.heap if e[1].state == WAITING]
            heapq.heapify(g.heap)
            if g.plain:
                g.plain = [e for e in g.plain if e[1].state == WAITING]
                heapq.heapify(g.plain)
            if g.warm:
                g.warm = [e for e in g.warm if e[1].state == WAITING]
                heapq.heapify(g.warm)
        self.observer.left(w, outcome)
        self.observer.changed()
        if w.on_admit is not None:
            w.on_admit(w)

    def _admit(self, w: Waiter, target: Target, reordered: bool, *, immediate: bool) -> None:
        if w.state == WAITING and w.group is not None:
            self._count(w, -1)
        w.state = ADMITTED
        w.admitted_at = w.arrival if immediate else self.clock()
        self.turns.served(w)
        target.slot.inflight += 1
        w.acquired = Acquired(target=target, waiter=w, queue=self)
        self.pace.took(target.slot.name, w.admitted_at if not immediate else self.clock())
        if not immediate:
            self._recent.append(w.admitted_at)
        self.observer.admitted(w, immediate=immediate, reordered=reordered)
        if not immediate:
            self.observer.changed()
        if w.on_admit is not None:
            w.on_admit(w)

    def _on_release(self, acquired: Acquired) -> None:
        slot = acquired.target.slot
        slot.inflight -= 1
        self._dispatch_slot(slot)

    def _room(self, slot: Slot, cls: int = HIGH) -> bool:
        """May this process start one more request of class `cls` on the backend? (Shared
        admission's fallback narrows it to this process's share.)"""
        return slot.usable and slot.inflight < slot.max_inflight - self.reserved(slot, cls)

    def reserved(self, slot: Slot, cls: int) -> int:
        """Of the backend's limit, the slots kept from class `cls` now: its reserved headroom,
        while a request of a higher class came for the backend within `headroom_secs` (work-
        conserving: with none lately, the class may take them all). Every class keeps at least
        one slot, so a small (or a learned, growing) limit still serves all of them."""
        keep = slot.headroom[cls]
        if keep <= 0 or not self.config.prioritize:
            return 0
        since = self.clock() - self.config.headroom_secs
        if not self.pace.higher_came_since(slot.name, cls, since):
            return 0
        return min(keep, slot.max_inflight - 1)

    def _came_for(self, w: Waiter) -> None:
        """A request of class w.cls came for these backends: their lower classes' headroom
        is held for it from now."""
        now = self.clock()
        for t in w.route.usable_targets(w.excluded):
            self.pace.came(t.slot.name, w.cls, now)

    def _forget(self, w: Waiter) -> None:
        """A waiter left the line without a slot: nothing to do here (shared admission
        takes it out of the shared line too)."""

    def _dispatch_slot(self, slot: Slot) -> None:
        """Give each free slot on this backend to the best waiter that can use it."""
        while self._room(slot):
            choice = self._best_for(slot)
            if choice is None or not self._room(slot, choice[0].cls):
                return  # nobody, or the best is of a class the rest is kept from
            self._admit(*choice, immediate=False)

    def _best_for(self, slot: Slot) -> tuple[Waiter, Target, bool] | None:
        """Who a free slot on this backend goes to, its target there, and whether that is a reorder.

        The one place a waiter is chosen for a slot, on release and in the periodic pass alike,
        so the serial scheduler's affinity bonus (for the backend that is free) counts in both.
        """
        groups = self._groups_by_slot.get(slot.name)
        if groups is None:
            return None
        serial = self.config.name == "serial"
        bonus = affinity_bonus(self.config)
        best: Waiter | None = None
        best_key: tuple[float, float, int] | None = None
        best_target: Target | None = None
        plain_best: Waiter | None = None
        for g in groups:
            warm = bonus and g.affinity == slot.name
            h = g.warm_head(bonus) if warm else g.head()
            if h is None:
                continue
            target = g.route.target_on(slot, g.excluded)
            if target is None:
                continue
            key = warm_key(h, bonus) if warm else h.key
            if best_key is None or key < best_key:
                best, best_key, best_target = h, key, target
            if serial:
                p = g.plain_head()
                if p is not None and (plain_best is None or p.plain_key < plain_best.plain_key):
                    plain_best = p
        if best is None or best_target is None:
            return None
        # Only aging and affinity (serial) count as a reorder; the other schedulers' keys are
        # their policy, not a departure from it.
        return best, best_target, serial and plain_best is not None and best is not plain_best


def _secs(secs: float) -> str:
    return f"{secs:.0f} s" if secs >= 10 or secs == round(secs) else f"{secs:.1f} s"
