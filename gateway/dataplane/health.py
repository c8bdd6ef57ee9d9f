"""GET /healthz and /readyz: is this process alive, and should a balancer send it requests?

Both are unauthenticated and cheap: neither reads a request body, takes a slot, or waits on the
queue. /healthz is 200 while the event loop answers (a liveness probe: restart it if not).
/readyz is 200 only when every check passes, else 503 with the checks that did not:

    starting   the runtime has not started (its settings and topology not loaded yet)
    draining   a SIGTERM came (gateway/dataplane/drain.py): it takes no new work
    topology   the model servers and pools were loaded from the database
    database   the database answered a trivial query (one at a time, at most once a second,
               within 2 s; a probe storm never becomes a query storm)
    redis      with AIPLANE_REDIS_URL: the process is in its group on Redis, not in its
               Redis-away fallback

Answers are JSON: {"status": "ready" | "starting" | "draining" | "not_ready", "checks": {...}}.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.core.asgi import Receive, Scope, Send
from gateway.core.wire_json import dumps
from gateway.runtime.runtime import Runtime

PATHS = ("/healthz", "/readyz")

DATABASE_EVERY = 1.0  # seconds a database answer stands for
DATABASE_WITHIN = 2.0  # seconds it may take


class Health:
    """The ASGI handler for PATHS; `database` runs the trivial query (None: not checked)."""

    def __init__(
        self, runtime: Runtime, database: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.runtime = runtime
        self.database = database
        self._checked = float("-inf")  # monotonic time of the last database answer
        self._database = "unknown"
        self._running: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await _answer(send, 405, {"status": "method_not_allowed"}, allow=b"GET, HEAD")
            return
        if scope["path"] == "/healthz":
            await _answer(send, 200, {"status": "alive"}, head=scope["method"] == "HEAD")
            return
        status, checks = await self.readiness()
        code = 200 if status == "ready" else 503
        body = {"status": status, "checks": checks}
        await _answer(send, code, body, head=scope["method"] == "HEAD")

    async def readiness(self) -> tuple[str, dict[str, Any]]:
        rt = self.runtime
        checks: dict[str, Any] = {
            "started": rt.started,
            "draining": rt.draining,
            "topology": "ok" if rt.topology_loaded else "not_loaded",
            "database": await self._database_check(),
            "redis": _redis(rt),
        }
        if not rt.started:
            return "starting", checks
        if rt.draining:
            return "draining", checks
        ok = checks["topology"] == "ok" and checks["database"] == "ok"
        return ("ready" if ok and checks["redis"] in ("ok", "off") else "not_ready"), checks

    async def _database_check(self) -> str:
        if self.database is None:
            return "ok"
        if time.monotonic() - self._checked < DATABASE_EVERY:
            return self._database
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._ask_database())
        try:
            # Shielded: a probe that gives up leaves the one query running for the next probe.
            await asyncio.wait_for(asyncio.shield(self._running), DATABASE_WITHIN)
        except TimeoutError:
            return "timeout"
        return self._database

    async def _ask_database(self) -> None:
        try:
            await self.database()  # type: ignore[misc]  # only asked when there is one
            self._database = "ok"
        except Exception:
            self._database = "unreachable"
        self._checked = time.monotonic()


def _redis(rt: Runtime) -> str:
    queue = rt.queue
    if not queue.shares_capacity:
        return "off"
    return "away" if queue.fallback else "ok"


async def _answer(
    send: Send, status: int, body: dict[str, Any], *, head: bool = False, allow: bytes = b""
) -> None:
    data = dumps(body)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if allow:
        headers.append((b"allow", allow))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else data})
