"""The per-request activity record: built on the request path, written off it in batches.

A crash loses at most the entries not yet flushed: up to `FLUSH_EVERY` seconds of traffic, capped
at `MAX_BUFFER` entries (beyond that the oldest unflushed entries are dropped and counted). A row
the database refuses is left out of its batch, counted and logged; it never holds up the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

from gateway.core.redaction import scrub

log = logging.getLogger("aiplane.activity")

FLUSH_EVERY = 1.0  # seconds

BATCH = 10_000

MAX_BUFFER = 50_000


def text(max_length: int, blank: str = "", *, scrubbed: bool = False) -> dict[str, Any]:
    """A text column: what the record holds is cleaned to fit it (see `clean`); `blank` is what
    an empty value is stored as; `scrubbed` text loses anything that looks like a credential
    first (gateway/core/redaction.py)."""
    return {"max_length": max_length, "blank": blank, "scrubbed": scrubbed}


@dataclass(slots=True)
class Entry:
    """What happened to one request, for "why did my request take 20 minutes".

    The declaration of the stored record: each field is a column of `ActivityRecord` (its name
    unless the metadata says `column`), in the order of `row()`; text fields carry the column's
    max_length. `row()`, `store()` and the cleaning all follow from it, so a new column is one
    line here (and one in the model and its migration).
    """

    started: float = field(metadata={"column": "at"})  # unix time
    token_id: int | None
    token_name: str | None = field(metadata=text(200))
    user_id: int | None
    username: str = field(metadata=text(150))
    model: str = field(metadata=text(200))
    # Stored by name (low, medium, high): the caller's class once the caller is known, its
    # hint's once the body is read; None (null) for a request refused or cut short before that.
    cls: int | None = field(metadata={"column": "priority_class"})
    hint: str = field(default="", metadata=text(200))
    path: str = field(default="", metadata=text(100))
    backend: str = field(default="", metadata=text(100))
    score: float | None = None
    queue_ms: float = 0.0
    first_byte_ms: float | None = None
    # immediate, waited, expired, cancelled, rejected, error, ...; "unknown" if none was set
    outcome: str = field(default="", metadata=text(20, blank="unknown"))
    status: int = 0
    duration_ms: float = 0.0
    surface: str = field(default="", metadata=text(20))  # chat, completions, messages, ...
    # Token usage as the engine reported it (None when it did not), or as the gateway counted
    # a stream the engine answered without reporting it (`usage_estimated`; gateway/dialects/
    # plan.py `Plan.estimate`).
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    usage_estimated: bool = False
    # Why it was refused or failed; an engine's words are scrubbed where they are read, and
    # once more here: the database keeps them for months.
    error: str = field(default="", metadata=text(500, scrubbed=True))

    def row(self) -> Row:
        """The fields in declaration order (`Entry(*row)` rebuilds it), text cleaned to fit its
        column: cheap to buffer and marshal, and storable. Written out below the class."""
        raise NotImplementedError


Row = tuple[Any, ...]  # Entry.row(): what is buffered and written

COLUMNS = tuple(f.metadata.get("column", f.name) for f in fields(Entry))

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean(value: object, max_length: int) -> str:
    """Text the database can store in a column of `max_length` characters: a lone surrogate
    (JSON's "\\ud800" decodes to one; UTF-8 cannot encode it) becomes U+FFFD, NUL (which
    PostgreSQL refuses) is dropped, the rest is cut to fit; None is "" and a str subclass (an
    enum member) becomes a plain str, which is all marshal takes."""
    if value is None:
        return ""
    s = str.__str__(value) if isinstance(value, str) else str(value)
    if not s.isascii():
        s = _SURROGATE.sub("\ufffd", s)
    return s.replace("\0", "")[:max_length]


def _written_row() -> Callable[[Entry], Row]:
    """`Entry.row`, written out from the declaration once at import, as dataclasses write
    `__init__`: it runs for every request, and a loop over the fields costs twice as much as
    the same checks spelled out. The common text (a short ASCII str without NUL) costs a type
    check, a flag, a length and a scan per field; anything else goes through `clean`."""
    body, values = [], []
    for f in fields(Entry):
        limit = f.metadata.get("max_length")
        if limit is None:
            values.append(f"e.{f.name}")
            continue
        v = f.name
        body.append(f"    {v} = e.{v}")
        if f.metadata["scrubbed"]:
            body.append(f"    if {v}: {v} = scrub(str({v}))")  # empty: the usual case, free
        body += [
            f"    if not ({v}.__class__ is str and {v}.isascii() and len({v}) <= {limit}"
            f" and '\\0' not in {v}):",
            f"        {v} = clean({v}, {limit})",
        ]
        if blank := f.metadata["blank"]:
            body.append(f"    {v} = {v} or {blank!r}")
        values.append(v)
    source = "def row(e):\n" + "\n".join(body) + f"\n    return ({', '.join(values)},)\n"
    namespace: dict[str, Any] = {"clean": clean, "scrub": scrub}
    exec(source, namespace)  # noqa: S102 - our own declaration, spelled out once at import
    row: Callable[[Entry], Row] = namespace["row"]
    row.__doc__ = Entry.row.__doc__
    return row


Entry.row = _written_row()  # type: ignore[method-assign,assignment]  # spelled out, see above


Rejected = tuple[int, str]  # a row the database refused: its index in the batch, and why

Writer = Callable[[list[Row]], Awaitable[Sequence[Rejected] | None]]

_recorders: weakref.WeakSet[Recorder] = weakref.WeakSet()


def recorders() -> list[Recorder]:
    """The process's live recorders (one in production), for the metrics collector."""
    return list(_recorders)


class Recorder:
    """Collects entries in memory; `run()` hands them to `writer` every `FLUSH_EVERY` seconds.

    The writer is a coroutine function that returns once the rows are stored, with the rows the
    database refused (see `store`), and raises when the batch was not stored (the database or
    the writer is down), so it stays buffered for the next flush: the activity writer's child
    process (`gateway.activity_writer.ProcessWriter`), or a database thread.

    The buffer holds each entry as its `row()` tuple: a tuple of plain values leaves the garbage
    collector's books at its next pass, where a second's worth of objects would be promoted to
    the oldest generation and walked again by every full collection.
    """

    def __init__(self, writer: Writer | None = None) -> None:
        self.writer = writer
        self.buffer: deque[Row] = deque(maxlen=MAX_BUFFER)
        self.dropped = 0
        self.written = 0
        self.rejected = 0  # rows the database refused to store (dropped, one log line each)
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
        """Write what is buffered now, in batches of up to `BATCH` rows; returns how many
        were stored."""
        if self.writer is None:
            return 0
        loop = asyncio.get_running_loop()
        total = 0
        while self.buffer:
            batch = [self.buffer.popleft() for _ in range(min(BATCH, len(self.buffer)))]
            # The batch is settled (counted, or put back) when its write ends, whoever is still
            # waiting: only the write's answer tells whether it was stored, so a flush that is
            # cancelled (the gateway stopping; even twice) must neither drop a batch it sent
            # nor send it again. A first cancel still waits for that answer (the writer bounds
            # the wait), so the last flush after it starts from a settled buffer.
            settled: asyncio.Future[int | None] = loop.create_future()
            write = asyncio.ensure_future(self.writer(batch))
            write.add_done_callback(partial(self._settle, batch, settled))
            try:
                stored = await asyncio.shield(settled)
            except asyncio.CancelledError:
                await asyncio.wait([settled])
                raise
            if stored is None:
                break
            total += stored
        return total

    def _settle(
        self, batch: list[Row], settled: asyncio.Future[int | None], write: asyncio.Future[Any]
    ) -> None:
        """Count a finished write: `settled` gets how many rows of `batch` were stored, or
        None when it failed and the batch went back in front (if that overflows the buffer,
        the newest unwritten rows fall off the other end, and are counted)."""
        err = None if write.cancelled() else write.exception()
        if write.cancelled() or err is not None:
            self.failures += 1
            log.error("could not write %d activity records; retrying later", len(batch),
                      exc_info=err)  # fmt: skip
            self.dropped += max(0, len(self.buffer) + len(batch) - MAX_BUFFER)
            self.buffer.extendleft(reversed(batch))
            settled.set_result(None)
            return
        rejected = write.result() or ()
        for index, reason in rejected:
            # repr: the row holds caller text, which must not be able to forge log lines.
            log.warning("dropped an activity record the database refused (%r): %r",
                        reason, batch[index])  # fmt: skip
        self.rejected += len(rejected)
        self.written += len(batch) - len(rejected)
        settled.set_result(len(batch) - len(rejected))

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
