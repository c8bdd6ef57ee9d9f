"""The per-request activity record: built on the request path, written off it in batches.

A crash loses at most the entries not yet flushed: up to `FLUSH_EVERY` seconds of traffic, capped
at `MAX_BUFFER` entries (beyond that the oldest unflushed entries are dropped and counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("aiplane.activity")

FLUSH_EVERY = 1.0  # seconds
BATCH = 500
MAX_BUFFER = 50_000


@dataclass(slots=True)
class Entry:
    """What happened to one request, for "why did my request take 20 minutes"."""

    started: float  # unix time
    token_id: int | None
    token_name: str | None
    user_id: int | None
    username: str
    model: str
    cls: int
    hint: str = ""
    path: str = ""
    backend: str = ""
    score: float | None = None
    queue_ms: float = 0.0
    first_byte_ms: float | None = None
    outcome: str = ""  # immediate, waited, expired, cancelled, rejected, error, ...
    status: int = 0
    duration_ms: float = 0.0


class Recorder:
    """Collects entries in memory; `run()` flushes them to `writer` in a worker thread."""

    def __init__(
        self,
        writer: Callable[[list[Entry]], None] | None = None,
        run_db: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        self.writer = writer
        self.run_db = run_db
        self.buffer: deque[Entry] = deque(maxlen=MAX_BUFFER)
        self.dropped = 0
        self.written = 0
        self.listeners: list[Callable[[Entry], None]] = []

    def add(self, entry: Entry) -> None:
        if self.writer is not None:
            if len(self.buffer) == MAX_BUFFER:
                self.dropped += 1
            self.buffer.append(entry)
        for listener in self.listeners:
            listener(entry)

    async def flush(self) -> int:
        """Write what is buffered now, in batches, off the event loop."""
        if self.writer is None:
            return 0
        total = 0
        while self.buffer:
            batch = [self.buffer.popleft() for _ in range(min(BATCH, len(self.buffer)))]
            try:
                if self.run_db is not None:
                    await self.run_db(self.writer, batch)
                else:
                    from asgiref.sync import sync_to_async

                    await sync_to_async(self.writer, thread_sensitive=False)(batch)
            except Exception:
                log.exception("could not write %d activity records; retrying later", len(batch))
                # Put them back in front; if that overflows the buffer, the newest unwritten
                # ones fall off the other end, and are counted.
                self.dropped += max(0, len(self.buffer) + len(batch) - MAX_BUFFER)
                self.buffer.extendleft(reversed(batch))
                break
            total += len(batch)
        self.written += total
        return total

    async def run(self) -> None:
        try:
            while True:
                await asyncio.sleep(FLUSH_EVERY)
                await self.flush()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.flush())


def prune(retention_days: int) -> int:
    """Delete records older than the retention setting; returns how many went."""
    from datetime import timedelta

    from django.utils import timezone

    from gateway.models import ActivityRecord

    cutoff = timezone.now() - timedelta(days=retention_days)
    deleted, _ = ActivityRecord.objects.filter(at__lt=cutoff).delete()
    return deleted
