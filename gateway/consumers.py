"""The live queue websocket for administrators: pushes the queue picture as it changes."""

from __future__ import annotations

import asyncio
import contextlib
import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from gateway.live import queue_state

PUSH_INTERVAL = 1.0


def _is_admin(user: object) -> bool:
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    from accounts.rbac import resolve

    return resolve(user).is_admin  # type: ignore[arg-type]


class QueueConsumer(AsyncWebsocketConsumer):
    """Sends the queue state at once, then whenever it changes (checked every second)."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        # channels' wrapper closes the worker thread's connection afterwards.
        if not await database_sync_to_async(_is_admin)(user):
            await self.close(code=4403)
            return
        await self.accept()
        self._task = asyncio.ensure_future(self._push())

    async def disconnect(self, code: int) -> None:
        task = getattr(self, "_task", None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _push(self) -> None:
        last = None
        while True:
            state = json.dumps(queue_state())
            if state != last:
                await self.send(text_data=state)
                last = state
            await asyncio.sleep(PUSH_INTERVAL)
