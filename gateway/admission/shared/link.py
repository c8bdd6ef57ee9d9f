"""A gateway process's link to Redis: grant wake-ups, others' changes, leases, outage and rejoin."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import redis

from gateway.admission.shared.queue import SharedAdmissionQueue
from gateway.core.redis_clients import (
    AWAY,
    PUBSUB_QUIET_SECS,
    REDIS_TIMEOUT,
    answered,
    connect_pubsub,
)

log = logging.getLogger("aiplane.gateway")

REJOIN_SECS = 0.5  # how often a process in fallback tries Redis again
RECONNECT_SECS = 0.2


class SharedLink:
    """Runs on the runtime's loop: `listen` (pub/sub) and `keep` (renewal, rejoin) are its jobs."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        queue: SharedAdmissionQueue | None,
        apply_change: Callable[[str], Awaitable[None]],
        channel: str,
        parse: Callable[[bytes], str | None],
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.queue = queue
        self.apply_change = apply_change
        # Where other processes announce their changes, and what kind a message there is
        # (None: this process's own, or not one): the wiring's, since the change kinds are.
        self.channel = channel
        self.parse = parse
        self.listening = asyncio.Event()  # set while subscribed (tests wait for it)
        self.quiet_secs = PUBSUB_QUIET_SECS
        # Changes being applied, by kind, and the kinds announced again meanwhile: a reload
        # reads the database, and grant wake-ups on the same subscription must not wait for it.
        self.applying: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()

    async def listen(self) -> None:
        """Take grants when woken, apply changes other processes announce; reconnect forever."""
        channels = [self.channel]
        if self.queue is not None:
            channels.append(f"{self.prefix}grant:{self.queue.process}")
        while True:
            client = connect_pubsub(self.url)
            pubsub = client.pubsub()  # subscribe confirmations count as signs of life too
            try:
                await self._subscribe(pubsub, channels)
                await self._hear(pubsub, channels[0].encode())
            except asyncio.CancelledError:
                for task in list(self.applying.values()):
                    task.cancel()  # the runtime stops: so do its reloads
                raise
            except AWAY as err:
                self.listening.clear()
                log.debug("Redis subscription lost: %s", err)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(RECONNECT_SECS)

    async def _subscribe(self, pubsub: Any, channels: list[str]) -> None:
        await answered(asyncio.wait_for(pubsub.subscribe(*channels), REDIS_TIMEOUT))
        self.listening.set()
        if self.queue is not None:
            self.queue.take_grants()  # whatever was granted while nobody listened

    async def _hear(self, pubsub: Any, changes: bytes) -> None:
        """Every message of the subscription until it is lost (which raises)."""
        pinged = False
        while True:
            # A connection can die without a word (a host gone, a half-open socket):
            # after a quiet while ask, and give up on it if the next while stays quiet.
            message = await answered(pubsub.get_message(timeout=self.quiet_secs))
            if message is None:
                if pinged:
                    raise redis.ConnectionError("the subscription stopped answering")
                await answered(asyncio.wait_for(pubsub.ping(), REDIS_TIMEOUT))
                pinged = True
                continue
            pinged = False
            self._dispatch(message, changes)

    def _dispatch(self, message: dict[str, Any], changes: bytes) -> None:
        """A change another process announced is applied; a grant wake-up takes the grants."""
        if message.get("type") != "message":
            return
        if message["channel"] == changes:
            kind = self.parse(message["data"])
            if kind is not None:
                self._apply_soon(kind)
        elif self.queue is not None:
            self.queue.take_grants()

    def _apply_soon(self, kind: str) -> None:
        """Apply beside the listener; announcements during a run of the same kind make one
        more run after it (that run may have read the database before their commit)."""
        if kind in self.applying:
            self._again.add(kind)
            return
        task = self.applying[kind] = asyncio.ensure_future(self._apply(kind))
        # Not a `finally` in _apply: a task cancelled before its first step never runs one,
        # and its kind would then never be applied again.
        task.add_done_callback(lambda done: self._applied(kind, done))

    def _applied(self, kind: str, task: asyncio.Future[None]) -> None:
        if self.applying.get(kind) is task:
            del self.applying[kind]

    async def _apply(self, kind: str) -> None:
        while True:
            self._again.discard(kind)
            try:
                await self.apply_change(kind)
            except Exception:
                log.exception("could not apply a %s change from another process", kind)
            if kind not in self._again:
                return

    async def keep(self) -> None:
        """Renew this process's liveness and leases; in fallback, try to rejoin."""
        queue = self.queue
        if queue is None:
            return
        while True:
            if queue.fallback:
                await asyncio.sleep(REJOIN_SECS)
                try:
                    await queue.rejoin_async()
                except Exception:
                    log.exception("could not rejoin shared admission")
                continue
            await asyncio.sleep(queue.renew_secs / 2)
            try:
                queue.renew()
            except Exception:
                log.exception("could not renew the shared admission leases")
