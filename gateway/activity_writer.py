"""The activity writer: a child process that stores the gateway's activity records.

Writing thousands of rows a second costs CPU in the database driver, and in the gateway's own
process that work takes the GIL from the event loop (every handoff can stall it up to the 5 ms
switch interval). In a child process it runs beside the loop instead of against it.

The pipe between the two is private, so the protocol is plain: the parent writes frames (a
4-byte length, then the payload) to the child's stdin and the child answers each on stdout with
one line. The first frame is the pickled handshake (the parent's database settings as connected,
so a test database is the one written to, and the table's name), answered `ready`; every later
frame is a marshalled list of rows in `Entry` field order, answered `ok <n>` once committed or
`error <reason>` when not. A batch only leaves the recorder's buffer after its `ok`: if the
child dies, the parent starts another and sends the batch again (a child killed between commit
and answer may so store it twice; nothing is lost). The child exits when its stdin closes, so
it never outlives the gateway.
"""

from __future__ import annotations

import logging
import marshal
import os
import pickle
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from gateway.activity import Entry, insert

log = logging.getLogger("aiplane.activity")

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0  # seconds for the child to connect and answer `ready`
WRITE_TIMEOUT = 60.0  # seconds for one batch's commit before the child is replaced
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


class ProcessWriter:
    """The recorder's writer: sends each batch to the child process and waits for its commit.

    Called from the gateway's database thread only (one batch at a time), which blocks on the
    pipe with the GIL released while the child works.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def __call__(self, entries: list[Entry]) -> None:
        proc = self._running()
        rows = [e.row() for e in entries]
        answer = self._exchange(proc, marshal.dumps(rows, 4), WRITE_TIMEOUT)
        if answer.startswith("ok "):
            return
        raise WriterUnavailable(f"activity writer refused a batch: {answer}")

    def close(self, timeout: float = 10.0) -> None:
        """Let the child finish what it has and exit (closing its stdin is the signal)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def start(self) -> None:
        """Start the child ahead of the first batch (it costs a few hundred ms of CPU)."""
        self._running()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def _running(self) -> subprocess.Popen[bytes]:
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        if self.proc is not None:
            log.warning("activity writer exited with %s; starting another", self.proc.returncode)
            self.close()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.activity_writer"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        self.proc = proc
        self.starts += 1
        answer = self._exchange(proc, pickle.dumps(handshake()), START_TIMEOUT)
        if answer != "ready":
            self.close()
            raise WriterUnavailable(f"activity writer did not start: {answer}")
        return proc

    def _exchange(self, proc: subprocess.Popen[bytes], payload: bytes, timeout: float) -> str:
        """Send one frame and read the one-line answer; a dead or stuck child is replaced."""
        if proc.stdin is None or proc.stdout is None:  # only without pipes, which we always ask for
            raise WriterUnavailable("activity writer has no pipes")
        try:
            proc.stdin.write(len(payload).to_bytes(_HEADER, "big") + payload)
            proc.stdin.flush()
            return _read_line(proc.stdout, timeout)
        except (OSError, TimeoutError, EOFError) as err:
            proc.kill()
            self.close()
            raise WriterUnavailable(f"activity writer lost: {err or type(err).__name__}") from err


def _read_line(stream: IO[bytes], timeout: float) -> str:
    """One answer line from the child, reading the raw descriptor so `select` sees it all."""
    fd = stream.fileno()
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no answer in {timeout:.0f} s")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise EOFError("the writer exited")
        data += chunk
    return data.decode().strip()


# ----- the child ----------------------------------------------------------------------------


def _read_frame(stream: IO[bytes]) -> bytes | None:
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    size = int.from_bytes(header, "big")
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return payload


def serve(inbox: IO[bytes], outbox: IO[bytes]) -> int:
    """The child's loop: configure the database, then store batches until the parent leaves."""
    # Ctrl-C in a terminal, or a service manager's SIGTERM, reaches the whole process group;
    # the parent decides when we stop (it flushes its last batch first), and closing our stdin
    # is how it says so. Should the parent die, its end of the pipe closes all the same.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
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
    connection.ensure_connection()
    outbox.write(b"ready\n")
    outbox.flush()
    while (payload := _read_frame(inbox)) is not None:
        try:
            rows = marshal.loads(payload)  # noqa: S302 - the parent's own bytes
            insert(connection, table, rows)
            answer = f"ok {len(rows)}\n"
        except Exception as err:  # the parent keeps the batch and retries
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
    sys.exit(serve(sys.stdin.buffer, answers))
