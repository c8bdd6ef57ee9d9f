"""Helpers of the browser tests that drive the gateway next to the page: simulated backends, a
streaming call that holds a slot, and polling for a condition."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class SimBackend:
    """A simulated engine registered as backend `name` in the chat pool `pool`."""

    engine: Any
    name: str
    pool: str

    @property
    def url(self) -> str:
        return str(self.engine.url)

    def records(self) -> list[dict[str, Any]]:
        import httpx

        return list(httpx.get(self.url + "/sim/requests", timeout=10).json())


class StreamingCall:
    """A /v1 chat request streaming in a background thread until `close()`: it holds a slot."""

    def __init__(self, url: str, key: str, text: str = "blocker") -> None:
        self.url = url
        self.key = key
        self.text = text
        self.chunks = 0
        self.status: int | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="streaming-call", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import httpx

        body = {
            "model": "sim-small",
            "stream": True,
            "messages": [{"role": "user", "content": self.text}],
        }
        try:
            with httpx.stream(
                "POST",
                self.url + "/v1/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {self.key}"},
                timeout=60,
            ) as response:
                self.status = response.status_code
                for _line in response.iter_lines():
                    self.chunks += 1
                    if self._stop.is_set():
                        return
        except Exception as exc:  # reported through .error; the thread must not die loudly
            self.error = exc

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.01)


class DiesMidStream:
    """An engine that starts an event stream, sends one event and drops the socket, every time."""

    EVENT = b'data: {"choices":[{"delta":{"content":"tok0 "}}]}\n\n'

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, name="dies-mid-stream", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
                + f"{len(self.EVENT):x}\r\n".encode()
                + self.EVENT
                + b"\r\n"
            )
            time.sleep(0.05)
            conn.close()  # no terminating chunk: the stream is cut short

    def close(self) -> None:
        self.sock.close()
