"""The live queue websocket for administrators: pushes the queue picture as it changes.

Only an administrator's session may watch, and only while it stays one. The right is checked
at the handshake, again whenever identities change (the caller cache's invalidation: users,
groups, memberships, settings, made here or announced by another process on Redis) or a browser
session is deleted, and every RECHECK_SECS in any case (a session that expires, a change made
behind the ORM's back). Each check reads the session afresh from the session store
(accounts/standing.py), off the event loop and bounded by CHECK_TIMEOUT. From a change until its
check has confirmed the right, no picture is sent. A socket that loses the right is closed at
once with a policy code:

- 4403 (LOST_ADMIN): still signed in, but no longer an administrator;
- 4401 (SIGNED_OUT): the session is gone: signed out, flushed, expired, the password changed
  (its auth hash no longer matches), the user deactivated or deleted;
- 1011: the check could not be made (the database did not answer in time); the page reconnects,
  and the handshake checks again.

A refused handshake, for either reason, is an HTTP 403 before the socket opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from accounts.caller import on_identity_changed
from accounts.standing import Standing, session_standing
from gateway.observability.live_queue import queue_state
from gateway.runtime.runtime import current_runtime

log = logging.getLogger("aiplane.gateway")

PUSH_INTERVAL = 1.0  # in-flight counts change without queue events: look this often anyway
THROTTLE = 0.2
RECHECK_SECS = 3.0  # the backstop: a right lost unannounced ends within this
CHECK_TIMEOUT = 10.0

LOST_ADMIN, SIGNED_OUT, UNCHECKED = 4403, 4401, 1011
_CLOSE_CODES = {Standing.NOT_ADMIN: LOST_ADMIN, Standing.SIGNED_OUT: SIGNED_OUT}

# The open sockets, for identity changes that land on any thread.
_watching: set[QueueConsumer] = set()
_watching_lock = threading.Lock()


def _identity_changed() -> None:
    with _watching_lock:
        sockets = list(_watching)
    for socket in sockets:
        socket.doubt_threadsafe()


on_identity_changed(_identity_changed)


async def _standing(session_key: str | None) -> Standing:
    # channels' wrapper closes the worker thread's connection afterwards; its one shared thread
    # also keeps a burst of checks (every socket at one change) to one query at a time.
    check = database_sync_to_async(session_standing)(session_key)
    return await asyncio.wait_for(check, timeout=CHECK_TIMEOUT)


class QueueConsumer(AsyncWebsocketConsumer):
    """Sends the queue state at once, then on every change (at most every THROTTLE seconds),
    while the session keeps the right to watch (see the module's docstring for the codes)."""

    async def connect(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._session_key = self.scope.get("cookies", {}).get(settings.SESSION_COOKIE_NAME)
        self._doubted = asyncio.Event()  # an identity changed since the last check
        self._trusted = asyncio.Event()  # the last check holds: pictures may be sent
        # Listening before the first check: a change committed during it is checked again.
        with _watching_lock:
            _watching.add(self)
        try:
            standing = await _standing(self._session_key)
        except Exception as err:
            log.warning("could not check a live queue session: %r", err)
            standing = Standing.SIGNED_OUT
        if standing is not Standing.ADMIN:
            self._forget()
            await self.close(code=LOST_ADMIN)
            return
        await self.accept()
        if not self._doubted.is_set():
            self._trusted.set()
        self._changed = asyncio.Event()
        rt = current_runtime()
        if rt is not None:
            rt.watchers.add(self._changed)
        self._task = asyncio.ensure_future(self._push())
        self._guard = asyncio.ensure_future(self._keep_checking())

    async def disconnect(self, code: int) -> None:
        self._forget()
        task = getattr(self, "_task", None)
        if task is not None:
            rt = current_runtime()
            if rt is not None:
                rt.watchers.discard(self._changed)
            for running in (self._guard, task):
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running

    def _forget(self) -> None:
        with _watching_lock:
            _watching.discard(self)

    def doubt_threadsafe(self) -> None:
        """An identity changed (from any thread): hold the pictures and check again now."""
        with contextlib.suppress(RuntimeError):  # the loop has closed: so has the socket
            self._loop.call_soon_threadsafe(self._doubt)

    def _doubt(self) -> None:
        self._trusted.clear()
        self._doubted.set()

    async def _keep_checking(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._doubted.wait(), timeout=RECHECK_SECS)
            self._doubted.clear()
            try:
                standing = await _standing(self._session_key)
            except Exception as err:
                log.warning("could not check a live queue session again: %r", err)
                await self._end(UNCHECKED)
                return
            if standing is not Standing.ADMIN:
                await self._end(_CLOSE_CODES[standing])
                return
            if not self._doubted.is_set():  # a change during the check: its own check decides
                self._trusted.set()

    async def _end(self, code: int) -> None:
        """Stop the pictures first, then close: nothing more leaves for this session."""
        self._forget()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.close(code=code)

    async def _push(self) -> None:
        last = None
        while True:
            await self._trusted.wait()
            if _reads_redis():
                # Shared admission's picture is a Redis round trip: never on the loop.
                state = await asyncio.to_thread(queue_state)
            else:
                state = queue_state()
            # Ages tick every second; only a real change (or the periodic in-flight check) sends.
            signature = json.dumps(_without_ages(state), sort_keys=True)
            # A change may have come while the picture was read: then it waits for its check.
            if signature != last and self._trusted.is_set():
                await self.send(text_data=json.dumps(state))
                last = signature
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=PUSH_INTERVAL)
            self._changed.clear()
            await asyncio.sleep(THROTTLE)


def _reads_redis() -> bool:
    from gateway.admission.shared.queue import SharedAdmissionQueue

    rt = current_runtime()
    return rt is not None and isinstance(rt.queue, SharedAdmissionQueue)


def _without_ages(state: dict[str, Any]) -> dict[str, Any]:
    # A serial score grows with age too: neither is a change worth a push.
    waiters = [
        {k: v for k, v in w.items() if k not in ("age_secs", "score")} for w in state["waiters"]
    ]
    return {**state, "waiters": waiters}
