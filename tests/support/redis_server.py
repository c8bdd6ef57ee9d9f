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
    """One redis-server process without persistence; stop and start it again on its port.

    Every pytest-xdist worker starts its own on a port the kernel picked; should another
    process take that port before redis-server binds it, the first start picks another.
    """

    def __init__(self) -> None:
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        for _ in range(5):
            if self._start_once():
                self.started = True
                return self
            if self.started:
                break  # a restart must come back on the same port
            self.port = _free_port()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def _start_once(self) -> bool:
        self.proc = subprocess.Popen(  # noqa: S603 - a fixed binary with our own arguments
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    # Ours, not another worker's that took the port first.
                    sock.sendall(b"INFO server\r\n")
                    if f"process_id:{self.proc.pid}\r".encode() in _read_reply(sock):
                        return True
            except OSError:
                time.sleep(0.02)
        self.stop()
        return False

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _read_reply(sock: socket.socket) -> bytes:
    """One bulk reply ($<length>, then the data), read whole."""
    data = sock.recv(65536)
    head, _, _ = data.partition(b"\r\n")
    if not head.startswith(b"$"):
        return data
    want = len(head) + 2 + int(head[1:]) + 2
    while len(data) < want:
        more = sock.recv(65536)
        if not more:
            break
        data += more
    return data


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
