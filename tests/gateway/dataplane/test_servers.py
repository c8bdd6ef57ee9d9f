"""The same ASGI application serves under uvicorn and under daphne, and `manage.py serve` applies
the connection bounds of the environment (subprocesses, loopback)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.factories import make_token_with_secret, make_user
from tests.support.live import add_backend, database_url, free_port

ROOT = Path(__file__).resolve().parents[3]






@contextlib.contextmanager
def served(cmd: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server command against the test database until its pages answer, then stop it."""
    proc = subprocess.Popen(  # noqa: S603 - our own server, loopback only
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, "DATABASE_URL": database_url(),
             "DJANGO_SETTINGS_MODULE": "aiplane.settings", **env},
    )  # fmt: skip
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def wait_ready(proc: subprocess.Popen[bytes], base: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(base + "/login/", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)


@pytest.mark.parametrize("server", ["uvicorn", "daphne"])
def test_the_whole_app_serves_under_both_servers(server, transactional_db, make_sim):
    engine = make_sim(tokens=3, token_delay=0.01)
    add_backend("sim1", engine.url)
    key = make_token_with_secret(make_user("alice"))[1]
    port = free_port()
    if server == "daphne":
        cmd = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
               "aiplane.asgi:application"]  # fmt: skip
    else:
        cmd = [sys.executable, "-m", "uvicorn", "aiplane.asgi:application", "--host",
               "127.0.0.1", "--port", str(port), "--log-level", "warning"]  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    with served(cmd, {}) as proc:
        wait_ready(proc, base)
        auth = {"Authorization": f"Bearer {key}"}
        payload = {"model": "sim-small", "messages": [{"role": "user", "content": "hi"}]}
        r = httpx.post(base + "/v1/chat/completions", json=payload, headers=auth, timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"] == "tok0 tok1 tok2 "
        with httpx.stream(
            "POST", base + "/v1/chat/completions", json={**payload, "stream": True},
            headers=auth, timeout=10,
        ) as s:  # fmt: skip
            assert s.status_code == 200
            assert b"".join(s.iter_raw()).endswith(b"data: [DONE]\n\n")
        assert httpx.get(base + "/api/v0/openapi.json", timeout=5).status_code == 200


def open_files(pid: int) -> int:
    """The soft limit of open files of a running process."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-files limit in /proc")


def half_a_request(port: int) -> bytes:
    """What the server does with a connection that sends half its headers and then stalls."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAcc")
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


@pytest.mark.parametrize("server", ["uvicorn", "daphne"])
def test_serve_applies_the_connection_bounds_of_the_environment(server, transactional_db):
    port = free_port()
    env = {
        "AIPLANE_HEADER_TIMEOUT": "0.5",
        "AIPLANE_BODY_IDLE_TIMEOUT": "0.5",
        "AIPLANE_KEEPALIVE_TIMEOUT": "0.5",
        "AIPLANE_MAX_CONNECTIONS": "1000",
    }
    # Started with a soft limit of 256 open files, too few for 1,000 connections.
    cmd = ["sh", "-c", 'ulimit -S -n 256 && exec "$@"', "sh", sys.executable, "manage.py",
           "serve", "--server", server, "--port", str(port)]  # fmt: skip
    with served(cmd, env) as proc:
        wait_ready(proc, f"http://127.0.0.1:{port}")
        answer = half_a_request(port)
        if server == "uvicorn":
            assert answer.startswith(b"HTTP/1.1 408 ")
            assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == (
                "request_timeout"
            )
        else:
            # Twisted's idle timeout closes without an answer (daphne has no 408).
            assert answer == b""
        assert open_files(proc.pid) >= 2000


def test_serve_refuses_connections_beyond_aiplane_max_connections(transactional_db):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "manage.py", "serve", "--port", str(port)]
    with served(cmd, {"AIPLANE_MAX_CONNECTIONS": "2"}) as proc:
        wait_ready(proc, base)
        with httpx.Client(base_url=base, timeout=10) as first, httpx.Client(
            base_url=base, timeout=10
        ) as second:  # fmt: skip
            for client in (first, second):  # each keeps its connection open
                # Until the server has seen wait_ready's connections close.
                while client.get("/login/").status_code != 200:
                    time.sleep(0.1)
            refused = httpx.get(base + "/login/", timeout=10)
            assert refused.status_code == 503
            assert refused.headers["retry-after"] == "1"
            assert refused.json()["error"]["code"] == "too_many_connections"
            assert first.get("/login/").status_code == 200
