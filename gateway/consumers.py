"""The live queue websocket for administrators: pushes the queue picture as it changes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from gateway.live import queue_state
from gateway.runtime import current_runtime

PUSH_INTERVAL = 1.0  # in-flight counts change without queue events: look this often anyway
THROTTLE = 0.2


def _is_admin(user: object) -> bool:
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    from accounts.rbac import resolve

    return resolve(user).is_admin  # type: ignore[arg-type]


class QueueConsumer(AsyncWebsocketConsumer):
    """Sends the queue state at once, then on every change (at most every THROTTLE seconds)."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        # channels' wrapper closes the worker thread's connection afterwards.
        if not await database_sync_to_async(_is_admin)(user):
            await self.close(code=4403)
            return
        await self.accept()
        self._changed = asyncio.Event()
        rt = current_runtime()
        if rt is not None:
            rt.watchers.add(self._changed)
        self._task = asyncio.ensure_future(self._push())

    async def disconnect(self, code: int) -> None:
        task = getattr(self, "_task", None)
        if task is not None:
            rt = current_runtime()
            if rt is not None:
                rt.watchers.discard(self._changed)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _push(self) -> None:
        last = None
        while True:
            if _reads_redis():
                # Shared admission's picture is a Redis round trip: never on the loop.
                state = await asyncio.to_thread(queue_state)
            else:
                state = queue_state()
            # Ages tick every second; only a real change (or the periodic in-flight check) sends.
            signature = json.dumps(_without_ages(state), sort_keys=True)
            if signature != last:
                await self.send(text_data=json.dumps(state))
                last = signature
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=PUSH_INTERVAL)
            self._changed.clear()
            await asyncio.sleep(THROTTLE)


def _reads_redis() -> bool:
    from gateway.shared_admission import SharedAdmissionQueue

    rt = current_runtime()
    return rt is not None and isinstance(rt.queue, SharedAdmissionQueue)


def _without_ages(state: dict[str, Any]) -> dict[str, Any]:
    # A serial score grows with age too: neither is a change worth a push.
    waiters = [
        {k: v for k, v in w.items() if k not in ("age_secs", "score")} for w in state["waiters"]
    ]
    return {**state, "waiters": waiters}
