"""Claims on stored Responses state kept on Redis (AIPLANE_REDIS_URL), for every process.

One key per id, `<prefix>owner:<kind>:<id>`, holding the backend and owner of its claim (or "!"
once two claims disagreed), expiring CLAIM_SECS after its last claim. A claim is one Lua step,
so two processes claiming the same id at once cannot both win.

This process also keeps every claim it makes in memory: while Redis is away a claim is kept
here alone (with a warning) and found here. An id this process does not know while Redis cannot
answer gets the request a 503 to retry, never another caller's state.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from gateway.core.lua import script
from gateway.core.redis_clients import AWAY, answered
from gateway.dialects.stored_state import CLAIM_SECS, Claim, MemoryOwners, OwnersAway

log = logging.getLogger("aiplane.gateway")

# KEYS[1] the id's key. ARGV: the claim, its lifetime (s). Returns 1 kept, 0 disowned.
CLAIM = script(__file__, "claim")


class SharedOwners:
    """Claims in Redis for all processes, and in this process's memory."""

    def __init__(self, client: Any, *, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.local = MemoryOwners()
        self._claim = client.register_script(CLAIM)
        self._warned = False
        self._sending: set[asyncio.Task[None]] = set()

    def _key(self, kind: str, ident: str) -> str:
        return f"{self.prefix}owner:{kind}:{ident}"

    def claim(self, kind: str, ident: str, claim: Claim) -> asyncio.Task[None]:
        """Kept here at once; in Redis by a task of its own, so that a request cut short
        before it waited for the claim still leaves it made."""
        self.local.claim(kind, ident, claim)
        task = asyncio.ensure_future(self._send(kind, ident, claim))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        return task

    async def _send(self, kind: str, ident: str, claim: Claim) -> None:
        try:
            kept = await answered(
                self._claim(keys=[self._key(kind, ident)], args=[claim.encode(), int(CLAIM_SECS)])
            )
        except AWAY as err:
            if not self._warned:
                self._warned = True
                log.warning(
                    "Redis is away (%s): stored Responses state is kept by this process alone",
                    type(err).__name__,
                )
            return
        self._warned = False
        if not kept:
            # Another process's claim disagrees: nobody's, here too.
            self.local.claim(kind, ident, Claim("!", "!"))

    async def find(self, kind: str, ident: str) -> Claim | None:
        # Redis first: another process may have seen the id claimed again since (then it is
        # nobody's); this process's memory answers only while Redis cannot.
        try:
            held = await answered(self.client.get(self._key(kind, ident)))
        except AWAY:
            if self.local.known(kind, ident):
                return self.local.find_now(kind, ident)
            raise OwnersAway(
                "The gateway cannot tell who owns stored responses right now; try again.",
                retry_after=2,
            ) from None
        if held is None:
            # Claimed here while Redis was away (or lost its data): this process's word.
            return self.local.find_now(kind, ident)
        return Claim.decode(held.decode() if isinstance(held, bytes) else str(held))

    async def aclose(self) -> None:
        if self._sending:
            await asyncio.wait(self._sending, timeout=2.0)
        await self.client.aclose()
