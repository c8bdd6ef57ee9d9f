"""The activity writer's child process: stores each batch before it answers, survives its own
death without losing a batch, and leaves when the gateway does; in both writer modes, a row the
database refuses is dropped and counted while a database that is down loses nothing."""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection

from gateway.models import ActivityRecord
from gateway.observability import activity_writer, records
from gateway.observability.activity_writer import ProcessWriter, WriterUnavailable, in_process_only
from gateway.observability.records import COLUMNS, Entry, Recorder, Row, Writer

pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC).timestamp()


def rows(*usernames: str) -> list[Row]:
    return [e.row() for e in entries(*usernames)]


def entries(*usernames: str) -> list[Entry]:
    return [
        Entry(
            started=T0 + n * 1.25, token_id=7, token_name="ci", user_id=3, username=name,
            model="sim-small", cls=n % 3, hint="batch", path="/v1/chat/completions",
            backend="gpu1", score=1.5, queue_ms=12.5, first_byte_ms=40.0, outcome="waited",
            status=200, duration_ms=80.25,
        )
        for n, name in enumerate(usernames)
    ]  # fmt: skip


def stored() -> list[str]:
    return sorted(ActivityRecord.objects.values_list("username", flat=True))


Run = Callable[[Awaitable[Any]], Any]


@pytest.fixture
def run() -> Iterator[Run]:
    """Runs a coroutine on one event loop for the whole test (the writer's pipes live there);
    between steps the test is synchronous, so it may use the ORM."""
    loop = asyncio.new_event_loop()
    try:
        yield loop.run_until_complete
    finally:
        loop.close()


@pytest.fixture
def writer(run: Run) -> Iterator[ProcessWriter]:
    w = ProcessWriter()
    try:
        yield w
    finally:
        run(w.close())


def exited(pid: int, timeout: float = 10.0) -> bool:
    """Gone, or a zombie waiting for a parent (an orphan's new parent may never reap it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def test_a_batch_is_in_the_database_when_the_writer_returns(
    writer: ProcessWriter, run: Run
) -> None:
    run(writer(rows("ann", "bea", "cid")))
    assert stored() == ["ann", "bea", "cid"]
    row = ActivityRecord.objects.get(username="bea")
    assert (
        row.at.timestamp(), row.token_id, row.token_name, row.user_id, row.model, row.path,
        row.backend, row.priority_class, row.hint, row.score, row.queue_ms, row.first_byte_ms,
        row.outcome, row.status, row.duration_ms,
    ) == (
        T0 + 1.25, 7, "ci", 3, "sim-small", "/v1/chat/completions", "gpu1", "medium", "batch",
        1.5, 12.5, 40.0, "waited", 200, 80.25,
    )  # fmt: skip
    assert writer.pid is not None and writer.pid != os.getpid()
    # Stored the way Django stores times, so its filters and ordering agree.
    since = datetime.fromtimestamp(T0 + 1.25, tz=UTC)
    later = ActivityRecord.objects.filter(at__gte=since).order_by("at")
    assert list(later.values_list("username", flat=True)) == ["bea", "cid"]
    assert ActivityRecord.objects.filter(at=since).get().username == "bea"


def test_a_batch_larger_than_a_chunk_arrives_whole_in_one_answer(
    writer: ProcessWriter, run: Run
) -> None:
    names = [f"u{n:04d}" for n in range(activity_writer.CHUNK * 2 + 17)]
    run(writer(rows(*names)))
    assert stored() == names


def test_the_writer_runs_in_a_process_of_its_own_that_is_started_once(
    writer: ProcessWriter, run: Run
) -> None:
    run(writer.start())
    pid = writer.pid
    run(writer(rows("ann")))
    run(writer(rows("bea")))
    assert (writer.pid, writer.starts) == (pid, 1)
    assert pid is not None and pid != os.getpid()


def test_a_writer_that_died_is_replaced_and_the_batch_still_arrives(
    writer: ProcessWriter, run: Run
) -> None:
    run(writer.start())
    first = writer.pid
    assert writer.proc is not None
    writer.proc.kill()
    writer.proc.wait(10)
    run(writer(rows("ann")))
    assert stored() == ["ann"]
    assert writer.starts == 2 and writer.pid != first


def test_a_batch_the_writer_could_not_store_stays_in_the_recorder_until_it_can(
    writer: ProcessWriter, run: Run
) -> None:
    """Killed while the recorder flushes: the batch is kept, and the next flush stores it once."""
    recorder = Recorder(writer)
    run(writer.start())
    pid = writer.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert exited(pid)
    # Not yet noticed (it died between two looks): the next send meets a closed pipe.
    assert writer.proc is not None
    real_poll, unnoticed = writer.proc.poll, iter([None])
    writer.proc.poll = lambda: next(unnoticed, real_poll())  # type: ignore[method-assign]
    for e in entries("ann", "bea"):
        recorder.add(e)
    written = [run(recorder.flush()) for _ in range(2)]
    assert written == [0, 2] and not recorder.buffer
    assert stored() == ["ann", "bea"]
    assert recorder.dropped == 0 and writer.starts == 2


def test_a_refused_batch_raises_so_the_recorder_keeps_it(
    writer: ProcessWriter, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = activity_writer.handshake

    def wrong_table() -> dict[str, Any]:
        return {**real(), "table": "no_such_table"}

    monkeypatch.setattr(activity_writer, "handshake", wrong_table)
    with pytest.raises(WriterUnavailable, match="no_such_table"):
        run(writer(rows("ann")))
    assert stored() == []
    recorder = Recorder(writer)
    recorder.add(entries("bea")[0])
    assert run(recorder.flush()) == 0
    assert [row[4] for row in recorder.buffer] == ["bea"]


def test_the_writer_leaves_when_the_gateway_closes_it(writer: ProcessWriter, run: Run) -> None:
    run(writer(rows("ann")))
    pid = writer.pid
    assert pid is not None
    run(writer.close())
    assert exited(pid)
    assert writer.pid is None


def test_ctrl_c_or_sigterm_to_the_process_group_leaves_the_writer_running_for_the_last_flush(
    writer: ProcessWriter, run: Run
) -> None:
    """The gateway decides when its writer stops: after it has flushed its last batch."""
    run(writer.start())
    pid = writer.pid
    assert pid is not None
    os.kill(pid, signal.SIGINT)
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.2)
    run(writer(rows("ann")))
    assert (writer.pid, writer.starts) == (pid, 1)
    assert stored() == ["ann"]


async def cancelled_once_sent(call: Awaitable[Any], writer: ProcessWriter) -> None:
    """Runs `call` and cancels it once its frame has gone to the child (the child takes far
    longer to answer than the loop takes to get here), before the answer."""
    task = asyncio.ensure_future(call)
    # The child's pipes are set just before its first frame is written, with no pause between.
    while writer._answers is None:
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_start_cancelled_before_its_answer_leaves_no_answer_out_of_step(
    writer: ProcessWriter, run: Run
) -> None:
    """The child's `ready` to a handshake whose sender left must not answer the next batch."""
    run(cancelled_once_sent(writer.start(), writer))
    assert writer.starts == 1
    assert run(writer(rows("ann"))) == []
    assert stored() == ["ann"]
    assert run(writer(rows("bea"))) == []
    assert stored() == ["ann", "bea"]


@pytest.mark.parametrize("cancels", [1, 2], ids=["cancelled", "cancelled-twice"])
def test_a_flush_cancelled_while_its_batch_is_in_flight_settles_that_batch_by_its_answer(
    cancels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway stopping mid-flush: the batch's answer still decides whether it is kept, so
    it is neither lost (sent, then dropped from the buffer) nor, sent again, stored twice; a
    flush cancelled once waits for that answer, and the rows of its earlier batches count."""

    monkeypatch.setattr(records, "BATCH", 1)  # one row a batch: the flush has several

    async def cancelled_flush(usernames: tuple[str, ...], answer: Exception | None) -> Recorder:
        answered, calls = asyncio.Event(), []

        async def slow(batch: list[Row]) -> list[Any]:
            calls.append(batch)
            if len(calls) < len(usernames):
                return []  # the earlier batches are stored at once
            await answered.wait()
            if answer is not None:
                raise answer
            return []

        recorder = Recorder(slow)
        for e in entries(*usernames):
            recorder.add(e)
        flush = asyncio.ensure_future(recorder.flush())
        while len(calls) < len(usernames):
            await asyncio.sleep(0)
        for _ in range(cancels):
            flush.cancel()
            await asyncio.sleep(0.01)
        assert flush.done() is (cancels > 1)  # once: it waits for the batch's answer
        answered.set()
        with pytest.raises(asyncio.CancelledError):
            await flush
        await asyncio.sleep(0.01)  # (cancelled twice, the answer comes after the flush ended)
        return recorder

    stored_anyway = asyncio.run(cancelled_flush(("ann", "bea", "cid"), None))
    assert (len(stored_anyway.buffer), stored_anyway.written, stored_anyway.failures) == (0, 3, 0)
    failed = asyncio.run(cancelled_flush(("dan", "eve"), WriterUnavailable("the child died")))
    assert [row[4] for row in failed.buffer] == ["eve"]  # kept for the last flush
    assert (failed.written, failed.failures) == (1, 1)


def test_an_in_memory_sqlite_database_is_written_from_the_gateway_process() -> None:
    sqlite = "django.db.backends.sqlite3"
    assert in_process_only({"ENGINE": sqlite, "NAME": ":memory:"})
    assert in_process_only({"ENGINE": sqlite, "NAME": "file:memorydb_default?mode=memory"})
    assert not in_process_only({"ENGINE": sqlite, "NAME": "/var/lib/aiplane/db.sqlite3"})
    assert not in_process_only({"ENGINE": "django.db.backends.postgresql", "NAME": "aiplane"})


def test_the_writer_is_chosen_by_aiplane_activity_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    from functools import partial

    from aiplane.wiring import DatabaseThread, activity_writer, write_activity

    db = DatabaseThread()
    monkeypatch.delenv("AIPLANE_ACTIVITY_WRITER", raising=False)
    assert isinstance(activity_writer(db), ProcessWriter)
    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", "thread")
    thread = activity_writer(db)
    assert isinstance(thread, partial) and thread.args == (write_activity,)
    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", "carrier-pigeon")
    with pytest.raises(ValueError, match="process or thread"):
        activity_writer(db)
    monkeypatch.setenv("AIPLANE_OBSERVABILITY", "off")
    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", "process")
    assert activity_writer(db) is None


def test_the_writer_does_not_outlive_a_gateway_that_was_killed(tmp_path: Any) -> None:
    """SIGKILL gives the gateway no chance to close anything: the pipe's end is the signal."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    gateway = subprocess.Popen(
        [
            sys.executable, "-c",
            "import django, time\n"
            "django.setup()\n"
            "import asyncio\n"
            "from gateway.observability.activity_writer import ProcessWriter\n"
            "async def main():\n"
            "    w = ProcessWriter()\n"
            "    await w.start()\n"
            "    print(w.pid, flush=True)\n"
            "    await asyncio.sleep(60)\n"
            "asyncio.run(main())\n",
        ],
        cwd=root,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "aiplane.settings",
            "AIPLANE_DATA_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        },
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert gateway.stdout is not None
        child = int(gateway.stdout.readline())
        os.kill(child, 0)  # running
    finally:
        gateway.kill()
        gateway.wait()
    assert exited(child), "the activity writer outlived the gateway"


def test_observability_off_leaves_neither_activity_records_nor_queue_metrics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aiplane.wiring import build_runtime

    monkeypatch.setenv("AIPLANE_OBSERVABILITY", "off")
    runtime, recorder = build_runtime()
    assert recorder.writer is None
    assert runtime.queue.observer is not runtime.metrics
    monkeypatch.setenv("AIPLANE_OBSERVABILITY", "on")
    runtime, recorder = build_runtime()
    assert isinstance(recorder.writer, ProcessWriter)
    assert runtime.queue.observer is runtime.metrics


def activity_metrics() -> dict[str, float]:
    from gateway.observability.collector import GatewayCollector
    from gateway.runtime.runtime import current_runtime

    return {
        sample.name: sample.value
        for family in GatewayCollector(current_runtime).collect()
        if family.name.startswith("aiplane_activity_")
        for sample in family.samples
    }


def test_metrics_show_whether_activity_records_keep_up(
    writer: ProcessWriter, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = activity_metrics()
    recorder = Recorder(writer)
    for e in entries("ann", "bea", "cid"):
        recorder.add(e)
    recorder.buffer.append(raw("bad", status=-1))

    def delta() -> dict[str, float]:
        now = activity_metrics()
        return {name: now[name] - before[name] for name in now}

    assert delta() == {
        "aiplane_activity_records_written_total": 0,
        "aiplane_activity_records_dropped_total": 0,
        "aiplane_activity_records_rejected_total": 0,
        "aiplane_activity_flush_failures_total": 0,
        "aiplane_activity_records_buffered": 4,
    }
    real = activity_writer.handshake
    monkeypatch.setattr(activity_writer, "handshake", lambda: {**real(), "table": "nope"})
    assert run(recorder.flush()) == 0
    assert delta()["aiplane_activity_flush_failures_total"] == 1
    monkeypatch.setattr(activity_writer, "handshake", real)
    run(writer.close())  # the next batch starts a writer with the right table
    assert run(recorder.flush()) == 3
    assert delta() == {
        "aiplane_activity_records_written_total": 3,
        "aiplane_activity_records_dropped_total": 0,
        "aiplane_activity_records_rejected_total": 1,
        "aiplane_activity_flush_failures_total": 1,
        "aiplane_activity_records_buffered": 0,
    }


# ----- rows the database refuses, and a database that is down --------------------------------

FIELD = {f.name: n for n, f in enumerate(fields(Entry))}


def raw(username: str, **values: Any) -> Row:
    """A row as `Entry.row()` would never make it (its cleaning bypassed): what reaches the
    database should a field escape the cleaning, or the database refuse what it let through."""
    row = list(rows(username)[0])
    for name, value in values.items():
        row[FIELD[name]] = value
    return tuple(row)


def refused_rows() -> list[Row]:
    """Rows this database refuses, each named for its fault."""
    bad = [
        raw("bad-surrogate", model="\ud800"),  # UTF-8 cannot encode it: the driver raises
        raw("bad-negative", status=-1),  # the column's CHECK (IntegrityError)
        raw("bad-too-wide", status=10**20),  # OverflowError (SQLite), DataError (PostgreSQL)
        raw("bad-class", cls=7),  # no such class: the row cannot even be converted
    ]
    if connection.vendor == "postgresql":  # SQLite stores both
        bad += [raw("bad-nul", hint="a\x00b"), raw("bad-long", path="/" * 101)]
    return bad


@pytest.fixture(params=["process", "thread"])
def writes(
    request: pytest.FixtureRequest, run: Run, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Writer]:
    """The recorder's writer as the gateway builds it, in each AIPLANE_ACTIVITY_WRITER mode."""
    from aiplane.wiring import DatabaseThread, activity_writer

    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", request.param)
    db = DatabaseThread()
    writer = activity_writer(db)
    assert writer is not None
    try:
        yield writer
    finally:
        if isinstance(writer, ProcessWriter):
            run(writer.close())
        run(db.close())


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "database refused" in r.getMessage()]


def test_a_row_the_database_refuses_is_dropped_and_counted_and_the_rest_of_its_batch_stored(
    writes: Writer, run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    bad = refused_rows()
    recorder = Recorder(writes)
    names = [f"u{n:02d}" for n in range(len(bad) + 1)]
    good = rows(*names)
    # The bad rows among the good: first, next to each other, alternating, and good ones last.
    batch = [bad[0], *good[:2], bad[1], bad[2], good[2]]
    batch += [row for pair in zip(bad[3:], good[3:], strict=False) for row in pair]
    batch += good[len(bad) :]
    assert sorted(batch) == sorted(bad + good)
    recorder.buffer.extend(batch)
    with caplog.at_level(logging.WARNING, logger="aiplane.activity"):
        assert run(recorder.flush()) == len(good)
    assert stored() == names
    counts = (recorder.written, recorder.rejected, recorder.failures, len(recorder.buffer))
    assert counts == (len(good), len(bad), 0, 0)
    # One line per refused row, naming it as repr shows it.
    lines = refusals(caplog)
    assert len(lines) == len(bad)
    assert all(repr(row) in line for row, line in zip(bad, lines, strict=True))


def test_after_a_refused_row_later_batches_keep_flowing(writes: Writer, run: Run) -> None:
    recorder = Recorder(writes)
    recorder.buffer.append(raw("bad", model="\ud800"))
    recorder.add(entries("ann")[0])
    assert run(recorder.flush()) == 1
    for name in ("bea", "cid"):
        recorder.add(entries(name)[0])
        assert run(recorder.flush()) == 1
    assert stored() == ["ann", "bea", "cid"]
    assert (recorder.rejected, recorder.failures, len(recorder.buffer)) == (1, 0, 0)


def test_a_refused_row_cannot_forge_log_lines(
    writes: Writer, run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder(writes)
    forged = "\ud800\nINFO aiplane: all is well\r"
    recorder.buffer.append(raw("mallory\nINFO forged", model=forged))
    with caplog.at_level(logging.WARNING, logger="aiplane.activity"):
        assert run(recorder.flush()) == 0
    [line] = refusals(caplog)
    assert "\n" not in line and "\r" not in line
    assert repr(forged)[1:-1] in line


def test_text_the_database_cannot_store_is_cleaned_when_the_record_is_made(
    writes: Writer, run: Run
) -> None:
    """Lone surrogates become U+FFFD, NUL goes, the rest is cut to the column: the record is
    stored, not refused."""
    recorder = Recorder(writes)
    [e] = entries("zoë")
    e.model, e.token_name = "gpt-\ud800\x00x" + "m" * 300, None
    e.hint, e.path, e.backend = "h\udfff" * 150, "/v1/\x00" + "p" * 200, "b" * 150
    recorder.add(e)
    assert run(recorder.flush()) == 1
    assert recorder.rejected == 0
    row = ActivityRecord.objects.get()
    got = (row.username, row.token_name, row.model, row.hint, row.path, row.backend)
    assert got == (
        "zoë", "", ("gpt-\ufffdx" + "m" * 300)[:200], ("h\ufffd" * 150)[:200],
        ("/v1/" + "p" * 200)[:100], "b" * 100,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "limit", "cleaned"),
    [
        ("sim-small", 20, "sim-small"),
        ("modèle-7b", 20, "modèle-7b"),
        ("\ud800", 20, "\ufffd"),
        ("a\ud83d\ude00b", 20, "a\ufffd\ufffdb"),  # a surrogate pair left as two lone ones
        ("nul\x00byte", 20, "nulbyte"),
        ("x" * 30, 20, "x" * 20),
        ("\x00" * 30 + "ok", 20, "ok"),
        (None, 20, ""),
    ],
)
def test_cleaning_keeps_what_the_database_stores_and_mends_the_rest(
    value: str | None, limit: int, cleaned: str
) -> None:
    from gateway.observability.records import clean

    assert clean(value, limit) == cleaned
    assert type(clean(value, limit)) is str


def test_an_enum_member_in_a_record_is_stored_as_its_plain_value(writes: Writer, run: Run) -> None:
    """marshal (the process writer's pipe) takes only plain values."""

    class Outcome(enum.StrEnum):
        WAITED = "waited"

    class Status(enum.IntEnum):
        OK = 200

    recorder = Recorder(writes)
    [e] = entries("ann")
    e.outcome, e.status = Outcome.WAITED, Status.OK
    recorder.add(e)
    assert run(recorder.flush()) == 1
    row = ActivityRecord.objects.get()
    assert (row.outcome, row.status, recorder.rejected) == ("waited", 200, 0)


def test_every_column_of_an_activity_record_is_declared_once_with_its_max_length() -> None:
    """`Entry` declares the stored record; the model and its migration must agree with it."""
    from django.db.models import CharField

    declared = {
        f.metadata.get("column", f.name): f.metadata.get("max_length") for f in fields(Entry)
    }
    model = {f.column: f for f in ActivityRecord._meta.concrete_fields if not f.primary_key}
    assert list(COLUMNS) == list(declared) and sorted(declared) == sorted(model)
    lengths = {
        column: f.max_length
        for column, f in model.items()
        if isinstance(f, CharField) and column != "priority_class"  # the class's own names
    }
    assert lengths == {column: n for column, n in declared.items() if n is not None}


class Away:
    """The activity table renamed, as if dropped or locked out, then put back."""

    def __init__(self) -> None:
        quote = connection.ops.quote_name
        self.here = quote(ActivityRecord._meta.db_table)
        self.away = quote(ActivityRecord._meta.db_table + "_away")

    def __enter__(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {self.here} RENAME TO {self.away}")

    def __exit__(self, *exc: object) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {self.away} RENAME TO {self.here}")


def test_while_the_table_is_missing_every_row_stays_buffered_and_none_is_dropped(
    writes: Writer, run: Run
) -> None:
    """A missing table is the database's fault (OperationalError on SQLite, ProgrammingError
    on PostgreSQL), not the rows': even a batch holding a bad row is kept whole, and split only
    once the database stores again."""
    recorder = Recorder(writes)
    for e in entries("ann"):
        recorder.add(e)
    recorder.buffer.append(raw("bad", model="\ud800"))
    for e in entries("bea"):
        recorder.add(e)
    with Away():
        assert [run(recorder.flush()) for _ in range(2)] == [0, 0]
        assert (len(recorder.buffer), recorder.dropped) == (3, 0)  # nothing refused, or lost
        assert recorder.failures == 2
    assert run(recorder.flush()) == 2
    assert stored() == ["ann", "bea"]
    assert (len(recorder.buffer), recorder.rejected, recorder.dropped) == (0, 1, 0)


def unreachable() -> dict[str, Any]:
    """Settings for this database as if its server were down: a port nobody listens on, or for
    SQLite a file that cannot be opened."""
    if connection.vendor == "sqlite":
        return {"NAME": "/nonexistent/aiplane/db.sqlite3"}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when this returns: nothing listens there
    return {"HOST": "127.0.0.1", "PORT": port}


def test_a_database_the_writer_cannot_reach_keeps_every_row_buffered(
    writes: Writer, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = unreachable()

    def reconfigure(settings: dict[str, Any] | None) -> dict[str, Any]:
        """On the database thread: its connection, closed, with other settings."""
        from django.db import connection as its

        its.close()
        kept = its.settings_dict
        its.settings_dict = settings if settings is not None else {**kept, **broken}
        return kept

    db = writes.func if isinstance(writes, functools.partial) else None
    if isinstance(writes, ProcessWriter):
        real = activity_writer.handshake
        monkeypatch.setattr(
            activity_writer, "handshake",
            lambda: {**real(), "database": {**real()["database"], **broken}},
        )  # fmt: skip
    else:
        assert db is not None
        good = run(db(reconfigure, None))
    recorder = Recorder(writes)
    recorder.add(entries("ann")[0])
    recorder.buffer.append(raw("bad", status=-1))
    assert [run(recorder.flush()) for _ in range(2)] == [0, 0]
    assert (len(recorder.buffer), recorder.failures) == (2, 2)  # nothing refused, or lost
    if isinstance(writes, ProcessWriter):
        assert writes.starts == 1  # an unreachable database is no reason to replace the writer
        monkeypatch.setattr(activity_writer, "handshake", real)
        run(writes.close())
    else:
        run(db(reconfigure, good))
    assert run(recorder.flush()) == 1
    assert stored() == ["ann"]
    assert (len(recorder.buffer), recorder.rejected, recorder.failures) == (0, 1, 2)


def test_a_write_that_times_out_keeps_the_batch_and_the_next_writer_stores_it(
    writer: ProcessWriter, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table locked by someone else: the child waits, is given up on after WRITE_TIMEOUT
    and replaced; nothing of the batch (a bad row included) is dropped meanwhile."""
    from django.db import transaction

    monkeypatch.setattr(activity_writer, "WRITE_TIMEOUT", 1.0)
    recorder = Recorder(writer)
    run(writer.start())
    recorder.add(entries("ann")[0])
    recorder.buffer.append(raw("bad", model="\ud800"))
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {ActivityRecord._meta.db_table} IN EXCLUSIVE MODE")
        else:  # BEGIN IMMEDIATE has taken SQLite's one write lock: make sure of it
            ActivityRecord.objects.filter(pk=0).delete()
        assert run(recorder.flush()) == 0
        assert (len(recorder.buffer), recorder.failures) == (2, 1)  # nothing refused, or lost
    # The next writer is a new process: on a loaded machine it may take longer than the short
    # bound above just to start, which is not what this test is about.
    monkeypatch.setattr(activity_writer, "WRITE_TIMEOUT", 60.0)
    assert run(recorder.flush()) == 1
    assert stored() == ["ann"]
    assert (recorder.rejected, writer.starts) == (1, 2)
