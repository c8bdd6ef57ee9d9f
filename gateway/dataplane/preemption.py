"""Preemption before the first byte: a higher class that must wait takes a lower one's slot while
that one is still in prefill.

With `gateway.preemption` on, a waiter of class medium or high that finds every backend it may
use full looks there for a stream of a lower class whose first event has not come (the engine is
still reading its prompt, or queueing it) and cuts it: the engine connection is reset, so the
engine drops it; its slot goes to the best waiter, which is the higher one (or one above it);
the cut request goes back into line at the head of its class (its arrival and turn kept) with
`x-aiplane-preempted: 1` on its answer, and its client sees only a longer wait. Whole answers
are never cut (their first byte is their end, so the gateway cannot tell prefill from decoding),
a request is cut at most once, and one waiter cuts at most one request, chosen from the lowest
class and, within it, the most recently dispatched (the least prefill thrown away).

One process decides for its own requests: in a group on Redis, a high waiter at one process does
not cut a low request running at another.
"""

from __future__ import annotations

import asyncio
import logging

from gateway.admission.types import Waiter
from gateway.core.classes import LOW
from gateway.dataplane.relay import Relay
from gateway.dataplane.watchdog import Watchdog

log = logging.getLogger("aiplane.gateway")

MAX_PREEMPTIONS = 1  # per request: a low request cut again and again would starve
PREEMPTED_HEADER = (b"x-aiplane-preempted", b"1")


def preempt_for(w: Waiter) -> Relay | None:
    """Cut one lower-class stream in prefill on a backend `w` may use; the one cut, if any."""
    if w.cls == LOW:
        return None
    names = {t.slot.name for t in w.route.usable_targets(w.excluded)}
    victims = [
        r
        for r in Watchdog.of(asyncio.get_running_loop()).relays
        if isinstance(r, Relay) and r.upstream.name in names and r.preemptible_by(w.cls)
    ]
    if not victims:
        return None
    victim = min(victims, key=lambda r: (r.acquired.waiter.cls, -r.dispatched))
    log.info(
        "preempting a class %d request in prefill on %s for a class %d one",
        victim.acquired.waiter.cls,
        victim.upstream.name,
        w.cls,
    )
    victim.preempt()
    return victim
