"""The activity writer: a child process that stores the gateway's activity records.

Writing thousands of rows a second costs CPU in the database driver, and in the gateway's own
process that work competes with the event loop for the GIL. Measured on two cores at about
2,500 requests/s, a database thread cost the loop 10-20% of its throughput, most of it in GIL
handoffs between the two threads rather than in the inserts. So the rows go to a child process,
and the gateway's side of the exchange stays on the event loop: it marshals the rows (a few
hundred nanoseconds each, in chunks between which requests run) and writes them to a pipe; no
thread ever wakes for it.

The pipe between the two is private, so the protocol is plain: the parent writes frames (a
4-byte length, then the payload) to the child's stdin and the child answers each on stdout with
one line. The first frame is the pickled handshake (the parent's database settings as connected,
so a test database is the one written to, and the table's name), answered `ready`; every later
frame is a batch, a series of length-prefixed marshalled lists of `Entry.row()` tuples, stored
in one transaction (`gateway.activity.store`) and answered once committed with `ok <stored>`,
followed, when the database refused some rows, by a JSON list of `[index, reason]` (those rows
are dropped and counted by the recorder: sending them again would fail again). A database fault
answers `error <reason>` and commits nothing: the batch was not stored, and is kept. A batch
only leaves the recorder's buffer after its `ok`: if the child dies, the parent starts another
and sends the batch again (a child killed between commit and answer may so store it twice;
nothing is lost). Answers pair with frames by order alone, so a child owed the answer to a
frame whose sender left is replaced in the same way. The recorder never leaves a batch so: a
flush cancelled mid-exchange finishes that exchange first. The child exits when its stdin
closes, so it never outlives the gateway.
"""

from __future__ import annotations

import asyncio
import json
import logging
import marshal
import os
import pickle
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from gateway.observability.activity_rows import store
from gateway.observability.records import Rejected, Row

log = logging.getLogger("aiplane.activity")

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0  # seconds for the child to connect and answer `ready`
WRITE_TIMEOUT = 60.0  # seconds for one batch's commit before the child is replaced
IDLE_SECS = 5.0  # without a batch for this long, the child closes its database connection
NICENESS = 10  # the child's scheduling niceness (see `serve`)
CHUNK = 500  # rows marshalled at a time on the event loop (about 0.2 ms)
_HEADER = 4


class WriterUnavailable(RuntimeError):
    """The batch was not stored; the recorder keeps it and tries again on its next flush."""


def handshake() -> dict[str, Any]:
    """What the child needs to reach the same table: this process's default database as
    connected now (under tests, the test database), the table's name and the time settings."""
    from django.conf import settings
    from django.db import connections

    from gateway.models import ActivityRecord

    return {
        "database": dict(connections["default"].settings_dict),
        "table": ActivityRecord._meta.db_table,
        "USE_TZ": settings.USE_TZ,
        "TIME_ZONE": settings.TIME_ZONE,
    }


def in_process_only(database: dict[str, Any]) -> bool:
    """An in-memory SQLite database exists only inside this process: no child can reach it."""
    name = str(database.get("NAME") or "")
    return database.get("ENGINE", "").endswith("sqlite3") and (
        name in {"", ":memory:"} or "mode=memory" in name
    )


class _Answers(asyncio.Protocol):
    """The child's stdout, as lines handed out in order."""

    def __init__(self) -> None:
        self.pending = b""
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()

    def data_received(self, data: bytes) -> None:
        self.pending += data
        while b"\n" in self.pending:
            line, _, self.pending = self.pending.partition(b"\n")
            self.lines.put_nowait(line.decode().strip())

    def connection_lost(self, exc: Exception | None) -> None:
        self.lines.put_nowait(None)  # the child exited (or closed its stdout)

    async def next(self) -> str:
        line = await self.lines.get()
        if line is None:
            self.lines.put_nowait(None)  # and for whoever asks next
            raise EOFError("the activity writer exited")
        return line


class ProcessWriter:
    """The recorder's writer: sends each batch to the child and returns once it is committed.

    Lives on one event loop (the gateway's); batches are sent one at a time.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self._answers: _Answers | None = None
        self._out: asyncio.WriteTransport | None = None
        self._inbox: asyncio.ReadTransport | None = None
        self._busy: asyncio.Lock | None = None
        # A frame was sent and its sender left before the answer: the child's next line
        # answers that frame, not the next one (a handshake's `ready` read as a batch's `ok`).
        self._owed = False

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    async def start(self) -> None:
        """Start the child ahead of the first batch (it costs a few hundred ms of CPU)."""
        async with self._lock():
            await self._running()

    async def __call__(self, rows: list[Row]) -> list[Rejected]:
        """Store `rows`; returns those refused (their index in `rows`, and why)."""
        async with self._lock():
            await self._running()
            parts, unsendable = await _marshalled(rows)
            answer = await self._exchange(parts, WRITE_TIMEOUT)
        word, _, rest = answer.partition(" ")
        if word != "ok":
            raise WriterUnavailable(f"activity writer refused a batch: {answer}")
        _, _, listed = rest.partition(" ")
        if not listed:
            return unsendable
        # The child counts only the rows it was sent.
        skipped = {index for index, _ in unsendable}
        sent = [index for index in range(len(rows)) if index not in skipped]
        refused = [(sent[index], str(reason)) for index, reason in json.loads(listed)]
        return sorted(unsendable + refused)

    async def close(self, timeout: float = 10.0) -> None:
        """Let the child finish what it has and exit (the end of its stdin is the signal)."""
        proc, self.proc = self.proc, None
        if self._out is not None:
            self._out.close()
        if proc is not None:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while proc.poll() is None and loop.time() < deadline:
                await asyncio.sleep(0.02)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self._inbox is not None:
            self._inbox.close()
        self._out = self._inbox = self._answers = None
        self._owed = False

    def _lock(self) -> asyncio.Lock:
        if self._busy is None:
            self._busy = asyncio.Lock()
        return self._busy

    async def _running(self) -> None:
        if self.proc is not None and self.proc.poll() is None and not self._owed:
            return
        if self._owed:
            # Its answers are out of step with our frames: that child is done with, as one
            # that stopped answering is (what it has not committed is sent again).
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
            await self.close()
        elif self.proc is not None:
            log.warning("activity writer exited with %s; starting another", self.proc.returncode)
            await self.close()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.observability.activity_writer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        loop = asyncio.get_running_loop()
        answers = _Answers()
        self._inbox, _ = await loop.connect_read_pipe(lambda: answers, proc.stdout)
        self._out, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, proc.stdin)
        self.proc, self._answers = proc, answers
        self.starts += 1
        answer = await self._exchange([pickle.dumps(handshake())], START_TIMEOUT)
        if answer != "ready":
            await self.close()
            raise WriterUnavailable(f"activity writer did not start: {answer}")

    async def _exchange(self, parts: list[bytes], timeout: float) -> str:
        """Send one frame and await its one-line answer; a dead or stuck child is replaced."""
        if self._out is None or self._answers is None:
            raise WriterUnavailable("activity writer is not running")
        size = sum(len(part) for part in parts)
        try:
            self._out.writelines([size.to_bytes(_HEADER, "big"), *parts])
            return await asyncio.wait_for(self._answers.next(), timeout)
        except (OSError, TimeoutError, EOFError) as err:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
            await self.close()
            raise WriterUnavailable(f"activity writer lost: {err or type(err).__name__}") from err
        except asyncio.CancelledError:
            self._owed = True
            raise


async def _marshalled(rows: list[Row]) -> tuple[list[bytes], list[Rejected]]:
    """The batch's payload: length-prefixed marshalled chunks, letting requests run between;
    and the rows left out because marshal cannot take one of their values."""
    parts: list[bytes] = []
    unsendable: list[Rejected] = []
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        try:
            data = marshal.dumps(chunk, 4)
        except ValueError:
            # marshal takes only plain values; text is cleaned to str, but an enum member where
            # a number belongs would stop the chunk: such rows go as plain values, or alone
            # are left out.
            kept = []
            for index, row in enumerate(chunk, start):
                try:
                    marshal.dumps(row, 4)
                except ValueError:
                    try:
                        row = _plain(row)  # sent in its place
                        marshal.dumps(row, 4)
                    except (ValueError, TypeError) as err:
                        unsendable.append((index, f"{type(err).__name__}: {err}"))
                        continue
                kept.append(row)
            data = marshal.dumps(kept, 4)
        parts += [len(data).to_bytes(_HEADER, "big"), data]
        await asyncio.sleep(0)
    return parts, unsendable


def _plain(row: Row) -> Row:
    """The row with each int, float or str subclass (an enum member) as its plain value."""
    return tuple(
        value if value is None or type(value) in _PLAIN
        else int(value) if isinstance(value, int)
        else float(value) if isinstance(value, float)
        else str.__str__(value) if isinstance(value, str)
        else value
        for value in row
    )  # fmt: skip


_PLAIN = (bool, int, float, str)


# ----- the child ----------------------------------------------------------------------------


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    """From the unbuffered stdin (so `select` on it tells the truth): None at its end."""
    data = bytearray()
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _read_frame(stream: IO[bytes]) -> bytes | None:
    header = _read_exactly(stream, _HEADER)
    if header is None:
        return None
    return _read_exactly(stream, int.from_bytes(header, "big"))


def _rows(payload: bytes) -> Iterator[Row]:
    view, at = memoryview(payload), 0
    while at < len(view):
        size = int.from_bytes(view[at : at + _HEADER], "big")
        at += _HEADER
        yield from marshal.loads(view[at : at + size])  # noqa: S302 - the parent's own bytes
        at += size


def serve(inbox: IO[bytes], outbox: IO[bytes]) -> int:
    """The child's loop: configure the database, then store batches until the parent leaves."""
    # Ctrl-C in a terminal, or a service manager's SIGTERM, reaches the whole process group;
    # the parent decides when we stop (it flushes its last batch first), and closing our stdin
    # is how it says so. Should the parent die, its end of the pipe closes all the same.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Bookkeeping yields the CPU to serving requests: when the cores are saturated, records
    # wait in the gateway's buffer (up to MAX_BUFFER) a little longer instead of slowing
    # requests down; on a machine with any idle time this changes nothing.
    os.nice(NICENESS)
    first = _read_frame(inbox)
    if first is None:
        return 0
    import django
    from django.conf import settings
    from django.db import connection

    setup = pickle.loads(first)  # noqa: S301 - our parent's own bytes
    # Only a connection is needed, not the project's apps: configuring just the database keeps
    # the start to a fraction of a second (the full project takes over one second of CPU).
    settings.configure(
        DATABASES={"default": setup["database"]},
        USE_TZ=setup["USE_TZ"],
        TIME_ZONE=setup["TIME_ZONE"],
        INSTALLED_APPS=[],
    )
    django.setup()
    table = setup["table"]
    try:
        connection.ensure_connection()
    except Exception as err:
        # A database that is down is every batch's `error` (the parent keeps them) until it is
        # back; exiting instead would have the parent start a writer, at a few hundred ms of
        # CPU, on every flush of the outage.
        log.warning("cannot reach the database yet: %s", " ".join(str(err).split()))
    outbox.write(b"ready\n")
    outbox.flush()
    while True:
        # An idle writer holds no database session (PostgreSQL counts them, and a test run
        # cannot drop its database while one is open); the next batch reconnects.
        if not select.select([inbox], [], [], IDLE_SECS)[0]:
            connection.close()
        if (payload := _read_frame(inbox)) is None:
            break
        try:
            rows = list(_rows(payload))
            refused = store(connection, table, rows)
            answer = f"ok {len(rows) - len(refused)}"
            if refused:
                answer += " " + json.dumps(refused)
            answer += "\n"
        except Exception as err:  # the database's fault: the parent keeps the batch and retries
            log.exception("could not store activity records")
            connection.close()  # a broken connection is reopened for the next batch
            answer = "error " + " ".join(str(err).split())[:500] + "\n"
        outbox.write(answer.encode())
        outbox.flush()
    connection.close()
    return 0


if __name__ == "__main__":
    # The answers get a private copy of stdout; anything printed (or logged to stdout by the
    # settings' logging) goes to stderr instead of into the protocol.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    logging.basicConfig(level=logging.WARNING, format="activity writer: %(levelname)s %(message)s")
    sys.exit(serve(os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False), answers))
