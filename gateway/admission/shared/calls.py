"""ScriptCalls: shared admission's scripts run in the order they were called, pipelined.

On the gateway's loop a call never waits for Redis: it joins an outbox that one writer task
sends in a pipeline (one round trip for whatever piled up meanwhile), applying the answers in
order. Without an async client (tests driving the queue's core step by step) a call runs at once
and its answer is applied before it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import redis
from redis.exceptions import NoScriptError

from gateway.admission.shared import scripts as shared_lua
from gateway.core.redis_clients import AWAY, REDIS_TIMEOUT, answered

log = logging.getLogger("aiplane.gateway")

SCRIPTS = ("ACQUIRE", "INDEX", "CANCEL", "RELEASE", "PASS", "TAKE", "RENEW", "STATS", "CAPACITY")

Then = Callable[[Any], None]  # what to do with a script's answer

Down = Callable[[], None]  # what to do instead when Redis does not answer

Call = tuple[str, list[Any], Then, Down]


class ScriptCalls:
    """The scripts of one queue, registered on its client, and the writer that sends them.

    `on_away` is told of an outage (the queue falls back); `away` says whether it is in one,
    and then what is still queued is not sent: each of those calls' `down` runs instead.
    """

    def __init__(
        self,
        client: redis.Redis,
        *,
        on_away: Callable[[Exception], None],
        away: Callable[[], bool],
    ) -> None:
        self.scripts = {name: client.register_script(getattr(shared_lua, name)) for name in SCRIPTS}
        self.on_away = on_away
        self.away = away
        self.aclient: Any = None  # set by `use` on the request path
        # Scripts waiting for the writer, in the order they were called (async client only).
        self._outbox: list[Call] = []
        self._writer: asyncio.Task[None] | None = None

    def use(self, aclient: Any) -> None:
        """Send every call through the writer, on this client, from now on."""
        self.aclient = aclient

    def call(self, name: str, call: list[Any], then: Then, down: Down) -> None:
        """Run one script with its whole ARGV `call`, then apply its answer with `then`, or
        `down` if Redis is away; with the async client this returns before Redis answers."""
        if self.aclient is None:
            try:
                answer = self.scripts[name](args=call)
            except AWAY as err:
                self.on_away(err)
                down()
                return
            then(answer)
            return
        self._outbox.append((name, call, then, down))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        """Send the outbox in pipelines (one round trip for all that piled up meanwhile) and
        apply the answers in order; on an outage, fall back and let every pending call know."""
        try:
            while self._outbox and not self.away():
                batch, self._outbox = self._outbox, []
                try:
                    answers = await answered(self._send(batch))
                except AWAY as err:
                    self.on_away(err)
                    self._outbox[:0] = batch
                    break
                for (name, _, then, _), answer in zip(batch, answers, strict=True):
                    try:
                        then(answer)
                    except Exception:
                        log.exception("could not apply the answer of shared admission's %s", name)
        finally:
            self._writer = None
            pending, self._outbox = self._outbox, []
            for name, _, _, down in pending:
                try:
                    down()
                except Exception:
                    log.exception("could not fall back from shared admission's %s", name)

    async def _send(self, batch: list[Call]) -> list[Any]:
        answers = await self._pipeline(batch)
        missing = [i for i, a in enumerate(answers) if isinstance(a, NoScriptError)]
        if missing:
            # Redis restarted and lost its script cache: load them and run those calls again.
            for name in SCRIPTS:
                await self.aclient.script_load(getattr(shared_lua, name))
            again = await self._pipeline([batch[i] for i in missing])
            for i, answer in zip(missing, again, strict=True):
                answers[i] = answer
        for answer in answers:
            if isinstance(answer, Exception):
                raise answer  # READONLY, OOM and the like: Redis is away as much as when silent
        return answers

    async def _pipeline(self, batch: list[Call]) -> list[Any]:
        if len(batch) == 1:
            # Alone (a quiet gateway): a plain call costs less than a pipeline of one.
            name, call, _, _ = batch[0]
            try:
                return [await self.aclient.evalsha(self.scripts[name].sha, 0, *call)]
            except redis.ResponseError as err:  # no script, or the script failed: as in a batch
                return [err]
        pipe = self.aclient.pipeline(transaction=False)
        for name, call, _, _ in batch:
            pipe.evalsha(self.scripts[name].sha, 0, *call)
        return list(await pipe.execute(raise_on_error=False))

    async def settled(self) -> None:
        """Wait until every script called so far has been answered (tests, shutdown)."""
        while self._writer is not None:
            await asyncio.wait({self._writer})

    async def close(self) -> None:
        """Send what is still queued (releases, cancels: others' waiters need them), then let
        go of the connections; an unanswered rest lapses with the leases."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.settled(), timeout=REDIS_TIMEOUT)
        if self.aclient is not None:
            await self.aclient.aclose()
