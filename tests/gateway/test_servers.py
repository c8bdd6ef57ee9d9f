"""The same ASGI application serves under uvicorn and under daphne (subprocesses, loopback)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.db import connection

from tests.factories import make_token_with_secret, make_user
from tests.gateway.conftest import add_backend

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database (committed data: transactional tests) as a URL for a child process."""
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    host, port = s["HOST"] or "127.0.0.1", s["PORT"] or 5432
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{host}:{port}/{s['NAME']}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "aiplane.settings",
    }
    proc = subprocess.Popen(  # noqa: S603 - our own server, loopback only
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + "/login/", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, f"{server} did not start"
            time.sleep(0.2)
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
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
