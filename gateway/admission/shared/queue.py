"""Shared admission: one line and exact backend limits over every gateway process, on Redis.

`SharedAdmissionQueue` is the process's `AdmissionQueue` (its waiters, their order keys, the
observers, deadlines and bounds stay local, the same code) with the shared part moved into Redis:
per backend a set of slot leases and a line of waiters ordered by the same keys, every change one
Lua script (gateway/admission/shared/scripts.py). A slot freed in any process goes to the best
waiter over all of them; a grant to another process reaches it by pub/sub (and, should that be lost,
by the 250 ms pass). On the gateway's loop the scripts never block it: `_call` queues each one for a
writer task that sends whatever piled up in one pipeline and applies the answers in order
(`use_async`, gateway/admission/shared/calls.py). Without an async client (tests driving the core
step by step) `_call` runs the script at once and applies its answer, so the core stays a plain
function of its inputs.

Faults:
- A process that dies stops renewing: its leases lapse within the lease (`AIPLANE_REDIS_LEASE_SECS`,
  3 s by default) and the next renewal
  of any other process reaps its waiters.
- Redis unreachable, or answering with errors (READONLY from a replica, OOM): the process
  falls back to local admission with its share of each backend's max_inflight (max_inflight
  split over the processes last seen alive, so their sum stays within it; for the outage's
  first lease no more than the slots it held itself as Redis went away), says so in the log
  and in `aiplane_shared_admission_fallback`, and rejoins when Redis takes a write again,
  listing its running requests and waiters anew and releasing the requests that ended meanwhile.
- A process that stalls longer than its lease has its leases reaped and their slots granted to
  others; its next renewal finds them gone, warns, counts them (`leases_lost`) and lists them
  again, so Redis counts what runs and grants nothing more there until enough have ended.
- Redis restarted empty: the first renewal that reaches it (from a process that knew it, or one
  that admitted alone meanwhile) sets a short settling time in which nothing is granted, and
  every live process lists its leases and waiters again within it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import redis

from gateway.admission.queue import AdmissionQueue
from gateway.admission.schedulers import SchedulerConfig, affinity_bonus
from gateway.admission.shared.calls import Down, ScriptCalls, Then
from gateway.admission.shared.capacity_board import Post, Posted, board_args, read_board
from gateway.admission.shared.keys import (
    Arrivals,
    capacities,
    encode_key,
    read_stats,
    target_named,
    target_on_backend,
    waiter_info,
)
from gateway.admission.types import (
    EXPIRED,
    WAITING,
    Acquired,
    Clock,
    Observer,
    Route,
    Slot,
    Target,
    Waiter,
    warm_key,
)
from gateway.core.classes import HIGH
from gateway.core.redis_clients import AWAY, REDIS_TIMEOUT, answered, connect_async

log = logging.getLogger("aiplane.gateway")

LEASE_SECS = 3.0  # a dead process's slots come back within this; renewed every third of it

SETTLE = 5 / 6  # after Redis lost its state, of a lease: time for every process to list its own

SEEN_SECS = 30.0  # the fallback share counts every process seen alive within this

Grants = list[tuple[str, str]]

# Every ACQUIRE answer the script can give; anything else means Redis is not answering right.
ANSWERS = (b"now", b"wait", b"busy", b"reset")


class RedisDown(Exception):
    """Redis did not answer; the queue is now in local fallback."""


class SharedAdmissionQueue(AdmissionQueue):
    """The admission queue of one process in a group that shares its line on Redis."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str = "aiplane:",
        process: str | None = None,
        clock: Clock = time.time,
        config: SchedulerConfig | None = None,
        observer: Observer | None = None,
        lease_secs: float = LEASE_SECS,
    ) -> None:
        super().__init__(clock=clock, config=config, observer=observer)
        self.client = client
        self.prefix = prefix
        self.process = process or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._seq = Arrivals()  # type: ignore[assignment]  # an iterator of ints, as count is
        self._refs = itertools.count()
        self.lease_secs = lease_secs
        self.renew_secs = lease_secs / 3  # two renewals may go unanswered before a lease lapses
        self._ttl = str(int(lease_secs * 1000))
        self._by_ref: dict[str, Waiter] = {}  # this process's waiters in the shared line
        self._leases: dict[str, Acquired] = {}  # this process's running requests
        # Requests that ended while Redis was away, ref -> backend: released on rejoin, since
        # Redis may have kept their leases through a short outage.
        self._unreleased: dict[str, str] = {}
        self._known: dict[str, Slot] = {}  # backends its waiters asked for, by name
        self._listed: dict[Hashable, tuple[str, ...]] = {}  # group -> backends it is listed under
        self._calls = ScriptCalls(client, on_away=self._fall_back, away=lambda: self.fallback)
        self._scripts = self._calls.scripts
        self.aclient: Any = None  # set by `use_async` on the request path
        self.fallback = False
        self.fallbacks = 0  # times this process fell back to local admission
        self.leases_lost = 0  # leases of running requests found lapsed on renewal
        self._alone: set[str] = set()  # running requests admitted in fallback, not yet listed
        self.boot = ""
        # Until Redis has been seen: the processes expected (serve --workers sets it) and no
        # seat, so a process that starts during an outage takes only the floor of its share.
        self.processes = max(1, int(os.environ.get("AIPLANE_SHARED_PROCESSES", "1") or 1))
        self.seat = -1  # its number in Redis, unique among the live processes, kept for its life
        self._counted_all = False  # its last renewal counted every process seen lately
        self._counted = True  # every other process had renewed since it joined (see share)
        self._seen: list[tuple[float, int]] = []
        self.on_fallback: Callable[[bool], None] | None = None
        # When the outage began, and what this process ran on each backend then (see _room).
        self._fell_back_at = float("-inf")
        self._held_then: Counter[str] = Counter()
        self._renewed = float("-inf")
        self._listed_bonus = self._bonus()
        self.renew()  # at start-up, off the loop; unanswered, it starts in fallback and rejoins

    # ----- calling Redis ---------------------------------------------------------------------

    def _call(self, name: str, args: list[Any], then: Then, down: Down) -> None:
        """Run one script, then apply its answer with `then`, or `down` if Redis is away.

        With the async client the script joins the writer's outbox and this returns at once;
        scripts run in the order they were called, so a cancel never overtakes its enqueue.
        """
        if self.fallback:
            down()
            return
        if name != "RENEW" and time.monotonic() - self._renewed > self.renew_secs:
            self.renew()  # busy processes renew on the way; the runtime's loop covers idle ones
        self._calls.call(name, [self.prefix, self.process, self._ttl, *args], then, down)

    async def settled(self) -> None:
        """Wait until every script called so far has been answered (tests, shutdown)."""
        await self._calls.settled()

    async def close(self) -> None:
        """Send what is still queued, then let go of the connections (see ScriptCalls)."""
        await self._calls.close()

    def _fall_back(self, err: Exception) -> None:
        if self.fallback:
            return
        self.fallback = True
        self.fallbacks += 1
        self._fell_back_at = time.monotonic()
        self._held_then = Counter(acquired.backend for acquired in self._leases.values())
        log.warning(
            "Redis is unreachable (%s): admitting locally with this process's share of each "
            "backend (1/%d) until it answers again",
            err,
            self.processes,
        )
        if self.on_fallback is not None:
            self.on_fallback(True)

    def _room(self, slot: Slot, cls: int = HIGH) -> bool:
        # Shared, the scripts decide on Redis (reserved headroom is this process's alone: not
        # yet kept over the group); in an outage, this process's share of the backend.
        if not self.fallback:
            return slot.free
        return slot.usable and slot.inflight < self._fallback_limit(slot)

    def _fallback_limit(self, slot: Slot) -> int:
        """Its share, once the outage is a lease old. Before, the requests admitted through
        Redis may still run, and one process may hold more than its share of them while the
        others, not knowing, would fill theirs beside it (5 on an engine of 3, for three): so
        each keeps to the slots it held itself as Redis went away (its share at most), which
        add up to what Redis had granted. A lease is how long the group waits anyway for
        requests nobody speaks for (a dead process's), and short requests end well within it.
        Alone in the group, it has nobody to wait for."""
        share = self.share(slot.max_inflight)
        if self.processes <= 1 or time.monotonic() - self._fell_back_at >= self.lease_secs:
            return share
        return min(share, self._held_then[slot.name])

    def share(self, max_inflight: int) -> int:
        """This process's part of a backend's limit while Redis is away: the parts of the
        processes last seen alive add up to max_inflight at most, each process's view as of its
        own last renewal. The remainder goes by seat, not by rank: ranks from renewals on either
        side of a leave and a join can coincide, seats of live processes do not (one that
        stalled past its liveness and was reaped may find its seat taken at its next renewal;
        until then it is the stall of the README, beyond the limit anyway). A process that
        joined after another's last renewal takes nothing: that one's share was taken over the
        processes before it, and those add up to max_inflight already. A seat left by a process
        that died may leave the remainder to nobody until the next join takes it: at most,
        not exactly, max_inflight."""
        if not self._counted:
            return 0
        n = max(1, self.processes)
        bonus = self._counted_all and 0 <= self.seat < max_inflight % n
        return max_inflight // n + (1 if bonus else 0)

    # ----- waiters ---------------------------------------------------------------------------

    def waiter(self, route: Route, **kw: Any) -> Waiter:
        w = super().waiter(route, **kw)
        for slot in route.slots():
            self._known[slot.name] = slot
        w.ref = f"{self.process}:{next(self._refs)}"
        return w

    def retry_waiter(self, old: Waiter, failed_backend: str | None) -> Waiter:
        w = super().retry_waiter(old, failed_backend)
        w.ref = f"{self.process}:{next(self._refs)}"
        return w

    def _bonus(self) -> float:
        return affinity_bonus(self.config)

    def _check_bonus(self) -> None:
        """A changed affinity bonus changes the warm members: list those waiters again."""
        bonus = self._bonus()
        if bonus != self._listed_bonus:
            self._listed_bonus = bonus
            self._listed.clear()
            self._relist()

    def _members(self, w: Waiter, targets: tuple[Target, ...]) -> list[object]:
        bonus = self._bonus()
        args: list[object] = [len(targets)]
        for t in targets:
            warm = bonus and w.affinity == t.slot.name
            key = warm_key(w, bonus) if warm else w.key
            args += [t.slot.name, t.slot.max_inflight, encode_key(key, w.ref)]
        return args

    # ----- the synchronous core --------------------------------------------------------------

    def _acquire_args(self, w: Waiter, targets: tuple[Target, ...]) -> list[object]:
        route = w.route
        route._rr += 1
        args: list[object] = [w.ref, route.strategy, w.affinity or "", route._rr, len(targets)]
        for t in targets:
            args += [t.slot.name, t.slot.max_inflight, t.slot.weight]
        return args

    def submit(self, w: Waiter) -> Acquired | None:
        if self.fallback:
            return super().submit(w)
        if self.aclient is not None:
            raise RuntimeError("with the async client, submit through submit_async")
        targets = w.route.usable_targets(w.excluded)
        answers: list[Any] = [[b"busy"]]
        down: list[bool] = []
        for _ in range(2 if targets else 0):  # a second time after Redis lost its state
            self._call(
                "ACQUIRE",
                self._acquire_args(w, targets),
                partial(self._answered, answers.append, partial(down.append, True)),
                partial(down.append, True),
            )
            if down:
                return super().submit(w)
            if answers[-1][0] != b"reset":
                break
            self.renew()
        return self._submitted(w, targets, answers[-1])

    async def submit_async(self, w: Waiter) -> Acquired | None:
        """`submit` with its round trip awaited (the request path): while Redis answers, the
        loop serves the other requests instead of waiting with them."""
        targets = w.route.usable_targets(w.excluded)
        if self.aclient is None:
            return self.submit(w)
        if self.fallback:
            return super().submit(w)
        if not targets:
            return self._submitted(w, targets, [b"busy"])
        loop = asyncio.get_running_loop()
        answer: Any = [b"reset"]
        for _ in range(2):  # a second time after Redis lost its state
            asked: asyncio.Future[Any] = loop.create_future()
            self._call(
                "ACQUIRE",
                self._acquire_args(w, targets),
                partial(self._answered, partial(self._acquired, asked, w), partial(_down, asked)),
                partial(_down, asked),
            )
            try:
                answer = await asked
            except RedisDown:
                return super().submit(w)
            except asyncio.CancelledError:
                # Cancelled after Redis answered but before this resumed: a slot it was given
                # goes back now (one answered later goes back in `_acquired`).
                if asked.done() and not asked.cancelled() and asked.exception() is None:
                    late = asked.result()
                    if late[0] == b"now":
                        self._give_back(w.ref, late[1].decode(), None)
                raise
            if answer[0] != b"reset":
                break
            self.renew()
        if self.fallback and answer[0] != b"now":
            return super().submit(w)
        # Even if Redis went away since it answered: the slot it gave is this request's (no
        # give-back could reach Redis now), and the lease is listed again on rejoin.
        return self._submitted(w, targets, answer)

    def _answered(self, then: Then, down: Down, answer: Any) -> None:
        """An ACQUIRE answer, unless it is none the script gives: then Redis is away."""
        if isinstance(answer, list) and answer and answer[0] in ANSWERS:
            then(answer)
            return
        self._fall_back(redis.ResponseError(f"ACQUIRE answered {answer!r}"))
        down()

    def _acquired(self, asked: asyncio.Future[Any], w: Waiter, answer: Any) -> None:
        if not asked.done():
            asked.set_result(answer)
        elif answer and answer[0] == b"now":
            # The caller left while Redis answered: the slot it was given goes back at once.
            self._give_back(w.ref, answer[1].decode(), None)

    def _submitted(
        self, w: Waiter, targets: tuple[Target, ...], answer: list[Any]
    ) -> Acquired | None:
        if answer[0] == b"now":
            target = target_named(targets, answer[1].decode())
            self._admit(w, target, immediate=True, reordered=False)
            return w.acquired
        if w.deadline <= self.clock() and answer[0] != b"wait":
            w.state = EXPIRED
            self.observer.left(w, EXPIRED)
            return None
        if not w.retry:
            self._check_bounds(w)
        self._enqueue(w)
        if w.state == WAITING and w.deadline <= self.clock():
            self._remove(w, EXPIRED)
        return w.acquired

    def _enqueue(self, w: Waiter, *, rearm_deadline: bool = True) -> None:
        super()._enqueue(w, rearm_deadline=rearm_deadline)
        self._by_ref[w.ref] = w
        if not self.fallback:
            # Re-enqueued by a reroute: listed again without handing out slots, since who is
            # best is only known once all are back; the reroute's pass then hands them out.
            again = not rearm_deadline
            self._index(w, "again" if again else "new", dispatch=not again)

    def _index(self, w: Waiter, mode: str, *, dispatch: bool = True) -> None:
        """List the waiter under each backend it may use now (`again`: replacing a listing it
        still has, `rebuild`: whatever Redis knows of it); with `dispatch`, free slots of those
        backends are handed out at once."""
        targets = w.route.usable_targets(w.excluded)
        if w.group is not None:
            self._listed[w.group.gkey] = tuple(t.slot.name for t in targets)
        args = [w.ref, mode, w.cls, waiter_info(w, self.waits_for(w)), "1" if dispatch else "0"]
        args += self._members(w, targets)

        def indexed(grants: Any) -> None:
            if grants and grants[0] == b"reset":
                self.renew()  # Redis lost its state: once more after listing this process
                self._call("INDEX", args, self._grant, self._dispatch_locally)
                return
            self._grant(grants)

        self._call("INDEX", args, indexed, self._dispatch_locally)

    def _relist(self, slot: Slot | None = None) -> None:
        """List again the waiters whose usable backends changed since they were listed (health,
        enablement, a lost primary opening its fallback), without handing out slots yet."""
        groups = self._groups.values() if slot is None else self._groups_by_slot.get(slot.name, ())
        for g in list(groups):
            if not g.live:
                continue
            now = tuple(t.slot.name for t in g.route.usable_targets(g.excluded))
            if self._listed.get(g.gkey) == now:
                continue
            for _, w in list(g.heap):
                if w.state == WAITING:
                    self._index(w, "again", dispatch=False)
            self._listed[g.gkey] = now

    def _forget(self, w: Waiter) -> None:
        self._by_ref.pop(w.ref, None)
        if self.fallback or not w.ref:
            return
        args = [w.ref, *capacities(w.route.slots())]
        self._call("CANCEL", args, self._grant, self._dispatch_locally)

    def _admit(self, w: Waiter, target: Target, reordered: bool, *, immediate: bool) -> None:
        self._by_ref.pop(w.ref, None)
        super()._admit(w, target, reordered, immediate=immediate)
        if w.acquired is not None:
            self._leases[w.ref] = w.acquired
            if self.fallback:
                self._alone.add(w.ref)  # Redis never had its lease: none to lose

    def _on_release(self, acquired: Acquired) -> None:
        slot = acquired.target.slot
        slot.inflight -= 1
        ref = acquired.waiter.ref
        self._leases.pop(ref, None)
        self._alone.discard(ref)
        if self.fallback:
            self._released_locally(ref, slot)
            return
        self._check_bonus()
        args = [ref, slot.name, slot.max_inflight, "1" if slot.usable else "0"]
        self._call("RELEASE", args, self._grant, partial(self._released_locally, ref, slot))

    def _released_locally(self, ref: str, slot: Slot) -> None:
        self._unreleased[ref] = slot.name
        self._dispatch_slot(slot)

    def use_async(self, url: str, timeout: float = REDIS_TIMEOUT) -> None:
        """Call every script through the writer from now on (on the runtime's loop only)."""
        self.aclient = connect_async(url, timeout)
        self._calls.use(self.aclient)

    def _grant(self, flat: list[Any]) -> None:
        """Admit this process's waiters that Redis granted a slot; give back what nobody takes."""
        if not flat or flat[0] == b"reset":
            return
        for i in range(0, len(flat) - 1, 2):
            ref, backend = flat[i].decode(), flat[i + 1].decode()
            running = self._leases.get(ref)
            if running is not None and running.backend == backend:
                # A second grant to a request already running there (a listing left over from
                # before an outage): Redis holds the one lease, which is the running request's.
                continue
            w = self._by_ref.get(ref)
            target = None
            if w is not None and w.state == WAITING:
                target = target_on_backend(w, backend)
            if target is None:
                self._give_back(ref, backend, w)
                continue
            if w is not None:
                self._admit(w, target, reordered=self._reorder(w, target.slot), immediate=False)

    def _reorder(self, w: Waiter, slot: Slot) -> bool:
        """Serial only: did aging or affinity pick `w` over a waiter of this process that
        class and arrival would have served first on this backend?"""
        if self.config.name != "serial":
            return False
        for g in self._groups_by_slot.get(slot.name, ()):
            p = g.plain_head()
            if p is not None and p is not w and p.plain_key < w.plain_key:
                if g.route.target_on(slot, g.excluded) is not None:
                    return True
        return False

    def _give_back(self, ref: str, backend: str, w: Waiter | None) -> None:
        """A grant for a waiter that left (or whose route lost that backend): free the lease."""
        slot = self._known.get(backend)
        cap = slot.max_inflight if slot is not None and slot.usable else 0

        def given_back(grants: Any) -> None:
            self._grant(grants)
            if w is not None and w.state == WAITING:
                self._index(w, "new")  # its route moved off that backend: back in line

        self._call("RELEASE", [ref, backend, cap, "1" if cap else "0"], given_back, _nothing)

    def take_grants(self) -> int:
        """Admit the grants other processes made to this one (on their pub/sub wake-up)."""
        before = len(self._leases)
        self._call("TAKE", [], self._grant, self._dispatch_locally)
        return len(self._leases) - before  # with the async client: known when it answers

    def _drop_group(self, g: Any) -> None:
        super()._drop_group(g)
        self._listed.pop(g.gkey, None)

    def _backends_waited_for(self) -> list[Slot]:
        seen: dict[str, Slot] = {}
        for g in list(self._groups.values()):
            if g.live:
                for t in g.route.usable_targets(g.excluded):
                    seen.setdefault(t.slot.name, t.slot)
        return list(seen.values())

    def dispatch_pass(self) -> int:
        self._expire_overdue()
        if self.fallback:
            return self._place_heads()
        before = len(self._leases)
        self._check_bonus()
        self._relist()
        slots = [s for s in self._backends_waited_for() if s.usable]
        self._call("TAKE", [], self._grant, self._dispatch_locally)
        if slots:
            self._call("PASS", capacities(slots), self._grant, self._dispatch_locally)
        return max(0, len(self._leases) - before)

    def _dispatch_locally(self) -> None:
        if self.fallback:
            self._place_heads()

    def slot_changed(self, slot: Slot) -> None:
        if self.fallback:
            super().slot_changed(slot)
            return
        self._relist(slot)
        slots = [s for s in {slot, *self._backends_waited_for()} if s.usable]
        if not slots:
            return
        then = partial(AdmissionQueue.slot_changed, self, slot)
        self._call("PASS", capacities(slots), self._grant, then)

    # ----- learned limits ----------------------------------------------------------------------

    shares_capacity = True  # learned limits go on the capacity board (capacity_board.py)

    async def post_capacity(self, posts: list[Post]) -> dict[str, Posted] | None:
        """Post this process's learned limits and read back the board: each backend's limit
        (its owner's), and what the group holds and waits there. None while Redis is away: the
        limits then hold where they are, each process admitting its share of them."""
        done: asyncio.Future[dict[str, Posted] | None] = asyncio.get_running_loop().create_future()

        def then(answer: Any) -> None:
            if not done.done():
                done.set_result(read_board(answer))

        def down() -> None:
            if not done.done():
                done.set_result(None)

        self._call("CAPACITY", board_args(posts, int(self.lease_secs * 1000)), then, down)
        return await done

    # ----- liveness, outage and rebuild ------------------------------------------------------

    def renew(self, *, force: bool = False) -> None:
        """Say this process is alive and renew its leases; rebuild what Redis lost."""
        args: list[object] = [
            int(self.lease_secs * 1000),
            self.boot,
            int(self.lease_secs * SETTLE * 1000),
            "1" if force else "0",
            self.seat,  # asked for again should Redis have lost it (restarted empty)
            len(self._leases),
        ]
        for ref, acq in list(self._leases.items()):
            args += [acq.backend, ref]
        self._renewed = time.monotonic()
        listed = set(self._leases) if self._alone else set()
        self._call("RENEW", args, partial(self._renewed_with, force, listed), _nothing)

    def _renewed_with(self, force: bool, listed: set[str], answer: Any) -> None:
        boot, processes, seat, reset, revived, gone, counted = answer
        lost = (reset and (self.boot != "" or force)) or revived
        lapsed = [ref for ref in (r.decode() for r in gone) if ref not in self._alone]
        self._alone -= listed
        if lapsed:
            self._lost(len(lapsed))
        self.boot = boot.decode()
        # The share in an outage counts every process seen lately, not just those that have
        # listed themselves since a Redis restart: fewer would give each too large a share.
        now = time.monotonic()
        self._seen.append((now, int(processes)))
        while self._seen and self._seen[0][0] < now - SEEN_SECS:
            self._seen.pop(0)
        self.processes = max(n for _, n in self._seen)
        # Counting fewer than that (others not listed again since a restart, or gone), it takes
        # no remainder, only the floor of its share.
        self.seat = int(seat)
        self._counted_all = int(processes) >= self.processes
        self._counted = bool(counted)
        if lost:
            self._rebuild()

    def _lost(self, n: int) -> None:
        """Leases that lapsed while this process said nothing for longer than a lease (a
        stalled loop, an outage of its own): Redis may have granted their slots to others, so
        the backend may run more than its limit until these requests end. The renewal listed
        them again, so nothing more is granted there meanwhile."""
        self.leases_lost += n
        log.warning(
            "%d shared admission lease(s) of this process lapsed and were lost (it was silent "
            "for longer than the %.1f s lease): listed again, nothing more is granted on "
            "their backends until enough requests there have ended",
            n,
            self.lease_secs,
        )

    def _probe(self, client: Any) -> Any:
        """A write, not a ping: a replica (READONLY) or a full Redis (OOM) answers pings."""
        return client.set(f"{self.prefix}probe:{self.process}", "1", px=1000)

    def _rebuild(self) -> None:
        """List every waiter anew, whatever Redis still knows of it (it lost its state, or
        this process is back from an outage), without handing out slots yet."""
        for w in list(self._by_ref.values()):
            if w.state == WAITING:
                self._index(w, "rebuild", dispatch=False)

    def rejoin(self) -> bool:
        """In fallback: try Redis again; back in the shared line when it answers."""
        if not self.fallback:
            return True
        try:
            self._probe(self.client)
        except AWAY:
            return False
        self._rejoin()
        return not self.fallback

    async def rejoin_async(self) -> bool:
        """`rejoin` on the loop: the ping is awaited, the rest goes through the writer."""
        if not self.fallback:
            return True
        try:
            await answered(self._probe(self.aclient))
        except AWAY:
            return False
        self._rejoin()
        return True

    def _rejoin(self) -> None:
        self.fallback = False
        self.renew(force=True)
        if self.fallback:
            return
        self._rebuild()
        unreleased, self._unreleased = self._unreleased, {}
        for ref, backend in unreleased.items():
            self._call("RELEASE", [ref, backend, 0, "0"], self._grant, _nothing)
        log.warning("Redis answers again: admission is shared once more")
        if self.on_fallback is not None:
            self.on_fallback(False)
        self.dispatch_pass()

    # ----- views -----------------------------------------------------------------------------

    def local_waiter(self, ref: str) -> Waiter | None:
        """This process's waiter of that name, if it is still in line here."""
        return self._by_ref.get(ref)

    def shared_state(self, backends: list[str], limit: int = 500) -> dict[str, Any] | None:
        """Depth per class, in-flight per backend and the first waiters over all processes;
        None in fallback. Safe from any thread (the client's pool is)."""
        if self.fallback:
            return None
        try:
            raw = self._scripts["STATS"](
                args=[self.prefix, self.process, self._ttl, limit, len(backends), *backends]
            )
        except AWAY:
            return None
        return read_stats(raw, backends)


def _nothing() -> None:
    """Nothing to do without Redis's answer (renewal is tried again, a lease lapses)."""


def _down(asked: asyncio.Future[Any]) -> None:
    if not asked.done():
        asked.set_exception(RedisDown())
