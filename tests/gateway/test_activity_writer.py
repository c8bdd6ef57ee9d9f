"""The activity writer's child process: stores each batch before it answers, survives its own
death without losing a batch, and leaves when the gateway does."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from gateway import activity_writer
from gateway.activity import Entry, Recorder, Row
from gateway.activity_writer import ProcessWriter, WriterUnavailable, in_process_only
from gateway.models import ActivityRecord

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


def test_an_in_memory_sqlite_database_is_written_from_the_gateway_process() -> None:
    sqlite = "django.db.backends.sqlite3"
    assert in_process_only({"ENGINE": sqlite, "NAME": ":memory:"})
    assert in_process_only({"ENGINE": sqlite, "NAME": "file:memorydb_default?mode=memory"})
    assert not in_process_only({"ENGINE": sqlite, "NAME": "/var/lib/aiplane/db.sqlite3"})
    assert not in_process_only({"ENGINE": "django.db.backends.postgresql", "NAME": "aiplane"})


def test_the_writer_is_chosen_by_aiplane_activity_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    from functools import partial

    from aiplane.wiring import DatabaseThread, _write_activity, activity_writer

    db = DatabaseThread()
    monkeypatch.delenv("AIPLANE_ACTIVITY_WRITER", raising=False)
    assert isinstance(activity_writer(db), ProcessWriter)
    monkeypatch.setenv("AIPLANE_ACTIVITY_WRITER", "thread")
    thread = activity_writer(db)
    assert isinstance(thread, partial) and thread.args == (_write_activity,)
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

    root = Path(__file__).resolve().parents[2]
    gateway = subprocess.Popen(
        [
            sys.executable, "-c",
            "import django, time\n"
            "django.setup()\n"
            "import asyncio\n"
            "from gateway.activity_writer import ProcessWriter\n"
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
    from gateway.metrics import GatewayCollector

    return {
        sample.name: sample.value
        for family in GatewayCollector().collect()
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

    def delta() -> dict[str, float]:
        now = activity_metrics()
        return {name: now[name] - before[name] for name in now}

    assert delta() == {
        "aiplane_activity_records_written_total": 0,
        "aiplane_activity_records_dropped_total": 0,
        "aiplane_activity_flush_failures_total": 0,
        "aiplane_activity_records_buffered": 3,
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
        "aiplane_activity_flush_failures_total": 1,
        "aiplane_activity_records_buffered": 0,
    }
