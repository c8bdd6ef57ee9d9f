"""A private redis-server on a free loopback port, for the shared admission tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process without persistence; stop and start it again on its port."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed binary with our own arguments
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def redis_or_skip() -> None:
    if not have_redis():
        pytest.skip(NO_REDIS + ": the shared admission tests need it")


_shared: RedisServer | None = None


def shared_server() -> RedisServer:
    """One server for tests that live outside fixtures (hypothesis machines); stops at exit."""
    global _shared
    if _shared is None:
        import atexit

        _shared = RedisServer().start()
        atexit.register(_shared.stop)
    return _shared


def have_redis() -> bool:
    return shutil.which("redis-server") is not None or shutil.which(REDIS_SERVER) is not None


NO_REDIS = "redis-server is not installed (apt-get install redis-server)"
