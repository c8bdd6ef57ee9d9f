"""A SIGTERM drains `manage.py serve`: what runs and waits finishes, a second signal or the
drain timeout ends the rest with answers and records, and the process exits 0."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.models import ActivityRecord
from tests.support.drive import engine_stats, key_for, wait_until
from tests.support.live import add_backend, database_url, free_port

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.timeout(240)






def _refuses(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


class Served:
    """`manage.py serve` in a process of its own, against the test database."""

    def __init__(self, tmp: Path, workers: int = 1, **env: str) -> None:
        self.port = free_port()
        self.log = tmp / f"serve-{self.port}.log"
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "aiplane.settings",
            "DATABASE_URL": database_url(),
            "AIPLANE_DATA_DIR": str(tmp),
            "AIPLANE_ACTIVITY_WRITER": "thread",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process = subprocess.Popen(  # noqa: S603 - our own command with fixed arguments
            [sys.executable, "manage.py", "serve", "--port", str(self.port),
             "--workers", str(workers)],
            cwd=ROOT,
            env=environment,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        wait_until(self._ready, f"the gateway on {self.port} is ready", timeout=120)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"serve exited with {self.process.returncode}: {self.output()}")
        try:
            return httpx.get(self.url + "/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def signal(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def exit_status(self, timeout: float = 60) -> int:
        return self.process.wait(timeout=timeout)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def served(transactional_db: None, tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(**env: str) -> Served:
        s = Served(tmp_path, **env)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


class Call(threading.Thread):
    """One request on a thread of its own: its status, body and headers once it ended."""

    def __init__(self, url: str, key: str, *, stream: bool, tokens: int, label: str) -> None:
        super().__init__(daemon=True)
        self.url, self.key, self.stream, self.tokens, self.label = url, key, stream, tokens, label
        self.status = 0
        self.body = ""
        self.headers: dict[str, str] = {}
        self.first_chunk = threading.Event()

    def run(self) -> None:
        body = {
            "model": "sim-small",
            "stream": self.stream,
            "max_tokens": self.tokens,
            "messages": [{"role": "user", "content": self.label}],
        }
        with httpx.stream(
            "POST",
            self.url + "/v1/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {self.key}"},
            timeout=120,
        ) as r:
            self.status, self.headers = r.status_code, dict(r.headers)
            for chunk in r.iter_text():
                self.body += chunk
                self.first_chunk.set()
        self.first_chunk.set()

    def ended(self) -> Call:
        self.join(120)
        assert not self.is_alive(), f"{self.label} never ended"
        return self

    def tokens_seen(self) -> int:
        events = [json.loads(line[6:]) for line in self.body.splitlines() if line[:7] == "data: {"]
        deltas = [(e.get("choices") or [{}])[0].get("delta", {}) for e in events]
        return sum(1 for delta in deltas if delta.get("content"))


def _records(n: int) -> list[ActivityRecord]:
    wait_until(lambda: ActivityRecord.objects.count() >= n, f"{n} records written", timeout=30)
    return list(ActivityRecord.objects.order_by("at"))


def test_a_sigterm_lets_a_30_second_stream_and_the_waiters_finish_then_exits_0(
    served: Any, make_sim: Any
) -> None:
    engine = make_sim(tokens=60, token_delay=0.5)  # a 30-second stream at 60 tokens
    add_backend("solo", engine.url, max_inflight=2)
    key = key_for("ann")
    gateway = served()
    long = Call(gateway.url, key, stream=True, tokens=60, label="long")
    short = Call(gateway.url, key, stream=True, tokens=4, label="short")
    waiter = Call(gateway.url, key, stream=False, tokens=2, label="waiter")
    long.start()
    short.start()
    assert long.first_chunk.wait(30) and short.first_chunk.wait(30)
    waiter.start()
    wait_until(lambda: engine_stats(engine)["open"] == 2, "both streams run")
    time.sleep(0.5)  # the waiter is in line (the engine has only the two)
    assert engine_stats(engine)["open"] == 2
    gateway.signal()
    wait_until(lambda: _refuses(gateway.port), "it stops accepting")
    assert gateway.process.poll() is None, "it must not exit while a stream runs"
    for call in (short.ended(), waiter.ended(), long.ended()):
        assert call.status == 200, (call.label, call.body)
    assert long.body.rstrip().endswith("data: [DONE]")
    assert long.tokens_seen() == 60
    assert json.loads(waiter.body)["choices"][0]["message"]["content"]
    assert gateway.exit_status() == 0, gateway.output()
    records = _records(3)
    assert sorted(r.status for r in records) == [200, 200, 200]
    assert "Traceback" not in gateway.output()


def test_a_second_sigterm_ends_the_running_stream_and_turns_the_waiter_away_with_records(
    served: Any, make_sim: Any
) -> None:
    engine = make_sim(tokens=200, token_delay=0.2)
    add_backend("solo", engine.url, max_inflight=1)
    key = key_for("ann")
    gateway = served()
    running = Call(gateway.url, key, stream=True, tokens=200, label="running")
    running.start()
    assert running.first_chunk.wait(30)
    waiter = Call(gateway.url, key, stream=False, tokens=2, label="waiter")
    waiter.start()
    time.sleep(0.5)
    gateway.signal()
    wait_until(lambda: _refuses(gateway.port), "it stops accepting")
    time.sleep(0.3)
    gateway.signal()
    running.ended()
    waiter.ended()
    assert running.status == 200  # the stream had started: it ends as a broken one does
    assert "shut down before the answer ended" in running.body
    assert running.body.rstrip().endswith("data: [DONE]")
    assert 0 < running.tokens_seen() < 200
    assert waiter.status == 503, waiter.body
    assert json.loads(waiter.body)["error"]["code"] == "shutting_down"
    assert waiter.headers["retry-after"] == "1"
    assert gateway.exit_status(timeout=30) == 0, gateway.output()
    by_status = {r.status: r for r in _records(2)}
    assert by_status[503].outcome == "unavailable"
    assert by_status[200].outcome == "error"
    assert "shut down" in by_status[200].error
    assert "Traceback" not in gateway.output()


def test_the_drain_timeout_ends_what_is_left_and_the_process_exits_0(
    served: Any, make_sim: Any
) -> None:
    engine = make_sim(tokens=200, token_delay=0.2)
    add_backend("solo", engine.url, max_inflight=1)
    key = key_for("ann")
    gateway = served(AIPLANE_DRAIN_TIMEOUT="2")
    running = Call(gateway.url, key, stream=True, tokens=200, label="running")
    running.start()
    assert running.first_chunk.wait(30)
    gateway.signal()
    started = time.monotonic()
    running.ended()
    assert time.monotonic() - started < 30, "cut short long before its 40 s"
    assert "shut down before the answer ended" in running.body
    assert gateway.exit_status(timeout=30) == 0, gateway.output()
    assert _records(1)[0].outcome == "error"


def test_while_the_grace_lasts_readyz_says_draining_and_requests_are_still_served(
    served: Any, make_sim: Any
) -> None:
    engine = make_sim(tokens=2, token_delay=0.001)
    add_backend("solo", engine.url, max_inflight=1)
    key = key_for("ann")
    gateway = served(AIPLANE_DRAIN_GRACE="60", AIPLANE_DRAIN_TIMEOUT="120")
    gateway.signal()
    wait_until(
        lambda: httpx.get(gateway.url + "/readyz", timeout=2).status_code == 503, "not ready"
    )
    ready = httpx.get(gateway.url + "/readyz", timeout=2).json()
    assert ready["status"] == "draining"
    assert ready["checks"]["draining"] is True
    assert httpx.get(gateway.url + "/healthz", timeout=2).status_code == 200  # alive all along
    call = Call(gateway.url, key, stream=False, tokens=2, label="late")
    call.start()
    assert call.ended().status == 200
    gateway.signal()  # nothing runs: the second signal ends the grace at once
    assert gateway.exit_status(timeout=30) == 0, gateway.output()


def test_serve_with_workers_drains_every_worker_and_exits_0(
    transactional_db: None, tmp_path: Path, make_sim: Any, private_redis: Any
) -> None:
    engine = make_sim(tokens=20, token_delay=0.2)  # a 4-second stream
    add_backend("solo", engine.url, max_inflight=4)
    key = key_for("ann")
    gateway = Served(
        tmp_path, workers=2, AIPLANE_REDIS_URL=private_redis.url, AIPLANE_REDIS_PREFIX="w:"
    )
    try:
        calls = [Call(gateway.url, key, stream=True, tokens=20, label=f"s{i}") for i in range(4)]
        for call in calls:
            call.start()
        for call in calls:
            assert call.first_chunk.wait(30)
        gateway.signal()
        wait_until(lambda: _refuses(gateway.port), "no worker accepts any more")
        for call in calls:
            assert call.ended().status == 200
            assert call.tokens_seen() == 20, call.body
        assert gateway.exit_status() == 0, gateway.output()
        assert len(_records(4)) == 4
    finally:
        gateway.stop()
