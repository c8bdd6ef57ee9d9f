"""The per-request activity record: built on the request path, written off it in batches.

A crash loses at most the entries not yet flushed: up to `FLUSH_EVERY` seconds of traffic, capped
at `MAX_BUFFER` entries (beyond that the oldest unflushed entries are dropped and counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("aiplane.activity")

FLUSH_EVERY = 1.0  # seconds
BATCH = 10_000
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

    def row(self) -> tuple[Any, ...]:
        """The fields in declaration order (`Entry(*row)` rebuilds it): cheap to marshal."""
        return (
            self.started, self.token_id, self.token_name, self.user_id, self.username,
            self.model, self.cls, self.hint, self.path, self.backend, self.score, self.queue_ms,
            self.first_byte_ms, self.outcome, self.status, self.duration_ms,
        )  # fmt: skip


Row = tuple[Any, ...]  # Entry.row(): what is buffered and written


Writer = Callable[[list[Row]], Awaitable[None]]
_recorders: weakref.WeakSet[Recorder] = weakref.WeakSet()


def recorders() -> list[Recorder]:
    """The process's live recorders (one in production), for the metrics collector."""
    return list(_recorders)


class Recorder:
    """Collects entries in memory; `run()` hands them to `writer` every `FLUSH_EVERY` seconds.

    The writer is a coroutine function that returns once the rows are stored (and raises when
    they are not, so they stay buffered for the next flush): the activity writer's child process
    (`gateway.activity_writer.ProcessWriter`), or a database thread.

    The buffer holds each entry as its `row()` tuple: a tuple of plain values leaves the garbage
    collector's books at its next pass, where a second's worth of objects would be promoted to
    the oldest generation and walked again by every full collection.
    """

    def __init__(self, writer: Writer | None = None) -> None:
        self.writer = writer
        self.buffer: deque[Row] = deque(maxlen=MAX_BUFFER)
        self.dropped = 0
        self.written = 0
        self.failures = 0  # flushes that could not store their batch (it stayed buffered)
        self.listeners: list[Callable[[Entry], None]] = []
        _recorders.add(self)

    def add(self, entry: Entry) -> None:
        if self.writer is not None:
            if len(self.buffer) == MAX_BUFFER:
                self.dropped += 1
            self.buffer.append(entry.row())
        for listener in self.listeners:
            listener(entry)

    async def flush(self) -> int:
        """Write what is buffered now, in batches of up to `BATCH` rows."""
        if self.writer is None:
            return 0
        total = 0
        while self.buffer:
            batch = [self.buffer.popleft() for _ in range(min(BATCH, len(self.buffer)))]
            try:
                await self.writer(batch)
            except Exception:
                self.failures += 1
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
        start = getattr(self.writer, "start", None)
        if start is not None:
            # A writer with a start-up cost (the activity writer's process) pays it now, not
            # in the middle of the first busy second.
            try:
                await start()
            except Exception:
                log.exception("activity writer did not start; the first flush tries again")
        try:
            while True:
                await asyncio.sleep(FLUSH_EVERY)
                await self.flush()
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.flush())


ROWS_PER_INSERT = 500
COLUMNS = (
    "at", "token_id", "token_name", "user_id", "username", "model", "path", "backend",
    "priority_class", "hint", "score", "queue_ms", "first_byte_ms", "outcome", "status",
    "duration_ms",
)  # fmt: skip


def insert(connection: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    """Store a batch of `Entry.row()` tuples in one transaction: multi-row INSERTs on the
    driver's own cursor.

    This runs at the gateway's full request rate on a shared two-core budget, so it skips the
    ORM (model instances, per-value field preparation and placeholder rewriting cost several
    times the insert itself). It needs only a Django connection, not the app registry, which
    lets the activity writer's child process start in a fraction of a second.
    """
    from datetime import UTC, datetime

    from django.db import transaction

    from gateway.admission import CLASS_NAMES

    names = CLASS_NAMES
    if connection.vendor == "sqlite":
        # Django keeps SQLite times as naive UTC text ("YYYY-MM-DD HH:MM:SS[.ffffff]"). A batch
        # spans a second or two, so the date and time are formatted once per second.
        seconds: dict[int, str] = {}

        def when(t: float) -> object:
            whole = int(t)
            text = seconds.get(whole)
            if text is None:
                moment = datetime.fromtimestamp(whole, tz=UTC)
                text = seconds[whole] = moment.strftime("%Y-%m-%d %H:%M:%S")
            micro = int((t - whole) * 1e6)
            return f"{text}.{micro:06d}" if micro else text

        mark = "?"
    else:

        def when(t: float) -> object:
            return datetime.fromtimestamp(t, tz=UTC)

        mark = "%s"
    # Entry.row() order: started, token_id, token_name, user_id, username, model, cls, hint,
    # path, backend, score, queue_ms, first_byte_ms, outcome, status, duration_ms.
    values = [
        (
            when(r[0]), r[1], r[2] or "", r[3], r[4], r[5][:200], r[8], r[9], names[r[6]],
            r[7][:200], r[10], r[11], r[12], r[13] or "unknown", r[14], r[15],
        )
        for r in rows
    ]  # fmt: skip
    marks = "(" + ", ".join([mark] * len(COLUMNS)) + ")"
    head = f"INSERT INTO {connection.ops.quote_name(table)} ({', '.join(COLUMNS)}) VALUES "  # noqa: S608
    # One multi-row statement per chunk, not executemany: the driver gives the GIL back and
    # takes it again around every statement, and each of those handoffs stalls the event loop
    # thread (up to the 5 ms switch interval) when this runs in the gateway's own process.
    with transaction.atomic(using=connection.alias):
        connection.ensure_connection()
        cursor = connection.connection.cursor()
        try:
            per_insert = min(ROWS_PER_INSERT, _max_params(connection) // len(COLUMNS))
            for start in range(0, len(values), per_insert):
                chunk = values[start : start + per_insert]
                params = [value for row in chunk for value in row]
                cursor.execute(head + ", ".join([marks] * len(chunk)), params)
        finally:
            cursor.close()


def _max_params(connection: Any) -> int:
    """How many parameters one statement may bind (SQLite's limit depends on its build)."""
    if connection.vendor == "sqlite":
        import sqlite3

        connection.ensure_connection()
        return int(connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    return 65_535  # PostgreSQL's wire protocol bound


def prune(retention_days: int) -> int:
    """Delete records older than the retention setting; returns how many went."""
    from datetime import timedelta

    from django.utils import timezone

    from gateway.models import ActivityRecord

    cutoff = timezone.now() - timedelta(days=retention_days)
    deleted, _ = ActivityRecord.objects.filter(at__lt=cutoff).delete()
    return deleted
